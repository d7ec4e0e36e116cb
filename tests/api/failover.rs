//! Provider failover and channel health (docs/API.md §8 "Provider failover",
//! §7 "Channel health"): a delivery its channel fails (a 500 until the
//! retries run out, a 400) goes through the step's backup with the same
//! delivery id; an open circuit sends to the backup without calling the
//! channel, and a probe after the cool-down closes it (with its events);
//! a channel without a backup holds its deliveries until it heals; the
//! validation of `fallback_channel_ids`.
//!
//! The providers are local webhook receivers (wiremock) on 127.0.0.1.

use std::time::Duration;

use serde_json::{json, Value};
use wiremock::MockServer;

use crate::engine_helpers::*;
use crate::helpers::*;

/// The cool-down of the servers these tests start, in ms.
const COOLDOWN_MS: u64 = 4000;

/// A webhook channel to `server` with `attempts` quick attempts.
async fn hook_channel(app: &TestApp, server: &MockServer, attempts: u32) -> String {
    let ch = create_webhook_channel_with(
        app,
        json!({"url": hook_url(server),
               "retry": {"max_attempts": attempts, "base_seconds": 0.05, "max_seconds": 0.1}}),
    )
    .await;
    assert_eq!(ch["status"], json!("active"), "{ch}");
    assert_eq!(ch["health"]["state"], json!("ok"), "{ch}");
    assert_eq!(ch["health"]["last_error"], Value::Null, "{ch}");
    s(&ch["id"])
}

/// An active flow with one chat step on `channel`, backed by `fallbacks`.
async fn failover_flow(app: &TestApp, channel: &str, fallbacks: &[&str]) -> Value {
    let mut step = channel_step(channel, Some("S"), "Hello {{ data.n }}");
    step["fallback_channel_ids"] = json!(fallbacks);
    let flow = active_flow(app, "fo", json!([step])).await;
    // shown as given; absent when none
    let shown = &flow["steps"][0]["fallback_channel_ids"];
    if fallbacks.is_empty() {
        assert_eq!(shown, &Value::Null, "{flow}");
    } else {
        assert_eq!(shown, &json!(fallbacks), "{flow}");
    }
    flow
}

/// Runs `flow` for a new user; returns its delivery's id.
async fn run(app: &TestApp, flow: &Value, n: u32) -> String {
    let ext = new_ext("fo");
    app.create_user_as(&ext, json!({"first_name": "Ann"})).await;
    let run = run_flow(
        app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}], "data": {"n": n}}),
    )
    .await;
    let ns = run_notifications(app, &s(&run["id"])).await;
    let ds = deliveries(&ns[0]);
    assert_eq!(ds.len(), 1, "{}", ns[0]);
    s(&ds[0]["id"])
}

