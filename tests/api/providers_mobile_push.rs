//! docs/API.md §7, mobile_push / `fcm` and `apns` against local counterparts:
//! FCM's OAuth token exchange (JWT bearer grant, RS256 assertion verified) and
//! HTTP v1 send, the token cached across deliveries, `UNREGISTERED` removing a
//! token; APNs over HTTP/2 with `apns-id`/`apns-topic`/`apns-push-type` and an
//! ES256 provider token, `BadDeviceToken`/410 removing tokens.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::io::AsyncReadExt;
use wiremock::matchers::{body_partial_json, method, path, path_regex};
use wiremock::{Mock, ResponseTemplate};

use crate::engine_helpers::*;
use crate::helpers::*;
use crate::providers_support::*;

const PROJECT: &str = "herald-demo";
const CLIENT_EMAIL: &str = "herald@herald-demo.iam.gserviceaccount.com";

fn service_account() -> Value {
    json!({"type": "service_account", "project_id": PROJECT, "private_key_id": "kid-1",
        "private_key": key_a().private_pem, "client_email": CLIENT_EMAIL,
        "token_uri": "https://oauth2.googleapis.com/token"})
}

async fn mobile_flow(app: &TestApp, channel_id: &str) -> Value {
    template_flow(
        app,
        channel_id,
        json!({"subject": "Order {{ data.order }}", "body": "Shipped, {{ recipient.first_name }}",
            "url": "app://orders/{{ data.order }}"}),
    )
    .await
}

