//! Event endpoints (docs/API.md, "Event endpoints"): CRUD and validation,
//! Standard Webhooks signatures checked with an implementation written here
//! from the specification, order per delivery, retries after 500s with the
//! same `webhook-id`, secret rotation (both signatures valid), replay,
//! disabling after the retry horizon, the egress guard, and `kill -9`
//! between the commit and the send.
//!
//! The receiver is a tiny HTTP/1.1 server on 127.0.0.1 written here (it
//! records every request, can answer 500 a number of times, and can be
//! stopped and started again on the same port).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU16, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::engine_helpers::*;
use crate::helpers::*;

const E: &str = "/admin/v1/webhook_endpoints";

/// One request the receiver got, and what it answered.
#[derive(Debug, Clone)]
struct Got {
    headers: HashMap<String, String>,
    body: Vec<u8>,
    answered: u16,
}

impl Got {
    fn id(&self) -> String {
        self.headers.get("webhook-id").cloned().unwrap_or_default()
    }
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
    fn event_type(&self) -> String {
        s(&self.json()["type"])
    }
}

/// A local event receiver.
struct Receiver {
    port: u16,
    got: Arc<Mutex<Vec<Got>>>,
    /// Requests still to answer 500.
    fail: Arc<AtomicUsize>,
    /// The status every other request gets.
    status: Arc<AtomicU16>,
    reply: Arc<String>,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    async fn start(fail_first: usize) -> Receiver {
        Receiver::start_on(0, fail_first, 200, String::new()).await
    }

    async fn start_on(port: u16, fail_first: usize, status: u16, reply: String) -> Receiver {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("bind the receiver");
        let port = listener.local_addr().unwrap().port();
        let got: Arc<Mutex<Vec<Got>>> = Arc::default();
        let fail = Arc::new(AtomicUsize::new(fail_first));
        let status = Arc::new(AtomicU16::new(status));
        let reply = Arc::new(reply);
        let (g, f, st, rp) = (got.clone(), fail.clone(), status.clone(), reply.clone());
        let task = tokio::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                let (g, f, st, rp) = (g.clone(), f.clone(), st.clone(), rp.clone());
                tokio::spawn(async move {
                    let Some((headers, body)) = read_request(&mut sock).await else {
                        return;
                    };
                    let failing = f
                        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                        .is_ok();
                    let answered = if failing {
                        500
                    } else {
                        st.load(Ordering::SeqCst)
                    };
                    g.lock().unwrap().push(Got {
                        headers,
                        body,
                        answered,
                    });
                    let resp = format!(
                        "HTTP/1.1 {answered} X\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{}",
                        rp.len(),
                        rp
                    );
                    let _ = sock.write_all(resp.as_bytes()).await;
                    let _ = sock.shutdown().await;
                });
            }
        });
        Receiver {
            port,
            got,
            fail,
            status,
            reply,
            task,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/events", self.port)
    }

    fn got(&self) -> Vec<Got> {
        self.got.lock().unwrap().clone()
    }

    /// Requests answered 2xx.
    fn delivered(&self) -> Vec<Got> {
        self.got()
            .into_iter()
            .filter(|g| (200..300).contains(&g.answered))
            .collect()
    }

    fn stop(self) -> u16 {
        self.task.abort();
        let _ = (self.fail, self.status, self.reply);
        self.port
    }
}

/// Reads one HTTP/1.1 request: lower-cased headers and the body.
async fn read_request(
    sock: &mut tokio::net::TcpStream,
) -> Option<(HashMap<String, String>, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut headers = HashMap::new();
    for line in head.lines().skip(1) {
        if let Some((k, v)) = line.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some((headers, body))
}

/// The Standard Webhooks check, from the specification: the key is the
/// base64 part of `whsec_…` decoded; the signed content is
/// `{webhook-id}.{webhook-timestamp}.{body}`; `webhook-signature` holds
/// space-separated `v1,<base64 HMAC-SHA256>` values, one of which must match.
fn verifies(g: &Got, secret: &str) -> bool {
    let b64 = secret.strip_prefix("whsec_").expect("whsec_ prefix");
    let key = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .expect("base64 secret");
    let (Some(id), Some(ts), Some(sig)) = (
        g.headers.get("webhook-id"),
        g.headers.get("webhook-timestamp"),
        g.headers.get("webhook-signature"),
    ) else {
        return false;
    };
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{ts}.").as_bytes());
    mac.update(&g.body);
    let want = format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    );
    sig.split(' ').any(|s| s == want)
}

