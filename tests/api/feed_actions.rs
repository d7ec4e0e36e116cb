//! docs/API.md §11 (issue 41): an in-app template's action buttons, checked
//! when the flow is saved and rendered into each feed entry (`data.actions`,
//! the admin delivery view too); `POST /user/v1/feed/{id}/interact`; and
//! `POST /user/v1/feed/archive_all` with the feed list's filters, which
//! `GET /user/v1/feed` takes too (`flow`).

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

/// An in_app step with `actions`.
fn action_step(channel: &str, body: &str, actions: Value) -> Value {
    let mut st = channel_step(channel, None, body);
    st["template"]["actions"] = actions;
    st
}

fn two_actions() -> Value {
    json!([
        {"label": "Accept {{ data.who }}", "url": "https://example.com/accept/{{ data.id }}"},
        {"label": "Decline", "url": "https://example.com/decline/{{ data.id }}"}
    ])
}

#[tokio::test]
async fn actions_are_validated_when_the_flow_is_saved() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let hook = create_webhook_channel(&app, "https://example.com/hook", None).await;
    let post = |steps: Value| {
        let app = &app;
        async move {
            app.admin(POST, &format!("{A}/flows"))
                .json(&json!({"handle": handle("act"), "name": "Actions", "steps": steps}))
                .go()
                .await
        }
    };
    let three = json!([
        {"label": "a", "url": "https://a"}, {"label": "b", "url": "https://b"},
        {"label": "c", "url": "https://c"}
    ]);
    let r = post(json!([action_step(&inapp, "x", three)])).await;
    assert_validation(&r, &[("steps.0.template.actions", "length")]);

    let r = post(json!([action_step(
        &inapp,
        "x",
        json!([{"url": "https://a"}, {"label": "", "url": "https://b"}])
    )]))
    .await;
    assert_validation(
        &r,
        &[
            ("steps.0.template.actions.0.label", "required"),
            ("steps.0.template.actions.1.label", "required"),
        ],
    );
    let r = post(json!([action_step(&inapp, "x", json!([{"label": "a"}]))])).await;
    assert_validation(&r, &[("steps.0.template.actions.0.url", "required")]);

    let r = post(json!([action_step(
        &inapp,
        "x",
        json!([{"label": "{{ oops", "url": "https://a"}])
    )]))
    .await;
    assert_validation(&r, &[("steps.0.template.actions.0.label", "format")]);

    let r = post(json!([action_step(
        &s(&hook["id"]),
        "x",
        json!([{"label": "a", "url": "https://a"}])
    )]))
    .await;
    assert_validation(&r, &[("steps.0.template.actions", "exclusion")]);

    // an edit is checked the same way
    let flow = create_flow(
        &app,
        &handle("act"),
        json!([channel_step(&inapp, None, "x")]),
    )
    .await;
    let r = app
        .admin(PUT, &format!("{A}/flows/{}", s(&flow["id"])))
        .json(&json!({"steps": [action_step(&s(&hook["id"]), "x", json!([{"label": "a", "url": "u"}]))]}))
        .go()
        .await;
    assert_validation(&r, &[("steps.0.template.actions", "exclusion")]);

    // saved and shown back; no actions: no `actions` key
    let f = create_flow(
        &app,
        &handle("act"),
        json!([action_step(&inapp, "x", two_actions())]),
    )
    .await;
    assert_eq!(f["steps"][0]["template"]["actions"], two_actions(), "{f}");
    assert!(
        flow["steps"][0]["template"].get("actions").is_none(),
        "{flow}"
    );
}

struct Setup {
    app: TestApp,
    ext: String,
    flow_id: String,
    entry: Value,
}

