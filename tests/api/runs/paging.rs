//! Lists over shared records paged one by one, and grouped and single
//! records read alike.

use super::*;

/// Walks a list one item per page, forward with `after` and back with `before`,
/// and returns the ids in list order each way (the backward walk reversed).
async fn walk_one_by_one(
    app: &TestApp, path: &str, query: &[(&str, &str)],
) -> (Vec<String>, Vec<String>) {
    let mut forward = vec![];
    let mut after: Option<String> = None;
    let mut last_page = None;
    for _ in 0..200 {
        let mut q: Vec<(&str, &str)> = query.to_vec();
        q.push(("limit", "1"));
        if let Some(a) = &after {
            q.push(("after", a));
        }
        let body = app.admin(GET, path).query(&q).go().await.page();
        forward.extend(
            body["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| s(&i["id"])),
        );
        last_page = Some(body.clone());
        match body["page"]["after"].as_str() {
            Some(a) if body["page"]["has_more_after"] == json!(true) => after = Some(a.into()),
            _ => break,
        }
    }
    // Back from the last page: pages of newer items, each newest first.
    let mut pages: Vec<Vec<String>> = vec![];
    let mut before = None;
    if let Some(p) = &last_page {
        pages.push(
            p["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| s(&i["id"]))
                .collect(),
        );
        before = p["page"]["before"].as_str().map(String::from);
    }
    for _ in 0..200 {
        let Some(b) = before.clone() else { break };
        let mut q: Vec<(&str, &str)> = query.to_vec();
        q.push(("limit", "1"));
        q.push(("before", &b));
        let body = app.admin(GET, path).query(&q).go().await.page();
        pages.push(
            body["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| s(&i["id"]))
                .collect(),
        );
        before = match body["page"]["before"].as_str() {
            Some(x) if body["page"]["has_more_before"] == json!(true) => Some(x.into()),
            _ => None,
        };
    }
    pages.reverse();
    let backward: Vec<String> = pages.into_iter().flatten().collect();
    (forward, backward)
}

/// Lists whose items share stored records page exactly, both ways: deliveries
/// (kept inside their notification's record), pending notifications (one per
/// notification, however many of its deliveries wait), notifications by
/// recipient (feed entries and markers of one user) and by topic (packed
/// index chunks of several runs).
#[tokio::test]
async fn lists_over_shared_records_page_one_by_one_without_gaps_or_repeats() {
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let chat = s(&create_webhook_channel(&app, &hook_url(&hook), None).await["id"]);
    // two delayed chat steps: each notification has two pending deliveries
    let waiting = active_flow(
        &app,
        "waits",
        json!([
            channel_step(&inapp, None, "now"),
            // long enough for the walks below, even on a slow machine
            delay_step(10),
            channel_step(&chat, None, "later"),
            channel_step(&chat, None, "later again"),
        ]),
    )
    .await;
    // no in_app step: listed for its recipient by a marker
    let chat_only = active_flow(&app, "chat-only", json!([channel_step(&chat, None, "hi")])).await;
    let topic = handle("walk");
    let users = topic_of_new_users(&app, &topic, "walk", 3).await;
    let r1 = run_flow(
        &app,
        &s(&waiting["id"]),
        json!({"recipients": recipients(&users)}),
    )
    .await;
    let r2 = run_flow(&app, &s(&chat_only["id"]), json!({"topic": topic})).await;
    let r3 = run_flow(&app, &s(&waiting["id"]), json!({"topic": topic})).await;
    wait_run_processed(&app, &s(&r2["id"]), 30).await;
    // r3's expansion too (on a cluster, by the node that accepted it, which
    // need not be r2's)
    let d = Deadline::new("the topic run's three notifications", 30);
    loop {
        let r = app
            .admin(GET, &format!("{A}/flow_runs/{}", s(&r3["id"])))
            .go()
            .await;
        if r.ok(200)["notifications_count"] == json!(3) {
            break;
        }
        d.tick(&r).await;
    }

    let notifications = format!("{A}/notifications");
    let deliveries_path = format!("{A}/deliveries");
    let all_n = list_all(&app, &notifications, &[]).await;
    assert_eq!(all_n.len(), 9, "{all_n:?}");
    let all_d = list_all(&app, &deliveries_path, &[]).await;
    assert_eq!(all_d.len(), 3 * 3 + 3 + 3 * 3, "{all_d:?}");
    let expect_d: Vec<String> = all_d.iter().map(|d| s(&d["id"])).collect();
    let (fwd, back) = walk_one_by_one(&app, &deliveries_path, &[]).await;
    assert_eq!(fwd, expect_d, "deliveries, forward");
    assert_eq!(back, expect_d, "deliveries, backward");

    // pending: the six notifications of the delayed runs, each once
    let (fwd, back) = walk_one_by_one(&app, &notifications, &[("status", "pending")]).await;
    let waiting_runs = [s(&r1["id"]), s(&r3["id"])];
    let expect_p: Vec<String> = all_n
        .iter()
        .filter(|n| waiting_runs.contains(&s(&n["flow_run_id"])))
        .map(|n| s(&n["id"]))
        .collect();
    assert_eq!(expect_p.len(), 6);
    assert_eq!(fwd, expect_p, "pending notifications, forward");
    assert_eq!(back, expect_p, "pending notifications, backward");
    let (fwd, _) = walk_one_by_one(&app, &deliveries_path, &[("status", "pending")]).await;
    assert_eq!(
        fwd.len(),
        12,
        "two chat deliveries per waiting notification"
    );

    // by recipient: one with an in-app entry per waiting run, one marker
    let u0 = users[0].clone();
    let expect_u: Vec<String> = all_n
        .iter()
        .filter(|n| n["recipient"]["external_id"] == json!(u0))
        .map(|n| s(&n["id"]))
        .collect();
    assert_eq!(expect_u.len(), 3);
    let (fwd, back) = walk_one_by_one(&app, &notifications, &[("recipient", u0.as_str())]).await;
    assert_eq!(fwd, expect_u, "by recipient, forward");
    assert_eq!(back, expect_u, "by recipient, backward");

    // by topic: both topic runs, merged in id order
    let expect_t: Vec<String> = all_n
        .iter()
        .filter(|n| n["topic"] == json!(topic))
        .map(|n| s(&n["id"]))
        .collect();
    assert_eq!(expect_t.len(), 6);
    let (fwd, back) = walk_one_by_one(&app, &notifications, &[("topic", topic.as_str())]).await;
    assert_eq!(fwd, expect_t, "by topic, forward");
    assert_eq!(back, expect_t, "by topic, backward");

    // once the waits are over nothing is pending
    for r in [&r1, &r3] {
        wait_run_processed(&app, &s(&r["id"]), 30).await;
    }
    let (fwd, back) = walk_one_by_one(&app, &notifications, &[("status", "pending")]).await;
    assert!(fwd.is_empty() && back.is_empty(), "{fwd:?} {back:?}");
}

/// Notifications settled when they are created (in-app only) are stored in
/// groups of up to 16; pending ones alone. Lists page through both kinds one
/// item at a time without gaps or repeats, in id order, and every grouped
/// notification and delivery reads like any other, also from a user's feed.
#[tokio::test]
async fn grouped_and_single_records_list_and_read_alike() {
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let chat = s(&create_webhook_channel(&app, &hook_url(&hook), None).await["id"]);
    let feed_flow = active_flow(
        &app,
        "grouped",
        json!([channel_step(&inapp, None, "hi {{ recipient.external_id }}")]),
    )
    .await;
    let chat_flow = active_flow(&app, "single", json!([channel_step(&chat, None, "hook")])).await;
    let topic = handle("groups");
    let users = topic_of_new_users(&app, &topic, "grp", 40).await;
    // 40 by topic (groups of 16, 16 and 8), 5 pending alone, 20 explicit (16 + 4)
    let r1 = run_flow(&app, &s(&feed_flow["id"]), json!({"topic": topic})).await;
    let r2 = run_flow(
        &app,
        &s(&chat_flow["id"]),
        json!({"recipients": recipients(&users[..5])}),
    )
    .await;
    let r3 = run_flow(
        &app,
        &s(&feed_flow["id"]),
        json!({"recipients": recipients(&users[..20])}),
    )
    .await;
    for r in [&r1, &r2, &r3] {
        wait_run_processed(&app, &s(&r["id"]), 30).await;
    }

    let notifications = format!("{A}/notifications");
    let all_n = list_all(&app, &notifications, &[]).await;
    assert_eq!(all_n.len(), 65, "{all_n:?}");
    let ids: Vec<String> = all_n.iter().map(|n| s(&n["id"])).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    sorted.reverse();
    sorted.dedup();
    assert_eq!(ids, sorted, "newest first, each once");
    let (fwd, back) = walk_one_by_one(&app, &notifications, &[]).await;
    assert_eq!(fwd, ids, "notifications, forward");
    assert_eq!(back, ids, "notifications, backward");
    let per_run = |r: &Value| all_n.iter().filter(|n| n["flow_run_id"] == r["id"]).count();
    assert_eq!((per_run(&r1), per_run(&r2), per_run(&r3)), (40, 5, 20));

    let deliveries = format!("{A}/deliveries");
    let all_d = list_all(&app, &deliveries, &[]).await;
    assert_eq!(all_d.len(), 65);
    let expect_d: Vec<String> = all_d.iter().map(|d| s(&d["id"])).collect();
    let (fwd, back) = walk_one_by_one(&app, &deliveries, &[]).await;
    assert_eq!(fwd, expect_d, "deliveries, forward");
    assert_eq!(back, expect_d, "deliveries, backward");
    let (fwd, _) = walk_one_by_one(
        &app,
        &notifications,
        &[("flow_run_id", s(&r1["id"]).as_str())],
    )
    .await;
    assert_eq!(fwd.len(), 40, "by run");

    // every notification and delivery reads back by id, as listed
    for n in &all_n {
        let id = s(&n["id"]);
        let got = app
            .admin(GET, &format!("{notifications}/{id}"))
            .go()
            .await
            .ok(200);
        assert_eq!(got["id"], n["id"]);
        assert_eq!(got["recipient"], n["recipient"], "{got}");
    }
    for d in &all_d {
        let id = s(&d["id"]);
        let got = app
            .admin(GET, &format!("{deliveries}/{id}"))
            .go()
            .await
            .ok(200);
        assert_eq!(got, *d, "delivery {id}");
    }
    // a grouped in-app delivery is a feed entry with its own content
    let feed = wait_feed(&app, &users[7], 2).await;
    let bodies: Vec<String> = feed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert!(bodies.iter().all(|b| b.contains("hi grp7")), "{bodies:?}");
}
