//! Shared helpers of the delivery-engine tests (channels, flows, runs, feed,
//! topics, idempotency, crash): building channels and flows, running them,
//! webhook receivers (wiremock) and bounded polling.
#![allow(dead_code)]

use std::collections::HashSet;
use std::fmt::Display;
use std::time::{Duration, Instant};

use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use crate::helpers::*;

// ================================================================ polling

/// A bounded wait: `tick` sleeps a little, and panics with a description of
/// the last observed state once the time is up.
pub struct Deadline {
    start: Instant,
    limit: Duration,
    what: String,
}

impl Deadline {
    pub fn new(what: impl Into<String>, secs: u64) -> Deadline {
        assert!(secs <= 30, "polls are bounded to 30 s");
        Deadline {
            start: Instant::now(),
            limit: Duration::from_secs(secs),
            what: what.into(),
        }
    }

    pub fn expired(&self) -> bool {
        self.start.elapsed() > self.limit
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    #[track_caller]
    pub fn tick(&self, last: impl Display) -> impl std::future::Future<Output = ()> {
        if self.expired() {
            let shown: String = last.to_string().chars().take(4000).collect();
            panic!(
                "timed out after {:?} waiting for {}; last state: {shown}",
                self.limit, self.what
            );
        }
        tokio::time::sleep(Duration::from_millis(100))
    }
}

// ================================================================ small values

/// A unique flow handle / topic key with a readable tag (lowercase).
pub fn handle(tag: &str) -> String {
    format!("{tag}-{}", &random_hex()[..10])
}

/// A fresh Standard Webhooks secret: (`whsec_<base64>`, decoded HMAC key).
pub fn webhook_secret() -> (String, Vec<u8>) {
    let key: [u8; 24] = rand::random();
    let b64 = base64::engine::general_purpose::STANDARD.encode(key);
    (format!("whsec_{b64}"), key.to_vec())
}

/// A quick retry policy so retry tests finish fast.
pub fn fast_retry() -> Value {
    json!({"max_attempts": 3, "base_seconds": 0.05, "max_seconds": 0.2})
}

pub fn new_uuid() -> String {
    uuid::Uuid::now_v7().to_string()
}

pub fn s(v: &Value) -> String {
    v.as_str()
        .unwrap_or_else(|| panic!("expected a string, got {v}"))
        .to_string()
}

pub fn ids(items: &[Value]) -> HashSet<String> {
    items.iter().map(|i| s(&i["id"])).collect()
}

/// `[{external_id}, ...]`.
pub fn recipients(exts: &[String]) -> Value {
    Value::Array(exts.iter().map(|e| json!({ "external_id": e })).collect())
}

/// A channel step with a body (and optional subject) template.
pub fn channel_step(channel_id: &str, subject: Option<&str>, body: &str) -> Value {
    let mut t = json!({ "body": body });
    if let Some(sub) = subject {
        t["subject"] = json!(sub);
    }
    json!({"type": "channel", "channel_id": channel_id, "template": t})
}

pub fn delay_step(seconds: u64) -> Value {
    json!({"type": "delay", "seconds": seconds})
}

// ================================================================ errors

/// 400 bad_request reason invalid_uuid naming `param`.
#[track_caller]
pub fn assert_invalid_uuid(r: &Resp, param: &str) {
    let d = assert_error(r, 400, "bad_request");
    assert_eq!(d["reason"], json!("invalid_uuid"), "details.reason: {r}");
    assert_eq!(d["param"], json!(param), "details.param: {r}");
}

/// 409 conflict with the given `reason`; returns details.
#[track_caller]
pub fn assert_conflict(r: &Resp, reason: &str) -> Value {
    let d = assert_error(r, 409, "conflict");
    assert_eq!(d["reason"], json!(reason), "details.reason: {r}");
    d
}

// ================================================================ channels

/// The id of the project's built-in in_app channel.
pub async fn in_app_channel(app: &TestApp) -> String {
    let r = app
        .admin(GET, &format!("{A}/channels"))
        .query(&[("limit", "1000")])
        .go()
        .await;
    let body = r.page();
    let found: Vec<&Value> = body["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] == json!("in_app"))
        .collect();
    assert_eq!(found.len(), 1, "exactly one in_app channel expected: {r}");
    s(&found[0]["id"])
}

/// `POST /channels` for a chat webhook channel; asserts 201 and returns it.
pub async fn create_webhook_channel(app: &TestApp, url: &str, secret: Option<&str>) -> Value {
    let mut config = json!({"url": url, "retry": fast_retry()});
    if let Some(sec) = secret {
        config["secret"] = json!(sec);
    }
    create_webhook_channel_with(app, config).await
}

pub async fn create_webhook_channel_with(app: &TestApp, config: Value) -> Value {
    let r = app
        .admin(POST, &format!("{A}/channels"))
        .json(&json!({"type": "chat", "provider": "webhook", "name": "hook", "config": config}))
        .go()
        .await;
    let c = r.ok(201);
    assert_eq!(c["type"], json!("chat"), "{r}");
    assert_eq!(c["provider"], json!("webhook"), "{r}");
    c
}

// ================================================================ webhook receivers

/// A wiremock server of its own (not pooled, so no other test sees it).
pub async fn mock_server() -> MockServer {
    MockServer::builder().start().await
}

pub fn hook_url(server: &MockServer) -> String {
    format!("{}/hook", server.uri())
}

/// Answers every POST with `status`.
pub async fn mock_always(server: &MockServer, status: u16) {
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(status))
        .mount(server)
        .await;
}

/// A URL on 127.0.0.1 where nothing listens (connection refused).
pub fn closed_port_url() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().unwrap().port();
    drop(l);
    format!("http://127.0.0.1:{port}/hook")
}

