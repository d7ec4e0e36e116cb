//! docs/API.md §9 (delivery semantics) and §7 (the `webhook` provider): signed
//! requests, retries with backoff for transient failures, immediate failure for
//! permanent ones, attempts/error/next_attempt_at, notifications processed once
//! every delivery settles, and supervision of a crashing delivery actor.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{json, Value};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::engine_helpers::*;
use crate::helpers::*;

/// Mounts `statuses` (each answered once, in order), then 200 for everything after.
async fn mock_sequence(server: &MockServer, statuses: &[u16]) {
    for st in statuses {
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(*st))
            .up_to_n_times(1)
            .mount(server)
            .await;
    }
    mock_always(server, 200).await;
}

/// An active flow with a single chat step on a new webhook channel.
async fn chat_flow(app: &TestApp, config: Value) -> (Value, Value) {
    let ch = create_webhook_channel_with(app, config).await;
    assert_eq!(ch["status"], json!("active"), "{ch}");
    let flow = active_flow(
        app,
        "hook",
        json!([channel_step(
            &s(&ch["id"]),
            Some("S {{ data.n }}"),
            "Hello {{ recipient.first_name }}"
        )]),
    )
    .await;
    (ch, flow)
}

/// Runs `flow` for `ext` and returns the id of its only delivery.
async fn run_single(app: &TestApp, flow: &Value, ext: &str, data: Value) -> (String, String) {
    let run = run_flow(
        app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}], "data": data}),
    )
    .await;
    let run_id = s(&run["id"]);
    let ns = run_notifications(app, &run_id).await;
    assert_eq!(ns.len(), 1, "{ns:?}");
    let ds = deliveries(&ns[0]);
    assert_eq!(ds.len(), 1, "{}", ns[0]);
    (run_id, s(&ds[0]["id"]))
}