#[tokio::test]
async fn providers_fcm_exchanges_a_token_once_and_sends_per_device() {
    if single_node_only("each node exchanges and caches its own FCM access token") {
        return;
    }
    let g = mock_server().await;
    Mock::given(method("POST"))
        .and(path("/token"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"access_token": "ya29.test-token", "expires_in": 3599, "token_type": "Bearer"}),
        ))
        .mount(&g)
        .await;
    Mock::given(method("POST"))
        .and(path(format!("/v1/projects/{PROJECT}/messages:send")))
        .and(body_partial_json(json!({"message": {"token": "tok-gone"}})))
        .respond_with(ResponseTemplate::new(404).set_body_json(json!({"error": {
            "code": 404, "message": "Requested entity was not found.", "status": "NOT_FOUND",
            "details": [{"@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError",
                "errorCode": "UNREGISTERED"}]}})))
        .mount(&g)
        .await;
    Mock::given(method("POST"))
        .and(path(format!("/v1/projects/{PROJECT}/messages:send")))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"name": format!("projects/{PROJECT}/messages/0:1234")})),
        )
        .mount(&g)
        .await;

    let app = TestApp::spawn();
    let ch = active_channel(
        &app,
        "mobile_push",
        "fcm",
        json!({"project_id": PROJECT, "service_account": service_account(),
            "base_url": g.uri(), "token_url": format!("{}/token", g.uri()),
            "retry": quick_retry()}),
    )
    .await;
    assert_eq!(ch["config"]["service_account"], json!("********"), "{ch}");
    let cid = s(&ch["id"]);
    let flow = mobile_flow(&app, &cid).await;
    let (ext, _) = app.create_user("fcm", json!({"first_name": "Ada"})).await;
    subscribe(
        &app,
        &ext,
        &cid,
        json!({"identifier": "tok-a", "platform": "android"}),
    )
    .await
    .ok(201);

    // two deliveries, one after the other: one token exchange
    let d1 = deliver_once(&app, &flow, &ext, json!({"order": 7})).await;
    assert_eq!(d1["status"], json!("sent"), "{d1}");
    let d2 = deliver_once(&app, &flow, &ext, json!({"order": 8})).await;
    assert_eq!(d2["status"], json!("sent"), "{d2}");
    assert_eq!(
        d1["data"]["outcomes"][0]["message_id"],
        json!(format!("projects/{PROJECT}/messages/0:1234")),
        "{d1}"
    );

    let reqs = received(&g).await;
    let token_reqs: Vec<_> = reqs.iter().filter(|r| r.url.path() == "/token").collect();
    assert_eq!(
        token_reqs.len(),
        1,
        "the access token is cached across deliveries"
    );
    let form: HashMap<String, String> = url::form_urlencoded::parse(&token_reqs[0].body)
        .into_owned()
        .collect();
    assert_eq!(
        form.get("grant_type").map(String::as_str),
        Some("urn:ietf:params:oauth:grant-type:jwt-bearer")
    );
    let assertion = form.get("assertion").expect("assertion");
    let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
    v.set_audience(&[format!("{}/token", g.uri())]);
    v.set_issuer(&[CLIENT_EMAIL]);
    let data = jsonwebtoken::decode::<Value>(
        assertion,
        &jsonwebtoken::DecodingKey::from_rsa_pem(key_a().public_pem.as_bytes()).unwrap(),
        &v,
    )
    .expect("RS256 assertion signed with the service account's key");
    assert_eq!(data.header.kid.as_deref(), Some("kid-1"));
    assert_eq!(
        data.claims["scope"],
        json!("https://www.googleapis.com/auth/firebase.messaging")
    );
    let (iat, exp) = (
        data.claims["iat"].as_i64().unwrap(),
        data.claims["exp"].as_i64().unwrap(),
    );
    assert!(exp > iat && exp - iat <= 3600, "{}", data.claims);

    let sends: Vec<_> = reqs
        .iter()
        .filter(|r| r.url.path().ends_with("messages:send"))
        .collect();
    assert_eq!(sends.len(), 2);
    for (q, d) in sends.iter().zip([&d1, &d2]) {
        assert_eq!(
            req_header(q, "authorization").as_deref(),
            Some("Bearer ya29.test-token")
        );
        let b = req_json(q);
        assert_eq!(b["message"]["token"], json!("tok-a"), "{b}");
        assert_eq!(
            b["message"]["notification"]["title"], d["data"]["subject"],
            "{b}"
        );
        assert_eq!(
            b["message"]["notification"]["body"],
            json!("Shipped, Ada"),
            "{b}"
        );
        assert_eq!(b["message"]["data"]["delivery_id"], d["id"], "{b}");
    }

    // a second device whose token FCM no longer knows: outcome expired, token removed
    subscribe(
        &app,
        &ext,
        &cid,
        json!({"identifier": "tok-gone", "platform": "android"}),
    )
    .await
    .ok(201);
    let d3 = deliver_once(&app, &flow, &ext, json!({"order": 9})).await;
    assert_eq!(d3["status"], json!("sent"), "{d3}");
    let outcomes = d3["data"]["outcomes"].as_array().unwrap();
    assert_eq!(outcomes.len(), 2, "{d3}");
    assert!(
        outcomes
            .iter()
            .any(|o| o["identifier"] == json!("tok-gone") && o["status"] == json!("expired")),
        "{d3}"
    );
    assert_eq!(
        subscription_ids(&app, &ext, &cid).await,
        vec!["tok-a".to_string()]
    );
    assert_eq!(
        received(&g)
            .await
            .iter()
            .filter(|r| r.url.path() == "/token")
            .count(),
        1,
        "still one token exchange"
    );
}

#[tokio::test]
async fn providers_fcm_refused_credentials_are_unauthorized() {
    let g = mock_server().await;
    Mock::given(method("POST"))
        .and(path("/token"))
        .respond_with(ResponseTemplate::new(400).set_body_json(
            json!({"error": "invalid_grant", "error_description": "Invalid JWT Signature."}),
        ))
        .mount(&g)
        .await;
    let app = TestApp::spawn();
    let ch = active_channel(
        &app,
        "mobile_push",
        "fcm",
        json!({"project_id": PROJECT, "service_account": service_account(),
            "base_url": g.uri(), "token_url": format!("{}/token", g.uri())}),
    )
    .await;
    let cid = s(&ch["id"]);
    let flow = mobile_flow(&app, &cid).await;
    let (ext, _) = app.create_user("fcmbad", json!({})).await;
    // no device: skipped, and no token is fetched for nothing
    let d = deliver_once(&app, &flow, &ext, json!({"order": 1})).await;
    assert_eq!(d["status"], json!("skipped"), "{d}");
    assert_eq!(d["error"]["code"], json!("missing_address"), "{d}");
    assert!(received(&g).await.is_empty());
    subscribe(&app, &ext, &cid, json!({"identifier": "tok-x"}))
        .await
        .ok(201);
    let d = deliver_once(&app, &flow, &ext, json!({"order": 2})).await;
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("provider_unauthorized"), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
}

