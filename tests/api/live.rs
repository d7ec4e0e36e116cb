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

// ================================================================ tests

#[tokio::test]
async fn hello_comes_first_with_seq_zero_and_meta() {
    let f = fixture().await;
    let (ext, _) = f.app.create_user("hello", json!({})).await;
    let mut ws = connect_user(&f.app, &ext, "").await;
    let h = hello(&mut ws, 0).await;
    assert_eq!(
        h,
        json!({"type": "hello", "seq": 0, "meta": {"unread_count": 0, "unseen_count": 0}}),
        "hello of a user without events"
    );
    silence(&mut ws, 300).await;

    // a user with one event: hello carries its seq and the counts
    let mut ws2 = connect_user(&f.app, &ext, "").await;
    hello(&mut ws2, 0).await;
    f.run(&ext, 1).await;
    expect_type(&mut ws2, "feed_entry.created").await;
    let mut ws3 = connect_user(&f.app, &ext, "").await;
    let h = hello(&mut ws3, 1).await;
    assert_eq!(
        h["meta"],
        json!({"unread_count": 1, "unseen_count": 1}),
        "{h}"
    );
    silence(&mut ws3, 300).await;
}

#[tokio::test]
async fn created_event_arrives_within_a_second_of_the_run() {
    let f = fixture().await;
    let (actor_ext, _) = f
        .app
        .create_user("actor", json!({"first_name": "Ann"}))
        .await;
    let (ext, _) = f.app.create_user("created", json!({})).await;
    let mut ws = connect_user(&f.app, &ext, "").await;
    hello(&mut ws, 0).await;

    let r = f
        .app
        .admin(POST, &format!("{A}/flows/{}/run", f.flow_id))
        .json(&json!({"recipients": [{"external_id": ext}], "actor": actor_ext, "data": {"i": 7}}))
        .go()
        .await;
    r.ok(202);
    let accepted = Instant::now();
    let ev = match next_got(&mut ws, Duration::from_secs(1)).await {
        Got::Text(v) => v,
        other => panic!("no frame within 1 s of the run's 202: {other:?}"),
    };
    let took = accepted.elapsed();
    assert!(took <= Duration::from_secs(1), "created after {took:?}");
    assert_event(&ev, "feed_entry.created", 1);
    assert_eq!(
        ev["meta"],
        json!({"unread_count": 1, "unseen_count": 1}),
        "{ev}"
    );
    let entry = &ev["entry"];
    assert_eq!(entry["data"]["subject"], json!("S7"), "{ev}");
    assert_eq!(entry["data"]["body"], json!("B7"), "{ev}");
    assert_eq!(entry["flow_id"], json!(f.flow_id), "{ev}");
    assert_eq!(entry["actor"]["external_id"], json!(actor_ext), "{ev}");
    for k in ["read", "seen", "archived", "clicked"] {
        assert_eq!(entry[k], json!(false), "entry.{k}: {ev}");
    }
    // the entry is the feed entry as GET /feed/{id} shows it
    let r = f
        .app
        .user(GET, &format!("{U}/feed/{}", s(&entry["id"])), &ext)
        .go()
        .await;
    assert_eq!(&r.ok(200), entry, "event entry vs GET /feed/{{id}}");
    silence(&mut ws, 300).await;
}

#[tokio::test]
async fn every_socket_of_a_user_receives_every_event() {
    let f = fixture().await;
    let (ext, _) = f.app.create_user("fan", json!({})).await;
    let (other, _) = f.app.create_user("other", json!({})).await;
    let mut a = connect_user(&f.app, &ext, "").await;
    hello(&mut a, 0).await;
    let mut b = connect_browser(&f.app, json!({"type": "auth", "user_id": ext}), "").await;
    hello(&mut b, 0).await;
    let mut o = connect_user(&f.app, &other, "").await;
    hello(&mut o, 0).await;

    for i in 1..=3 {
        f.run(&ext, i).await;
    }
    let mut got_a = vec![];
    let mut got_b = vec![];
    for seq in 1..=3 {
        let x = frame(&mut a).await;
        let y = frame(&mut b).await;
        assert_event(&x, "feed_entry.created", seq);
        assert_eq!(x, y, "both sockets get the same event");
        got_a.push(x);
        got_b.push(y);
    }
    // an update from REST reaches both as well
    let id = s(&got_a[0]["entry"]["id"]);
    post_user(&f.app, &ext, &format!("/feed/{id}/read")).await;
    let x = frame(&mut a).await;
    let y = frame(&mut b).await;
    assert_event(&x, "feed_entry.updated", 4);
    assert_eq!(x, y);
    silence(&mut a, 300).await;
    silence(&mut b, 100).await;
    // another user's socket saw none of it
    silence(&mut o, 100).await;
}

