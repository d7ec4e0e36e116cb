//! docs/API.md §12 (the live feed): `GET /user/v1/feed/live` with a
//! real WebSocket client — hello, created and updated events with a per-user
//! `seq`, fan-out to every socket of a user, resume with `since_seq` (query or
//! auth frame), `reset`, browser-style auth (api_key query + auth frame, user id
//! or JWT), auth failures (401 before the upgrade, error frame + 4401, auth
//! timeout), backpressure (1013) and shutdown (1001). Every wait is bounded.

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpSocket;
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::handshake::client::Response;
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::engine_helpers::*;
use crate::helpers::*;

type Ws = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

/// How long one expected frame may take.
const WAIT: Duration = Duration::from_secs(5);

// ================================================================ client helpers

/// The live feed's URL on `address` (a node's base URL).
fn live_url(address: &str, query: &str) -> String {
    let base = address.replacen("http://", "ws://", 1);
    if query.is_empty() {
        format!("{base}{U}/feed/live")
    } else {
        format!("{base}{U}/feed/live?{query}")
    }
}

/// Opens a WebSocket to the live feed with the given query and headers;
/// `rcvbuf` shrinks the client's TCP receive buffer (for backpressure).
async fn open_with(
    app: &TestApp, query: &str, headers: &[(&str, &str)], rcvbuf: Option<u32>,
) -> Result<(Ws, Response), tungstenite::Error> {
    // on a cluster, the node whose turn it is
    let address = app.next_address().to_string();
    let mut req = live_url(&address, query).into_client_request().unwrap();
    for (k, v) in headers {
        req.headers_mut().insert(
            HeaderName::from_bytes(k.as_bytes()).unwrap(),
            HeaderValue::from_str(v).unwrap(),
        );
    }
    let addr = address.trim_start_matches("http://").parse().unwrap();
    let sock = TcpSocket::new_v4().unwrap();
    if let Some(n) = rcvbuf {
        sock.set_recv_buffer_size(n).unwrap();
    }
    let tcp = timeout(WAIT, sock.connect(addr))
        .await
        .expect("TCP connect timed out")
        .expect("TCP connect");
    timeout(
        WAIT,
        tokio_tungstenite::client_async(req, MaybeTlsStream::Plain(tcp)),
    )
    .await
    .expect("WebSocket handshake timed out")
}

async fn open(app: &TestApp, query: &str, headers: &[(&str, &str)]) -> Ws {
    match open_with(app, query, headers, None).await {
        Ok((ws, _)) => ws,
        Err(e) => panic!("live feed upgrade failed: {}", describe_err(e)),
    }
}

/// A socket authenticated by headers (api key + user id).
async fn connect_user(app: &TestApp, ext: &str, query: &str) -> Ws {
    open(
        app,
        query,
        &[
            ("x-service-api-key", &app.public_key),
            ("x-service-user-id", ext),
        ],
    )
    .await
}

/// A browser-style socket: `api_key` in the query, then `auth` as first frame.
async fn connect_browser(app: &TestApp, auth: Value, extra_query: &str) -> Ws {
    let mut q = format!("api_key={}", enc(&app.public_key));
    if !extra_query.is_empty() {
        q = format!("{q}&{extra_query}");
    }
    let mut ws = open(app, &q, &[]).await;
    send(&mut ws, auth.to_string()).await;
    ws
}

async fn send(ws: &mut Ws, text: String) {
    timeout(WAIT, ws.send(Message::text(text)))
        .await
        .expect("send timed out")
        .expect("send");
}

fn describe_err(e: tungstenite::Error) -> String {
    match e {
        tungstenite::Error::Http(r) => format!(
            "HTTP {} {:?} body: {}",
            r.status(),
            r.headers(),
            String::from_utf8_lossy(r.body().as_deref().unwrap_or_default())
        ),
        e => e.to_string(),
    }
}

/// What a socket yields next (pings and pongs skipped).
#[derive(Debug)]
#[allow(dead_code)] // fields are shown in panic messages
enum Got {
    Text(Value),
    Close(Option<u16>, String),
    /// The stream ended or failed without a close frame.
    End(String),
    /// Nothing within the wait.
    Nothing,
}

