//! docs/API.md "Audit log": every change of a project's configuration
//! through the Admin API is an entry naming `api`, with the resource before
//! and after and no secret anywhere in the log (a channel's credentials read
//! `********`; endpoint secrets, project keys and the signing key never
//! appear); a change that changed nothing leaves none; a secret key rotated
//! by the operator (`herald project rotate-secret`, on a running server and
//! on a stopped data directory) names `operator`; pages walk every entry
//! newest first, filtered by resource type and actor; another project sees
//! none of it.

use std::collections::HashSet;

use serde_json::{json, Value};

use super::engine_helpers::*;
use super::helpers::*;
use super::ops_projects::{project, rotated};

const TWILIO_TOKEN: &str = "audit_tok_0123456789abcdef";
const TWILIO_TOKEN_2: &str = "audit_tok_fedcba9876543210";

/// Every entry of the log, newest first (pages of 1000 with `query`).
async fn whole_log(app: &TestApp, query: &[(&str, &str)]) -> Vec<Value> {
    list_all(app, &format!("{A}/audit_log"), query).await
}

fn actions(entries: &[Value]) -> Vec<String> {
    entries.iter().map(|e| s(&e["action"])).collect()
}

/// The first (newest) entry of `action`.
#[track_caller]
fn entry<'a>(entries: &'a [Value], action: &str) -> &'a Value {
    entries
        .iter()
        .find(|e| e["action"] == json!(action))
        .unwrap_or_else(|| panic!("no {action} entry in {entries:?}"))
}