#[tokio::test]
async fn rest_changes_arrive_as_updated_events_one_per_entry() {
    let f = fixture().await;
    let (ext, _) = f.app.create_user("rest", json!({})).await;
    let mut ws = connect_user(&f.app, &ext, "").await;
    hello(&mut ws, 0).await;
    let mut ids = vec![];
    for i in 1..=3 {
        f.run(&ext, i).await;
        let ev = frame(&mut ws).await;
        assert_event(&ev, "feed_entry.created", i);
        ids.push(s(&ev["entry"]["id"]));
    }
    let mut seq = 3;

    // PATCH seen
    let r = f
        .app
        .user(PATCH, &format!("{U}/feed/{}", ids[0]), &ext)
        .json(&json!({"seen": true}))
        .go()
        .await;
    let rest = r.ok(200);
    let ev = next(&mut ws, &mut seq).await;
    assert_eq!(ev["entry"], rest, "event entry vs PATCH response");
    assert_eq!(ev["entry"]["seen"], json!(true));
    assert_eq!(ev["entry"]["read"], json!(false));
    assert_eq!(ev["meta"], json!({"unread_count": 3, "unseen_count": 2}));

    // PATCH {} and a repeated true change nothing: no event
    let r = f
        .app
        .user(PATCH, &format!("{U}/feed/{}", ids[0]), &ext)
        .json(&json!({}))
        .go()
        .await;
    r.ok(200);
    let r = f
        .app
        .user(PATCH, &format!("{U}/feed/{}", ids[0]), &ext)
        .json(&json!({"seen": true}))
        .go()
        .await;
    r.ok(200);
    silence(&mut ws, 300).await;

    // POST …/read
    let rest = post_user(&f.app, &ext, &format!("/feed/{}/read", ids[1])).await;
    let ev = next(&mut ws, &mut seq).await;
    assert_eq!(ev["entry"], rest);
    assert_eq!(ev["entry"]["read"], json!(true));
    assert_eq!(ev["entry"]["seen"], json!(true));
    assert_eq!(ev["meta"], json!({"unread_count": 2, "unseen_count": 1}));

    // one PATCH with several fields: one event
    let r = f
        .app
        .user(PATCH, &format!("{U}/feed/{}", ids[1]), &ext)
        .json(&json!({"clicked": true, "archived": true}))
        .go()
        .await;
    r.ok(200);
    let ev = next(&mut ws, &mut seq).await;
    assert_eq!(ev["entry"]["id"], json!(ids[1]));
    assert_eq!(ev["entry"]["archived"], json!(true));
    assert_eq!(ev["entry"]["clicked"], json!(true));
    silence(&mut ws, 200).await;

    // read_all: one event per changed entry (ids[0] seen, ids[2] unseen)
    let body = post_user(&f.app, &ext, "/feed/read_all").await;
    assert_eq!(body["updated"], json!(2), "{body}");
    assert_eq!(
        body["meta"],
        json!({"unread_count": 0, "unseen_count": 0}),
        "{body}"
    );
    let e1 = next(&mut ws, &mut seq).await;
    let e2 = next(&mut ws, &mut seq).await;
    let mut changed = vec![s(&e1["entry"]["id"]), s(&e2["entry"]["id"])];
    changed.sort();
    let mut want = vec![ids[0].clone(), ids[2].clone()];
    want.sort();
    assert_eq!(changed, want, "read_all events name the changed entries");
    for e in [&e1, &e2] {
        assert_eq!(e["entry"]["read"], json!(true), "{e}");
    }
    assert_eq!(
        e2["meta"],
        json!({"unread_count": 0, "unseen_count": 0}),
        "{e2}"
    );
    // nothing left to change: no events
    let body = post_user(&f.app, &ext, "/feed/read_all").await;
    assert_eq!(body["updated"], json!(0), "{body}");
    let body = post_user(&f.app, &ext, "/feed/seen_all").await;
    assert_eq!(body["updated"], json!(0), "{body}");
    silence(&mut ws, 300).await;

    // unarchive, then seen_all on a fresh entry: one event each
    post_user(&f.app, &ext, &format!("/feed/{}/unarchive", ids[1])).await;
    next(&mut ws, &mut seq).await;
    f.run(&ext, 4).await;
    let ev = frame(&mut ws).await;
    seq += 1;
    assert_event(&ev, "feed_entry.created", seq);
    let body = post_user(&f.app, &ext, "/feed/seen_all").await;
    assert_eq!(body["updated"], json!(1), "{body}");
    let ev = next(&mut ws, &mut seq).await;
    assert_eq!(ev["entry"]["seen"], json!(true));
    assert_eq!(ev["meta"], json!({"unread_count": 1, "unseen_count": 0}));
    silence(&mut ws, 300).await;
}

/// The next frame: `feed_entry.updated` with the seq after `*seq`.
async fn next(ws: &mut Ws, seq: &mut u64) -> Value {
    *seq += 1;
    let v = frame(ws).await;
    assert_event(&v, "feed_entry.updated", *seq);
    v
}

