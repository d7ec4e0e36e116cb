//! The notification and delivery lists with their filters, and a durable
//! delay that survives a restart.

use super::*;

#[tokio::test]
async fn notification_and_delivery_lists_filter() {
    let hook = mock_server().await;
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let (u1, _) = app.create_user("u1", json!({})).await;
    let (u2, _) = app.create_user("u2", json!({})).await;
    let (u3, _) = app.create_user("u3", json!({})).await;
    // u2's chat delivery is refused by the receiver
    Mock::given(method("POST"))
        .and(body_string_contains(u2.as_str()))
        .respond_with(ResponseTemplate::new(400))
        .mount(&hook)
        .await;
    mock_always(&hook, 200).await;
    let chat = create_webhook_channel(&app, &hook_url(&hook), None).await;
    let chat_id = s(&chat["id"]);
    let fa = active_flow(
        &app,
        "fa",
        json!([
            channel_step(&inapp, None, "A"),
            channel_step(&chat_id, None, "A chat")
        ]),
    )
    .await;
    let fb = active_flow(&app, "fb", json!([channel_step(&inapp, None, "B")])).await;
    let (fa_id, fb_id) = (s(&fa["id"]), s(&fb["id"]));
    let topic = handle("news");
    let r = app
        .admin(PUT, &format!("{A}/topics/{topic}"))
        .json(&json!({"name": "News"}))
        .go()
        .await;
    r.ok(201);
    let r = app
        .admin(POST, &format!("{A}/topics/{topic}/subscriptions"))
        .json(&json!({"external_id": u3}))
        .go()
        .await;
    r.ok(201);

    let run1 = run_flow(
        &app,
        &fa_id,
        json!({"recipients": recipients(&[u1.clone(), u2.clone()])}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(30)).await;
    let run2 = run_flow(
        &app,
        &fb_id,
        json!({"recipients": recipients(std::slice::from_ref(&u1))}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(30)).await;
    let run3 = run_flow(&app, &fb_id, json!({"topic": topic, "data": {"k": "v"}})).await;
    assert_eq!(run3["recipients_count"], json!(1), "{run3}");
    let (r1, r2, r3) = (s(&run1["id"]), s(&run2["id"]), s(&run3["id"]));
    for id in [&r1, &r2, &r3] {
        wait_run_processed(&app, id, 30).await;
    }

    let all = list_all(&app, &format!("{A}/notifications"), &[]).await;
    assert_eq!(all.len(), 4, "{all:?}");
    for n in &all {
        for k in [
            "id",
            "flow_id",
            "flow_run_id",
            "topic",
            "status",
            "data",
            "actor_id",
            "actor",
            "recipient_id",
            "recipient",
            "deliveries",
            "processed_at",
            "created_at",
            "updated_at",
        ] {
            assert!(n.get(k).is_some(), "notification lacks {k}: {n}");
        }
        // by id: the same whole object
        let r = app
            .admin(GET, &format!("{A}/notifications/{}", s(&n["id"])))
            .go()
            .await;
        assert_eq!(&r.ok(200), n, "{r}");
        for d in deliveries(n) {
            let r = app
                .admin(GET, &format!("{A}/deliveries/{}", s(&d["id"])))
                .go()
                .await;
            assert_eq!(r.ok(200), d, "{r}");
            assert_eq!(d["notification_id"], n["id"], "{d}");
            assert_eq!(d["flow_id"], n["flow_id"], "{d}");
            assert_eq!(d["recipient_id"], n["recipient_id"], "{d}");
        }
    }
    // newest first
    let created: Vec<_> = all.iter().map(|n| s(&n["id"])).collect();
    let mut sorted = created.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(created, sorted, "notifications are newest first");

    let notif = |q: Vec<(&'static str, String)>| {
        let app = &app;
        async move {
            let q: Vec<(&str, &str)> = q.iter().map(|(k, v)| (*k, v.as_str())).collect();
            list_all(app, &format!("{A}/notifications"), &q).await
        }
    };
    let deliv_early = |q: Vec<(&'static str, String)>| {
        let app = &app;
        async move {
            let q: Vec<(&str, &str)> = q.iter().map(|(k, v)| (*k, v.as_str())).collect();
            list_all(app, &format!("{A}/deliveries"), &q).await
        }
    };
    let rcpts = |items: &[Value]| -> HashSet<String> {
        items
            .iter()
            .map(|n| s(&n["recipient"]["external_id"]))
            .collect()
    };

    let got = notif(vec![("flow_run_id", r1.clone())]).await;
    assert_eq!(
        rcpts(&got),
        HashSet::from([u1.clone(), u2.clone()]),
        "{got:?}"
    );
    assert!(got.iter().all(|n| n["flow_run_id"] == json!(r1)));
    let got = notif(vec![("flow_id", fb_id.clone())]).await;
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got.iter().all(|n| n["flow_id"] == json!(fb_id)));
    let got = notif(vec![("flow_id", fa_id.clone())]).await;
    assert_eq!(got.len(), 2, "{got:?}");
    let got = notif(vec![("recipient", u1.clone())]).await;
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got
        .iter()
        .all(|n| n["recipient"]["external_id"] == json!(u1)));
    let got = notif(vec![("flow_id", fa_id.clone()), ("recipient", u2.clone())]).await;
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["flow_run_id"], json!(r1));
    let got = notif(vec![("topic", topic.clone())]).await;
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["topic"], json!(topic));
    assert_eq!(got[0]["flow_run_id"], json!(r3));
    assert_eq!(got[0]["recipient"]["external_id"], json!(u3));
    assert_eq!(got[0]["data"], json!({"k": "v"}));
    assert!(deliveries(&got[0])
        .iter()
        .all(|d| d["topic"] == json!(topic)));
    let got = notif(vec![("status", "processed".into())]).await;
    assert_eq!(got.len(), 4, "{got:?}");
    let got = notif(vec![("status", "pending".into())]).await;
    assert_eq!(got.len(), 0, "{got:?}");
    let got = deliv_early(vec![("recipient", u3.clone())]).await;
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["channel_type"], json!("in_app"), "{got:?}");

    // created_after / created_before: exclusive, any offset
    let run2_n = notif(vec![("flow_run_id", r2.clone())]).await;
    assert_eq!(run2_n.len(), 1);
    let pivot = parse_ts(&run2_n[0]["created_at"]);
    let expect = |pred: &dyn Fn(chrono::DateTime<chrono::FixedOffset>) -> bool| -> HashSet<String> {
        all.iter()
            .filter(|n| pred(parse_ts(&n["created_at"])))
            .map(|n| s(&n["id"]))
            .collect()
    };
    let after = expect(&|t| t > pivot);
    let before = expect(&|t| t < pivot);
    assert!(
        !after.is_empty() && !before.is_empty(),
        "pivot splits the notifications"
    );
    let pivot_z = pivot.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let pivot_plus2 = pivot
        .with_timezone(&chrono::FixedOffset::east_opt(2 * 3600).unwrap())
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, false);
    for p in [&pivot_z, &pivot_plus2] {
        let got = notif(vec![("created_after", p.clone())]).await;
        assert_eq!(ids(&got), after, "created_after={p}");
        let got = notif(vec![("created_before", p.clone())]).await;
        assert_eq!(ids(&got), before, "created_before={p}");
    }

    // filters combine with pagination
    let r = app
        .admin(GET, &format!("{A}/notifications"))
        .query(&[("flow_id", fb_id.as_str()), ("limit", "1")])
        .go()
        .await;
    let p1 = r.page();
    assert_eq!(p1["items"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(p1["page"]["has_more_after"], json!(true), "{r}");
    let r = app
        .admin(GET, &format!("{A}/notifications"))
        .query(&[
            ("flow_id", fb_id.as_str()),
            ("limit", "1"),
            ("after", p1["page"]["after"].as_str().unwrap()),
        ])
        .go()
        .await;
    let p2 = r.page();
    assert_eq!(p2["items"].as_array().unwrap().len(), 1, "{r}");
    assert_ne!(p2["items"][0]["id"], p1["items"][0]["id"], "{r}");
    assert_eq!(p2["items"][0]["flow_id"], json!(fb_id), "{r}");
    assert_eq!(p2["page"]["has_more_after"], json!(false), "{r}");
    // the cursor binds to the filters
    let r = app
        .admin(GET, &format!("{A}/notifications"))
        .query(&[
            ("flow_id", fa_id.as_str()),
            ("limit", "1"),
            ("after", p1["page"]["after"].as_str().unwrap()),
        ])
        .go()
        .await;
    assert_invalid_param(&r, "after");

    // the unversioned alias
    let r = app
        .admin(GET, "/admin/notifications")
        .query(&[("flow_run_id", r1.as_str())])
        .go()
        .await;
    assert_eq!(
        ids(r.page()["items"].as_array().unwrap()),
        ids(&notif(vec![("flow_run_id", r1.clone())]).await),
        "{r}"
    );

    // bad filter values
    for (k, v) in [
        ("status", "bogus"),
        ("created_after", "2024-01-01"),
        ("created_before", "yesterday"),
        ("flow_run_id", "nope"),
    ] {
        let r = app
            .admin(GET, &format!("{A}/notifications"))
            .query(&[(k, v)])
            .go()
            .await;
        assert_invalid_param(&r, k);
    }
    // `flow_id` takes a handle as the paths do: "nope" names no flow
    let got = notif(vec![("flow_id", "nope".into())]).await;
    assert!(got.is_empty(), "{got:?}");

    // a deleted recipient's notifications stay, with recipient null
    let n3 = notif(vec![("topic", topic.clone())]).await;
    let r = app
        .admin(DELETE, &format!("{A}/users/{}", enc(&u3)))
        .go()
        .await;
    assert_eq!(r.status, 204, "{r}");
    let r = app
        .admin(GET, &format!("{A}/notifications/{}", s(&n3[0]["id"])))
        .go()
        .await;
    let gone = r.ok(200);
    assert_eq!(gone["recipient"], Value::Null, "{r}");
    assert_eq!(gone["recipient_id"], n3[0]["recipient_id"], "{r}");
    assert_eq!(gone["deliveries"], n3[0]["deliveries"], "{r}");

    // ---- deliveries
    let all_d = list_all(&app, &format!("{A}/deliveries"), &[]).await;
    assert_eq!(all_d.len(), 6, "{all_d:?}");
    let deliv = |q: Vec<(&'static str, String)>| {
        let app = &app;
        async move {
            let q: Vec<(&str, &str)> = q.iter().map(|(k, v)| (*k, v.as_str())).collect();
            list_all(app, &format!("{A}/deliveries"), &q).await
        }
    };
    let got = deliv(vec![("channel_type", "chat".into())]).await;
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got.iter().all(|d| d["channel_type"] == json!("chat")));
    let got = deliv(vec![("channel_type", "in_app".into())]).await;
    assert_eq!(got.len(), 4, "{got:?}");
    let got = deliv(vec![("channel_id", chat_id.clone())]).await;
    assert_eq!(got.len(), 2, "{got:?}");
    let got = deliv(vec![("channel_id", inapp.clone())]).await;
    assert_eq!(got.len(), 4, "{got:?}");
    let failed = deliv(vec![("status", "failed".into())]).await;
    assert_eq!(failed.len(), 1, "u2's chat delivery failed: {failed:?}");
    assert_eq!(failed[0]["channel_type"], json!("chat"));
    assert_eq!(failed[0]["error"]["code"], json!("provider_rejected"));
    assert_eq!(failed[0]["attempts"], json!(1));
    let got = deliv(vec![("status", "sent".into())]).await;
    assert_eq!(got.len(), 5, "{got:?}");
    let got = deliv(vec![("status", "pending".into())]).await;
    assert_eq!(got.len(), 0, "{got:?}");
    let got = deliv(vec![("status", "skipped".into())]).await;
    assert_eq!(got.len(), 0, "{got:?}");
    let got = deliv(vec![
        ("status", "sent".into()),
        ("channel_type", "chat".into()),
    ])
    .await;
    assert_eq!(got.len(), 1, "{got:?}");
    let got = deliv(vec![("recipient", u1.clone())]).await;
    assert_eq!(got.len(), 3, "{got:?}");
    let n_u2 = notif(vec![("flow_run_id", r1.clone()), ("recipient", u2.clone())]).await;
    assert_eq!(n_u2.len(), 1);
    assert_eq!(s(&failed[0]["notification_id"]), s(&n_u2[0]["id"]));
    let got = deliv(vec![("notification_id", s(&n_u2[0]["id"]))]).await;
    assert_eq!(ids(&got), ids(&deliveries(&n_u2[0])), "{got:?}");
    assert_eq!(got.len(), 2);
    let dpivot = parse_ts(&all_d[2]["created_at"]);
    let d_after: HashSet<String> = all_d
        .iter()
        .filter(|d| parse_ts(&d["created_at"]) > dpivot)
        .map(|d| s(&d["id"]))
        .collect();
    let got = deliv(vec![(
        "created_after",
        dpivot.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
    )])
    .await;
    assert_eq!(ids(&got), d_after);
    for (k, v) in [
        ("status", "bogus"),
        ("channel_type", "fax"),
        ("channel_id", "nope"),
        ("notification_id", "nope"),
        ("created_before", "2024-13-45"),
    ] {
        let r = app
            .admin(GET, &format!("{A}/deliveries"))
            .query(&[(k, v)])
            .go()
            .await;
        assert_invalid_param(&r, k);
    }
}

