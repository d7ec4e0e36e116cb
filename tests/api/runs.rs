//! docs/API.md §9 (runs, notifications and deliveries):
//! the 202, run validation, inline identify, recipient dedup, templates,
//! preferences, the notification and delivery lists with their filters, the
//! by-id reads, and a durable `delay` that survives a restart.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use serde_json::{json, Value};
use wiremock::matchers::{body_string_contains, method};
use wiremock::{Mock, ResponseTemplate};

use crate::engine_helpers::*;
use crate::helpers::*;

fn run_path(flow: &str) -> String {
    format!("{A}/flows/{flow}/run")
}

#[tokio::test]
async fn run_is_accepted_and_validated() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(&app, "runme", json!([channel_step(&inapp, None, "hi")])).await;
    let fid = s(&flow["id"]);
    let (ext, _) = app.create_user("runner", json!({})).await;

    // the 202
    let r = app
        .admin(POST, &run_path(&fid))
        .json(&json!({"recipients": [{"external_id": ext}]}))
        .go()
        .await;
    let run = r.ok(202);
    for k in ["id", "flow_id", "status", "recipients_count", "created_at"] {
        assert!(run.get(k).is_some(), "accepted run lacks {k}: {r}");
    }
    assert!(is_uuid_v7(&run["id"]), "{r}");
    assert_eq!(run["flow_id"], json!(fid), "{r}");
    assert_eq!(run["status"], json!("pending"), "{r}");
    assert_eq!(run["recipients_count"], json!(1), "{r}");
    assert!(is_timestamp(&run["created_at"]), "{r}");
    assert!(
        r.header("idempotent-replayed").is_none(),
        "a first response is no replay: {r}"
    );
    let run_id = s(&run["id"]);

    // the flow run, once processed
    let fr = wait_run_processed(&app, &run_id, 30).await;
    assert_eq!(fr["id"], json!(run_id), "{fr}");
    assert_eq!(fr["flow_id"], json!(fid), "{fr}");
    assert_eq!(fr["recipients_count"], json!(1), "{fr}");
    assert_eq!(fr["notifications_count"], json!(1), "{fr}");
    assert_eq!(fr["created_at"], run["created_at"], "{fr}");
    assert!(is_timestamp(&fr["processed_at"]), "{fr}");
    assert!(
        parse_ts(&fr["processed_at"]) >= parse_ts(&fr["created_at"]),
        "{fr}"
    );

    // by handle too
    let r = app
        .admin(POST, &run_path(&s(&flow["handle"])))
        .json(&json!({"recipients": [{"external_id": ext}]}))
        .go()
        .await;
    assert_eq!(r.ok(202)["flow_id"], json!(fid), "{r}");

    // not active: draft, then archived
    let draft = create_flow(
        &app,
        &handle("drafty"),
        json!([channel_step(&inapp, None, "x")]),
    )
    .await;
    let did = s(&draft["id"]);
    let body = json!({"recipients": [{"external_id": ext}]});
    let r = app.admin(POST, &run_path(&did)).json(&body).go().await;
    let d = assert_conflict(&r, "flow_not_active");
    assert_eq!(d["resource"], json!("flow"), "{r}");
    assert_eq!(d["id"], json!(did), "{r}");
    assert_eq!(d["current_status"], json!("draft"), "{r}");
    assert_eq!(d["allowed_statuses"], json!(["active"]), "{r}");
    let r = app
        .admin(POST, &format!("{A}/flows/{did}/archive"))
        .go()
        .await;
    r.ok(200);
    let r = app.admin(POST, &run_path(&did)).json(&body).go().await;
    let d = assert_conflict(&r, "flow_not_active");
    assert_eq!(d["current_status"], json!("archived"), "{r}");
    assert_eq!(d["allowed_statuses"], json!(["active"]), "{r}");

    // unknown flow
    let unknown = new_uuid();
    let r = app.admin(POST, &run_path(&unknown)).json(&body).go().await;
    assert_not_found(&r, "flow", &unknown);
    let r = app
        .admin(POST, &run_path("no-such-flow"))
        .json(&body)
        .go()
        .await;
    assert_not_found(&r, "flow", "no-such-flow");

    // order of checks: 400 (JSON) before 404, 404 before 422, 422 before 409
    let r = app
        .admin(POST, &run_path(&unknown))
        .header("content-type", "application/json")
        .body("{not json")
        .go()
        .await;
    assert_invalid_json(&r);
    let r = app
        .admin(POST, &run_path(&unknown))
        .json(&json!({}))
        .go()
        .await;
    assert_not_found(&r, "flow", &unknown);
    let r = app
        .admin(POST, &run_path(&did))
        .json(&json!({"recipients": []}))
        .go()
        .await;
    assert_validation(&r, &[("recipients", "required")]);

    // validation
    let post = |b: Value| app.admin(POST, &run_path(&fid)).json(&b);
    let many: Vec<String> = (0..1001).map(|i| format!("many-{i}")).collect();
    let r = post(json!({"recipients": recipients(&many)})).go().await;
    assert_validation(&r, &[("recipients", "length")]);
    let r = post(json!({})).go().await;
    assert_validation(&r, &[("recipients", "required")]);
    let r = post(json!({"recipients": []})).go().await;
    assert_validation(&r, &[("recipients", "required")]);
    let r = post(json!({"recipients": [{}]})).go().await;
    assert_validation(&r, &[("recipients.0.external_id", "required")]);
    let r = post(json!({"recipients": [{"external_id": ext}, {"first_name": "No id"}]}))
        .go()
        .await;
    assert_validation(&r, &[("recipients.1.external_id", "required")]);
    let r = post(json!({"recipients": [{"external_id": "bad-mail", "email": "nope"}]}))
        .go()
        .await;
    assert_validation(&r, &[("recipients.0.email", "format")]);
    let r = post(json!({"recipients": "x"})).go().await;
    assert_validation(&r, &[("recipients", "format")]);
    let r = post(json!({"recipients": [5]})).go().await;
    assert_validation(&r, &[("recipients.0", "format")]);
    let r = post(json!({"topic": "no-such-topic"})).go().await;
    assert_validation(&r, &[("topic", "inclusion")]);
    let ghost = new_ext("ghost");
    let newcomer = new_ext("newcomer");
    let r =
        post(json!({"recipients": [{"external_id": newcomer, "first_name": "N"}], "actor": ghost}))
            .go()
            .await;
    assert_validation(&r, &[("actor", "inclusion")]);
    let r = post(json!({"recipients": [{"external_id": ext}], "data": "text"}))
        .go()
        .await;
    assert_validation(&r, &[("data", "format")]);
    let r = post(json!({"recipients": [{"external_id": ext}], "actor": {"first_name": "Anon"}}))
        .go()
        .await;
    assert_validation(&r, &[("actor.external_id", "required")]);
    // a refused run did nothing: no inline-identified user, no notification
    let r = app
        .admin(GET, &format!("{A}/users/{}", enc(&newcomer)))
        .go()
        .await;
    assert_not_found(&r, "user", &newcomer);
    let r = app
        .admin(GET, &format!("{A}/users/{}", enc("many-0")))
        .go()
        .await;
    assert_not_found(&r, "user", "many-0");
    let all = list_all(&app, &format!("{A}/notifications"), &[]).await;
    assert_eq!(
        all.len(),
        2,
        "only the two accepted runs made notifications"
    );

    // exactly 1000 recipients are fine (and identified inline)
    let thousand: Vec<String> = (0..1000)
        .map(|i| format!("k-{i:04}-{}", &random_hex()[..4]))
        .collect();
    let r = post(json!({"recipients": recipients(&thousand)}))
        .go()
        .await;
    let big = r.ok(202);
    assert_eq!(big["recipients_count"], json!(1000), "{r}");
    let fr = wait_run_processed(&app, &s(&big["id"]), 30).await;
    assert_eq!(fr["notifications_count"], json!(1000), "{fr}");
    let r = app
        .admin(GET, &format!("{A}/users/{}", enc(&thousand[999])))
        .go()
        .await;
    r.ok(200);

    // by-id reads: unknown and malformed ids
    let unknown = new_uuid();
    for (path, resource) in [
        ("flow_runs", "flow_run"),
        ("notifications", "notification"),
        ("deliveries", "delivery"),
    ] {
        let r = app.admin(GET, &format!("{A}/{path}/{unknown}")).go().await;
        assert_not_found(&r, resource, &unknown);
        let r = app.admin(GET, &format!("{A}/{path}/not-a-uuid")).go().await;
        assert_invalid_uuid(&r, "id");
    }
}