/// Resume: a socket that misses events gets exactly them, in order, then live ones.
async fn resume_case(via_auth_frame: bool) {
    let f = fixture().await;
    let (ext, _) = f.app.create_user("resume", json!({})).await;
    // the observer stays connected and sees every event
    let mut obs = connect_user(&f.app, &ext, "").await;
    hello(&mut obs, 0).await;
    let mut a = connect_user(&f.app, &ext, "").await;
    hello(&mut a, 0).await;
    for i in 1..=2 {
        f.run(&ext, i).await;
        let x = frame(&mut a).await;
        assert_eq!(x, frame(&mut obs).await);
        assert_event(&x, "feed_entry.created", i);
    }
    a.close(None).await.ok();
    drop(a);

    // missed while disconnected: two runs and a read
    let mut missed = vec![];
    for i in 3..=4 {
        f.run(&ext, i).await;
        missed.push(frame(&mut obs).await);
    }
    let id = s(&missed[0]["entry"]["id"]);
    post_user(&f.app, &ext, &format!("/feed/{id}/read")).await;
    missed.push(frame(&mut obs).await);
    for (k, m) in missed.iter().enumerate() {
        assert_eq!(seq_of(m), 3 + k as u64, "{m}");
    }

    let mut b = if via_auth_frame {
        connect_browser(
            &f.app,
            json!({"type": "auth", "user_id": ext, "since_seq": 2}),
            "",
        )
        .await
    } else {
        connect_user(&f.app, &ext, "since_seq=2").await
    };
    let h = hello(&mut b, 5).await;
    assert_eq!(h["meta"], missed[2]["meta"], "hello meta = latest counts");
    for m in &missed {
        assert_eq!(&frame(&mut b).await, m, "replayed event");
    }
    silence(&mut b, 300).await;

    // then live events, once each
    f.run(&ext, 5).await;
    let live = frame(&mut b).await;
    assert_eq!(live, frame(&mut obs).await);
    assert_event(&live, "feed_entry.created", 6);
    silence(&mut b, 300).await;

    // resuming at the latest seq replays nothing
    let mut c = if via_auth_frame {
        connect_browser(
            &f.app,
            json!({"type": "auth", "user_id": ext, "since_seq": 6}),
            "",
        )
        .await
    } else {
        connect_user(&f.app, &ext, "since_seq=6").await
    };
    hello(&mut c, 6).await;
    silence(&mut c, 300).await;

    // resuming from 0 replays everything, in order
    let mut z = connect_user(&f.app, &ext, "since_seq=0").await;
    hello(&mut z, 6).await;
    for seq in 1..=6 {
        assert_eq!(seq_of(&frame(&mut z).await), seq);
    }
    silence(&mut z, 300).await;
}

#[tokio::test]
async fn resume_with_since_seq_query_replays_exactly_the_missed_events() {
    resume_case(false).await;
}

#[tokio::test]
async fn resume_with_since_seq_in_the_auth_frame_replays_exactly_the_missed_events() {
    resume_case(true).await;
}

#[tokio::test]
async fn since_seq_above_the_latest_gives_reset_right_after_hello() {
    let f = fixture().await;
    let (ext, _) = f.app.create_user("reset", json!({})).await;

    // no events yet: latest 0
    let mut ws = connect_user(&f.app, &ext, "since_seq=1").await;
    hello(&mut ws, 0).await;
    assert_eq!(frame(&mut ws).await, json!({"type": "reset", "seq": 0}));
    silence(&mut ws, 200).await;

    f.run(&ext, 1).await;
    assert_event(&frame(&mut ws).await, "feed_entry.created", 1);

    // via the query
    let mut q = connect_user(&f.app, &ext, "since_seq=50").await;
    hello(&mut q, 1).await;
    assert_eq!(frame(&mut q).await, json!({"type": "reset", "seq": 1}));
    silence(&mut q, 200).await;

    // via the auth frame
    let mut a = connect_browser(
        &f.app,
        json!({"type": "auth", "user_id": ext, "since_seq": 9999}),
        "",
    )
    .await;
    hello(&mut a, 1).await;
    assert_eq!(frame(&mut a).await, json!({"type": "reset", "seq": 1}));
    silence(&mut a, 200).await;

    // after a reset the socket is live
    f.run(&ext, 2).await;
    for s in [&mut ws, &mut q, &mut a] {
        assert_event(&frame(s).await, "feed_entry.created", 2);
    }
}

#[tokio::test]
async fn browser_auth_with_api_key_query_and_auth_frame() {
    let f = fixture().await;
    let app = &f.app;
    let (ext, _) = app.create_user("browser", json!({})).await;

    // user id in the auth frame (security mode off)
    let mut ws = connect_browser(app, json!({"type": "auth", "user_id": ext}), "").await;
    hello(&mut ws, 0).await;

    // a JWT user key, signed with a generated signing key
    let r = app
        .admin(POST, &format!("{A}/project/signing_key"))
        .go()
        .await;
    let pair = r.ok(201);
    let private = s(&pair["private_key"]);
    let token = sign_with(
        &private,
        jsonwebtoken::Algorithm::RS256,
        &json!({"sub": ext, "exp": now_secs() + 300}),
    );
    let mut jwt = connect_browser(app, json!({"type": "auth", "user_key": token}), "").await;
    hello(&mut jwt, 0).await;
    // and the same token in the header
    let mut hdr = open(
        app,
        "",
        &[
            ("x-service-api-key", &app.public_key),
            ("x-service-user-key", &token),
        ],
    )
    .await;
    hello(&mut hdr, 0).await;

    // once authenticated, unknown client frames are ignored
    send(&mut jwt, json!({"type": "subscribe", "x": 1}).to_string()).await;
    send(&mut jwt, "not json".to_string()).await;
    f.run(&ext, 1).await;
    for s in [&mut ws, &mut jwt, &mut hdr] {
        assert_event(&frame(s).await, "feed_entry.created", 1);
    }

    // security mode on: a user id frame is refused, a JWT still works
    app.set_security_mode(true).await;
    let mut refused = connect_browser(app, json!({"type": "auth", "user_id": ext}), "").await;
    assert_frame_auth_failure(&mut refused, Some("missing_user_key")).await;
    let mut jwt2 = connect_browser(app, json!({"type": "auth", "user_key": token}), "").await;
    hello(&mut jwt2, 1).await;
    // an expired token is refused
    let expired = sign_with(
        &private,
        jsonwebtoken::Algorithm::RS256,
        &json!({"sub": ext, "exp": now_secs() - 600}),
    );
    let mut old = connect_browser(app, json!({"type": "auth", "user_key": expired}), "").await;
    assert_frame_auth_failure(&mut old, Some("token_expired")).await;
}

