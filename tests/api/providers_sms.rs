//! docs/channels/sms.md, sms / `vonage` and `messagebird` against wiremock on
//! 127.0.0.1: the requests Herald sends (form or JSON fields, credentials), the
//! message id under `data.outcomes`, and how answers map to outcomes (Vonage's
//! `messages[0].status`, MessageBird's `errors[].code`, 401, 429/5xx retried,
//! refused numbers `invalid_address`), one recipient number per answer.

use std::collections::HashMap;

use serde_json::{json, Value};
use wiremock::matchers::{body_string_contains, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::engine_helpers::*;
use crate::helpers::*;
use crate::providers_support::*;

const VONAGE_SECRET: &str = "vonage-api-secret-xyz";
const BIRD_KEY: &str = "messagebird-live-key-xyz";

/// Mounts `answer` for the requests naming `needle` in their body, `times` times.
async fn answer_for(server: &MockServer, needle: &str, answer: ResponseTemplate, times: u64) {
    Mock::given(method("POST"))
        .and(body_string_contains(needle))
        .respond_with(answer)
        .up_to_n_times(times)
        .mount(server)
        .await;
}

/// Delivers the flow's message to a new user with `phone`; returns the settled delivery.
async fn send_to(app: &TestApp, flow: &Value, phone: &str) -> Value {
    let (ext, _) = app.create_user("sms", json!({"phone": phone})).await;
    deliver_once(app, flow, &ext, json!({"code": "123456"})).await
}

#[track_caller]
fn assert_failed(d: &Value, code: &str) {
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!(code), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
}

fn vonage_status(to: &str, status: &str) -> ResponseTemplate {
    let mut m = json!({"to": to, "status": status});
    if status == "0" {
        m["message-id"] = json!("0A0000000123ABCD1");
    } else {
        m["error-text"] = json!("some free text");
    }
    ResponseTemplate::new(200).set_body_json(json!({"message-count": "1", "messages": [m]}))
}

#[tokio::test]
async fn providers_vonage_posts_the_form_and_maps_statuses() {
    let vg = mock_server().await;
    for (to, status) in [
        ("447700900004", "4"),
        ("447700900029", "29"),
        ("447700900003", "3"),
    ] {
        answer_for(&vg, &format!("to={to}"), vonage_status(to, status), 10).await;
    }
    answer_for(
        &vg,
        "to=447700900011",
        vonage_status("447700900011", "1"),
        1,
    )
    .await;
    answer_for(&vg, "to=447700900500", ResponseTemplate::new(500), 1).await;
    answer_for(&vg, "to=447700900401", ResponseTemplate::new(401), 10).await;
    Mock::given(method("POST"))
        .and(path("/sms/json"))
        .respond_with(vonage_status("447700900001", "0"))
        .mount(&vg)
        .await;
    let app = TestApp::spawn();
    let ch = active_channel(
        &app,
        "sms",
        "vonage",
        json!({"api_key": "abcd1234", "api_secret": VONAGE_SECRET, "from": "Herald",
            "base_url": vg.uri(), "retry": quick_retry()}),
    )
    .await;
    assert_eq!(ch["config"]["api_secret"], json!("********"), "{ch}");
    let flow = template_flow(
        &app,
        &s(&ch["id"]),
        json!({"body": "Your code is {{ data.code }}"}),
    )
    .await;

    let d = send_to(&app, &flow, "+447700900001").await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
    let o = &d["data"]["outcomes"][0];
    assert_eq!(o["message_id"], json!("0A0000000123ABCD1"), "{d}");
    assert_eq!(o["identifier"], json!("+447700900001"), "{d}");
    let reqs = received(&vg).await;
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].url.path(), "/sms/json");
    let f: HashMap<String, String> = url::form_urlencoded::parse(&reqs[0].body)
        .into_owned()
        .collect();
    let get = |k: &str| f.get(k).map(String::as_str);
    assert_eq!(get("api_key"), Some("abcd1234"), "{f:?}");
    assert_eq!(get("api_secret"), Some(VONAGE_SECRET), "{f:?}");
    assert_eq!(get("from"), Some("Herald"), "{f:?}");
    assert_eq!(get("to"), Some("447700900001"), "E.164 without +: {f:?}");
    assert_eq!(get("text"), Some("Your code is 123456"), "{f:?}");
    assert_eq!(get("client-ref"), d["id"].as_str(), "{f:?}");

    // refusals answered with HTTP 200 and a status
    let d = send_to(&app, &flow, "+447700900004").await;
    assert_failed(&d, "provider_unauthorized");
    assert_eq!(
        d["error"]["message"],
        json!("provider answered 200 (status-4)"),
        "Vonage's error-text is not kept: {d}"
    );
    assert_failed(
        &send_to(&app, &flow, "+447700900029").await,
        "invalid_address",
    );
    assert_failed(
        &send_to(&app, &flow, "+447700900003").await,
        "provider_rejected",
    );
    assert_failed(
        &send_to(&app, &flow, "+447700900401").await,
        "provider_unauthorized",
    );
    // throttled (status 1), and HTTP 500: retried, then sent
    for phone in ["+447700900011", "+447700900500"] {
        let d = send_to(&app, &flow, phone).await;
        assert_eq!(d["status"], json!("sent"), "{phone}: {d}");
        assert_eq!(d["attempts"], json!(2), "{phone}: {d}");
    }
    // no phone: skipped; not E.164: failed, nothing sent
    let before = received(&vg).await.len();
    let (nophone, _) = app.create_user("nophone", json!({})).await;
    let d = deliver_once(&app, &flow, &nophone, json!({"code": "1"})).await;
    assert_eq!(d["status"], json!("skipped"), "{d}");
    assert_eq!(d["error"]["code"], json!("missing_address"), "{d}");
    assert_failed(
        &send_to(&app, &flow, "07700 900001").await,
        "invalid_address",
    );
    assert_eq!(received(&vg).await.len(), before);
    assert!(
        !app.output.text().contains(VONAGE_SECRET),
        "the secret is logged"
    );
}