#[tokio::test]
async fn admin_api_changes_are_logged_by_api_with_before_and_after_and_no_secret() {
    let app = TestApp::spawn();
    let keys = app.keys();
    let r = app.audit_log(&[]).await;
    assert_eq!(r.page()["items"], json!([]), "a new project's log is empty");

    // a channel with a credential, changed (the credential too), revoked
    // and deleted at the end
    let r = app
        .admin(POST, &format!("{A}/channels"))
        .json(
            &json!({"type": "sms", "provider": "twilio", "name": "Twilio A",
            "config": {"account_sid": "AC1", "auth_token": TWILIO_TOKEN, "from": "+15555550100"}}),
        )
        .go()
        .await;
    let channel = s(&r.ok(201)["id"]);
    let r = app
        .admin(PUT, &format!("{A}/channels/{channel}"))
        .json(&json!({"name": "Twilio B", "config": {"auth_token": TWILIO_TOKEN_2}}))
        .go()
        .await;
    r.ok(200);

    // a flow: created, edited, activated, archived
    let in_app = in_app_channel(&app).await;
    let flow = create_flow(
        &app,
        "audit-flow",
        json!([channel_step(&in_app, None, "hi")]),
    )
    .await;
    let flow_id = s(&flow["id"]);
    let r = app
        .admin(PUT, &format!("{A}/flows/{flow_id}"))
        .json(&json!({"name": "Audited"}))
        .go()
        .await;
    r.ok(200);
    activate(&app, &flow_id).await;
    let r = app
        .admin(POST, &format!("{A}/flows/{flow_id}/archive"))
        .go()
        .await;
    r.ok(200);

    // a topic: created, renamed, deleted
    let topic = format!("{A}/topics/audit-topic");
    app.admin(PUT, &topic)
        .json(&json!({"name": "First"}))
        .go()
        .await
        .ok(201);
    app.admin(PUT, &topic)
        .json(&json!({"name": "Second"}))
        .go()
        .await
        .ok(200);
    app.admin(DELETE, &topic).go().await.ok(204);

    // an event endpoint: created, disabled, its secret rotated, deleted
    let r = app
        .admin(POST, &format!("{A}/webhook_endpoints"))
        .json(&json!({"url": "https://example.com/audit"}))
        .go()
        .await;
    let ep = r.ok(201);
    let ep_id = s(&ep["id"]);
    let mut endpoint_secrets = vec![s(&ep["secret"])];
    let r = app
        .admin(PUT, &format!("{A}/webhook_endpoints/{ep_id}"))
        .json(&json!({"enabled": false}))
        .go()
        .await;
    r.ok(200);
    let r = app
        .admin(
            POST,
            &format!("{A}/webhook_endpoints/{ep_id}/rotate_secret"),
        )
        .go()
        .await;
    endpoint_secrets.push(s(&r.ok(200)["secret"]));
    app.admin(DELETE, &format!("{A}/webhook_endpoints/{ep_id}"))
        .go()
        .await
        .ok(204);

    // settings (the same again changes nothing: no second entry), keys
    app.put_project(&json!({"timezone": "Europe/Paris"}))
        .await
        .ok(200);
    app.put_project(&json!({"timezone": "Europe/Paris"}))
        .await
        .ok(200);
    app.put_signing_key(&key_a().public_pem).await;
    app.admin(DELETE, &format!("{A}/project/signing_key"))
        .go()
        .await
        .ok(204);
    app.admin(POST, &format!("{A}/project/rotate_link_secret"))
        .go()
        .await
        .ok(204);

    // the test clock
    app.put_project(&json!({"clock": "test"})).await.ok(200);
    app.advance_clock(&json!({"by": "1h"})).await.ok(200);

    // the channel, revoked then deleted
    app.admin(POST, &format!("{A}/channels/{channel}/revoke"))
        .go()
        .await
        .ok(200);
    app.admin(DELETE, &format!("{A}/channels/{channel}"))
        .go()
        .await
        .ok(204);

    let log = whole_log(&app, &[]).await;
    let mut want = vec![
        "channel.created",
        "channel.updated",
        "flow.created",
        "flow.updated",
        "flow.activated",
        "flow.archived",
        "topic.created",
        "topic.updated",
        "topic.deleted",
        "webhook_endpoint.created",
        "webhook_endpoint.updated",
        "webhook_endpoint.secret_rotated",
        "webhook_endpoint.deleted",
        "project.updated",
        "signing_key.put",
        "signing_key.deleted",
        "link_secret.rotated",
        "project.updated",
        "clock.advanced",
        "channel.revoked",
        "channel.deleted",
    ];
    want.reverse();
    assert_eq!(actions(&log), want, "newest first: {log:?}");

    // every entry: by `api`, a UUIDv7 id, newer ids first, a time
    let ids: Vec<String> = log.iter().map(|e| s(&e["id"])).collect();
    let mut sorted = ids.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(ids, sorted, "ids descend");
    for e in &log {
        assert_eq!(e["who"], json!("api"), "{e}");
        assert!(is_uuid_v7(&e["id"]), "{e}");
        assert!(is_timestamp(&e["at"]), "{e}");
        let action = s(&e["action"]);
        let prefix = action.split('.').next().unwrap();
        assert_eq!(e["resource_type"], json!(prefix), "{e}");
    }

    // before and after
    let created = entry(&log, "channel.created");
    assert_eq!(created["before"], Value::Null, "{created}");
    assert_eq!(created["resource_id"], json!(channel), "{created}");
    assert_eq!(created["after"]["config"]["auth_token"], json!("********"));
    assert_eq!(created["after"]["config"]["from"], json!("+15555550100"));
    let updated = entry(&log, "channel.updated");
    assert_eq!(updated["before"]["name"], json!("Twilio A"), "{updated}");
    assert_eq!(updated["after"]["name"], json!("Twilio B"), "{updated}");
    assert_eq!(updated["resource_key"], json!("Twilio B"), "{updated}");
    let deleted = entry(&log, "channel.deleted");
    assert_eq!(deleted["after"], Value::Null, "{deleted}");
    assert_eq!(deleted["before"]["revoked"], json!(true), "{deleted}");

    let f = entry(&log, "flow.updated");
    assert_eq!(f["before"]["name"], json!("Flow audit-flow"), "{f}");
    assert_eq!(f["after"]["name"], json!("Audited"), "{f}");
    assert_eq!(f["resource_key"], json!("audit-flow"), "{f}");
    let f = entry(&log, "flow.archived");
    assert_eq!(f["before"]["status"], json!("active"), "{f}");
    assert_eq!(f["after"]["status"], json!("archived"), "{f}");

    let t = entry(&log, "topic.updated");
    assert_eq!(t["before"]["name"], json!("First"), "{t}");
    assert_eq!(t["after"]["name"], json!("Second"), "{t}");
    assert_eq!(t["resource_key"], json!("audit-topic"), "{t}");

    let w = entry(&log, "webhook_endpoint.updated");
    assert_eq!(w["before"]["enabled"], json!(true), "{w}");
    assert_eq!(w["after"]["enabled"], json!(false), "{w}");

    let tz = &log[log.len() - 14];
    assert_eq!(tz["action"], json!("project.updated"), "{tz}");
    assert_eq!(tz["before"]["timezone"], Value::Null, "{tz}");
    assert_eq!(tz["after"]["timezone"], json!("Europe/Paris"), "{tz}");
    let sk = entry(&log, "signing_key.put");
    assert_eq!(sk["before"]["signing_key"], Value::Null, "{sk}");
    assert_eq!(sk["after"]["signing_key"], json!("********"), "{sk}");
    let link = entry(&log, "link_secret.rotated");
    assert_eq!(link["before"]["link_epoch"], json!(0), "{link}");
    assert_eq!(link["after"]["link_epoch"], json!(1), "{link}");
    let clock = entry(&log, "clock.advanced");
    let (from, to) = (
        parse_ts(&clock["before"]["test_clock"]),
        parse_ts(&clock["after"]["test_clock"]),
    );
    assert_eq!((to - from).num_seconds(), 3600, "{clock}");

    // no secret anywhere in what the log answers
    let raw = app.audit_log(&[("limit", "1000")]).await.text;
    let pem_line = key_a().public_pem.lines().nth(1).unwrap().to_string();
    let mut secrets = vec![
        TWILIO_TOKEN.to_string(),
        TWILIO_TOKEN_2.to_string(),
        keys.secret_key.clone(),
        keys.public_key.clone(),
        pem_line,
    ];
    secrets.extend(endpoint_secrets);
    for secret in &secrets {
        assert!(!raw.contains(secret.as_str()), "{secret} in the log: {raw}");
    }
    assert!(!raw.contains("secret_hash"), "{raw}");
}

