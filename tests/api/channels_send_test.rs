//! docs/API.md §7 "Send a test": `POST /admin/v1/channels/{id}/test` sends
//! one real message through the channel to one user, through the delivery
//! pipeline (stored, traced, listed with its delivery), whatever the user's
//! preferences say; the refusals (404, 409, 422) and the console roles.

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

const PW: &str = "correct horse battery staple";

/// Polls the notification until it is processed; returns it.
async fn wait_processed(app: &TestApp, nid: &str) -> Value {
    let d = Deadline::new(format!("test notification {nid} processed"), 30);
    loop {
        let r = app
            .admin(GET, &format!("{A}/notifications/{nid}"))
            .go()
            .await;
        let n = r.ok(200);
        if n["status"] == json!("processed") {
            return n;
        }
        d.tick(&r).await;
    }
}

/// A 202 of a test of `channel`: its fields; the notification id.
#[track_caller]
fn accepted(r: &Resp, channel: &str) -> String {
    let b = r.ok(202);
    assert_eq!(b["channel_id"], json!(channel), "{r}");
    assert_eq!(b["status"], json!("pending"), "{r}");
    assert!(is_uuid_v7(&b["flow_run_id"]), "{r}");
    assert!(is_timestamp(&b["created_at"]), "{r}");
    assert!(b["notification_id"].is_string(), "{r}");
    s(&b["notification_id"])
}

#[tokio::test]
async fn a_test_reaches_a_webhook_and_is_listed_with_its_delivery() {
    let app = TestApp::spawn();
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let c = create_webhook_channel(&app, &hook_url(&hook), None).await;
    let cid = s(&c["id"]);
    let (ext, _) = app.create_user("tested", json!({})).await;
    // turned off by the user: a test is the operator's, it still goes
    app.admin(PUT, &format!("{A}/users/{}/preferences", enc(&ext)))
        .json(&json!({"channel_types": {"chat": false}}))
        .go()
        .await
        .ok(200);

    let r = app.test_channel(&cid, &json!({"user_id": ext})).await;
    let nid = accepted(&r, &cid);
    let n = wait_processed(&app, &nid).await;
    assert_eq!(n["test_channel_id"], json!(cid), "{n}");
    assert_eq!(
        n["flow_id"],
        json!(cid),
        "the test's flow has the channel's id: {n}"
    );
    assert_eq!(n["recipient"]["external_id"], json!(ext), "{n}");
    let d = delivery_of(&n, "chat");
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["channel_id"], json!(cid), "{d}");
    assert_eq!(
        d["data"]["subject"],
        json!("Test message from Herald"),
        "{d}"
    );
    assert!(
        s(&d["data"]["body"]).contains("hook"),
        "names the channel: {d}"
    );

    // the local counterpart got it, under the delivery's id
    let got = requests_for(&hook, &s(&d["id"])).await;
    assert_eq!(got.len(), 1, "one request to the webhook");
    let body = req_json(&got[0]);
    assert_eq!(
        body["delivery"]["data"]["subject"],
        json!("Test message from Herald"),
        "{body}"
    );
    assert_eq!(body["recipient"]["external_id"], json!(ext), "{body}");

    // listed in Messages: by recipient, and by the channel's id as the flow
    for q in [("recipient", ext.as_str()), ("flow_id", cid.as_str())] {
        let items = list_all(&app, &format!("{A}/notifications"), &[q]).await;
        assert_eq!(items.len(), 1, "{q:?}: {items:?}");
        assert_eq!(items[0]["id"], json!(nid), "{q:?}");
        assert_eq!(items[0]["test_channel_id"], json!(cid), "{q:?}");
        assert_eq!(deliveries(&items[0]).len(), 1, "{q:?}: with its delivery");
    }
    // a flow's filter never finds it
    let inapp = in_app_channel(&app).await;
    let f = active_flow(&app, "real", json!([channel_step(&inapp, None, "Hi")])).await;
    for key in [s(&f["id"]), s(&f["handle"]), "_channel_test".to_string()] {
        let items = list_all(&app, &format!("{A}/notifications"), &[("flow_id", &key)]).await;
        assert!(items.is_empty(), "{key}: {items:?}");
    }

    // traced: the recipient's preference is ignored, the attempt recorded
    let t = app
        .admin(GET, &format!("{A}/notifications/{nid}/trace"))
        .go()
        .await
        .ok(200);
    let codes: Vec<&str> = t["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["code"].as_str())
        .collect();
    assert!(codes.contains(&"preference.ignored"), "{t}");
    assert!(!codes.contains(&"preference.skipped"), "{t}");
    assert!(codes.contains(&"delivery.final"), "{t}");
}

