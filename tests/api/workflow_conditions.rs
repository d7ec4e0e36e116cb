//! docs/API.md "Step conditions": `if` on flow steps, validated at save time
//! (422 with dot paths), every op over data, recipient and actor decided as
//! the run is staged, and a condition over an earlier step's read state
//! decided when the step is reached (after a delay, on a test clock), for an
//! in-app and a webhook step.

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

fn cond_step(channel: &str, body: &str, cond: Value) -> Value {
    let mut st = channel_step(channel, None, body);
    st["if"] = cond;
    st
}

#[tokio::test]
async fn conditions_are_validated_when_the_flow_is_saved() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let steps = json!([
        channel_step(&inapp, None, "first"),
        cond_step(&inapp, "a", json!([{"path": "data.x", "op": "sometimes", "value": 1}])),
        cond_step(&inapp, "b", json!([{"path": "steps.3.read", "op": "eq", "value": false}])),
        cond_step(&inapp, "c", json!({"any": 5})),
        cond_step(&inapp, "d", json!([{"path": "data.x", "op": "eq"}])),
        cond_step(&inapp, "e", json!([{"path": "data.x", "op": "exists", "value": 1}])),
        cond_step(&inapp, "f", json!([{"path": "nowhere.x", "op": "in", "value": 1}])),
        {"type": "delay", "seconds": 1, "if": [{"path": "steps.0.read", "op": "eq", "value": true}]},
        cond_step(&inapp, "g", json!([])),
        cond_step(&inapp, "h", json!("yes")),
    ]);
    let r = app
        .admin(POST, &format!("{A}/flows"))
        .json(&json!({"handle": handle("cond-bad"), "name": "C", "steps": steps}))
        .go()
        .await;
    assert_validation(
        &r,
        &[
            ("steps.1.if.0.op", "inclusion"),
            ("steps.2.if.0.path", "inclusion"),
            ("steps.3.if.any", "format"),
            ("steps.4.if.0.value", "required"),
            ("steps.5.if.0.value", "exclusion"),
            ("steps.6.if.0.path", "inclusion"),
            ("steps.6.if.0.value", "format"),
            ("steps.7.if.0.path", "inclusion"),
            ("steps.8.if", "length"),
            ("steps.9.if", "format"),
        ],
    );

    // A valid one reads back in its canonical form.
    let any = json!({"any": [{"op": "eq", "path": "steps.0.read", "value": false},
                             {"op": "exists", "path": "recipient.custom_fields.vip"}]});
    let f = create_flow(
        &app,
        &handle("cond-ok"),
        json!([
            channel_step(&inapp, None, "first"),
            cond_step(&inapp, "then", any.clone())
        ]),
    )
    .await;
    assert_eq!(f["steps"][1]["if"], any, "{f}");
    assert!(
        f["steps"][0].get("if").is_none(),
        "no condition, no key: {f}"
    );
}

#[tokio::test]
async fn every_op_over_data_recipient_and_actor_decides_its_step() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    // (label, condition, holds for the run below)
    let cases: Vec<(&str, Value, bool)> = vec![
        (
            "eq",
            json!([{"path": "data.priority", "op": "eq", "value": "high"}]),
            true,
        ),
        (
            "eq-no",
            json!([{"path": "data.priority", "op": "eq", "value": "low"}]),
            false,
        ),
        (
            "neq",
            json!([{"path": "data.priority", "op": "neq", "value": "low"}]),
            true,
        ),
        (
            "gt",
            json!([{"path": "data.count", "op": "gt", "value": 9}]),
            true,
        ),
        (
            "gte",
            json!([{"path": "data.count", "op": "gte", "value": 11}]),
            false,
        ),
        (
            "lt",
            json!([{"path": "data.count", "op": "lt", "value": 11}]),
            true,
        ),
        (
            "lte",
            json!([{"path": "data.count", "op": "lte", "value": 9}]),
            false,
        ),
        (
            "in",
            json!([{"path": "data.priority", "op": "in", "value": ["high", "urgent"]}]),
            true,
        ),
        (
            "not_in",
            json!([{"path": "data.priority", "op": "not_in", "value": ["high"]}]),
            false,
        ),
        (
            "contains",
            json!([{"path": "data.tags", "op": "contains", "value": "billing"}]),
            true,
        ),
        (
            "exists",
            json!([{"path": "data.missing", "op": "exists"}]),
            false,
        ),
        (
            "not_exists",
            json!([{"path": "data.missing", "op": "not_exists"}]),
            true,
        ),
        (
            "recipient",
            json!([{"path": "recipient.custom_fields.plan", "op": "eq", "value": "pro"}]),
            true,
        ),
        (
            "actor",
            json!([{"path": "actor.external_id", "op": "eq", "value": "nobody"}]),
            false,
        ),
        (
            "any",
            json!({"any": [{"path": "data.count", "op": "gt", "value": 100},
                           {"path": "recipient.email", "op": "contains", "value": "@example.com"}]}),
            true,
        ),
        (
            "all",
            json!({"all": [{"path": "data.count", "op": "gt", "value": 1},
                           {"path": "data.priority", "op": "eq", "value": "low"}]}),
            false,
        ),
    ];
    let steps: Vec<Value> = cases
        .iter()
        .map(|(label, c, _)| cond_step(&inapp, label, c.clone()))
        .collect();
    let flow = active_flow(&app, "ops", Value::Array(steps)).await;
    let actor = new_ext("actor");
    app.create_user_as(&actor, json!({})).await;
    let ext = new_ext("ops");
    let (_, n) = run_one(
        &app,
        &s(&flow["id"]),
        json!({
            "recipients": [{"external_id": ext, "email": "r@example.com",
                            "custom_fields": {"plan": "pro"}}],
            "actor": actor,
            "data": {"priority": "high", "count": 10, "tags": ["billing", "eu"]},
        }),
    )
    .await;
    let ds = deliveries(&n);
    assert_eq!(ds.len(), cases.len(), "{n}");
    for (label, _, holds) in &cases {
        let d = ds
            .iter()
            .find(|d| d["data"]["body"] == json!(label))
            .unwrap_or_else(|| panic!("{label}: {n}"));
        if *holds {
            assert_eq!(d["status"], json!("sent"), "{label}: {d}");
        } else {
            assert_eq!(d["status"], json!("skipped"), "{label}: {d}");
            assert_eq!(d["error"]["code"], json!("condition_false"), "{label}: {d}");
        }
    }
}