/// `?flow_id=` on the notification list takes the flow's handle as every
/// path does (it refused anything but a UUID): the same notifications as by
/// id, the cursor good for the next page; a handle or an id that names no
/// flow matches nothing (an empty list, as an unknown `recipient`).
#[tokio::test]
async fn notification_list_takes_a_flow_handle() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let fa = active_flow(&app, "byhandle", json!([channel_step(&inapp, None, "A")])).await;
    let fb = active_flow(&app, "other", json!([channel_step(&inapp, None, "B")])).await;
    let (fa_id, fa_handle) = (s(&fa["id"]), s(&fa["handle"]));
    let (u1, _) = app.create_user("fh1", json!({})).await;
    let (u2, _) = app.create_user("fh2", json!({})).await;
    let runs = [
        run_flow(
            &app,
            &fa_id,
            json!({"recipients": recipients(&[u1.clone(), u2.clone()])}),
        )
        .await,
        run_flow(
            &app,
            &s(&fb["id"]),
            json!({"recipients": recipients(std::slice::from_ref(&u1))}),
        )
        .await,
    ];
    for r in &runs {
        wait_run_processed(&app, &s(&r["id"]), 30).await;
    }
    let list = |q: Vec<(&'static str, String)>| {
        let app = &app;
        async move {
            let q: Vec<(&str, &str)> = q.iter().map(|(k, v)| (*k, v.as_str())).collect();
            list_all(app, &format!("{A}/notifications"), &q).await
        }
    };
    let by_id = list(vec![("flow_id", fa_id.clone())]).await;
    assert_eq!(by_id.len(), 2, "{by_id:?}");
    let by_handle = list(vec![("flow_id", fa_handle.clone())]).await;
    assert_eq!(ids(&by_handle), ids(&by_id), "{by_handle:?}");
    assert!(by_handle.iter().all(|n| n["flow_id"] == json!(fa_id)));
    let got = list(vec![
        ("flow_id", fa_handle.clone()),
        ("recipient", u2.clone()),
    ])
    .await;
    assert_eq!(got.len(), 1, "{got:?}");
    // one page at a time: the cursor of a handle-filtered page
    let r = app
        .admin(GET, &format!("{A}/notifications"))
        .query(&[("flow_id", fa_handle.as_str()), ("limit", "1")])
        .go()
        .await;
    let p1 = r.page();
    assert_eq!(p1["items"].as_array().unwrap().len(), 1, "{r}");
    let r = app
        .admin(GET, &format!("{A}/notifications"))
        .query(&[
            ("flow_id", fa_handle.as_str()),
            ("limit", "1"),
            ("after", p1["page"]["after"].as_str().unwrap()),
        ])
        .go()
        .await;
    let p2 = r.page();
    assert_eq!(p2["items"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(p2["items"][0]["flow_id"], json!(fa_id), "{r}");
    assert_ne!(p2["items"][0]["id"], p1["items"][0]["id"], "{r}");
    // unknown: nothing, not an error
    for unknown in [handle("nosuch"), new_uuid()] {
        let r = app
            .admin(GET, &format!("{A}/notifications"))
            .query(&[("flow_id", unknown.as_str())])
            .go()
            .await;
        let page = r.page();
        assert_eq!(page["items"], json!([]), "flow_id={unknown}: {r}");
    }
}

#[tokio::test]
async fn delay_step_survives_a_restart() {
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let mut app = TestApp::spawn_on(dir.path(), &keys);
    let inapp = in_app_channel(&app).await;
    let chat = create_webhook_channel(&app, &hook_url(&hook), None).await;
    let flow = active_flow(
        &app,
        "delayed",
        json!([
            channel_step(&inapp, None, "now"),
            delay_step(3),
            channel_step(&s(&chat["id"]), None, "later"),
        ]),
    )
    .await;
    let (ext, _) = app.create_user("patient", json!({})).await;
    let run = run_flow(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}]}),
    )
    .await;
    let t_accept = std::time::Instant::now();
    let status = app.stop();
    assert!(status.success(), "SIGTERM exits 0: {status:?}");
    assert!(
        received(&hook).await.is_empty(),
        "nothing delayed may go out before the delay"
    );

    let app = TestApp::spawn_on(dir.path(), &keys);
    let run_id = s(&run["id"]);
    let due = parse_ts(&run["created_at"]) + chrono::Duration::seconds(3);
    let ns = run_notifications(&app, &run_id).await;
    assert_eq!(ns.len(), 1, "the accepted run survived the restart: {ns:?}");
    let chat_d = delivery_of(&ns[0], "chat");
    let chat_id = s(&chat_d["id"]);
    if t_accept.elapsed() < Duration::from_millis(2500) {
        assert_eq!(
            chat_d["status"],
            json!("pending"),
            "still delayed: {chat_d}"
        );
        assert_eq!(ns[0]["status"], json!("pending"), "{}", ns[0]);
        let r = app
            .admin(GET, &format!("{A}/flow_runs/{run_id}"))
            .go()
            .await;
        let fr = r.ok(200);
        assert_eq!(fr["status"], json!("pending"), "{r}");
        assert_eq!(fr["processed_at"], Value::Null, "{r}");
        assert!(
            parse_ts(&chat_d["next_attempt_at"]) >= due,
            "next_attempt_at is the end of the delay: {chat_d}"
        );
    }
    let d = wait_delivery_final(&app, &chat_id, 30).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["data"]["body"], json!("later"), "{d}");
    assert!(
        parse_ts(&d["sent_at"]) >= due,
        "sent no earlier than 3 s after acceptance: {d} (due {due})"
    );
    let reqs = requests_for(&hook, &chat_id).await;
    assert!(
        !reqs.is_empty(),
        "the webhook received the delayed delivery"
    );
    let fr = wait_run_processed(&app, &run_id, 30).await;
    assert_eq!(fr["notifications_count"], json!(1), "{fr}");
    let ns = run_notifications(&app, &run_id).await;
    let inapp_d = delivery_of(&ns[0], "in_app");
    assert_eq!(inapp_d["status"], json!("sent"), "{}", ns[0]);
    assert!(
        parse_ts(&inapp_d["sent_at"]) <= parse_ts(&d["sent_at"]),
        "steps happen in order: {}",
        ns[0]
    );
    assert_eq!(ns[0]["status"], json!("processed"), "{}", ns[0]);
}

