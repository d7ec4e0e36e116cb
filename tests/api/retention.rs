//! docs/API.md (retention): the project's retention windows (`PUT
//! /admin/v1/project`, `--retention`), and the background purge that removes
//! settled notifications with their deliveries, feed entries, live-feed events
//! and runs past them (with their decision traces), keeping newer and pending
//! ones, lists consistent while it runs, resuming after a `kill -9`, and
//! counting a test-clock project's windows in its project time.
//!
//! The servers run with the test-only `HERALD_RETENTION_TEST_SECONDS=1`
//! (windows in seconds) and `HERALD_RETENTION_TICK=1` (a pass per second).

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

const TEST_ENV: &[(&str, &str)] = &[
    ("HERALD_RETENTION_TEST_SECONDS", "1"),
    ("HERALD_RETENTION_TICK", "1"),
];

async fn set_retention(app: &TestApp, r: Value) -> Value {
    let resp = app.put_project(&json!({ "retention": r })).await;
    resp.ok(200)
}

/// A flow of an in_app step and a webhook step (to a sink answering 200).
async fn two_step_flow(app: &TestApp, sink: &wiremock::MockServer) -> String {
    let inapp = in_app_channel(app).await;
    let hook = create_webhook_channel(app, &hook_url(sink), None).await;
    let flow = active_flow(
        app,
        "kept",
        json!([
            channel_step(&inapp, Some("S {{ data.i }}"), "B {{ data.i }}"),
            channel_step(&s(&hook["id"]), Some("S {{ data.i }}"), "B {{ data.i }}")
        ]),
    )
    .await;
    s(&flow["id"])
}

/// Runs the flow for `exts`, `n` times; waits until every run is processed;
/// returns the runs' notifications.
async fn runs_of(
    app: &TestApp, flow: &str, exts: &[String], n: usize,
) -> (Vec<String>, Vec<Value>) {
    let mut runs = vec![];
    for i in 0..n {
        let run = run_flow(
            app,
            flow,
            json!({"recipients": recipients(exts), "data": {"i": i}}),
        )
        .await;
        runs.push(s(&run["id"]));
    }
    let mut ns = vec![];
    for r in &runs {
        wait_run_processed(app, r, 30).await;
        ns.extend(run_notifications(app, r).await);
    }
    (runs, ns)
}

async fn status_of(app: &TestApp, path: &str) -> u16 {
    app.admin(GET, path).go().await.status
}