#[tokio::test]
async fn requests_are_signed_and_carry_the_delivery() {
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let app = TestApp::spawn();
    let (secret, key) = webhook_secret();
    let (ch, flow) = chat_flow(
        &app,
        json!({"url": hook_url(&hook), "secret": secret, "retry": fast_retry()}),
    )
    .await;
    let cid = s(&ch["id"]);
    let ext = new_ext("signed");
    app.create_user_as(
        &ext,
        json!({"first_name": "Ann", "email": "ann@example.com"}),
    )
    .await;

    let (run_id, did) = run_single(&app, &flow, &ext, json!({"n": 1})).await;
    let d = wait_delivery_final(&app, &did, 30).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
    assert_eq!(d["error"], Value::Null, "{d}");
    assert_eq!(d["next_attempt_at"], Value::Null, "{d}");
    assert!(is_timestamp(&d["sent_at"]), "{d}");
    assert_eq!(d["channel_id"], json!(cid), "{d}");
    assert_eq!(d["channel_type"], json!("chat"), "{d}");
    assert_eq!(d["data"]["subject"], json!("S 1"), "{d}");
    assert_eq!(d["data"]["body"], json!("Hello Ann"), "{d}");
    let fr = wait_run_processed(&app, &run_id, 30).await;
    assert_eq!(fr["notifications_count"], json!(1), "{fr}");

    let reqs = requests_for(&hook, &did).await;
    assert_eq!(reqs.len(), 1, "one request for one successful attempt");
    let q = &reqs[0];
    assert_eq!(q.method.as_str(), "POST");
    assert_eq!(q.url.path(), "/hook");
    assert!(
        req_header(q, "content-type")
            .unwrap_or_default()
            .starts_with("application/json"),
        "content-type: {:?}",
        q.headers
    );
    assert_eq!(
        req_header(q, "idempotency-key").as_deref(),
        Some(did.as_str())
    );
    assert_eq!(req_header(q, "webhook-id").as_deref(), Some(did.as_str()));
    let ts: i64 = req_header(q, "webhook-timestamp")
        .expect("webhook-timestamp")
        .parse()
        .expect("webhook-timestamp is unix seconds");
    assert!(
        (now_secs() - ts).abs() < 120,
        "webhook-timestamp {ts} is now-ish"
    );
    assert_signed(q, &key);
    let body = req_json(q);
    assert_eq!(body["delivery"]["id"], json!(did), "{body}");
    assert_eq!(
        body["delivery"]["notification_id"], d["notification_id"],
        "{body}"
    );
    assert_eq!(body["delivery"]["channel_type"], json!("chat"), "{body}");
    assert_eq!(
        body["delivery"]["data"]["body"],
        json!("Hello Ann"),
        "{body}"
    );
    assert_eq!(body["delivery"]["data"]["subject"], json!("S 1"), "{body}");
    assert_eq!(body["recipient"]["external_id"], json!(ext), "{body}");
    assert_eq!(
        body["recipient"]["email"],
        json!("ann@example.com"),
        "{body}"
    );
    assert_eq!(body["recipient"]["id"], d["recipient_id"], "{body}");

    // a PUT that sends the mask keeps the secret: still signed with the same key
    let r = app
        .admin(PUT, &format!("{A}/channels/{cid}"))
        .json(&json!({"name": "renamed", "config": {"secret": "********"}}))
        .go()
        .await;
    r.ok(200);
    let (_, did2) = run_single(&app, &flow, &ext, json!({"n": 2})).await;
    assert_eq!(
        wait_delivery_final(&app, &did2, 30).await["status"],
        json!("sent")
    );
    let reqs = requests_for(&hook, &did2).await;
    assert_eq!(reqs.len(), 1);
    assert_signed(&reqs[0], &key);

    // a new secret signs with the new key
    let (secret2, key2) = webhook_secret();
    let r = app
        .admin(PUT, &format!("{A}/channels/{cid}"))
        .json(&json!({"config": {"secret": secret2}}))
        .go()
        .await;
    r.ok(200);
    let (_, did3) = run_single(&app, &flow, &ext, json!({"n": 3})).await;
    assert_eq!(
        wait_delivery_final(&app, &did3, 30).await["status"],
        json!("sent")
    );
    let reqs = requests_for(&hook, &did3).await;
    assert_eq!(reqs.len(), 1);
    assert_signed(&reqs[0], &key2);

    // no secret: no signature, still the ids
    let r = app
        .admin(PUT, &format!("{A}/channels/{cid}"))
        .json(&json!({"config": {"secret": null}}))
        .go()
        .await;
    r.ok(200);
    let (_, did4) = run_single(&app, &flow, &ext, json!({"n": 4})).await;
    assert_eq!(
        wait_delivery_final(&app, &did4, 30).await["status"],
        json!("sent")
    );
    let reqs = requests_for(&hook, &did4).await;
    assert_eq!(reqs.len(), 1);
    assert!(
        req_header(&reqs[0], "webhook-signature").is_none(),
        "unsigned without a secret: {:?}",
        reqs[0].headers
    );
    assert_eq!(
        req_header(&reqs[0], "webhook-id").as_deref(),
        Some(did4.as_str())
    );
}

