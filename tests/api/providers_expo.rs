//! docs/channels/mobile_push.md, mobile_push / `expo` against a local
//! counterpart of Expo's push API: one request holding a message per Expo
//! push token, the tickets' ids under `data.outcomes`, `DeviceNotRegistered`
//! removing the subscription, 401 unauthorized, 5xx retried, other ticket
//! errors failed per device.

use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::engine_helpers::*;
use crate::helpers::*;
use crate::providers_support::*;

const PUSH_PATH: &str = "/--/api/v2/push/send";
const ACCESS_TOKEN: &str = "expo-access-token-secret";

/// Answers like Expo: one ticket per message, in order; a token naming `gone`
/// is not registered, one naming `big` too big, the others get `tkt-<token>`.
struct Tickets;

impl Respond for Tickets {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let msgs: Vec<Value> = serde_json::from_slice(&req.body).expect("a JSON array of messages");
        let data: Vec<Value> = msgs
            .iter()
            .map(|m| {
                let to = m["to"].as_str().unwrap_or_default();
                if to.contains("gone") {
                    json!({"status": "error", "message": "\"x\" is not a registered push token",
                        "details": {"error": "DeviceNotRegistered"}})
                } else if to.contains("big") {
                    json!({"status": "error", "message": "too big",
                        "details": {"error": "MessageTooBig"}})
                } else {
                    json!({"status": "ok", "id": format!("tkt-{to}")})
                }
            })
            .collect();
        ResponseTemplate::new(200).set_body_json(json!({"data": data}))
    }
}

fn token(name: &str) -> String {
    format!("ExponentPushToken[{name}]")
}

async fn expo_flow(app: &TestApp, server: &MockServer, access_token: bool) -> (String, Value) {
    let mut cfg = json!({"base_url": server.uri(), "retry": quick_retry()});
    if access_token {
        cfg["access_token"] = json!(ACCESS_TOKEN);
    }
    let ch = active_channel(app, "mobile_push", "expo", cfg).await;
    if access_token {
        assert_eq!(ch["config"]["access_token"], json!("********"), "{ch}");
    }
    let cid = s(&ch["id"]);
    let flow = template_flow(
        app,
        &cid,
        json!({"subject": "Order {{ data.order }}", "body": "Shipped, {{ recipient.first_name }}",
            "url": "app://orders/{{ data.order }}"}),
    )
    .await;
    (cid, flow)
}

/// A user with one subscription per token on channel `cid`.
async fn user_with(app: &TestApp, cid: &str, tokens: &[String]) -> String {
    let (ext, _) = app.create_user("expo", json!({"first_name": "Ada"})).await;
    for t in tokens {
        subscribe(app, &ext, cid, json!({"identifier": t, "platform": "ios"}))
            .await
            .ok(201);
    }
    ext
}