/// The entries of a notification's trace with `code`.
async fn trace_entries(app: &TestApp, nid: &str, code: &str) -> Vec<Value> {
    let t = app
        .admin(GET, &format!("{A}/notifications/{nid}/trace"))
        .go()
        .await
        .ok(200);
    t["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["code"] == json!(code))
        .cloned()
        .collect()
}

async fn channel(app: &TestApp, id: &str) -> Value {
    app.admin(GET, &format!("{A}/channels/{id}"))
        .go()
        .await
        .ok(200)
}

/// Waits until channel `id`'s health is `state`; returns the channel.
async fn wait_health(app: &TestApp, id: &str, state: &str) -> Value {
    let d = Deadline::new(format!("channel {id} {state}"), 30);
    loop {
        let c = channel(app, id).await;
        if c["health"]["state"] == json!(state) {
            return c;
        }
        d.tick(&c["health"]).await;
    }
}

#[tokio::test]
async fn a_500_until_the_retries_run_out_moves_the_delivery_to_the_backup() {
    let (a, b) = (mock_server().await, mock_server().await);
    mock_always(&a, 500).await;
    mock_always(&b, 200).await;
    let app = TestApp::spawn();
    let ca = hook_channel(&app, &a, 2).await;
    let cb = hook_channel(&app, &b, 2).await;
    let flow = failover_flow(&app, &ca, &[&cb]).await;

    let did = run(&app, &flow, 1).await;
    let d = wait_delivery_final(&app, &did, 30).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["channel_id"], json!(cb), "the channel that sent it: {d}");
    assert_eq!(d["attempts"], json!(3), "{d}");
    assert_eq!(d["attempt_channels"], json!([ca, ca, cb]), "{d}");
    assert_eq!(d["error"], Value::Null, "{d}");
    // The same delivery id (idempotency key) at both providers.
    assert_eq!(requests_for(&a, &did).await.len(), 2);
    let at_b = requests_for(&b, &did).await;
    assert_eq!(at_b.len(), 1);
    assert_eq!(
        req_header(&at_b[0], "webhook-id").as_deref(),
        Some(did.as_str())
    );
    assert_eq!(req_json(&at_b[0])["delivery"]["id"], json!(did));

    let nid = s(&d["notification_id"]);
    let moved = trace_entries(&app, &nid, "delivery.failover").await;
    assert_eq!(moved.len(), 1, "{moved:?}");
    let args = &moved[0]["args"];
    assert_eq!(args["from"], json!(ca), "{args}");
    assert_eq!(args["to"], json!(cb), "{args}");
    assert_eq!(args["reason"], json!("retries_exhausted"), "{args}");
    let attempts = trace_entries(&app, &nid, "attempt").await;
    let channels: Vec<&Value> = attempts.iter().map(|e| &e["args"]["channel_id"]).collect();
    assert_eq!(
        channels,
        vec![&json!(ca), &json!(ca), &json!(cb)],
        "{attempts:?}"
    );
    let results: Vec<&Value> = attempts.iter().map(|e| &e["args"]["result"]).collect();
    assert_eq!(
        results,
        vec![&json!("retry"), &json!("failover"), &json!("sent")],
        "{attempts:?}"
    );
    // one retry scheduled (through A), none for the move
    assert_eq!(trace_entries(&app, &nid, "retry.scheduled").await.len(), 1);
    // The list filtered by channel finds it under the backup.
    let by_b = app
        .admin(GET, &format!("{A}/deliveries"))
        .query(&[("channel_id", cb.as_str())])
        .go()
        .await
        .page();
    assert!(
        by_b["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["id"] == json!(did)),
        "{by_b}"
    );
}

#[tokio::test]
async fn a_400_moves_the_delivery_at_once_and_a_chain_is_walked_in_order() {
    let (a, b, c) = (
        mock_server().await,
        mock_server().await,
        mock_server().await,
    );
    mock_always(&a, 400).await;
    mock_always(&b, 422).await;
    mock_always(&c, 200).await;
    let app = TestApp::spawn();
    let ca = hook_channel(&app, &a, 5).await;
    let cb = hook_channel(&app, &b, 5).await;
    let cc = hook_channel(&app, &c, 5).await;
    let flow = failover_flow(&app, &ca, &[&cb, &cc]).await;

    let did = run(&app, &flow, 2).await;
    let d = wait_delivery_final(&app, &did, 30).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["channel_id"], json!(cc), "{d}");
    assert_eq!(d["attempt_channels"], json!([ca, cb, cc]), "{d}");
    for (server, n) in [(&a, 1), (&b, 1), (&c, 1)] {
        assert_eq!(requests_for(server, &did).await.len(), n);
    }
    let moved = trace_entries(&app, &s(&d["notification_id"]), "delivery.failover").await;
    let hops: Vec<(Value, Value, Value)> = moved
        .iter()
        .map(|e| {
            (
                e["args"]["from"].clone(),
                e["args"]["to"].clone(),
                e["args"]["reason"].clone(),
            )
        })
        .collect();
    assert_eq!(
        hops,
        vec![
            (json!(ca), json!(cb), json!("failed")),
            (json!(cb), json!(cc), json!("failed"))
        ]
    );
    // A rejection of one message is no failure of the channel.
    assert_eq!(channel(&app, &ca).await["health"]["state"], json!("ok"));

    // Without a backup left, a rejection fails the delivery.
    let alone = failover_flow(&app, &ca, &[]).await;
    let did = run(&app, &alone, 3).await;
    let d = wait_delivery_final(&app, &did, 30).await;
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["channel_id"], json!(ca), "{d}");
    assert_eq!(d["attempt_channels"], json!([ca]), "{d}");
}

