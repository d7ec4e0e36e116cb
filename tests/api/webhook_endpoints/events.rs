//! Which events reach an endpoint and how: answers kept as status only, a
//! kill -9 between commit and send, feed changes in order, push removals,
//! a hanging endpoint, and the payloads of processed and interact events.

use super::*;

/// An endpoint in a range the operator opened (`--egress-allow`, the guard
/// on) is an internal service: its attempts keep the status and no byte of
/// its answer, whether a 2xx or an error, and neither does the reason its
/// endpoint was disabled for (docs/SECURITY.md; issue 35, item 6).
#[tokio::test]
async fn an_opened_range_s_answers_are_kept_as_their_status_only() {
    const INTERNAL: &str = "internal-answer-7f3a";
    let args = [
        "--egress-allow",
        "127.0.0.0/8",
        "--event-retry-horizon",
        "2",
    ];
    let app = TestApp::spawn_with(&args, &[GUARD_ON]);
    let ok = Receiver::start_on(0, 0, 200, format!("{{\"token\": \"{INTERNAL}\"}}")).await;
    let failing = Receiver::start_on(0, 0, 500, format!("{{\"error\": \"{INTERNAL}\"}}")).await;
    let mut ids = vec![];
    for rx in [&ok, &failing] {
        let (ep, _) = create_endpoint(
            &app,
            json!({"url": rx.url(), "event_types": ["flow_run.accepted"]}),
        )
        .await;
        ids.push(s(&ep["id"]));
    }
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(&app, "opened", json!([channel_step(&inapp, None, "Hi")])).await;
    let ext = new_ext("opened");
    app.create_user_as(&ext, json!({})).await;
    run_one(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}]}),
    )
    .await;

    // the failing one retries past the horizon and is disabled
    let d = Deadline::new("the failing endpoint disabled", 30);
    let disabled = loop {
        let ep = app
            .admin(GET, &format!("{E}/{}", ids[1]))
            .go()
            .await
            .ok(200);
        if ep["enabled"] == json!(false) {
            break ep;
        }
        d.tick(&ep).await;
    };
    let attempts = |id: &str| {
        let path = format!("{E}/{id}/attempts");
        let app = &app;
        async move { app.admin(GET, &path).go().await.page() }
    };
    let page = attempts(&ids[0]).await;
    let items = page["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{page}");
    assert_eq!(items[0]["status_code"], json!(200), "{page}");
    assert_eq!(items[0]["response"], json!(""), "{page}");
    assert_eq!(items[0]["error"], Value::Null, "{page}");
    let failed = attempts(&ids[1]).await;
    let items = failed["items"].as_array().unwrap();
    assert!(items.len() >= 2, "retried before giving up: {failed}");
    for a in items {
        assert_eq!(a["status_code"], json!(500), "{a}");
        assert_eq!(a["response"], json!(""), "{a}");
        assert_eq!(a["error"], json!("the endpoint answered 500"), "{a}");
    }
    // the receivers did answer with it; nothing of it is shown
    assert!(ok.got().len() == 1 && failing.got().len() >= 2);
    for shown in [page.to_string(), failed.to_string(), disabled.to_string()] {
        assert!(
            !shown.contains(INTERNAL),
            "the internal answer is shown: {shown}"
        );
    }
    let _ = (ok.stop(), failing.stop());
}

/// `kill -9` with events committed but not sent (the receiver is down):
/// after the restart every event of what the store kept arrives, and any
/// duplicate carries the same id.
#[tokio::test]
async fn kill9_between_commit_and_send_loses_no_event() {
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let mut app = TestApp::spawn_on(dir.path(), &keys);
    // reserve a port, then leave it closed: the sender's attempts fail
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/events");
    let (_, secret) = create_endpoint(&app, json!({"url": url})).await;
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let flow = chat_flow(&app, &hook_url(&hook)).await;
    let mut dids = vec![];
    for i in 0..3 {
        let ext = new_ext(&format!("k9{i}"));
        app.create_user_as(&ext, json!({})).await;
        let (_, n) = run_one(
            &app,
            &s(&flow["id"]),
            json!({"recipients": [{"external_id": ext}]}),
        )
        .await;
        dids.push(s(&deliveries(&n)[0]["id"]));
    }
    for did in &dids {
        wait_delivery_final(&app, did, 30).await;
    }
    app.kill9();
    let app = TestApp::spawn_on(dir.path(), &keys);
    let rx = Receiver::start_on(port, 0, 200, String::new()).await;
    // what the store kept decides what must arrive
    let mut want: Vec<(String, String)> = vec![];
    for did in &dids {
        let d = app
            .admin(GET, &format!("{A}/deliveries/{did}"))
            .go()
            .await
            .ok(200);
        if d["status"] == json!("sent") {
            want.push(("delivery.sent".into(), did.clone()));
        }
    }
    let got = wait_for(&rx, "every kept event after the restart", |g| {
        want.iter().all(|(t, id)| has(g, t, id))
    })
    .await;
    let mut ids_of: HashMap<(String, String), HashSet<String>> = HashMap::new();
    for g in &got {
        assert!(verifies(g, &secret), "{g:?}");
        ids_of
            .entry((g.event_type(), s(&g.json()["data"]["id"])))
            .or_default()
            .insert(g.id());
    }
    for (k, ids) in ids_of {
        assert_eq!(ids.len(), 1, "{k:?} came with several ids: {ids:?}");
    }
    drop(app);
}