pub async fn received(server: &MockServer) -> Vec<Request> {
    server
        .received_requests()
        .await
        .expect("request recording is on")
}

pub fn req_header(req: &Request, name: &str) -> Option<String> {
    req.headers
        .get(name)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
}

pub fn req_json(req: &Request) -> Value {
    serde_json::from_slice(&req.body)
        .unwrap_or_else(|e| panic!("webhook body is not JSON ({e}): {:?}", req.body))
}

/// The requests whose `idempotency-key` is `delivery_id`.
pub async fn requests_for(server: &MockServer, delivery_id: &str) -> Vec<Request> {
    received(server)
        .await
        .into_iter()
        .filter(|r| req_header(r, "idempotency-key").as_deref() == Some(delivery_id))
        .collect()
}

/// Checks `webhook-signature: v1,<base64 HMAC-SHA256(key, "ID.TS.BODY")>`.
#[track_caller]
pub fn assert_signed(req: &Request, key: &[u8]) {
    let id = req_header(req, "webhook-id").expect("webhook-id header");
    let ts = req_header(req, "webhook-timestamp").expect("webhook-timestamp header");
    let sig = req_header(req, "webhook-signature").expect("webhook-signature header");
    let mut mac = Hmac::<Sha256>::new_from_slice(key).unwrap();
    mac.update(format!("{id}.{ts}.").as_bytes());
    mac.update(&req.body);
    let want = format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    );
    // the header may carry several space-separated signatures
    assert!(
        sig.split(' ').any(|s| s == want),
        "webhook-signature {sig:?} does not verify (want {want:?})"
    );
}

// ================================================================ flows and runs

/// `POST /flows`; asserts 201 and returns the flow.
pub async fn create_flow(app: &TestApp, handle: &str, steps: Value) -> Value {
    let r = app
        .admin(POST, &format!("{A}/flows"))
        .json(&json!({"handle": handle, "name": format!("Flow {handle}"), "steps": steps}))
        .go()
        .await;
    let f = r.ok(201);
    assert_eq!(f["status"], json!("draft"), "{r}");
    f
}

/// `POST /flows/{id}/activate`; asserts 200 active.
pub async fn activate(app: &TestApp, flow_id: &str) -> Value {
    let r = app
        .admin(POST, &format!("{A}/flows/{flow_id}/activate"))
        .go()
        .await;
    let f = r.ok(200);
    assert_eq!(f["status"], json!("active"), "{r}");
    f
}

/// A new active flow with the given steps.
pub async fn active_flow(app: &TestApp, tag: &str, steps: Value) -> Value {
    let f = create_flow(app, &handle(tag), steps).await;
    activate(app, &s(&f["id"])).await
}

/// `POST /flows/{id}/run`; asserts 202 and returns the accepted run.
pub async fn run_flow(app: &TestApp, flow_id: &str, body: Value) -> Value {
    let r = app
        .admin(POST, &format!("{A}/flows/{flow_id}/run"))
        .json(&body)
        .go()
        .await;
    let run = r.ok(202);
    assert_eq!(run["status"], json!("pending"), "{r}");
    run
}

