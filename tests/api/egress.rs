//! The egress guard. Destinations on loopback,
//! private, link-local… addresses are refused when configured (422 `exclusion`
//! on the field) and when sent to (delivery `failed`, `destination_not_allowed`,
//! nothing reaches the listener); `--egress-allow` opens a range; redirects are
//! not followed; a provider's answer body is never readable through the API.

use serde_json::{json, Value};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::engine_helpers::*;
use crate::helpers::*;
use crate::providers_support::*;

/// Every literal form of a refused destination the issue reproduced.
const FORMS: &[&str] = &[
    "127.0.0.1",
    "127.1",
    "2130706433",
    "0x7f000001",
    "localhost",
    "0.0.0.0",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "169.254.169.254",
    "metadata.google.internal",
];

/// A server with the guard on (as in production).
fn guarded(args: &[&str]) -> TestApp {
    TestApp::spawn_with(args, &[GUARD_ON])
}

/// `(channel type, provider, field path, config holding HOST at that field)`.
fn destination_fields(host: &str) -> Vec<(&'static str, &'static str, &'static str, Value)> {
    let url = format!("http://{host}:8080/x?token=secret");
    vec![
        ("chat", "webhook", "config.url", json!({"url": url})),
        ("chat", "slack_webhook", "config.url", json!({"url": url})),
        ("sms", "twilio", "config.base_url", json!({"base_url": url})),
        ("chat", "slack", "config.base_url", json!({"base_url": url})),
        ("chat", "discord", "config.url", json!({"url": url})),
        ("chat", "teams", "config.url", json!({"url": url})),
        ("sms", "vonage", "config.base_url", json!({"base_url": url})),
        (
            "sms",
            "messagebird",
            "config.base_url",
            json!({"base_url": url}),
        ),
        (
            "mobile_push",
            "expo",
            "config.base_url",
            json!({"base_url": url}),
        ),
        (
            "mobile_push",
            "fcm",
            "config.base_url",
            json!({"base_url": url}),
        ),
        (
            "mobile_push",
            "fcm",
            "config.token_url",
            json!({"token_url": url}),
        ),
        (
            "mobile_push",
            "fcm",
            "config.service_account.token_uri",
            json!({"service_account": {"token_uri": url}}),
        ),
        (
            "mobile_push",
            "apns",
            "config.base_url",
            json!({"base_url": url}),
        ),
        ("email", "smtp", "config.host", json!({"host": host})),
    ]
}