/// `POST /webhook_endpoints`; asserts 201 and returns `(endpoint, secret)`.
async fn create_endpoint(app: &TestApp, body: Value) -> (Value, String) {
    let r = app.admin(POST, E).json(&body).go().await;
    let ep = r.ok(201);
    let secret = s(&ep["secret"]);
    assert!(secret.starts_with("whsec_"), "{r}");
    (ep, secret)
}

/// A flow with one chat step on a webhook channel to `hook_url`.
async fn chat_flow(app: &TestApp, hook_url: &str) -> Value {
    let ch = create_webhook_channel(app, hook_url, None).await;
    active_flow(
        app,
        "ev",
        json!([channel_step(&s(&ch["id"]), Some("S"), "Hello")]),
    )
    .await
}

/// Waits until `pred` holds for what the receiver got (2xx answers only).
async fn wait_for(rx: &Receiver, what: &str, pred: impl Fn(&[Got]) -> bool) -> Vec<Got> {
    let d = Deadline::new(what, 30);
    loop {
        let got = rx.delivered();
        if pred(&got) {
            return got;
        }
        let types: Vec<String> = got.iter().map(|g| g.event_type()).collect();
        d.tick(format!("{types:?}")).await;
    }
}

fn has(got: &[Got], t: &str, id: &str) -> bool {
    got.iter()
        .any(|g| g.event_type() == t && g.json()["data"]["id"] == json!(id))
}

#[tokio::test]
async fn endpoints_are_created_read_changed_and_deleted_without_showing_the_secret() {
    let app = TestApp::spawn();
    let (ep, _) = create_endpoint(
        &app,
        json!({"url": "https://example.com/events", "event_types": ["delivery.sent"]}),
    )
    .await;
    let id = s(&ep["id"]);
    assert_eq!(ep["event_types"], json!(["delivery.sent"]), "{ep}");
    assert_eq!(ep["enabled"], json!(true), "{ep}");
    assert_eq!(ep["disabled_reason"], Value::Null, "{ep}");

    let got = app.admin(GET, &format!("{E}/{id}")).go().await.ok(200);
    assert!(got.get("secret").is_none(), "{got}");
    assert_eq!(got["url"], json!("https://example.com/events"));
    let list = app.admin(GET, E).go().await.page();
    assert!(list["items"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["id"] == json!(id)));
    assert!(!list.to_string().contains("whsec_"), "{list}");

    let put = app
        .admin(PUT, &format!("{E}/{id}"))
        .json(&json!({"event_types": ["*"], "enabled": false}))
        .go()
        .await
        .ok(200);
    assert_eq!(put["event_types"], json!(["*"]), "{put}");
    assert_eq!(put["enabled"], json!(false), "{put}");

    let r = app
        .admin(POST, E)
        .json(&json!({"url": "ftp://x", "event_types": ["delivery.sent", "delivery.nope"]}))
        .go()
        .await;
    assert_validation(&r, &[("url", "format"), ("event_types.1", "inclusion")]);
    let r = app.admin(POST, E).json(&json!({})).go().await;
    assert_validation(&r, &[("url", "required")]);
    let r = app
        .admin(POST, E)
        .json(&json!({"url": "https://example.com/e", "event_types": []}))
        .go()
        .await;
    assert_validation(&r, &[("event_types", "length")]);
    let r = app
        .admin(POST, &format!("{E}/{id}/replay"))
        .json(&json!({"since": "yesterday"}))
        .go()
        .await;
    assert_validation(&r, &[("since", "format")]);

    app.admin(DELETE, &format!("{E}/{id}")).go().await.ok(204);
    let r = app.admin(GET, &format!("{E}/{id}")).go().await;
    assert_error(&r, 404, "not_found");
    let r = app.admin(DELETE, &format!("{E}/{id}")).go().await;
    assert_error(&r, 404, "not_found");
}