/// Polls `GET /flow_runs/{id}` until `processed` (at most `secs`).
pub async fn wait_run_processed(app: &TestApp, run_id: &str, secs: u64) -> Value {
    let d = Deadline::new(format!("flow run {run_id} to be processed"), secs);
    loop {
        let r = app
            .admin(GET, &format!("{A}/flow_runs/{run_id}"))
            .go()
            .await;
        let v = r.ok(200);
        if v["status"] == json!("processed") {
            return v;
        }
        d.tick(&r).await;
    }
}

/// Every item of a list, walking the `after` cursors (limit 1000).
pub async fn list_all(app: &TestApp, path: &str, query: &[(&str, &str)]) -> Vec<Value> {
    let mut out = Vec::new();
    let mut after: Option<String> = None;
    for _ in 0..100 {
        let mut q: Vec<(&str, &str)> = query.to_vec();
        q.push(("limit", "1000"));
        if let Some(a) = &after {
            q.push(("after", a));
        }
        let r = app.admin(GET, path).query(&q).go().await;
        let body = r.page();
        out.extend(body["items"].as_array().unwrap().iter().cloned());
        match body["page"]["after"].as_str() {
            Some(a) if body["page"]["has_more_after"] == json!(true) => after = Some(a.to_string()),
            _ => return out,
        }
    }
    panic!("{path}: more than 100 pages");
}

/// Every notification of a run.
pub async fn run_notifications(app: &TestApp, run_id: &str) -> Vec<Value> {
    list_all(
        app,
        &format!("{A}/notifications"),
        &[("flow_run_id", run_id)],
    )
    .await
}

/// Polls `GET /deliveries/{id}` until its status is not `pending`.
pub async fn wait_delivery_final(app: &TestApp, id: &str, secs: u64) -> Value {
    let d = Deadline::new(format!("delivery {id} to settle"), secs);
    loop {
        let r = app.admin(GET, &format!("{A}/deliveries/{id}")).go().await;
        let v = r.ok(200);
        if v["status"] != json!("pending") {
            return v;
        }
        d.tick(&r).await;
    }
}

/// Runs `flow_id` for one recipient, waits for the run to be processed and
/// returns (run, the notification with its deliveries).
pub async fn run_one(app: &TestApp, flow_id: &str, body: Value) -> (Value, Value) {
    let run = run_flow(app, flow_id, body).await;
    let run_id = s(&run["id"]);
    wait_run_processed(app, &run_id, 30).await;
    let ns = run_notifications(app, &run_id).await;
    assert_eq!(ns.len(), 1, "one notification expected: {ns:?}");
    (run, ns[0].clone())
}

/// The deliveries embedded in a notification.
pub fn deliveries(n: &Value) -> Vec<Value> {
    n["deliveries"]
        .as_array()
        .unwrap_or_else(|| panic!("notification.deliveries must be an array: {n}"))
        .clone()
}

/// The delivery of `channel_type` embedded in a notification (exactly one).
#[track_caller]
pub fn delivery_of(n: &Value, channel_type: &str) -> Value {
    let ds: Vec<Value> = deliveries(n)
        .into_iter()
        .filter(|d| d["channel_type"] == json!(channel_type))
        .collect();
    assert_eq!(ds.len(), 1, "one {channel_type} delivery expected in {n}");
    ds[0].clone()
}

/// Polls the user's feed until it holds `n` entries (status=all); returns the body.
pub async fn wait_feed(app: &TestApp, ext: &str, n: usize) -> Value {
    let d = Deadline::new(format!("{n} feed entries of {ext}"), 30);
    loop {
        let r = app
            .user(GET, &format!("{U}/feed"), ext)
            .query(&[("limit", "100")])
            .go()
            .await;
        let body = r.page();
        if body["items"].as_array().unwrap().len() >= n {
            return body;
        }
        d.tick(&r).await;
    }
}

/// Creates topic `topic` and `n` users `{prefix}{i}`, each subscribed to it;
/// returns the users' external ids.
pub async fn topic_of_new_users(app: &TestApp, topic: &str, prefix: &str, n: usize) -> Vec<String> {
    app.admin(PUT, &format!("{A}/topics/{topic}"))
        .json(&json!({"name": topic}))
        .go()
        .await
        .ok(201);
    let mut users = vec![];
    for i in 0..n {
        let (u, _) = app.create_user(&format!("{prefix}{i}"), json!({})).await;
        app.admin(POST, &format!("{A}/topics/{topic}/subscriptions"))
            .json(&json!({"external_id": u}))
            .go()
            .await
            .ok(201);
        users.push(u);
    }
    users
}