#[tokio::test]
async fn inline_identify_dedup_and_templates() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let h = handle("greet");
    let flow = create_flow(
        &app,
        &h,
        json!([{
            "type": "channel",
            "channel_id": inapp,
            "template": {
                "subject": "{{ flow.name }} / {{ flow.handle }}",
                "body": "Hi {{ recipient.first_name }} {{ recipient.last_name }}, {{ actor.first_name }} says {{ data.msg }}[{{ data.nope }}][{{ data.a.b.c }}][{{ recipient.custom_fields.plan }}]",
                "url": "https://example.com/items/{{ data.item_id }}"
            }
        }]),
    )
    .await;
    let fid = s(&flow["id"]);
    activate(&app, &fid).await;

    let ann = new_ext("ann");
    app.create_user_as(
        &ann,
        json!({"first_name": "Ann", "last_name": "Old", "email": "ann@example.com",
            "custom_fields": {"plan": "pro"}}),
    )
    .await;
    let cid = new_ext("cid");
    let bob = new_ext("bob");
    let data = json!({"msg": "hello", "item_id": 42});
    let r = app
        .admin(POST, &run_path(&fid))
        .json(&json!({
            "recipients": [
                {"external_id": ann, "last_name": "New"},
                {"external_id": cid, "first_name": "Cid", "email": "cid@example.com"},
                {"external_id": ann},
                {"external_id": cid, "last_name": "Last"}
            ],
            "actor": {"external_id": bob, "first_name": "Bob"},
            "data": data
        }))
        .go()
        .await;
    let run = r.ok(202);
    assert_eq!(
        run["recipients_count"],
        json!(2),
        "recipients are deduplicated: {r}"
    );
    let run_id = s(&run["id"]);

    // inline identify created and updated the users (partial updates)
    let r = app
        .admin(GET, &format!("{A}/users/{}", enc(&ann)))
        .go()
        .await;
    let u = r.ok(200);
    assert_eq!(u["first_name"], json!("Ann"), "{r}");
    assert_eq!(u["last_name"], json!("New"), "{r}");
    assert_eq!(u["email"], json!("ann@example.com"), "{r}");
    let r = app
        .admin(GET, &format!("{A}/users/{}", enc(&cid)))
        .go()
        .await;
    let c = r.ok(200);
    assert_eq!(c["first_name"], json!("Cid"), "{r}");
    assert_eq!(c["last_name"], json!("Last"), "{r}");
    assert_eq!(c["email"], json!("cid@example.com"), "{r}");
    let r = app
        .admin(GET, &format!("{A}/users/{}", enc(&bob)))
        .go()
        .await;
    let b = r.ok(200);
    assert_eq!(
        b["first_name"],
        json!("Bob"),
        "the inline actor is identified: {r}"
    );

    // the edits made after acceptance do not change this run
    let r = app
        .admin(PUT, &format!("{A}/flows/{fid}"))
        .json(&json!({"steps": [channel_step(&inapp, None, "edited {{ data.msg }}")]}))
        .go()
        .await;
    r.ok(200);

    let fr = wait_run_processed(&app, &run_id, 30).await;
    assert_eq!(fr["notifications_count"], json!(2), "{fr}");
    let ns = run_notifications(&app, &run_id).await;
    assert_eq!(ns.len(), 2);
    let by_rcpt: HashMap<String, Value> = ns
        .iter()
        .map(|n| (s(&n["recipient"]["external_id"]), n.clone()))
        .collect();
    assert_eq!(
        by_rcpt.keys().cloned().collect::<HashSet<_>>(),
        HashSet::from([ann.clone(), cid.clone()]),
        "{ns:?}"
    );
    for n in &ns {
        assert_eq!(n["flow_id"], json!(fid), "{n}");
        assert_eq!(n["flow_run_id"], json!(run_id), "{n}");
        assert_eq!(n["status"], json!("processed"), "{n}");
        assert_eq!(n["data"], data, "notification data is the run's data: {n}");
        assert_eq!(n["actor_id"], b["id"], "{n}");
        assert_eq!(n["actor"]["external_id"], json!(bob), "{n}");
        assert_eq!(n["recipient_id"], n["recipient"]["id"], "{n}");
        assert_eq!(n["topic"], Value::Null, "{n}");
        let d = delivery_of(n, "in_app");
        assert_eq!(d["status"], json!("sent"), "{n}");
        assert_eq!(
            d["data"]["subject"],
            json!(format!("Flow {h} / {h}")),
            "{n}"
        );
        assert_eq!(
            d["data"]["url"],
            json!("https://example.com/items/42"),
            "{n}"
        );
    }
    let body = |ext: &str| s(&delivery_of(&by_rcpt[ext], "in_app")["data"]["body"]);
    assert_eq!(body(&ann), "Hi Ann New, Bob says hello[][][pro]");
    assert_eq!(body(&cid), "Hi Cid Last, Bob says hello[][][]");

    // the edited flow: no subject -> "", no actor -> undefined -> ""; actor by external_id
    let r = app
        .admin(PUT, &format!("{A}/flows/{fid}"))
        .json(&json!({"steps": [channel_step(&inapp, None, "{{ actor.first_name }}|{{ actor.external_id }}|{{ data.msg }}")]}))
        .go()
        .await;
    r.ok(200);
    let (_, n) = run_one(&app, &fid, json!({"recipients": [{"external_id": ann}]})).await;
    let d = delivery_of(&n, "in_app");
    assert_eq!(d["data"]["subject"], json!(""), "no subject template: {n}");
    assert_eq!(
        d["data"]["body"],
        json!("||"),
        "undefined renders empty: {n}"
    );
    assert_eq!(n["actor"], Value::Null, "{n}");
    assert_eq!(n["actor_id"], Value::Null, "{n}");
    let (_, n) = run_one(
        &app,
        &fid,
        json!({"recipients": [{"external_id": cid}], "actor": ann, "data": {"msg": "yo"}}),
    )
    .await;
    let d = delivery_of(&n, "in_app");
    assert_eq!(d["data"]["body"], json!(format!("Ann|{ann}|yo")), "{n}");
    assert_eq!(n["actor"]["external_id"], json!(ann), "{n}");
}