async fn next_got(ws: &mut Ws, wait: Duration) -> Got {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        match tokio::time::timeout_at(deadline, ws.next()).await {
            Err(_) => return Got::Nothing,
            Ok(None) => return Got::End("stream ended".into()),
            Ok(Some(Err(e))) => return Got::End(e.to_string()),
            Ok(Some(Ok(m))) => match m {
                Message::Text(t) => {
                    let v: Value = serde_json::from_str(t.as_str())
                        .unwrap_or_else(|e| panic!("server frame is not JSON ({e}): {t}"));
                    return Got::Text(v);
                }
                Message::Close(f) => {
                    return match f {
                        Some(f) => Got::Close(Some(u16::from(f.code)), f.reason.to_string()),
                        None => Got::Close(None, String::new()),
                    }
                }
                Message::Binary(b) => panic!("unexpected binary frame ({} bytes)", b.len()),
                Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => continue,
            },
        }
    }
}

/// The next text frame (panics on anything else).
async fn frame(ws: &mut Ws) -> Value {
    match next_got(ws, WAIT).await {
        Got::Text(v) => v,
        other => panic!("expected a text frame within {WAIT:?}, got {other:?}"),
    }
}

/// The next frame, which must have the given `type`.
async fn expect_type(ws: &mut Ws, ty: &str) -> Value {
    let v = frame(ws).await;
    assert_eq!(v["type"], json!(ty), "expected a {ty} frame: {v}");
    v
}

/// `hello` with the given seq; returns it.
async fn hello(ws: &mut Ws, seq: u64) -> Value {
    let h = expect_type(ws, "hello").await;
    assert_eq!(h["seq"], json!(seq), "hello.seq: {h}");
    assert_meta(&h);
    h
}

fn assert_meta(v: &Value) {
    let meta = v["meta"]
        .as_object()
        .unwrap_or_else(|| panic!("meta must be an object: {v}"));
    for k in ["unread_count", "unseen_count"] {
        assert!(meta.get(k).is_some_and(Value::is_u64), "meta.{k}: {v}");
    }
}

/// Asserts that no frame (and no close) arrives within `ms`.
async fn silence(ws: &mut Ws, ms: u64) {
    match next_got(ws, Duration::from_millis(ms)).await {
        Got::Nothing => {}
        other => panic!("expected nothing within {ms} ms, got {other:?}"),
    }
}

/// Reads text frames until the close frame; returns them and the close code.
async fn read_until_close(ws: &mut Ws, wait: Duration) -> (Vec<Value>, Option<u16>, String) {
    let deadline = Instant::now() + wait;
    let mut frames = vec![];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match next_got(ws, left).await {
            Got::Text(v) => frames.push(v),
            Got::Close(code, why) => return (frames, code, why),
            other => panic!(
                "expected a close frame within {wait:?}; got {other:?} after {} text frames (last: {:?})",
                frames.len(),
                frames.last()
            ),
        }
    }
}

fn seq_of(v: &Value) -> u64 {
    v["seq"]
        .as_u64()
        .unwrap_or_else(|| panic!("seq must be a non-negative integer: {v}"))
}

/// The event frame of one entry change.
fn assert_event(v: &Value, ty: &str, seq: u64) {
    assert_eq!(v["type"], json!(ty), "event type: {v}");
    assert_eq!(v["seq"], json!(seq), "event seq: {v}");
    assert!(v["entry"]["id"].is_string(), "event entry: {v}");
    assert_meta(v);
}

// ================================================================ fixtures

struct Fixture {
    app: TestApp,
    flow_id: String,
}

/// A server (high user rate limit) with an active flow on the in_app channel.
async fn fixture() -> Fixture {
    let app = TestApp::spawn_with(&["--user-rate", "100000"], &[]);
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "live",
        json!([channel_step(
            &inapp,
            Some("S{{ data.i }}"),
            "B{{ data.i }}{{ data.pad }}"
        )]),
    )
    .await;
    Fixture {
        flow_id: s(&flow["id"]),
        app,
    }
}