/// The value of a counter line of `/metrics` (0 when absent).
/// Summed over the nodes of a cluster (each counts its own purges).
async fn metric(app: &TestApp, line_prefix: &str) -> f64 {
    let mut sum = 0.0;
    for node in app.node_addresses() {
        let text = app
            .client
            .get(format!("{node}/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        sum += metric_value(&text, line_prefix).unwrap_or(0.0);
    }
    sum
}

#[tokio::test]
async fn retention_is_validated_shown_and_defaults_to_the_server_setting() {
    let app = TestApp::spawn_with(&["--retention", "2h"], &[]);
    let p = app.get_project().await.ok(200);
    assert_eq!(
        p["retention"],
        json!({"notifications": "2h", "feed": "2h"}),
        "{p}"
    );

    let p = set_retention(&app, json!({"notifications": "15m"})).await;
    assert_eq!(
        p["retention"],
        json!({"notifications": "15m", "feed": "2h"}),
        "{p}"
    );
    let p = set_retention(&app, json!({"feed": "1440m"})).await;
    assert_eq!(
        p["retention"],
        json!({"notifications": "15m", "feed": "1d"}),
        "{p}"
    );
    // a window set stays when another field changes
    let r = app.put_project(&json!({"name": "renamed"})).await;
    assert_eq!(r.ok(200)["retention"]["notifications"], json!("15m"));

    for (bad, field) in [
        (json!({"notifications": "30s"}), "retention.notifications"),
        (json!({"notifications": "0m"}), "retention.notifications"),
        (json!({"feed": "1w"}), "retention.feed"),
        (json!({"feed": 90}), "retention.feed"),
        (json!({"notifications": "1h30m"}), "retention.notifications"),
    ] {
        let r = app.put_project(&json!({ "retention": bad })).await;
        assert_validation(&r, &[(field, "format")]);
    }
    let r = app.put_project(&json!({"retention": "90d"})).await;
    assert_validation(&r, &[("retention", "format")]);

    // null returns a window (or both) to the server default
    let p = set_retention(&app, json!({"feed": null})).await;
    assert_eq!(
        p["retention"],
        json!({"notifications": "15m", "feed": "2h"}),
        "{p}"
    );
    let r = app.put_project(&json!({"retention": null})).await;
    assert_eq!(
        r.ok(200)["retention"],
        json!({"notifications": "2h", "feed": "2h"})
    );

    // without --retention: 90 days
    let plain = TestApp::spawn();
    let p = plain.get_project().await.ok(200);
    assert_eq!(
        p["retention"],
        json!({"notifications": "90d", "feed": "90d"}),
        "{p}"
    );
}

/// Waits until every path answers 404.
async fn wait_all_gone(app: &TestApp, what: &str, paths: &[String]) {
    let d = Deadline::new(what.to_string(), 30);
    loop {
        let mut left = vec![];
        for p in paths {
            if status_of(app, p).await != 404 {
                left.push(p.clone());
            }
        }
        if left.is_empty() {
            return;
        }
        d.tick(format!("{left:?}")).await;
    }
}

fn paths_of(ns: &[Value]) -> Vec<String> {
    let mut out = vec![];
    for n in ns {
        out.push(format!("{A}/notifications/{}", s(&n["id"])));
        out.push(format!("{A}/notifications/{}/trace", s(&n["id"])));
        for d in deliveries(n) {
            out.push(format!("{A}/deliveries/{}", s(&d["id"])));
        }
    }
    out
}

async fn feed_of(app: &TestApp, ext: &str) -> Value {
    app.user(GET, &format!("{U}/feed"), ext)
        .query(&[("limit", "100")])
        .go()
        .await
        .page()
}

#[tokio::test]
async fn old_notifications_deliveries_feed_entries_and_events_go_newer_and_pending_stay() {
    let sink = mock_server().await;
    mock_always(&sink, 200).await;
    let app = TestApp::spawn_with(&[], TEST_ENV);
    let flow = two_step_flow(&app, &sink).await;
    let (ext, _) = app.create_user("ret", json!({})).await;
    let (other, _) = app.create_user("ret-other", json!({})).await;
    let users = vec![ext.clone(), other.clone()];

    // old: settled notifications, and one waiting on a delay (pending)
    let (old_runs, old) = runs_of(&app, &flow, &users, 3).await;
    assert_eq!(old.len(), 6);
    let inapp = in_app_channel(&app).await;
    let delayed = active_flow(
        &app,
        "delayed",
        json!([
            delay_step(600),
            channel_step(&inapp, Some("later"), "later")
        ]),
    )
    .await;
    let pending_run = run_flow(
        &app,
        &s(&delayed["id"]),
        json!({"recipients": recipients(std::slice::from_ref(&ext))}),
    )
    .await;
    let pending_run = s(&pending_run["id"]);
    let pending = {
        let d = Deadline::new("the delayed run's notification", 30);
        loop {
            let ns = run_notifications(&app, &pending_run).await;
            if ns.len() == 1 {
                break ns[0].clone();
            }
            d.tick(format!("{ns:?}")).await;
        }
    };
    wait_feed(&app, &ext, 3).await;

    // newer ones, well inside the window set below
    tokio::time::sleep(Duration::from_secs(10)).await;
    let (new_runs, new) = runs_of(&app, &flow, &users, 2).await;
    set_retention(&app, json!({"notifications": "8s", "feed": "8s"})).await;

    wait_all_gone(
        &app,
        "the old notifications and deliveries to be purged",
        &paths_of(&old),
    )
    .await;
    let run_paths: Vec<String> = old_runs
        .iter()
        .map(|r| format!("{A}/flow_runs/{r}"))
        .collect();
    wait_all_gone(&app, "the old runs to be purged", &run_paths).await;
    // stop purging before the newer ones come of age
    set_retention(&app, json!({"notifications": "1d", "feed": "1d"})).await;

    for p in paths_of(&new) {
        assert_eq!(status_of(&app, &p).await, 200, "{p} must stay");
    }
    for r in &new_runs {
        assert_eq!(status_of(&app, &format!("{A}/flow_runs/{r}")).await, 200);
    }
    // the pending one stays although older than the window
    let n = app
        .admin(GET, &format!("{A}/notifications/{}", s(&pending["id"])))
        .go()
        .await;
    assert_eq!(n.ok(200)["status"], json!("pending"), "{n}");
    assert_eq!(
        status_of(&app, &format!("{A}/flow_runs/{pending_run}")).await,
        200
    );

    // lists show exactly what remains
    let listed: HashSet<String> = list_all(&app, &format!("{A}/notifications"), &[])
        .await
        .iter()
        .map(|n| s(&n["id"]))
        .collect();
    let mut want: HashSet<String> = new.iter().map(|n| s(&n["id"])).collect();
    want.insert(s(&pending["id"]));
    assert_eq!(listed, want);
    let delivered = list_all(&app, &format!("{A}/deliveries"), &[]).await;
    assert_eq!(delivered.len(), 2 * new.len() + 1, "{delivered:?}");
    for r in &old_runs {
        assert!(run_notifications(&app, r).await.is_empty());
    }

    // the feed holds the newer entries only, and its counts agree
    let feed = feed_of(&app, &ext).await;
    let items = feed["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{feed}");
    assert_eq!(feed["meta"]["unread_count"], json!(2), "{feed}");
    assert_eq!(feed["meta"]["unseen_count"], json!(2), "{feed}");
    let new_ids: HashSet<String> = new
        .iter()
        .flat_map(|n| deliveries(n).into_iter().map(|d| s(&d["id"])))
        .collect();
    for it in items {
        assert!(new_ids.contains(&s(&it["id"])), "{it}");
    }

    // progress is in /metrics: notifications, deliveries, feed entries, events, runs
    for kind in [
        "notifications",
        "deliveries",
        "feed_entries",
        "events",
        "runs",
    ] {
        let v = metric(
            &app,
            &format!("herald_retention_purged_total{{kind=\"{kind}\"}}"),
        )
        .await;
        assert!(v >= 1.0, "{kind}: {v}");
    }
    assert!(metric(&app, "herald_retention_reclaimed_bytes_total").await > 0.0);
    // and the age of the oldest notification kept: the pending one, made
    // over 10 s before the newer runs (as of the last pass, on both stores)
    let age = metric(&app, "herald_retention_oldest_record_age_seconds").await;
    assert!(age >= 10.0, "{age}");
}

#[tokio::test]
async fn lists_stay_consistent_while_the_purge_runs_under_traffic() {
    let sink = mock_server().await;
    mock_always(&sink, 200).await;
    let app = TestApp::spawn_with(&[], TEST_ENV);
    let flow = two_step_flow(&app, &sink).await;
    let (ext, _) = app.create_user("traffic", json!({})).await;
    set_retention(&app, json!({"notifications": "3s", "feed": "3s"})).await;

    let writer = {
        let (base, keys, flow, ext) = (app.url(""), app.keys(), flow.clone(), ext.clone());
        tokio::spawn(async move {
            let client = http_client();
            let end = std::time::Instant::now() + Duration::from_secs(10);
            let mut i = 0;
            while std::time::Instant::now() < end {
                let r = client
                    .post(format!("{base}{A}/flows/{flow}/run"))
                    .header("x-service-api-key", &keys.public_key)
                    .header("x-service-secret-key", &keys.secret_key)
                    .json(&json!({"recipients": [{"external_id": ext}], "data": {"i": i}}))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status().as_u16(), 202);
                i += 1;
                tokio::time::sleep(Duration::from_millis(30)).await;
            }
            i
        })
    };
    // Meanwhile: every page of every list is whole (each notification with its
    // two deliveries, each feed entry readable), and walking the pages never
    // fails or repeats an item.
    let mut pages = 0;
    while !writer.is_finished() {
        let mut seen = HashSet::new();
        let mut after: Option<String> = None;
        loop {
            let mut q = vec![("limit", "20".to_string())];
            if let Some(a) = &after {
                q.push(("after", a.clone()));
            }
            let r = app
                .admin(GET, &format!("{A}/notifications"))
                .query(&q)
                .go()
                .await;
            let body = r.page();
            pages += 1;
            for n in body["items"].as_array().unwrap() {
                assert!(seen.insert(s(&n["id"])), "repeated: {n}");
                if n["status"] == json!("processed") {
                    assert_eq!(deliveries(n).len(), 2, "a partial notification listed: {n}");
                }
            }
            match body["page"]["after"].as_str() {
                Some(a) if body["page"]["has_more_after"] == json!(true) => after = Some(a.into()),
                _ => break,
            }
        }
        let feed = feed_of(&app, &ext).await;
        for it in feed["items"].as_array().unwrap() {
            assert!(it["content"].is_object() || it["id"].is_string(), "{it}");
        }
        let r = app
            .admin(GET, &format!("{A}/deliveries"))
            .query(&[("status", "sent"), ("limit", "50")])
            .go()
            .await;
        for d in r.page()["items"].as_array().unwrap() {
            assert_eq!(d["status"], json!("sent"), "{d}");
        }
        // Under the User API's rate limit (50 requests/s per user): a pass
        // over short lists takes a few milliseconds, and the feed read above
        // is one request of the user's per pass.
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let sent = writer.await.unwrap();
    assert!(sent > 10 && pages > 3, "{sent} runs, {pages} pages");

    // Once traffic stops the purge catches up: nothing is left, and the
    // feed's counts agree with its (empty) list.
    let d = Deadline::new("the purge to remove everything", 30);
    loop {
        let left = list_all(&app, &format!("{A}/notifications"), &[]).await;
        let feed = feed_of(&app, &ext).await;
        if left.is_empty() && feed["items"].as_array().unwrap().is_empty() {
            assert_eq!(feed["meta"]["unread_count"], json!(0), "{feed}");
            assert_eq!(feed["meta"]["unseen_count"], json!(0), "{feed}");
            break;
        }
        d.tick(format!("{} notifications, feed {feed}", left.len()))
            .await;
    }
}

#[tokio::test]
async fn a_purge_killed_mid_way_completes_after_a_restart_and_keeps_newer_ones() {
    let sink = mock_server().await;
    mock_always(&sink, 200).await;
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let env: Vec<(&str, &str)> = [TEST_ENV, &[("HERALD_PURGE_BATCH", "3")]].concat();
    let start = |dir: &std::path::Path| {
        TestApp::start(ServeOptions {
            data_dir: dir,
            bootstrap: Some(&keys),
            args: &[],
            env: &env,
            default_flags: true,
        })
        .unwrap_or_else(|e| panic!("{e}"))
    };
    let mut app = start(dir.path());
    let flow = two_step_flow(&app, &sink).await;
    let mut exts = vec![];
    for i in 0..20 {
        exts.push(app.create_user(&format!("k{i}"), json!({})).await.0);
    }
    let (_, old) = runs_of(&app, &flow, &exts, 6).await;
    assert_eq!(old.len(), 120);
    // The newer runs must survive until they are checked after the restart:
    // they become due 20 s after they are made, a margin that holds on a
    // loaded machine (with 10 s, a slow restart and sweep let them expire).
    tokio::time::sleep(Duration::from_secs(25)).await;
    let (_, new) = runs_of(&app, &flow, &exts[..2], 1).await;
    set_retention(&app, json!({"notifications": "20s", "feed": "20s"})).await;

    // batches of 3: the purge of 120 notifications takes dozens of batches
    let d = Deadline::new("the purge to begin", 30);
    loop {
        let n = metric(
            &app,
            "herald_retention_purged_total{kind=\"notifications\"}",
        )
        .await;
        if n > 0.0 {
            break;
        }
        d.tick(n).await;
    }
    app.kill9();

    let app = start(dir.path());
    wait_all_gone(
        &app,
        "the old notifications after the restart",
        &paths_of(&old),
    )
    .await;
    set_retention(&app, json!({"notifications": "1d", "feed": "1d"})).await;
    for p in paths_of(&new) {
        assert_eq!(status_of(&app, &p).await, 200, "{p} must survive");
    }
    let listed = list_all(&app, &format!("{A}/notifications"), &[]).await;
    assert_eq!(listed.len(), new.len(), "{listed:?}");
    for ext in &exts[..2] {
        let feed = feed_of(&app, ext).await;
        assert_eq!(feed["items"].as_array().unwrap().len(), 1, "{feed}");
        assert_eq!(feed["meta"]["unread_count"], json!(1), "{feed}");
    }
}

#[tokio::test]
async fn a_shorter_feed_window_empties_feeds_and_keeps_notifications_listed_for_their_recipient() {
    let sink = mock_server().await;
    mock_always(&sink, 200).await;
    let app = TestApp::spawn_with(&[], TEST_ENV);
    let flow = two_step_flow(&app, &sink).await;
    let (ext, _) = app.create_user("feedwin", json!({})).await;
    let (_, old) = runs_of(&app, &flow, std::slice::from_ref(&ext), 3).await;
    wait_feed(&app, &ext, 3).await;
    // one entry read, so the counts must drop by what each entry counted
    let feed = feed_of(&app, &ext).await;
    let first = s(&feed["items"][0]["id"]);
    let r = app
        .user(PATCH, &format!("{U}/feed/{first}"), &ext)
        .json(&json!({"read": true}))
        .go()
        .await;
    r.ok(200);
    tokio::time::sleep(Duration::from_secs(10)).await;
    let (_, new) = runs_of(&app, &flow, std::slice::from_ref(&ext), 1).await;
    set_retention(&app, json!({"notifications": "1d", "feed": "8s"})).await;

    let d = Deadline::new("the old feed entries to be purged", 30);
    let feed = loop {
        let feed = feed_of(&app, &ext).await;
        if feed["items"].as_array().unwrap().len() == 1 {
            break feed;
        }
        d.tick(&feed).await;
    };
    set_retention(&app, json!({"feed": "1d"})).await;
    let newest = delivery_of(&new[0], "in_app");
    assert_eq!(feed["items"][0]["id"], newest["id"], "{feed}");
    assert_eq!(feed["meta"]["unread_count"], json!(1), "{feed}");
    assert_eq!(feed["meta"]["unseen_count"], json!(1), "{feed}");
    // the notifications stay, listed for their recipient, deliveries readable
    let mine: HashSet<String> =
        list_all(&app, &format!("{A}/notifications"), &[("recipient", &ext)])
            .await
            .iter()
            .map(|n| s(&n["id"]))
            .collect();
    let want: HashSet<String> = old.iter().chain(new.iter()).map(|n| s(&n["id"])).collect();
    assert_eq!(mine, want);
    for p in paths_of(&old) {
        assert_eq!(status_of(&app, &p).await, 200, "{p}");
    }
    // an old entry is no longer the user's to read or change
    let r = app.user(GET, &format!("{U}/feed/{first}"), &ext).go().await;
    assert_not_found(&r, "feed_entry", &first);
}

/// A project on a test clock purges by its own time: a day's window passes
/// when the clock is advanced two days, with no waiting in real time; the
/// notifications, their deliveries and traces go, and a notification made
/// after the advance (younger than the window in project time) stays.
#[tokio::test]
async fn a_test_clock_project_purges_by_its_project_time() {
    let sink = mock_server().await;
    mock_always(&sink, 200).await;
    let app = TestApp::spawn_with(&[], TEST_ENV);
    app.put_project(&json!({"clock": "test"})).await.ok(200);
    set_retention(&app, json!({"notifications": "1d", "feed": "1d"})).await;
    let flow = two_step_flow(&app, &sink).await;
    let (ext, _) = app.create_user("clock-ret", json!({})).await;
    let (_, old) = runs_of(&app, &flow, std::slice::from_ref(&ext), 2).await;
    for p in paths_of(&old) {
        assert_eq!(status_of(&app, &p).await, 200, "{p}");
    }
    app.advance_clock(&json!({"by": "2d"})).await.ok(200);
    let (_, young) = runs_of(&app, &flow, std::slice::from_ref(&ext), 1).await;
    wait_all_gone(
        &app,
        "notifications past the window in project time to be purged",
        &paths_of(&old),
    )
    .await;
    for p in paths_of(&young) {
        assert_eq!(status_of(&app, &p).await, 200, "{p} must stay");
    }
}
