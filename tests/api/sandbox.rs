//! Sandbox mode (docs/API.md §7): a project's `sandbox`, or one channel's,
//! sends nothing to a provider (a local SMTP sink and a local webhook
//! receiver see no request) while its deliveries are rendered, stored and
//! `sent` with `sandbox: true`; in-app entries still arrive; turning it off
//! sends again.

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;
use crate::providers_support::*;

/// An SMTP email channel to `sink`, a chat webhook to `hook` and the in-app
/// channel, and an active flow sending through all three.
async fn setup(app: &TestApp, sink: &SmtpSink, hook: &wiremock::MockServer) -> (String, String) {
    let email = active_channel(app, "email", "smtp", smtp_config(sink)).await;
    let chat = create_webhook_channel(app, &hook_url(hook), None).await;
    let inapp = in_app_channel(app).await;
    let flow = active_flow(
        app,
        "sbx",
        json!([
            channel_step(
                &s(&email["id"]),
                Some("Hi {{ data.n }}"),
                "Body {{ data.n }}"
            ),
            channel_step(&s(&chat["id"]), None, "Chat {{ data.n }}"),
            channel_step(&inapp, None, "Feed {{ data.n }}"),
        ]),
    )
    .await;
    (s(&flow["id"]), s(&chat["id"]))
}

/// Runs the flow for `ext` and waits for its email and chat deliveries to
/// be final: (email, chat, in-app) as the API shows them.
async fn run_final(app: &TestApp, flow: &str, ext: &str, n: u32) -> (Value, Value, Value) {
    let (_, note) = run_one(app, flow, json!({"recipients": [ext], "data": {"n": n}})).await;
    let email = wait_delivery_final(app, &s(&delivery_of(&note, "email")["id"]), 30).await;
    let chat = wait_delivery_final(app, &s(&delivery_of(&note, "chat")["id"]), 30).await;
    let inapp = wait_delivery_final(app, &s(&delivery_of(&note, "in_app")["id"]), 30).await;
    (email, chat, inapp)
}

#[tokio::test]
async fn a_sandboxed_project_sends_nothing_and_stores_everything() {
    let sink = SmtpSink::start(SinkScript::default()).await;
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let app = TestApp::spawn();
    let (flow, _) = setup(&app, &sink, &hook).await;
    let (ext, _) = app
        .create_user("sbx", json!({"email": "ada@example.com"}))
        .await;
    let p = app.put_project(&json!({"sandbox": true})).await.ok(200);
    assert_eq!(p["sandbox"], json!(true), "{p}");

    let (email, chat, inapp) = run_final(&app, &flow, &ext, 1).await;
    for d in [&email, &chat] {
        assert_eq!(d["status"], json!("sent"), "{d}");
        assert_eq!(d["sandbox"], json!(true), "{d}");
        assert_eq!(d["attempts"], json!(1), "{d}");
    }
    assert_eq!(email["data"]["subject"], json!("Hi 1"), "rendered: {email}");
    assert_eq!(chat["data"]["body"], json!("Chat 1"), "rendered: {chat}");
    // in-app is not a provider: the entry arrives, not sandboxed
    assert_eq!(inapp["status"], json!("sent"), "{inapp}");
    assert_eq!(inapp["sandbox"], json!(false), "{inapp}");
    let feed = wait_feed(&app, &ext, 1).await;
    assert_eq!(feed["items"][0]["data"]["body"], json!("Feed 1"), "{feed}");
    // nothing reached the providers
    assert!(sink.mails().is_empty(), "{:?}", sink.mails());
    assert!(received(&hook).await.is_empty());
    // the trace says which attempt went nowhere
    let t = app
        .admin(
            GET,
            &format!("{A}/notifications/{}/trace", s(&email["notification_id"])),
        )
        .go()
        .await
        .ok(200);
    let attempts: Vec<&Value> = t["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["code"] == json!("attempt"))
        .collect();
    assert!(
        attempts
            .iter()
            .any(|e| e["args"]["provider"] == json!("sandbox")),
        "{t}"
    );

    // off again: the next run reaches both
    let p = app.put_project(&json!({"sandbox": false})).await.ok(200);
    assert_eq!(p["sandbox"], json!(false), "{p}");
    let (email, chat, _) = run_final(&app, &flow, &ext, 2).await;
    for d in [&email, &chat] {
        assert_eq!(d["status"], json!("sent"), "{d}");
        assert_eq!(d["sandbox"], json!(false), "{d}");
    }
    assert_eq!(sink.mails().len(), 1, "{:?}", sink.mails());
    assert_eq!(received(&hook).await.len(), 1);
}

#[tokio::test]
async fn a_sandboxed_channel_sends_nothing_while_the_others_send() {
    let sink = SmtpSink::start(SinkScript::default()).await;
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let app = TestApp::spawn();
    let (flow, chat) = setup(&app, &sink, &hook).await;
    let (ext, _) = app
        .create_user("sbxc", json!({"email": "ada@example.com"}))
        .await;
    let c = app
        .admin(PUT, &format!("{A}/channels/{chat}"))
        .json(&json!({"sandbox": true}))
        .go()
        .await
        .ok(200);
    assert_eq!(c["sandbox"], json!(true), "{c}");
    let (email, chat_d, _) = run_final(&app, &flow, &ext, 1).await;
    assert_eq!(chat_d["sandbox"], json!(true), "{chat_d}");
    assert_eq!(chat_d["status"], json!("sent"), "{chat_d}");
    assert_eq!(email["sandbox"], json!(false), "{email}");
    assert_eq!(email["status"], json!("sent"), "{email}");
    assert!(received(&hook).await.is_empty());
    assert_eq!(sink.mails().len(), 1);

    // created sandboxed; a wrong type is the usual 422
    let r = app
        .admin(POST, &format!("{A}/channels"))
        .json(&json!({"type": "chat", "provider": "webhook", "name": "x",
            "config": {"url": hook_url(&hook)}, "sandbox": true}))
        .go()
        .await;
    assert_eq!(r.ok(201)["sandbox"], json!(true), "{r}");
    for (method, path) in [
        (POST, format!("{A}/channels")),
        (PUT, format!("{A}/channels/{chat}")),
    ] {
        let r = app
            .admin(method, &path)
            .json(&json!({"type": "chat", "provider": "webhook", "sandbox": "yes"}))
            .go()
            .await;
        let d = assert_error(&r, 422, "validation_failed");
        assert!(
            d["fields"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["field"] == json!("sandbox") && f["reason"] == json!("format")),
            "{r}"
        );
    }
    let r = app
        .admin(PUT, "/admin/v1/project")
        .json(&json!({"sandbox": 1}))
        .go()
        .await;
    assert_error(&r, 422, "validation_failed");

    // out of the sandbox: it sends
    app.admin(PUT, &format!("{A}/channels/{chat}"))
        .json(&json!({"sandbox": false}))
        .go()
        .await
        .ok(200);
    let (_, chat_d, _) = run_final(&app, &flow, &ext, 2).await;
    assert_eq!(chat_d["sandbox"], json!(false), "{chat_d}");
    assert_eq!(received(&hook).await.len(), 1);
}
