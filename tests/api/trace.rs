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
    assert_eq!(attempt["args"]["status_code"], json!(200), "{t}");
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
    assert_eq!(attempts[0]["args"]["status_code"], json!(503));
    assert_eq!(attempts[1]["args"]["status_code"], json!(200));
    assert_eq!(attempts[0]["args"]["attempt"], json!(1));
    assert_eq!(attempts[1]["args"]["result"], json!("sent"));

    let r = app
        .admin(GET, &format!("{A}/notifications/{}/trace", new_uuid()))
        .go()
        .await;
    assert_error(&r, 404, "not_found");
}

/// The traces of in-app notifications settled when accepted (stored 16 to
/// a key, their traces made from the record when read): every entry and
/// argument, for each of a run's recipients, after a restart, and a
/// recipient whose preference skipped the step.
#[tokio::test]
async fn traces_of_settled_in_app_notifications_name_every_decision() {
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let mut app = TestApp::spawn_on(dir.path(), &keys);
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(&app, "tr-feed", json!([channel_step(&inapp, None, "Hi")])).await;
    let (fid, handle) = (s(&flow["id"]), s(&flow["handle"]));
    let exts: Vec<String> = (0..20).map(|_| new_ext("feed")).collect();
    for e in &exts {
        app.create_user_as(e, json!({})).await;
    }
    app.admin(PUT, &format!("{A}/users/{}/preferences", enc(&exts[7])))
        .json(&json!({"channel_types": {"in_app": false}}))
        .go()
        .await
        .ok(200);
    let run = run_flow(&app, &fid, json!({"recipients": exts})).await;
    let run_id = s(&run["id"]);
    wait_run_processed(&app, &run_id, 30).await;
    app.stop();
    let app = TestApp::spawn_on(dir.path(), &keys);
    let ns = run_notifications(&app, &run_id).await;
    assert_eq!(ns.len(), 20);
    for n in &ns {
        let ext = s(&n["recipient"]["external_id"]);
        let skipped = ext == exts[7];
        let d = &deliveries(n)[0];
        let t = trace(&app, &s(&n["id"])).await;
        let pref = if skipped {
            "preference.skipped"
        } else {
            "preference.allowed"
        };
        assert_eq!(
            codes(&t),
            [
                "flow.reached",
                "recipient.resolved",
                "step.reached",
                "template.rendered",
                pref,
                "delivery.final"
            ],
            "{t}"
        );
        let args: Vec<&Value> = t["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| &e["args"])
            .collect();
        assert_eq!(
            *args[0],
            json!({"flow_id": fid, "flow_handle": handle, "run_id": run_id}),
            "{t}"
        );
        assert_eq!(
            *args[1],
            json!({"user_id": n["recipient"]["id"], "external_id": ext}),
            "{t}"
        );
        assert_eq!(
            *args[2],
            json!({"step": 0, "delivery_id": d["id"], "channel_type": "in_app",
                   "channel_id": inapp}),
            "{t}"
        );
        assert_eq!(*args[3], json!({"step": 0}), "{t}");
        let key = if skipped { "channel_type" } else { "default" };
        assert_eq!(
            *args[4],
            json!({"step": 0, "channel_type": "in_app", "key": key}),
            "{t}"
        );
        let (status, code) = if skipped {
            ("skipped", json!("preference"))
        } else {
            ("sent", Value::Null)
        };
        assert_eq!(
            *args[5],
            json!({"step": 0, "delivery_id": d["id"], "status": status,
                   "attempts": d["attempts"], "error_code": code}),
            "{t}"
        );
        assert_eq!(d["status"], json!(status), "{n}");
        for e in t["entries"].as_array().unwrap() {
            assert_eq!(e["at"], n["created_at"], "{t}");
        }
    }
}

/// The notification of a run that may still be pending.
async fn only_notification(app: &TestApp, run: &Value) -> Value {
    let ns = run_notifications(app, &s(&run["id"])).await;
    assert_eq!(ns.len(), 1, "{ns:?}");
    ns[0].clone()
}

async fn clock_advance(app: &TestApp, body: Value) {
    app.advance_clock(&body).await.ok(200);
}

/// Every workflow decision is traced with its arguments, on a test clock: a
/// condition decided at staging (false with the rule that failed, true by
/// all rules), a condition over an earlier step decided when its step came
/// due, a throttle passed then limited, a send window waited, a scheduled
/// start and a cancellation.
#[tokio::test]
async fn workflow_decisions_are_traced() {
    let app = TestApp::spawn();
    app.put_project(&json!({"clock": "test", "timezone": "Europe/London"}))
        .await
        .ok(200);
    // Monday noon in London (GMT in January).
    clock_advance(&app, json!({"to": "2027-01-04T12:00:00Z"})).await;
    let inapp = in_app_channel(&app).await;

    // A condition at staging.
    let mut st = channel_step(&inapp, None, "vip");
    st["if"] = json!([
        {"path": "data.vip", "op": "eq", "value": true},
        {"path": "recipient.external_id", "op": "exists"}
    ]);
    let flow = active_flow(&app, "tr-cond", json!([st])).await;
    let fid = s(&flow["id"]);
    let (_, no) = run_one(
        &app,
        &fid,
        json!({"recipients": [new_ext("c")], "data": {"vip": false}}),
    )
    .await;
    let t = trace(&app, &s(&no["id"])).await;
    let c = codes(&t);
    let at = c.iter().position(|x| x == "condition.evaluated").unwrap();
    assert_eq!(c[at + 1], "step.reached", "before its step: {t}");
    let e = entry(&t, "condition.evaluated");
    assert_eq!(
        e["args"],
        json!({"step": 0, "result": false, "decided": "accept",
               "rule": {"index": 0, "path": "data.vip", "op": "eq"}}),
        "{t}"
    );
    assert!(s(&e["message"]).contains("data.vip"), "{e}");
    let (_, yes) = run_one(
        &app,
        &fid,
        json!({"recipients": [new_ext("c")], "data": {"vip": true}}),
    )
    .await;
    let t = trace(&app, &s(&yes["id"])).await;
    let e = entry(&t, "condition.evaluated");
    assert_eq!(e["args"]["result"], json!(true), "{t}");
    assert_eq!(e["args"]["rule"], Value::Null, "all rules decided: {t}");

    // A condition over an earlier step, decided when its step comes due.
    let mut gated = channel_step(&inapp, None, "second");
    gated["if"] = json!([{"path": "steps.0.read", "op": "eq", "value": true}]);
    let flow = active_flow(
        &app,
        "tr-gate",
        json!([channel_step(&inapp, None, "first"), delay_step(60), gated]),
    )
    .await;
    let run = run_flow(&app, &s(&flow["id"]), json!({"recipients": [new_ext("g")]})).await;
    let n = only_notification(&app, &run).await;
    let t = trace(&app, &s(&n["id"])).await;
    assert!(
        !codes(&t).contains(&"condition.evaluated".to_string()),
        "not decided before the step is due: {t}"
    );
    clock_advance(&app, json!({"by": "2m"})).await;
    wait_run_processed(&app, &s(&run["id"]), 30).await;
    let t = trace(&app, &s(&n["id"])).await;
    assert_eq!(
        entry(&t, "condition.evaluated")["args"],
        json!({"step": 2, "result": false, "decided": "due",
               "rule": {"index": 0, "path": "steps.0.read", "op": "eq"}}),
        "{t}"
    );

    // A throttle passed, then limited.
    let flow = active_flow(
        &app,
        "tr-thr",
        json!([
            {"type": "throttle", "limit": 1, "window": "1h", "key": "{{ data.k }}"},
            channel_step(&inapp, None, "t")
        ]),
    )
    .await;
    let ext = new_ext("t");
    let body = json!({"recipients": [ext], "data": {"k": "thread-1"}});
    let (_, passed) = run_one(&app, &s(&flow["id"]), body.clone()).await;
    let (_, limited) = run_one(&app, &s(&flow["id"]), body).await;
    let t = trace(&app, &s(&passed["id"])).await;
    assert_eq!(
        entry(&t, "throttle.passed")["args"],
        json!({"step": 0, "key": "thread-1", "count": 1, "limit": 1, "window": "1h"}),
        "{t}"
    );
    let t = trace(&app, &s(&limited["id"])).await;
    assert_eq!(
        entry(&t, "throttle.limited")["args"],
        json!({"step": 0, "key": "thread-1", "count": 1, "limit": 1, "window": "1h"}),
        "{t}"
    );
    assert!(!codes(&t).contains(&"step.reached".to_string()), "{t}");

    // A send window: reached at noon, it opens at 18:00.
    let mut st = channel_step(&inapp, None, "evening");
    st["send_window"] = json!({"from": "18:00", "to": "20:00"});
    let flow = active_flow(&app, "tr-win", json!([st])).await;
    let run = run_flow(&app, &s(&flow["id"]), json!({"recipients": [new_ext("w")]})).await;
    let n = only_notification(&app, &run).await;
    let t = trace(&app, &s(&n["id"])).await;
    let e = entry(&t, "send_window.waited");
    assert_eq!(e["args"]["step"], json!(0), "{t}");
    assert_eq!(
        parse_ts(&e["args"]["until"]),
        parse_ts(&json!("2027-01-04T18:00:00Z")),
        "{t}"
    );
    assert_eq!(
        parse_ts(&e["args"]["until"]),
        parse_ts(&deliveries(&n)[0]["next_attempt_at"]),
        "the delivery waits until then: {n}"
    );

    // A scheduled start, then a cancellation of the waiting delivery.
    let flow = active_flow(
        &app,
        "tr-sched",
        json!([channel_step(&inapp, None, "later")]),
    )
    .await;
    let fid = s(&flow["id"]);
    let send_at = "2027-01-05T08:00:00Z";
    let run = run_flow(
        &app,
        &fid,
        json!({"recipients": [new_ext("s")], "send_at": send_at, "cancellation_key": "inv-7"}),
    )
    .await;
    let n = only_notification(&app, &run).await;
    let t = trace(&app, &s(&n["id"])).await;
    assert_eq!(
        &codes(&t)[..3],
        ["flow.reached", "recipient.resolved", "run.scheduled"]
    );
    assert_eq!(
        parse_ts(&entry(&t, "run.scheduled")["args"]["send_at"]),
        parse_ts(&json!(send_at)),
        "{t}"
    );
    app.admin(POST, &format!("{A}/flows/{fid}/cancel"))
        .json(&json!({"cancellation_key": "inv-7"}))
        .go()
        .await
        .ok(200);
    let t = trace(&app, &s(&n["id"])).await;
    let c = codes(&t);
    assert_eq!(
        &c[c.len() - 3..],
        [
            "delivery.canceled",
            "delivery.final",
            "notification.processed"
        ],
        "{t}"
    );
    assert_eq!(
        entry(&t, "delivery.canceled")["args"],
        json!({"step": 0, "delivery_id": deliveries(&n)[0]["id"], "cancellation_key": "inv-7"}),
        "{t}"
    );
    for e in t["entries"].as_array().unwrap() {
        assert!(!s(&e["message"]).is_empty(), "{e}");
    }
}

/// The entry of `code` for step `step`.
fn step_entry<'a>(t: &'a Value, code: &str, step: u64) -> &'a Value {
    t["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["code"] == json!(code) && e["args"]["step"] == json!(step))
        .unwrap_or_else(|| panic!("no {code} entry of step {step} in {t}"))
}