/// Feed entries: a read, a click, an archive and `seen_all` each send their
/// event, after the entry's `delivery.sent`, in order.
#[tokio::test]
async fn feed_entry_changes_send_their_events_in_order() {
    let app = TestApp::spawn();
    let rx = Receiver::start(0).await;
    let (_, secret) = create_endpoint(
        &app,
        json!({"url": rx.url(), "event_types": [
            "delivery.sent", "feed_entry.seen", "feed_entry.read",
            "feed_entry.clicked", "feed_entry.archived"]}),
    )
    .await;
    let inbox = in_app_channel(&app).await;
    let flow = active_flow(&app, "fe", json!([channel_step(&inbox, None, "Hi")])).await;
    let ext = new_ext("fe");
    app.create_user_as(&ext, json!({})).await;
    let mut ids = vec![];
    for _ in 0..2 {
        let (_, n) = run_one(
            &app,
            &s(&flow["id"]),
            json!({"recipients": [{"external_id": ext}]}),
        )
        .await;
        ids.push(s(&deliveries(&n)[0]["id"]));
    }
    let (first, second) = (&ids[0], &ids[1]);
    for action in ["read", "clicked", "archive"] {
        app.user(POST, &format!("/user/v1/feed/{first}/{action}"), &ext)
            .go()
            .await
            .ok(200);
    }
    app.user(POST, "/user/v1/feed/seen_all", &ext)
        .go()
        .await
        .ok(200);
    let got = wait_for(&rx, "the feed events", |g| {
        has(g, "feed_entry.archived", first) && has(g, "feed_entry.seen", second)
    })
    .await;
    let of = |id: &str| -> Vec<String> {
        got.iter()
            .filter(|g| g.json()["data"]["id"] == json!(id))
            .map(|g| g.event_type())
            .collect()
    };
    assert_eq!(
        of(first),
        [
            "delivery.sent",
            "feed_entry.seen",
            "feed_entry.read",
            "feed_entry.clicked",
            "feed_entry.archived"
        ]
    );
    assert_eq!(of(second), ["delivery.sent", "feed_entry.seen"]);
    assert!(got.iter().all(|g| verifies(g, &secret)));
}

/// A push service answering 410 removes the subscription: the endpoint
/// gets `push_subscription.removed` and the delivery's `delivery.failed`,
/// and the notification's trace records the removal.
#[tokio::test]
async fn a_gone_push_subscription_sends_its_removal() {
    use crate::providers_support::{active_channel, subscribe, Subscriber};
    let ps = mock_server().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(wiremock::ResponseTemplate::new(410))
        .mount(&ps)
        .await;
    let app = TestApp::spawn();
    let rx = Receiver::start(0).await;
    create_endpoint(
        &app,
        json!({"url": rx.url(), "event_types": ["push_subscription.removed", "delivery.failed"]}),
    )
    .await;
    let ch = active_channel(
        &app,
        "web_push",
        "web_push",
        json!({"subject": "mailto:ops@herald.test"}),
    )
    .await;
    let cid = s(&ch["id"]);
    let flow = active_flow(&app, "wp", json!([channel_step(&cid, Some("S"), "B")])).await;
    let (ext, _) = app.create_user("gone", json!({})).await;
    let gone = format!("{}/gone/{}", ps.uri(), random_hex());
    subscribe(
        &app,
        &ext,
        &cid,
        json!({"identifier": gone, "keys": Subscriber::new().keys()}),
    )
    .await
    .ok(201);
    let (_, n) = run_one(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}]}),
    )
    .await;
    let did = s(&deliveries(&n)[0]["id"]);
    let got = wait_for(&rx, "the removal and the failure", |g| {
        has(g, "delivery.failed", &did)
            && g.iter()
                .any(|x| x.event_type() == "push_subscription.removed")
    })
    .await;
    let removed = got
        .iter()
        .find(|g| g.event_type() == "push_subscription.removed")
        .unwrap()
        .json();
    assert_eq!(removed["data"]["identifier"], json!(gone), "{removed}");
    assert_eq!(removed["data"]["channel_id"], json!(cid), "{removed}");
    let t = app
        .admin(GET, &format!("{A}/notifications/{}/trace", s(&n["id"])))
        .go()
        .await
        .ok(200);
    let e = t["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["code"] == json!("subscription.removed"))
        .unwrap_or_else(|| panic!("no subscription.removed in {t}"))
        .clone();
    assert_eq!(e["args"]["count"], json!(1), "{t}");
}