#[tokio::test]
async fn a_test_of_the_in_app_channel_takes_its_text_from_data() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let (ext, _) = app.create_user("feedtest", json!({})).await;
    let r = app
        .test_channel(
            &inapp,
            &json!({"user_id": ext, "data": {"subject": "Hello", "body": "Is it on?"}}),
        )
        .await;
    let nid = accepted(&r, &inapp);
    let n = wait_processed(&app, &nid).await;
    let d = delivery_of(&n, "in_app");
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["data"]["subject"], json!("Hello"), "{d}");
    assert_eq!(d["data"]["body"], json!("Is it on?"), "{d}");
    assert_eq!(
        n["data"],
        json!({"subject": "Hello", "body": "Is it on?"}),
        "{n}"
    );
    let feed = wait_feed(&app, &ext, 1).await;
    assert_eq!(
        feed["items"][0]["data"]["body"],
        json!("Is it on?"),
        "{feed}"
    );
}

#[tokio::test]
async fn unknown_channels_users_and_bad_bodies_are_refused() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let (ext, _) = app.create_user("known", json!({})).await;

    // an unknown channel: 404, a malformed id: 400
    let r = app
        .test_channel(&new_uuid(), &json!({"user_id": ext}))
        .await;
    assert_error(&r, 404, "not_found");
    let r = app
        .test_channel("not-a-uuid", &json!({"user_id": ext}))
        .await;
    assert_invalid_uuid(&r, "channel_id");

    // the body: every problem at its field
    let r = app.test_channel(&inapp, &json!({})).await;
    assert_validation(&r, &[("user_id", "required")]);
    let r = app
        .test_channel(&inapp, &json!({"user_id": 7, "data": [1]}))
        .await;
    assert_validation(&r, &[("user_id", "format"), ("data", "format")]);
    let r = app.test_channel(&inapp, &json!({"user_id": ""})).await;
    assert_validation(&r, &[("user_id", "length")]);
    // a user nobody has: 422 at user_id, and no user is made
    let r = app
        .test_channel(&inapp, &json!({"user_id": "nobody-here"}))
        .await;
    assert_validation(&r, &[("user_id", "inclusion")]);
    let r = app.admin(GET, &format!("{A}/users/nobody-here")).go().await;
    assert_error(&r, 404, "not_found");

    // a channel that cannot send: 409, as activating a flow through it is
    let hook = mock_server().await;
    let c = create_webhook_channel(&app, &hook_url(&hook), None).await;
    let cid = s(&c["id"]);
    app.admin(POST, &format!("{A}/channels/{cid}/revoke"))
        .go()
        .await
        .ok(200);
    let r = app.test_channel(&cid, &json!({"user_id": ext})).await;
    let d = assert_conflict(&r, "provider_revoked");
    assert_eq!(d["current_status"], json!("revoked"), "{r}");
    let r = app
        .admin(POST, &format!("{A}/channels"))
        .json(&json!({"type": "email", "provider": "smtp", "name": "Half"}))
        .go()
        .await;
    let half = s(&r.ok(201)["id"]);
    let r = app.test_channel(&half, &json!({"user_id": ext})).await;
    assert_conflict(&r, "provider_not_configured");

    // nothing was sent
    let items = list_all(&app, &format!("{A}/notifications"), &[]).await;
    assert!(items.is_empty(), "{items:?}");
}

#[tokio::test]
async fn a_viewer_member_is_refused_and_an_editor_sends() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let (ext, _) = app.create_user("member", json!({})).await;
    let viewer = app.console_member("vi@example.com", "viewer", PW).await;
    let editor = app.console_member("ed@example.com", "editor", PW).await;
    let path = format!("{A}/channels/{inapp}/test");
    let r = app
        .admin_as_member(&viewer, Some(&viewer.csrf), POST, &path)
        .json(&json!({"user_id": ext}))
        .go()
        .await;
    assert_error(&r, 403, "forbidden");
    let r = app
        .admin_as_member(&editor, Some(&editor.csrf), POST, &path)
        .json(&json!({"user_id": ext}))
        .go()
        .await;
    let nid = accepted(&r, &inapp);
    wait_processed(&app, &nid).await;
    let items = list_all(&app, &format!("{A}/notifications"), &[]).await;
    assert_eq!(items.len(), 1, "only the editor's test: {items:?}");
}
