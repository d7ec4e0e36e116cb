//! Endpoints created, read, changed and deleted; events signed, retried and
//! ordered; secret rotation and replay; disabling; the egress guard.

use super::*;

#[tokio::test]
async fn endpoints_are_created_read_changed_and_deleted_without_showing_the_secret() {
    let app = TestApp::spawn();
    let (ep, _) = create_endpoint(
        &app,
        json!({"url": "https://example.com/events", "event_types": ["delivery.sent"]}),
    )
    .await;
    let id = s(&ep["id"]);
    assert_eq!(ep["event_types"], json!(["delivery.sent"]), "{ep}");
    assert_eq!(ep["enabled"], json!(true), "{ep}");
    assert_eq!(ep["disabled_reason"], Value::Null, "{ep}");

    let got = app.admin(GET, &format!("{E}/{id}")).go().await.ok(200);
    assert!(got.get("secret").is_none(), "{got}");
    assert_eq!(got["url"], json!("https://example.com/events"));
    let list = app.admin(GET, E).go().await.page();
    assert!(list["items"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["id"] == json!(id)));
    assert!(!list.to_string().contains("whsec_"), "{list}");

    let put = app
        .admin(PUT, &format!("{E}/{id}"))
        .json(&json!({"event_types": ["*"], "enabled": false}))
        .go()
        .await
        .ok(200);
    assert_eq!(put["event_types"], json!(["*"]), "{put}");
    assert_eq!(put["enabled"], json!(false), "{put}");

    let r = app
        .admin(POST, E)
        .json(&json!({"url": "ftp://x", "event_types": ["delivery.sent", "delivery.nope"]}))
        .go()
        .await;
    assert_validation(&r, &[("url", "format"), ("event_types.1", "inclusion")]);
    let r = app.admin(POST, E).json(&json!({})).go().await;
    assert_validation(&r, &[("url", "required")]);
    let r = app
        .admin(POST, E)
        .json(&json!({"url": "https://example.com/e", "event_types": []}))
        .go()
        .await;
    assert_validation(&r, &[("event_types", "length")]);
    let r = app
        .admin(POST, &format!("{E}/{id}/replay"))
        .json(&json!({"since": "yesterday"}))
        .go()
        .await;
    assert_validation(&r, &[("since", "format")]);

    app.admin(DELETE, &format!("{E}/{id}")).go().await.ok(204);
    let r = app.admin(GET, &format!("{E}/{id}")).go().await;
    assert_error(&r, 404, "not_found");
    let r = app.admin(DELETE, &format!("{E}/{id}")).go().await;
    assert_error(&r, 404, "not_found");
}

/// The delivery fails once (so it is retrying, then sent) and the receiver
/// answers 500 to the first two events: every event arrives signed, a
/// delivery's events arrive in order, and a retried event keeps its id.
#[tokio::test]
async fn events_are_signed_retried_with_the_same_id_and_ordered_per_delivery() {
    let app = TestApp::spawn();
    let rx = Receiver::start(2).await;
    let (_, secret) = create_endpoint(&app, json!({"url": rx.url()})).await;
    let hook = mock_server().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(wiremock::ResponseTemplate::new(503))
        .up_to_n_times(1)
        .mount(&hook)
        .await;
    mock_always(&hook, 200).await;
    let flow = chat_flow(&app, &hook_url(&hook)).await;
    let ext = new_ext("ev");
    app.create_user_as(&ext, json!({})).await;
    let (run, n) = run_one(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}]}),
    )
    .await;
    let did = s(&deliveries(&n)[0]["id"]);
    let nid = s(&n["id"]);
    let got = wait_for(&rx, "every event of the run", |g| {
        has(g, "delivery.sent", &did)
            && has(g, "notification.processed", &nid)
            && has(g, "flow_run.accepted", &s(&run["id"]))
    })
    .await;
    let all = rx.got();
    for g in &all {
        assert!(verifies(g, &secret), "bad signature: {g:?}");
        let body = g.json();
        assert!(
            body["timestamp"].is_string() && body["data"].is_object(),
            "{body}"
        );
    }
    // the first two answers were 500s; their events came again, same id
    assert_eq!(all[0].answered, 500);
    assert_eq!(all[1].answered, 500);
    for failed in &all[..2] {
        assert!(
            got.iter()
                .any(|g| g.id() == failed.id() && g.body == failed.body),
            "event {} was not retried with its id",
            failed.id()
        );
    }
    // the delivery's events, in order: retrying, then sent
    let of_delivery: Vec<String> = got
        .iter()
        .filter(|g| g.json()["data"]["id"] == json!(did))
        .map(|g| g.event_type())
        .collect();
    let first_sent = of_delivery
        .iter()
        .position(|t| t == "delivery.sent")
        .unwrap();
    let retrying = of_delivery
        .iter()
        .position(|t| t == "delivery.retrying")
        .expect("a delivery.retrying event");
    assert!(retrying < first_sent, "{of_delivery:?}");
    let sent = got
        .iter()
        .find(|g| g.event_type() == "delivery.sent")
        .unwrap()
        .json();
    assert_eq!(sent["data"]["status"], json!("sent"), "{sent}");
    assert_eq!(sent["data"]["attempts"], json!(2), "{sent}");
}