#[tokio::test]
async fn providers_expo_sends_one_message_per_token_and_drops_unregistered_ones() {
    let ex = mock_server().await;
    Mock::given(method("POST"))
        .and(path(PUSH_PATH))
        .respond_with(Tickets)
        .mount(&ex)
        .await;
    let app = TestApp::spawn();
    let (cid, flow) = expo_flow(&app, &ex, true).await;
    let ext = user_with(&app, &cid, &[token("aaa"), token("gone")]).await;

    let d = deliver_once(&app, &flow, &ext, json!({"order": 7})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
    let outcomes = d["data"]["outcomes"].as_array().expect("outcomes");
    assert_eq!(outcomes.len(), 2, "{d}");
    let of = |t: &str| {
        outcomes
            .iter()
            .find(|o| o["identifier"] == json!(t))
            .unwrap_or_else(|| panic!("no outcome for {t}: {d}"))
            .clone()
    };
    assert_eq!(of(&token("aaa"))["status"], json!("sent"), "{d}");
    assert_eq!(
        of(&token("aaa"))["message_id"],
        json!(format!("tkt-{}", token("aaa"))),
        "{d}"
    );
    assert_eq!(of(&token("gone"))["status"], json!("expired"), "{d}");
    assert_eq!(subscription_ids(&app, &ext, &cid).await, vec![token("aaa")]);

    let reqs = received(&ex).await;
    assert_eq!(reqs.len(), 1, "one request for both tokens");
    assert_eq!(
        req_header(&reqs[0], "authorization"),
        Some(format!("Bearer {ACCESS_TOKEN}"))
    );
    let msgs = req_json(&reqs[0]);
    let msgs = msgs.as_array().expect("an array of messages");
    assert_eq!(msgs.len(), 2);
    let mut tos: Vec<&str> = msgs.iter().map(|m| m["to"].as_str().unwrap()).collect();
    tos.sort();
    assert_eq!(tos, vec![token("aaa"), token("gone")]);
    for m in msgs {
        assert_eq!(m["title"], json!("Order 7"), "{m}");
        assert_eq!(m["body"], json!("Shipped, Ada"), "{m}");
        assert_eq!(m["data"]["delivery_id"], d["id"], "{m}");
        assert_eq!(m["data"]["url"], json!("app://orders/7"), "{m}");
    }

    // every token gone: failed subscription_expired, the subscription removed
    let ext2 = user_with(&app, &cid, &[token("gone2")]).await;
    let d = deliver_once(&app, &flow, &ext2, json!({"order": 8})).await;
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("subscription_expired"), "{d}");
    assert!(subscription_ids(&app, &ext2, &cid).await.is_empty());
    // another ticket error: failed provider_rejected, the subscription kept
    let ext3 = user_with(&app, &cid, &[token("big")]).await;
    let d = deliver_once(&app, &flow, &ext3, json!({"order": 9})).await;
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("provider_rejected"), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
    assert_eq!(
        subscription_ids(&app, &ext3, &cid).await,
        vec![token("big")]
    );
    // no device: skipped; a token that is not Expo's: failed, nothing sent
    let before = received(&ex).await.len();
    let ext4 = user_with(&app, &cid, &[]).await;
    let d = deliver_once(&app, &flow, &ext4, json!({"order": 10})).await;
    assert_eq!(d["status"], json!("skipped"), "{d}");
    assert_eq!(d["error"]["code"], json!("missing_address"), "{d}");
    let ext5 = user_with(&app, &cid, &["an-fcm-token".to_string()]).await;
    let d = deliver_once(&app, &flow, &ext5, json!({"order": 11})).await;
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("invalid_address"), "{d}");
    assert_eq!(received(&ex).await.len(), before);
    assert!(
        !app.output.text().contains(ACCESS_TOKEN),
        "the access token is logged"
    );
}

#[tokio::test]
async fn providers_expo_401_is_unauthorized_and_5xx_is_retried() {
    let unauth = mock_server().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({"errors": [
            {"code": "UNAUTHORIZED", "message": "bad access token"}]})))
        .mount(&unauth)
        .await;
    let flaky = mock_server().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503))
        .up_to_n_times(1)
        .mount(&flaky)
        .await;
    Mock::given(method("POST"))
        .and(path(PUSH_PATH))
        .respond_with(Tickets)
        .mount(&flaky)
        .await;
    let app = TestApp::spawn();
    let (c1, f1) = expo_flow(&app, &unauth, true).await;
    let (c2, f2) = expo_flow(&app, &flaky, false).await;
    let e1 = user_with(&app, &c1, &[token("u1")]).await;
    let e2 = user_with(&app, &c2, &[token("u2")]).await;

    let d = deliver_once(&app, &f1, &e1, json!({"order": 1})).await;
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("provider_unauthorized"), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
    assert_eq!(received(&unauth).await.len(), 1);

    let d = deliver_once(&app, &f2, &e2, json!({"order": 2})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["attempts"], json!(2), "{d}");
    assert_eq!(
        d["data"]["outcomes"][0]["message_id"],
        json!(format!("tkt-{}", token("u2"))),
        "{d}"
    );
    let reqs = received(&flaky).await;
    assert_eq!(reqs.len(), 2);
    assert_eq!(
        req_header(&reqs[1], "authorization"),
        None,
        "no access token configured: no authorization header"
    );
}