impl Fixture {
    async fn run(&self, ext: &str, i: u64) -> Value {
        run_flow(
            &self.app,
            &self.flow_id,
            json!({"recipients": [{"external_id": ext}], "data": {"i": i}}),
        )
        .await
    }
}

async fn post_user(app: &TestApp, ext: &str, path: &str) -> Value {
    let r = app.user(POST, &format!("{U}{path}"), ext).go().await;
    r.ok(200)
}

/// The 401 error object of a refused upgrade (status, body and request id).
fn assert_refused(e: tungstenite::Error, status: u16, auth: &str, reason: &str) {
    let r = match e {
        tungstenite::Error::Http(r) => r,
        e => panic!("expected an HTTP error response before the upgrade, got {e}"),
    };
    let text = String::from_utf8_lossy(r.body().as_deref().unwrap_or_default()).into_owned();
    let shown = format!("HTTP {} {:?} body: {text}", r.status(), r.headers());
    assert_eq!(r.status().as_u16(), status, "{shown}");
    let ct = r
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap_or_default().to_string())
        .unwrap_or_default();
    assert!(ct.starts_with("application/json"), "content type: {shown}");
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let err = &body["error"];
    let code = if status == 401 {
        "unauthenticated"
    } else {
        "bad_request"
    };
    assert_eq!(err["code"], json!(code), "{shown}");
    assert_eq!(err["status"], json!(status), "{shown}");
    assert_eq!(
        err["type"],
        json!(format!("https://herald.dev/errors#{code}-{status}")),
        "{shown}"
    );
    assert!(
        err["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{shown}"
    );
    let rid = err["request_id"].as_str().unwrap_or_default();
    assert!(!rid.is_empty(), "request_id: {shown}");
    assert_eq!(
        r.headers()
            .get("x-request-id")
            .and_then(|v| v.to_str().ok()),
        Some(rid),
        "x-request-id header: {shown}"
    );
    if status == 401 {
        assert_eq!(err["details"]["auth"], json!(auth), "{shown}");
        assert_eq!(err["details"]["reason"], json!(reason), "{shown}");
    } else {
        assert_eq!(err["details"]["reason"], json!("invalid_param"), "{shown}");
        assert_eq!(err["details"]["param"], json!(auth), "{shown}");
    }
}

/// An error frame (the error object of a 401) followed by close 4401; returns the error.
async fn assert_frame_auth_failure(ws: &mut Ws, reason: Option<&str>) -> Value {
    let (frames, code, why) = read_until_close(ws, WAIT).await;
    assert_eq!(
        frames.len(),
        1,
        "exactly one error frame before the close: {frames:?}"
    );
    let f = &frames[0];
    assert_eq!(f["type"], json!("error"), "error frame: {f}");
    let err = &f["error"];
    assert_eq!(err["code"], json!("unauthenticated"), "{f}");
    assert_eq!(err["status"], json!(401), "{f}");
    assert_eq!(
        err["type"],
        json!("https://herald.dev/errors#unauthenticated-401"),
        "{f}"
    );
    assert!(
        err["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{f}"
    );
    assert!(err.get("request_id").is_some(), "error.request_id: {f}");
    assert_eq!(err["details"]["auth"], json!("user_key_jwt"), "{f}");
    match reason {
        Some(r) => assert_eq!(err["details"]["reason"], json!(r), "{f}"),
        None => assert!(err["details"]["reason"].is_string(), "{f}"),
    }
    assert_eq!(code, Some(4401), "close code (reason {why:?})");
    err.clone()
}

/// The next frame: `feed_entry.updated` with the seq after `*seq`.
async fn next(ws: &mut Ws, seq: &mut u64) -> Value {
    *seq += 1;
    let v = frame(ws).await;
    assert_event(&v, "feed_entry.updated", *seq);
    v
}

mod auth;
mod events;
mod limits;
