//! docs/API.md "Workflow controls": a project's test clock (switching,
//! advancing, the 409s and 422s), scheduled runs (`send_at`), cancellation by
//! `cancellation_key`, and a SIGKILL with a scheduled run and a delayed run
//! waiting on a test clock.

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

/// Puts the app's project on its test clock; returns the clock's time.
async fn test_clock(app: &TestApp) -> chrono::DateTime<chrono::FixedOffset> {
    let r = app.put_project(&json!({"clock": "test"})).await;
    let p = r.ok(200);
    assert_eq!(p["clock"], json!("test"), "{p}");
    parse_ts(&p["clock_time"])
}

async fn advance(app: &TestApp, body: Value) -> Value {
    let r = app.advance_clock(&body).await;
    r.ok(200)
}

async fn run_status(app: &TestApp, run_id: &str) -> Value {
    app.admin(GET, &format!("{A}/flow_runs/{run_id}"))
        .go()
        .await
        .ok(200)
}

/// The only delivery of a run's only notification.
async fn only_delivery(app: &TestApp, run_id: &str) -> Value {
    let ns = run_notifications(app, run_id).await;
    assert_eq!(ns.len(), 1, "{ns:?}");
    let ds = deliveries(&ns[0]);
    assert_eq!(ds.len(), 1, "{ns:?}");
    ds[0].clone()
}

#[tokio::test]
async fn a_test_clock_holds_a_delay_until_advanced_past_it() {
    let app = TestApp::spawn();
    let t0 = test_clock(&app).await;
    // A second PUT leaves the clock where it is.
    let again = test_clock(&app).await;
    assert_eq!(t0, again);
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "clock",
        json!([delay_step(3600), channel_step(&inapp, None, "hi")]),
    )
    .await;
    let ext = new_ext("clock");
    let run = run_flow(&app, &s(&flow["id"]), json!({"recipients": [ext]})).await;
    let run_id = s(&run["id"]);
    let d = only_delivery(&app, &run_id).await;
    assert_eq!(d["status"], json!("pending"), "{d}");
    // due an hour after the clock's time, not real time
    let due = parse_ts(&d["next_attempt_at"]);
    assert_eq!((due - t0).num_seconds(), 3600, "{d}");

    let p = advance(&app, json!({"by": "59m"})).await;
    assert_eq!((parse_ts(&p["clock_time"]) - t0).num_seconds(), 59 * 60);
    let d = only_delivery(&app, &run_id).await;
    assert_eq!(d["status"], json!("pending"), "not due yet: {d}");

    let p = advance(
        &app,
        json!({"to": (t0 + chrono::Duration::hours(1)).to_rfc3339()}),
    )
    .await;
    assert_eq!((parse_ts(&p["clock_time"]) - t0).num_seconds(), 3600);
    let fr = wait_run_processed(&app, &run_id, 30).await;
    assert_eq!(fr["status"], json!("processed"));
    let d = only_delivery(&app, &run_id).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
    let feed = wait_feed(&app, &ext, 1).await;
    assert_eq!(feed["items"].as_array().unwrap().len(), 1, "{feed}");

    // Back on the real clock.
    let r = app.put_project(&json!({"clock": "real"})).await;
    let p = r.ok(200);
    assert_eq!(p["clock"], json!("real"));
    assert_eq!(p["clock_time"], Value::Null);
}

