//! docs/API.md §9 (a run's 202 is durable): a run accepted with a 202 survives a SIGKILL
//! right after the answer; on restart every delivery is re-dispatched and ends
//! `sent` (at-least-once: the webhook may see a delivery twice, recognisable by
//! its `Idempotency-Key`), and the idempotency record survives too.

use std::collections::{HashMap, HashSet};

use futures_util::stream::{self, StreamExt};

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

#[tokio::test]
async fn sigkill_after_202_loses_nothing() {
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let mut app = TestApp::spawn_on(dir.path(), &keys);
    let inapp = in_app_channel(&app).await;
    let chat = create_webhook_channel(&app, &hook_url(&hook), None).await;
    let flow = active_flow(
        &app,
        "crash",
        json!([
            channel_step(
                &inapp,
                Some("in app {{ data.tag }}"),
                "hello {{ recipient.external_id }}"
            ),
            channel_step(&s(&chat["id"]), None, "chat {{ recipient.external_id }}"),
        ]),
    )
    .await;
    let fid = s(&flow["id"]);
    let exts: Vec<String> = (0..500)
        .map(|i| format!("crash-{i:03}-{}", &random_hex()[..6]))
        .collect();
    let key = format!("crash-{}", random_hex());
    let body = json!({"recipients": recipients(&exts), "data": {"tag": "boom"}});
    let r = app
        .admin(POST, &format!("{A}/flows/{fid}/run"))
        .header("Idempotency-Key", &key)
        .json(&body)
        .go()
        .await;
    let run = r.ok(202);
    let status = app.kill9();
    assert!(!status.success(), "SIGKILL: {status:?}");
    assert_eq!(run["recipients_count"], json!(500), "{r}");
    let run_id = s(&run["id"]);

    let app = TestApp::spawn_on(dir.path(), &keys);
    // the idempotency record survived with the run: a retry replays it
    let r = app
        .admin(POST, &format!("{A}/flows/{fid}/run"))
        .header("Idempotency-Key", &key)
        .json(&body)
        .go()
        .await;
    assert_eq!(r.status, 202, "{r}");
    assert_eq!(r.json, run, "the replay is the original 202: {r}");
    assert_eq!(
        r.header("idempotent-replayed").as_deref(),
        Some("true"),
        "{r}"
    );

    // every notification processed, every delivery sent
    let d = Deadline::new("all 500 notifications of the run to be processed", 30);
    let ns = loop {
        let ns = run_notifications(&app, &run_id).await;
        let pending = ns
            .iter()
            .filter(|n| n["status"] != json!("processed"))
            .count();
        if ns.len() == 500 && pending == 0 {
            break ns;
        }
        assert!(
            ns.len() <= 500,
            "more notifications than recipients: {}",
            ns.len()
        );
        d.tick(format!(
            "{} notifications, {pending} not processed",
            ns.len()
        ))
        .await;
    };
    let got: HashSet<String> = ns
        .iter()
        .map(|n| s(&n["recipient"]["external_id"]))
        .collect();
    assert_eq!(
        got,
        exts.iter().cloned().collect::<HashSet<_>>(),
        "one notification per recipient"
    );
    let mut by_type: HashMap<String, Vec<Value>> = HashMap::new();
    for n in &ns {
        let ds = deliveries(n);
        assert_eq!(ds.len(), 2, "{n}");
        for dl in ds {
            assert_eq!(dl["status"], json!("sent"), "{dl}");
            assert_eq!(dl["error"], Value::Null, "{dl}");
            assert!(is_timestamp(&dl["sent_at"]), "{dl}");
            by_type.entry(s(&dl["channel_type"])).or_default().push(dl);
        }
    }
    assert_eq!(by_type["in_app"].len(), 500);
    assert_eq!(by_type["chat"].len(), 500);
    let all_ids: HashSet<String> = by_type.values().flatten().map(|d| s(&d["id"])).collect();
    assert_eq!(all_ids.len(), 1000, "1000 distinct deliveries");
    let sent = list_all(&app, &format!("{A}/deliveries"), &[("status", "sent")]).await;
    assert_eq!(ids(&sent), all_ids, "the delivery list agrees");

    // at-least-once: every chat delivery reached the webhook, keyed by its id
    let reqs = received(&hook).await;
    let mut seen: HashSet<String> = HashSet::new();
    for q in &reqs {
        let k = req_header(q, "idempotency-key").expect("idempotency-key header");
        assert_eq!(req_json(q)["delivery"]["id"], json!(k), "key = delivery id");
        seen.insert(k);
    }
    let chat_ids: HashSet<String> = by_type["chat"].iter().map(|d| s(&d["id"])).collect();
    let missing: Vec<&String> = chat_ids.difference(&seen).collect();
    assert!(
        missing.is_empty(),
        "{} chat deliveries never reached the webhook (e.g. {:?})",
        missing.len(),
        missing.iter().take(3).collect::<Vec<_>>()
    );
    assert!(
        seen.is_subset(&chat_ids),
        "the webhook only saw this run's deliveries"
    );

    // in_app deliveries are in the feeds
    for ext in exts.iter().take(5) {
        let r = app
            .admin(GET, &format!("{A}/users/{}/feed", enc(ext)))
            .go()
            .await;
        let f = r.page();
        assert_eq!(f["items"].as_array().unwrap().len(), 1, "{r}");
        assert_eq!(
            f["items"][0]["data"]["subject"],
            json!("in app boom"),
            "{r}"
        );
        assert_eq!(
            f["meta"],
            json!({"unread_count": 1, "unseen_count": 1}),
            "{r}"
        );
    }

    // and the run is processed
    let fr = wait_run_processed(&app, &run_id, 30).await;
    assert_eq!(fr["notifications_count"], json!(500), "{fr}");
    assert_eq!(fr["recipients_count"], json!(500), "{fr}");
}

