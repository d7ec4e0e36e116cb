//! The decision trace (docs/API.md, "Decision trace"): a sent, a
//! preference-skipped, a template-failed and a retried-then-sent
//! notification, each trace read back after a restart on the same data.

use serde_json::{json, Value};
use wiremock::matchers::method;
use wiremock::{Mock, ResponseTemplate};

use crate::engine_helpers::*;
use crate::helpers::*;

/// The codes of a trace, in order.
fn codes(t: &Value) -> Vec<String> {
    t["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .map(|e| s(&e["code"]))
        .collect()
}

fn entry<'a>(t: &'a Value, code: &str) -> &'a Value {
    t["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["code"] == json!(code))
        .unwrap_or_else(|| panic!("no {code} entry in {t}"))
}

async fn trace(app: &TestApp, nid: &str) -> Value {
    app.admin(GET, &format!("{A}/notifications/{nid}/trace"))
        .go()
        .await
        .ok(200)
}

#[tokio::test]
async fn traces_explain_sent_skipped_failed_and_retried_notifications_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let mut app = TestApp::spawn_on(dir.path(), &keys);
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let ch = create_webhook_channel(&app, &hook_url(&hook), None).await;
    let flow = active_flow(
        &app,
        "tr",
        json!([channel_step(
            &s(&ch["id"]),
            Some("S"),
            "{{ data.a // data.b }}"
        )]),
    )
    .await;
    let fid = s(&flow["id"]);
    let handle = s(&flow["handle"]);

    // sent
    let sent_ext = new_ext("sent");
    app.create_user_as(&sent_ext, json!({})).await;
    let (_, sent) = run_one(
        &app,
        &fid,
        json!({"recipients": [sent_ext], "data": {"a": 4, "b": 2}}),
    )
    .await;
    // skipped: the recipient turned this flow's chat off
    let skip_ext = new_ext("skip");
    app.create_user_as(&skip_ext, json!({})).await;
    app.admin(PUT, &format!("{A}/users/{}/preferences", enc(&skip_ext)))
        .json(&json!({"flows": {handle.clone(): {"channel_types": {"chat": false}}}}))
        .go()
        .await
        .ok(200);
    let (_, skipped) = run_one(
        &app,
        &fid,
        json!({"recipients": [skip_ext], "data": {"a": 4, "b": 2}}),
    )
    .await;
    // template failed: division by zero
    let (_, failed) = run_one(
        &app,
        &fid,
        json!({"recipients": [new_ext("fail")], "data": {"a": 4, "b": 0}}),
    )
    .await;
    assert_eq!(
        deliveries(&failed)[0]["status"],
        json!("failed"),
        "{failed}"
    );

    // retried then sent: a second channel whose receiver answers 503 once
    let flaky = mock_server().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503))
        .up_to_n_times(1)
        .mount(&flaky)
        .await;
    mock_always(&flaky, 200).await;
    let ch2 = create_webhook_channel(&app, &hook_url(&flaky), None).await;
    let flow2 = active_flow(
        &app,
        "tr2",
        json!([channel_step(&s(&ch2["id"]), Some("S"), "B")]),
    )
    .await;
    let (_, retried) = run_one(
        &app,
        &s(&flow2["id"]),
        json!({"recipients": [new_ext("retry")]}),
    )
    .await;
    assert_eq!(deliveries(&retried)[0]["attempts"], json!(2), "{retried}");

    app.stop();
    let app = TestApp::spawn_on(dir.path(), &keys);

    let t = trace(&app, &s(&sent["id"])).await;
    assert_eq!(t["notification_id"], sent["id"]);
    assert_eq!(
        codes(&t),
        [
            "flow.reached",
            "recipient.resolved",
            "step.reached",
            "template.rendered",
            "preference.allowed",
            "attempt",
            "delivery.final",
            "notification.processed"
        ],
        "{t}"
    );
    assert_eq!(
        entry(&t, "preference.allowed")["args"]["key"],
        json!("default")
    );
    let attempt = entry(&t, "attempt");
    assert_eq!(attempt["args"]["result"], json!("sent"), "{t}");
    assert_eq!(attempt["args"]["provider"], json!("webhook"), "{t}");
    assert!(attempt["args"]["latency_ms"].is_u64(), "{t}");
    assert_eq!(attempt["args"]["delivery_id"], deliveries(&sent)[0]["id"]);
    assert_eq!(entry(&t, "delivery.final")["args"]["status"], json!("sent"));
    assert_eq!(
        entry(&t, "recipient.resolved")["args"]["external_id"],
        json!(sent_ext)
    );
    for e in t["entries"].as_array().unwrap() {
        assert!(is_timestamp(&e["at"]), "{e}");
        assert!(!s(&e["message"]).is_empty(), "{e}");
    }

    let t = trace(&app, &s(&skipped["id"])).await;
    let skip = entry(&t, "preference.skipped");
    assert_eq!(skip["args"]["key"], json!("flow_channel"), "{t}");
    assert_eq!(skip["args"]["channel_type"], json!("chat"), "{t}");
    assert_eq!(
        entry(&t, "delivery.final")["args"]["status"],
        json!("skipped")
    );
    assert!(!codes(&t).contains(&"attempt".to_string()), "{t}");

    let t = trace(&app, &s(&failed["id"])).await;
    let f = entry(&t, "template.failed");
    assert!(!s(&f["args"]["error"]).is_empty(), "{t}");
    assert!(!codes(&t).contains(&"template.rendered".to_string()), "{t}");
    assert_eq!(
        entry(&t, "delivery.final")["args"]["status"],
        json!("failed")
    );

    let t = trace(&app, &s(&retried["id"])).await;
    let c = codes(&t);
    let tail: Vec<&str> = c[5..].iter().map(String::as_str).collect();
    assert_eq!(
        tail,
        [
            "attempt",
            "retry.scheduled",
            "attempt",
            "delivery.final",
            "notification.processed"
        ],
        "{t}"
    );
    let attempts: Vec<&Value> = t["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["code"] == json!("attempt"))
        .collect();
    assert_eq!(attempts[0]["args"]["result"], json!("retry"));
    assert_eq!(attempts[0]["args"]["attempt"], json!(1));
    assert_eq!(attempts[1]["args"]["result"], json!("sent"));

    let r = app
        .admin(GET, &format!("{A}/notifications/{}/trace", new_uuid()))
        .go()
        .await;
    assert_error(&r, 404, "not_found");
}