#[tokio::test]
async fn an_open_circuit_sends_to_the_backup_without_calling_the_channel_until_a_probe_heals_it() {
    let (a, b, events) = (
        mock_server().await,
        mock_server().await,
        mock_server().await,
    );
    mock_always(&a, 503).await;
    mock_always(&b, 200).await;
    mock_always(&events, 200).await;
    let cooldown = COOLDOWN_MS.to_string();
    let app = TestApp::spawn_with(&[], &[("HERALD_CHANNEL_COOLDOWN_MS", &cooldown)]);
    app.admin(POST, "/admin/v1/webhook_endpoints")
        .json(&json!({"url": format!("{}/events", events.uri()),
                      "event_types": ["channel.degraded", "channel.recovered"]}))
        .go()
        .await
        .ok(201);
    let ca = hook_channel(&app, &a, 1).await;
    let cb = hook_channel(&app, &b, 1).await;
    let flow = failover_flow(&app, &ca, &[&cb]).await;

    // Failures in a row open A's circuit (5 on one node; a cluster's
    // nodes count their own, so more may be needed there).
    let mut n = 0;
    let degraded = loop {
        n += 1;
        assert!(n <= 20, "A never became degraded");
        let did = run(&app, &flow, n).await;
        let d = wait_delivery_final(&app, &did, 30).await;
        assert_eq!(d["status"], json!("sent"), "{d}");
        assert_eq!(d["channel_id"], json!(cb), "{d}");
        let c = channel(&app, &ca).await;
        if c["health"]["state"] == json!("degraded") {
            break c;
        }
    };
    assert!(n >= 5, "opened after {n} failures");
    assert!(is_timestamp(&degraded["health"]["since"]), "{degraded}");
    assert!(
        s(&degraded["health"]["last_error"]).contains("503"),
        "{degraded}"
    );
    // Every node follows the shared state within a second.
    tokio::time::sleep(Duration::from_millis(1200)).await;

    // Open: the next deliveries go to B without a request to A.
    let before = received(&a).await.len();
    let did = run(&app, &flow, 100).await;
    let d = wait_delivery_final(&app, &did, 30).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["channel_id"], json!(cb), "{d}");
    assert_eq!(d["attempts"], json!(1), "no attempt through A: {d}");
    assert_eq!(d["attempt_channels"], json!([cb]), "{d}");
    assert_eq!(received(&a).await.len(), before, "A was not called");
    let moved = trace_entries(&app, &s(&d["notification_id"]), "delivery.failover").await;
    assert_eq!(moved[0]["args"]["reason"], json!("unhealthy"), "{moved:?}");

    // A heals; after the cool-down a probe goes to A and closes the circuit.
    a.reset().await;
    mock_always(&a, 200).await;
    tokio::time::sleep(Duration::from_millis(COOLDOWN_MS)).await;
    let d = Deadline::new("a probe through A", 30);
    let mut n = 200;
    loop {
        n += 1;
        let did = run(&app, &flow, n).await;
        let got = wait_delivery_final(&app, &did, 30).await;
        if got["channel_id"] == json!(ca) {
            assert_eq!(got["status"], json!("sent"), "{got}");
            assert_eq!(requests_for(&a, &did).await.len(), 1);
            break;
        }
        d.tick(&got).await;
    }
    let ok = wait_health(&app, &ca, "ok").await;
    assert!(
        parse_ts(&ok["health"]["since"]) > parse_ts(&degraded["health"]["since"]),
        "{ok}"
    );
    // The list shows the health too.
    let list = app.admin(GET, &format!("{A}/channels")).go().await.page();
    let shown = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == json!(ca))
        .cloned()
        .expect("A listed");
    assert_eq!(shown["health"]["state"], json!("ok"), "{shown}");

    // The events: degraded, then recovered, for A.
    let d = Deadline::new("channel events", 30);
    loop {
        let got: Vec<Value> = received(&events).await.iter().map(req_json).collect();
        let of_a: Vec<String> = got
            .iter()
            .filter(|e| e["data"]["channel_id"] == json!(ca))
            .map(|e| s(&e["type"]))
            .collect();
        if of_a.contains(&"channel.recovered".to_string()) {
            assert_eq!(
                of_a.first().map(String::as_str),
                Some("channel.degraded"),
                "{of_a:?}"
            );
            let rec = got
                .iter()
                .find(|e| e["type"] == json!("channel.recovered"))
                .unwrap();
            assert_eq!(rec["data"]["health"]["state"], json!("ok"), "{rec}");
            assert_eq!(rec["data"]["channel_type"], json!("chat"), "{rec}");
            break;
        }
        d.tick(format!("{of_a:?}")).await;
    }
}