/// An endpoint that never answers holds only its own events back: another
/// endpoint's attempt is sent and recorded while the hanging one has not
/// even finished its first attempt (which waits for the 10 s timeout).
#[tokio::test]
async fn a_hanging_endpoint_does_not_hold_the_others_back() {
    let app = TestApp::spawn();
    // accepts connections and reads, never answers
    let hang = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hang_url = format!("http://{}/events", hang.local_addr().unwrap());
    let holder = tokio::spawn(async move {
        let mut held = vec![];
        while let Ok((sock, _)) = hang.accept().await {
            held.push(sock);
        }
    });
    let (hung, _) = create_endpoint(
        &app,
        json!({"url": hang_url, "event_types": ["flow_run.accepted"]}),
    )
    .await;
    let rx = Receiver::start(0).await;
    let (good, _) = create_endpoint(
        &app,
        json!({"url": rx.url(), "event_types": ["flow_run.accepted"]}),
    )
    .await;
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let flow = chat_flow(&app, &hook_url(&hook)).await;
    let ext = new_ext("hang");
    app.create_user_as(&ext, json!({})).await;
    let (run, _) = run_one(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}]}),
    )
    .await;
    wait_for(&rx, "the answering endpoint's event", |g| {
        has(g, "flow_run.accepted", &s(&run["id"]))
    })
    .await;
    // the answered attempt is recorded without waiting for the hanging one
    let d = Deadline::new("the answered attempt recorded", 30);
    loop {
        let page = app
            .admin(GET, &format!("{E}/{}/attempts", s(&good["id"])))
            .go()
            .await
            .page();
        if !page["items"].as_array().unwrap().is_empty() {
            break;
        }
        d.tick(&page).await;
    }
    let page = app
        .admin(GET, &format!("{E}/{}/attempts", s(&hung["id"])))
        .go()
        .await
        .page();
    assert_eq!(
        page["items"].as_array().unwrap().len(),
        0,
        "the hanging endpoint's attempt is still waiting: {page}"
    );
    holder.abort();
}