#[tokio::test]
async fn failed_auth_before_the_upgrade_is_a_401_error_body() {
    let f = fixture().await;
    let app = &f.app;
    let (ext, _) = app.create_user("fail", json!({})).await;

    let refused = |r: Result<(Ws, Response), tungstenite::Error>| match r {
        Ok(_) => panic!("the upgrade must be refused"),
        Err(e) => e,
    };
    // bad api_key query parameter
    let e = refused(open_with(app, "api_key=pk_test_nope", &[], None).await);
    assert_refused(e, 401, "api_key", "invalid_api_key");
    // no credentials at all
    let e = refused(open_with(app, "", &[], None).await);
    assert_refused(e, 401, "api_key", "missing_api_key");
    // header auth: unknown api key, unknown user, no user
    let e = refused(
        open_with(
            app,
            "",
            &[
                ("x-service-api-key", "pk_test_nope"),
                ("x-service-user-id", &ext),
            ],
            None,
        )
        .await,
    );
    assert_refused(e, 401, "api_key", "invalid_api_key");
    let e = refused(
        open_with(
            app,
            "",
            &[
                ("x-service-api-key", &app.public_key),
                ("x-service-user-id", "nobody-here"),
            ],
            None,
        )
        .await,
    );
    assert_refused(e, 401, "user_key_jwt", "user_not_found");
    let e = refused(open_with(app, "", &[("x-service-api-key", &app.public_key)], None).await);
    assert_refused(e, 401, "user_key_jwt", "missing_user_key");
    let e = refused(
        open_with(
            app,
            "",
            &[
                ("x-service-api-key", &app.public_key),
                ("x-service-user-key", "not.a.jwt"),
            ],
            None,
        )
        .await,
    );
    assert_refused(e, 401, "user_key_jwt", "invalid_signature");
    // a malformed since_seq
    let e = refused(
        open_with(
            app,
            "since_seq=abc",
            &[
                ("x-service-api-key", &app.public_key),
                ("x-service-user-id", &ext),
            ],
            None,
        )
        .await,
    );
    assert_refused(e, 400, "since_seq", "");
}

#[tokio::test]
async fn a_first_frame_that_is_not_an_auth_frame_gets_an_error_frame_and_4401() {
    let f = fixture().await;
    let app = &f.app;
    let (ext, _) = app.create_user("frame", json!({})).await;
    let q = format!("api_key={}", enc(&app.public_key));

    for first in [
        json!({"type": "subscribe", "user_id": ext}).to_string(),
        "hello there".to_string(),
        json!(["auth"]).to_string(),
    ] {
        let mut ws = open(app, &q, &[]).await;
        send(&mut ws, first.clone()).await;
        assert_frame_auth_failure(&mut ws, None).await;
    }
    // an auth frame naming nobody, or with a bad key
    let mut ws = connect_browser(app, json!({"type": "auth", "user_id": "nobody-here"}), "").await;
    assert_frame_auth_failure(&mut ws, Some("user_not_found")).await;
    let mut ws = connect_browser(app, json!({"type": "auth"}), "").await;
    assert_frame_auth_failure(&mut ws, Some("missing_user_key")).await;
    let mut ws = connect_browser(app, json!({"type": "auth", "user_key": "x.y.z"}), "").await;
    assert_frame_auth_failure(&mut ws, Some("invalid_signature")).await;
}

#[tokio::test]
async fn the_error_frame_carries_the_upgrade_request_id() {
    // §3: the error object's request_id is the request's id, as in its x-request-id header
    let f = fixture().await;
    let app = &f.app;
    let q = format!("api_key={}", enc(&app.public_key));
    let (mut ws, resp) = open_with(app, &q, &[("x-request-id", "live-rid-123")], None)
        .await
        .unwrap_or_else(|e| panic!("upgrade: {}", describe_err(e)));
    assert_eq!(
        resp.headers()
            .get("x-request-id")
            .and_then(|v| v.to_str().ok()),
        Some("live-rid-123"),
        "the 101 carries the request id"
    );
    send(
        &mut ws,
        json!({"type": "auth", "user_id": "nobody-here"}).to_string(),
    )
    .await;
    let err = assert_frame_auth_failure(&mut ws, Some("user_not_found")).await;
    assert_eq!(
        err["request_id"],
        json!("live-rid-123"),
        "error.request_id of the error frame: {err}"
    );
}