#[tokio::test]
async fn pages_walk_every_entry_newest_first_and_filter_by_type_and_actor() {
    let app = TestApp::spawn();
    for i in 0..7 {
        app.admin(PUT, &format!("{A}/topics/paged-{i}"))
            .json(&json!({"name": format!("T{i}")}))
            .go()
            .await
            .ok(201);
    }
    app.put_project(&json!({"timezone": "Asia/Tokyo"}))
        .await
        .ok(200);

    // pages of 3: every entry once, in the order of one big page
    let all = whole_log(&app, &[]).await;
    assert_eq!(all.len(), 8, "{all:?}");
    let mut walked: Vec<Value> = vec![];
    let mut after: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut q = vec![("limit", "3")];
        if let Some(a) = &after {
            q.push(("after", a.as_str()));
        }
        let body = app.audit_log(&q).await.page();
        let items = body["items"].as_array().unwrap();
        assert!(items.len() <= 3, "{body}");
        walked.extend(items.iter().cloned());
        pages += 1;
        if body["page"]["has_more_after"] != json!(true) {
            break;
        }
        after = Some(s(&body["page"]["after"]));
        assert!(pages < 10, "too many pages");
    }
    assert_eq!(pages, 3);
    assert_eq!(walked, all, "the pages hold every entry once, in order");
    let keys: Vec<String> = walked.iter().map(|e| s(&e["resource_key"])).collect();
    let unique: HashSet<&String> = keys.iter().collect();
    assert_eq!(unique.len(), 8, "{keys:?}");
    assert_eq!(
        walked[0]["action"],
        json!("project.updated"),
        "newest first"
    );
    assert_eq!(walked[7]["resource_key"], json!("paged-0"), "oldest last");

    // filters
    let topics = whole_log(&app, &[("resource_type", "topic")]).await;
    assert_eq!(topics.len(), 7);
    assert!(topics.iter().all(|e| e["resource_type"] == json!("topic")));
    let by_api = whole_log(&app, &[("who", "api")]).await;
    assert_eq!(by_api, all);
    let by_operator = whole_log(&app, &[("who", "operator")]).await;
    assert_eq!(by_operator, Vec::<Value>::new());
    let none = whole_log(&app, &[("resource_type", "flow")]).await;
    assert_eq!(none, Vec::<Value>::new());

    // a cursor of one filter is refused under another
    let body = app
        .audit_log(&[("limit", "2"), ("resource_type", "topic")])
        .await
        .page();
    let cursor = s(&body["page"]["after"]);
    let r = app
        .audit_log(&[("limit", "2"), ("after", cursor.as_str())])
        .await;
    assert_error(&r, 400, "bad_request");
}