/// The delivery fails once (so it is retrying, then sent) and the receiver
/// answers 500 to the first two events: every event arrives signed, a
/// delivery's events arrive in order, and a retried event keeps its id.
#[tokio::test]
async fn events_are_signed_retried_with_the_same_id_and_ordered_per_delivery() {
    let app = TestApp::spawn();
    let rx = Receiver::start(2).await;
    let (_, secret) = create_endpoint(&app, json!({"url": rx.url()})).await;
    let hook = mock_server().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(wiremock::ResponseTemplate::new(503))
        .up_to_n_times(1)
        .mount(&hook)
        .await;
    mock_always(&hook, 200).await;
    let flow = chat_flow(&app, &hook_url(&hook)).await;
    let ext = new_ext("ev");
    app.create_user_as(&ext, json!({})).await;
    let (run, n) = run_one(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}]}),
    )
    .await;
    let did = s(&deliveries(&n)[0]["id"]);
    let nid = s(&n["id"]);
    let got = wait_for(&rx, "every event of the run", |g| {
        has(g, "delivery.sent", &did)
            && has(g, "notification.processed", &nid)
            && has(g, "flow_run.accepted", &s(&run["id"]))
    })
    .await;
    let all = rx.got();
    for g in &all {
        assert!(verifies(g, &secret), "bad signature: {g:?}");
        let body = g.json();
        assert!(
            body["timestamp"].is_string() && body["data"].is_object(),
            "{body}"
        );
    }
    // the first two answers were 500s; their events came again, same id
    assert_eq!(all[0].answered, 500);
    assert_eq!(all[1].answered, 500);
    for failed in &all[..2] {
        assert!(
            got.iter()
                .any(|g| g.id() == failed.id() && g.body == failed.body),
            "event {} was not retried with its id",
            failed.id()
        );
    }
    // the delivery's events, in order: retrying, then sent
    let of_delivery: Vec<String> = got
        .iter()
        .filter(|g| g.json()["data"]["id"] == json!(did))
        .map(|g| g.event_type())
        .collect();
    let first_sent = of_delivery
        .iter()
        .position(|t| t == "delivery.sent")
        .unwrap();
    let retrying = of_delivery
        .iter()
        .position(|t| t == "delivery.retrying")
        .expect("a delivery.retrying event");
    assert!(retrying < first_sent, "{of_delivery:?}");
    let sent = got
        .iter()
        .find(|g| g.event_type() == "delivery.sent")
        .unwrap()
        .json();
    assert_eq!(sent["data"]["status"], json!("sent"), "{sent}");
    assert_eq!(sent["data"]["attempts"], json!(2), "{sent}");
}

/// After a rotation both secrets sign, and replay sends events again with
/// their ids; the attempts are listed.
#[tokio::test]
async fn rotation_signs_with_both_secrets_and_replay_resends() {
    let app = TestApp::spawn();
    let rx = Receiver::start(0).await;
    let since = chrono::Utc::now().to_rfc3339();
    let (ep, old) = create_endpoint(
        &app,
        json!({"url": rx.url(), "event_types": ["flow_run.accepted"]}),
    )
    .await;
    let id = s(&ep["id"]);
    let rot = app
        .admin(POST, &format!("{E}/{id}/rotate_secret"))
        .go()
        .await
        .ok(200);
    let new = s(&rot["secret"]);
    assert!(new.starts_with("whsec_") && new != old, "{rot}");
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let flow = chat_flow(&app, &hook_url(&hook)).await;
    let ext = new_ext("rot");
    app.create_user_as(&ext, json!({})).await;
    let (run, _) = run_one(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}]}),
    )
    .await;
    let rid = s(&run["id"]);
    let got = wait_for(&rx, "flow_run.accepted", |g| {
        has(g, "flow_run.accepted", &rid)
    })
    .await;
    assert_eq!(got.len(), 1, "only the wanted type arrives: {got:?}");
    let g = &got[0];
    assert!(verifies(g, &old), "old secret: {g:?}");
    assert!(verifies(g, &new), "new secret: {g:?}");
    assert_eq!(
        g.headers["webhook-signature"].split(' ').count(),
        2,
        "{g:?}"
    );

    let r = app
        .admin(POST, &format!("{E}/{id}/replay"))
        .json(&json!({"since": since}))
        .go()
        .await
        .ok(200);
    assert_eq!(r["queued"], json!(1), "{r}");
    let again = wait_for(&rx, "the replayed event", |g| g.len() >= 2).await;
    assert_eq!(again[1].id(), again[0].id());
    assert_eq!(again[1].body, again[0].body);

    // (recorded once the receiver answered: on a cluster, by another node)
    let d = Deadline::new("both attempts to be recorded", 10);
    let page = loop {
        let page = app
            .admin(GET, &format!("{E}/{id}/attempts"))
            .go()
            .await
            .page();
        if page["items"].as_array().unwrap().len() >= 2 {
            break page;
        }
        d.tick(&page).await;
    };
    let items = page["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{page}");
    for a in items {
        assert_eq!(a["status_code"], json!(200), "{a}");
        assert_eq!(a["error"], Value::Null, "{a}");
        assert!(a["latency_ms"].is_u64(), "{a}");
        assert_eq!(a["event_type"], json!("flow_run.accepted"), "{a}");
    }
}