/// A delay step is traced where it is decided, as the run is accepted
/// (`delay.waited`: its step, its seconds and the project time the steps
/// after it wait until), before the next step; the in-app step after it,
/// delivered from the queue, reads as going to the recipient's feed, not
/// "via - (0 ms)".
#[tokio::test]
async fn a_delay_is_traced_and_an_in_app_attempt_names_the_feed() {
    let app = TestApp::spawn();
    app.put_project(&json!({"clock": "test"})).await.ok(200);
    clock_advance(&app, json!({"to": "2027-03-01T09:00:00Z"})).await;
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "tr-delay",
        json!([
            channel_step(&inapp, None, "first"),
            delay_step(90),
            channel_step(&inapp, None, "second")
        ]),
    )
    .await;
    let run = run_flow(&app, &s(&flow["id"]), json!({"recipients": [new_ext("d")]})).await;
    let n = only_notification(&app, &run).await;
    let t = trace(&app, &s(&n["id"])).await;
    let e = entry(&t, "delay.waited");
    assert_eq!(e["args"]["step"], json!(1), "{t}");
    assert_eq!(e["args"]["seconds"], json!(90), "{t}");
    assert_eq!(
        parse_ts(&e["args"]["until"]),
        parse_ts(&json!("2027-03-01T09:01:30Z")),
        "{t}"
    );
    assert_eq!(
        parse_ts(&e["args"]["until"]),
        parse_ts(&deliveries(&n)[1]["next_attempt_at"]),
        "the step after it waits until then: {n}"
    );
    assert!(s(&e["message"]).contains("90 s"), "{e}");
    let c = codes(&t);
    let delay = c.iter().position(|x| x == "delay.waited").unwrap();
    assert_eq!(
        &c[delay - 1..delay + 2],
        ["delivery.final", "delay.waited", "step.reached"],
        "after step 0, before step 2: {t}"
    );
    assert_eq!(c[delay + 1], "step.reached");
    assert_eq!(t["entries"][delay + 1]["args"]["step"], json!(2), "{t}");

    clock_advance(&app, json!({"by": "2m"})).await;
    wait_run_processed(&app, &s(&run["id"]), 30).await;
    let t = trace(&app, &s(&n["id"])).await;
    let attempt = step_entry(&t, "attempt", 2);
    let msg = s(&attempt["message"]);
    assert_eq!(
        msg, "step 2 attempt 1 to the recipient's in-app feed: sent",
        "{t}"
    );
    for e in t["entries"].as_array().unwrap() {
        assert!(!s(&e["message"]).contains("via -"), "{e}");
    }
}