/// README "found by a new user": an in-app entry of a step after a delay
/// carries, and is sorted by, the time its step delivered it, not the time
/// its run was accepted: in the feed (both pages), on the entry and in the
/// delivery.
#[tokio::test]
async fn a_delayed_entry_takes_the_time_it_entered_the_feed() {
    let app = TestApp::spawn();
    test_clock(&app).await;
    let inapp = in_app_channel(&app).await;
    let later = active_flow(
        &app,
        "later",
        json!([delay_step(3600), channel_step(&inapp, None, "delayed")]),
    )
    .await;
    let now = active_flow(&app, "now", json!([channel_step(&inapp, None, "at once")])).await;
    let ext = new_ext("order");
    let delayed = run_flow(&app, &s(&later["id"]), json!({"recipients": [ext]})).await;
    let at_once = run_flow(&app, &s(&now["id"]), json!({"recipients": [ext]})).await;
    let first = wait_feed(&app, &ext, 1).await;
    let early = first["items"][0].clone();
    assert_eq!(early["data"]["body"], json!("at once"), "{first}");

    advance(&app, json!({"by": "1h"})).await;
    wait_run_processed(&app, &s(&delayed["id"]), 30).await;
    wait_run_processed(&app, &s(&at_once["id"]), 30).await;
    let feed = wait_feed(&app, &ext, 2).await;
    let items = feed["items"].as_array().unwrap();
    let bodies: Vec<&Value> = items.iter().map(|e| &e["data"]["body"]).collect();
    assert_eq!(
        bodies,
        [&json!("delayed"), &json!("at once")],
        "newest first: {feed}"
    );
    let (late, early) = (&items[0], &items[1]);
    assert!(
        parse_ts(&late["created_at"]) > parse_ts(&early["created_at"]),
        "the delayed entry's time is when it entered the feed: {feed}"
    );
    // One entry a page: the cursor walks the same order.
    let page = app
        .user(GET, &format!("{U}/feed"), &ext)
        .query(&[("limit", "1")])
        .go()
        .await
        .page();
    assert_eq!(page["items"][0]["id"], late["id"], "{page}");
    let cursor = s(&page["page"]["after"]);
    let next = app
        .user(GET, &format!("{U}/feed"), &ext)
        .query(&[("limit", "1"), ("after", cursor.as_str())])
        .go()
        .await
        .page();
    assert_eq!(next["items"][0]["id"], early["id"], "{next}");
    // The entry itself and its delivery say the same time, and the entry
    // can be marked read where it now sits.
    let d = only_delivery(&app, &s(&delayed["id"])).await;
    assert_eq!(d["created_at"], late["created_at"], "{d}");
    let r = app
        .user(PATCH, &format!("{U}/feed/{}", s(&late["id"])), &ext)
        .json(&json!({"read": true}))
        .go()
        .await;
    let entry = r.ok(200);
    assert_eq!(entry["read"], json!(true), "{entry}");
    assert_eq!(entry["created_at"], late["created_at"], "{entry}");
    let feed = wait_feed(&app, &ext, 2).await;
    assert_eq!(feed["items"][0]["read"], json!(true), "{feed}");
    assert_eq!(feed["meta"]["unread_count"], json!(1), "{feed}");
    // The recipient's notifications list each once; erasing the user
    // removes both entries wherever they sit in the feed.
    let listed = list_all(&app, &format!("{A}/notifications"), &[("recipient", &ext)]).await;
    let mut ids: Vec<String> = listed.iter().map(|n| s(&n["id"])).collect();
    ids.sort();
    let mut want = vec![s(&late["notification_id"]), s(&early["notification_id"])];
    want.sort();
    assert_eq!(ids, want, "{listed:?}");
    let user_id = s(&listed[0]["recipient_id"]);
    let r = app
        .admin(DELETE, &format!("{A}/users/{}", enc(&ext)))
        .query(&[("erase", "true")])
        .go()
        .await;
    assert_eq!(r.status, 204, "{r}");
    super::erasure::assert_erased(&app, &ext, &user_id, &listed).await;
}

#[tokio::test]
async fn clock_requests_are_validated_and_refused_in_production() {
    let app = TestApp::spawn();
    let path = format!("{A}/project/clock/advance");
    // the real clock cannot be advanced
    let r = app.admin(POST, &path).json(&json!({"by": "1h"})).go().await;
    assert_conflict(&r, "clock_not_test");
    let r = app.put_project(&json!({"clock": "sometimes"})).await;
    assert_validation(&r, &[("clock", "inclusion")]);

    let t0 = test_clock(&app).await;
    for (body, field, code) in [
        (json!({}), "by", "required"),
        (json!({"by": "soon"}), "by", "format"),
        (json!({"by": "0s"}), "by", "format"),
        (json!({"by": 5}), "by", "format"),
        (json!({"to": "tomorrow"}), "to", "format"),
        (
            json!({"by": "1h", "to": t0.to_rfc3339()}),
            "to",
            "exclusion",
        ),
        (
            json!({"to": (t0 - chrono::Duration::hours(1)).to_rfc3339()}),
            "to",
            "inclusion",
        ),
    ] {
        let r = app.admin(POST, &path).json(&body).go().await;
        assert_validation(&r, &[(field, code)]);
    }

    // Security mode marks production use: no test clock with it.
    let r = app.put_project(&json!({"security_mode": true})).await;
    assert_conflict(&r, "production_project");
    let r = app
        .put_project(&json!({"clock": "real", "security_mode": true}))
        .await;
    let p = r.ok(200);
    assert_eq!(
        (p["clock"].clone(), p["security_mode"].clone()),
        (json!("real"), json!(true))
    );
    let r = app.put_project(&json!({"clock": "test"})).await;
    assert_conflict(&r, "production_project");
}