#[tokio::test]
async fn another_project_sees_none_of_the_log() {
    let (app, a, b) = spawn_two_projects();
    let r = app
        .admin_with(&a, PUT, &format!("{A}/topics/only-a"))
        .json(&json!({"name": "A"}))
        .go()
        .await;
    r.ok(201);
    let r = app
        .admin_with(&b, PUT, &format!("{A}/topics/only-b"))
        .json(&json!({"name": "B"}))
        .go()
        .await;
    r.ok(201);
    for (keys, mine) in [(&a, "only-a"), (&b, "only-b")] {
        let r = app
            .admin_with(keys, GET, &format!("{A}/audit_log"))
            .go()
            .await;
        let items = r.page()["items"].as_array().unwrap().clone();
        assert_eq!(items.len(), 1, "{r}");
        assert_eq!(items[0]["resource_key"], json!(mine), "{r}");
    }
}

#[tokio::test]
async fn a_secret_key_rotated_by_the_operator_names_the_operator() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let keys = Keys::random();
    let app = TestApp::spawn_on(&dir, &keys);
    app.put_project(&json!({"timezone": "Europe/Paris"}))
        .await
        .ok(200);

    let (new, _) = rotated(&project(
        &dir,
        &["rotate-secret", "default", "--grace", "1h"],
    ));
    let now = Keys {
        public_key: keys.public_key.clone(),
        secret_key: new.clone(),
    };
    let r = app
        .admin_with(&now, GET, &format!("{A}/audit_log"))
        .go()
        .await;
    let items = r.page()["items"].as_array().unwrap().clone();
    assert_eq!(items.len(), 2, "{r}");
    let e = &items[0];
    assert_eq!(e["action"], json!("key.rotated"), "{e}");
    assert_eq!(e["who"], json!("operator"), "{e}");
    assert_eq!(e["resource_type"], json!("key"), "{e}");
    assert_eq!(e["before"]["rotated_at"], Value::Null, "{e}");
    assert!(is_timestamp(&e["after"]["rotated_at"]), "{e}");
    assert!(is_timestamp(&e["after"]["previous_valid_until"]), "{e}");
    assert_eq!(items[1]["who"], json!("api"), "{r}");
    assert!(!r.text.contains(&new), "{r}");
    assert!(!r.text.contains(&keys.secret_key), "{r}");
}

#[tokio::test]
async fn a_secret_key_rotated_on_a_stopped_data_dir_names_the_operator() {
    if sled_only("the command line on the data directory (PostgreSQL: the running server)") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let keys = Keys::random();
    let mut app = TestApp::spawn_on(&dir, &keys);
    app.put_project(&json!({"timezone": "Europe/Paris"}))
        .await
        .ok(200);
    assert_eq!(app.stop().code(), Some(0));

    let (new, _) = rotated(&project(
        &dir,
        &["rotate-secret", "default", "--grace", "0"],
    ));
    let now = Keys {
        public_key: keys.public_key.clone(),
        secret_key: new,
    };
    let app = TestApp::spawn_on(&dir, &now);
    let r = app
        .admin_with(&now, GET, &format!("{A}/audit_log"))
        .go()
        .await;
    assert_eq!(
        actions(r.page()["items"].as_array().unwrap()),
        vec!["key.rotated", "project.updated"],
        "{r}"
    );
    assert_eq!(r.page()["items"][0]["who"], json!("operator"), "{r}");
}

#[tokio::test]
async fn content_changes_are_logged_as_written() {
    let app = TestApp::spawn();
    let catalog = json!({"messages": {"reset_password": "Reset your password"}});
    app.put_content("translations", "fr", &catalog)
        .await
        .ok(201);
    let changed = json!({"messages": {"reset_password": "Choose a new password"}});
    app.put_content("translations", "fr", &changed)
        .await
        .ok(200);
    app.delete_content("translations", "fr").await.ok(204);

    let log = whole_log(&app, &[("resource_type", "translation")]).await;
    assert_eq!(
        actions(&log),
        vec![
            "translation.deleted",
            "translation.updated",
            "translation.created"
        ]
    );
    let updated = &log[1];
    assert_eq!(updated["resource_key"], json!("fr"), "{updated}");
    // a message whose key says `password` is content, shown as written
    let (before, after) = (updated["before"].to_string(), updated["after"].to_string());
    assert!(before.contains("Reset your password"), "{updated}");
    assert!(after.contains("Choose a new password"), "{updated}");
    assert_eq!(log[0]["after"], Value::Null, "{log:?}");
}