#[tokio::test]
async fn transient_failures_are_retried_until_sent() {
    let h500 = mock_server().await;
    mock_sequence(&h500, &[500, 500]).await;
    let h429 = mock_server().await;
    mock_sequence(&h429, &[429, 408]).await;
    let hslow = mock_server().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503).insert_header("retry-after", "2"))
        .up_to_n_times(1)
        .mount(&hslow)
        .await;
    mock_always(&hslow, 200).await;

    let hcap = mock_server().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "120"))
        .up_to_n_times(1)
        .mount(&hcap)
        .await;
    mock_always(&hcap, 200).await;

    let app = TestApp::spawn();
    let (ext, _) = app.create_user("retry", json!({"first_name": "R"})).await;
    let (_, fcap) = chat_flow(&app, json!({"url": hook_url(&hcap), "retry": fast_retry()})).await;
    let (_, dcap) = run_single(&app, &fcap, &ext, json!({})).await;
    let (_, f500) = chat_flow(&app, json!({"url": hook_url(&h500), "retry": fast_retry()})).await;
    let (_, f429) = chat_flow(&app, json!({"url": hook_url(&h429), "retry": fast_retry()})).await;
    let (_, fslow) = chat_flow(
        &app,
        json!({"url": hook_url(&hslow),
            "retry": {"max_attempts": 3, "base_seconds": 0.05, "max_seconds": 2}}),
    )
    .await;
    let (r500, d500) = run_single(&app, &f500, &ext, json!({})).await;
    let (r429, d429) = run_single(&app, &f429, &ext, json!({})).await;
    let (rslow, dslow) = run_single(&app, &fslow, &ext, json!({})).await;

    // Retry-After honoured: progress is visible while the delivery waits
    let dl = Deadline::new("the first failed attempt of the Retry-After delivery", 30);
    let pending = loop {
        let r = app
            .admin(GET, &format!("{A}/deliveries/{dslow}"))
            .go()
            .await;
        let d = r.ok(200);
        if d["attempts"] == json!(1) || d["status"] != json!("pending") {
            break d;
        }
        dl.tick(&r).await;
    };
    assert_eq!(
        pending["status"],
        json!("pending"),
        "waiting for its retry: {pending}"
    );
    assert_eq!(
        pending["error"]["code"],
        json!("provider_unavailable"),
        "{pending}"
    );
    assert!(
        pending["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{pending}"
    );
    assert_eq!(pending["sent_at"], Value::Null, "{pending}");
    let next = parse_ts(&pending["next_attempt_at"]);
    let wait = next - parse_ts(&pending["updated_at"]);
    assert!(
        wait >= chrono::Duration::milliseconds(1500),
        "Retry-After: 2 is honoured (next attempt {wait:?} after the failure): {pending}"
    );
    let r = app
        .admin(
            GET,
            &format!("{A}/notifications/{}", s(&pending["notification_id"])),
        )
        .go()
        .await;
    let n = r.ok(200);
    assert_eq!(
        n["status"],
        json!("pending"),
        "not processed while retrying: {r}"
    );
    assert_eq!(n["processed_at"], Value::Null, "{r}");

    // 500, 500, 200 -> sent after 3 attempts
    let d = wait_delivery_final(&app, &d500, 30).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["attempts"], json!(3), "{d}");
    assert_eq!(d["error"], Value::Null, "{d}");
    assert_eq!(d["next_attempt_at"], Value::Null, "{d}");
    let reqs = requests_for(&h500, &d500).await;
    assert_eq!(reqs.len(), 3, "three requests, all for the same delivery");
    assert_eq!(received(&h500).await.len(), 3);
    for q in &reqs {
        assert_eq!(req_header(q, "webhook-id").as_deref(), Some(d500.as_str()));
        assert_eq!(req_json(q)["delivery"]["id"], json!(d500));
    }
    wait_run_processed(&app, &r500, 30).await;

    // 429, 408, 200 -> sent after 3 attempts
    let d = wait_delivery_final(&app, &d429, 30).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["attempts"], json!(3), "{d}");
    assert_eq!(requests_for(&h429, &d429).await.len(), 3);
    wait_run_processed(&app, &r429, 30).await;

    // 503 + Retry-After, then 200 -> sent at the second attempt, not before its time
    let d = wait_delivery_final(&app, &dslow, 30).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["attempts"], json!(2), "{d}");
    assert_eq!(d["error"], Value::Null, "{d}");
    assert!(
        parse_ts(&d["sent_at"]) >= next,
        "the retry waited for next_attempt_at ({next}): {d}"
    );
    assert_eq!(requests_for(&hslow, &dslow).await.len(), 2);
    let fr = wait_run_processed(&app, &rslow, 30).await;
    assert!(is_timestamp(&fr["processed_at"]), "{fr}");

    // Retry-After: 120 is honoured only up to max_seconds (0.2 s)
    let d = wait_delivery_final(&app, &dcap, 20).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["attempts"], json!(2), "{d}");
    let waited = parse_ts(&d["sent_at"]) - parse_ts(&d["created_at"]);
    assert!(
        waited < chrono::Duration::seconds(20),
        "the retry did not wait the full Retry-After: {d}"
    );
}