/// An endpoint that answers 500 for longer than the retry horizon is
/// disabled with its reason. Its answers, from loopback (the guard is off
/// here, which opens every range), are kept as their status only.
#[tokio::test]
async fn an_endpoint_failing_past_the_horizon_is_disabled() {
    let app = TestApp::spawn_with(&["--event-retry-horizon", "2"], &[]);
    let rx = Receiver::start_on(0, 0, 500, "x".repeat(3000)).await;
    let (ep, _) = create_endpoint(
        &app,
        json!({"url": rx.url(), "event_types": ["flow_run.accepted"]}),
    )
    .await;
    let id = s(&ep["id"]);
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let flow = chat_flow(&app, &hook_url(&hook)).await;
    let ext = new_ext("dis");
    app.create_user_as(&ext, json!({})).await;
    run_one(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}]}),
    )
    .await;
    let d = Deadline::new("the endpoint disabled", 30);
    let ep = loop {
        let ep = app.admin(GET, &format!("{E}/{id}")).go().await.ok(200);
        if ep["enabled"] == json!(false) {
            break ep;
        }
        d.tick(&ep).await;
    };
    let reason = s(&ep["disabled_reason"]);
    assert!(reason.contains("500"), "{ep}");
    let page = app
        .admin(GET, &format!("{E}/{id}/attempts"))
        .go()
        .await
        .page();
    let items = page["items"].as_array().unwrap();
    assert!(items.len() >= 2, "retried before giving up: {page}");
    for a in items {
        assert_eq!(a["status_code"], json!(500), "{a}");
        assert_eq!(a["response"], json!(""), "{a}");
        assert!(s(&a["error"]).contains("500"), "{a}");
    }
    // enabling it again clears the reason
    let ep = app
        .admin(PUT, &format!("{E}/{id}"))
        .json(&json!({"enabled": true}))
        .go()
        .await
        .ok(200);
    assert_eq!(ep["disabled_reason"], Value::Null, "{ep}");
    let _ = rx.stop();
}

/// With the egress guard on, a loopback endpoint is refused unless the
/// operator allows it.
#[tokio::test]
async fn the_egress_guard_refuses_private_endpoints_unless_allowed() {
    let app = TestApp::spawn_with(&[], &[GUARD_ON]);
    let r = app
        .admin(POST, E)
        .json(&json!({"url": "http://127.0.0.1:9/events"}))
        .go()
        .await;
    assert_validation(&r, &[("url", "exclusion")]);

    let app = TestApp::spawn_with(&["--egress-allow", "127.0.0.1"], &[GUARD_ON]);
    let rx = Receiver::start(0).await;
    let (_, secret) = create_endpoint(
        &app,
        json!({"url": rx.url(), "event_types": ["flow_run.accepted"]}),
    )
    .await;
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let flow = chat_flow(&app, &hook_url(&hook)).await;
    let ext = new_ext("eg");
    app.create_user_as(&ext, json!({})).await;
    let (run, _) = run_one(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}]}),
    )
    .await;
    let got = wait_for(&rx, "the allowed endpoint's event", |g| {
        has(g, "flow_run.accepted", &s(&run["id"]))
    })
    .await;
    assert!(verifies(&got[0], &secret));
}

