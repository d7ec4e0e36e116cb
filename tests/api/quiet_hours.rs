//! docs/API.md §6 "Quiet hours": a user's preference holding deliveries
//! other than in_app until they end, on a project's test clock, with a real
//! SMTP sink on 127.0.0.1 as the email provider: the email stays pending
//! (nothing reaches the sink) until the clock passes the end; an in-app step
//! of the same run and a critical flow's email are not held; `days` and the
//! timezone (their own, the user's, the project's) decide; the Admin and
//! User APIs set them, `null` clears them, and every problem is a 422 at its
//! path.

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;
use crate::providers_support::*;

fn prefs_path(ext: &str) -> String {
    format!("{A}/users/{}/preferences", enc(ext))
}

async fn clock_to(app: &TestApp, to: &str) {
    app.advance_clock(&json!({ "to": to })).await.ok(200);
}

async fn put_prefs(app: &TestApp, ext: &str, body: Value) -> Resp {
    app.admin(PUT, &prefs_path(ext)).json(&body).go().await
}

const ALL_DAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

/// A project on a test clock with an SMTP email channel (to `sink`) and its
/// in-app channel: (email channel id, in-app channel id).
async fn setup(app: &TestApp, sink: &SmtpSink, project: Value) -> (String, String) {
    let mut p = json!({"clock": "test"});
    if let (Some(p), Some(extra)) = (p.as_object_mut(), project.as_object()) {
        p.extend(extra.clone());
    }
    app.put_project(&p).await.ok(200);
    let email = active_channel(app, "email", "smtp", smtp_config(sink)).await;
    (s(&email["id"]), in_app_channel(app).await)
}

/// An active flow of `steps`, critical or not.
async fn flow_of(app: &TestApp, tag: &str, steps: Value, critical: bool) -> String {
    let f = app
        .admin(POST, &format!("{A}/flows"))
        .json(&json!({"handle": handle(tag), "name": tag, "steps": steps, "critical": critical}))
        .go()
        .await
        .ok(201);
    s(&activate(app, &s(&f["id"])).await["id"])
}

/// Runs `flow` for `ext`: its only notification as first listed.
async fn run_for(app: &TestApp, flow: &str, ext: &str) -> Value {
    let run = run_flow(app, flow, json!({"recipients": [ext]})).await;
    let ns = run_notifications(app, &s(&run["id"])).await;
    assert_eq!(ns.len(), 1, "{ns:?}");
    ns[0].clone()
}

async fn notification(app: &TestApp, nid: &Value) -> Value {
    app.admin(GET, &format!("{A}/notifications/{}", s(nid)))
        .go()
        .await
        .ok(200)
}

