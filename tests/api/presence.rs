//! docs/API.md "Presence": step conditions over `recipient.online` (a
//! live-feed socket open on any node) and `recipient.last_seen_at` (compared
//! with a relative duration, project time), decided when the step is
//! reached: an email step skipped while the user has a real WebSocket open
//! and sent once it closed (on a cluster, with the socket on the first node
//! and the steps run by every node), a reminder for users not seen for a
//! week on a test clock, and the validation of both paths.

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::engine_helpers::*;
use crate::helpers::*;
use crate::providers_support::*;

type Ws = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

const WAIT: Duration = Duration::from_secs(10);

/// A live-feed socket of `ext` on the node at `address`, once greeted
/// (`hello`): from then on the user counts as online.
async fn open_socket(app: &TestApp, address: &str, ext: &str) -> Ws {
    let url = format!("{}{U}/feed/live", address.replacen("http://", "ws://", 1));
    let mut req = url.into_client_request().unwrap();
    let h = req.headers_mut();
    h.insert(
        "x-service-api-key",
        HeaderValue::from_str(&app.public_key).unwrap(),
    );
    h.insert("x-service-user-id", HeaderValue::from_str(ext).unwrap());
    let (mut ws, _) = timeout(WAIT, tokio_tungstenite::connect_async(req))
        .await
        .expect("WebSocket handshake timed out")
        .expect("live feed upgrade");
    loop {
        let m = timeout(WAIT, ws.next())
            .await
            .expect("no hello in time")
            .expect("socket ended before hello")
            .expect("socket error before hello");
        if let Message::Text(t) = m {
            let v: Value = serde_json::from_str(t.as_str()).unwrap();
            assert_eq!(v["type"], json!("hello"), "{v}");
            return ws;
        }
    }
}

fn cond_step(channel: &str, subject: Option<&str>, body: &str, cond: Value) -> Value {
    let mut st = channel_step(channel, subject, body);
    st["if"] = cond;
    st
}

/// The one delivery of `n` whose body is `body`.
#[track_caller]
fn delivery_with_body(n: &Value, body: &str) -> Value {
    let ds: Vec<Value> = deliveries(n)
        .into_iter()
        .filter(|d| d["data"]["body"] == json!(body))
        .collect();
    assert_eq!(ds.len(), 1, "one delivery with body {body:?} in {n}");
    ds[0].clone()
}

async fn condition_entry(app: &TestApp, nid: &str, step: u64) -> Value {
    let t = app
        .admin(GET, &format!("{A}/notifications/{nid}/trace"))
        .go()
        .await
        .ok(200);
    t["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["code"] == json!("condition.evaluated") && e["args"]["step"] == json!(step))
        .cloned()
        .unwrap_or_else(|| panic!("no condition.evaluated entry of step {step} in {t}"))
}

#[tokio::test]
async fn an_email_is_skipped_while_the_user_has_the_app_open_and_sent_once_it_is_closed() {
    let sink = SmtpSink::start(SinkScript::default()).await;
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let mail = active_channel(&app, "email", "smtp", smtp_config(&sink)).await;
    let offline = json!([{"path": "recipient.online", "op": "eq", "value": false}]);
    let flow = active_flow(
        &app,
        "presence",
        json!([
            channel_step(&inapp, None, "in the app"),
            cond_step(&s(&mail["id"]), Some("New"), "by email", offline)
        ]),
    )
    .await;
    let flow_id = s(&flow["id"]);
    let ext = new_ext("online");
    app.create_user_as(&ext, json!({"email": "online@example.com"}))
        .await;

    // The socket on the first node; one run accepted by each node (on a
    // cluster the requests go round the nodes), so the email steps are
    // reached on nodes other than the socket's too.
    let mut ws = open_socket(&app, &app.address, &ext).await;
    let mut runs = vec![];
    for _ in 0..app.node_addresses().len() {
        let run = run_flow(&app, &flow_id, json!({"recipients": [ext]})).await;
        runs.push(s(&run["id"]));
    }
    for run in &runs {
        wait_run_processed(&app, run, 30).await;
        let ns = run_notifications(&app, run).await;
        assert_eq!(ns.len(), 1, "{ns:?}");
        let n = &ns[0];
        assert_eq!(delivery_with_body(n, "in the app")["status"], json!("sent"));
        let email = delivery_with_body(n, "by email");
        assert_eq!(email["status"], json!("skipped"), "{email}");
        assert_eq!(email["error"]["code"], json!("condition_false"), "{email}");
        let e = condition_entry(&app, &s(&n["id"]), 1).await;
        assert_eq!(e["args"]["result"], json!(false), "{e}");
        assert_eq!(e["args"]["decided"], json!("due"), "{e}");
        assert_eq!(e["args"]["rule"]["path"], json!("recipient.online"), "{e}");
        assert_eq!(e["args"]["recipient"]["online"], json!(true), "{e}");
        assert!(e["args"]["recipient"]["last_seen_at"].is_string(), "{e}");
    }
    assert!(sink.mails().is_empty(), "no email while online");

    // Closed: the next run's email goes (the close is recorded without the
    // client waiting for it, so a run right after it may still see it open).
    ws.close(None).await.expect("close");
    drop(ws);
    let d = Deadline::new("an email once the socket closed", 30);
    let email = loop {
        let (_, n) = run_one(&app, &flow_id, json!({"recipients": [ext]})).await;
        let email = delivery_with_body(&n, "by email");
        let email = wait_delivery_final(&app, &s(&email["id"]), 30).await;
        if email["status"] == json!("sent") {
            let e = condition_entry(&app, &s(&n["id"]), 1).await;
            assert_eq!(e["args"]["result"], json!(true), "{e}");
            assert_eq!(e["args"]["recipient"]["online"], json!(false), "{e}");
            break email;
        }
        assert_eq!(email["error"]["code"], json!("condition_false"), "{email}");
        d.tick(&email).await;
    };
    assert_eq!(email["attempts"], json!(1), "{email}");
    let mails = sink.mails();
    assert_eq!(mails.len(), 1, "one email once offline: {mails:?}");
}

#[tokio::test]
async fn a_reminder_goes_to_users_not_seen_for_a_week_by_the_test_clock() {
    let app = TestApp::spawn();
    app.put_project(&json!({"clock": "test"})).await.ok(200);
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "seen",
        json!([
            cond_step(
                &inapp,
                None,
                "we miss you",
                json!([{"path": "recipient.last_seen_at", "op": "lt", "value": "-7d"}])
            ),
            cond_step(
                &inapp,
                None,
                "seen once",
                json!([{"path": "recipient.last_seen_at", "op": "exists"}])
            )
        ]),
    )
    .await;
    let flow_id = s(&flow["id"]);
    let (never, seen) = (new_ext("never"), new_ext("seen"));
    app.create_user_as(&never, json!({})).await;
    app.create_user_as(&seen, json!({})).await;
    // `seen` calls the User API: seen now, by the project's clock.
    let r = app.user(GET, &format!("{U}/feed"), &seen).go().await;
    r.ok(200);

    let statuses = |n: &Value| {
        (
            s(&delivery_with_body(n, "we miss you")["status"]),
            s(&delivery_with_body(n, "seen once")["status"]),
        )
    };
    let sent = || ("sent".to_string(), "sent".to_string());
    // The seen time is recorded without the request waiting for it.
    let d = Deadline::new("the User API call to count as seen", 30);
    loop {
        let (_, n) = run_one(&app, &flow_id, json!({"recipients": [seen]})).await;
        let got = statuses(&n);
        if got == ("skipped".to_string(), "sent".to_string()) {
            let e = condition_entry(&app, &s(&n["id"]), 0).await;
            assert_eq!(e["args"]["result"], json!(false), "{e}");
            assert_eq!(
                e["args"]["rule"]["path"],
                json!("recipient.last_seen_at"),
                "{e}"
            );
            assert!(e["args"]["recipient"]["last_seen_at"].is_string(), "{e}");
            break;
        }
        d.tick(format!("{got:?}")).await;
    }
    // Never seen: infinitely long ago, so `lt -7d` holds and `exists` not.
    let (_, n) = run_one(&app, &flow_id, json!({"recipients": [never]})).await;
    assert_eq!(statuses(&n), ("sent".into(), "skipped".into()), "{n}");
    let e = condition_entry(&app, &s(&n["id"]), 0).await;
    assert_eq!(e["args"]["recipient"]["last_seen_at"], Value::Null, "{e}");

    // Six days on, `seen` was seen less than a week ago; eight days on, more.
    app.advance_clock(&json!({"by": "6d"})).await.ok(200);
    let (_, n) = run_one(&app, &flow_id, json!({"recipients": [seen]})).await;
    assert_eq!(statuses(&n), ("skipped".into(), "sent".into()), "{n}");
    app.advance_clock(&json!({"by": "2d"})).await.ok(200);
    let (_, n) = run_one(&app, &flow_id, json!({"recipients": [seen]})).await;
    assert_eq!(statuses(&n), sent(), "{n}");
}