#[tokio::test]
async fn without_a_backup_deliveries_wait_for_the_channel_and_go_once_it_heals() {
    let a = mock_server().await;
    mock_always(&a, 500).await;
    let cooldown = COOLDOWN_MS.to_string();
    let app = TestApp::spawn_with(&[], &[("HERALD_CHANNEL_COOLDOWN_MS", &cooldown)]);
    let ca = hook_channel(&app, &a, 8).await;
    let flow = failover_flow(&app, &ca, &[]).await;

    let did = run(&app, &flow, 1).await;
    let degraded = wait_health(&app, &ca, "degraded").await;
    assert!(
        s(&degraded["health"]["last_error"]).contains("500"),
        "{degraded}"
    );
    // Open: the delivery waits, pending, its attempts not used up.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let d = app
        .admin(GET, &format!("{A}/deliveries/{did}"))
        .go()
        .await
        .ok(200);
    assert_eq!(d["status"], json!("pending"), "{d}");
    let waited = d["attempts"].as_u64().unwrap();
    assert!((5..8).contains(&waited), "{d}");
    assert!(is_timestamp(&d["next_attempt_at"]), "{d}");
    let calls = requests_for(&a, &did).await.len();
    assert_eq!(calls as u64, waited, "no call while open: {d}");

    // Healed: the probe after the cool-down sends it.
    a.reset().await;
    mock_always(&a, 200).await;
    let d = wait_delivery_final(&app, &did, 30).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["attempts"], json!(waited + 1), "{d}");
    assert_eq!(d["channel_id"], json!(ca), "{d}");
    wait_health(&app, &ca, "ok").await;
}

#[tokio::test]
async fn backups_are_validated_on_save_and_activation() {
    let app = TestApp::spawn();
    let server = mock_server().await;
    let ca = hook_channel(&app, &server, 1).await;
    let cb = hook_channel(&app, &server, 1).await;
    let cc = hook_channel(&app, &server, 1).await;
    let cd = hook_channel(&app, &server, 1).await;
    let in_app = in_app_channel(&app).await;
    let create = |steps: Value| {
        let app = &app;
        async move {
            app.admin(POST, &format!("{A}/flows"))
                .json(&json!({"handle": handle("fov"), "name": "F", "steps": steps}))
                .go()
                .await
        }
    };
    let step = |fallbacks: Value| {
        let mut st = channel_step(&ca, Some("S"), "B");
        st["fallback_channel_ids"] = fallbacks;
        st
    };
    let unknown = new_uuid();
    let r = create(json!([step(json!([cb, unknown, "nope", in_app, cb, ca]))])).await;
    assert_validation(
        &r,
        &[
            ("steps.0.fallback_channel_ids.1", "inclusion"),
            ("steps.0.fallback_channel_ids.2", "format"),
        ],
    );
    let r = create(json!([step(json!([in_app]))])).await;
    assert_validation(&r, &[("steps.0.fallback_channel_ids.0", "inclusion")]);
    let r = create(json!([step(json!([cb, cb]))])).await;
    assert_validation(&r, &[("steps.0.fallback_channel_ids.1", "unique")]);
    let r = create(json!([step(json!([ca]))])).await;
    assert_validation(&r, &[("steps.0.fallback_channel_ids.0", "unique")]);
    let r = create(json!([step(json!([cb, cc, cd, new_uuid()]))])).await;
    assert_validation(&r, &[("steps.0.fallback_channel_ids.3", "length")]);
    let r = create(json!([step(json!("x"))])).await;
    assert_validation(&r, &[("steps.0.fallback_channel_ids", "format")]);
    let mut on_feed = channel_step(&in_app, None, "B");
    on_feed["fallback_channel_ids"] = json!([in_app]);
    let r = create(json!([on_feed])).await;
    assert_validation(&r, &[("steps.0.fallback_channel_ids", "inclusion")]);

    // A backup revoked before activation stops it; deleting one an
    // active flow names is refused.
    let flow = create_flow(&app, &handle("fok"), json!([step(json!([cb, cc]))])).await;
    app.admin(POST, &format!("{A}/channels/{cc}/revoke"))
        .go()
        .await
        .ok(200);
    let r = app
        .admin(POST, &format!("{A}/flows/{}/activate", s(&flow["id"])))
        .go()
        .await;
    assert_eq!(r.status, 409, "{r}");
    let flow = create_flow(&app, &handle("fok"), json!([step(json!([cb]))])).await;
    activate(&app, &s(&flow["id"])).await;
    let r = app.admin(DELETE, &format!("{A}/channels/{cb}")).go().await;
    assert_eq!(r.status, 409, "{r}");
}
