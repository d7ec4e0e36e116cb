//! docs/API.md "Throttle steps": at most `limit` runs per window per flow,
//! recipient and key pass; the others stop with their notification
//! `throttled`. On a test clock, in real time (a 2 s window), validated at
//! save time, and kept across a SIGKILL.

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

fn throttle(limit: u32, window: &str, key: Option<&str>) -> Value {
    let mut st = json!({"type": "throttle", "limit": limit, "window": window});
    if let Some(k) = key {
        st["key"] = json!(k);
    }
    st
}

/// Runs the flow for `ext` with `data`; the notification once processed.
async fn run_for(app: &TestApp, flow: &str, ext: &str, data: Value) -> Value {
    let (_, n) = run_one(app, flow, json!({"recipients": [ext], "data": data})).await;
    n
}

#[track_caller]
fn assert_throttled(n: &Value) {
    assert_eq!(n["status"], json!("throttled"), "{n}");
    assert!(
        deliveries(n).is_empty(),
        "no delivery after the throttle: {n}"
    );
}

#[track_caller]
fn assert_sent(n: &Value) {
    assert_eq!(n["status"], json!("processed"), "{n}");
    assert_eq!(delivery_of(n, "in_app")["status"], json!("sent"), "{n}");
}

#[tokio::test]
async fn one_per_hour_lets_the_first_through_and_records_the_rest() {
    let app = TestApp::spawn();
    app.put_project(&json!({"clock": "test"})).await.ok(200);
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "throttle",
        json!([
            throttle(1, "1h", Some("{{ data.thread }}")),
            channel_step(&inapp, None, "comment on {{ data.thread }}")
        ]),
    )
    .await;
    assert_eq!(
        flow["steps"][0],
        json!({"type": "throttle", "limit": 1, "window": "1h", "key": "{{ data.thread }}"})
    );
    let fid = s(&flow["id"]);
    let ext = new_ext("thr");
    assert_sent(&run_for(&app, &fid, &ext, json!({"thread": "a"})).await);
    assert_throttled(&run_for(&app, &fid, &ext, json!({"thread": "a"})).await);
    assert_throttled(&run_for(&app, &fid, &ext, json!({"thread": "a"})).await);
    // another key, another recipient: counters of their own
    assert_sent(&run_for(&app, &fid, &ext, json!({"thread": "b"})).await);
    assert_sent(&run_for(&app, &fid, &new_ext("thr"), json!({"thread": "a"})).await);
    // the window moves on with the clock
    app.advance_clock(&json!({"by": "59m"})).await.ok(200);
    assert_throttled(&run_for(&app, &fid, &ext, json!({"thread": "a"})).await);
    app.advance_clock(&json!({"by": "1m"})).await.ok(200);
    assert_sent(&run_for(&app, &fid, &ext, json!({"thread": "a"})).await);
    let feed = wait_feed(&app, &ext, 3).await;
    assert_eq!(feed["items"].as_array().unwrap().len(), 3, "{feed}");
}

#[tokio::test]
async fn a_two_second_window_in_real_time() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "thr-real",
        json!([throttle(1, "2s", None), channel_step(&inapp, None, "x")]),
    )
    .await;
    let fid = s(&flow["id"]);
    let ext = new_ext("thr");
    let first = std::time::Instant::now();
    assert_sent(&run_for(&app, &fid, &ext, json!({})).await);
    let second = run_for(&app, &fid, &ext, json!({})).await;
    if first.elapsed() < std::time::Duration::from_millis(1800) {
        assert_throttled(&second);
    }
    // Once the window has passed, a run goes through again.
    let d = Deadline::new("a run after the window", 30);
    loop {
        let n = run_for(&app, &fid, &ext, json!({})).await;
        if n["status"] == json!("processed") {
            assert!(first.elapsed() >= std::time::Duration::from_secs(2), "{n}");
            assert_sent(&n);
            break;
        }
        assert_throttled(&n);
        d.tick(&n).await;
        tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    }
}

#[tokio::test]
async fn throttle_steps_are_validated() {
    let app = TestApp::spawn();
    let r = app
        .admin(POST, &format!("{A}/flows"))
        .json(&json!({"handle": handle("thr-bad"), "name": "T", "steps": [
            {"type": "throttle", "window": "1h"},
            {"type": "throttle", "limit": 0, "window": "soon"},
            {"type": "throttle", "limit": 1, "window": "1h", "key": "{{ oops"},
        ]}))
        .go()
        .await;
    assert_validation(
        &r,
        &[
            ("steps.0.limit", "required"),
            ("steps.1.limit", "number"),
            ("steps.1.window", "format"),
            ("steps.2.key", "format"),
        ],
    );
}

#[tokio::test]
async fn a_throttle_window_survives_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let mut app = TestApp::spawn_on(dir.path(), &keys);
    app.put_project(&json!({"clock": "test"})).await.ok(200);
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "thr-kill",
        json!([throttle(1, "1h", None), channel_step(&inapp, None, "x")]),
    )
    .await;
    let fid = s(&flow["id"]);
    let ext = new_ext("thr");
    assert_sent(&run_for(&app, &fid, &ext, json!({})).await);
    let status = app.kill9();
    assert!(!status.success(), "SIGKILL: {status:?}");

    let app = TestApp::spawn_on(dir.path(), &keys);
    assert_throttled(&run_for(&app, &fid, &ext, json!({})).await);
    app.advance_clock(&json!({"by": "1h"})).await.ok(200);
    assert_sent(&run_for(&app, &fid, &ext, json!({})).await);
}

#[tokio::test]
async fn concurrent_runs_for_one_recipient_take_the_last_slot_once() {
    let app = TestApp::spawn();
    app.put_project(&json!({"clock": "test"})).await.ok(200);
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "thr-race",
        json!([throttle(1, "1h", None), channel_step(&inapp, None, "x")]),
    )
    .await;
    let fid = s(&flow["id"]);
    let ext = new_ext("race");
    app.create_user_as(&ext, json!({})).await;
    let runs = futures_util::future::join_all(
        (0..3).map(|_| run_flow(&app, &fid, json!({"recipients": [ext]}))),
    )
    .await;
    let mut statuses = vec![];
    for run in &runs {
        let id = s(&run["id"]);
        wait_run_processed(&app, &id, 30).await;
        let ns = run_notifications(&app, &id).await;
        statuses.push(s(&ns[0]["status"]));
    }
    statuses.sort();
    assert_eq!(statuses, vec!["processed", "throttled", "throttled"]);
    assert_eq!(
        wait_feed(&app, &ext, 1).await["items"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}
