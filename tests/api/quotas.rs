//! Quotas per project (docs/API.md, "Quotas"): a run whose deliveries
//! render over `--max-delivery-bytes` (one delivery, all its parts) or
//! `--max-run-bytes` (all of them) is refused with 422 before anything of
//! it is stored; a project whose usage would go past its storage quota gets
//! 409 `conflict` reason `quota_exceeded` while another project still
//! accepts; `GET /admin/v1/project` shows the usage, which grows with each
//! run and falls back as retention removes what it counted.

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

/// What one stored notification with one delivery of `content` bytes
/// counts (`quota::NOTIFICATION_COST` + `DELIVERY_COST` + content).
fn cost(content: u64) -> u64 {
    512 + 512 + content
}

/// An in-app flow of `app`'s project (`keys`) whose body is `data.n` x's.
async fn sized_flow(app: &TestApp, keys: &Keys) -> String {
    let r = app
        .admin_with(keys, GET, &format!("{A}/channels"))
        .query(&[("limit", "1000")])
        .go()
        .await;
    let page = r.page();
    let inapp = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == json!("in_app"))
        .map(|c| s(&c["id"]))
        .expect("an in-app channel");
    let body = json!({"handle": handle("sized"), "name": "Sized", "steps": [
        {"type": "channel", "channel_id": inapp,
         "template": {"body": "{{ 'x' * data.n }}"}}]});
    let r = app
        .admin_with(keys, POST, &format!("{A}/flows"))
        .json(&body)
        .go()
        .await;
    let id = s(&r.ok(201)["id"]);
    app.admin_with(keys, POST, &format!("{A}/flows/{id}/activate"))
        .go()
        .await
        .ok(200);
    id
}

async fn run(app: &TestApp, keys: &Keys, flow: &str, to: &[String], n: u64) -> Resp {
    app.admin_with(keys, POST, &format!("{A}/flows/{flow}/run"))
        .json(&json!({"recipients": to, "data": {"n": n}}))
        .go()
        .await
}

async fn project(app: &TestApp, keys: &Keys) -> Value {
    app.admin_with(keys, GET, &format!("{A}/project"))
        .go()
        .await
        .ok(200)
}

async fn count(app: &TestApp, keys: &Keys, list: &str) -> usize {
    let r = app
        .admin_with(keys, GET, &format!("{A}/{list}"))
        .query(&[("limit", "1000")])
        .go()
        .await;
    r.page()["items"].as_array().unwrap().len()
}

#[tokio::test]
async fn runs_over_the_delivery_or_run_bound_are_refused_and_nothing_of_them_is_stored() {
    let app = TestApp::spawn_with(
        &["--max-delivery-bytes", "1000", "--max-run-bytes", "5KiB"],
        &[],
    );
    let keys = app.keys();
    let flow = sized_flow(&app, &keys).await;
    let one = vec![new_ext("big")];

    // one delivery over 1000 bytes
    let r = run(&app, &keys, &flow, &one, 1001).await;
    let d = assert_validation(&r, &[("data", "length")]);
    assert_eq!(d["reason"], json!("max_delivery_bytes"), "{r}");
    assert_eq!(d["limit"], json!(1000), "{r}");
    let msg = s(&d["fields"][0]["message"]);
    assert!(msg.contains("1001 bytes") && msg.contains(&one[0]), "{msg}");

    // six deliveries of 900 bytes: each within, 5400 together over 5 KiB
    let six: Vec<String> = (0..6).map(|_| new_ext("many")).collect();
    let r = run(&app, &keys, &flow, &six, 900).await;
    let d = assert_validation(&r, &[("data", "length")]);
    assert_eq!(d["reason"], json!("max_run_bytes"), "{r}");
    assert_eq!(d["limit"], json!(5120), "{r}");

    // nothing of either is stored: no notification, delivery, user or usage
    assert_eq!(count(&app, &keys, "notifications").await, 0);
    assert_eq!(count(&app, &keys, "deliveries").await, 0);
    for ext in one.iter().chain(&six) {
        let r = app
            .admin(GET, &format!("{A}/users/{}", enc(ext)))
            .go()
            .await;
        assert_not_found(&r, "user", ext);
    }
    assert_eq!(project(&app, &keys).await["usage"]["bytes"], json!(0));

    // within both: accepted
    let r = run(&app, &keys, &flow, &six[..5], 1000).await;
    r.ok(202);
    assert_eq!(
        project(&app, &keys).await["usage"]["bytes"],
        json!(5 * cost(1000))
    );
}