#[tokio::test]
async fn preferences_skip_deliveries() {
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let chat = create_webhook_channel(&app, &hook_url(&hook), None).await;
    let h = handle("prefs");
    let flow = create_flow(
        &app,
        &h,
        json!([
            channel_step(&inapp, None, "in app for {{ recipient.external_id }}"),
            channel_step(
                &s(&chat["id"]),
                None,
                "chat for {{ recipient.external_id }}"
            ),
        ]),
    )
    .await;
    let fid = s(&flow["id"]);
    activate(&app, &fid).await;
    let other = create_flow(
        &app,
        &handle("other"),
        json!([channel_step(&inapp, None, "o")]),
    )
    .await;
    let other_h = s(&other["handle"]);

    let mut users: Vec<(String, Value, (&str, &str))> = vec![
        (
            new_ext("global-chat-off"),
            json!({"channel_types": {"chat": false}}),
            ("sent", "skipped"),
        ),
        (
            new_ext("flow-off"),
            json!({"flows": {h.clone(): {"enabled": false}}}),
            ("skipped", "skipped"),
        ),
        (
            new_ext("flow-inapp-off"),
            json!({"flows": {h.clone(): {"channel_types": {"in_app": false}}}}),
            ("skipped", "sent"),
        ),
        (
            new_ext("other-flow-off"),
            json!({"flows": {other_h.clone(): {"enabled": false}}}),
            ("sent", "sent"),
        ),
        (
            new_ext("all-off"),
            json!({"channel_types": {"in_app": false, "chat": false}}),
            ("skipped", "skipped"),
        ),
        (new_ext("default"), json!(null), ("sent", "sent")),
    ];
    // one preference set through the User API
    users.push((
        new_ext("user-api"),
        json!({"user_api": {"flows": {h.clone(): {"channel_types": {"chat": false}}}}}),
        ("sent", "skipped"),
    ));
    for (ext, prefs, _) in &users {
        app.create_user_as(ext, json!({})).await;
        if let Some(p) = prefs.get("user_api") {
            let r = app
                .user(PUT, &format!("{U}/preferences"), ext)
                .json(p)
                .go()
                .await;
            r.ok(200);
        } else if !prefs.is_null() {
            let r = app
                .admin(PUT, &format!("{A}/users/{}/preferences", enc(ext)))
                .json(prefs)
                .go()
                .await;
            r.ok(200);
        }
    }
    let exts: Vec<String> = users.iter().map(|u| u.0.clone()).collect();
    let run = run_flow(&app, &fid, json!({"recipients": recipients(&exts)})).await;
    let run_id = s(&run["id"]);
    let fr = wait_run_processed(&app, &run_id, 30).await;
    assert_eq!(fr["notifications_count"], json!(users.len()), "{fr}");
    let ns = run_notifications(&app, &run_id).await;
    assert_eq!(ns.len(), users.len());

    let mut sent_chat = HashSet::new();
    for (ext, _, (want_in_app, want_chat)) in &users {
        let n = ns
            .iter()
            .find(|n| n["recipient"]["external_id"] == json!(ext))
            .unwrap_or_else(|| panic!("no notification for {ext}"));
        assert_eq!(n["status"], json!("processed"), "{ext}: {n}");
        assert!(is_timestamp(&n["processed_at"]), "{ext}: {n}");
        for (ct, want) in [("in_app", *want_in_app), ("chat", *want_chat)] {
            let d = delivery_of(n, ct);
            assert_eq!(d["status"], json!(want), "{ext} {ct}: {d}");
            assert_eq!(d["next_attempt_at"], Value::Null, "{ext} {ct}: {d}");
            if want == "skipped" {
                assert_eq!(d["error"]["code"], json!("preference"), "{ext} {ct}: {d}");
                assert!(
                    d["error"]["message"]
                        .as_str()
                        .is_some_and(|m| !m.is_empty()),
                    "{ext} {ct}: {d}"
                );
                assert_eq!(d["attempts"], json!(0), "{ext} {ct}: {d}");
                assert_eq!(d["sent_at"], Value::Null, "{ext} {ct}: {d}");
            } else {
                assert_eq!(d["error"], Value::Null, "{ext} {ct}: {d}");
                assert_eq!(d["attempts"], json!(1), "{ext} {ct}: {d}");
                assert!(is_timestamp(&d["sent_at"]), "{ext} {ct}: {d}");
                if ct == "chat" {
                    sent_chat.insert(s(&d["id"]));
                }
            }
        }
        // the feed shows exactly the sent in_app delivery
        let r = app
            .admin(GET, &format!("{A}/users/{}/feed", enc(ext)))
            .go()
            .await;
        let feed = r.page();
        let want_len = usize::from(*want_in_app == "sent");
        assert_eq!(
            feed["items"].as_array().unwrap().len(),
            want_len,
            "{ext}: {r}"
        );
    }
    // the webhook saw exactly the sent chat deliveries
    let got: HashSet<String> = received(&hook)
        .await
        .iter()
        .filter_map(|q| req_header(q, "idempotency-key"))
        .collect();
    assert_eq!(got, sent_chat, "webhook requests vs sent chat deliveries");
}

