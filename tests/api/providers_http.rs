//! docs/API.md §9 and §7, sms / `twilio` and chat / `slack_webhook` against wiremock
//! on 127.0.0.1: the requests Herald sends (form fields, basic auth, JSON), and
//! how answers map to outcomes: 5xx retried until sent, 400 failed at once,
//! connection refused retried, 401 `provider_unauthorized`, addresses checked.

use std::collections::HashMap;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use crate::engine_helpers::*;
use crate::helpers::*;
use crate::providers_support::*;

const SID: &str = "AC0123456789abcdef0123456789abcdef";
const TOKEN: &str = "twilio-auth-token-xyz";

fn twilio_config(base_url: &str) -> Value {
    json!({"account_sid": SID, "auth_token": TOKEN, "from": "+15005550006",
        "base_url": base_url, "retry": quick_retry()})
}

fn messages_path() -> String {
    format!("/2010-04-01/Accounts/{SID}/Messages.json")
}

fn twilio_created() -> ResponseTemplate {
    ResponseTemplate::new(201).set_body_json(json!({
        "sid": "SM0123456789abcdef0123456789abcdef", "status": "queued"}))
}

fn form(req: &Request) -> HashMap<String, String> {
    url::form_urlencoded::parse(&req.body)
        .into_owned()
        .collect()
}

/// Mounts `statuses` on POST (each answered once, in order), then 201.
async fn twilio_sequence(server: &MockServer, statuses: &[u16]) {
    for st in statuses {
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(*st).set_body_json(json!({"code": 20500, "message": "oops"})),
            )
            .up_to_n_times(1)
            .mount(server)
            .await;
    }
    Mock::given(method("POST"))
        .respond_with(twilio_created())
        .mount(server)
        .await;
}

async fn sms_flow(app: &TestApp, base_url: &str) -> (Value, Value) {
    let ch = active_channel(app, "sms", "twilio", twilio_config(base_url)).await;
    let flow = template_flow(
        app,
        &s(&ch["id"]),
        json!({"body": "Your code is {{ data.code }}"}),
    )
    .await;
    (ch, flow)
}

#[tokio::test]
async fn providers_twilio_posts_the_form_with_basic_auth() {
    let tw = mock_server().await;
    Mock::given(method("POST"))
        .and(path(messages_path()))
        .respond_with(twilio_created())
        .mount(&tw)
        .await;
    let app = TestApp::spawn();
    let (ch, flow) = sms_flow(&app, &tw.uri()).await;
    assert_eq!(ch["config"]["auth_token"], json!("********"), "{ch}");
    let (ext, _) = app
        .create_user("sms", json!({"phone": "+14155550100"}))
        .await;
    let d = deliver_once(&app, &flow, &ext, json!({"code": "123456"})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
    let outcome = &d["data"]["outcomes"][0];
    assert_eq!(
        outcome["message_id"],
        json!("SM0123456789abcdef0123456789abcdef"),
        "{d}"
    );

    let reqs = received(&tw).await;
    assert_eq!(reqs.len(), 1);
    let q = &reqs[0];
    assert_eq!(q.url.path(), messages_path());
    let want = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{SID}:{TOKEN}"))
    );
    assert_eq!(req_header(q, "authorization"), Some(want));
    assert!(
        req_header(q, "content-type")
            .unwrap_or_default()
            .starts_with("application/x-www-form-urlencoded"),
        "{:?}",
        q.headers
    );
    let f = form(q);
    assert_eq!(
        f.get("To").map(String::as_str),
        Some("+14155550100"),
        "{f:?}"
    );
    assert_eq!(
        f.get("From").map(String::as_str),
        Some("+15005550006"),
        "{f:?}"
    );
    assert_eq!(
        f.get("Body").map(String::as_str),
        Some("Your code is 123456"),
        "{f:?}"
    );
    assert_eq!(f.len(), 3, "To, From, Body: {f:?}");
    assert!(!app.output.text().contains(TOKEN), "auth token logged");
}

#[tokio::test]
async fn providers_twilio_addresses_are_checked() {
    let tw = mock_server().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({
            "code": 21211, "message": "The 'To' number is not a valid phone number.",
            "status": 400})))
        .mount(&tw)
        .await;
    let app = TestApp::spawn();
    let (_, flow) = sms_flow(&app, &tw.uri()).await;
    // no phone: skipped
    let (nophone, _) = app.create_user("nophone", json!({})).await;
    let d = deliver_once(&app, &flow, &nophone, json!({"code": "1"})).await;
    assert_eq!(d["status"], json!("skipped"), "{d}");
    assert_eq!(d["error"]["code"], json!("missing_address"), "{d}");
    // not E.164: failed invalid_address, nothing sent
    let (bad, _) = app
        .create_user("badphone", json!({"phone": "0415 555 0100"}))
        .await;
    let d = deliver_once(&app, &flow, &bad, json!({"code": "1"})).await;
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("invalid_address"), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
    assert!(
        received(&tw).await.is_empty(),
        "nothing sent for a bad number"
    );
    // Twilio refuses the number (21211): invalid_address too
    let (ext, _) = app
        .create_user("refused", json!({"phone": "+19995550100"}))
        .await;
    let d = deliver_once(&app, &flow, &ext, json!({"code": "1"})).await;
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("invalid_address"), "{d}");
    assert_eq!(received(&tw).await.len(), 1);
}