/// An endpoint in a range the operator opened (`--egress-allow`, the guard
/// on) is an internal service: its attempts keep the status and no byte of
/// its answer, whether a 2xx or an error, and neither does the reason its
/// endpoint was disabled for (docs/SECURITY.md; issue 35, item 6).
#[tokio::test]
async fn an_opened_range_s_answers_are_kept_as_their_status_only() {
    const INTERNAL: &str = "internal-answer-7f3a";
    let args = [
        "--egress-allow",
        "127.0.0.0/8",
        "--event-retry-horizon",
        "2",
    ];
    let app = TestApp::spawn_with(&args, &[GUARD_ON]);
    let ok = Receiver::start_on(0, 0, 200, format!("{{\"token\": \"{INTERNAL}\"}}")).await;
    let failing = Receiver::start_on(0, 0, 500, format!("{{\"error\": \"{INTERNAL}\"}}")).await;
    let mut ids = vec![];
    for rx in [&ok, &failing] {
        let (ep, _) = create_endpoint(
            &app,
            json!({"url": rx.url(), "event_types": ["flow_run.accepted"]}),
        )
        .await;
        ids.push(s(&ep["id"]));
    }
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(&app, "opened", json!([channel_step(&inapp, None, "Hi")])).await;
    let ext = new_ext("opened");
    app.create_user_as(&ext, json!({})).await;
    run_one(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}]}),
    )
    .await;

    // the failing one retries past the horizon and is disabled
    let d = Deadline::new("the failing endpoint disabled", 30);
    let disabled = loop {
        let ep = app
            .admin(GET, &format!("{E}/{}", ids[1]))
            .go()
            .await
            .ok(200);
        if ep["enabled"] == json!(false) {
            break ep;
        }
        d.tick(&ep).await;
    };
    let attempts = |id: &str| {
        let path = format!("{E}/{id}/attempts");
        let app = &app;
        async move { app.admin(GET, &path).go().await.page() }
    };
    let page = attempts(&ids[0]).await;
    let items = page["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{page}");
    assert_eq!(items[0]["status_code"], json!(200), "{page}");
    assert_eq!(items[0]["response"], json!(""), "{page}");
    assert_eq!(items[0]["error"], Value::Null, "{page}");
    let failed = attempts(&ids[1]).await;
    let items = failed["items"].as_array().unwrap();
    assert!(items.len() >= 2, "retried before giving up: {failed}");
    for a in items {
        assert_eq!(a["status_code"], json!(500), "{a}");
        assert_eq!(a["response"], json!(""), "{a}");
        assert_eq!(a["error"], json!("the endpoint answered 500"), "{a}");
    }
    // the receivers did answer with it; nothing of it is shown
    assert!(ok.got().len() == 1 && failing.got().len() >= 2);
    for shown in [page.to_string(), failed.to_string(), disabled.to_string()] {
        assert!(
            !shown.contains(INTERNAL),
            "the internal answer is shown: {shown}"
        );
    }
    let _ = (ok.stop(), failing.stop());
}

/// `kill -9` with events committed but not sent (the receiver is down):
/// after the restart every event of what the store kept arrives, and any
/// duplicate carries the same id.
#[tokio::test]
async fn kill9_between_commit_and_send_loses_no_event() {
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let mut app = TestApp::spawn_on(dir.path(), &keys);
    // reserve a port, then leave it closed: the sender's attempts fail
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/events");
    let (_, secret) = create_endpoint(&app, json!({"url": url})).await;
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let flow = chat_flow(&app, &hook_url(&hook)).await;
    let mut dids = vec![];
    for i in 0..3 {
        let ext = new_ext(&format!("k9{i}"));
        app.create_user_as(&ext, json!({})).await;
        let (_, n) = run_one(
            &app,
            &s(&flow["id"]),
            json!({"recipients": [{"external_id": ext}]}),
        )
        .await;
        dids.push(s(&deliveries(&n)[0]["id"]));
    }
    for did in &dids {
        wait_delivery_final(&app, did, 30).await;
    }
    app.kill9();
    let app = TestApp::spawn_on(dir.path(), &keys);
    let rx = Receiver::start_on(port, 0, 200, String::new()).await;
    // what the store kept decides what must arrive
    let mut want: Vec<(String, String)> = vec![];
    for did in &dids {
        let d = app
            .admin(GET, &format!("{A}/deliveries/{did}"))
            .go()
            .await
            .ok(200);
        if d["status"] == json!("sent") {
            want.push(("delivery.sent".into(), did.clone()));
        }
    }
    let got = wait_for(&rx, "every kept event after the restart", |g| {
        want.iter().all(|(t, id)| has(g, t, id))
    })
    .await;
    let mut ids_of: HashMap<(String, String), HashSet<String>> = HashMap::new();
    for g in &got {
        assert!(verifies(g, &secret), "{g:?}");
        ids_of
            .entry((g.event_type(), s(&g.json()["data"]["id"])))
            .or_default()
            .insert(g.id());
    }
    for (k, ids) in ids_of {
        assert_eq!(ids.len(), 1, "{k:?} came with several ids: {ids:?}");
    }
    drop(app);
}

