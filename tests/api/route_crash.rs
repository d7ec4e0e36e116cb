//! docs/API.md "Routes", across a SIGKILL: a route waiting for its next
//! hop (an in-app entry, then a webhook an hour later on the test clock),
//! and routes whose hops are in flight (a first webhook refusing every
//! message for good, a second accepting), each killed and restarted on
//! the same data. Every hop that was due is sent, none twice beyond a
//! retry of the same delivery id (the webhook's `Idempotency-Key`), and
//! every route completes.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

/// A route step of `channels` (each `(channel id, after)`) with `success`.
fn route(success: &str, channels: &[(&str, &str)]) -> Value {
    let hops: Vec<Value> = channels
        .iter()
        .map(|(id, after)| {
            json!({"channel_id": id, "after": after,
                   "template": {"subject": "Hi", "body": "hop {{ recipient.external_id }}"}})
        })
        .collect();
    json!({"type": "route", "success": success, "channels": hops})
}

/// The idempotency keys (delivery ids) a counterpart received, with how
/// many times each.
async fn keys_at(server: &wiremock::MockServer) -> HashMap<String, usize> {
    let mut seen = HashMap::new();
    for q in received(server).await {
        let k = req_header(&q, "idempotency-key").expect("idempotency-key header");
        *seen.entry(k).or_insert(0) += 1;
    }
    seen
}

/// A notification's deliveries in hop order (their ids grow with it).
fn hops(n: &Value) -> Vec<Value> {
    let mut ds = deliveries(n);
    ds.sort_by_key(|d| s(&d["id"]));
    ds
}

/// The notifications of a run once every one is processed.
async fn processed(app: &TestApp, run_id: &str, n: usize) -> Vec<Value> {
    let fr = wait_run_processed(app, run_id, 30).await;
    assert_eq!(fr["notifications_count"], json!(n), "{fr}");
    let ns = run_notifications(app, run_id).await;
    assert_eq!(ns.len(), n);
    ns
}

#[tokio::test]
async fn route_sigkill_during_a_wait_sends_each_due_hop_once() {
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let mut app = TestApp::spawn_on(dir.path(), &keys);
    let r = app.put_project(&json!({"clock": "test"})).await;
    r.ok(200);
    let inapp = in_app_channel(&app).await;
    let chat = create_webhook_channel(&app, &hook_url(&hook), None).await;
    let flow = active_flow(
        &app,
        "route-wait",
        json!([route("read", &[(&inapp, "0s"), (&s(&chat["id"]), "1h")])]),
    )
    .await;
    let exts: Vec<String> = (0..40)
        .map(|i| format!("rw-{i:02}-{}", &random_hex()[..6]))
        .collect();
    let run = run_flow(
        &app,
        &s(&flow["id"]),
        json!({"recipients": recipients(&exts)}),
    )
    .await;
    let run_id = s(&run["id"]);
    // every in-app hop is in its feed before the kill
    for ext in &exts {
        wait_feed(&app, ext, 1).await;
    }
    let status = app.kill9();
    assert!(!status.success(), "SIGKILL: {status:?}");

    let app = TestApp::spawn_on(dir.path(), &keys);
    // half the recipients read their entry while the route waits
    let readers: HashSet<&String> = exts.iter().step_by(2).collect();
    for ext in &readers {
        let page = wait_feed(&app, ext, 1).await;
        let id = s(&page["items"][0]["id"]);
        app.user(PATCH, &format!("{U}/feed/{id}"), ext)
            .json(&json!({"read": true}))
            .go()
            .await
            .ok(200);
    }
    assert!(
        keys_at(&hook).await.is_empty(),
        "no hop is due before the hour"
    );
    let r = app.advance_clock(&json!({"by": "61m"})).await;
    r.ok(200);
    let ns = processed(&app, &run_id, exts.len()).await;
    let at_hook = keys_at(&hook).await;
    for n in &ns {
        let ext = s(&n["recipient"]["external_id"]);
        let hs = hops(n);
        assert_eq!(hs.len(), 2, "{n}");
        assert_eq!(hs[0]["status"], json!("sent"), "{n}");
        let second = &hs[1];
        if readers.contains(&ext) {
            assert_eq!(second["status"], json!("skipped"), "{n}");
            assert_eq!(second["error"]["code"], json!("route_satisfied"), "{n}");
            assert!(!at_hook.contains_key(&s(&second["id"])), "{n}");
        } else {
            assert_eq!(second["status"], json!("sent"), "{n}");
            assert!(at_hook.contains_key(&s(&second["id"])), "{n}");
        }
    }
    assert_eq!(
        at_hook.len(),
        exts.len() / 2,
        "one webhook per unread entry"
    );
    assert!(
        at_hook.values().all(|&c| c == 1),
        "each sent once: {at_hook:?}"
    );
}

#[tokio::test]
async fn route_sigkill_with_hops_in_flight_sends_each_hop_at_most_once() {
    let refusing = mock_server().await;
    mock_always(&refusing, 400).await;
    // slow to answer, so second hops are in flight when the process dies
    let accepting = mock_server().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(
            wiremock::ResponseTemplate::new(200).set_delay(std::time::Duration::from_millis(40)),
        )
        .mount(&accepting)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let mut app = TestApp::spawn_on(dir.path(), &keys);
    let a = create_webhook_channel(&app, &hook_url(&refusing), None).await;
    let b = create_webhook_channel(&app, &hook_url(&accepting), None).await;
    let flow = active_flow(
        &app,
        "route-crash",
        json!([route("sent", &[(&s(&a["id"]), "0s"), (&s(&b["id"]), "0s")])]),
    )
    .await;
    let exts: Vec<String> = (0..120)
        .map(|i| format!("rc-{i:03}-{}", &random_hex()[..6]))
        .collect();
    let run = run_flow(
        &app,
        &s(&flow["id"]),
        json!({"recipients": recipients(&exts)}),
    )
    .await;
    let run_id = s(&run["id"]);
    // killed while second hops are being sent
    let d = Deadline::new("some second hops to reach their counterpart", 30);
    while received(&accepting).await.is_empty() {
        d.tick("no second hop yet").await;
    }
    let status = app.kill9();
    assert!(!status.success(), "SIGKILL: {status:?}");

    let app = TestApp::spawn_on(dir.path(), &keys);
    let ns = processed(&app, &run_id, exts.len()).await;
    let (at_a, at_b) = (keys_at(&refusing).await, keys_at(&accepting).await);
    let mut firsts = HashSet::new();
    let mut seconds = HashSet::new();
    for n in &ns {
        let hs = hops(n);
        assert_eq!(hs.len(), 2, "{n}");
        assert_eq!(hs[0]["status"], json!("failed"), "{n}");
        assert_eq!(hs[0]["error"]["code"], json!("provider_rejected"), "{n}");
        assert_eq!(hs[1]["status"], json!("sent"), "{n}");
        firsts.insert(s(&hs[0]["id"]));
        seconds.insert(s(&hs[1]["id"]));
    }
    // every hop reached its counterpart, under its own delivery id only:
    // a request repeated across the kill carries the same id
    assert_eq!(at_a.keys().cloned().collect::<HashSet<_>>(), firsts);
    assert_eq!(at_b.keys().cloned().collect::<HashSet<_>>(), seconds);
}