#[tokio::test]
async fn presence_rules_are_validated_when_the_flow_is_saved() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let rule = |path: &str, op: &str, value: Value| {
        let mut r = json!({"path": path, "op": op});
        if !value.is_null() {
            r["value"] = value;
        }
        json!([r])
    };
    let steps = json!([
        channel_step(&inapp, None, "first"),
        cond_step(&inapp, None, "a", rule("recipient.last_seen_at", "lt", json!("7d"))),
        cond_step(&inapp, None, "b", rule("recipient.last_seen_at", "lt", json!("-7x"))),
        cond_step(&inapp, None, "c", rule("recipient.last_seen_at", "lt", json!(7))),
        cond_step(&inapp, None, "d", rule("recipient.last_seen_at", "eq", json!("-7d"))),
        cond_step(&inapp, None, "e", rule("recipient.online", "eq", json!("yes"))),
        cond_step(&inapp, None, "f", rule("recipient.online", "gt", json!(true))),
        {"type": "delay", "seconds": 1,
         "if": [{"path": "recipient.online", "op": "eq", "value": true}]},
        cond_step(&inapp, None, "g", rule("recipient.last_seen_at", "lt", json!("-99999d"))),
    ]);
    let r = app
        .admin(POST, &format!("{A}/flows"))
        .json(&json!({"handle": handle("presence-bad"), "name": "P", "steps": steps}))
        .go()
        .await;
    assert_validation(
        &r,
        &[
            ("steps.1.if.0.value", "format"),
            ("steps.2.if.0.value", "format"),
            ("steps.3.if.0.value", "format"),
            ("steps.4.if.0.op", "inclusion"),
            ("steps.5.if.0.value", "format"),
            ("steps.6.if.0.op", "inclusion"),
            ("steps.7.if.0.path", "inclusion"),
            ("steps.8.if.0.value", "format"),
        ],
    );

    // Valid ones read back as given.
    let ok = json!({"any": [
        {"op": "eq", "path": "recipient.online", "value": false},
        {"op": "gte", "path": "recipient.last_seen_at", "value": "-30m"},
        {"op": "not_exists", "path": "recipient.last_seen_at"}]});
    let f = create_flow(
        &app,
        &handle("presence-ok"),
        json!([
            channel_step(&inapp, None, "first"),
            cond_step(&inapp, None, "then", ok.clone())
        ]),
    )
    .await;
    assert_eq!(f["steps"][1]["if"], ok, "{f}");
}