/// Feed entries: a read, a click, an archive and `seen_all` each send their
/// event, after the entry's `delivery.sent`, in order.
#[tokio::test]
async fn feed_entry_changes_send_their_events_in_order() {
    let app = TestApp::spawn();
    let rx = Receiver::start(0).await;
    let (_, secret) = create_endpoint(
        &app,
        json!({"url": rx.url(), "event_types": [
            "delivery.sent", "feed_entry.seen", "feed_entry.read",
            "feed_entry.clicked", "feed_entry.archived"]}),
    )
    .await;
    let inbox = in_app_channel(&app).await;
    let flow = active_flow(&app, "fe", json!([channel_step(&inbox, None, "Hi")])).await;
    let ext = new_ext("fe");
    app.create_user_as(&ext, json!({})).await;
    let mut ids = vec![];
    for _ in 0..2 {
        let (_, n) = run_one(
            &app,
            &s(&flow["id"]),
            json!({"recipients": [{"external_id": ext}]}),
        )
        .await;
        ids.push(s(&deliveries(&n)[0]["id"]));
    }
    let (first, second) = (&ids[0], &ids[1]);
    for action in ["read", "clicked", "archive"] {
        app.user(POST, &format!("/user/v1/feed/{first}/{action}"), &ext)
            .go()
            .await
            .ok(200);
    }
    app.user(POST, "/user/v1/feed/seen_all", &ext)
        .go()
        .await
        .ok(200);
    let got = wait_for(&rx, "the feed events", |g| {
        has(g, "feed_entry.archived", first) && has(g, "feed_entry.seen", second)
    })
    .await;
    let of = |id: &str| -> Vec<String> {
        got.iter()
            .filter(|g| g.json()["data"]["id"] == json!(id))
            .map(|g| g.event_type())
            .collect()
    };
    assert_eq!(
        of(first),
        [
            "delivery.sent",
            "feed_entry.seen",
            "feed_entry.read",
            "feed_entry.clicked",
            "feed_entry.archived"
        ]
    );
    assert_eq!(of(second), ["delivery.sent", "feed_entry.seen"]);
    assert!(got.iter().all(|g| verifies(g, &secret)));
}

/// A push service answering 410 removes the subscription: the endpoint
/// gets `push_subscription.removed` and the delivery's `delivery.failed`,
/// and the notification's trace records the removal.
#[tokio::test]
async fn a_gone_push_subscription_sends_its_removal() {
    use crate::providers_support::{active_channel, subscribe, Subscriber};
    let ps = mock_server().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(wiremock::ResponseTemplate::new(410))
        .mount(&ps)
        .await;
    let app = TestApp::spawn();
    let rx = Receiver::start(0).await;
    create_endpoint(
        &app,
        json!({"url": rx.url(), "event_types": ["push_subscription.removed", "delivery.failed"]}),
    )
    .await;
    let ch = active_channel(
        &app,
        "web_push",
        "web_push",
        json!({"subject": "mailto:ops@herald.test"}),
    )
    .await;
    let cid = s(&ch["id"]);
    let flow = active_flow(&app, "wp", json!([channel_step(&cid, Some("S"), "B")])).await;
    let (ext, _) = app.create_user("gone", json!({})).await;
    let gone = format!("{}/gone/{}", ps.uri(), random_hex());
    subscribe(
        &app,
        &ext,
        &cid,
        json!({"identifier": gone, "keys": Subscriber::new().keys()}),
    )
    .await
    .ok(201);
    let (_, n) = run_one(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}]}),
    )
    .await;
    let did = s(&deliveries(&n)[0]["id"]);
    let got = wait_for(&rx, "the removal and the failure", |g| {
        has(g, "delivery.failed", &did)
            && g.iter()
                .any(|x| x.event_type() == "push_subscription.removed")
    })
    .await;
    let removed = got
        .iter()
        .find(|g| g.event_type() == "push_subscription.removed")
        .unwrap()
        .json();
    assert_eq!(removed["data"]["identifier"], json!(gone), "{removed}");
    assert_eq!(removed["data"]["channel_id"], json!(cid), "{removed}");
    let t = app
        .admin(GET, &format!("{A}/notifications/{}/trace", s(&n["id"])))
        .go()
        .await
        .ok(200);
    let e = t["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["code"] == json!("subscription.removed"))
        .unwrap_or_else(|| panic!("no subscription.removed in {t}"))
        .clone();
    assert_eq!(e["args"]["count"], json!(1), "{t}");
}