/// The entries a channel can be created with on their own (a service account
/// needs more than its token_uri).
fn passable(
    fields: Vec<(&'static str, &'static str, &'static str, Value)>,
) -> Vec<(&'static str, &'static str, &'static str, Value)> {
    fields
        .into_iter()
        .filter(|f| f.2 != "config.service_account.token_uri")
        .collect()
}

async fn post_channel(app: &TestApp, ctype: &str, provider: &str, config: Value) -> Resp {
    app.admin(POST, &format!("{A}/channels"))
        .json(&json!({"type": ctype, "provider": provider, "config": config}))
        .go()
        .await
}

#[tokio::test]
async fn egress_literal_destinations_are_refused_at_configuration() {
    let app = guarded(&[]);
    for form in FORMS {
        for (ctype, provider, field, config) in destination_fields(form) {
            let r = post_channel(&app, ctype, provider, config.clone()).await;
            let d = assert_validation(&r, &[(field, "exclusion")]);
            let text = d.to_string();
            assert!(
                !text.contains("token=secret") && !text.contains("/x"),
                "no path or query in the message: {r}"
            );
        }
    }
    // public names and addresses pass
    for (ctype, provider, _, config) in passable(destination_fields("hooks.example.com"))
        .into_iter()
        .chain(passable(destination_fields("93.184.216.34")))
    {
        let r = post_channel(&app, ctype, provider, config.clone()).await;
        r.ok(201);
    }
    // an update that points an existing channel at a refused address: 422 too
    let ch = create_webhook_channel(&app, "https://hooks.example.com/a", None).await;
    let r = app
        .admin(PUT, &format!("{A}/channels/{}", s(&ch["id"])))
        .json(&json!({"config": {"url": "http://[::ffff:169.254.169.254]/latest"}}))
        .go()
        .await;
    assert_validation(&r, &[("config.url", "exclusion")]);
}

#[tokio::test]
async fn egress_allowed_range_and_guard_off_pass_at_configuration() {
    // a range of the operator's: in it passes, the rest stays refused
    let app = guarded(&["--egress-allow", "127.0.0.0/8,::1"]);
    for form in ["127.0.0.1", "127.1", "0x7f000001", "localhost", "[::1]"] {
        let (ctype, provider, _, config) = destination_fields(form).remove(0);
        post_channel(&app, ctype, provider, config).await.ok(201);
    }
    for form in ["169.254.169.254", "metadata.google.internal", "10.0.0.1"] {
        let (ctype, provider, field, config) = destination_fields(form).remove(0);
        let r = post_channel(&app, ctype, provider, config).await;
        assert_validation(&r, &[(field, "exclusion")]);
    }
    // the guard off (what the other suites run with): everything passes
    let open = TestApp::spawn();
    for form in FORMS {
        for (ctype, provider, _, config) in passable(destination_fields(form)) {
            post_channel(&open, ctype, provider, config).await.ok(201);
        }
    }
}

#[tokio::test]
async fn egress_web_push_endpoints_are_refused_at_subscription() {
    let app = guarded(&[]);
    let ch = active_channel(
        &app,
        "web_push",
        "web_push",
        json!({"subject": "mailto:ops@example.com"}),
    )
    .await;
    let cid = s(&ch["id"]);
    let (ext, _) = app.create_user("wp", json!({})).await;
    let keys = Subscriber::new().keys();
    for form in FORMS {
        let r = subscribe(
            &app,
            &ext,
            &cid,
            json!({"identifier": format!("https://{form}/push/abc"), "keys": keys}),
        )
        .await;
        assert_validation(&r, &[("identifier", "exclusion")]);
    }
    assert!(subscription_ids(&app, &ext, &cid).await.is_empty());
    let r = subscribe(
        &app,
        &ext,
        &cid,
        json!({"identifier": "https://push.example.com/push/abc", "keys": keys}),
    )
    .await;
    r.ok(201);
}

/// Starts a server on `dir` with `env` and `args`.
fn start_on(dir: &std::path::Path, keys: &Keys, args: &[&str], env: &[(&str, &str)]) -> TestApp {
    TestApp::start(ServeOptions {
        data_dir: dir,
        bootstrap: Some(keys),
        args,
        env,
        default_flags: true,
    })
    .unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn egress_send_time_refuses_then_an_allowed_range_reaches() {
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let sink = SmtpSink::start(SinkScript::default()).await;
    let tmp = tempfile::tempdir().unwrap();
    let keys = Keys::random();

    // configured while private destinations were allowed
    let mut app = start_on(tmp.path(), &keys, &[], &[]);
    let hook_ch = create_webhook_channel(&app, &hook_url(&hook), None).await;
    let mail_ch = active_channel(
        &app,
        "email",
        "smtp",
        json!({"host": "127.0.0.1", "port": sink.port, "tls": "none",
            "from": "Herald <noreply@herald.test>", "retry": quick_retry()}),
    )
    .await;
    let flow = active_flow(
        &app,
        "egress",
        json!([
            channel_step(&s(&hook_ch["id"]), Some("S"), "hello"),
            channel_step(&s(&mail_ch["id"]), Some("S"), "hello"),
        ]),
    )
    .await;
    let (ext, _) = app
        .create_user("eg", json!({"email": "eve@example.com"}))
        .await;
    app.stop();

    // the same data dir with the guard on, and another range open
    let mut app = start_on(
        tmp.path(),
        &keys,
        &["--egress-allow", "10.0.0.0/8"],
        &[GUARD_ON],
    );
    let body = json!({"recipients": [{"external_id": ext}]});
    let (_, n) = run_one(&app, &s(&flow["id"]), body.clone()).await;
    for ctype in ["chat", "email"] {
        let d = wait_delivery_final(&app, &s(&delivery_of(&n, ctype)["id"]), 30).await;
        assert_eq!(d["status"], json!("failed"), "{d}");
        assert_eq!(d["error"]["code"], json!("destination_not_allowed"), "{d}");
        assert_eq!(d["attempts"], json!(1), "refused once, never retried: {d}");
        let m = d["error"]["message"].as_str().unwrap_or_default();
        assert!(m.contains("127.0.0.1") && m.contains("loopback"), "{d}");
        assert!(!m.contains("/hook"), "no path in the message: {d}");
    }
    assert!(received(&hook).await.is_empty(), "the listener got nothing");
    assert!(sink.commands().is_empty(), "no SMTP session was opened");
    app.stop();

    // 127.0.0.1 allowed: the same listeners are reached
    let app = start_on(
        tmp.path(),
        &keys,
        &["--egress-allow", "127.0.0.1/32"],
        &[GUARD_ON],
    );
    let (_, n) = run_one(&app, &s(&flow["id"]), body).await;
    for ctype in ["chat", "email"] {
        let d = wait_delivery_final(&app, &s(&delivery_of(&n, ctype)["id"]), 30).await;
        assert_eq!(d["status"], json!("sent"), "{d}");
    }
    assert_eq!(received(&hook).await.len(), 1);
    assert_eq!(sink.mails().len(), 1);
}

/// A listener answering every POST with `status` and a `Location` to `to`.
async fn redirector(status: u16, to: &str) -> MockServer {
    let m = mock_server().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(status).insert_header("location", to))
        .mount(&m)
        .await;
    m
}

#[tokio::test]
async fn egress_redirects_are_not_followed() {
    let app = TestApp::spawn();
    let target = mock_server().await;
    mock_always(&target, 200).await;
    let (ext, _) = app.create_user("redir", json!({})).await;
    for status in [302u16, 307] {
        let from = redirector(status, &hook_url(&target)).await;
        let ch = create_webhook_channel(&app, &hook_url(&from), None).await;
        let flow = active_flow(
            &app,
            "redir",
            json!([channel_step(&s(&ch["id"]), None, "hi")]),
        )
        .await;
        let d = deliver_once(&app, &flow, &ext, json!({})).await;
        assert_eq!(d["status"], json!("failed"), "{d}");
        assert_eq!(d["error"]["code"], json!("provider_rejected"), "{d}");
        assert_eq!(
            d["error"]["message"],
            json!(format!("provider answered {status}")),
            "{d}"
        );
        assert_eq!(received(&from).await.len(), 1, "{status}");
        assert!(
            received(&target).await.is_empty(),
            "{status}: the redirect target got nothing"
        );
    }
}

#[tokio::test]
async fn egress_provider_answers_are_kept_as_status_and_code_only() {
    const LEAK: &str = "INTERNAL-SECRET-7f3a";
    let app = TestApp::spawn();
    let (ext, _) = app
        .create_user("ans", json!({"phone": "+14155550100"}))
        .await;
    let run = |ch: Value| {
        let app = &app;
        let ext = ext.clone();
        async move {
            let flow =
                active_flow(app, "ans", json!([channel_step(&s(&ch["id"]), None, "hi")])).await;
            deliver_once(app, &flow, &ext, json!({})).await
        }
    };
    let answering = |status: u16, body: ResponseTemplate| async move {
        let m = mock_server().await;
        Mock::given(method("POST"))
            .respond_with(body.set_body_string(format!("{LEAK} from {status}")))
            .mount(&m)
            .await;
        m
    };

    // webhook: 400 with text, status only
    let m = answering(400, ResponseTemplate::new(400)).await;
    let d = run(create_webhook_channel(&app, &hook_url(&m), None).await).await;
    assert_eq!(d["error"]["message"], json!("provider answered 400"), "{d}");

    // Twilio: its JSON `code`, not its message
    let tw = mock_server().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_json(
            json!({"code": 21612, "message": LEAK, "more_info": LEAK, "status": 400}),
        ))
        .mount(&tw)
        .await;
    let ch = active_channel(
        &app,
        "sms",
        "twilio",
        json!({"account_sid": "AC123", "auth_token": "tok", "from": "+15005550006",
            "base_url": tw.uri()}),
    )
    .await;
    let d = run(ch).await;
    assert_eq!(d["error"]["code"], json!("provider_rejected"), "{d}");
    assert_eq!(
        d["error"]["message"],
        json!("provider answered 400 (21612)"),
        "{d}"
    );

    // Slack: a plain-text error token is kept, free text is not
    let sl = mock_server().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(404).set_body_string("channel_not_found"))
        .mount(&sl)
        .await;
    let ch = active_channel(
        &app,
        "chat",
        "slack_webhook",
        json!({"url": format!("{}/services/T/B/C", sl.uri())}),
    )
    .await;
    let d = run(ch).await;
    assert_eq!(
        d["error"]["message"],
        json!("provider answered 404 (channel_not_found)"),
        "{d}"
    );
    let m = answering(403, ResponseTemplate::new(403)).await;
    let ch = active_channel(
        &app,
        "chat",
        "slack_webhook",
        json!({"url": format!("{}/services/T/B/C", m.uri())}),
    )
    .await;
    let d = run(ch).await;
    assert_eq!(d["error"]["code"], json!("provider_unauthorized"), "{d}");
    assert_eq!(d["error"]["message"], json!("provider answered 403"), "{d}");

    // a transport error in plain words, with the host and port only
    let url = closed_port_url();
    let port = url.split(':').nth(2).unwrap().split('/').next().unwrap();
    let ch =
        create_webhook_channel_with(&app, json!({"url": url, "retry": {"max_attempts": 1}})).await;
    let d = run(ch).await;
    assert_eq!(d["error"]["code"], json!("provider_unavailable"), "{d}");
    assert_eq!(
        d["error"]["message"],
        json!(format!(
            "connection refused by 127.0.0.1:{port} (after 1 attempts)"
        )),
        "{d}"
    );

    // nothing of any answer is readable anywhere in the deliveries
    let all = app
        .admin(GET, &format!("{A}/deliveries"))
        .query(&[("limit", "100")])
        .go()
        .await;
    assert!(!all.text.contains(LEAK), "{all}");
}
