//! docs/DEPLOY.md, Cluster: several nodes on one PostgreSQL database share
//! the work exactly once. Each test starts 3 `herald serve` processes on
//! the same database with a short lease (the suite's 3 s, see
//! `with_store`) and checks, at a local receiver that counts requests per
//! delivery id (the provider's idempotency key), that every delivery is
//! attempted once per attempt across the nodes, and that a node's death
//! costs at most a lease's wait: the others take its work over.
//!
//! PostgreSQL only: in the embedded store's run (`tests/api`) they return
//! early with a note; the `api_pg` run never skips them under CI.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use futures_util::stream::{self, StreamExt};
use serde_json::{json, Value};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::engine_helpers::*;
use crate::helpers::*;

const WHY: &str = "several nodes share one PostgreSQL database";

/// Requests the receiver got, per delivery id.
async fn per_delivery(hook: &MockServer) -> HashMap<String, usize> {
    let mut n: HashMap<String, usize> = HashMap::new();
    for r in received(hook).await {
        let id = req_header(&r, "idempotency-key").expect("a delivery id on every request");
        *n.entry(id).or_default() += 1;
    }
    n
}

/// Polls until `n` deliveries are `sent` (asked of `app`); their ids, each
/// with the tries its record counts (`attempts`).
async fn wait_sent(app: &TestApp, n: usize, secs: u64) -> HashMap<String, u64> {
    let d = Deadline::new(format!("{n} deliveries to be sent"), secs);
    loop {
        let sent = list_all(app, &format!("{A}/deliveries"), &[("status", "sent")]).await;
        if sent.len() >= n {
            assert_eq!(sent.len(), n, "no more deliveries than runs");
            return sent
                .iter()
                .map(|d| (s(&d["id"]), d["attempts"].as_u64().unwrap_or(0)))
                .collect();
        }
        d.tick(format!("{} sent", sent.len())).await;
    }
}

/// Every sent delivery reached the receiver, nothing else did, and no try
/// was made twice: the requests the receiver got for a delivery id are at
/// most the tries its record counts. A try the receiver answered too late
/// for a loaded node is retried with the same id, and counted, so it is not
/// a second attempt; those are printed, not failed.
fn once_per_attempt(got: &HashMap<String, usize>, sent: &HashMap<String, u64>) {
    assert_eq!(
        got.keys().collect::<HashSet<_>>(),
        sent.keys().collect::<HashSet<_>>(),
        "every delivery id arrives, and only those"
    );
    let twice: Vec<_> = got
        .iter()
        .filter(|(id, c)| **c as u64 > sent[*id])
        .map(|(id, c)| format!("{id}: {c} requests, {} tries recorded", sent[id]))
        .collect();
    assert!(
        twice.is_empty(),
        "an attempt made more than once: {twice:?}"
    );
    let retried = got.values().filter(|c| **c > 1).count();
    if retried > 0 {
        eprintln!("{retried} deliveries retried (recorded tries, same delivery id)");
    }
}

/// A webhook channel to `hook` and an active flow with one webhook step
/// (after `delay` seconds, when given), made through `app`: the flow's id.
async fn webhook_flow(app: &TestApp, hook: &MockServer, tag: &str, delay: Option<u64>) -> String {
    let chat = create_webhook_channel(app, &hook_url(hook), None).await;
    let mut steps = vec![];
    if let Some(secs) = delay {
        steps.push(delay_step(secs));
    }
    steps.push(channel_step(
        &s(&chat["id"]),
        None,
        "hello {{ recipient.external_id }}",
    ));
    let flow = active_flow(app, tag, Value::Array(steps)).await;
    s(&flow["id"])
}