#[tokio::test]
async fn notification_and_delivery_lists_filter() {
    let hook = mock_server().await;
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let (u1, _) = app.create_user("u1", json!({})).await;
    let (u2, _) = app.create_user("u2", json!({})).await;
    let (u3, _) = app.create_user("u3", json!({})).await;
    // u2's chat delivery is refused by the receiver
    Mock::given(method("POST"))
        .and(body_string_contains(u2.as_str()))
        .respond_with(ResponseTemplate::new(400))
        .mount(&hook)
        .await;
    mock_always(&hook, 200).await;
    let chat = create_webhook_channel(&app, &hook_url(&hook), None).await;
    let chat_id = s(&chat["id"]);
    let fa = active_flow(
        &app,
        "fa",
        json!([
            channel_step(&inapp, None, "A"),
            channel_step(&chat_id, None, "A chat")
        ]),
    )
    .await;
    let fb = active_flow(&app, "fb", json!([channel_step(&inapp, None, "B")])).await;
    let (fa_id, fb_id) = (s(&fa["id"]), s(&fb["id"]));
    let topic = handle("news");
    let r = app
        .admin(PUT, &format!("{A}/topics/{topic}"))
        .json(&json!({"name": "News"}))
        .go()
        .await;
    r.ok(201);
    let r = app
        .admin(POST, &format!("{A}/topics/{topic}/subscriptions"))
        .json(&json!({"external_id": u3}))
        .go()
        .await;
    r.ok(201);

    let run1 = run_flow(
        &app,
        &fa_id,
        json!({"recipients": recipients(&[u1.clone(), u2.clone()])}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(30)).await;
    let run2 = run_flow(
        &app,
        &fb_id,
        json!({"recipients": recipients(std::slice::from_ref(&u1))}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(30)).await;
    let run3 = run_flow(&app, &fb_id, json!({"topic": topic, "data": {"k": "v"}})).await;
    assert_eq!(run3["recipients_count"], json!(1), "{run3}");
    let (r1, r2, r3) = (s(&run1["id"]), s(&run2["id"]), s(&run3["id"]));
    for id in [&r1, &r2, &r3] {
        wait_run_processed(&app, id, 30).await;
    }

    let all = list_all(&app, &format!("{A}/notifications"), &[]).await;
    assert_eq!(all.len(), 4, "{all:?}");
    for n in &all {
        for k in [
            "id",
            "flow_id",
            "flow_run_id",
            "topic",
            "status",
            "data",
            "actor_id",
            "actor",
            "recipient_id",
            "recipient",
            "deliveries",
            "processed_at",
            "created_at",
            "updated_at",
        ] {
            assert!(n.get(k).is_some(), "notification lacks {k}: {n}");
        }
        // by id: the same whole object
        let r = app
            .admin(GET, &format!("{A}/notifications/{}", s(&n["id"])))
            .go()
            .await;
        assert_eq!(&r.ok(200), n, "{r}");
        for d in deliveries(n) {
            let r = app
                .admin(GET, &format!("{A}/deliveries/{}", s(&d["id"])))
                .go()
                .await;
            assert_eq!(r.ok(200), d, "{r}");
            assert_eq!(d["notification_id"], n["id"], "{d}");
            assert_eq!(d["flow_id"], n["flow_id"], "{d}");
            assert_eq!(d["recipient_id"], n["recipient_id"], "{d}");
        }
    }
    // newest first
    let created: Vec<_> = all.iter().map(|n| s(&n["id"])).collect();
    let mut sorted = created.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(created, sorted, "notifications are newest first");

    let notif = |q: Vec<(&'static str, String)>| {
        let app = &app;
        async move {
            let q: Vec<(&str, &str)> = q.iter().map(|(k, v)| (*k, v.as_str())).collect();
            list_all(app, &format!("{A}/notifications"), &q).await
        }
    };
    let deliv_early = |q: Vec<(&'static str, String)>| {
        let app = &app;
        async move {
            let q: Vec<(&str, &str)> = q.iter().map(|(k, v)| (*k, v.as_str())).collect();
            list_all(app, &format!("{A}/deliveries"), &q).await
        }
    };
    let rcpts = |items: &[Value]| -> HashSet<String> {
        items
            .iter()
            .map(|n| s(&n["recipient"]["external_id"]))
            .collect()
    };

    let got = notif(vec![("flow_run_id", r1.clone())]).await;
    assert_eq!(
        rcpts(&got),
        HashSet::from([u1.clone(), u2.clone()]),
        "{got:?}"
    );
    assert!(got.iter().all(|n| n["flow_run_id"] == json!(r1)));
    let got = notif(vec![("flow_id", fb_id.clone())]).await;
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got.iter().all(|n| n["flow_id"] == json!(fb_id)));
    let got = notif(vec![("flow_id", fa_id.clone())]).await;
    assert_eq!(got.len(), 2, "{got:?}");
    let got = notif(vec![("recipient", u1.clone())]).await;
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got
        .iter()
        .all(|n| n["recipient"]["external_id"] == json!(u1)));
    let got = notif(vec![("flow_id", fa_id.clone()), ("recipient", u2.clone())]).await;
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["flow_run_id"], json!(r1));
    let got = notif(vec![("topic", topic.clone())]).await;
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["topic"], json!(topic));
    assert_eq!(got[0]["flow_run_id"], json!(r3));
    assert_eq!(got[0]["recipient"]["external_id"], json!(u3));
    assert_eq!(got[0]["data"], json!({"k": "v"}));
    assert!(deliveries(&got[0])
        .iter()
        .all(|d| d["topic"] == json!(topic)));
    let got = notif(vec![("status", "processed".into())]).await;
    assert_eq!(got.len(), 4, "{got:?}");
    let got = notif(vec![("status", "pending".into())]).await;
    assert_eq!(got.len(), 0, "{got:?}");
    let got = deliv_early(vec![("recipient", u3.clone())]).await;
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["channel_type"], json!("in_app"), "{got:?}");

    // created_after / created_before: exclusive, any offset
    let run2_n = notif(vec![("flow_run_id", r2.clone())]).await;
    assert_eq!(run2_n.len(), 1);
    let pivot = parse_ts(&run2_n[0]["created_at"]);
    let expect = |pred: &dyn Fn(chrono::DateTime<chrono::FixedOffset>) -> bool| -> HashSet<String> {
        all.iter()
            .filter(|n| pred(parse_ts(&n["created_at"])))
            .map(|n| s(&n["id"]))
            .collect()
    };
    let after = expect(&|t| t > pivot);
    let before = expect(&|t| t < pivot);
    assert!(
        !after.is_empty() && !before.is_empty(),
        "pivot splits the notifications"
    );
    let pivot_z = pivot.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let pivot_plus2 = pivot
        .with_timezone(&chrono::FixedOffset::east_opt(2 * 3600).unwrap())
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, false);
    for p in [&pivot_z, &pivot_plus2] {
        let got = notif(vec![("created_after", p.clone())]).await;
        assert_eq!(ids(&got), after, "created_after={p}");
        let got = notif(vec![("created_before", p.clone())]).await;
        assert_eq!(ids(&got), before, "created_before={p}");
    }

    // filters combine with pagination
    let r = app
        .admin(GET, &format!("{A}/notifications"))
        .query(&[("flow_id", fb_id.as_str()), ("limit", "1")])
        .go()
        .await;
    let p1 = r.page();
    assert_eq!(p1["items"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(p1["page"]["has_more_after"], json!(true), "{r}");
    let r = app
        .admin(GET, &format!("{A}/notifications"))
        .query(&[
            ("flow_id", fb_id.as_str()),
            ("limit", "1"),
            ("after", p1["page"]["after"].as_str().unwrap()),
        ])
        .go()
        .await;
    let p2 = r.page();
    assert_eq!(p2["items"].as_array().unwrap().len(), 1, "{r}");
    assert_ne!(p2["items"][0]["id"], p1["items"][0]["id"], "{r}");
    assert_eq!(p2["items"][0]["flow_id"], json!(fb_id), "{r}");
    assert_eq!(p2["page"]["has_more_after"], json!(false), "{r}");
    // the cursor binds to the filters
    let r = app
        .admin(GET, &format!("{A}/notifications"))
        .query(&[
            ("flow_id", fa_id.as_str()),
            ("limit", "1"),
            ("after", p1["page"]["after"].as_str().unwrap()),
        ])
        .go()
        .await;
    assert_invalid_param(&r, "after");

    // the unversioned alias
    let r = app
        .admin(GET, "/admin/notifications")
        .query(&[("flow_run_id", r1.as_str())])
        .go()
        .await;
    assert_eq!(
        ids(r.page()["items"].as_array().unwrap()),
        ids(&notif(vec![("flow_run_id", r1.clone())]).await),
        "{r}"
    );

    // bad filter values
    for (k, v) in [
        ("status", "bogus"),
        ("created_after", "2024-01-01"),
        ("created_before", "yesterday"),
        ("flow_run_id", "nope"),
    ] {
        let r = app
            .admin(GET, &format!("{A}/notifications"))
            .query(&[(k, v)])
            .go()
            .await;
        assert_invalid_param(&r, k);
    }
    // `flow_id` takes a handle as the paths do: "nope" names no flow
    let got = notif(vec![("flow_id", "nope".into())]).await;
    assert!(got.is_empty(), "{got:?}");

    // a deleted recipient's notifications stay, with recipient null
    let n3 = notif(vec![("topic", topic.clone())]).await;
    let r = app
        .admin(DELETE, &format!("{A}/users/{}", enc(&u3)))
        .go()
        .await;
    assert_eq!(r.status, 204, "{r}");
    let r = app
        .admin(GET, &format!("{A}/notifications/{}", s(&n3[0]["id"])))
        .go()
        .await;
    let gone = r.ok(200);
    assert_eq!(gone["recipient"], Value::Null, "{r}");
    assert_eq!(gone["recipient_id"], n3[0]["recipient_id"], "{r}");
    assert_eq!(gone["deliveries"], n3[0]["deliveries"], "{r}");

    // ---- deliveries
    let all_d = list_all(&app, &format!("{A}/deliveries"), &[]).await;
    assert_eq!(all_d.len(), 6, "{all_d:?}");
    let deliv = |q: Vec<(&'static str, String)>| {
        let app = &app;
        async move {
            let q: Vec<(&str, &str)> = q.iter().map(|(k, v)| (*k, v.as_str())).collect();
            list_all(app, &format!("{A}/deliveries"), &q).await
        }
    };
    let got = deliv(vec![("channel_type", "chat".into())]).await;
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got.iter().all(|d| d["channel_type"] == json!("chat")));
    let got = deliv(vec![("channel_type", "in_app".into())]).await;
    assert_eq!(got.len(), 4, "{got:?}");
    let got = deliv(vec![("channel_id", chat_id.clone())]).await;
    assert_eq!(got.len(), 2, "{got:?}");
    let got = deliv(vec![("channel_id", inapp.clone())]).await;
    assert_eq!(got.len(), 4, "{got:?}");
    let failed = deliv(vec![("status", "failed".into())]).await;
    assert_eq!(failed.len(), 1, "u2's chat delivery failed: {failed:?}");
    assert_eq!(failed[0]["channel_type"], json!("chat"));
    assert_eq!(failed[0]["error"]["code"], json!("provider_rejected"));
    assert_eq!(failed[0]["attempts"], json!(1));
    let got = deliv(vec![("status", "sent".into())]).await;
    assert_eq!(got.len(), 5, "{got:?}");
    let got = deliv(vec![("status", "pending".into())]).await;
    assert_eq!(got.len(), 0, "{got:?}");
    let got = deliv(vec![("status", "skipped".into())]).await;
    assert_eq!(got.len(), 0, "{got:?}");
    let got = deliv(vec![
        ("status", "sent".into()),
        ("channel_type", "chat".into()),
    ])
    .await;
    assert_eq!(got.len(), 1, "{got:?}");
    let got = deliv(vec![("recipient", u1.clone())]).await;
    assert_eq!(got.len(), 3, "{got:?}");
    let n_u2 = notif(vec![("flow_run_id", r1.clone()), ("recipient", u2.clone())]).await;
    assert_eq!(n_u2.len(), 1);
    assert_eq!(s(&failed[0]["notification_id"]), s(&n_u2[0]["id"]));
    let got = deliv(vec![("notification_id", s(&n_u2[0]["id"]))]).await;
    assert_eq!(ids(&got), ids(&deliveries(&n_u2[0])), "{got:?}");
    assert_eq!(got.len(), 2);
    let dpivot = parse_ts(&all_d[2]["created_at"]);
    let d_after: HashSet<String> = all_d
        .iter()
        .filter(|d| parse_ts(&d["created_at"]) > dpivot)
        .map(|d| s(&d["id"]))
        .collect();
    let got = deliv(vec![(
        "created_after",
        dpivot.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
    )])
    .await;
    assert_eq!(ids(&got), d_after);
    for (k, v) in [
        ("status", "bogus"),
        ("channel_type", "fax"),
        ("channel_id", "nope"),
        ("notification_id", "nope"),
        ("created_before", "2024-13-45"),
    ] {
        let r = app
            .admin(GET, &format!("{A}/deliveries"))
            .query(&[(k, v)])
            .go()
            .await;
        assert_invalid_param(&r, k);
    }
}