#[tokio::test]
async fn permanent_failures_fail_at_once() {
    let cases: [(u16, &str); 5] = [
        (400, "provider_rejected"),
        (404, "provider_rejected"),
        (422, "provider_rejected"),
        (401, "provider_unauthorized"),
        (403, "provider_unauthorized"),
    ];
    let mut hooks = Vec::new();
    for (st, _) in &cases {
        let h = mock_server().await;
        mock_always(&h, *st).await;
        hooks.push(h);
    }
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let (ext, _) = app.create_user("perm", json!({})).await;
    let mut runs = Vec::new();
    for h in &hooks {
        let ch = create_webhook_channel(&app, &hook_url(h), None).await;
        let flow = active_flow(
            &app,
            "perm",
            json!([
                channel_step(&inapp, None, "in app"),
                channel_step(&s(&ch["id"]), None, "chat")
            ]),
        )
        .await;
        let run = run_flow(
            &app,
            &s(&flow["id"]),
            json!({"recipients": [{"external_id": ext}]}),
        )
        .await;
        runs.push(s(&run["id"]));
    }
    for ((i, (st, code)), run_id) in cases.iter().enumerate().zip(&runs) {
        let fr = wait_run_processed(&app, run_id, 30).await;
        assert_eq!(fr["notifications_count"], json!(1), "{fr}");
        let ns = run_notifications(&app, run_id).await;
        let n = &ns[0];
        assert_eq!(n["status"], json!("processed"), "{st}: {n}");
        assert!(is_timestamp(&n["processed_at"]), "{st}: {n}");
        assert_eq!(
            delivery_of(n, "in_app")["status"],
            json!("sent"),
            "{st}: {n}"
        );
        let d = delivery_of(n, "chat");
        assert_eq!(d["status"], json!("failed"), "{st}: {d}");
        assert_eq!(d["attempts"], json!(1), "{st} fails at once: {d}");
        assert_eq!(d["error"]["code"], json!(code), "{st}: {d}");
        assert!(
            d["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{st}: {d}"
        );
        assert_eq!(d["next_attempt_at"], Value::Null, "{st}: {d}");
        assert_eq!(d["sent_at"], Value::Null, "{st}: {d}");
        let did = s(&d["id"]);
        // no retry follows (the fast policy would retry within 0.2 s)
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(
            requests_for(&hooks[i], &did).await.len(),
            1,
            "{st}: exactly one request"
        );
        let r = app.admin(GET, &format!("{A}/deliveries/{did}")).go().await;
        assert_eq!(r.ok(200), d, "{st}: a failed delivery stays as it is: {r}");
    }
}

#[tokio::test]
async fn exhausted_retries_connection_refused_and_revoked_channels_fail() {
    let h503 = mock_server().await;
    mock_always(&h503, 503).await;
    let hrev = mock_server().await;
    mock_always(&hrev, 200).await;
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let (ext, _) = app.create_user("exhaust", json!({})).await;

    let hslow = mock_server().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_millis(2000)))
        .mount(&hslow)
        .await;

    let mut flows = Vec::new();
    for url in [
        hook_url(&h503),
        closed_port_url(),
        hook_url(&hrev),
        hook_url(&hslow),
    ] {
        let ch = create_webhook_channel_with(
            &app,
            json!({"url": url, "retry": fast_retry(), "timeout_ms": 300}),
        )
        .await;
        let flow = active_flow(
            &app,
            "exhaust",
            json!([
                channel_step(&inapp, None, "in app"),
                channel_step(&s(&ch["id"]), None, "chat")
            ]),
        )
        .await;
        flows.push((ch, flow));
    }
    // revoke the third channel after its flow was activated
    let r = app
        .admin(
            POST,
            &format!("{A}/channels/{}/revoke", s(&flows[2].0["id"])),
        )
        .go()
        .await;
    assert_eq!(r.ok(200)["status"], json!("revoked"), "{r}");

    let mut runs = Vec::new();
    for (_, flow) in &flows {
        let run = run_flow(
            &app,
            &s(&flow["id"]),
            json!({"recipients": [{"external_id": ext}]}),
        )
        .await;
        runs.push(s(&run["id"]));
    }
    let mut chat = Vec::new();
    for run_id in &runs {
        let fr = wait_run_processed(&app, run_id, 30).await;
        assert!(is_timestamp(&fr["processed_at"]), "{fr}");
        let ns = run_notifications(&app, run_id).await;
        assert_eq!(ns[0]["status"], json!("processed"), "{}", ns[0]);
        assert_eq!(
            delivery_of(&ns[0], "in_app")["status"],
            json!("sent"),
            "{}",
            ns[0]
        );
        chat.push(delivery_of(&ns[0], "chat"));
    }
    // 503 every time: failed after max_attempts (3)
    let d = &chat[0];
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("provider_unavailable"), "{d}");
    assert_eq!(d["attempts"], json!(3), "{d}");
    assert_eq!(d["next_attempt_at"], Value::Null, "{d}");
    assert_eq!(d["sent_at"], Value::Null, "{d}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let reqs = requests_for(&h503, &s(&d["id"])).await;
    assert_eq!(reqs.len(), 3, "max_attempts requests, then none");
    // connection refused: transient too, failed after max_attempts
    let d = &chat[1];
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("provider_unavailable"), "{d}");
    assert_eq!(d["attempts"], json!(3), "{d}");
    assert_eq!(d["next_attempt_at"], Value::Null, "{d}");
    // revoked: failed with provider_revoked, nothing sent
    let d = &chat[2];
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("provider_revoked"), "{d}");
    assert!(
        received(&hrev).await.is_empty(),
        "nothing goes to a revoked channel"
    );
    // a receiver slower than timeout_ms: a transient failure, retried, then failed
    let d = &chat[3];
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("provider_unavailable"), "{d}");
    assert_eq!(d["attempts"], json!(3), "{d}");
}

