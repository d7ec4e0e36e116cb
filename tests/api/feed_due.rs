//! docs/API.md §11: in-app deliveries that come due later (after a delay)
//! enter their users' feeds together when the in-app actor settles them as
//! one batch: each entry with its actor as of now, each user's counts and
//! events in order, and a recipient deleted meanwhile gets no entry (its
//! delivery is skipped).

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

/// The in-app delivery to `user` (its id) of run `run_id` (by the
/// delivery's recipient id: a deleted recipient's notification stays, with
/// no user to show).
async fn in_app_of(app: &TestApp, run_id: &str, user: &Value) -> Value {
    let all = run_notifications(app, run_id).await;
    all.iter()
        .map(|n| delivery_of(n, "in_app"))
        .find(|d| d["recipient_id"] == user["id"])
        .unwrap_or_else(|| panic!("no delivery to {user} in run {run_id}: {all:?}"))
}

#[tokio::test]
async fn deliveries_due_together_enter_each_feed_with_their_actor_counts_and_order() {
    let app = TestApp::spawn();
    app.put_project(&json!({"clock": "test"})).await.ok(200);
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "due",
        json!([
            delay_step(3600),
            channel_step(&inapp, Some("S{{ data.i }}"), "B{{ data.i }}")
        ]),
    )
    .await;
    let flow_id = s(&flow["id"]);
    let (boss, boss_user) = app.create_user("boss", json!({"first_name": "Boss"})).await;
    let (a, a_user) = app.create_user("due-a", json!({})).await;
    let (b, b_user) = app.create_user("due-b", json!({})).await;
    let (gone, gone_user) = app.create_user("due-gone", json!({})).await;
    let first = run_flow(
        &app,
        &flow_id,
        json!({"recipients": [a, b, gone], "actor": boss, "data": {"i": 1}}),
    )
    .await;
    let second = run_flow(&app, &flow_id, json!({"recipients": [a], "data": {"i": 2}})).await;
    app.admin(DELETE, &format!("{A}/users/{gone}"))
        .go()
        .await
        .ok(204);
    // Nothing is in the feeds before the delay ends.
    let v = app.user(GET, &format!("{U}/feed"), &a).go().await.ok(200);
    assert_eq!(v["items"], json!([]), "{v}");

    app.advance_clock(&json!({"by": "1h"})).await.ok(200);
    for run in [&first, &second] {
        wait_run_processed(&app, &s(&run["id"]), 30).await;
    }

    let fa = wait_feed(&app, &a, 2).await;
    let items = fa["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{fa}");
    // Both entered at the same instant; each carries its own actor.
    let by_subject = |subject: &str| {
        items
            .iter()
            .find(|e| e["data"]["subject"] == json!(subject))
            .unwrap_or_else(|| panic!("no entry {subject}: {fa}"))
    };
    let (one, two) = (by_subject("S1"), by_subject("S2"));
    assert_eq!(two["actor"], Value::Null, "{fa}");
    assert_eq!(one["actor"]["external_id"], json!(boss), "{fa}");
    assert_eq!(one["actor"]["id"], boss_user["id"], "{fa}");
    assert_eq!(fa["meta"]["unread_count"], json!(2), "{fa}");
    assert_eq!(fa["meta"]["unseen_count"], json!(2), "{fa}");

    let fb = wait_feed(&app, &b, 1).await;
    assert_eq!(fb["items"].as_array().unwrap().len(), 1, "{fb}");
    assert_eq!(fb["items"][0]["actor"]["first_name"], json!("Boss"), "{fb}");
    assert_eq!(fb["meta"]["unread_count"], json!(1), "{fb}");

    for (user, run) in [(&a_user, &first), (&b_user, &first), (&a_user, &second)] {
        let d = in_app_of(&app, &s(&run["id"]), user).await;
        assert_eq!(d["status"], json!("sent"), "{d}");
    }
    let d = in_app_of(&app, &s(&first["id"]), &gone_user).await;
    assert_eq!(d["status"], json!("skipped"), "{d}");
    assert_eq!(d["error"]["code"], json!("missing_address"), "{d}");

    // Reading one entry moves only its user's counts.
    let id = s(&one["id"]);
    app.user(POST, &format!("{U}/feed/{id}/read"), &a)
        .go()
        .await
        .ok(200);
    let fa = wait_feed(&app, &a, 2).await;
    assert_eq!(fa["meta"]["unread_count"], json!(1), "{fa}");
    let fb = wait_feed(&app, &b, 1).await;
    assert_eq!(fb["meta"]["unread_count"], json!(1), "{fb}");
}