#[tokio::test]
async fn a_project_over_its_quota_is_refused_while_another_still_accepts() {
    let (app, a, b) = spawn_two_projects();
    let p = project(&app, &a).await;
    assert_eq!(p["quota_bytes"], json!(null), "{p}");
    assert_eq!(p["usage"], json!({"bytes": 0, "quota_bytes": 0}), "{p}");

    // the setting is checked
    for bad in [
        json!(-1),
        json!("1MiB"),
        json!(1.5),
        json!(9007199254740992u64),
    ] {
        let r = app
            .admin_with(&a, PUT, &format!("{A}/project"))
            .json(&json!({"quota_bytes": bad}))
            .go()
            .await;
        assert_eq!(r.status, 422, "{bad}: {r}");
    }
    let quota = 3 * cost(5000) + 2000;
    let r = app
        .admin_with(&a, PUT, &format!("{A}/project"))
        .json(&json!({"quota_bytes": quota}))
        .go()
        .await;
    let p = r.ok(200);
    assert_eq!(p["quota_bytes"], json!(quota), "{p}");
    assert_eq!(p["usage"]["quota_bytes"], json!(quota), "{p}");

    // usage grows with each run, by what it stored
    let flow = sized_flow(&app, &a).await;
    for i in 1..=3u64 {
        run(&app, &a, &flow, &[new_ext("q")], 5000).await.ok(202);
        let p = project(&app, &a).await;
        assert_eq!(p["usage"]["bytes"], json!(i * cost(5000)), "{p}");
    }
    // the fourth would go over: 409, nothing stored
    let ext = new_ext("over");
    let r = run(&app, &a, &flow, std::slice::from_ref(&ext), 5000).await;
    let d = assert_error(&r, 409, "conflict");
    assert_eq!(d["reason"], json!("quota_exceeded"), "{r}");
    assert_eq!(d["resource"], json!("project"), "{r}");
    assert_eq!(d["limit"], json!(quota), "{r}");
    assert_eq!(count(&app, &a, "notifications").await, 3);
    assert_eq!(count(&app, &a, "deliveries").await, 3);
    let r = app
        .admin_with(&a, GET, &format!("{A}/users/{}", enc(&ext)))
        .go()
        .await;
    assert_not_found(&r, "user", &ext);
    // a small one still fits
    run(&app, &a, &flow, &[new_ext("small")], 10).await.ok(202);

    // the other project has no quota (the server default is none)
    let other = sized_flow(&app, &b).await;
    for _ in 0..5 {
        run(&app, &b, &other, &[new_ext("b")], 5000).await.ok(202);
    }
    let p = project(&app, &b).await;
    assert_eq!(p["usage"]["bytes"], json!(5 * cost(5000)), "{p}");

    // per project on /metrics
    let text = app.request(GET, "/metrics").send().await.unwrap();
    let text = text.text().await.unwrap();
    let id = s(&project(&app, &a).await["id"]);
    let used = metric_value(
        &text,
        &format!("herald_project_usage_bytes{{project=\"{id}\"}}"),
    );
    assert_eq!(used, Some((3 * cost(5000) + cost(10)) as f64), "{text}");
    let q = metric_value(
        &text,
        &format!("herald_project_quota_bytes{{project=\"{id}\"}}"),
    );
    assert_eq!(q, Some(quota as f64));

    // null: back to the server default (none)
    let r = app
        .admin_with(&a, PUT, &format!("{A}/project"))
        .json(&json!({"quota_bytes": null}))
        .go()
        .await;
    assert_eq!(r.ok(200)["usage"]["quota_bytes"], json!(0));
    run(&app, &a, &flow, &[new_ext("again")], 5000)
        .await
        .ok(202);
}

#[tokio::test]
async fn the_operator_default_applies_and_retention_gives_the_usage_back() {
    let app = TestApp::spawn_with(
        &["--project-quota-bytes", "4KiB"],
        &[
            ("HERALD_RETENTION_TEST_SECONDS", "1"),
            ("HERALD_RETENTION_TICK", "1"),
        ],
    );
    let keys = app.keys();
    let p = project(&app, &keys).await;
    assert_eq!(p["usage"]["quota_bytes"], json!(4096), "{p}");
    let flow = sized_flow(&app, &keys).await;
    run(&app, &keys, &flow, &[new_ext("r")], 2000).await.ok(202);
    let r = run(&app, &keys, &flow, &[new_ext("r")], 2000).await;
    assert_error(&r, 409, "conflict");

    // the purge removes the notification and takes it off the usage
    let r = app
        .put_project(&json!({"retention": {"notifications": "2s", "feed": "2s"}}))
        .await;
    r.ok(200);
    let d = Deadline::new("the purge to give the usage back", 30);
    loop {
        let p = project(&app, &keys).await;
        if p["usage"]["bytes"] == json!(0) {
            break;
        }
        d.tick(p["usage"].to_string()).await;
    }
    assert_eq!(count(&app, &keys, "notifications").await, 0);
    run(&app, &keys, &flow, &[new_ext("r")], 2000).await.ok(202);
}