/// After a rotation both secrets sign, and replay sends events again with
/// their ids; the attempts are listed.
#[tokio::test]
async fn rotation_signs_with_both_secrets_and_replay_resends() {
    let app = TestApp::spawn();
    let rx = Receiver::start(0).await;
    let since = chrono::Utc::now().to_rfc3339();
    let (ep, old) = create_endpoint(
        &app,
        json!({"url": rx.url(), "event_types": ["flow_run.accepted"]}),
    )
    .await;
    let id = s(&ep["id"]);
    let rot = app
        .admin(POST, &format!("{E}/{id}/rotate_secret"))
        .go()
        .await
        .ok(200);
    let new = s(&rot["secret"]);
    assert!(new.starts_with("whsec_") && new != old, "{rot}");
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let flow = chat_flow(&app, &hook_url(&hook)).await;
    let ext = new_ext("rot");
    app.create_user_as(&ext, json!({})).await;
    let (run, _) = run_one(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}]}),
    )
    .await;
    let rid = s(&run["id"]);
    let got = wait_for(&rx, "flow_run.accepted", |g| {
        has(g, "flow_run.accepted", &rid)
    })
    .await;
    assert_eq!(got.len(), 1, "only the wanted type arrives: {got:?}");
    let g = &got[0];
    assert!(verifies(g, &old), "old secret: {g:?}");
    assert!(verifies(g, &new), "new secret: {g:?}");
    assert_eq!(
        g.headers["webhook-signature"].split(' ').count(),
        2,
        "{g:?}"
    );

    let r = app
        .admin(POST, &format!("{E}/{id}/replay"))
        .json(&json!({"since": since}))
        .go()
        .await
        .ok(200);
    assert_eq!(r["queued"], json!(1), "{r}");
    let again = wait_for(&rx, "the replayed event", |g| g.len() >= 2).await;
    assert_eq!(again[1].id(), again[0].id());
    assert_eq!(again[1].body, again[0].body);

    // (recorded once the receiver answered: on a cluster, by another node)
    let d = Deadline::new("both attempts to be recorded", 10);
    let page = loop {
        let page = app
            .admin(GET, &format!("{E}/{id}/attempts"))
            .go()
            .await
            .page();
        if page["items"].as_array().unwrap().len() >= 2 {
            break page;
        }
        d.tick(&page).await;
    };
    let items = page["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{page}");
    for a in items {
        assert_eq!(a["status_code"], json!(200), "{a}");
        assert_eq!(a["error"], Value::Null, "{a}");
        assert!(a["latency_ms"].is_u64(), "{a}");
        assert_eq!(a["event_type"], json!("flow_run.accepted"), "{a}");
    }
}

/// An endpoint that answers 500 for longer than the retry horizon is
/// disabled with its reason. Its answers, from loopback (the guard is off
/// here, which opens every range), are kept as their status only.
#[tokio::test]
async fn an_endpoint_failing_past_the_horizon_is_disabled() {
    let app = TestApp::spawn_with(&["--event-retry-horizon", "2"], &[]);
    let rx = Receiver::start_on(0, 0, 500, "x".repeat(3000)).await;
    let (ep, _) = create_endpoint(
        &app,
        json!({"url": rx.url(), "event_types": ["flow_run.accepted"]}),
    )
    .await;
    let id = s(&ep["id"]);
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let flow = chat_flow(&app, &hook_url(&hook)).await;
    let ext = new_ext("dis");
    app.create_user_as(&ext, json!({})).await;
    run_one(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}]}),
    )
    .await;
    let d = Deadline::new("the endpoint disabled", 30);
    let ep = loop {
        let ep = app.admin(GET, &format!("{E}/{id}")).go().await.ok(200);
        if ep["enabled"] == json!(false) {
            break ep;
        }
        d.tick(&ep).await;
    };
    let reason = s(&ep["disabled_reason"]);
    assert!(reason.contains("500"), "{ep}");
    let page = app
        .admin(GET, &format!("{E}/{id}/attempts"))
        .go()
        .await
        .page();
    let items = page["items"].as_array().unwrap();
    assert!(items.len() >= 2, "retried before giving up: {page}");
    for a in items {
        assert_eq!(a["status_code"], json!(500), "{a}");
        assert_eq!(a["response"], json!(""), "{a}");
        assert!(s(&a["error"]).contains("500"), "{a}");
    }
    // enabling it again clears the reason
    let ep = app
        .admin(PUT, &format!("{E}/{id}"))
        .json(&json!({"enabled": true}))
        .go()
        .await
        .ok(200);
    assert_eq!(ep["disabled_reason"], Value::Null, "{ep}");
    let _ = rx.stop();
}

/// With the egress guard on, a loopback endpoint is refused unless the
/// operator allows it.
#[tokio::test]
async fn the_egress_guard_refuses_private_endpoints_unless_allowed() {
    let app = TestApp::spawn_with(&[], &[GUARD_ON]);
    let r = app
        .admin(POST, E)
        .json(&json!({"url": "http://127.0.0.1:9/events"}))
        .go()
        .await;
    assert_validation(&r, &[("url", "exclusion")]);

    let app = TestApp::spawn_with(&["--egress-allow", "127.0.0.1"], &[GUARD_ON]);
    let rx = Receiver::start(0).await;
    let (_, secret) = create_endpoint(
        &app,
        json!({"url": rx.url(), "event_types": ["flow_run.accepted"]}),
    )
    .await;
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let flow = chat_flow(&app, &hook_url(&hook)).await;
    let ext = new_ext("eg");
    app.create_user_as(&ext, json!({})).await;
    let (run, _) = run_one(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}]}),
    )
    .await;
    let got = wait_for(&rx, "the allowed endpoint's event", |g| {
        has(g, "flow_run.accepted", &s(&run["id"]))
    })
    .await;
    assert!(verifies(&got[0], &secret));
}