/// `?flow_id=` on the notification list takes the flow's handle as every
/// path does (it refused anything but a UUID): the same notifications as by
/// id, the cursor good for the next page; a handle or an id that names no
/// flow matches nothing (an empty list, as an unknown `recipient`).
#[tokio::test]
async fn notification_list_takes_a_flow_handle() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let fa = active_flow(&app, "byhandle", json!([channel_step(&inapp, None, "A")])).await;
    let fb = active_flow(&app, "other", json!([channel_step(&inapp, None, "B")])).await;
    let (fa_id, fa_handle) = (s(&fa["id"]), s(&fa["handle"]));
    let (u1, _) = app.create_user("fh1", json!({})).await;
    let (u2, _) = app.create_user("fh2", json!({})).await;
    let runs = [
        run_flow(
            &app,
            &fa_id,
            json!({"recipients": recipients(&[u1.clone(), u2.clone()])}),
        )
        .await,
        run_flow(
            &app,
            &s(&fb["id"]),
            json!({"recipients": recipients(std::slice::from_ref(&u1))}),
        )
        .await,
    ];
    for r in &runs {
        wait_run_processed(&app, &s(&r["id"]), 30).await;
    }
    let list = |q: Vec<(&'static str, String)>| {
        let app = &app;
        async move {
            let q: Vec<(&str, &str)> = q.iter().map(|(k, v)| (*k, v.as_str())).collect();
            list_all(app, &format!("{A}/notifications"), &q).await
        }
    };
    let by_id = list(vec![("flow_id", fa_id.clone())]).await;
    assert_eq!(by_id.len(), 2, "{by_id:?}");
    let by_handle = list(vec![("flow_id", fa_handle.clone())]).await;
    assert_eq!(ids(&by_handle), ids(&by_id), "{by_handle:?}");
    assert!(by_handle.iter().all(|n| n["flow_id"] == json!(fa_id)));
    let got = list(vec![
        ("flow_id", fa_handle.clone()),
        ("recipient", u2.clone()),
    ])
    .await;
    assert_eq!(got.len(), 1, "{got:?}");
    // one page at a time: the cursor of a handle-filtered page
    let r = app
        .admin(GET, &format!("{A}/notifications"))
        .query(&[("flow_id", fa_handle.as_str()), ("limit", "1")])
        .go()
        .await;
    let p1 = r.page();
    assert_eq!(p1["items"].as_array().unwrap().len(), 1, "{r}");
    let r = app
        .admin(GET, &format!("{A}/notifications"))
        .query(&[
            ("flow_id", fa_handle.as_str()),
            ("limit", "1"),
            ("after", p1["page"]["after"].as_str().unwrap()),
        ])
        .go()
        .await;
    let p2 = r.page();
    assert_eq!(p2["items"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(p2["items"][0]["flow_id"], json!(fa_id), "{r}");
    assert_ne!(p2["items"][0]["id"], p1["items"][0]["id"], "{r}");
    // unknown: nothing, not an error
    for unknown in [handle("nosuch"), new_uuid()] {
        let r = app
            .admin(GET, &format!("{A}/notifications"))
            .query(&[("flow_id", unknown.as_str())])
            .go()
            .await;
        let page = r.page();
        assert_eq!(page["items"], json!([]), "flow_id={unknown}: {r}");
    }
}

#[tokio::test]
async fn delay_step_survives_a_restart() {
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let mut app = TestApp::spawn_on(dir.path(), &keys);
    let inapp = in_app_channel(&app).await;
    let chat = create_webhook_channel(&app, &hook_url(&hook), None).await;
    let flow = active_flow(
        &app,
        "delayed",
        json!([
            channel_step(&inapp, None, "now"),
            delay_step(3),
            channel_step(&s(&chat["id"]), None, "later"),
        ]),
    )
    .await;
    let (ext, _) = app.create_user("patient", json!({})).await;
    let run = run_flow(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}]}),
    )
    .await;
    let t_accept = std::time::Instant::now();
    let status = app.stop();
    assert!(status.success(), "SIGTERM exits 0: {status:?}");
    assert!(
        received(&hook).await.is_empty(),
        "nothing delayed may go out before the delay"
    );

    let app = TestApp::spawn_on(dir.path(), &keys);
    let run_id = s(&run["id"]);
    let due = parse_ts(&run["created_at"]) + chrono::Duration::seconds(3);
    let ns = run_notifications(&app, &run_id).await;
    assert_eq!(ns.len(), 1, "the accepted run survived the restart: {ns:?}");
    let chat_d = delivery_of(&ns[0], "chat");
    let chat_id = s(&chat_d["id"]);
    if t_accept.elapsed() < Duration::from_millis(2500) {
        assert_eq!(
            chat_d["status"],
            json!("pending"),
            "still delayed: {chat_d}"
        );
        assert_eq!(ns[0]["status"], json!("pending"), "{}", ns[0]);
        let r = app
            .admin(GET, &format!("{A}/flow_runs/{run_id}"))
            .go()
            .await;
        let fr = r.ok(200);
        assert_eq!(fr["status"], json!("pending"), "{r}");
        assert_eq!(fr["processed_at"], Value::Null, "{r}");
        assert!(
            parse_ts(&chat_d["next_attempt_at"]) >= due,
            "next_attempt_at is the end of the delay: {chat_d}"
        );
    }
    let d = wait_delivery_final(&app, &chat_id, 30).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["data"]["body"], json!("later"), "{d}");
    assert!(
        parse_ts(&d["sent_at"]) >= due,
        "sent no earlier than 3 s after acceptance: {d} (due {due})"
    );
    let reqs = requests_for(&hook, &chat_id).await;
    assert!(
        !reqs.is_empty(),
        "the webhook received the delayed delivery"
    );
    let fr = wait_run_processed(&app, &run_id, 30).await;
    assert_eq!(fr["notifications_count"], json!(1), "{fr}");
    let ns = run_notifications(&app, &run_id).await;
    let inapp_d = delivery_of(&ns[0], "in_app");
    assert_eq!(inapp_d["status"], json!("sent"), "{}", ns[0]);
    assert!(
        parse_ts(&inapp_d["sent_at"]) <= parse_ts(&d["sent_at"]),
        "steps happen in order: {}",
        ns[0]
    );
    assert_eq!(ns[0]["status"], json!("processed"), "{}", ns[0]);
}

