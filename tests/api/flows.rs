//! docs/API.md §8 (flows): create / get (by id and by
//! handle) / partial update, step and template validation, the status machine
//! draft → active ↔ draft, any → archived (final), and the preferences view of
//! every non-archived flow.

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

fn flow_path(id: &str) -> String {
    format!("{A}/flows/{id}")
}

#[track_caller]
fn assert_flow_shape(f: &Value) {
    for k in [
        "id",
        "handle",
        "name",
        "description",
        "status",
        "steps",
        "created_at",
        "updated_at",
    ] {
        assert!(f.get(k).is_some(), "flow lacks {k}: {f}");
    }
    assert!(is_uuid_v7(&f["id"]), "id must be a UUID v7: {f}");
    assert!(is_timestamp(&f["created_at"]), "created_at: {f}");
    assert!(is_timestamp(&f["updated_at"]), "updated_at: {f}");
    assert!(f["steps"].is_array(), "steps must be an array: {f}");
}

#[tokio::test]
async fn create_get_update_and_validate_flows() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let h = handle("welcome");
    let steps = json!([
        channel_step(
            &inapp,
            Some("Hello {{ recipient.first_name }}"),
            "Body {{ data.x }}"
        ),
        delay_step(60),
        channel_step(&inapp, None, "Later"),
    ]);
    let r = app
        .admin(POST, &format!("{A}/flows"))
        .json(&json!({"handle": h, "name": "Welcome", "description": "first", "steps": steps}))
        .go()
        .await;
    let f = r.ok(201);
    assert_flow_shape(&f);
    assert_eq!(f["status"], json!("draft"), "{r}");
    assert_eq!(f["handle"], json!(h), "{r}");
    assert_eq!(f["name"], json!("Welcome"), "{r}");
    assert_eq!(f["description"], json!("first"), "{r}");
    let st = f["steps"].as_array().unwrap();
    assert_eq!(st.len(), 3, "{r}");
    assert_eq!(st[0]["type"], json!("channel"), "{r}");
    assert_eq!(st[0]["channel_id"], json!(inapp), "{r}");
    assert_eq!(
        st[0]["template"]["subject"],
        json!("Hello {{ recipient.first_name }}"),
        "{r}"
    );
    assert_eq!(st[0]["template"]["body"], json!("Body {{ data.x }}"), "{r}");
    assert_eq!(st[1], json!({"type": "delay", "seconds": 60}), "{r}");
    assert_eq!(st[2]["template"]["body"], json!("Later"), "{r}");
    let id = s(&f["id"]);

    // by id and by handle
    let r = app.admin(GET, &flow_path(&id)).go().await;
    assert_eq!(r.ok(200), f, "{r}");
    let r = app.admin(GET, &flow_path(&h)).go().await;
    assert_eq!(r.ok(200), f, "GET by handle: {r}");

    // duplicate handle, bad handles, missing fields
    let post = |body: Value| app.admin(POST, &format!("{A}/flows")).json(&body);
    let r = post(json!({"handle": h, "name": "Again"})).go().await;
    assert_validation(&r, &[("handle", "unique")]);
    for bad in [
        "Upper",
        "-dash-first",
        "has space",
        "dot.ted",
        "0190a5c2-7b3e-7c1d-8e4f-123456789abc",
    ] {
        let r = post(json!({"handle": bad, "name": "Bad"})).go().await;
        assert_validation(&r, &[("handle", "format")]);
    }
    let r = post(json!({})).go().await;
    assert_validation(&r, &[("handle", "required"), ("name", "required")]);
    let r = post(json!({"handle": handle("ok"), "name": 5})).go().await;
    assert_validation(&r, &[("name", "format")]);

    // steps: unknown channel, broken templates, batch, wrong shapes
    let r = post(json!({"handle": handle("x"), "name": "X",
        "steps": [channel_step(&new_uuid(), None, "hi")]}))
    .go()
    .await;
    assert_validation(&r, &[("steps.0.channel_id", "inclusion")]);
    let r = post(json!({"handle": handle("x"), "name": "X",
        "steps": [channel_step(&inapp, None, "Hello {{ recipient.first_name ")]}))
    .go()
    .await;
    assert_validation(&r, &[("steps.0.template.body", "format")]);
    let r = post(json!({"handle": handle("x"), "name": "X",
        "steps": [delay_step(5), channel_step(&inapp, Some("{% if %}"), "ok")]}))
    .go()
    .await;
    assert_validation(&r, &[("steps.1.template.subject", "format")]);
    let r = post(json!({"handle": handle("x"), "name": "X",
        "steps": [{"type": "fanout", "window_seconds": 60}]}))
    .go()
    .await;
    assert_validation(&r, &[("steps.0.type", "inclusion")]);
    let r = post(json!({"handle": handle("x"), "name": "X", "steps": "nope"}))
        .go()
        .await;
    assert_validation(&r, &[("steps", "format")]);
    let r = post(json!({"handle": handle("x"), "name": "X",
        "steps": [{"type": "channel", "channel_id": inapp}]}))
    .go()
    .await;
    assert_validation(&r, &[("steps.0.template", "required")]);
    let r = post(json!({"handle": handle("x"), "name": "X",
        "steps": [{"type": "channel", "channel_id": inapp, "template": {"subject": "no body"}}]}))
    .go()
    .await;
    assert_validation(&r, &[("steps.0.template.body", "required")]);
    // an email step needs a subject too
    let r = app
        .admin(POST, &format!("{A}/channels"))
        .json(&json!({"type": "email", "provider": "smtp"}))
        .go()
        .await;
    let smtp = s(&r.ok(201)["id"]);
    let r = post(json!({"handle": handle("x"), "name": "X",
        "steps": [channel_step(&smtp, None, "body only")]}))
    .go()
    .await;
    assert_validation(&r, &[("steps.0.template.subject", "required")]);
    // a delay needs whole, non-negative seconds
    for bad in [json!(-1), json!(1.5), json!("5")] {
        let r = post(json!({"handle": handle("x"), "name": "X",
            "steps": [{"type": "delay", "seconds": bad}, channel_step(&inapp, None, "x")]}))
        .go()
        .await;
        let d = assert_error(&r, 422, "validation_failed");
        assert!(
            d["fields"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["field"] == json!("steps.0.seconds")
                    && (f["reason"] == json!("number") || f["reason"] == json!("format"))),
            "delay seconds {bad}: {r}"
        );
    }
    let r = post(json!({"handle": handle("x"), "name": "X",
        "steps": [{"type": "delay"}, channel_step(&inapp, None, "x")]}))
    .go()
    .await;
    assert_validation(&r, &[("steps.0.seconds", "required")]);
    let r = post(json!({"handle": handle("x"), "name": "X", "steps": [{"type": "sms_blast"}]}))
        .go()
        .await;
    assert_validation(&r, &[("steps.0.type", "inclusion")]);

    // unknown flows
    let r = app.admin(GET, &flow_path("no-such-flow")).go().await;
    assert_not_found(&r, "flow", "no-such-flow");
    let unknown = new_uuid();
    let r = app.admin(GET, &flow_path(&unknown)).go().await;
    assert_not_found(&r, "flow", &unknown);
    let r = app
        .admin(PUT, &flow_path(&unknown))
        .json(&json!({"name": "x"}))
        .go()
        .await;
    assert_not_found(&r, "flow", &unknown);

    // partial PUT: only given fields change
    let r = app
        .admin(PUT, &flow_path(&id))
        .json(&json!({"name": "Renamed"}))
        .go()
        .await;
    let f2 = r.ok(200);
    assert_eq!(f2["name"], json!("Renamed"), "{r}");
    assert_eq!(f2["description"], json!("first"), "{r}");
    assert_eq!(f2["steps"], f["steps"], "{r}");
    assert_eq!(f2["handle"], json!(h), "{r}");
    assert_eq!(f2["created_at"], f["created_at"], "{r}");
    assert!(
        parse_ts(&f2["updated_at"]) >= parse_ts(&f["updated_at"]),
        "{r}"
    );
    // by handle, clearing the description, replacing the steps
    let r = app
        .admin(PUT, &flow_path(&h))
        .json(&json!({"description": null, "steps": [channel_step(&inapp, None, "only")]}))
        .go()
        .await;
    let f3 = r.ok(200);
    assert_eq!(f3["description"], Value::Null, "{r}");
    assert_eq!(f3["name"], json!("Renamed"), "{r}");
    assert_eq!(f3["steps"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(f3["steps"][0]["template"]["body"], json!("only"), "{r}");

    // a handle cannot change; a bad template or step is refused and changes nothing
    let r = app
        .admin(PUT, &flow_path(&id))
        .json(&json!({"handle": handle("other")}))
        .go()
        .await;
    assert_validation(&r, &[("handle", "exclusion")]);
    let r = app
        .admin(PUT, &flow_path(&id))
        .json(&json!({"steps": [channel_step(&inapp, None, "{{ broken ")]}))
        .go()
        .await;
    assert_validation(&r, &[("steps.0.template.body", "format")]);
    let r = app
        .admin(PUT, &flow_path(&id))
        .json(&json!({"steps": [channel_step(&new_uuid(), None, "x")]}))
        .go()
        .await;
    assert_validation(&r, &[("steps.0.channel_id", "inclusion")]);
    let r = app.admin(GET, &flow_path(&id)).go().await;
    assert_eq!(r.ok(200), f3, "refused PUTs change nothing: {r}");

    // the list, newest first
    let f4 = create_flow(&app, &handle("second"), json!([])).await;
    let r = app.admin(GET, &format!("{A}/flows")).go().await;
    let items = r.page()["items"].as_array().unwrap().clone();
    assert_eq!(items.len(), 2, "{r}");
    assert_eq!(items[0]["id"], f4["id"], "newest first: {r}");
    assert_eq!(items[1], f3, "{r}");
}

#[tokio::test]
async fn status_transitions_and_activation_rules() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;

    // no channel step: 422 steps required
    let empty = create_flow(&app, &handle("empty"), json!([])).await;
    let r = app
        .admin(POST, &format!("{}/activate", flow_path(&s(&empty["id"]))))
        .go()
        .await;
    assert_validation(&r, &[("steps", "required")]);
    let only_delay = create_flow(&app, &handle("delay-only"), json!([delay_step(3)])).await;
    let r = app
        .admin(
            POST,
            &format!("{}/activate", flow_path(&s(&only_delay["id"]))),
        )
        .go()
        .await;
    assert_validation(&r, &[("steps", "required")]);

    // unconfigured channel: 409 provider_not_configured
    let r = app
        .admin(POST, &format!("{A}/channels"))
        .json(&json!({"type": "chat", "provider": "webhook"}))
        .go()
        .await;
    let ch = r.ok(201);
    assert_eq!(ch["status"], json!("unconfigured"), "{r}");
    let cid = s(&ch["id"]);
    let h = handle("chatty");
    let f = create_flow(
        &app,
        &h,
        json!([
            channel_step(&inapp, None, "a"),
            channel_step(&cid, None, "b")
        ]),
    )
    .await;
    let fid = s(&f["id"]);
    let r = app
        .admin(POST, &format!("{}/activate", flow_path(&fid)))
        .go()
        .await;
    assert_conflict(&r, "provider_not_configured");
    let r = app.admin(GET, &flow_path(&fid)).go().await;
    assert_eq!(r.ok(200)["status"], json!("draft"), "{r}");

    // configured: activation works (by handle), and repeating it is a no-op
    let r = app
        .admin(PUT, &format!("{A}/channels/{cid}"))
        .json(&json!({"config": {"url": "http://127.0.0.1:9/hook"}}))
        .go()
        .await;
    assert_eq!(r.ok(200)["status"], json!("active"), "{r}");
    let r = app
        .admin(POST, &format!("{}/activate", flow_path(&h)))
        .go()
        .await;
    let a = r.ok(200);
    assert_eq!(a["status"], json!("active"), "{r}");
    assert_eq!(a["id"], json!(fid), "{r}");
    let r = app
        .admin(POST, &format!("{}/activate", flow_path(&fid)))
        .go()
        .await;
    assert_eq!(r.ok(200)["status"], json!("active"), "no-op: {r}");

    // active -> draft, draft -> draft is a no-op
    let r = app
        .admin(POST, &format!("{}/deactivate", flow_path(&fid)))
        .go()
        .await;
    assert_eq!(r.ok(200)["status"], json!("draft"), "{r}");
    let r = app
        .admin(POST, &format!("{}/deactivate", flow_path(&fid)))
        .go()
        .await;
    assert_eq!(r.ok(200)["status"], json!("draft"), "no-op: {r}");

    // revoked channel: 409 provider_revoked
    let r = app
        .admin(POST, &format!("{A}/channels/{cid}/revoke"))
        .go()
        .await;
    assert_eq!(r.ok(200)["status"], json!("revoked"), "{r}");
    let r = app
        .admin(POST, &format!("{}/activate", flow_path(&fid)))
        .go()
        .await;
    assert_conflict(&r, "provider_revoked");
    let r = app.admin(GET, &flow_path(&fid)).go().await;
    assert_eq!(r.ok(200)["status"], json!("draft"), "{r}");

    // active -> archived; archived is final
    let g = active_flow(&app, "to-archive", json!([channel_step(&inapp, None, "x")])).await;
    let gid = s(&g["id"]);
    let r = app
        .admin(POST, &format!("{}/archive", flow_path(&gid)))
        .go()
        .await;
    assert_eq!(r.ok(200)["status"], json!("archived"), "{r}");
    let r = app
        .admin(POST, &format!("{}/archive", flow_path(&gid)))
        .go()
        .await;
    assert_eq!(r.ok(200)["status"], json!("archived"), "no-op: {r}");
    for action in ["activate", "deactivate"] {
        let r = app
            .admin(POST, &format!("{}/{action}", flow_path(&gid)))
            .go()
            .await;
        let d = assert_conflict(&r, "invalid_transition");
        assert_eq!(d["resource"], json!("flow"), "{r}");
        assert_eq!(d["id"], json!(gid), "{r}");
        assert_eq!(d["current_status"], json!("archived"), "{r}");
        assert_eq!(d["allowed_transitions"], json!([]), "{r}");
    }
    // nothing leaves archived, an edit neither
    let r = app
        .admin(PUT, &flow_path(&gid))
        .json(&json!({"name": "revived"}))
        .go()
        .await;
    assert_conflict(&r, "invalid_transition");
    let r = app.admin(GET, &flow_path(&gid)).go().await;
    let g2 = r.ok(200);
    assert_eq!(g2["status"], json!("archived"), "{r}");
    assert_ne!(g2["name"], json!("revived"), "{r}");

    // draft -> archived directly
    let r = app
        .admin(POST, &format!("{}/archive", flow_path(&s(&empty["id"]))))
        .go()
        .await;
    assert_eq!(r.ok(200)["status"], json!("archived"), "{r}");

    // unknown flow
    let unknown = new_uuid();
    for action in ["activate", "deactivate", "archive"] {
        let r = app
            .admin(POST, &format!("{}/{action}", flow_path(&unknown)))
            .go()
            .await;
        assert_not_found(&r, "flow", &unknown);
    }
}