#[tokio::test]
async fn no_auth_frame_within_10_seconds_closes_with_4401() {
    let f = fixture().await;
    let q = format!("api_key={}", enc(&f.app.public_key));
    let mut ws = open(&f.app, &q, &[]).await;
    let t = Instant::now();
    let (frames, code, why) = read_until_close(&mut ws, Duration::from_secs(15)).await;
    let took = t.elapsed();
    assert!(frames.is_empty(), "no frame before the close: {frames:?}");
    assert_eq!(code, Some(4401), "close code (reason {why:?})");
    assert!(
        took >= Duration::from_millis(9_000) && took <= Duration::from_secs(13),
        "closed after {took:?}, expected about 10 s"
    );
}

#[tokio::test]
async fn a_client_that_never_reads_is_closed_with_1013_and_resumes() {
    let f = fixture().await;
    let app = &f.app;
    let (ext, _) = app.create_user("slow", json!({})).await;
    // the entry carries 32 KiB, so every event frame does too
    let pad = "x".repeat(32 * 1024);
    run_flow(
        app,
        &f.flow_id,
        json!({"recipients": [{"external_id": ext}], "data": {"i": 1, "pad": pad}}),
    )
    .await;
    let feed = wait_feed(app, &ext, 1).await;
    let id = s(&feed["items"][0]["id"]);

    // a small receive buffer, and this socket is not read from until the end
    let (mut slow, _) = open_with(
        app,
        "",
        &[
            ("x-service-api-key", &app.public_key),
            ("x-service-user-id", &ext),
        ],
        Some(4096),
    )
    .await
    .unwrap_or_else(|e| panic!("upgrade: {}", describe_err(e)));
    // let it register (hello is queued for it)
    tokio::time::sleep(Duration::from_millis(300)).await;

    // 1,500 events: archive/unarchive toggles of the entry
    const EVENTS: u64 = 1500;
    let started = Instant::now();
    let path_a = format!("{U}/feed/{id}/archive");
    let path_u = format!("{U}/feed/{id}/unarchive");
    for k in 0..EVENTS {
        let p = if k % 2 == 0 { &path_a } else { &path_u };
        let r = app.user(POST, p, &ext).go().await;
        assert_eq!(r.status, 200, "{r}");
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "producing {EVENTS} events took too long ({k} done)"
        );
    }
    let produced = started.elapsed();
    let latest = 1 + EVENTS; // created + toggles

    // now read everything the server kept for this socket, up to its close frame
    let (frames, code, why) = read_until_close(&mut slow, Duration::from_secs(30)).await;
    assert!(
        !frames.is_empty() && frames[0]["type"] == json!("hello"),
        "hello first: {:?}",
        frames.first()
    );
    // the entry's created event (seq 1) came before this socket joined
    assert_eq!(seq_of(&frames[0]), 1, "hello: {}", frames[0]);
    let events = &frames[1..];
    for (k, e) in events.iter().enumerate() {
        assert_eq!(
            seq_of(e),
            k as u64 + 2,
            "frames before the close are in order"
        );
    }
    let last = events.last().map(seq_of).unwrap_or(1);
    assert_eq!(
        code,
        Some(1013),
        "close code after {} events of {latest} (reason {why:?}, produced in {produced:?})",
        events.len()
    );
    assert!(
        last < latest,
        "the slow client was cut off before the end ({last} of {latest})"
    );
    assert!(
        events.len() >= 1000,
        "the frames queued before the limit are sent before the close ({})",
        events.len()
    );

    // it resumes with since_seq and gets exactly the rest
    let mut ws = connect_user(app, &ext, &format!("since_seq={last}")).await;
    hello(&mut ws, latest).await;
    for seq in last + 1..=latest {
        let e = match next_got(&mut ws, WAIT).await {
            Got::Text(v) => v,
            other => panic!("replay: expected seq {seq}, got {other:?}"),
        };
        assert_eq!(seq_of(&e), seq, "replay after 1013");
    }
    silence(&mut ws, 300).await;
}

#[tokio::test]
async fn sigterm_closes_open_sockets_with_1001_and_exits_0() {
    let f = fixture().await;
    let Fixture { mut app, .. } = f;
    let (ext, _) = app.create_user("term", json!({})).await;
    let mut ws = connect_user(&app, &ext, "").await;
    hello(&mut ws, 0).await;
    let mut b = connect_browser(&app, json!({"type": "auth", "user_id": ext}), "").await;
    hello(&mut b, 0).await;

    let stopper = tokio::task::spawn_blocking(move || {
        let t = Instant::now();
        let st = app.stop();
        (st, t.elapsed(), app)
    });
    let (fa, ca, wa) = read_until_close(&mut ws, Duration::from_secs(15)).await;
    let (fb, cb, wb) = read_until_close(&mut b, Duration::from_secs(15)).await;
    let (status, took, app) = stopper.await.unwrap();
    assert!(fa.is_empty() && fb.is_empty(), "no frames: {fa:?} {fb:?}");
    assert_eq!(ca, Some(1001), "close code (reason {wa:?})");
    assert_eq!(cb, Some(1001), "close code (reason {wb:?})");
    assert_eq!(
        status.code(),
        Some(0),
        "exit status {status:?}; output:\n{}",
        app.output.tail(20)
    );
    assert!(took <= Duration::from_secs(10), "exit took {took:?}");
}