#[tokio::test]
async fn runs_posted_to_three_nodes_are_delivered_exactly_once() {
    if pg_only(WHY) {
        return;
    }
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    // a lease far longer than any attempt here: nothing may be taken over
    let nodes = TestApp::start_nodes(
        dir.path(),
        &keys,
        3,
        &["--admin-rate", "100000"],
        &[("HERALD_LEASE_SECONDS", "20")],
    );
    let fid = webhook_flow(&nodes[0], &hook, "cluster-once", None).await;
    let n = 300;
    let tag = random_hex();
    let accepted: Vec<Value> = stream::iter(0..n)
        .map(|i| {
            let (node, fid, tag) = (&nodes[i % 3], &fid, &tag);
            async move {
                run_flow(
                    node,
                    fid,
                    json!({"recipients": [format!("once-{i:03}-{}", &tag[..8])]}),
                )
                .await
            }
        })
        .buffer_unordered(24)
        .collect()
        .await;
    assert_eq!(accepted.len(), n);
    let sent = wait_sent(&nodes[1], n, 30).await;
    once_per_attempt(&per_delivery(&hook).await, &sent);
    // and each run is processed, whichever node accepted it
    for run in accepted.iter().take(6) {
        wait_run_processed(&nodes[2], &s(&run["id"]), 30).await;
    }
}

#[tokio::test]
async fn a_node_killed_with_attempts_in_flight_leaves_them_to_the_others() {
    if pg_only(WHY) {
        return;
    }
    let hook = MockServer::builder().start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(2)))
        .mount(&hook)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let mut nodes = TestApp::start_nodes(dir.path(), &keys, 3, &[], &[]);
    let fid = webhook_flow(&nodes[0], &hook, "cluster-kill", None).await;
    let n = 20;
    let tag = random_hex();
    for i in 0..n {
        run_flow(
            &nodes[0],
            &fid,
            json!({"recipients": [format!("slow-{i:02}-{}", &tag[..8])]}),
        )
        .await;
    }
    // node A's attempts are in flight at the slow receiver: kill it
    let d = Deadline::new("node A's first attempt", 20);
    while received(&hook).await.is_empty() {
        d.tick("no request yet").await;
    }
    nodes[0].kill9();
    // after the lease expires, the others deliver them
    let sent = wait_sent(&nodes[1], n, 30).await;
    let got = per_delivery(&hook).await;
    assert_eq!(
        got.keys().collect::<HashSet<_>>(),
        sent.keys().collect::<HashSet<_>>(),
        "every delivery id arrives, and no other"
    );
    for (id, c) in &got {
        // the dead node's attempt and its successor's, with the same id
        assert!(*c <= 2, "{id} attempted {c} times");
    }
    let again: usize = got.values().filter(|c| **c == 2).count();
    eprintln!("{again} of {n} deliveries attempted again after the kill (same delivery id)");
}

