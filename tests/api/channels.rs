//! docs/API.md §7 "Channels and providers": CRUD, statuses
//! (unconfigured / active / revoked), write-only secrets, provider/type rules,
//! the built-in in_app channel and deletion while an active flow uses a channel.

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

fn chan(id: &str) -> String {
    format!("{A}/channels/{id}")
}

#[track_caller]
fn assert_channel_shape(c: &Value) {
    for k in [
        "id",
        "type",
        "name",
        "provider",
        "config",
        "status",
        "created_at",
        "updated_at",
    ] {
        assert!(c.get(k).is_some(), "channel lacks {k}: {c}");
    }
    assert!(is_uuid_v7(&c["id"]), "id must be a UUID v7: {c}");
    assert!(is_timestamp(&c["created_at"]), "created_at: {c}");
    assert!(is_timestamp(&c["updated_at"]), "updated_at: {c}");
    assert!(c["config"].is_object(), "config must be an object: {c}");
}

#[tokio::test]
async fn builtin_in_app_channel_is_listed_active_and_protected() {
    let app = TestApp::spawn();
    let r = app.admin(GET, &format!("{A}/channels")).go().await;
    let body = r.page();
    let items = body["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "a new project has exactly one channel: {r}");
    let c = &items[0];
    assert_channel_shape(c);
    assert_eq!(c["type"], json!("in_app"), "{r}");
    assert_eq!(c["provider"], json!("in_app"), "{r}");
    assert_eq!(c["status"], json!("active"), "{r}");
    let id = s(&c["id"]);

    let r = app.admin(GET, &chan(&id)).go().await;
    assert_eq!(&r.ok(200), c, "GET by id returns the listed channel: {r}");

    // cannot be deleted or revoked
    let r = app.admin(DELETE, &chan(&id)).go().await;
    assert_conflict(&r, "invalid_transition");
    let r = app.admin(POST, &format!("{}/revoke", chan(&id))).go().await;
    assert_conflict(&r, "invalid_transition");

    // its type and provider cannot change either
    let r = app
        .admin(PUT, &chan(&id))
        .json(&json!({"type": "chat"}))
        .go()
        .await;
    assert_validation(&r, &[("type", "exclusion")]);
    let r = app
        .admin(PUT, &chan(&id))
        .json(&json!({"provider": "webhook"}))
        .go()
        .await;
    assert_validation(&r, &[("provider", "exclusion")]);

    // still there and active
    let r = app.admin(GET, &chan(&id)).go().await;
    let c2 = r.ok(200);
    assert_eq!(c2["status"], json!("active"), "{r}");
    assert_eq!(c2["type"], json!("in_app"), "{r}");
    let r = app.admin(GET, &format!("{A}/channels")).go().await;
    assert_eq!(r.page()["items"].as_array().unwrap().len(), 1, "{r}");
}

#[tokio::test]
async fn webhook_channel_lifecycle_and_secrets() {
    let app = TestApp::spawn();
    let (secret, _key) = webhook_secret();
    let secret_b64 = secret.trim_start_matches("whsec_").to_string();

    // no config: unconfigured
    let r = app
        .admin(POST, &format!("{A}/channels"))
        .json(&json!({"type": "chat", "provider": "webhook", "name": "hook"}))
        .go()
        .await;
    let c = r.ok(201);
    assert_channel_shape(&c);
    assert_eq!(c["type"], json!("chat"), "{r}");
    assert_eq!(c["provider"], json!("webhook"), "{r}");
    assert_eq!(c["name"], json!("hook"), "{r}");
    assert_eq!(c["status"], json!("unconfigured"), "{r}");
    let id = s(&c["id"]);

    let r = app.admin(GET, &chan(&id)).go().await;
    assert_eq!(r.ok(200), c, "GET returns what POST returned: {r}");

    // completing the config makes it active
    let r = app
        .admin(PUT, &chan(&id))
        .json(&json!({"config": {"url": "http://127.0.0.1:9/hook"}}))
        .go()
        .await;
    let c = r.ok(200);
    assert_eq!(c["status"], json!("active"), "{r}");
    assert_eq!(c["config"]["url"], json!("http://127.0.0.1:9/hook"), "{r}");
    assert_eq!(c["name"], json!("hook"), "a PUT is partial: {r}");
    assert!(
        parse_ts(&c["updated_at"]) >= parse_ts(&c["created_at"]),
        "updated_at: {r}"
    );

    // a secret merges key by key and reads back masked everywhere
    let r = app
        .admin(PUT, &chan(&id))
        .json(&json!({"config": {"secret": secret, "timeout_ms": 5000}}))
        .go()
        .await;
    let c = r.ok(200);
    assert_eq!(c["config"]["secret"], json!("********"), "{r}");
    assert_eq!(
        c["config"]["url"],
        json!("http://127.0.0.1:9/hook"),
        "merge keeps url: {r}"
    );
    assert_eq!(c["config"]["timeout_ms"], json!(5000), "{r}");
    assert!(
        !r.text.contains(&secret_b64),
        "secret leaked in PUT response: {r}"
    );
    let r = app.admin(GET, &chan(&id)).go().await;
    assert_eq!(r.ok(200)["config"]["secret"], json!("********"), "{r}");
    assert!(!r.text.contains(&secret_b64), "secret leaked in GET: {r}");
    let r = app.admin(GET, &format!("{A}/channels")).go().await;
    let list = r.page();
    assert!(!r.text.contains(&secret_b64), "secret leaked in list: {r}");
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{r}");
    assert_eq!(
        items[0]["id"],
        json!(id),
        "newest first: the new channel precedes the built-in one: {r}"
    );
    assert_eq!(items[1]["type"], json!("in_app"), "{r}");

    // sending the mask back keeps the stored secret
    let r = app
        .admin(PUT, &chan(&id))
        .json(&json!({"name": "renamed", "config": {"secret": "********"}}))
        .go()
        .await;
    let c = r.ok(200);
    assert_eq!(c["name"], json!("renamed"), "{r}");
    assert_eq!(c["config"]["secret"], json!("********"), "{r}");
    assert_eq!(c["status"], json!("active"), "{r}");

    // a malformed secret is refused and changes nothing
    let r = app
        .admin(PUT, &chan(&id))
        .json(&json!({"config": {"secret": "not-a-standard-webhooks-secret"}}))
        .go()
        .await;
    assert_validation(&r, &[("config.secret", "format")]);
    let r = app
        .admin(PUT, &chan(&id))
        .json(&json!({"config": {"url": "ftp://example.com/x"}}))
        .go()
        .await;
    assert_validation(&r, &[("config.url", "format")]);
    let r = app.admin(GET, &chan(&id)).go().await;
    let c = r.ok(200);
    assert_eq!(c["config"]["url"], json!("http://127.0.0.1:9/hook"), "{r}");
    assert_eq!(c["config"]["secret"], json!("********"), "{r}");

    // type and provider cannot change
    let r = app
        .admin(PUT, &chan(&id))
        .json(&json!({"type": "email"}))
        .go()
        .await;
    assert_validation(&r, &[("type", "exclusion")]);
    let r = app
        .admin(PUT, &chan(&id))
        .json(&json!({"provider": "slack_webhook"}))
        .go()
        .await;
    assert_validation(&r, &[("provider", "exclusion")]);

    // revoke; a name change does not undo it; a new config does
    let r = app.admin(POST, &format!("{}/revoke", chan(&id))).go().await;
    assert_eq!(r.ok(200)["status"], json!("revoked"), "{r}");
    let r = app.admin(GET, &chan(&id)).go().await;
    assert_eq!(r.ok(200)["status"], json!("revoked"), "{r}");
    let r = app
        .admin(PUT, &chan(&id))
        .json(&json!({"name": "still revoked"}))
        .go()
        .await;
    let c = r.ok(200);
    assert_eq!(c["status"], json!("revoked"), "{r}");
    assert_eq!(c["name"], json!("still revoked"), "{r}");
    let r = app
        .admin(PUT, &chan(&id))
        .json(&json!({"config": {"timeout_ms": 3000}}))
        .go()
        .await;
    let c = r.ok(200);
    assert_eq!(c["status"], json!("active"), "a new config un-revokes: {r}");
    assert_eq!(c["config"]["timeout_ms"], json!(3000), "{r}");

    // null removes a key; removing a required one makes it unconfigured
    let r = app
        .admin(PUT, &chan(&id))
        .json(&json!({"config": {"secret": null}}))
        .go()
        .await;
    let c = r.ok(200);
    assert!(
        c["config"].get("secret").is_none(),
        "null removes the secret: {r}"
    );
    assert_eq!(c["status"], json!("active"), "{r}");
    let r = app
        .admin(PUT, &chan(&id))
        .json(&json!({"config": {"url": null}}))
        .go()
        .await;
    let c = r.ok(200);
    assert!(c["config"].get("url").is_none(), "{r}");
    assert_eq!(c["status"], json!("unconfigured"), "{r}");

    // delete, then it is gone everywhere
    let r = app.admin(DELETE, &chan(&id)).go().await;
    assert_eq!(r.status, 204, "{r}");
    assert!(r.text.is_empty(), "204 has no body: {r}");
    for (m, p) in [
        (GET, chan(&id)),
        (PUT, chan(&id)),
        (DELETE, chan(&id)),
        (POST, format!("{}/revoke", chan(&id))),
    ] {
        let mut rb = app.admin(m, &p);
        if p == chan(&id) {
            rb = rb.json(&json!({"name": "x"}));
        }
        let r = rb.go().await;
        assert_not_found(&r, "channel", &id);
    }
    let r = app.admin(GET, &format!("{A}/channels")).go().await;
    assert_eq!(r.page()["items"].as_array().unwrap().len(), 1, "{r}");

    // unknown and malformed ids
    let unknown = new_uuid();
    let r = app.admin(GET, &chan(&unknown)).go().await;
    assert_not_found(&r, "channel", &unknown);
    let r = app
        .admin(POST, &format!("{}/revoke", chan(&unknown)))
        .go()
        .await;
    assert_not_found(&r, "channel", &unknown);
    for (m, p) in [
        (GET, chan("not-a-uuid")),
        (PUT, chan("not-a-uuid")),
        (DELETE, chan("not-a-uuid")),
        (POST, format!("{}/revoke", chan("not-a-uuid"))),
    ] {
        let r = app.admin(m, &p).json(&json!({"name": "x"})).go().await;
        assert_invalid_uuid(&r, "channel_id");
    }
}

#[tokio::test]
async fn provider_must_fit_type_and_config_is_validated() {
    let app = TestApp::spawn();
    let post = |body: Value| app.admin(POST, &format!("{A}/channels")).json(&body);

    // every provider of its type is accepted (no config: unconfigured)
    for (t, p) in [
        ("email", "smtp"),
        ("sms", "twilio"),
        ("chat", "slack_webhook"),
        ("chat", "webhook"),
        ("web_push", "web_push"),
        ("mobile_push", "fcm"),
        ("mobile_push", "apns"),
    ] {
        let r = post(json!({"type": t, "provider": p})).go().await;
        let c = r.ok(201);
        assert_eq!(c["type"], json!(t), "{r}");
        assert_eq!(c["provider"], json!(p), "{r}");
        assert_eq!(
            c["status"],
            json!("unconfigured"),
            "{p} without config: {r}"
        );
    }
    // a provider of another type, or no known provider: 422 inclusion on provider
    for (t, p) in [
        ("email", "webhook"),
        ("sms", "smtp"),
        ("chat", "twilio"),
        ("email", "slack_webhook"),
        ("web_push", "fcm"),
        ("mobile_push", "web_push"),
        ("chat", "apns"),
        ("chat", "carrier_pigeon"),
    ] {
        let r = post(json!({"type": t, "provider": p})).go().await;
        assert_validation(&r, &[("provider", "inclusion")]);
    }
    // unknown type, missing fields, wrong shapes
    let r = post(json!({"type": "pager", "provider": "webhook"}))
        .go()
        .await;
    assert_validation(&r, &[("type", "inclusion")]);
    let r = post(json!({})).go().await;
    assert_validation(&r, &[("type", "required"), ("provider", "required")]);
    let r = post(json!({"type": "chat", "provider": "webhook", "config": "x"}))
        .go()
        .await;
    assert_validation(&r, &[("config", "format")]);
    let r = post(json!({"type": "chat", "provider": "webhook",
        "config": {"url": "http://127.0.0.1:9/x", "secret": "whsec_%%%"}}))
    .go()
    .await;
    assert_validation(&r, &[("config.secret", "format")]);
    let r = post(json!({"type": "sms", "provider": "twilio",
        "config": {"account_sid": "AC1", "auth_token": "t", "from": "12345"}}))
    .go()
    .await;
    assert_validation(&r, &[("config.from", "format")]);
    let r = post(json!({"type": "email", "provider": "smtp",
        "config": {"host": "localhost", "port": 25, "from": "a@example.com", "tls": "bogus"}}))
    .go()
    .await;
    assert_validation(&r, &[("config.tls", "inclusion")]);
    let r = post(json!({"type": "chat", "provider": "webhook",
        "config": {"url": "http://127.0.0.1:9/x", "retry": {"max_attempts": 0}}}))
    .go()
    .await;
    assert_validation(&r, &[("config.retry.max_attempts", "number")]);

    // nothing of the refused requests was created: 7 + the built-in in_app
    let r = app
        .admin(GET, &format!("{A}/channels"))
        .query(&[("limit", "100")])
        .go()
        .await;
    assert_eq!(r.page()["items"].as_array().unwrap().len(), 8, "{r}");

    // smtp: partial, then completed by a PUT; the password is write-only
    let r = post(json!({"type": "email", "provider": "smtp", "name": "mail",
        "config": {"host": "localhost"}}))
    .go()
    .await;
    let c = r.ok(201);
    assert_eq!(c["status"], json!("unconfigured"), "{r}");
    let r = app
        .admin(PUT, &format!("{A}/channels/{}", s(&c["id"])))
        .json(&json!({"config": {"port": 2525, "from": "noreply@example.com", "password": "hunter2-pw"}}))
        .go()
        .await;
    let c = r.ok(200);
    assert_eq!(c["status"], json!("active"), "{r}");
    assert_eq!(c["config"]["host"], json!("localhost"), "{r}");
    assert_eq!(c["config"]["port"], json!(2525), "{r}");
    assert_eq!(c["config"]["password"], json!("********"), "{r}");
    assert!(!r.text.contains("hunter2-pw"), "password leaked: {r}");

    // a complete webhook config on create is active at once
    let r = post(json!({"type": "chat", "provider": "webhook",
        "config": {"url": "http://127.0.0.1:9/x", "secret": webhook_secret().0}}))
    .go()
    .await;
    let c = r.ok(201);
    assert_eq!(c["status"], json!("active"), "{r}");
    assert_eq!(c["config"]["secret"], json!("********"), "{r}");
}

#[tokio::test]
async fn a_channel_used_by_an_active_flow_cannot_be_deleted() {
    let app = TestApp::spawn();
    let c = create_webhook_channel(&app, "http://127.0.0.1:9/hook", None).await;
    let cid = s(&c["id"]);
    assert_eq!(c["status"], json!("active"));
    let flow = active_flow(&app, "uses-chat", json!([channel_step(&cid, None, "hi")])).await;
    let fid = s(&flow["id"]);

    let r = app.admin(DELETE, &chan(&cid)).go().await;
    assert_conflict(&r, "invalid_transition");
    let r = app.admin(GET, &chan(&cid)).go().await;
    r.ok(200);

    // a draft flow does not hold it
    let r = app
        .admin(POST, &format!("{A}/flows/{fid}/deactivate"))
        .go()
        .await;
    assert_eq!(r.ok(200)["status"], json!("draft"), "{r}");
    let r = app.admin(DELETE, &chan(&cid)).go().await;
    assert_eq!(r.status, 204, "{r}");
    let r = app.admin(GET, &chan(&cid)).go().await;
    assert_not_found(&r, "channel", &cid);

    // nor does an archived one
    let c2 = create_webhook_channel(&app, "http://127.0.0.1:9/other", None).await;
    let cid2 = s(&c2["id"]);
    let flow2 = active_flow(
        &app,
        "archived-user",
        json!([channel_step(&cid2, None, "x")]),
    )
    .await;
    let r = app.admin(DELETE, &chan(&cid2)).go().await;
    assert_conflict(&r, "invalid_transition");
    let r = app
        .admin(POST, &format!("{A}/flows/{}/archive", s(&flow2["id"])))
        .go()
        .await;
    assert_eq!(r.ok(200)["status"], json!("archived"), "{r}");
    let r = app.admin(DELETE, &chan(&cid2)).go().await;
    assert_eq!(r.status, 204, "{r}");
}