/// A digest's template is rendered when its batch closes, and traced then:
/// its `template.rendered` comes after `batch.closed`, with an `at` not
/// before the close's (it once carried the run's acceptance time, seconds
/// before the close it depends on).
#[tokio::test]
async fn a_digest_is_traced_as_rendered_when_its_batch_closes() {
    let app = TestApp::spawn();
    app.put_project(&json!({"clock": "test"})).await.ok(200);
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "tr-digest",
        json!([
            {"type": "batch", "window": "1h"},
            channel_step(&inapp, None, "{{ batch.count }} new")
        ]),
    )
    .await;
    let ext = new_ext("dg");
    let body = json!({"recipients": [ext]});
    let run = run_flow(&app, &s(&flow["id"]), body.clone()).await;
    let opener = only_notification(&app, &run).await;
    run_flow(&app, &s(&flow["id"]), body).await;
    let t = trace(&app, &s(&opener["id"])).await;
    assert!(
        !codes(&t).contains(&"template.rendered".to_string()),
        "not rendered before the close: {t}"
    );
    // Real time passes between the acceptance and the close.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    clock_advance(&app, json!({"by": "2h"})).await;
    wait_run_processed(&app, &s(&run["id"]), 30).await;
    let t = trace(&app, &s(&opener["id"])).await;
    let c = codes(&t);
    let closed = c
        .iter()
        .position(|x| x == "batch.closed")
        .expect("batch.closed");
    let rendered = c
        .iter()
        .position(|x| x == "template.rendered")
        .expect("template.rendered");
    assert_eq!(rendered, closed + 1, "{t}");
    assert_eq!(t["entries"][rendered]["args"], json!({"step": 1}), "{t}");
    let at = |i: usize| parse_ts(&t["entries"][i]["at"]);
    assert!(at(rendered) >= at(closed), "{t}");
    let reached = c.iter().position(|x| x == "step.reached").unwrap();
    assert!(
        at(rendered) - at(reached) >= chrono::Duration::milliseconds(300),
        "rendered at the close, not at acceptance: {t}"
    );
    assert_eq!(
        &c[c.len() - 3..],
        ["attempt", "delivery.final", "notification.processed"],
        "{t}"
    );
    let feed = wait_feed(&app, &ext, 1).await;
    assert_eq!(feed["items"][0]["data"]["body"], json!("2 new"), "{feed}");
}