#[tokio::test]
async fn providers_retry_policy_500_400_refused_401() {
    let t500 = mock_server().await;
    twilio_sequence(&t500, &[500, 500]).await;
    let t400 = mock_server().await;
    twilio_sequence(&t400, &[400]).await;
    let t401 = mock_server().await;
    twilio_sequence(&t401, &[401]).await;
    let app = TestApp::spawn();
    let (ext, _) = app
        .create_user("retry", json!({"phone": "+14155550101"}))
        .await;
    let (_, f500) = sms_flow(&app, &t500.uri()).await;
    let (_, f400) = sms_flow(&app, &t400.uri()).await;
    let (_, f401) = sms_flow(&app, &t401.uri()).await;
    let refused = closed_port_url();
    let refused_base = refused.trim_end_matches("/hook");
    let (_, fref) = sms_flow(&app, refused_base).await;

    let (_, d500) = run_single(&app, &f500, &ext, json!({"code": "5"})).await;
    let (_, d400) = run_single(&app, &f400, &ext, json!({"code": "4"})).await;
    let (_, d401) = run_single(&app, &f401, &ext, json!({"code": "1"})).await;
    let (_, dref) = run_single(&app, &fref, &ext, json!({"code": "0"})).await;

    // 500, 500, 201: sent after 3 attempts, one request each
    let d = wait_delivery_final(&app, &d500, 30).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["attempts"], json!(3), "{d}");
    assert_eq!(d["error"], Value::Null, "{d}");
    assert_eq!(received(&t500).await.len(), 3);
    // 400: failed after 1
    let d = wait_delivery_final(&app, &d400, 30).await;
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("provider_rejected"), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
    // 401: provider_unauthorized after 1
    let d = wait_delivery_final(&app, &d401, 30).await;
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("provider_unauthorized"), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
    // connection refused: retried up to max_attempts
    let d = wait_delivery_final(&app, &dref, 30).await;
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("provider_unavailable"), "{d}");
    assert_eq!(d["attempts"], json!(3), "{d}");
    // no retry after a permanent failure
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(received(&t400).await.len(), 1);
    assert_eq!(received(&t401).await.len(), 1);
}

#[tokio::test]
async fn providers_slack_webhook_posts_text_and_blocks() {
    let slack = mock_server().await;
    Mock::given(method("POST"))
        .and(path("/services/T000/B000/XXXX"))
        .respond_with(ResponseTemplate::new(200).set_body_string("ok"))
        .mount(&slack)
        .await;
    let gone = mock_server().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(404).set_body_string("channel_not_found"))
        .mount(&gone)
        .await;
    let app = TestApp::spawn();
    let url = format!("{}/services/T000/B000/XXXX", slack.uri());
    let ch = active_channel(
        &app,
        "chat",
        "slack_webhook",
        json!({"url": url, "retry": quick_retry()}),
    )
    .await;
    assert_eq!(
        ch["config"]["url"],
        json!("********"),
        "the webhook URL is a secret: {ch}"
    );
    let flow = template_flow(
        &app,
        &s(&ch["id"]),
        json!({"subject": "Deploy {{ data.v }}", "body": "*{{ data.v }}* is live",
            "url": "https://example.com/deploys/{{ data.v }}"}),
    )
    .await;
    let (ext, _) = app.create_user("slack", json!({})).await;
    let d = deliver_once(&app, &flow, &ext, json!({"v": "1.2.3"})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    let reqs = received(&slack).await;
    assert_eq!(reqs.len(), 1);
    let body = req_json(&reqs[0]);
    assert_eq!(body["text"], json!("*1.2.3* is live"), "{body}");
    let blocks = body["blocks"].as_array().expect("blocks");
    assert_eq!(blocks[0]["type"], json!("header"), "{body}");
    assert_eq!(blocks[0]["text"]["text"], json!("Deploy 1.2.3"), "{body}");
    assert!(
        body.to_string()
            .contains("https://example.com/deploys/1.2.3"),
        "{body}"
    );

    // a webhook Slack no longer knows: 404 -> failed provider_rejected at once
    let r = app
        .admin(PUT, &format!("{A}/channels/{}", s(&ch["id"])))
        .json(&json!({"config": {"url": format!("{}/services/T/B/gone", gone.uri())}}))
        .go()
        .await;
    r.ok(200);
    let d = deliver_once(&app, &flow, &ext, json!({"v": "2"})).await;
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("provider_rejected"), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
    assert!(
        !d["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("/services/"),
        "the secret URL is not in the error: {d}"
    );
}