/// A user with one feed entry of an in_app step with two actions.
async fn with_actions() -> Setup {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "act",
        json!([action_step(
            &inapp,
            "Invite from {{ data.who }}",
            two_actions()
        )]),
    )
    .await;
    let ext = new_ext("actor");
    run_flow(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}], "data": {"who": "Ann", "id": 7}}),
    )
    .await;
    let feed = wait_feed(&app, &ext, 1).await;
    Setup {
        entry: feed["items"][0].clone(),
        app,
        ext,
        flow_id: s(&flow["id"]),
    }
}

fn rendered() -> Value {
    json!([
        {"label": "Accept Ann", "url": "https://example.com/accept/7"},
        {"label": "Decline", "url": "https://example.com/decline/7"}
    ])
}

#[tokio::test]
async fn actions_are_rendered_into_the_entry_and_interact_records_the_press() {
    let Setup {
        app, ext, entry, ..
    } = with_actions().await;
    let id = s(&entry["id"]);
    assert_eq!(entry["data"]["actions"], rendered(), "{entry}");
    assert_eq!(entry["interacted_at"], Value::Null, "{entry}");
    assert_eq!(entry["interacted_action"], Value::Null, "{entry}");
    let r = app.admin(GET, &format!("{A}/deliveries/{id}")).go().await;
    let d = r.ok(200);
    assert_eq!(d["data"]["actions"], rendered(), "{d}");

    // out of range, missing, wrong: 422; someone else's or unknown: 404
    let r = app.interact(&ext, &id, &json!({"action": 2})).await;
    assert_validation(&r, &[("action", "inclusion")]);
    let r = app.interact(&ext, &id, &json!({})).await;
    assert_validation(&r, &[("action", "required")]);
    let r = app.interact(&ext, &id, &json!({"action": -1})).await;
    assert_validation(&r, &[("action", "format")]);
    let other = new_ext("other");
    app.create_user_as(&other, json!({})).await;
    let r = app.interact(&other, &id, &json!({"action": 0})).await;
    assert_not_found(&r, "feed_entry", &id);
    let unknown = new_uuid();
    let r = app.interact(&ext, &unknown, &json!({"action": 0})).await;
    assert_not_found(&r, "feed_entry", &unknown);

    // a press: recorded, and it reads the entry (reading implies seeing)
    let r = app.interact(&ext, &id, &json!({"action": 1})).await;
    let e = r.ok(200);
    assert_eq!(e["interacted_action"], json!(1), "{e}");
    assert!(is_timestamp(&e["interacted_at"]), "{e}");
    assert_eq!(e["read"], json!(true), "{e}");
    assert_eq!(e["seen"], json!(true), "{e}");
    assert_eq!(e["clicked"], json!(false), "{e}");
    let feed = app.user(GET, &format!("{U}/feed"), &ext).go().await.page();
    assert_eq!(feed["meta"]["unread_count"], json!(0), "{feed}");
    assert_eq!(feed["items"][0]["interacted_action"], json!(1), "{feed}");
    let d = app
        .admin(GET, &format!("{A}/deliveries/{id}"))
        .go()
        .await
        .ok(200);
    assert_eq!(d["interacted_action"], json!(1), "{d}");
    assert_eq!(d["interacted_at"], e["interacted_at"], "{d}");

    // another press: the latest is kept
    let r = app.interact(&ext, &id, &json!({"action": 0})).await;
    let e2 = r.ok(200);
    assert_eq!(e2["interacted_action"], json!(0), "{e2}");
    assert_eq!(
        e2["read_at"], e["read_at"],
        "the first read time stays: {e2}"
    );

    // an entry without actions has nothing to press
    let inapp = in_app_channel(&app).await;
    let plain = active_flow(&app, "plain", json!([channel_step(&inapp, None, "x")])).await;
    run_flow(
        &app,
        &s(&plain["id"]),
        json!({"recipients": [{"external_id": ext}]}),
    )
    .await;
    let feed = wait_feed(&app, &ext, 2).await;
    let p = &feed["items"][0];
    assert!(p["data"].get("actions").is_none(), "{p}");
    let r = app
        .interact(&ext, &s(&p["id"]), &json!({"action": 0}))
        .await;
    assert_validation(&r, &[("action", "inclusion")]);
}