fn apns_key() -> (String, Vec<u8>) {
    use p256::pkcs8::EncodePrivateKey;
    let (sk, public) = p256_pair();
    let pem = sk
        .to_pkcs8_pem(p256::pkcs8::LineEnding::LF)
        .unwrap()
        .to_string();
    (pem, public)
}

#[tokio::test]
async fn providers_apns_http2_headers_and_provider_token() {
    if single_node_only("each node signs and caches its own APNs provider token") {
        return;
    }
    let apple = mock_server().await;
    Mock::given(method("POST"))
        .and(path("/3/device/badtoken"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({"reason": "BadDeviceToken"})))
        .mount(&apple)
        .await;
    Mock::given(method("POST"))
        .and(path("/3/device/unregistered"))
        .respond_with(
            ResponseTemplate::new(410)
                .set_body_json(json!({"reason": "Unregistered", "timestamp": 1700000000000u64})),
        )
        .mount(&apple)
        .await;
    Mock::given(method("POST"))
        .and(path_regex("^/3/device/[0-9a-f]+$"))
        .respond_with(ResponseTemplate::new(200).insert_header("apns-unique-id", "u-1"))
        .mount(&apple)
        .await;
    let (pem, public) = apns_key();
    let app = TestApp::spawn();
    let ch = active_channel(
        &app,
        "mobile_push",
        "apns",
        json!({"team_id": "TEAM123456", "key_id": "KEY7654321", "private_key": pem,
            "topic": "com.example.app", "environment": "sandbox", "base_url": apple.uri(),
            "retry": quick_retry()}),
    )
    .await;
    assert_eq!(ch["config"]["private_key"], json!("********"), "{ch}");
    let cid = s(&ch["id"]);
    let flow = mobile_flow(&app, &cid).await;
    let (ext, _) = app.create_user("apns", json!({"first_name": "Tim"})).await;
    let token = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90";
    subscribe(
        &app,
        &ext,
        &cid,
        json!({"identifier": token, "platform": "ios"}),
    )
    .await
    .ok(201);

    let d1 = deliver_once(&app, &flow, &ext, json!({"order": 1})).await;
    assert_eq!(d1["status"], json!("sent"), "{d1}");
    let d2 = deliver_once(&app, &flow, &ext, json!({"order": 2})).await;
    assert_eq!(d2["status"], json!("sent"), "{d2}");
    let reqs = received(&apple).await;
    assert_eq!(reqs.len(), 2);
    let mut jwts = vec![];
    for (q, d) in reqs.iter().zip([&d1, &d2]) {
        assert_eq!(q.url.path(), format!("/3/device/{token}"));
        assert_eq!(
            req_header(q, "apns-id"),
            Some(s(&d["id"])),
            "apns-id is the delivery id"
        );
        assert_eq!(
            req_header(q, "apns-topic").as_deref(),
            Some("com.example.app")
        );
        assert_eq!(req_header(q, "apns-push-type").as_deref(), Some("alert"));
        let auth = req_header(q, "authorization").expect("authorization");
        let jwt = auth
            .strip_prefix("bearer ")
            .unwrap_or_else(|| panic!("{auth}"));
        let (header, claims) = verify_es256(jwt, &public);
        assert_eq!(header["kid"], json!("KEY7654321"), "{header}");
        assert_eq!(claims["iss"], json!("TEAM123456"), "{claims}");
        assert!(
            (claims["iat"].as_i64().unwrap() - now_secs()).abs() < 120,
            "{claims}"
        );
        jwts.push(jwt.to_string());
        let b = req_json(q);
        assert_eq!(b["aps"]["alert"]["title"], d["data"]["subject"], "{b}");
        assert_eq!(b["aps"]["alert"]["body"], json!("Shipped, Tim"), "{b}");
        assert_eq!(b["delivery_id"], d["id"], "{b}");
    }
    assert_eq!(
        jwts[0], jwts[1],
        "the provider token is reused, not signed per request"
    );
    assert_eq!(
        d1["data"]["outcomes"][0]["message_id"],
        json!("u-1"),
        "{d1}"
    );

    // BadDeviceToken and 410 Unregistered: expired and removed
    subscribe(&app, &ext, &cid, json!({"identifier": "badtoken"}))
        .await
        .ok(201);
    subscribe(&app, &ext, &cid, json!({"identifier": "unregistered"}))
        .await
        .ok(201);
    let d3 = deliver_once(&app, &flow, &ext, json!({"order": 3})).await;
    assert_eq!(d3["status"], json!("sent"), "{d3}");
    let outcomes = d3["data"]["outcomes"].as_array().unwrap();
    assert_eq!(outcomes.len(), 3, "{d3}");
    for gone in ["badtoken", "unregistered"] {
        assert!(
            outcomes
                .iter()
                .any(|o| o["identifier"] == json!(gone) && o["status"] == json!("expired")),
            "{gone}: {d3}"
        );
    }
    assert_eq!(
        subscription_ids(&app, &ext, &cid).await,
        vec![token.to_string()]
    );

    // only gone tokens left: failed subscription_expired
    let (ext2, _) = app.create_user("apns2", json!({})).await;
    subscribe(&app, &ext2, &cid, json!({"identifier": "unregistered"}))
        .await
        .ok(201);
    let d = deliver_once(&app, &flow, &ext2, json!({"order": 4})).await;
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("subscription_expired"), "{d}");
    assert!(subscription_ids(&app, &ext2, &cid).await.is_empty());
}

