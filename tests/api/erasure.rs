//! docs/API.md (erasure): `DELETE /admin/v1/users/{external_id}?erase=true`
//! deletes the user and removes their notifications, deliveries, feed entries
//! and events; 204 when done within the request, else 202 with the erasure to
//! poll (`GET /admin/v1/erasures/{id}`), which completes after a `kill -9` too.
//! Afterwards nothing of the user's notifications (their decision traces
//! included) is readable through any API,
//! and other users' are untouched.

use std::collections::HashSet;

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

/// A flow of an in_app step and a webhook step (to a sink answering 200).
async fn two_step_flow(app: &TestApp, sink: &wiremock::MockServer) -> String {
    let inapp = in_app_channel(app).await;
    let hook = create_webhook_channel(app, &hook_url(sink), None).await;
    let flow = active_flow(
        app,
        "erase",
        json!([
            channel_step(
                &inapp,
                Some("Hi {{ recipient.first_name }}"),
                "secret {{ data.i }}"
            ),
            channel_step(&s(&hook["id"]), Some("S"), "B {{ data.i }}")
        ]),
    )
    .await;
    s(&flow["id"])
}

/// `n` processed runs of `flow` for `exts`; their notifications.
async fn notify(app: &TestApp, flow: &str, exts: &[String], n: usize) -> Vec<Value> {
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
    let mut out = vec![];
    for r in &runs {
        wait_run_processed(app, r, 30).await;
        out.extend(run_notifications(app, r).await);
    }
    out
}

fn of_user(ns: &[Value], user_id: &str) -> Vec<Value> {
    ns.iter()
        .filter(|n| n["recipient_id"] == json!(user_id))
        .cloned()
        .collect()
}

/// Nothing of `gone` is readable: gets, lists (all, by run, by status), and
/// the user's feed (a new user of the same external id starts empty).
pub(crate) async fn assert_erased(app: &TestApp, ext: &str, user_id: &str, gone: &[Value]) {
    for n in gone {
        let r = app
            .admin(GET, &format!("{A}/notifications/{}", s(&n["id"])))
            .go()
            .await;
        assert_error(&r, 404, "not_found");
        let r = app
            .admin(GET, &format!("{A}/notifications/{}/trace", s(&n["id"])))
            .go()
            .await;
        assert_error(&r, 404, "not_found");
        for d in deliveries(n) {
            let r = app
                .admin(GET, &format!("{A}/deliveries/{}", s(&d["id"])))
                .go()
                .await;
            assert_error(&r, 404, "not_found");
        }
        let by_run = run_notifications(app, &s(&n["flow_run_id"])).await;
        assert!(
            by_run.iter().all(|x| x["recipient_id"] != json!(user_id)),
            "{by_run:?}"
        );
    }
    let gone_ids: HashSet<String> = gone.iter().map(|n| s(&n["id"])).collect();
    for n in list_all(app, &format!("{A}/notifications"), &[]).await {
        assert!(
            !gone_ids.contains(&s(&n["id"])),
            "listed after erasure: {n}"
        );
        assert_ne!(n["recipient_id"], json!(user_id), "{n}");
    }
    for status in [None, Some("sent"), Some("failed"), Some("skipped")] {
        let q: Vec<(&str, &str)> = status.map(|st| vec![("status", st)]).unwrap_or_default();
        for d in list_all(app, &format!("{A}/deliveries"), &q).await {
            assert_ne!(d["recipient_id"], json!(user_id), "{d}");
        }
    }
    let r = app
        .admin(GET, &format!("{A}/users/{}", enc(ext)))
        .go()
        .await;
    assert_error(&r, 404, "not_found");
    // the same external id again is a new user with an empty feed
    app.create_user_as(ext, json!({})).await;
    let feed = app.user(GET, &format!("{U}/feed"), ext).go().await.page();
    assert_eq!(feed["items"], json!([]), "{feed}");
    assert_eq!(feed["meta"]["unread_count"], json!(0), "{feed}");
}