/// `status=pending` lists come from the pending-delivery queue and the pending
/// notification index; both must hold exactly what waits, and empty as it goes.
#[tokio::test]
async fn pending_filters_list_exactly_what_waits() {
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let chat = create_webhook_channel(&app, &hook_url(&hook), None).await;
    let flow = active_flow(
        &app,
        "pending-lists",
        json!([
            channel_step(&inapp, None, "now"),
            delay_step(2),
            channel_step(&s(&chat["id"]), None, "later"),
        ]),
    )
    .await;
    let (u1, _) = app.create_user("pend1", json!({})).await;
    let (u2, _) = app.create_user("pend2", json!({})).await;
    let run = run_flow(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": u1}, {"external_id": u2}]}),
    )
    .await;
    let run_id = s(&run["id"]);
    let pending_d = list_all(&app, &format!("{A}/deliveries"), &[("status", "pending")]).await;
    assert_eq!(
        pending_d.len(),
        2,
        "the two delayed chat deliveries: {pending_d:?}"
    );
    assert!(pending_d.iter().all(|d| d["channel_type"] == json!("chat")
        && d["status"] == json!("pending")
        && d["flow_run_id"] == json!(run_id)));
    let sent_d = list_all(&app, &format!("{A}/deliveries"), &[("status", "sent")]).await;
    assert_eq!(
        sent_d.len(),
        2,
        "the in-app ones are sent at once: {sent_d:?}"
    );
    assert!(sent_d.iter().all(|d| d["channel_type"] == json!("in_app")));
    let pending_n = list_all(
        &app,
        &format!("{A}/notifications"),
        &[("status", "pending")],
    )
    .await;
    assert_eq!(pending_n.len(), 2, "{pending_n:?}");
    let done_n = list_all(
        &app,
        &format!("{A}/notifications"),
        &[("status", "processed")],
    )
    .await;
    assert_eq!(done_n.len(), 0, "{done_n:?}");
    // every delivery of a notification, in step order, through its range
    let n = &pending_n[0];
    let ds = list_all(
        &app,
        &format!("{A}/deliveries"),
        &[("notification_id", n["id"].as_str().unwrap())],
    )
    .await;
    let mut types: Vec<String> = ds.iter().map(|d| s(&d["channel_type"])).collect();
    types.sort();
    assert_eq!(
        types,
        vec!["chat".to_string(), "in_app".to_string()],
        "{ds:?}"
    );

    wait_run_processed(&app, &run_id, 30).await;
    let pending_d = list_all(&app, &format!("{A}/deliveries"), &[("status", "pending")]).await;
    assert!(pending_d.is_empty(), "{pending_d:?}");
    let pending_n = list_all(
        &app,
        &format!("{A}/notifications"),
        &[("status", "pending")],
    )
    .await;
    assert!(pending_n.is_empty(), "{pending_n:?}");
    let done_n = list_all(
        &app,
        &format!("{A}/notifications"),
        &[("status", "processed")],
    )
    .await;
    assert_eq!(done_n.len(), 2, "{done_n:?}");
    let sent_d = list_all(&app, &format!("{A}/deliveries"), &[("status", "sent")]).await;
    assert_eq!(sent_d.len(), 4, "{sent_d:?}");
}

