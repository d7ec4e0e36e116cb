//! docs/API.md §7 provider configs and §11 channel subscriptions: each provider's
//! field checks (422 with dot-paths), complete configs `active`, secrets read
//! back masked, VAPID keys generated and kept; subscriptions registered, listed,
//! deleted, per user, only on usable push channels.

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;
use crate::providers_support::*;

async fn post_channel(app: &TestApp, ctype: &str, provider: &str, config: Value) -> Resp {
    app.admin(POST, &format!("{A}/channels"))
        .json(&json!({"type": ctype, "provider": provider, "config": config}))
        .go()
        .await
}

fn apns_pem() -> String {
    use p256::pkcs8::EncodePrivateKey;
    p256_pair()
        .0
        .to_pkcs8_pem(p256::pkcs8::LineEnding::LF)
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn providers_config_fields_are_validated() {
    let app = TestApp::spawn();
    type Case<'a> = (&'a str, &'a str, Value, Vec<(&'a str, &'a str)>);
    let cases: Vec<Case> = vec![
        (
            "email",
            "smtp",
            json!({"port": 0, "from": "nope", "tls": "ssl", "username": 5}),
            vec![
                ("config.port", "number"),
                ("config.from", "format"),
                ("config.tls", "inclusion"),
                ("config.username", "format"),
            ],
        ),
        (
            "sms",
            "twilio",
            json!({"account_sid": "AC/../x", "from": "555-0100", "base_url": "ftp://x"}),
            vec![
                ("config.account_sid", "format"),
                ("config.from", "format"),
                ("config.base_url", "format"),
            ],
        ),
        (
            "chat",
            "slack_webhook",
            json!({"url": "hooks.slack.com/x"}),
            vec![("config.url", "format")],
        ),
        (
            "web_push",
            "web_push",
            json!({"subject": "http://example.com"}),
            vec![("config.subject", "format")],
        ),
        (
            "web_push",
            "web_push",
            json!({"subject": "mailto:a@b.co", "vapid_private_key": "abc"}),
            vec![
                ("config.vapid_private_key", "format"),
                ("config.vapid_public_key", "required"),
            ],
        ),
        (
            "web_push",
            "web_push",
            json!({"subject": "mailto:a@b.co", "vapid_public_key": b64url(&p256_pair().1),
            "vapid_private_key": b64url(&p256_pair().0.to_bytes())}),
            vec![("config.vapid_public_key", "format")],
        ),
        (
            "mobile_push",
            "fcm",
            json!({"project_id": "p/1", "service_account": "{}", "token_url": "x"}),
            vec![
                ("config.project_id", "format"),
                ("config.service_account", "format"),
                ("config.token_url", "format"),
            ],
        ),
        (
            "mobile_push",
            "fcm",
            json!({"service_account": {"private_key": "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----"}}),
            vec![
                ("config.service_account.client_email", "required"),
                ("config.service_account.private_key", "format"),
            ],
        ),
        (
            "mobile_push",
            "fcm",
            json!({"service_account": {"client_email": "x", "private_key": 1}}),
            vec![
                ("config.service_account.client_email", "format"),
                ("config.service_account.private_key", "format"),
            ],
        ),
        (
            "mobile_push",
            "apns",
            json!({"private_key": "not a pem", "environment": "dev", "team_id": "T/1",
            "base_url": "nope"}),
            vec![
                ("config.private_key", "format"),
                ("config.environment", "inclusion"),
                ("config.team_id", "format"),
                ("config.base_url", "format"),
            ],
        ),
        // an RSA key is not an ES256 key
        (
            "mobile_push",
            "apns",
            json!({"private_key": key_a().private_pem}),
            vec![("config.private_key", "format")],
        ),
    ];
    for (t, p, cfg, want) in cases {
        let r = post_channel(&app, t, p, cfg.clone()).await;
        assert_validation(&r, &want);
        // nothing of the secrets comes back in the error
        for secret in ["BEGIN PRIVATE KEY", "not a pem"] {
            assert!(!r.text.contains(secret), "{p} {cfg}: {r}");
        }
    }
}

#[tokio::test]
async fn providers_complete_configs_are_active_and_secrets_masked() {
    let app = TestApp::spawn();
    let pem = apns_pem();
    let cases: Vec<(&str, &str, Value, Vec<&str>)> = vec![
        (
            "email",
            "smtp",
            json!({"host": "127.0.0.1", "port": 2525, "from": "a@herald.test",
            "tls": "none", "username": "u", "password": "pw-secret-1"}),
            vec!["password"],
        ),
        (
            "sms",
            "twilio",
            json!({"account_sid": "AC1", "auth_token": "tok-secret-2", "from": "+15005550006"}),
            vec!["auth_token"],
        ),
        (
            "chat",
            "slack_webhook",
            json!({"url": "https://hooks.slack.com/services/T/B/secret3"}),
            vec!["url"],
        ),
        (
            "web_push",
            "web_push",
            json!({"subject": "https://herald.test/contact"}),
            vec!["vapid_private_key"],
        ),
        (
            "mobile_push",
            "fcm",
            json!({"project_id": "demo", "service_account": {
            "client_email": "x@demo.iam.gserviceaccount.com", "private_key": key_a().private_pem}}),
            vec!["service_account"],
        ),
        (
            "mobile_push",
            "apns",
            json!({"team_id": "T1", "key_id": "K1", "private_key": pem, "topic": "com.x"}),
            vec!["private_key"],
        ),
    ];
    for (t, p, cfg, secrets) in cases {
        // each required field missing alone: unconfigured (partial configs are allowed)
        let required: Vec<String> = match p {
            "smtp" => vec!["host", "port", "from"],
            "twilio" => vec!["account_sid", "auth_token", "from"],
            "slack_webhook" => vec!["url"],
            "web_push" => vec!["subject"],
            "fcm" => vec!["project_id", "service_account"],
            _ => vec!["team_id", "key_id", "private_key", "topic"],
        }
        .into_iter()
        .map(String::from)
        .collect();
        for k in &required {
            let mut partial = cfg.clone();
            partial.as_object_mut().unwrap().remove(k);
            let c = post_channel(&app, t, p, partial).await.ok(201);
            assert_eq!(c["status"], json!("unconfigured"), "{p} without {k}: {c}");
        }
        let r = post_channel(&app, t, p, cfg.clone()).await;
        let c = r.ok(201);
        assert_eq!(c["status"], json!("active"), "{p}: {r}");
        for k in &secrets {
            assert_eq!(c["config"][k], json!("********"), "{p}.{k}: {r}");
        }
        for leak in ["pw-secret-1", "tok-secret-2", "secret3", "PRIVATE KEY"] {
            assert!(!r.text.contains(leak), "{p}: secret in the response: {r}");
        }
        // a PUT sending the mask keeps the secret, and the channel stays active
        let id = s(&c["id"]);
        let mut patch = serde_json::Map::new();
        for k in &secrets {
            patch.insert(k.to_string(), json!("********"));
        }
        let r = app
            .admin(PUT, &format!("{A}/channels/{id}"))
            .json(&json!({"config": patch}))
            .go()
            .await;
        assert_eq!(r.ok(200)["status"], json!("active"), "{p}: {r}");
        // a config removing a required field: unconfigured again
        let mut clear = serde_json::Map::new();
        clear.insert(required[0].clone(), Value::Null);
        let r = app
            .admin(PUT, &format!("{A}/channels/{id}"))
            .json(&json!({ "config": clear }))
            .go()
            .await;
        assert_eq!(r.ok(200)["status"], json!("unconfigured"), "{p}: {r}");
    }
}

#[tokio::test]
async fn providers_vapid_keys_are_generated_once_and_kept() {
    let app = TestApp::spawn();
    // no config at all: keys generated, channel unconfigured (no subject yet)
    let c = post_channel(&app, "web_push", "web_push", json!({}))
        .await
        .ok(201);
    assert_eq!(c["status"], json!("unconfigured"), "{c}");
    let id = s(&c["id"]);
    let public = s(&c["config"]["vapid_public_key"]);
    assert_eq!(b64url_dec(&public).len(), 65, "{c}");
    assert_eq!(c["config"]["vapid_private_key"], json!("********"), "{c}");
    // completing the config keeps the pair
    let r = app
        .admin(PUT, &format!("{A}/channels/{id}"))
        .json(&json!({"config": {"subject": "mailto:ops@herald.test"}}))
        .go()
        .await;
    let c2 = r.ok(200);
    assert_eq!(c2["status"], json!("active"), "{r}");
    assert_eq!(c2["config"]["vapid_public_key"], json!(public), "{r}");
    let r = app.admin(GET, &format!("{A}/channels/{id}")).go().await;
    assert_eq!(
        r.ok(200)["config"]["vapid_public_key"],
        json!(public),
        "{r}"
    );
    // users see the public key, and nothing secret
    let (ext, _) = app.create_user("vk", json!({})).await;
    let r = app
        .user(GET, &format!("{U}/channels/{id}"), &ext)
        .go()
        .await;
    let uc = r.ok(200);
    assert_eq!(uc["vapid_public_key"], json!(public), "{r}");
    assert!(uc.get("config").is_none(), "no config for users: {r}");
    // removing both keys rotates the pair
    let r = app
        .admin(PUT, &format!("{A}/channels/{id}"))
        .json(&json!({"config": {"vapid_public_key": null, "vapid_private_key": null}}))
        .go()
        .await;
    let c3 = r.ok(200);
    let rotated = s(&c3["config"]["vapid_public_key"]);
    assert_ne!(rotated, public, "new pair: {r}");
    assert_eq!(b64url_dec(&rotated).len(), 65);
    // a pair given by the operator is used as is
    let (sk, pk) = p256_pair();
    let c4 = post_channel(
        &app,
        "web_push",
        "web_push",
        json!({"subject": "mailto:ops@herald.test", "vapid_public_key": b64url(&pk),
            "vapid_private_key": b64url(&sk.to_bytes())}),
    )
    .await
    .ok(201);
    assert_eq!(c4["status"], json!("active"), "{c4}");
    assert_eq!(c4["config"]["vapid_public_key"], json!(b64url(&pk)), "{c4}");
}

#[tokio::test]
async fn providers_channel_subscriptions_user_api() {
    let app = TestApp::spawn();
    let wp = active_channel(
        &app,
        "web_push",
        "web_push",
        json!({"subject": "mailto:ops@herald.test"}),
    )
    .await;
    let wid = s(&wp["id"]);
    let (ext, _) = app.create_user("subs", json!({})).await;
    let (other, _) = app.create_user("other", json!({})).await;
    let path = format!("{U}/channels/{wid}/subscriptions");
    let endpoint = "https://push.example.com/send/abc123";
    let keys = Subscriber::new().keys();

    // register: 201, then 200 with the same subscription
    let r = subscribe(
        &app,
        &ext,
        &wid,
        json!({"identifier": endpoint, "keys": keys, "platform": "firefox"}),
    )
    .await;
    let sub = r.ok(201);
    assert_eq!(sub["identifier"], json!(endpoint), "{r}");
    assert_eq!(sub["channel_id"], json!(wid), "{r}");
    assert_eq!(sub["platform"], json!("firefox"), "{r}");
    assert!(
        is_uuid_v7(&sub["id"]) && is_timestamp(&sub["created_at"]),
        "{r}"
    );
    assert!(sub.get("keys").is_none(), "keys are not echoed: {r}");
    let r = subscribe(
        &app,
        &ext,
        &wid,
        json!({"identifier": endpoint, "keys": keys}),
    )
    .await;
    assert_eq!(
        r.ok(200)["id"],
        sub["id"],
        "re-registration returns the existing one: {r}"
    );
    // web push needs the keys and a URL
    let r = subscribe(
        &app,
        &ext,
        &wid,
        json!({"identifier": "https://push.example.com/x"}),
    )
    .await;
    assert_validation(&r, &[("keys", "required")]);
    let r = subscribe(
        &app,
        &ext,
        &wid,
        json!({"identifier": "not a url", "keys": {"p256dh": 1}}),
    )
    .await;
    assert_validation(
        &r,
        &[
            ("identifier", "format"),
            ("keys.p256dh", "required"),
            ("keys.auth", "required"),
        ],
    );
    let r = subscribe(&app, &ext, &wid, json!({})).await;
    assert_validation(&r, &[("identifier", "required")]);

    // list: mine only
    assert_eq!(
        subscription_ids(&app, &ext, &wid).await,
        vec![endpoint.to_string()]
    );
    assert!(
        subscription_ids(&app, &other, &wid).await.is_empty(),
        "another user's are invisible"
    );
    // another user cannot delete mine
    let r = app
        .user(DELETE, &path, &other)
        .json(&json!({"identifier": endpoint}))
        .go()
        .await;
    let d = assert_error(&r, 404, "not_found");
    assert_eq!(d["resource"], json!("subscription"), "{r}");
    // delete: 204, then 404 subscription
    let r = app
        .user(DELETE, &path, &ext)
        .json(&json!({"identifier": endpoint}))
        .go()
        .await;
    assert_eq!(r.status, 204, "{r}");
    assert!(subscription_ids(&app, &ext, &wid).await.is_empty());
    let r = app
        .user(DELETE, &path, &ext)
        .json(&json!({"identifier": endpoint}))
        .go()
        .await;
    let d = assert_error(&r, 404, "not_found");
    assert_eq!(d["resource"], json!("subscription"), "{r}");

    // mobile push: a device token, no keys needed
    let fcm = active_channel(
        &app,
        "mobile_push",
        "fcm",
        json!({"project_id": "demo", "service_account": {
            "client_email": "x@demo.iam.gserviceaccount.com", "private_key": key_a().private_pem}}),
    )
    .await;
    let fid = s(&fcm["id"]);
    let r = subscribe(
        &app,
        &ext,
        &fid,
        json!({"identifier": "fcm-token-1", "platform": "android"}),
    )
    .await;
    assert_eq!(r.ok(201)["platform"], json!("android"), "{r}");
    subscribe(
        &app,
        &ext,
        &fid,
        json!({"identifier": "fcm-token-2", "platform": "ios"}),
    )
    .await
    .ok(201);
    let mut ids = subscription_ids(&app, &ext, &fid).await;
    ids.sort();
    assert_eq!(ids, vec!["fcm-token-1", "fcm-token-2"]);
    assert!(
        subscription_ids(&app, &ext, &wid).await.is_empty(),
        "per channel"
    );

    // not a push channel: 422 channel_id inclusion
    let inapp = in_app_channel(&app).await;
    let r = subscribe(&app, &ext, &inapp, json!({"identifier": "x"})).await;
    assert_validation(&r, &[("channel_id", "inclusion")]);
    let hook = create_webhook_channel(&app, "http://127.0.0.1:9/hook", None).await;
    let r = app
        .user(
            GET,
            &format!("{U}/channels/{}/subscriptions", s(&hook["id"])),
            &ext,
        )
        .go()
        .await;
    assert_validation(&r, &[("channel_id", "inclusion")]);
    // unconfigured: 409 provider_not_configured
    let unconf = create_channel(&app, "mobile_push", "apns", json!({"team_id": "T1"})).await;
    assert_eq!(unconf["status"], json!("unconfigured"));
    let r = subscribe(&app, &ext, &s(&unconf["id"]), json!({"identifier": "abc"})).await;
    assert_conflict(&r, "provider_not_configured");
    // revoked: 409 provider_revoked
    let r = app
        .admin(POST, &format!("{A}/channels/{fid}/revoke"))
        .go()
        .await;
    r.ok(200);
    let r = subscribe(&app, &ext, &fid, json!({"identifier": "fcm-token-3"})).await;
    assert_conflict(&r, "provider_revoked");
    // unknown channel: 404 channel; not a UUID: 400
    let unknown = new_uuid();
    let r = subscribe(&app, &ext, &unknown, json!({"identifier": "x"})).await;
    assert_not_found(&r, "channel", &unknown);
    let r = app
        .user(GET, &format!("{U}/channels/{unknown}/subscriptions"), &ext)
        .go()
        .await;
    assert_not_found(&r, "channel", &unknown);
}