/// `status=pending` lists come from the pending-delivery queue and the pending
/// notification index; both must hold exactly what waits, and empty as it goes.
#[tokio::test]
async fn pending_filters_list_exactly_what_waits() {
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let chat = create_webhook_channel(&app, &hook_url(&hook), None).await;
    let flow = active_flow(
        &app,
        "pending-lists",
        json!([
            channel_step(&inapp, None, "now"),
            delay_step(2),
            channel_step(&s(&chat["id"]), None, "later"),
        ]),
    )
    .await;
    let (u1, _) = app.create_user("pend1", json!({})).await;
    let (u2, _) = app.create_user("pend2", json!({})).await;
    let run = run_flow(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": u1}, {"external_id": u2}]}),
    )
    .await;
    let run_id = s(&run["id"]);
    let pending_d = list_all(&app, &format!("{A}/deliveries"), &[("status", "pending")]).await;
    assert_eq!(
        pending_d.len(),
        2,
        "the two delayed chat deliveries: {pending_d:?}"
    );
    assert!(pending_d.iter().all(|d| d["channel_type"] == json!("chat")
        && d["status"] == json!("pending")
        && d["flow_run_id"] == json!(run_id)));
    let sent_d = list_all(&app, &format!("{A}/deliveries"), &[("status", "sent")]).await;
    assert_eq!(
        sent_d.len(),
        2,
        "the in-app ones are sent at once: {sent_d:?}"
    );
    assert!(sent_d.iter().all(|d| d["channel_type"] == json!("in_app")));
    let pending_n = list_all(
        &app,
        &format!("{A}/notifications"),
        &[("status", "pending")],
    )
    .await;
    assert_eq!(pending_n.len(), 2, "{pending_n:?}");
    let done_n = list_all(
        &app,
        &format!("{A}/notifications"),
        &[("status", "processed")],
    )
    .await;
    assert_eq!(done_n.len(), 0, "{done_n:?}");
    // every delivery of a notification, in step order, through its range
    let n = &pending_n[0];
    let ds = list_all(
        &app,
        &format!("{A}/deliveries"),
        &[("notification_id", n["id"].as_str().unwrap())],
    )
    .await;
    let mut types: Vec<String> = ds.iter().map(|d| s(&d["channel_type"])).collect();
    types.sort();
    assert_eq!(
        types,
        vec!["chat".to_string(), "in_app".to_string()],
        "{ds:?}"
    );

    wait_run_processed(&app, &run_id, 30).await;
    let pending_d = list_all(&app, &format!("{A}/deliveries"), &[("status", "pending")]).await;
    assert!(pending_d.is_empty(), "{pending_d:?}");
    let pending_n = list_all(
        &app,
        &format!("{A}/notifications"),
        &[("status", "pending")],
    )
    .await;
    assert!(pending_n.is_empty(), "{pending_n:?}");
    let done_n = list_all(
        &app,
        &format!("{A}/notifications"),
        &[("status", "processed")],
    )
    .await;
    assert_eq!(done_n.len(), 2, "{done_n:?}");
    let sent_d = list_all(&app, &format!("{A}/deliveries"), &[("status", "sent")]).await;
    assert_eq!(sent_d.len(), 4, "{sent_d:?}");
}
