//! docs/API.md "Send windows": a channel step's window in the recipient's
//! timezone, across midnight and a DST change (America/New_York, March
//! 2027), on a test clock; validated at save time.

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

async fn clock_to(app: &TestApp, to: &str) {
    app.advance_clock(&json!({ "to": to })).await.ok(200);
}

async fn only_delivery(app: &TestApp, run_id: &str) -> Value {
    let ns = run_notifications(app, run_id).await;
    assert_eq!(ns.len(), 1, "{ns:?}");
    delivery_of(&ns[0], "in_app")
}

#[track_caller]
fn assert_due(d: &Value, at: &str) {
    assert_eq!(d["status"], json!("pending"), "{d}");
    assert_eq!(parse_ts(&d["next_attempt_at"]), parse_ts(&json!(at)), "{d}");
}

#[tokio::test]
async fn a_night_window_in_new_york_across_midnight_and_the_dst_change() {
    let app = TestApp::spawn();
    app.put_project(&json!({"clock": "test"})).await.ok(200);
    let inapp = in_app_channel(&app).await;
    let mut step = channel_step(&inapp, None, "night");
    step["send_window"] = json!({"from": "22:00", "to": "06:00"});
    let flow = active_flow(&app, "window", json!([step])).await;
    assert_eq!(
        flow["steps"][0]["send_window"],
        json!({"days": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], "from": "22:00", "to": "06:00"})
    );
    let fid = s(&flow["id"]);
    let ny = new_ext("ny");
    app.create_user_as(&ny, json!({"timezone": "America/New_York"}))
        .await;
    let utc = new_ext("utc");
    app.create_user_as(&utc, json!({})).await;

    // Saturday noon EST: waits for 22:00 EST; the user without a timezone
    // for 22:00 UTC.
    clock_to(&app, "2027-03-13T12:00:00-05:00").await;
    let sat = run_flow(&app, &fid, json!({"recipients": [ny]})).await;
    let sat_id = s(&sat["id"]);
    assert_due(
        &only_delivery(&app, &sat_id).await,
        "2027-03-13T22:00:00-05:00",
    );
    let plain = run_flow(&app, &fid, json!({"recipients": [utc]})).await;
    let plain_id = s(&plain["id"]);
    assert_due(
        &only_delivery(&app, &plain_id).await,
        "2027-03-13T22:00:00Z",
    );

    clock_to(&app, "2027-03-13T22:00:00Z").await;
    wait_run_processed(&app, &plain_id, 30).await;
    assert_eq!(
        only_delivery(&app, &sat_id).await["status"],
        json!("pending")
    );
    clock_to(&app, "2027-03-13T22:00:00-05:00").await;
    wait_run_processed(&app, &sat_id, 30).await;
    assert_eq!(only_delivery(&app, &sat_id).await["status"], json!("sent"));

    // Sunday 04:30 EDT, after the clocks went forward: still Saturday's
    // window, sent at once.
    clock_to(&app, "2027-03-14T04:30:00-04:00").await;
    let (_, n) = run_one(&app, &fid, json!({"recipients": [ny]})).await;
    assert_eq!(delivery_of(&n, "in_app")["status"], json!("sent"), "{n}");

    // Sunday 07:00 EDT: closed until 22:00 EDT (02:00 UTC, not 03:00).
    clock_to(&app, "2027-03-14T07:00:00-04:00").await;
    let sun = run_flow(&app, &fid, json!({"recipients": [ny]})).await;
    let sun_id = s(&sun["id"]);
    assert_due(&only_delivery(&app, &sun_id).await, "2027-03-15T02:00:00Z");
    clock_to(&app, "2027-03-15T02:00:00Z").await;
    wait_run_processed(&app, &sun_id, 30).await;
    assert_eq!(
        wait_feed(&app, &ny, 3).await["items"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
}

#[tokio::test]
async fn send_windows_are_validated() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let mut steps = vec![];
    for w in [
        json!({"days": ["mon", "someday"], "from": "09:00", "to": "18:00"}),
        json!({"from": "9am", "to": "18:00"}),
        json!({"from": "09:00"}),
        json!({"from": "09:00", "to": "09:00", "tz": "UTC"}),
        json!("weekdays"),
    ] {
        let mut st = channel_step(&inapp, None, "x");
        st["send_window"] = w;
        steps.push(st);
    }
    let r = app
        .admin(POST, &format!("{A}/flows"))
        .json(&json!({"handle": handle("win-bad"), "name": "W", "steps": steps}))
        .go()
        .await;
    assert_validation(
        &r,
        &[
            ("steps.0.send_window.days.1", "inclusion"),
            ("steps.1.send_window.from", "format"),
            ("steps.2.send_window.to", "required"),
            ("steps.3.send_window.to", "exclusion"),
            ("steps.3.send_window.tz", "exclusion"),
            ("steps.4.send_window", "format"),
        ],
    );
}

#[tokio::test]
async fn recipients_without_a_timezone_follow_the_projects_default() {
    let app = TestApp::spawn();
    let r = app.put_project(&json!({"timezone": "Nowhere/City"})).await;
    assert_validation(&r, &[("timezone", "inclusion")]);
    let p = app
        .put_project(&json!({"clock": "test", "timezone": "Asia/Tokyo"}))
        .await
        .ok(200);
    assert_eq!(p["timezone"], json!("Asia/Tokyo"));
    let inapp = in_app_channel(&app).await;
    let mut step = channel_step(&inapp, None, "office hours");
    step["send_window"] =
        json!({"days": ["mon", "tue", "wed", "thu", "fri"], "from": "09:00", "to": "18:00"});
    let flow = active_flow(&app, "tokyo", json!([step])).await;
    let fid = s(&flow["id"]);
    // Friday 20:00 in Tokyo: Monday 09:00 there (00:00 UTC).
    clock_to(&app, "2027-03-12T20:00:00+09:00").await;
    let run = run_flow(&app, &fid, json!({"recipients": [new_ext("jp")]})).await;
    assert_due(
        &only_delivery(&app, &s(&run["id"])).await,
        "2027-03-15T00:00:00Z",
    );
    // a recipient's own timezone wins
    let la = new_ext("la");
    app.create_user_as(&la, json!({"timezone": "America/Los_Angeles"}))
        .await;
    let run = run_flow(&app, &fid, json!({"recipients": [la]})).await;
    // Friday 20:00 Tokyo = Friday 03:00 in Los Angeles (PST): 09:00 PST
    assert_due(
        &only_delivery(&app, &s(&run["id"])).await,
        "2027-03-12T09:00:00-08:00",
    );
}