#[tokio::test]
async fn delayed_in_app_entries_arrive_after_the_delay_interleaved_in_seq_order_with_rest_changes()
{
    // In-app deliveries due at once are settled with the run; delayed ones go
    // through the in-app delivery actor's batches. Both writers share one seq.
    let f = fixture().await;
    let inapp = in_app_channel(&f.app).await;
    let delayed = active_flow(
        &f.app,
        "later",
        json!([
            delay_step(1),
            channel_step(&inapp, None, "late {{ data.i }}")
        ]),
    )
    .await;
    let (ext, _) = f.app.create_user("delayed", json!({})).await;
    let (other, _) = f.app.create_user("delayed-other", json!({})).await;
    let mut ws = connect_user(&f.app, &ext, "").await;
    hello(&mut ws, 0).await;
    let mut ows = connect_user(&f.app, &other, "").await;
    hello(&mut ows, 0).await;

    let accepted = Instant::now();
    run_flow(
        &f.app,
        &s(&delayed["id"]),
        json!({"recipients": [{"external_id": ext}, {"external_id": other}], "data": {"i": 1}}),
    )
    .await;
    // an immediate entry and a REST change while the delayed one waits
    f.run(&ext, 2).await;
    let now_ev = frame(&mut ws).await;
    assert_event(&now_ev, "feed_entry.created", 1);
    assert_eq!(now_ev["entry"]["data"]["body"], json!("B2"), "{now_ev}");
    post_user(
        &f.app,
        &ext,
        &format!("/feed/{}/read", s(&now_ev["entry"]["id"])),
    )
    .await;
    assert_event(&frame(&mut ws).await, "feed_entry.updated", 2);

    let late = match next_got(&mut ws, Duration::from_secs(10)).await {
        Got::Text(v) => v,
        other => panic!("the delayed entry never arrived: {other:?}"),
    };
    assert!(
        accepted.elapsed() >= Duration::from_millis(900),
        "delivered before its delay: after {:?}",
        accepted.elapsed()
    );
    assert_event(&late, "feed_entry.created", 3);
    assert_eq!(late["entry"]["data"]["body"], json!("late 1"), "{late}");
    assert_eq!(
        late["meta"],
        json!({"unread_count": 1, "unseen_count": 1}),
        "{late}"
    );
    let oev = frame(&mut ows).await;
    assert_event(&oev, "feed_entry.created", 1);
    assert_eq!(oev["entry"]["data"]["body"], json!("late 1"), "{oev}");
    // the delivery behind it is sent, and the feed agrees with the frame
    let r = f
        .app
        .user(GET, &format!("{U}/feed/{}", s(&late["entry"]["id"])), &ext)
        .go()
        .await;
    assert_eq!(&r.ok(200), &late["entry"]);
    let d = wait_delivery_final(&f.app, &s(&late["entry"]["id"]), 10).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
    silence(&mut ws, 300).await;
    silence(&mut ows, 100).await;
}

// ================================================================ caps and authentication changes

#[tokio::test]
async fn a_user_over_the_socket_cap_loses_the_oldest_socket_with_4408() {
    if single_node_only("the socket cap is per node") {
        return;
    }
    let app = TestApp::spawn_with(&["--max-user-sockets", "3", "--user-rate", "100000"], &[]);
    let (ext, _) = app.create_user("many", json!({})).await;
    let (other, _) = app.create_user("other", json!({})).await;
    let mut socks = vec![];
    for _ in 0..3 {
        let mut ws = connect_user(&app, &ext, "").await;
        hello(&mut ws, 0).await;
        socks.push(ws);
    }
    // another user's socket does not count against this one
    let mut theirs = connect_user(&app, &other, "").await;
    hello(&mut theirs, 0).await;
    // the fourth pushes out the first (oldest), by header or by auth frame
    let mut fourth = connect_user(&app, &ext, "").await;
    hello(&mut fourth, 0).await;
    let (frames, code, why) = read_until_close(&mut socks[0], WAIT).await;
    assert!(frames.is_empty(), "{frames:?}");
    assert_eq!(code, Some(4408), "close code (reason {why:?})");
    let mut fifth = connect_browser(&app, json!({"type": "auth", "user_id": ext}), "").await;
    hello(&mut fifth, 0).await;
    let (_, code, why) = read_until_close(&mut socks[1], WAIT).await;
    assert_eq!(code, Some(4408), "close code (reason {why:?})");
    // the others stay open and keep receiving
    for ws in [&mut socks[2], &mut fourth, &mut fifth, &mut theirs] {
        silence(ws, 200).await;
    }
    let r = post_user(&app, &ext, "/feed/read_all").await;
    assert!(r.is_object(), "{r}");
}