/// Wall time and project time are labelled: an entry's `at` is when it was
/// decided in wall time, and on a test clock `project_at` is the project's
/// time then (the time the entry's own time arguments, such as a delay's
/// `until`, count in); on the real clock `project_at` is null.
#[tokio::test]
async fn trace_entries_label_wall_time_and_project_time() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let now_flow = active_flow(&app, "tr-wall", json!([channel_step(&inapp, None, "x")])).await;
    let (_, n) = run_one(
        &app,
        &s(&now_flow["id"]),
        json!({"recipients": [new_ext("rc")]}),
    )
    .await;
    let t = trace(&app, &s(&n["id"])).await;
    for e in t["entries"].as_array().unwrap() {
        assert_eq!(e["project_at"], Value::Null, "real clock: {e}");
    }

    app.put_project(&json!({"clock": "test"})).await.ok(200);
    let start = "2030-03-01T09:00:00Z";
    clock_advance(&app, json!({"to": start})).await;
    let flow = active_flow(
        &app,
        "tr-times",
        json!([
            channel_step(&inapp, None, "first"),
            delay_step(90),
            channel_step(&inapp, None, "second")
        ]),
    )
    .await;
    let wall = chrono::Utc::now().fixed_offset();
    let run = run_flow(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [new_ext("tc")]}),
    )
    .await;
    let n = only_notification(&app, &run).await;
    clock_advance(&app, json!({"by": "2m"})).await;
    wait_run_processed(&app, &s(&run["id"]), 30).await;
    let t = trace(&app, &s(&n["id"])).await;
    let entries = t["entries"].as_array().unwrap();
    let attempt = entries
        .iter()
        .position(|e| e["code"] == json!("attempt") && e["args"]["step"] == json!(2))
        .expect("the attempt of step 2");
    for (i, e) in entries.iter().enumerate() {
        let at = parse_ts(&e["at"]);
        assert!(
            (at - wall).num_minutes().abs() < 10,
            "`at` is wall time: {e}"
        );
        let want = if i < attempt {
            start
        } else {
            "2030-03-01T09:02:00Z"
        };
        assert_eq!(
            parse_ts(&e["project_at"]),
            parse_ts(&json!(want)),
            "`project_at` is the test clock's time when decided: {t}"
        );
    }
    assert_eq!(
        parse_ts(&entry(&t, "delay.waited")["args"]["until"]),
        parse_ts(&json!("2030-03-01T09:01:30Z")),
        "{t}"
    );
}