#[tokio::test]
async fn preferences_list_every_non_archived_flow() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let (ext, _) = app.create_user("prefs", json!({})).await;
    let draft = create_flow(
        &app,
        &handle("draft"),
        json!([channel_step(&inapp, None, "d")]),
    )
    .await;
    let active = active_flow(&app, "active", json!([channel_step(&inapp, None, "a")])).await;
    let archived = create_flow(&app, &handle("gone"), json!([])).await;
    let r = app
        .admin(POST, &format!("{}/archive", flow_path(&s(&archived["id"]))))
        .go()
        .await;
    r.ok(200);

    let expect = |flows: &[&Value]| {
        let mut m = serde_json::Map::new();
        for f in flows {
            m.insert(
                s(&f["handle"]),
                json!({"name": f["name"], "enabled": true, "channel_types": all_true(),
                    "categories": []}),
            );
        }
        Value::Object(m)
    };
    let r = app
        .admin(GET, &format!("{A}/users/{}/preferences", enc(&ext)))
        .go()
        .await;
    assert_eq!(r.ok(200)["flows"], expect(&[&draft, &active]), "{r}");
    let r = app.user(GET, &format!("{U}/preferences"), &ext).go().await;
    assert_eq!(r.ok(200)["flows"], expect(&[&draft, &active]), "{r}");

    // a renamed flow shows its new name; archiving removes it
    let r = app
        .admin(PUT, &flow_path(&s(&active["id"])))
        .json(&json!({"name": "Shiny"}))
        .go()
        .await;
    let active = r.ok(200);
    let r = app
        .admin(POST, &format!("{}/archive", flow_path(&s(&draft["id"]))))
        .go()
        .await;
    r.ok(200);
    let r = app
        .admin(GET, &format!("{A}/users/{}/preferences", enc(&ext)))
        .go()
        .await;
    let p = r.ok(200);
    assert_eq!(p["flows"], expect(&[&active]), "{r}");
    assert_eq!(
        p["flows"][s(&active["handle"])]["name"],
        json!("Shiny"),
        "{r}"
    );
}

#[tokio::test]
async fn over_long_fields_are_too_long_not_missing() {
    let app = TestApp::spawn();
    let post = |body: Value| app.admin(POST, &format!("{A}/flows")).json(&body);
    for (field, body) in [("handle", json!({"handle": "x".repeat(65), "name": "Long"}))] {
        let r = post(body).go().await;
        let d = assert_error(&r, 422, "validation_failed");
        let on_field: Vec<&Value> = d["fields"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["field"] == json!(field))
            .collect();
        assert!(
            on_field
                .iter()
                .any(|f| f["reason"] == json!("format") || f["reason"] == json!("length")),
            "an over-long {field} is reported as too long: {r}"
        );
        assert!(
            !on_field.iter().any(|f| f["reason"] == json!("required")),
            "a {field} that is present must not be reported as required: {r}"
        );
    }
    let r = app.admin(GET, &format!("{A}/flows")).go().await;
    assert_eq!(r.page()["items"], json!([]), "nothing was created: {r}");
}