#[tokio::test]
async fn sockets_still_authenticating_are_capped() {
    if single_node_only("the cap on sockets still authenticating is per node") {
        return;
    }
    let app = TestApp::spawn_with(&["--max-pending-sockets", "2"], &[]);
    let (ext, _) = app.create_user("pend", json!({})).await;
    let q = format!("api_key={}", enc(&app.public_key));
    // two silent browser sockets hold both places
    let mut a = open(&app, &q, &[]).await;
    let _b = open(&app, &q, &[]).await;
    match open_with(&app, &q, &[], None).await {
        Ok(_) => panic!("a third unauthenticated socket was accepted"),
        Err(tungstenite::Error::Http(r)) => {
            assert_eq!(r.status().as_u16(), 503);
            let body: Value =
                serde_json::from_slice(r.body().as_deref().unwrap_or_default()).unwrap();
            assert_eq!(
                body["error"]["code"],
                json!("service_unavailable"),
                "{body}"
            );
            assert!(r.headers().get("retry-after").is_some(), "{r:?}");
        }
        Err(e) => panic!("{}", describe_err(e)),
    }
    // header-authenticated sockets need no place
    let mut h = connect_user(&app, &ext, "").await;
    hello(&mut h, 0).await;
    // once one of them authenticates, its place is free again
    send(&mut a, json!({"type": "auth", "user_id": ext}).to_string()).await;
    hello(&mut a, 0).await;
    let mut c = open(&app, &q, &[]).await;
    send(&mut c, json!({"type": "auth", "user_id": ext}).to_string()).await;
    hello(&mut c, 0).await;
}

#[tokio::test]
async fn switching_security_mode_on_or_changing_the_signing_key_closes_sockets_with_4401() {
    let app = TestApp::spawn();
    let (ext, _) = app.create_user("sec", json!({})).await;
    // development mode: a bare user id authenticates, by header or auth frame
    let mut dev = connect_user(&app, &ext, "").await;
    hello(&mut dev, 0).await;
    let mut dev2 = connect_browser(&app, json!({"type": "auth", "user_id": ext}), "").await;
    hello(&mut dev2, 0).await;
    // a JWT socket, by header and by auth frame
    let pair = RsaPair::generate(2048);
    app.put_signing_key(&pair.public_pem).await;
    let token = pair.sign(&json!({"sub": ext, "exp": now_secs() + 600}));
    let jwt_headers = [
        ("x-service-api-key", app.public_key.as_str()),
        ("x-service-user-key", token.as_str()),
    ];
    let mut jwt = open(&app, "", &jwt_headers).await;
    hello(&mut jwt, 0).await;
    let mut jwt2 = connect_browser(&app, json!({"type": "auth", "user_key": token}), "").await;
    hello(&mut jwt2, 0).await;
    // setting a key while security mode is off does not concern id sockets
    silence(&mut dev, 200).await;

    // security mode on: the id sockets are closed, the JWT ones stay
    app.set_security_mode(true).await;
    for ws in [&mut dev, &mut dev2] {
        let (frames, code, why) = read_until_close(ws, WAIT).await;
        assert!(frames.is_empty(), "{frames:?}");
        assert_eq!(code, Some(4401), "close code (reason {why:?})");
    }
    silence(&mut jwt, 200).await;
    // and a bare user id no longer opens one
    match open_with(
        &app,
        "",
        &[
            ("x-service-api-key", &app.public_key),
            ("x-service-user-id", &ext),
        ],
        None,
    )
    .await
    {
        Ok(_) => panic!("a user id opened a socket in security mode"),
        Err(e) => assert_refused(e, 401, "user_key_jwt", "missing_user_key"),
    }
    // an unrelated change (the name) leaves them open
    app.put_project(&json!({"name": "renamed"})).await.ok(200);
    silence(&mut jwt, 200).await;

    // a new signing key: every JWT socket is closed (its token no longer verifies)
    let other = RsaPair::generate(2048);
    app.put_signing_key(&other.public_pem).await;
    for ws in [&mut jwt, &mut jwt2] {
        let (frames, code, why) = read_until_close(ws, WAIT).await;
        assert!(frames.is_empty(), "{frames:?}");
        assert_eq!(code, Some(4401), "close code (reason {why:?})");
    }
    // the old token is refused, a token of the new key opens one; deleting the
    // key closes that one too
    match open_with(&app, "", &jwt_headers, None).await {
        Ok(_) => panic!("a token of the old key opened a socket"),
        Err(e) => assert_refused(e, 401, "user_key_jwt", "invalid_signature"),
    }
    let fresh = other.sign(&json!({"sub": ext, "exp": now_secs() + 600}));
    let mut jwt3 = open(
        &app,
        "",
        &[
            ("x-service-api-key", &app.public_key),
            ("x-service-user-key", &fresh),
        ],
    )
    .await;
    hello(&mut jwt3, 0).await;
    app.admin(DELETE, &format!("{A}/project/signing_key"))
        .go()
        .await
        .ok(204);
    let (_, code, why) = read_until_close(&mut jwt3, WAIT).await;
    assert_eq!(code, Some(4401), "close code (reason {why:?})");
}