#[tokio::test]
async fn a_panicking_chat_actor_is_restarted_and_delivers() {
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let app = TestApp::spawn_with(&[], &[("HERALD_FAULT_PANIC_ONCE", "chat")]);
    let inapp = in_app_channel(&app).await;
    let ch = create_webhook_channel(&app, &hook_url(&hook), None).await;
    let flow = active_flow(
        &app,
        "phoenix",
        json!([
            channel_step(&inapp, None, "in app"),
            channel_step(&s(&ch["id"]), None, "chat")
        ]),
    )
    .await;
    let exts: Vec<String> = (0..3).map(|i| new_ext(&format!("p{i}"))).collect();
    let run = run_flow(
        &app,
        &s(&flow["id"]),
        json!({"recipients": recipients(&exts)}),
    )
    .await;
    let run_id = s(&run["id"]);
    let fr = wait_run_processed(&app, &run_id, 30).await;
    assert_eq!(fr["notifications_count"], json!(3), "{fr}");
    let ns = run_notifications(&app, &run_id).await;
    let mut chat_ids = HashSet::new();
    for n in &ns {
        let d = delivery_of(n, "chat");
        assert_eq!(
            d["status"],
            json!("sent"),
            "delivered despite the crash: {d}"
        );
        assert_eq!(d["error"], Value::Null, "{d}");
        chat_ids.insert(s(&d["id"]));
        assert_eq!(delivery_of(n, "in_app")["status"], json!("sent"), "{n}");
    }
    let got: HashSet<String> = received(&hook)
        .await
        .iter()
        .filter_map(|q| req_header(q, "idempotency-key"))
        .collect();
    assert!(
        chat_ids.is_subset(&got),
        "every chat delivery reached the webhook"
    );
    // the fault really fired
    let out = app.output.text();
    assert!(
        out.to_lowercase().contains("panic"),
        "the injected panic shows in the output:\n{}",
        app.output.tail(40)
    );
    // and the engine keeps working
    let r = app.request(GET, "/readyz").go().await;
    assert_eq!(r.status, 200, "{r}");
    let run2 = run_flow(
        &app,
        &s(&flow["id"]),
        json!({"recipients": recipients(&exts[..1])}),
    )
    .await;
    let fr2 = wait_run_processed(&app, &s(&run2["id"]), 30).await;
    assert_eq!(fr2["status"], json!("processed"));
    let ns2 = run_notifications(&app, &s(&run2["id"])).await;
    assert_eq!(
        delivery_of(&ns2[0], "chat")["status"],
        json!("sent"),
        "{}",
        ns2[0]
    );
}