#[tokio::test]
async fn sigkill_during_topic_expansion_resumes_without_duplicates() {
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let opts = |keys: &Keys| {
        TestApp::start(ServeOptions {
            data_dir: dir.path(),
            bootstrap: Some(keys),
            args: &["--admin-rate", "100000"],
            env: &[],
            default_flags: true,
        })
        .unwrap_or_else(|e| panic!("{e}"))
    };
    let mut app = opts(&keys);
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "topic-crash",
        json!([channel_step(
            &inapp,
            None,
            "news for {{ recipient.external_id }}"
        )]),
    )
    .await;
    let topic = handle("crashy");
    let r = app
        .admin(PUT, &format!("{A}/topics/{topic}"))
        .json(&json!({"name": "Crashy"}))
        .go()
        .await;
    r.ok(201);
    let n = 1200;
    let members: Vec<String> = (0..n)
        .map(|i| format!("tc-{i:04}-{}", &random_hex()[..6]))
        .collect();
    let (app_ref, topic_ref) = (&app, &topic);
    stream::iter(members.iter())
        .for_each_concurrent(16, |e| async move {
            app_ref.create_user_as(e, json!({})).await;
            let r = app_ref
                .admin(POST, &format!("{A}/topics/{topic_ref}/subscriptions"))
                .json(&json!({ "external_id": e }))
                .go()
                .await;
            r.ok(201);
        })
        .await;
    let run = run_flow(&app, &s(&flow["id"]), json!({"topic": topic})).await;
    assert_eq!(run["recipients_count"], json!(n), "{run}");
    let run_id = s(&run["id"]);
    // kill in the middle of the expansion: once more than one chunk shows, at
    // least one is committed (flushed or not) and more are to come
    let d = Deadline::new("the topic expansion to begin", 30);
    loop {
        let r = app
            .admin(GET, &format!("{A}/flow_runs/{run_id}"))
            .go()
            .await;
        let v = r.ok(200);
        if v["notifications_count"].as_u64().unwrap_or(0) > 500 || v["status"] != json!("pending") {
            break;
        }
        assert!(!d.expired(), "the topic expansion never began: {r}");
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    app.kill9();

    let app = opts(&keys);
    let fr = wait_run_processed(&app, &run_id, 30).await;
    assert_eq!(fr["notifications_count"], json!(n), "{fr}");
    let ns = run_notifications(&app, &run_id).await;
    assert_eq!(ns.len(), n, "one notification per subscriber, none twice");
    let got: HashSet<String> = ns
        .iter()
        .map(|x| s(&x["recipient"]["external_id"]))
        .collect();
    assert_eq!(got, members.iter().cloned().collect::<HashSet<_>>());
    for x in &ns {
        assert_eq!(x["status"], json!("processed"), "{x}");
        assert_eq!(x["topic"], json!(topic), "{x}");
        assert_eq!(delivery_of(x, "in_app")["status"], json!("sent"), "{x}");
    }
    let sent = list_all(&app, &format!("{A}/deliveries"), &[("status", "sent")]).await;
    assert_eq!(sent.len(), n, "one delivery per subscriber");
}

#[tokio::test]
async fn sigkill_with_delayed_in_app_deliveries_pending_delivers_each_once_after_restart() {
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let mut app = TestApp::spawn_on(dir.path(), &keys);
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "late-crash",
        json!([
            delay_step(1),
            channel_step(&inapp, None, "late {{ recipient.external_id }}")
        ]),
    )
    .await;
    let exts: Vec<String> = (0..300)
        .map(|i| format!("late-{i:03}-{}", &random_hex()[..6]))
        .collect();
    let run = run_flow(
        &app,
        &s(&flow["id"]),
        json!({"recipients": recipients(&exts)}),
    )
    .await;
    let status = app.kill9();
    assert!(!status.success(), "SIGKILL: {status:?}");
    let run_id = s(&run["id"]);

    let app = TestApp::spawn_on(dir.path(), &keys);
    let fr = wait_run_processed(&app, &run_id, 30).await;
    assert_eq!(fr["notifications_count"], json!(300), "{fr}");
    let ns = run_notifications(&app, &run_id).await;
    assert_eq!(ns.len(), 300, "{fr}");
    for n in &ns {
        let d = delivery_of(n, "in_app");
        assert_eq!(d["status"], json!("sent"), "{d}");
        assert_eq!(d["attempts"], json!(1), "{d}");
    }
    // every recipient's feed holds exactly its one entry, counted once
    for ext in exts.iter().step_by(30) {
        let page = wait_feed(&app, ext, 1).await;
        let items = page["items"].as_array().unwrap();
        assert_eq!(items.len(), 1, "{page}");
        assert_eq!(items[0]["data"]["body"], json!(format!("late {ext}")));
        let r = app.user(GET, &format!("{U}/feed"), ext).go().await;
        let body = r.ok(200);
        assert_eq!(body["meta"]["unread_count"], json!(1), "{body}");
    }
}