/// The auth frame written in the same packet as the upgrade request (bytes the
/// server reads together with the request head) is not lost when the socket
/// leaves the HTTP layer; client pings get pongs with their payload.
#[tokio::test]
async fn an_auth_frame_right_behind_the_upgrade_request_is_read() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio_tungstenite::tungstenite::protocol::Role;
    let f = fixture().await;
    let app = &f.app;
    let (ext, _) = app.create_user("eager", json!({})).await;

    let addr: std::net::SocketAddr = app.address.trim_start_matches("http://").parse().unwrap();
    let mut tcp = timeout(WAIT, tokio::net::TcpStream::connect(addr))
        .await
        .expect("TCP connect timed out")
        .expect("TCP connect");
    let mut bytes = format!(
        "GET {U}/feed/live?api_key={} HTTP/1.1\r\nhost: {addr}\r\nupgrade: websocket\r\nconnection: upgrade\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
        enc(&app.public_key)
    )
    .into_bytes();
    // one masked text frame: the auth frame
    let auth = json!({"type": "auth", "user_id": ext}).to_string();
    let mask = [0x11u8, 0x22, 0x33, 0x44];
    assert!(auth.len() < 126);
    bytes.extend_from_slice(&[0x81, 0x80 | auth.len() as u8]);
    bytes.extend_from_slice(&mask);
    bytes.extend(auth.bytes().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    tcp.write_all(&bytes).await.unwrap();

    // the response head, a byte at a time (what follows is WebSocket frames)
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let b = timeout(WAIT, tcp.read_u8())
            .await
            .expect("response head timed out")
            .expect("response head");
        head.push(b);
        assert!(head.len() < 8192, "response head too long");
    }
    let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 101"), "{head}");
    assert!(
        head.contains("sec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo="),
        "{head}"
    );
    let mut ws: Ws =
        WebSocketStream::from_raw_socket(MaybeTlsStream::Plain(tcp), Role::Client, None).await;
    hello(&mut ws, 0).await;

    timeout(
        WAIT,
        ws.send(Message::Ping(b"are you there".to_vec().into())),
    )
    .await
    .expect("ping timed out")
    .expect("ping");
    let pong = timeout(WAIT, ws.next())
        .await
        .expect("pong timed out")
        .expect("a frame")
        .expect("a frame");
    assert_eq!(pong, Message::Pong(b"are you there".to_vec().into()));

    f.run(&ext, 1).await;
    let e = expect_type(&mut ws, "feed_entry.created").await;
    assert_eq!(seq_of(&e), 1, "{e}");
}

/// A WebSocket upgrade to another route gets that route's usual answer, with
/// the error object.
#[tokio::test]
async fn an_upgrade_to_another_route_gets_that_routes_answer() {
    let f = fixture().await;
    let app = &f.app;
    let base = app.address.replacen("http://", "ws://", 1);
    let r = timeout(
        WAIT,
        tokio_tungstenite::connect_async(format!("{base}/admin/v1/flows")),
    )
    .await
    .expect("upgrade timed out");
    match r {
        Ok(_) => panic!("the upgrade must be refused"),
        Err(e) => assert_refused(e, 401, "api_key", "missing_api_key"),
    }
    // and the server goes on serving
    let mut ws = connect_user(app, &app.create_user("after", json!({})).await.0, "").await;
    hello(&mut ws, 0).await;
}

/// Issue 41: an entry's rendered action buttons come in its
/// `feed_entry.created` frame, a press (`interact`) comes as
/// `feed_entry.updated`, and `archive_all` sends one per entry it archived.
#[tokio::test]
async fn actions_interactions_and_archive_all_arrive_on_the_live_feed() {
    let app = TestApp::spawn_with(&["--user-rate", "100000"], &[]);
    let inapp = in_app_channel(&app).await;
    let mut step = channel_step(&inapp, None, "B{{ data.i }}");
    step["template"]["actions"] =
        json!([{"label": "Open {{ data.i }}", "url": "https://x/{{ data.i }}"}]);
    let flow = active_flow(&app, "live-act", json!([step])).await;
    let (ext, _) = app.create_user("act", json!({})).await;
    let mut ws = connect_user(&app, &ext, "").await;
    hello(&mut ws, 0).await;
    let mut ids = vec![];
    for i in 1..=2u64 {
        run_flow(
            &app,
            &s(&flow["id"]),
            json!({"recipients": [{"external_id": ext}], "data": {"i": i}}),
        )
        .await;
        let ev = frame(&mut ws).await;
        assert_event(&ev, "feed_entry.created", i);
        assert_eq!(
            ev["entry"]["data"]["actions"],
            json!([{"label": format!("Open {i}"), "url": format!("https://x/{i}")}]),
            "{ev}"
        );
        ids.push(s(&ev["entry"]["id"]));
    }
    let mut seq = 2;
    let rest = app
        .interact(&ext, &ids[0], &json!({"action": 0}))
        .await
        .ok(200);
    let ev = next(&mut ws, &mut seq).await;
    assert_eq!(ev["type"], json!("feed_entry.updated"), "{ev}");
    assert_eq!(ev["entry"], rest, "event entry vs interact response");
    assert_eq!(ev["entry"]["interacted_action"], json!(0));
    assert_eq!(ev["meta"], json!({"unread_count": 1, "unseen_count": 1}));

    let r = app.archive_all(&ext, &[]).await.ok(200);
    assert_eq!(r["updated"], json!(2), "{r}");
    let mut archived = vec![];
    for _ in 0..2 {
        let ev = next(&mut ws, &mut seq).await;
        assert_eq!(ev["type"], json!("feed_entry.updated"), "{ev}");
        assert_eq!(ev["entry"]["archived"], json!(true), "{ev}");
        archived.push(s(&ev["entry"]["id"]));
    }
    archived.sort();
    ids.sort();
    assert_eq!(archived, ids);
    let ev_meta = json!({"unread_count": 0, "unseen_count": 0});
    assert_eq!(r["meta"], ev_meta, "{r}");
}