/// Turning security mode on while on the test clock is refused with a message
/// about that move (it described the opposite one: a secure project taking a
/// test clock) that says to set `"clock": "real"` first; which is then
/// accepted. Each refused move keeps its own message.
#[tokio::test]
async fn security_on_a_test_clock_says_to_set_the_real_clock_first() {
    let app = TestApp::spawn();
    test_clock(&app).await;
    let put = |body: Value| {
        let app = &app;
        async move { app.put_project(&body).await }
    };
    let message = |r: &Resp| {
        r.json["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };

    let r = put(json!({"security_mode": true})).await;
    assert_conflict(&r, "production_project");
    let m = message(&r);
    assert!(
        m.contains("test clock") && m.contains(r#""clock": "real""#) && m.contains("first"),
        "the message says to set the real clock first: {r}"
    );
    assert!(!m.contains("cannot take a test clock"), "{r}");
    // both at once: neither is taken
    let r = put(json!({"security_mode": true, "clock": "test"})).await;
    assert_conflict(&r, "production_project");
    assert!(message(&r).contains("together with a test clock"), "{r}");
    let p = app.get_project().await.ok(200);
    assert_eq!(
        (p["clock"].clone(), p["security_mode"].clone()),
        (json!("test"), json!(false))
    );

    // as it says: the real clock first, then security mode
    let p = put(json!({"clock": "real"})).await.ok(200);
    assert_eq!(p["clock"], json!("real"), "{p}");
    let p = put(json!({"security_mode": true})).await.ok(200);
    assert_eq!(p["security_mode"], json!(true), "{p}");
    // and the opposite move keeps its own message
    let r = put(json!({"clock": "test"})).await;
    assert_conflict(&r, "production_project");
    assert!(message(&r).contains("cannot take a test clock"), "{r}");
}

#[tokio::test]
async fn a_scheduled_run_waits_for_send_at_on_both_clocks() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(&app, "sched", json!([channel_step(&inapp, None, "later")])).await;
    let fid = s(&flow["id"]);

    // Real time, a short case: two seconds ahead.
    let at = chrono::Utc::now() + chrono::Duration::seconds(2);
    let ext = new_ext("sched");
    let run = run_flow(
        &app,
        &fid,
        json!({"recipients": [ext], "send_at": at.to_rfc3339()}),
    )
    .await;
    let run_id = s(&run["id"]);
    let fr = wait_run_processed(&app, &run_id, 30).await;
    let d = only_delivery(&app, &run_id).await;
    assert_eq!(d["status"], json!("sent"), "{d} {fr}");
    assert!(
        parse_ts(&d["sent_at"]).timestamp_millis() >= at.timestamp_millis(),
        "not before send_at: {d}"
    );

    // The test clock: scheduled for tomorrow at 09:00 project time.
    let t0 = test_clock(&app).await;
    let at = (t0 + chrono::Duration::days(1)).to_rfc3339();
    let ext = new_ext("sched");
    let run = run_flow(&app, &fid, json!({"recipients": [ext], "send_at": at})).await;
    let run_id = s(&run["id"]);
    let fr = run_status(&app, &run_id).await;
    assert_eq!(fr["status"], json!("scheduled"), "{fr}");
    assert_eq!(parse_ts(&fr["send_at"]), parse_ts(&json!(at)), "{fr}");
    advance(&app, json!({"by": "23h"})).await;
    assert_eq!(
        run_status(&app, &run_id).await["status"],
        json!("scheduled")
    );
    advance(&app, json!({"by": "1h"})).await;
    wait_run_processed(&app, &run_id, 30).await;
    assert_eq!(only_delivery(&app, &run_id).await["status"], json!("sent"));

    // send_at is an RFC 3339 instant; the key a non-empty string.
    let r = app
        .admin(POST, &format!("{A}/flows/{fid}/run"))
        .json(&json!({"recipients": [ext], "send_at": "tomorrow", "cancellation_key": ""}))
        .go()
        .await;
    assert_validation(&r, &[("send_at", "format"), ("cancellation_key", "length")]);
}

#[tokio::test]
async fn cancellation_stops_delayed_and_scheduled_runs_once() {
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let app = TestApp::spawn();
    let t0 = test_clock(&app).await;
    let inapp = in_app_channel(&app).await;
    let chat = create_webhook_channel(&app, &hook_url(&hook), None).await;
    let flow = active_flow(
        &app,
        "cancel",
        json!([
            delay_step(3600),
            channel_step(&inapp, None, "reminder"),
            channel_step(&s(&chat["id"]), None, "reminder")
        ]),
    )
    .await;
    let fid = s(&flow["id"]);
    let (ada, bob, cy) = (new_ext("ada"), new_ext("bob"), new_ext("cy"));
    // a delayed run for two recipients, a scheduled one, and one with another key
    let delayed = run_flow(
        &app,
        &fid,
        json!({"recipients": [ada, bob], "cancellation_key": "inv-1"}),
    )
    .await;
    let scheduled = run_flow(
        &app,
        &fid,
        json!({"recipients": [cy], "cancellation_key": "inv-1",
               "send_at": (t0 + chrono::Duration::hours(5)).to_rfc3339()}),
    )
    .await;
    let other = run_flow(
        &app,
        &fid,
        json!({"recipients": [cy], "cancellation_key": "inv-2"}),
    )
    .await;
    let cancel = format!("{A}/flows/{fid}/cancel");

    // Only bob's notification first.
    let r = app
        .admin(POST, &cancel)
        .json(&json!({"cancellation_key": "inv-1", "recipients": [bob, "nobody-at-all"]}))
        .go()
        .await;
    assert_eq!(r.ok(200), json!({"canceled": 2}));
    // Then everything left with the key: ada's two and the scheduled run's two.
    let r = app
        .admin(POST, &cancel)
        .json(&json!({"cancellation_key": "inv-1"}))
        .go()
        .await;
    assert_eq!(r.ok(200), json!({"canceled": 4}));
    // A repeat changes nothing.
    let r = app
        .admin(POST, &cancel)
        .json(&json!({"cancellation_key": "inv-1"}))
        .go()
        .await;
    assert_eq!(r.ok(200), json!({"canceled": 0}));

    for run in [&delayed, &scheduled] {
        let fr = run_status(&app, &s(&run["id"])).await;
        assert_eq!(fr["status"], json!("processed"), "{fr}");
        assert_eq!(fr["cancellation_key"], json!("inv-1"), "{fr}");
        for n in run_notifications(&app, &s(&run["id"])).await {
            for d in deliveries(&n) {
                assert_eq!(d["status"], json!("canceled"), "{d}");
                assert_eq!(d["error"]["code"], json!("canceled"), "{d}");
            }
        }
    }
    let canceled = list_all(&app, &format!("{A}/deliveries"), &[("status", "canceled")]).await;
    assert_eq!(canceled.len(), 6);

    // The clock passes every due time: only the other key's run goes out.
    advance(&app, json!({"by": "6h"})).await;
    let other_id = s(&other["id"]);
    wait_run_processed(&app, &other_id, 30).await;
    for n in run_notifications(&app, &other_id).await {
        for d in deliveries(&n) {
            assert_eq!(d["status"], json!("sent"), "{d}");
        }
    }
    let got = received(&hook).await;
    assert_eq!(got.len(), 1, "only the other run's webhook");

    // validation and an unknown flow
    let r = app.admin(POST, &cancel).json(&json!({})).go().await;
    assert_validation(&r, &[("cancellation_key", "required")]);
    let r = app
        .admin(POST, &format!("{A}/flows/no-such-flow/cancel"))
        .json(&json!({"cancellation_key": "inv-1"}))
        .go()
        .await;
    assert_not_found(&r, "flow", "no-such-flow");
}

#[tokio::test]
async fn sigkill_with_runs_waiting_on_a_test_clock_finishes_each_once_after_restart() {
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let mut app = TestApp::spawn_on(dir.path(), &keys);
    let t0 = test_clock(&app).await;
    let chat = create_webhook_channel(&app, &hook_url(&hook), None).await;
    let delayed = active_flow(
        &app,
        "kill-delay",
        json!([delay_step(7200), channel_step(&s(&chat["id"]), None, "d")]),
    )
    .await;
    let now = active_flow(
        &app,
        "kill-now",
        json!([channel_step(&s(&chat["id"]), None, "s")]),
    )
    .await;
    let r1 = run_flow(
        &app,
        &s(&delayed["id"]),
        json!({"recipients": [new_ext("k")]}),
    )
    .await;
    let r2 = run_flow(
        &app,
        &s(&now["id"]),
        json!({"recipients": [new_ext("k")],
               "send_at": (t0 + chrono::Duration::hours(1)).to_rfc3339()}),
    )
    .await;
    // An open batch (an opener and a join) and a throttle window (its one
    // slot taken, its run sent at once).
    let digest = active_flow(
        &app,
        "kill-batch",
        json!([{"type": "batch", "window": "30m"},
               channel_step(&s(&chat["id"]), None, "{{ batch.count }}")]),
    )
    .await;
    let limited = active_flow(
        &app,
        "kill-throttle",
        json!([{"type": "throttle", "limit": 1, "window": "3h"},
               channel_step(&s(&chat["id"]), None, "t")]),
    )
    .await;
    let reader = new_ext("k");
    let opener = run_flow(&app, &s(&digest["id"]), json!({"recipients": [reader]})).await;
    let (_, joined) = run_one(&app, &s(&digest["id"]), json!({"recipients": [reader]})).await;
    assert_eq!(joined["status"], json!("batched"), "{joined}");
    let (_, passed) = run_one(&app, &s(&limited["id"]), json!({"recipients": [reader]})).await;
    assert_eq!(passed["deliveries"][0]["status"], json!("sent"), "{passed}");
    let status = app.kill9();
    assert!(!status.success(), "SIGKILL: {status:?}");

    let app = TestApp::spawn_on(dir.path(), &keys);
    // the throttle window holds: a second run within it is throttled
    let (_, second) = run_one(&app, &s(&limited["id"]), json!({"recipients": [reader]})).await;
    assert_eq!(second["status"], json!("throttled"), "{second}");
    // the clock kept its time
    let p = app.get_project().await.ok(200);
    assert_eq!(p["clock"], json!("test"));
    assert_eq!(parse_ts(&p["clock_time"]), t0);
    let fr = run_status(&app, &s(&r2["id"])).await;
    assert_eq!(fr["status"], json!("scheduled"), "{fr}");

    advance(&app, json!({"by": "1h"})).await;
    wait_run_processed(&app, &s(&r2["id"]), 30).await;
    // the batch closed once, its digest carrying both activities
    wait_run_processed(&app, &s(&opener["id"]), 30).await;
    let d = only_delivery(&app, &s(&opener["id"])).await;
    assert_eq!(d["data"]["body"], json!("2"), "{d}");
    assert_eq!(
        run_status(&app, &s(&r1["id"])).await["status"],
        json!("pending")
    );
    advance(&app, json!({"by": "1h"})).await;
    wait_run_processed(&app, &s(&r1["id"]), 30).await;
    for run in [&r1, &r2, &opener] {
        let d = only_delivery(&app, &s(&run["id"])).await;
        assert_eq!(
            (d["status"].clone(), d["attempts"].clone()),
            (json!("sent"), json!(1)),
            "{d}"
        );
    }
    // the delayed, the scheduled, the digest and the throttle's one run,
    // each one delivery
    // (a send made just before the kill whose record had not reached the
    // disk yet is made again after the restart, with the same delivery id
    // as its idempotency key, so a receiver can tell it is a retry)
    let mut got: std::collections::BTreeMap<String, Vec<Value>> = Default::default();
    for r in received(&hook).await {
        let key = req_header(&r, "idempotency-key").expect("idempotency-key");
        got.entry(key)
            .or_default()
            .push(req_json(&r)["delivery"]["data"]["body"].clone());
    }
    let mut bodies: Vec<&Value> = got.values().map(|b| &b[0]).collect();
    bodies.sort_by_key(|b| b.to_string());
    assert_eq!(
        bodies,
        [&json!("2"), &json!("d"), &json!("s"), &json!("t")],
        "{got:?}"
    );
    assert!(
        got.values().all(|b| b.iter().all(|x| x == &b[0])),
        "{got:?}"
    );
}