/// The APNs client speaks HTTP/2 from the first byte to a plain-http base URL
/// (h2c prior knowledge): a raw listener sees the HTTP/2 connection preface.
#[tokio::test]
async fn providers_apns_speaks_http2_prior_knowledge() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
    let seen2 = seen.clone();
    let task = tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let mut buf = vec![0u8; 24];
            let n =
                tokio::time::timeout(std::time::Duration::from_secs(5), sock.read_exact(&mut buf))
                    .await;
            if matches!(n, Ok(Ok(_))) {
                seen2.lock().unwrap().push(buf);
            }
            // then hang up: the attempt fails transiently
        }
    });
    let (pem, _) = apns_key();
    let app = TestApp::spawn();
    let ch = active_channel(
        &app,
        "mobile_push",
        "apns",
        json!({"team_id": "TEAM123456", "key_id": "KEY7654321", "private_key": pem,
            "topic": "com.example.app", "base_url": format!("http://127.0.0.1:{port}"),
            "retry": {"max_attempts": 2, "base_seconds": 0.05, "max_seconds": 0.1}}),
    )
    .await;
    let cid = s(&ch["id"]);
    let flow = mobile_flow(&app, &cid).await;
    let (ext, _) = app.create_user("h2", json!({})).await;
    subscribe(&app, &ext, &cid, json!({"identifier": "abcdef0123"}))
        .await
        .ok(201);
    let d = deliver_once(&app, &flow, &ext, json!({"order": 5})).await;
    task.abort();
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("provider_unavailable"), "{d}");
    assert_eq!(
        d["attempts"],
        json!(2),
        "a dropped connection is retried: {d}"
    );
    let seen = seen.lock().unwrap().clone();
    assert!(!seen.is_empty(), "the APNs client connected");
    for preface in &seen {
        assert_eq!(
            preface.as_slice(),
            b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
            "HTTP/2 connection preface"
        );
    }
}