#[tokio::test]
async fn a_topic_expansion_of_a_killed_node_is_finished_by_another() {
    if pg_only(WHY) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let mut nodes = TestApp::start_nodes(dir.path(), &keys, 3, &["--admin-rate", "100000"], &[]);
    let a = &nodes[0];
    let inapp = in_app_channel(a).await;
    let flow = active_flow(
        a,
        "cluster-topic",
        json!([channel_step(
            &inapp,
            None,
            "news for {{ recipient.external_id }}"
        )]),
    )
    .await;
    let topic = handle("cluster");
    a.admin(PUT, &format!("{A}/topics/{topic}"))
        .json(&json!({"name": "Cluster"}))
        .go()
        .await
        .ok(201);
    // 10,000 subscribers, made and subscribed 1,000 at a time (the bulk
    // APIs' largest batch)
    let n = 10_000;
    let tag = random_hex();
    let members: Vec<String> = (0..n).map(|i| format!("ct-{i:05}-{}", &tag[..8])).collect();
    let made = std::time::Instant::now();
    for part in members.chunks(1000) {
        let users: Vec<Value> = part.iter().map(|e| json!({"external_id": e})).collect();
        let r = a
            .admin(POST, &format!("{A}/users/bulk"))
            .json(&json!({ "users": users }))
            .go()
            .await;
        assert!(r.status < 300, "{r}");
        let r = a
            .admin(POST, &format!("{A}/topics/{topic}/subscriptions"))
            .json(&json!({ "users": part }))
            .go()
            .await;
        assert!(r.status < 300, "{r}");
    }
    eprintln!("{n} users made and subscribed in {:?}", made.elapsed());
    let started = std::time::Instant::now();
    let run = run_flow(a, &s(&flow["id"]), json!({"topic": topic})).await;
    let run_id = s(&run["id"]);
    // kill node A once its expansion has begun
    let d = Deadline::new("the topic expansion to begin", 30);
    let seen = loop {
        let v = nodes[1]
            .admin(GET, &format!("{A}/flow_runs/{run_id}"))
            .go()
            .await
            .ok(200);
        let c = v["notifications_count"].as_u64().unwrap_or(0);
        if c > 0 || v["status"] != json!("pending") {
            break c;
        }
        d.tick(&v).await;
    };
    nodes[0].kill9();
    eprintln!("node A killed with {seen} of {n} notifications expanded");
    let b = &nodes[1];
    // (longer than `Deadline`'s 30 s: 10,000 notifications on a debug build)
    let wait = std::time::Instant::now() + Duration::from_secs(300);
    let fr = loop {
        let v = b
            .admin(GET, &format!("{A}/flow_runs/{run_id}"))
            .go()
            .await
            .ok(200);
        if v["status"] == json!("processed") {
            break v;
        }
        assert!(
            std::time::Instant::now() < wait,
            "the run was not processed within 300 s: {v}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(fr["notifications_count"], json!(n), "{fr}");
    eprintln!(
        "the {n}-subscriber run processed {:?} after it was accepted",
        started.elapsed()
    );
    let ns = run_notifications(b, &run_id).await;
    assert_eq!(ns.len(), n, "one notification per subscriber, none twice");
    let got: HashSet<String> = ns
        .iter()
        .map(|x| s(&x["recipient"]["external_id"]))
        .collect();
    assert_eq!(got, members.iter().cloned().collect::<HashSet<_>>());
    let wait = std::time::Instant::now() + Duration::from_secs(300);
    loop {
        let sent = list_all(b, &format!("{A}/deliveries"), &[("status", "sent")]).await;
        if sent.len() >= n {
            assert_eq!(sent.len(), n, "one delivery per subscriber, each sent");
            break;
        }
        assert!(
            std::time::Instant::now() < wait,
            "{} of {n} deliveries sent within 300 s",
            sent.len()
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    eprintln!(
        "the {n}-subscriber run delivered {:?} after it was accepted",
        started.elapsed()
    );
}

#[tokio::test]
async fn delayed_runs_of_a_stopped_node_are_delivered_by_another() {
    if pg_only(WHY) {
        return;
    }
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let mut nodes = TestApp::start_nodes(dir.path(), &keys, 3, &[], &[]);
    let fid = webhook_flow(&nodes[0], &hook, "cluster-delay", Some(2)).await;
    let n = 10;
    let tag = random_hex();
    for i in 0..n {
        run_flow(
            &nodes[0],
            &fid,
            json!({"recipients": [format!("later-{i:02}-{}", &tag[..8])]}),
        )
        .await;
    }
    // A stops before they are due: the others deliver them, once each
    let status = nodes[0].stop();
    assert!(status.success(), "{status:?}");
    assert!(received(&hook).await.is_empty(), "not due before A stopped");
    let sent = wait_sent(&nodes[2], n, 30).await;
    once_per_attempt(&per_delivery(&hook).await, &sent);
}

#[tokio::test]
async fn a_test_clock_advanced_on_one_node_is_claimed_by_the_stored_clock() {
    if pg_only(WHY) {
        return;
    }
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let nodes = TestApp::start_nodes(dir.path(), &keys, 3, &[], &[]);
    nodes[0]
        .admin(PUT, &format!("{A}/project"))
        .json(&json!({"clock": "test"}))
        .go()
        .await
        .ok(200);
    let fid = webhook_flow(&nodes[0], &hook, "cluster-clock", Some(3600)).await;
    let n = 5;
    let tag = random_hex();
    for i in 0..n {
        run_flow(
            &nodes[0],
            &fid,
            json!({"recipients": [format!("clock-{i:02}-{}", &tag[..8])]}),
        )
        .await;
    }
    // a poll or two of every node: nothing is due in project time
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(
        received(&hook).await.is_empty(),
        "not due before the advance"
    );
    // moved on another node than the one that accepted the runs
    nodes[1]
        .admin(POST, &format!("{A}/project/clock/advance"))
        .json(&json!({"by": "2h"}))
        .go()
        .await
        .ok(200);
    let sent = wait_sent(&nodes[2], n, 30).await;
    once_per_attempt(&per_delivery(&hook).await, &sent);
}

/// The leases on the store itself, two nodes (two stores) on one database:
/// a claim never hands one row to both, a node does not claim back what it
/// holds, given-back rows go to the other at once, expired ones after the
/// lease; the same for a run's expansion. Rows are put in with SQL (the
/// claims need only their keys and due times).
#[test]
fn claims_are_exclusive_and_expired_leases_are_taken_over() {
    use herald_engine::backend::PgStore;
    use herald_engine::model::{ChannelType, Timestamp};
    use herald_engine::storage::{Leased, ProjectRef, ProjectRepo, Release, RunClaim, WorkRepo};
    if pg_only(WHY) {
        return;
    }
    let url = pg_new_database();
    let a = PgStore::open(&url).unwrap();
    let b = PgStore::open(&url).unwrap();
    a.set_lease(Duration::from_secs(1));
    b.set_lease(Duration::from_secs(1));
    assert_ne!(WorkRepo::node(&a).id, WorkRepo::node(&b).id);
    a.create_project("claims", None).unwrap();
    let p = a
        .find_project(ProjectRef::Name("claims"))
        .unwrap()
        .unwrap()
        .id;
    let ct = ChannelType::ALL[1];
    let mut sql = String::new();
    for _ in 0..10 {
        sql += &format!(
            "INSERT INTO queue (project, delivery_id, channel_type, due_ms)
             VALUES ('{p}', gen_random_uuid(), {}, 0);",
            ct.index()
        );
    }
    // one not due yet, one of another type
    sql += &format!(
        "INSERT INTO queue (project, delivery_id, channel_type, due_ms)
         VALUES ('{p}', gen_random_uuid(), {}, 9000000000000);",
        ct.index()
    );
    sql += &format!(
        "INSERT INTO queue (project, delivery_id, channel_type, due_ms)
         VALUES ('{p}', gen_random_uuid(), {}, 0);",
        ChannelType::ALL[2].index()
    );
    let run = uuid::Uuid::now_v7();
    sql += &format!(
        "INSERT INTO flow_runs (project, id, processed, pending, doc)
         VALUES ('{p}', '{run}', false, 0, '{{\"expanded\": false}}');"
    );
    pg_exec(&url, &sql).unwrap();
    let now = Timestamp::now().millis();
    let ids = |v: &[herald_engine::storage::QueueItem]| -> HashSet<uuid::Uuid> {
        v.iter().map(|q| q.delivery_id).collect()
    };
    let got_a = a.claim_queue(ct, now, 6).unwrap();
    let got_b = b.claim_queue(ct, now, 100).unwrap();
    assert_eq!(
        (got_a.len(), got_b.len()),
        (6, 4),
        "due rows of the type only"
    );
    assert!(ids(&got_a).is_disjoint(&ids(&got_b)), "no row to both");
    assert!(
        a.claim_queue(ct, now, 100).unwrap().is_empty(),
        "held rows stay held"
    );
    // given back: the other node takes them at once
    b.release(Release::Queue(ct)).unwrap();
    assert_eq!(ids(&a.claim_queue(ct, now, 100).unwrap()), ids(&got_b));
    // a node that stops renewing loses them once the lease expired
    assert!(b.claim_queue(ct, now + 500, 100).unwrap().is_empty());
    a.renew(Leased::Queue(ct), now + 500).unwrap();
    assert!(
        b.claim_queue(ct, now + 1200, 100).unwrap().is_empty(),
        "renewed"
    );
    assert_eq!(b.claim_queue(ct, now + 1600, 100).unwrap().len(), 10);

    // a run's expansion: one holder at a time, taken over after expiry
    let claim_run = |s: &PgStore, at: i64| -> bool {
        let one = RunClaim::One {
            project: &p,
            run: &run,
        };
        let held = s.claim_runs(one, at).unwrap();
        assert!(held.is_empty() || held == vec![(p, run)]);
        !held.is_empty()
    };
    assert!(claim_run(&a, now));
    assert!(!claim_run(&b, now), "held by a");
    assert!(b
        .claim_runs(RunClaim::Any { limit: 10 }, now)
        .unwrap()
        .is_empty());
    assert!(claim_run(&a, now + 10), "its holder keeps it");
    assert_eq!(
        b.claim_runs(RunClaim::Any { limit: 10 }, now + 2000)
            .unwrap(),
        vec![(p, run)]
    );
    assert!(!claim_run(&a, now + 2000), "taken over");
    a.close();
    b.close();
    pg_drop_database(&url);
}