#[tokio::test]
async fn a_reminder_goes_only_if_the_in_app_entry_is_still_unread_after_the_delay() {
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let app = TestApp::spawn();
    let r = app.put_project(&json!({"clock": "test"})).await;
    r.ok(200);
    let inapp = in_app_channel(&app).await;
    let chat = create_webhook_channel(&app, &hook_url(&hook), None).await;
    let unread = json!([{"path": "steps.0.read", "op": "eq", "value": false}]);
    let flow = active_flow(
        &app,
        "unread",
        json!([
            channel_step(&inapp, None, "new comment"),
            delay_step(3600),
            cond_step(&inapp, "still unread", unread.clone()),
            cond_step(&s(&chat["id"]), "still unread", unread)
        ]),
    )
    .await;
    let (reader, ignorer) = (new_ext("reader"), new_ext("ignorer"));
    let run = run_flow(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [reader, ignorer]}),
    )
    .await;
    let run_id = s(&run["id"]);
    // the reader reads the first entry during the delay
    let feed = wait_feed(&app, &reader, 1).await;
    let entry = s(&feed["items"][0]["id"]);
    let r = app
        .user(POST, &format!("{U}/feed/{entry}/read"), &reader)
        .go()
        .await;
    assert!(r.status < 300, "{r}");

    let r = app.advance_clock(&json!({"by": "1h"})).await;
    r.ok(200);
    wait_run_processed(&app, &run_id, 30).await;
    for n in run_notifications(&app, &run_id).await {
        let who = s(&n["recipient"]["external_id"]);
        let later: Vec<Value> = deliveries(&n)
            .into_iter()
            .filter(|d| d["data"]["body"] == json!("still unread"))
            .collect();
        assert_eq!(later.len(), 2, "{n}");
        for d in later {
            if who == reader {
                assert_eq!(d["status"], json!("skipped"), "{d}");
                assert_eq!(d["error"]["code"], json!("condition_false"), "{d}");
            } else {
                assert_eq!(d["status"], json!("sent"), "{d}");
            }
        }
    }
    assert_eq!(received(&hook).await.len(), 1, "only the ignorer's webhook");
    let feed = wait_feed(&app, &ignorer, 2).await;
    assert_eq!(feed["items"].as_array().unwrap().len(), 2, "{feed}");
    let feed = app
        .user(GET, &format!("{U}/feed"), &reader)
        .go()
        .await
        .page();
    assert_eq!(feed["items"].as_array().unwrap().len(), 1, "{feed}");
}

/// Issue 41: a later step conditioned on `steps.0.interacted` (the recipient
/// pressed one of the in-app entry's action buttons), decided when the step
/// is reached after the delay (test clock).
#[tokio::test]
async fn a_follow_up_goes_only_if_the_recipient_pressed_an_action() {
    let app = TestApp::spawn();
    let r = app.put_project(&json!({"clock": "test"})).await;
    r.ok(200);
    let inapp = in_app_channel(&app).await;
    let mut first = channel_step(&inapp, None, "invite");
    first["template"]["actions"] = json!([{"label": "Join", "url": "https://example.com/join"}]);
    let pressed = json!([{"path": "steps.0.interacted", "op": "eq", "value": true}]);
    let flow = active_flow(
        &app,
        "pressed",
        json!([
            first,
            delay_step(3600),
            cond_step(&inapp, "welcome aboard", pressed)
        ]),
    )
    .await;
    let (joiner, ignorer) = (new_ext("joiner"), new_ext("ignorer"));
    let run = run_flow(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [joiner, ignorer]}),
    )
    .await;
    let run_id = s(&run["id"]);
    // the joiner presses the action during the delay; the ignorer only reads
    let feed = wait_feed(&app, &joiner, 1).await;
    let entry = s(&feed["items"][0]["id"]);
    app.interact(&joiner, &entry, &json!({"action": 0}))
        .await
        .ok(200);
    let feed = wait_feed(&app, &ignorer, 1).await;
    let entry = s(&feed["items"][0]["id"]);
    app.user(POST, &format!("{U}/feed/{entry}/read"), &ignorer)
        .go()
        .await
        .ok(200);

    let r = app.advance_clock(&json!({"by": "1h"})).await;
    r.ok(200);
    wait_run_processed(&app, &run_id, 30).await;
    for n in run_notifications(&app, &run_id).await {
        let who = s(&n["recipient"]["external_id"]);
        let later = deliveries(&n)
            .into_iter()
            .find(|d| d["data"]["body"] == json!("welcome aboard"))
            .unwrap_or_else(|| panic!("{n}"));
        if who == joiner {
            assert_eq!(later["status"], json!("sent"), "{later}");
        } else {
            assert_eq!(later["status"], json!("skipped"), "{later}");
            assert_eq!(later["error"]["code"], json!("condition_false"), "{later}");
        }
    }
}