#[tokio::test]
async fn a_small_erasure_finishes_within_the_request_and_leaves_others_alone() {
    let sink = mock_server().await;
    mock_always(&sink, 200).await;
    let app = TestApp::spawn();
    let flow = two_step_flow(&app, &sink).await;
    let (ext, user) = app
        .create_user("forget", json!({"first_name": "Ann"}))
        .await;
    let (keep, kept) = app.create_user("keep", json!({"first_name": "Bob"})).await;
    let all = notify(&app, &flow, &[ext.clone(), keep.clone()], 3).await;
    wait_feed(&app, &ext, 3).await;
    wait_feed(&app, &keep, 3).await;
    let (uid, kid) = (s(&user["id"]), s(&kept["id"]));
    let gone = of_user(&all, &uid);
    assert_eq!(gone.len(), 3);

    let r = app
        .admin(DELETE, &format!("{A}/users/{}", enc(&ext)))
        .query(&[("erase", "maybe")])
        .go()
        .await;
    assert_invalid_param(&r, "erase");
    let r = app
        .admin(DELETE, &format!("{A}/users/{}", enc(&ext)))
        .query(&[("erase", "true")])
        .go()
        .await;
    assert_eq!(r.status, 204, "{r}");
    assert_erased(&app, &ext, &uid, &gone).await;

    // the other recipient keeps everything, their traces too
    for n in of_user(&all, &kid) {
        let r = app
            .admin(GET, &format!("{A}/notifications/{}", s(&n["id"])))
            .go()
            .await;
        assert_eq!(r.ok(200)["deliveries"].as_array().unwrap().len(), 2);
        let r = app
            .admin(GET, &format!("{A}/notifications/{}/trace", s(&n["id"])))
            .go()
            .await;
        assert!(!r.ok(200)["entries"].as_array().unwrap().is_empty(), "{r}");
    }
    let feed = wait_feed(&app, &keep, 3).await;
    assert_eq!(feed["items"].as_array().unwrap().len(), 3, "{feed}");
    assert_eq!(feed["meta"]["unread_count"], json!(3), "{feed}");

    // an unknown user: 404 as for a plain delete
    let r = app
        .admin(DELETE, &format!("{A}/users/nobody-{}", random_hex()))
        .query(&[("erase", "true")])
        .go()
        .await;
    assert_error(&r, 404, "not_found");
    let r = app
        .admin(GET, &format!("{A}/erasures/{}", new_uuid()))
        .go()
        .await;
    assert_error(&r, 404, "not_found");
}

#[tokio::test]
async fn a_large_erasure_answers_202_and_completes_after_a_kill_9() {
    let sink = mock_server().await;
    mock_always(&sink, 200).await;
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    // Steps of 3 notifications, one per second in the background: the
    // request's own steps cannot finish 40, and the kill lands mid-way.
    let env = [("HERALD_PURGE_BATCH", "3"), ("HERALD_RETENTION_TICK", "1")];
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
    let (ext, user) = app.create_user("big", json!({})).await;
    let (keep, _) = app.create_user("stays", json!({})).await;
    let all = notify(&app, &flow, &[ext.clone(), keep.clone()], 40).await;
    let uid = s(&user["id"]);
    let gone = of_user(&all, &uid);
    assert_eq!(gone.len(), 40);

    let r = app
        .admin(DELETE, &format!("{A}/users/{}", enc(&ext)))
        .query(&[("erase", "true")])
        .go()
        .await;
    let e = r.ok(202);
    assert_eq!(e["status"], json!("running"), "{r}");
    let id = s(&e["id"]);
    assert_eq!(
        r.header("location").as_deref(),
        Some(format!("/admin/v1/erasures/{id}").as_str())
    );
    let removed = e["notifications_removed"].as_u64().unwrap();
    assert!(removed < 40, "{e}");
    assert!(e["completed_at"].is_null(), "{e}");
    // the user is gone at once
    let r = app
        .admin(GET, &format!("{A}/users/{}", enc(&ext)))
        .go()
        .await;
    assert_error(&r, 404, "not_found");
    app.kill9();

    let app = start(dir.path());
    let d = Deadline::new("the erasure to complete after the restart", 30);
    let done = loop {
        let r = app.admin(GET, &format!("{A}/erasures/{id}")).go().await;
        let v = r.ok(200);
        if v["status"] == json!("complete") {
            break v;
        }
        assert_eq!(v["status"], json!("running"), "{r}");
        d.tick(&r).await;
    };
    assert_eq!(done["notifications_removed"], json!(40), "{done}");
    assert!(is_timestamp(&done["completed_at"]), "{done}");
    assert_erased(&app, &ext, &uid, &gone).await;
    // nothing else was lost
    let left = list_all(&app, &format!("{A}/notifications"), &[]).await;
    assert_eq!(left.len(), 40, "the other recipient's notifications stay");
}