fn bird_error(status: u16, code: i64) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(json!({"errors": [
        {"code": code, "description": "free text", "parameter": "recipient"}]}))
}

#[tokio::test]
async fn providers_messagebird_posts_json_and_maps_error_codes() {
    let mb = mock_server().await;
    answer_for(&mb, "31600000002", bird_error(401, 2), 10).await;
    answer_for(&mb, "31600000009", bird_error(422, 9), 10).await;
    answer_for(&mb, "31600000025", bird_error(422, 25), 10).await;
    answer_for(
        &mb,
        "31600000429",
        ResponseTemplate::new(429).insert_header("retry-after", "0"),
        1,
    )
    .await;
    answer_for(&mb, "31600000503", ResponseTemplate::new(503), 1).await;
    Mock::given(method("POST"))
        .and(path("/messages"))
        .respond_with(ResponseTemplate::new(201).set_body_json(json!({
            "id": "e8077d803532c0b5937c639b60216938", "direction": "mt",
            "recipients": {"totalCount": 1, "totalSentCount": 1}})))
        .mount(&mb)
        .await;
    let app = TestApp::spawn();
    let ch = active_channel(
        &app,
        "sms",
        "messagebird",
        json!({"access_key": BIRD_KEY, "originator": "+31612345678", "base_url": mb.uri(),
            "retry": quick_retry()}),
    )
    .await;
    assert_eq!(ch["config"]["access_key"], json!("********"), "{ch}");
    let flow = template_flow(
        &app,
        &s(&ch["id"]),
        json!({"body": "Your code is {{ data.code }}"}),
    )
    .await;

    let d = send_to(&app, &flow, "+31600000001").await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
    let o = &d["data"]["outcomes"][0];
    assert_eq!(
        o["message_id"],
        json!("e8077d803532c0b5937c639b60216938"),
        "{d}"
    );
    assert_eq!(o["identifier"], json!("+31600000001"), "{d}");
    let reqs = received(&mb).await;
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].url.path(), "/messages");
    assert_eq!(
        req_header(&reqs[0], "authorization"),
        Some(format!("AccessKey {BIRD_KEY}"))
    );
    let b = req_json(&reqs[0]);
    assert_eq!(b["originator"], json!("+31612345678"), "{b}");
    assert_eq!(b["recipients"], json!(["31600000001"]), "{b}");
    assert_eq!(b["body"], json!("Your code is 123456"), "{b}");
    assert_eq!(b["reference"], d["id"], "{b}");

    let d = send_to(&app, &flow, "+31600000002").await;
    assert_failed(&d, "provider_unauthorized");
    assert_eq!(
        d["error"]["message"],
        json!("provider answered 401 (2)"),
        "{d}"
    );
    assert_failed(
        &send_to(&app, &flow, "+31600000009").await,
        "invalid_address",
    );
    let d = send_to(&app, &flow, "+31600000025").await;
    assert_failed(&d, "provider_rejected");
    assert_eq!(
        d["error"]["message"],
        json!("provider answered 422 (25)"),
        "{d}"
    );
    for phone in ["+31600000429", "+31600000503"] {
        let d = send_to(&app, &flow, phone).await;
        assert_eq!(d["status"], json!("sent"), "{phone}: {d}");
        assert_eq!(d["attempts"], json!(2), "{phone}: {d}");
    }
    let before = received(&mb).await.len();
    assert_failed(
        &send_to(&app, &flow, "0031 600000001").await,
        "invalid_address",
    );
    assert_eq!(
        received(&mb).await.len(),
        before,
        "nothing sent for a bad number"
    );
    assert!(
        !app.output.text().contains(BIRD_KEY),
        "the access key is logged"
    );
}