#[tokio::test]
async fn archive_all_archives_what_the_filters_list() {
    let Setup {
        app, ext, flow_id, ..
    } = with_actions().await;
    let inapp = in_app_channel(&app).await;
    let other = active_flow(&app, "other", json!([channel_step(&inapp, None, "o")])).await;
    let other_handle = s(&other["handle"]);
    for _ in 0..3 {
        run_flow(
            &app,
            &s(&other["id"]),
            json!({"recipients": [{"external_id": ext}]}),
        )
        .await;
    }
    let feed = wait_feed(&app, &ext, 4).await;
    assert_eq!(feed["meta"]["unread_count"], json!(4), "{feed}");

    // the list's flow filter, by id and by handle; an unknown flow lists nothing
    let list = |q: Vec<(&'static str, String)>| {
        let app = &app;
        let ext = ext.clone();
        async move {
            app.user(GET, &format!("{U}/feed"), &ext)
                .query(&q)
                .go()
                .await
                .page()
        }
    };
    let by_id = list(vec![("flow", flow_id.clone())]).await;
    assert_eq!(by_id["items"].as_array().unwrap().len(), 1, "{by_id}");
    let by_handle = list(vec![("flow", other_handle.clone())]).await;
    assert_eq!(
        by_handle["items"].as_array().unwrap().len(),
        3,
        "{by_handle}"
    );
    let none = list(vec![("flow", "no-such-flow".into())]).await;
    assert_eq!(none["items"].as_array().unwrap().len(), 0, "{none}");

    // read one of the other flow's entries, then archive that flow's read ones
    let read_one = s(&by_handle["items"][0]["id"]);
    app.user(POST, &format!("{U}/feed/{read_one}/read"), &ext)
        .go()
        .await
        .ok(200);
    let r = app
        .archive_all(&ext, &[("flow", &other_handle), ("status", "read")])
        .await;
    let b = r.ok(200);
    assert_eq!(b["updated"], json!(1), "{b}");
    assert_eq!(
        b["meta"],
        json!({"unread_count": 3, "unseen_count": 3}),
        "{b}"
    );
    let archived = list(vec![("status", "archived".into())]).await;
    assert_eq!(
        item_ids(&archived),
        vec![read_one.clone()],
        "only the matching entry: {archived}"
    );

    // an unknown flow archives nothing; a bad status is 400
    let r = app.archive_all(&ext, &[("flow", "no-such-flow")]).await;
    assert_eq!(r.ok(200)["updated"], json!(0), "{r}");
    let r = app.archive_all(&ext, &[("status", "nope")]).await;
    assert_invalid_param(&r, "status");

    // then every other flow's entry, then the rest
    let r = app.archive_all(&ext, &[("flow", &other_handle)]).await;
    assert_eq!(r.ok(200)["updated"], json!(2), "{r}");
    let r = app.archive_all(&ext, &[]).await;
    let b = r.ok(200);
    assert_eq!(b["updated"], json!(1), "{b}");
    assert_eq!(
        b["meta"],
        json!({"unread_count": 0, "unseen_count": 0}),
        "{b}"
    );
    let left = list(vec![]).await;
    assert_eq!(left["items"].as_array().unwrap().len(), 0, "{left}");
    let archived = list(vec![("status", "archived".into())]).await;
    assert_eq!(archived["items"].as_array().unwrap().len(), 4, "{archived}");
    for e in archived["items"].as_array().unwrap() {
        assert!(is_timestamp(&e["archived_at"]), "{e}");
    }
    // nothing left to archive
    let r = app.archive_all(&ext, &[]).await;
    assert_eq!(r.ok(200)["updated"], json!(0), "{r}");
}

fn item_ids(body: &Value) -> Vec<String> {
    body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| s(&e["id"]))
        .collect()
}