/// `notification.processed` carries the notification as
/// `GET /admin/v1/notifications/{id}` shows it (docs/API.md §15), `status`,
/// users, run data and deliveries included: one settled by its provider's
/// answer, one processed as the run was accepted (in-app only), one a
/// throttle step stopped (`throttled`) and one that joined a batch
/// (`batched`, whose `notification.batched` carries the same). Nothing is left out of the
/// comparison: the GET is made as the event arrives, before anything
/// (a feed entry read, a user changed) can move on.
#[tokio::test]
async fn notification_processed_carries_the_notification_as_get_shows_it() {
    let app = TestApp::spawn();
    let rx = Receiver::start(0).await;
    create_endpoint(
        &app,
        json!({"url": rx.url(), "event_types": ["notification.processed", "notification.batched"]}),
    )
    .await;
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let chat = chat_flow(&app, &hook_url(&hook)).await;
    let inbox = in_app_channel(&app).await;
    let feed = active_flow(
        &app,
        "evp",
        json!([
            {"type": "throttle", "limit": 1, "window": "1h"},
            channel_step(&inbox, None, "Hi {{ data.n }}")
        ]),
    )
    .await;
    let (ext, actor) = (new_ext("evp"), new_ext("eva"));
    app.create_user_as(&ext, json!({"first_name": "Ann"})).await;
    app.create_user_as(&actor, json!({"first_name": "Bo"}))
        .await;
    let mut nids = vec![];
    for (flow, n) in [(&chat, 1), (&feed, 2), (&feed, 3)] {
        let (_, got) = run_one(
            &app,
            &s(&flow["id"]),
            json!({"recipients": [{"external_id": ext}], "actor": actor, "data": {"n": n}}),
        )
        .await;
        nids.push(s(&got["id"]));
    }
    // A batch: the first run opens it (and waits an hour), the second joins
    // and ends there, `batched`, with both events.
    let digest = active_flow(
        &app,
        "evb",
        json!([{"type": "batch", "window": "1h"}, channel_step(&inbox, None, "Digest")]),
    )
    .await;
    let body = json!({"recipients": [{"external_id": ext}], "data": {"n": 4}});
    run_flow(&app, &s(&digest["id"]), body.clone()).await;
    let (_, joined) = run_one(&app, &s(&digest["id"]), body).await;
    nids.push(s(&joined["id"]));
    let got = wait_for(&rx, "notification.processed of each run", |g| {
        nids.iter().all(|id| has(g, "notification.processed", id))
    })
    .await;
    let mut statuses = vec![];
    for id in &nids {
        let event = got
            .iter()
            .find(|g| {
                g.event_type() == "notification.processed" && g.json()["data"]["id"] == json!(id)
            })
            .unwrap()
            .json();
        let shown = app
            .admin(GET, &format!("/admin/v1/notifications/{id}"))
            .go()
            .await
            .ok(200);
        assert_eq!(
            event["data"], shown,
            "the event's data is not the GET's body"
        );
        statuses.push(s(&shown["status"]));
    }
    assert_eq!(statuses, ["processed", "processed", "throttled", "batched"]);
    let batched = got
        .iter()
        .find(|g| g.event_type() == "notification.batched")
        .expect("a notification.batched event")
        .json();
    let shown = app
        .admin(GET, &format!("/admin/v1/notifications/{}", nids[3]))
        .go()
        .await
        .ok(200);
    assert_eq!(batched["data"], shown);
    assert!(shown["batched_into"].is_string(), "{shown}");
    let first = &got
        .iter()
        .find(|g| g.json()["data"]["id"] == json!(nids[0]))
        .unwrap()
        .json()["data"];
    assert_eq!(first["recipient"]["first_name"], json!("Ann"), "{first}");
    assert_eq!(first["actor"]["first_name"], json!("Bo"), "{first}");
    assert_eq!(first["data"], json!({"n": 1}), "{first}");
    assert_eq!(first["deliveries"][0]["status"], json!("sent"), "{first}");
}

/// Issue 41: pressing an entry's action sends `feed_entry.interacted`
/// (with `feed_entry.seen` and `.read`, which the press implies), and
/// `archive_all` sends `feed_entry.archived` per entry.
#[tokio::test]
async fn interact_and_archive_all_send_their_events() {
    let app = TestApp::spawn();
    let rx = Receiver::start(0).await;
    let (_, secret) = create_endpoint(
        &app,
        json!({"url": rx.url(), "event_types": [
            "feed_entry.seen", "feed_entry.read", "feed_entry.interacted",
            "feed_entry.archived"]}),
    )
    .await;
    let inbox = in_app_channel(&app).await;
    let mut step = channel_step(&inbox, None, "Hi");
    step["template"]["actions"] = json!([{"label": "Go", "url": "https://example.com/go"}]);
    let flow = active_flow(&app, "fi", json!([step])).await;
    let ext = new_ext("fi");
    app.create_user_as(&ext, json!({})).await;
    let (_, n) = run_one(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}]}),
    )
    .await;
    let id = s(&deliveries(&n)[0]["id"]);
    app.interact(&ext, &id, &json!({"action": 0})).await.ok(200);
    app.archive_all(&ext, &[]).await.ok(200);
    let got = wait_for(&rx, "the feed events", |g| {
        has(g, "feed_entry.archived", &id)
    })
    .await;
    let of: Vec<String> = got
        .iter()
        .filter(|g| g.json()["data"]["id"] == json!(id))
        .map(|g| g.event_type())
        .collect();
    assert_eq!(
        of,
        [
            "feed_entry.seen",
            "feed_entry.read",
            "feed_entry.interacted",
            "feed_entry.archived"
        ]
    );
    let pressed = got
        .iter()
        .find(|g| g.event_type() == "feed_entry.interacted")
        .unwrap()
        .json();
    assert_eq!(pressed["data"]["interacted_action"], json!(0), "{pressed}");
    assert!(got.iter().all(|g| verifies(g, &secret)));
}