/// An endpoint that never answers holds only its own events back: another
/// endpoint's attempt is sent and recorded while the hanging one has not
/// even finished its first attempt (which waits for the 10 s timeout).
#[tokio::test]
async fn a_hanging_endpoint_does_not_hold_the_others_back() {
    let app = TestApp::spawn();
    // accepts connections and reads, never answers
    let hang = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hang_url = format!("http://{}/events", hang.local_addr().unwrap());
    let holder = tokio::spawn(async move {
        let mut held = vec![];
        while let Ok((sock, _)) = hang.accept().await {
            held.push(sock);
        }
    });
    let (hung, _) = create_endpoint(
        &app,
        json!({"url": hang_url, "event_types": ["flow_run.accepted"]}),
    )
    .await;
    let rx = Receiver::start(0).await;
    let (good, _) = create_endpoint(
        &app,
        json!({"url": rx.url(), "event_types": ["flow_run.accepted"]}),
    )
    .await;
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let flow = chat_flow(&app, &hook_url(&hook)).await;
    let ext = new_ext("hang");
    app.create_user_as(&ext, json!({})).await;
    let (run, _) = run_one(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}]}),
    )
    .await;
    wait_for(&rx, "the answering endpoint's event", |g| {
        has(g, "flow_run.accepted", &s(&run["id"]))
    })
    .await;
    // the answered attempt is recorded without waiting for the hanging one
    let d = Deadline::new("the answered attempt recorded", 30);
    loop {
        let page = app
            .admin(GET, &format!("{E}/{}/attempts", s(&good["id"])))
            .go()
            .await
            .page();
        if !page["items"].as_array().unwrap().is_empty() {
            break;
        }
        d.tick(&page).await;
    }
    let page = app
        .admin(GET, &format!("{E}/{}/attempts", s(&hung["id"])))
        .go()
        .await
        .page();
    assert_eq!(
        page["items"].as_array().unwrap().len(),
        0,
        "the hanging endpoint's attempt is still waiting: {page}"
    );
    holder.abort();
}