#[tokio::test]
async fn bulk_delete_with_erase_erases_each_user_and_lists_the_erasures() {
    let sink = mock_server().await;
    mock_always(&sink, 200).await;
    let app = TestApp::spawn();
    let flow = two_step_flow(&app, &sink).await;
    let (a, ua) = app.create_user("bulk-a", json!({})).await;
    let (b, ub) = app.create_user("bulk-b", json!({})).await;
    let (keep, kept) = app.create_user("bulk-keep", json!({})).await;
    let all = notify(&app, &flow, &[a.clone(), b.clone(), keep.clone()], 2).await;
    wait_feed(&app, &a, 2).await;
    wait_feed(&app, &b, 2).await;
    let nobody = format!("nobody-{}", random_hex());

    // a non-boolean `erase` is refused, in the body or the query; nothing goes
    let r = app
        .admin(POST, &format!("{A}/users/bulk_delete"))
        .json(&json!({"external_ids": [a], "erase": "yes"}))
        .go()
        .await;
    assert_validation(&r, &[("erase", "format")]);
    let r = app
        .admin(POST, &format!("{A}/users/bulk_delete"))
        .query(&[("erase", "maybe")])
        .json(&json!({"external_ids": [a]}))
        .go()
        .await;
    assert_invalid_param(&r, "erase");
    let r = app.admin(GET, &format!("{A}/users/{}", enc(&a))).go().await;
    r.ok(200);

    let r = app
        .admin(POST, &format!("{A}/users/bulk_delete"))
        .json(&json!({"external_ids": [a, nobody, b, a], "erase": true}))
        .go()
        .await;
    let v = r.ok(200);
    assert_eq!(v["deleted"], json!(2), "{v}");
    assert_eq!(v["not_found"], json!([nobody]), "{v}");
    let erasures = v["erasures"].as_array().unwrap().clone();
    assert_eq!(erasures.len(), 2, "{v}");
    assert_eq!(erasures[0]["external_id"], json!(a), "{v}");
    assert_eq!(erasures[1]["external_id"], json!(b), "{v}");
    for e in &erasures {
        let id = s(&e["erasure"]["id"]);
        let d = Deadline::new("each erasure to complete", 30);
        loop {
            let r = app.admin(GET, &format!("{A}/erasures/{id}")).go().await;
            let v = r.ok(200);
            if v["status"] == json!("complete") {
                assert_eq!(v["notifications_removed"], json!(2), "{v}");
                break;
            }
            d.tick(&r).await;
        }
    }
    assert_erased(&app, &a, &s(&ua["id"]), &of_user(&all, &s(&ua["id"]))).await;
    assert_erased(&app, &b, &s(&ub["id"]), &of_user(&all, &s(&ub["id"]))).await;
    // the user kept keeps their notifications
    for n in of_user(&all, &s(&kept["id"])) {
        let r = app
            .admin(GET, &format!("{A}/notifications/{}", s(&n["id"])))
            .go()
            .await;
        r.ok(200);
    }

    // `?erase=true` as the single DELETE takes it; without erase, no `erasures`
    let (c, _) = app.create_user("bulk-c", json!({})).await;
    let r = app
        .admin(POST, &format!("{A}/users/bulk_delete"))
        .query(&[("erase", "true")])
        .json(&json!({"external_ids": [c]}))
        .go()
        .await;
    let v = r.ok(200);
    assert_eq!(v["deleted"], json!(1), "{v}");
    assert_eq!(v["erasures"].as_array().map(Vec::len), Some(1), "{v}");
    let r = app
        .admin(POST, &format!("{A}/users/bulk_delete"))
        .json(&json!({"external_ids": [keep]}))
        .go()
        .await;
    let v = r.ok(200);
    assert_eq!(v["deleted"], json!(1), "{v}");
    assert!(v.get("erasures").is_none(), "{v}");
}