/// Walks a list one item per page, forward with `after` and back with `before`,
/// and returns the ids in list order each way (the backward walk reversed).
async fn walk_one_by_one(
    app: &TestApp, path: &str, query: &[(&str, &str)],
) -> (Vec<String>, Vec<String>) {
    let mut forward = vec![];
    let mut after: Option<String> = None;
    let mut last_page = None;
    for _ in 0..200 {
        let mut q: Vec<(&str, &str)> = query.to_vec();
        q.push(("limit", "1"));
        if let Some(a) = &after {
            q.push(("after", a));
        }
        let body = app.admin(GET, path).query(&q).go().await.page();
        forward.extend(
            body["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| s(&i["id"])),
        );
        last_page = Some(body.clone());
        match body["page"]["after"].as_str() {
            Some(a) if body["page"]["has_more_after"] == json!(true) => after = Some(a.into()),
            _ => break,
        }
    }
    // Back from the last page: pages of newer items, each newest first.
    let mut pages: Vec<Vec<String>> = vec![];
    let mut before = None;
    if let Some(p) = &last_page {
        pages.push(
            p["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| s(&i["id"]))
                .collect(),
        );
        before = p["page"]["before"].as_str().map(String::from);
    }
    for _ in 0..200 {
        let Some(b) = before.clone() else { break };
        let mut q: Vec<(&str, &str)> = query.to_vec();
        q.push(("limit", "1"));
        q.push(("before", &b));
        let body = app.admin(GET, path).query(&q).go().await.page();
        pages.push(
            body["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| s(&i["id"]))
                .collect(),
        );
        before = match body["page"]["before"].as_str() {
            Some(x) if body["page"]["has_more_before"] == json!(true) => Some(x.into()),
            _ => None,
        };
    }
    pages.reverse();
    let backward: Vec<String> = pages.into_iter().flatten().collect();
    (forward, backward)
}

/// Lists whose items share stored records page exactly, both ways: deliveries
/// (kept inside their notification's record), pending notifications (one per
/// notification, however many of its deliveries wait), notifications by
/// recipient (feed entries and markers of one user) and by topic (packed
/// index chunks of several runs).
#[tokio::test]
async fn lists_over_shared_records_page_one_by_one_without_gaps_or_repeats() {
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let chat = s(&create_webhook_channel(&app, &hook_url(&hook), None).await["id"]);
    // two delayed chat steps: each notification has two pending deliveries
    let waiting = active_flow(
        &app,
        "waits",
        json!([
            channel_step(&inapp, None, "now"),
            // long enough for the walks below, even on a slow machine
            delay_step(10),
            channel_step(&chat, None, "later"),
            channel_step(&chat, None, "later again"),
        ]),
    )
    .await;
    // no in_app step: listed for its recipient by a marker
    let chat_only = active_flow(&app, "chat-only", json!([channel_step(&chat, None, "hi")])).await;
    let topic = handle("walk");
    let users = topic_of_new_users(&app, &topic, "walk", 3).await;
    let r1 = run_flow(
        &app,
        &s(&waiting["id"]),
        json!({"recipients": recipients(&users)}),
    )
    .await;
    let r2 = run_flow(&app, &s(&chat_only["id"]), json!({"topic": topic})).await;
    let r3 = run_flow(&app, &s(&waiting["id"]), json!({"topic": topic})).await;
    wait_run_processed(&app, &s(&r2["id"]), 30).await;
    // r3's expansion too (on a cluster, by the node that accepted it, which
    // need not be r2's)
    let d = Deadline::new("the topic run's three notifications", 30);
    loop {
        let r = app
            .admin(GET, &format!("{A}/flow_runs/{}", s(&r3["id"])))
            .go()
            .await;
        if r.ok(200)["notifications_count"] == json!(3) {
            break;
        }
        d.tick(&r).await;
    }

    let notifications = format!("{A}/notifications");
    let deliveries_path = format!("{A}/deliveries");
    let all_n = list_all(&app, &notifications, &[]).await;
    assert_eq!(all_n.len(), 9, "{all_n:?}");
    let all_d = list_all(&app, &deliveries_path, &[]).await;
    assert_eq!(all_d.len(), 3 * 3 + 3 + 3 * 3, "{all_d:?}");
    let expect_d: Vec<String> = all_d.iter().map(|d| s(&d["id"])).collect();
    let (fwd, back) = walk_one_by_one(&app, &deliveries_path, &[]).await;
    assert_eq!(fwd, expect_d, "deliveries, forward");
    assert_eq!(back, expect_d, "deliveries, backward");

    // pending: the six notifications of the delayed runs, each once
    let (fwd, back) = walk_one_by_one(&app, &notifications, &[("status", "pending")]).await;
    let waiting_runs = [s(&r1["id"]), s(&r3["id"])];
    let expect_p: Vec<String> = all_n
        .iter()
        .filter(|n| waiting_runs.contains(&s(&n["flow_run_id"])))
        .map(|n| s(&n["id"]))
        .collect();
    assert_eq!(expect_p.len(), 6);
    assert_eq!(fwd, expect_p, "pending notifications, forward");
    assert_eq!(back, expect_p, "pending notifications, backward");
    let (fwd, _) = walk_one_by_one(&app, &deliveries_path, &[("status", "pending")]).await;
    assert_eq!(
        fwd.len(),
        12,
        "two chat deliveries per waiting notification"
    );

    // by recipient: one with an in-app entry per waiting run, one marker
    let u0 = users[0].clone();
    let expect_u: Vec<String> = all_n
        .iter()
        .filter(|n| n["recipient"]["external_id"] == json!(u0))
        .map(|n| s(&n["id"]))
        .collect();
    assert_eq!(expect_u.len(), 3);
    let (fwd, back) = walk_one_by_one(&app, &notifications, &[("recipient", u0.as_str())]).await;
    assert_eq!(fwd, expect_u, "by recipient, forward");
    assert_eq!(back, expect_u, "by recipient, backward");

    // by topic: both topic runs, merged in id order
    let expect_t: Vec<String> = all_n
        .iter()
        .filter(|n| n["topic"] == json!(topic))
        .map(|n| s(&n["id"]))
        .collect();
    assert_eq!(expect_t.len(), 6);
    let (fwd, back) = walk_one_by_one(&app, &notifications, &[("topic", topic.as_str())]).await;
    assert_eq!(fwd, expect_t, "by topic, forward");
    assert_eq!(back, expect_t, "by topic, backward");

    // once the waits are over nothing is pending
    for r in [&r1, &r3] {
        wait_run_processed(&app, &s(&r["id"]), 30).await;
    }
    let (fwd, back) = walk_one_by_one(&app, &notifications, &[("status", "pending")]).await;
    assert!(fwd.is_empty() && back.is_empty(), "{fwd:?} {back:?}");
}

/// Notifications settled when they are created (in-app only) are stored in
/// groups of up to 16; pending ones alone. Lists page through both kinds one
/// item at a time without gaps or repeats, in id order, and every grouped
/// notification and delivery reads like any other, also from a user's feed.
#[tokio::test]
async fn grouped_and_single_records_list_and_read_alike() {
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let chat = s(&create_webhook_channel(&app, &hook_url(&hook), None).await["id"]);
    let feed_flow = active_flow(
        &app,
        "grouped",
        json!([channel_step(&inapp, None, "hi {{ recipient.external_id }}")]),
    )
    .await;
    let chat_flow = active_flow(&app, "single", json!([channel_step(&chat, None, "hook")])).await;
    let topic = handle("groups");
    let users = topic_of_new_users(&app, &topic, "grp", 40).await;
    // 40 by topic (groups of 16, 16 and 8), 5 pending alone, 20 explicit (16 + 4)
    let r1 = run_flow(&app, &s(&feed_flow["id"]), json!({"topic": topic})).await;
    let r2 = run_flow(
        &app,
        &s(&chat_flow["id"]),
        json!({"recipients": recipients(&users[..5])}),
    )
    .await;
    let r3 = run_flow(
        &app,
        &s(&feed_flow["id"]),
        json!({"recipients": recipients(&users[..20])}),
    )
    .await;
    for r in [&r1, &r2, &r3] {
        wait_run_processed(&app, &s(&r["id"]), 30).await;
    }

    let notifications = format!("{A}/notifications");
    let all_n = list_all(&app, &notifications, &[]).await;
    assert_eq!(all_n.len(), 65, "{all_n:?}");
    let ids: Vec<String> = all_n.iter().map(|n| s(&n["id"])).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    sorted.reverse();
    sorted.dedup();
    assert_eq!(ids, sorted, "newest first, each once");
    let (fwd, back) = walk_one_by_one(&app, &notifications, &[]).await;
    assert_eq!(fwd, ids, "notifications, forward");
    assert_eq!(back, ids, "notifications, backward");
    let per_run = |r: &Value| all_n.iter().filter(|n| n["flow_run_id"] == r["id"]).count();
    assert_eq!((per_run(&r1), per_run(&r2), per_run(&r3)), (40, 5, 20));

    let deliveries = format!("{A}/deliveries");
    let all_d = list_all(&app, &deliveries, &[]).await;
    assert_eq!(all_d.len(), 65);
    let expect_d: Vec<String> = all_d.iter().map(|d| s(&d["id"])).collect();
    let (fwd, back) = walk_one_by_one(&app, &deliveries, &[]).await;
    assert_eq!(fwd, expect_d, "deliveries, forward");
    assert_eq!(back, expect_d, "deliveries, backward");
    let (fwd, _) = walk_one_by_one(
        &app,
        &notifications,
        &[("flow_run_id", s(&r1["id"]).as_str())],
    )
    .await;
    assert_eq!(fwd.len(), 40, "by run");

    // every notification and delivery reads back by id, as listed
    for n in &all_n {
        let id = s(&n["id"]);
        let got = app
            .admin(GET, &format!("{notifications}/{id}"))
            .go()
            .await
            .ok(200);
        assert_eq!(got["id"], n["id"]);
        assert_eq!(got["recipient"], n["recipient"], "{got}");
    }
    for d in &all_d {
        let id = s(&d["id"]);
        let got = app
            .admin(GET, &format!("{deliveries}/{id}"))
            .go()
            .await
            .ok(200);
        assert_eq!(got, *d, "delivery {id}");
    }
    // a grouped in-app delivery is a feed entry with its own content
    let feed = wait_feed(&app, &users[7], 2).await;
    let bodies: Vec<String> = feed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert!(bodies.iter().all(|b| b.contains("hi grp7")), "{bodies:?}");
}