/// `notification.processed` carries the notification as
/// `GET /admin/v1/notifications/{id}` shows it (docs/API.md §15), `status`,
/// users, run data and deliveries included: one settled by its provider's
/// answer, one processed as the run was accepted (in-app only), one a
/// throttle step stopped (`throttled`) and one that joined a batch
/// (`batched`, whose `notification.batched` carries the same). Nothing is left out of the
/// comparison: the GET is made as the event arrives, before anything
/// (a feed entry read, a user changed) can move on.
#[tokio::test]
async fn notification_processed_carries_the_notification_as_get_shows_it() {
    let app = TestApp::spawn();
    let rx = Receiver::start(0).await;
    create_endpoint(
        &app,
        json!({"url": rx.url(), "event_types": ["notification.processed", "notification.batched"]}),
    )
    .await;
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let chat = chat_flow(&app, &hook_url(&hook)).await;
    let inbox = in_app_channel(&app).await;
    let feed = active_flow(
        &app,
        "evp",
        json!([
            {"type": "throttle", "limit": 1, "window": "1h"},
            channel_step(&inbox, None, "Hi {{ data.n }}")
        ]),
    )
    .await;
    let (ext, actor) = (new_ext("evp"), new_ext("eva"));
    app.create_user_as(&ext, json!({"first_name": "Ann"})).await;
    app.create_user_as(&actor, json!({"first_name": "Bo"}))
        .await;
    let mut nids = vec![];
    for (flow, n) in [(&chat, 1), (&feed, 2), (&feed, 3)] {
        let (_, got) = run_one(
            &app,
            &s(&flow["id"]),
            json!({"recipients": [{"external_id": ext}], "actor": actor, "data": {"n": n}}),
        )
        .await;
        nids.push(s(&got["id"]));
    }
    // A batch: the first run opens it (and waits an hour), the second joins
    // and ends there, `batched`, with both events.
    let digest = active_flow(
        &app,
        "evb",
        json!([{"type": "batch", "window": "1h"}, channel_step(&inbox, None, "Digest")]),
    )
    .await;
    let body = json!({"recipients": [{"external_id": ext}], "data": {"n": 4}});
    run_flow(&app, &s(&digest["id"]), body.clone()).await;
    let (_, joined) = run_one(&app, &s(&digest["id"]), body).await;
    nids.push(s(&joined["id"]));
    let got = wait_for(&rx, "notification.processed of each run", |g| {
        nids.iter().all(|id| has(g, "notification.processed", id))
    })
    .await;
    let mut statuses = vec![];
    for id in &nids {
        let event = got
            .iter()
            .find(|g| {
                g.event_type() == "notification.processed" && g.json()["data"]["id"] == json!(id)
            })
            .unwrap()
            .json();
        let shown = app
            .admin(GET, &format!("/admin/v1/notifications/{id}"))
            .go()
            .await
            .ok(200);
        assert_eq!(
            event["data"], shown,
            "the event's data is not the GET's body"
        );
        statuses.push(s(&shown["status"]));
    }
    assert_eq!(statuses, ["processed", "processed", "throttled", "batched"]);
    let batched = got
        .iter()
        .find(|g| g.event_type() == "notification.batched")
        .expect("a notification.batched event")
        .json();
    let shown = app
        .admin(GET, &format!("/admin/v1/notifications/{}", nids[3]))
        .go()
        .await
        .ok(200);
    assert_eq!(batched["data"], shown);
    assert!(shown["batched_into"].is_string(), "{shown}");
    let first = &got
        .iter()
        .find(|g| g.json()["data"]["id"] == json!(nids[0]))
        .unwrap()
        .json()["data"];
    assert_eq!(first["recipient"]["first_name"], json!("Ann"), "{first}");
    assert_eq!(first["actor"]["first_name"], json!("Bo"), "{first}");
    assert_eq!(first["data"], json!({"n": 1}), "{first}");
    assert_eq!(first["deliveries"][0]["status"], json!("sent"), "{first}");
}

/// Issue 41: pressing an entry's action sends `feed_entry.interacted`
/// (with `feed_entry.seen` and `.read`, which the press implies), and
/// `archive_all` sends `feed_entry.archived` per entry.
#[tokio::test]
async fn interact_and_archive_all_send_their_events() {
    let app = TestApp::spawn();
    let rx = Receiver::start(0).await;
    let (_, secret) = create_endpoint(
        &app,
        json!({"url": rx.url(), "event_types": [
            "feed_entry.seen", "feed_entry.read", "feed_entry.interacted",
            "feed_entry.archived"]}),
    )
    .await;
    let inbox = in_app_channel(&app).await;
    let mut step = channel_step(&inbox, None, "Hi");
    step["template"]["actions"] = json!([{"label": "Go", "url": "https://example.com/go"}]);
    let flow = active_flow(&app, "fi", json!([step])).await;
    let ext = new_ext("fi");
    app.create_user_as(&ext, json!({})).await;
    let (_, n) = run_one(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}]}),
    )
    .await;
    let id = s(&deliveries(&n)[0]["id"]);
    app.interact(&ext, &id, &json!({"action": 0})).await.ok(200);
    app.archive_all(&ext, &[]).await.ok(200);
    let got = wait_for(&rx, "the feed events", |g| {
        has(g, "feed_entry.archived", &id)
    })
    .await;
    let of: Vec<String> = got
        .iter()
        .filter(|g| g.json()["data"]["id"] == json!(id))
        .map(|g| g.event_type())
        .collect();
    assert_eq!(
        of,
        [
            "feed_entry.seen",
            "feed_entry.read",
            "feed_entry.interacted",
            "feed_entry.archived"
        ]
    );
    let pressed = got
        .iter()
        .find(|g| g.event_type() == "feed_entry.interacted")
        .unwrap()
        .json();
    assert_eq!(pressed["data"]["interacted_action"], json!(0), "{pressed}");
    assert!(got.iter().all(|g| verifies(g, &secret)));
}