async fn waits_of(app: &TestApp, nid: &Value) -> Vec<Value> {
    let t = app
        .admin(GET, &format!("{A}/notifications/{}/trace", s(nid)))
        .go()
        .await
        .ok(200);
    t["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["code"] == json!("quiet_hours.waited"))
        .cloned()
        .collect()
}

#[track_caller]
fn assert_held_until(d: &Value, at: &str) {
    assert_eq!(d["status"], json!("pending"), "{d}");
    assert_eq!(parse_ts(&d["next_attempt_at"]), parse_ts(&json!(at)), "{d}");
}

/// Polls the notification until its delivery of `channel_type` is final.
async fn final_delivery(app: &TestApp, nid: &Value, channel_type: &str) -> Value {
    let d = delivery_of(&notification(app, nid).await, channel_type);
    wait_delivery_final(app, &s(&d["id"]), 30).await
}

#[tokio::test]
async fn quiet_hours_hold_an_email_until_they_end_and_not_its_in_app_step() {
    let sink = SmtpSink::start(SinkScript::default()).await;
    let app = TestApp::spawn();
    let (email, inapp) = setup(&app, &sink, json!({})).await;
    let flow = flow_of(
        &app,
        "quiet",
        json!([
            channel_step(&email, Some("Hi"), "Hello"),
            channel_step(&inapp, None, "Hi")
        ]),
        false,
    )
    .await;
    let (ext, _) = app
        .create_user("quiet", json!({"email": "ada@example.com"}))
        .await;
    let p = put_prefs(
        &app,
        &ext,
        json!({"quiet_hours": {"from": "22:00", "to": "07:30"}}),
    )
    .await
    .ok(200);
    assert_eq!(
        p["quiet_hours"],
        json!({"days": ALL_DAYS, "from": "22:00", "to": "07:30", "timezone": null}),
        "{p}"
    );

    // Tuesday 23:00 UTC (no timezone anywhere): the email waits for 07:30
    // the next day; the in-app step after it goes at once.
    clock_to(&app, "2027-01-05T23:00:00Z").await;
    let n = run_for(&app, &flow, &ext).await;
    assert_held_until(&delivery_of(&n, "email"), "2027-01-06T07:30:00Z");
    let feed = wait_feed(&app, &ext, 1).await;
    assert_eq!(feed["items"].as_array().unwrap().len(), 1, "{feed}");
    let waits = waits_of(&app, &n["id"]).await;
    assert_eq!(waits.len(), 1, "only the email waits: {waits:?}");
    assert_eq!(waits[0]["args"]["step"], json!(0), "{waits:?}");
    assert_eq!(
        parse_ts(&waits[0]["args"]["until"]),
        parse_ts(&json!("2027-01-06T07:30:00Z"))
    );
    assert!(s(&waits[0]["message"]).contains("quiet hours"), "{waits:?}");

    // Just before the end: still pending, nothing sent.
    clock_to(&app, "2027-01-06T07:29:00Z").await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let now = notification(&app, &n["id"]).await;
    assert_held_until(&delivery_of(&now, "email"), "2027-01-06T07:30:00Z");
    assert!(sink.mails().is_empty(), "nothing sent yet");

    // At the end: sent.
    clock_to(&app, "2027-01-06T07:30:00Z").await;
    let d = final_delivery(&app, &n["id"], "email").await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(sink.mails().len(), 1);

    // Outside them (09:00): not held.
    clock_to(&app, "2027-01-06T09:00:00Z").await;
    let n = run_for(&app, &flow, &ext).await;
    let d = final_delivery(&app, &n["id"], "email").await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert!(waits_of(&app, &n["id"]).await.is_empty());
    assert_eq!(sink.mails().len(), 2);
}

#[tokio::test]
async fn a_critical_flows_email_is_not_held_by_quiet_hours() {
    let sink = SmtpSink::start(SinkScript::default()).await;
    let app = TestApp::spawn();
    let (email, _) = setup(&app, &sink, json!({})).await;
    let steps = json!([channel_step(&email, Some("Reset"), "Your code")]);
    let crit = flow_of(&app, "reset", steps.clone(), true).await;
    let plain = flow_of(&app, "news", steps, false).await;
    let (ext, _) = app
        .create_user("crit", json!({"email": "ada@example.com"}))
        .await;
    put_prefs(
        &app,
        &ext,
        json!({"quiet_hours": {"from": "00:00", "to": "23:59"}}),
    )
    .await
    .ok(200);
    clock_to(&app, "2027-01-05T12:00:00Z").await;
    let held = run_for(&app, &plain, &ext).await;
    assert_held_until(&delivery_of(&held, "email"), "2027-01-05T23:59:00Z");
    let n = run_for(&app, &crit, &ext).await;
    let d = final_delivery(&app, &n["id"], "email").await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert!(waits_of(&app, &n["id"]).await.is_empty());
    assert_eq!(sink.mails().len(), 1, "only the critical flow's email");
}

#[tokio::test]
async fn quiet_hours_keep_their_days_and_timezone() {
    let sink = SmtpSink::start(SinkScript::default()).await;
    let app = TestApp::spawn();
    let (email, _) = setup(&app, &sink, json!({"timezone": "Asia/Tokyo"})).await;
    let flow = flow_of(
        &app,
        "tz",
        json!([channel_step(&email, Some("Hi"), "Hello")]),
        false,
    )
    .await;
    // Friday nights only, in the user's New York time.
    let ny = new_ext("ny");
    app.create_user_as(
        &ny,
        json!({"email": "ny@example.com", "timezone": "America/New_York"}),
    )
    .await;
    put_prefs(
        &app,
        &ny,
        json!({"quiet_hours": {"from": "22:00", "to": "07:00", "days": ["fri"]}}),
    )
    .await
    .ok(200);
    // Their own timezone beats the user's.
    let own = new_ext("own");
    app.create_user_as(
        &own,
        json!({"email": "own@example.com", "timezone": "America/New_York"}),
    )
    .await;
    put_prefs(
        &app,
        &own,
        json!({"quiet_hours": {"from": "09:00", "to": "17:00", "timezone": "Asia/Tokyo"}}),
    )
    .await
    .ok(200);
    // No timezone of their own or the user's: the project's (Tokyo).
    let (proj, _) = app
        .create_user("proj", json!({"email": "jp@example.com"}))
        .await;
    put_prefs(
        &app,
        &proj,
        json!({"quiet_hours": {"from": "09:00", "to": "17:00"}}),
    )
    .await
    .ok(200);

    // Friday 23:00 in New York (Saturday 13:00 in Tokyo).
    clock_to(&app, "2027-01-08T23:00:00-05:00").await;
    let fri = run_for(&app, &flow, &ny).await;
    assert_held_until(&delivery_of(&fri, "email"), "2027-01-09T07:00:00-05:00");
    let n = run_for(&app, &flow, &own).await;
    assert_held_until(&delivery_of(&n, "email"), "2027-01-09T17:00:00+09:00");
    let n = run_for(&app, &flow, &proj).await;
    assert_held_until(&delivery_of(&n, "email"), "2027-01-09T17:00:00+09:00");

    // Saturday 23:00 in New York: not a listed night, sent at once; Friday
    // night's email went at 07:00.
    clock_to(&app, "2027-01-09T23:00:00-05:00").await;
    let d = final_delivery(&app, &fri["id"], "email").await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    let sat = run_for(&app, &flow, &ny).await;
    let d = final_delivery(&app, &sat["id"], "email").await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert!(waits_of(&app, &sat["id"]).await.is_empty());
}

#[tokio::test]
async fn quiet_hours_problems_are_422s_at_their_paths() {
    let app = TestApp::spawn();
    let (ext, _) = app.create_user("bad", json!({})).await;
    let r = put_prefs(
        &app,
        &ext,
        json!({"quiet_hours": {"from": "10pm", "days": ["mon", "someday"],
            "timezone": "Nowhere/City", "tz": "UTC"}}),
    )
    .await;
    assert_validation(
        &r,
        &[
            ("quiet_hours.from", "format"),
            ("quiet_hours.to", "required"),
            ("quiet_hours.days.1", "inclusion"),
            ("quiet_hours.timezone", "inclusion"),
            ("quiet_hours.tz", "exclusion"),
        ],
    );
    let r = put_prefs(
        &app,
        &ext,
        json!({"quiet_hours": {"from": "22:00", "to": "22:00", "days": [], "timezone": 3}}),
    )
    .await;
    assert_validation(
        &r,
        &[
            ("quiet_hours.to", "exclusion"),
            ("quiet_hours.days", "format"),
            ("quiet_hours.timezone", "format"),
        ],
    );
    for bad in [json!("nights"), json!([1]), json!(true)] {
        let r = put_prefs(&app, &ext, json!({ "quiet_hours": bad })).await;
        assert_validation(&r, &[("quiet_hours", "format")]);
    }
    // the User API checks the same
    let r = app
        .user(PUT, &format!("{U}/preferences"), &ext)
        .json(&json!({"quiet_hours": {"from": "25:00", "to": "07:00"}}))
        .go()
        .await;
    assert_validation(&r, &[("quiet_hours.from", "format")]);
    // nothing was stored
    let p = app.admin(GET, &prefs_path(&ext)).go().await.ok(200);
    assert_eq!(p["quiet_hours"], Value::Null, "{p}");
}

#[tokio::test]
async fn a_user_sets_and_clears_their_own_quiet_hours() {
    let sink = SmtpSink::start(SinkScript::default()).await;
    let app = TestApp::spawn();
    let (email, _) = setup(&app, &sink, json!({})).await;
    let flow = flow_of(
        &app,
        "mine",
        json!([channel_step(&email, Some("Hi"), "Hello")]),
        false,
    )
    .await;
    let (ext, _) = app
        .create_user("mine", json!({"email": "me@example.com"}))
        .await;
    let path = format!("{U}/preferences");
    let mine = json!({"days": ["sat", "sun"], "from": "08:00", "to": "20:00",
        "timezone": "Europe/Paris"});
    let p = app
        .user(PUT, &path, &ext)
        .json(&json!({ "quiet_hours": mine }))
        .go()
        .await
        .ok(200);
    assert_eq!(p["quiet_hours"], mine, "{p}");
    // another change keeps them; both APIs show them
    let p = app
        .user(PUT, &path, &ext)
        .json(&json!({"channel_types": {"sms": false}}))
        .go()
        .await
        .ok(200);
    assert_eq!(p["quiet_hours"], mine, "{p}");
    let p = app.admin(GET, &prefs_path(&ext)).go().await.ok(200);
    assert_eq!(p["quiet_hours"], mine, "{p}");

    // Saturday noon in Paris: held until 20:00 there.
    clock_to(&app, "2027-01-09T12:00:00+01:00").await;
    let n = run_for(&app, &flow, &ext).await;
    assert_held_until(&delivery_of(&n, "email"), "2027-01-09T20:00:00+01:00");

    // null clears them: the next run goes at once.
    let p = app
        .user(PUT, &path, &ext)
        .json(&json!({"quiet_hours": null}))
        .go()
        .await
        .ok(200);
    assert_eq!(p["quiet_hours"], Value::Null, "{p}");
    assert_eq!(p["channel_types"]["sms"], json!(false), "{p}");
    let got = app.user(GET, &path, &ext).go().await.ok(200);
    assert_eq!(got["quiet_hours"], Value::Null, "{got}");
    let n = run_for(&app, &flow, &ext).await;
    let d = final_delivery(&app, &n["id"], "email").await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(sink.mails().len(), 1);
}

/// A digest (a step after a batch step) is checked again when its batch
/// really closes: joins slide the close from 17:30 to 18:10, inside quiet
/// hours from 18:00, so the rendered email waits until 08:00.
#[tokio::test]
async fn a_digest_waits_when_its_batch_closes_inside_quiet_hours() {
    let sink = SmtpSink::start(SinkScript::default()).await;
    let app = TestApp::spawn();
    let (email, _) = setup(&app, &sink, json!({})).await;
    let flow = flow_of(
        &app,
        "digest",
        json!([
            {"type": "batch", "window": "30m", "window_type": "sliding", "max_window": "2h"},
            channel_step(&email, Some("Digest"), "{{ batch.count }} updates")
        ]),
        false,
    )
    .await;
    let (ext, _) = app
        .create_user("digest", json!({"email": "ada@example.com"}))
        .await;
    put_prefs(
        &app,
        &ext,
        json!({"quiet_hours": {"from": "18:00", "to": "08:00"}}),
    )
    .await
    .ok(200);
    clock_to(&app, "2027-03-10T17:00:00Z").await;
    let first = run_for(&app, &flow, &ext).await;
    let did = s(&delivery_of(&first, "email")["id"]);
    // planned at 17:30: not held as staged
    assert!(waits_of(&app, &first["id"]).await.is_empty());
    for at in ["2027-03-10T17:15:00Z", "2027-03-10T17:40:00Z"] {
        clock_to(&app, at).await;
        let n = run_for(&app, &flow, &ext).await;
        assert_eq!(n["batched_into"], first["id"], "{n}");
    }
    clock_to(&app, "2027-03-10T18:11:00Z").await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let d = app
            .admin(GET, &format!("{A}/deliveries/{did}"))
            .go()
            .await
            .ok(200);
        assert_eq!(d["status"], json!("pending"), "held, not sent: {d}");
        if parse_ts(&d["next_attempt_at"]) == parse_ts(&json!("2027-03-11T08:00:00Z")) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never held: {d}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(sink.mails().is_empty());
    clock_to(&app, "2027-03-11T08:00:00Z").await;
    let d = wait_delivery_final(&app, &did, 30).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    let mails = sink.mails();
    assert_eq!(mails.len(), 1);
    assert!(mails[0].data.contains("3 updates"), "{}", mails[0].data);
}

/// The project's default quiet hours (`PUT /preferences/defaults`) hold the
/// email of a user who has none; a user's own quiet hours replace them; and
/// `explain` says which apply.
#[tokio::test]
async fn the_projects_default_quiet_hours_hold_users_without_their_own() {
    let sink = SmtpSink::start(SinkScript::default()).await;
    let app = TestApp::spawn();
    let (email, _) = setup(&app, &sink, json!({})).await;
    let flow = flow_of(
        &app,
        "dq",
        json!([channel_step(&email, Some("Hi"), "Hello")]),
        false,
    )
    .await;
    let d = app
        .admin(PUT, "/admin/v1/preferences/defaults")
        .json(&json!({"quiet_hours": {"from": "22:00", "to": "07:30"}}))
        .go()
        .await
        .ok(200);
    assert_eq!(d["quiet_hours"]["from"], json!("22:00"), "{d}");
    let (plain, _) = app
        .create_user("dq-plain", json!({"email": "a@example.com"}))
        .await;
    let (own, _) = app
        .create_user("dq-own", json!({"email": "b@example.com"}))
        .await;
    put_prefs(
        &app,
        &own,
        json!({"quiet_hours": {"from": "01:00", "to": "02:00"}}),
    )
    .await
    .ok(200);
    clock_to(&app, "2027-01-05T23:00:00Z").await;
    let n = run_for(&app, &flow, &plain).await;
    assert_held_until(&delivery_of(&n, "email"), "2027-01-06T07:30:00Z");
    let n = run_for(&app, &flow, &own).await;
    let d = final_delivery(&app, &n["id"], "email").await;
    assert_eq!(
        d["status"],
        json!("sent"),
        "their own, not the default: {d}"
    );
    let p = app
        .admin(GET, &prefs_path(&plain))
        .query(&[("explain", "true")])
        .go()
        .await
        .ok(200);
    assert_eq!(p["quiet_hours"]["to"], json!("07:30"), "{p}");
    assert_eq!(p["explain"]["quiet_hours"], json!("default"), "{p}");
    let p = app
        .admin(GET, &prefs_path(&own))
        .query(&[("explain", "true")])
        .go()
        .await
        .ok(200);
    assert_eq!(p["quiet_hours"]["from"], json!("01:00"), "{p}");
    assert_eq!(p["explain"]["quiet_hours"], json!("user"), "{p}");
}
