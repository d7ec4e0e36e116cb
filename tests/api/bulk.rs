//! docs/API.md, Users: `POST /admin/v1/users/bulk` stores the good items of a
//! request in one durable commit and refuses the bad ones each with its own
//! 422, one result per item in order; limits, idempotent replay, tenants and
//! a restart.

use serde_json::{json, Value};

use crate::helpers::*;

fn bulk_path() -> String {
    format!("{A}/users/bulk")
}

fn user_path(ext: &str) -> String {
    format!("{A}/users/{}", enc(ext))
}

#[tokio::test]
async fn a_mix_of_good_and_bad_items_stores_only_the_good_ones() {
    let app = TestApp::spawn();
    let (old, _) = app
        .create_user("bulk-old", json!({"first_name": "Old"}))
        .await;
    let (new1, new2, bad) = (new_ext("bulk-a"), new_ext("bulk-b"), new_ext("bulk-bad"));
    let r = app
        .admin(POST, &bulk_path())
        .json(&json!({"users": [
            {"external_id": new1, "email": "a@example.com", "first_name": "A"},
            {"external_id": old, "last_name": "Updated"},
            {"external_id": bad, "email": "not an email"},
            {"email": "nobody@example.com"},
            "just-a-string",
            {"external_id": new2, "timezone": "Europe/Paris"},
            {"external_id": new2, "first_name": "Twice"}
        ]}))
        .go()
        .await;
    let body = r.ok(200);
    let results = body["results"].as_array().expect("results");
    assert_eq!(results.len(), 7, "{r}");

    assert_eq!(results[0]["status"], json!("created"), "{r}");
    assert_eq!(results[0]["external_id"], json!(new1));
    assert_eq!(results[0]["user"]["email"], json!("a@example.com"));
    assert!(results[0].get("error").is_none(), "{r}");
    assert_eq!(results[1]["status"], json!("updated"), "{r}");
    assert_eq!(results[1]["user"]["first_name"], json!("Old"));
    assert_eq!(results[1]["user"]["last_name"], json!("Updated"));
    // a later item of the same external id patches what the earlier one left
    assert_eq!(results[5]["status"], json!("created"), "{r}");
    assert_eq!(results[6]["status"], json!("updated"), "{r}");
    assert_eq!(results[6]["user"]["timezone"], json!("Europe/Paris"));
    assert_eq!(results[6]["user"]["first_name"], json!("Twice"));
    assert_eq!(results[5]["user"]["id"], results[6]["user"]["id"]);

    // the refused items carry the contract's 422 error object, paths per item
    let refused = [
        (2, json!(bad), "users.2.email", "format"),
        (3, Value::Null, "users.3.external_id", "required"),
        (4, Value::Null, "users.4", "format"),
    ];
    for (i, ext, field, reason) in refused {
        let item = &results[i];
        assert_eq!(item["external_id"], ext, "{item}");
        assert!(
            item.get("status").is_none() && item.get("user").is_none(),
            "{item}"
        );
        let err = &item["error"];
        assert_eq!(err["code"], json!("validation_failed"), "{item}");
        assert_eq!(err["status"], json!(422), "{item}");
        assert_eq!(
            err["type"],
            json!("https://herald.dev/errors#validation_failed-422")
        );
        assert!(err["message"].as_str().is_some_and(|m| !m.is_empty()));
        assert_eq!(
            err["request_id"].as_str(),
            r.header("x-request-id").as_deref()
        );
        assert_fields(&err["details"], &[(field, reason)]);
    }

    // the good ones are stored, the bad one is not
    let u = app.admin(GET, &user_path(&new1)).go().await.ok(200);
    assert_eq!(u, results[0]["user"]);
    let u = app.admin(GET, &user_path(&old)).go().await.ok(200);
    assert_eq!(u["last_name"], json!("Updated"));
    let u = app.admin(GET, &user_path(&new2)).go().await.ok(200);
    assert_eq!(u, results[6]["user"]);
    assert_not_found(&app.admin(GET, &user_path(&bad)).go().await, "user", &bad);
}

#[tokio::test]
async fn the_body_as_a_whole_is_checked_and_limited() {
    let app = TestApp::spawn();
    let r = app.admin(POST, &bulk_path()).json(&json!({})).go().await;
    assert_validation(&r, &[("users", "required")]);
    let r = app
        .admin(POST, &bulk_path())
        .json(&json!({"users": {"external_id": "x"}}))
        .go()
        .await;
    assert_validation(&r, &[("users", "format")]);
    let r = app.admin(POST, &bulk_path()).json(&json!([])).go().await;
    assert_invalid_json(&r);

    let too_many: Vec<Value> = (0..1001)
        .map(|i| json!({"external_id": format!("too-many-{i}")}))
        .collect();
    let r = app
        .admin(POST, &bulk_path())
        .json(&json!({ "users": too_many }))
        .go()
        .await;
    assert_validation(&r, &[("users", "length")]);
    assert_not_found(
        &app.admin(GET, &user_path("too-many-0")).go().await,
        "user",
        "too-many-0",
    );

    // exactly 1,000 are taken
    let exts: Vec<String> = (0..1000).map(|i| format!("max-{i}")).collect();
    let items: Vec<Value> = exts.iter().map(|e| json!({"external_id": e})).collect();
    let r = app
        .admin(POST, &bulk_path())
        .json(&json!({ "users": items }))
        .go()
        .await;
    let body = r.ok(200);
    let results = body["results"].as_array().expect("results");
    assert_eq!(results.len(), 1000);
    assert!(results.iter().all(|x| x["status"] == json!("created")));
    app.admin(GET, &user_path("max-999")).go().await.ok(200);
}

#[tokio::test]
async fn an_idempotency_key_replays_the_first_answer() {
    let app = TestApp::spawn();
    let ext = new_ext("bulk-idem");
    let key = format!("key-{}", random_hex());
    let body = json!({"users": [{"external_id": ext, "first_name": "First"}]});
    let r1 = app
        .admin(POST, &bulk_path())
        .header("Idempotency-Key", &key)
        .json(&body)
        .go()
        .await;
    let first = r1.ok(200);
    assert!(r1.header("idempotent-replayed").is_none(), "{r1}");
    assert_eq!(first["results"][0]["status"], json!("created"));
    let r2 = app
        .admin(POST, &bulk_path())
        .header("Idempotency-Key", &key)
        .json(&body)
        .go()
        .await;
    assert_eq!(r2.status, 200, "{r2}");
    assert_eq!(r2.json, first, "the original answer, created and all: {r2}");
    assert_eq!(r2.header("idempotent-replayed").as_deref(), Some("true"));
    // the same key with another payload is refused
    let r3 = app
        .admin(POST, &bulk_path())
        .header("Idempotency-Key", &key)
        .json(&json!({"users": [{"external_id": ext, "first_name": "Other"}]}))
        .go()
        .await;
    assert_error(&r3, 409, "idempotency_key_reused");
    let u = app.admin(GET, &user_path(&ext)).go().await.ok(200);
    assert_eq!(u["first_name"], json!("First"));
}

#[tokio::test]
async fn tenants_are_isolated_and_a_restart_keeps_the_users() {
    let dir = tempfile::tempdir().unwrap();
    let other = create_project_keys("other", dir.path());
    let keys = Keys::random();
    let mut app = TestApp::spawn_on(dir.path(), &keys);
    let ext = new_ext("bulk-tenant");
    let r = app
        .admin_with(&other, PUT, &user_path(&ext))
        .json(&json!({"first_name": "InOther"}))
        .go()
        .await;
    r.ok(201);
    let r = app
        .admin(POST, &bulk_path())
        .json(&json!({"users": [{"external_id": ext, "first_name": "InDefault"}]}))
        .go()
        .await;
    let body = r.ok(200);
    assert_eq!(body["results"][0]["status"], json!("created"), "{r}");

    app.stop();
    let app = TestApp::spawn_on(dir.path(), &keys);
    let u = app.admin(GET, &user_path(&ext)).go().await.ok(200);
    assert_eq!(u["first_name"], json!("InDefault"));
    let u = app
        .admin_with(&other, GET, &user_path(&ext))
        .go()
        .await
        .ok(200);
    assert_eq!(
        u["first_name"],
        json!("InOther"),
        "the other project's user is untouched"
    );
}

fn subs_path(topic: &str) -> String {
    format!("{A}/topics/{topic}/subscriptions")
}

async fn topic_with_users(app: &TestApp, n: usize) -> (String, Vec<String>) {
    let topic = format!("bulk-{}", &random_hex()[..8]);
    app.admin(PUT, &format!("{A}/topics/{topic}"))
        .json(&json!({}))
        .go()
        .await
        .ok(201);
    let exts: Vec<String> = (0..n).map(|i| new_ext(&format!("sub{i}"))).collect();
    let items: Vec<Value> = exts.iter().map(|e| json!({"external_id": e})).collect();
    app.admin(POST, &bulk_path())
        .json(&json!({ "users": items }))
        .go()
        .await
        .ok(200);
    (topic, exts)
}

#[tokio::test]
async fn many_users_subscribe_at_once_idempotently_per_user() {
    let app = TestApp::spawn();
    let (topic, exts) = topic_with_users(&app, 5).await;
    // one subscribed the single way first
    app.admin(POST, &subs_path(&topic))
        .json(&json!({"external_id": exts[0]}))
        .go()
        .await
        .ok(201);
    let r = app
        .admin(POST, &subs_path(&topic))
        .json(&json!({"users": [exts[0], exts[1], exts[2], exts[1]]}))
        .go()
        .await;
    let body = r.ok(200);
    assert_eq!(body["created"], json!(2), "{r}");
    assert_eq!(body["topic"]["subscribers_count"], json!(3), "{r}");
    assert_eq!(body["topic"]["key"], json!(topic));
    // again, with more: only the new ones count
    let r = app
        .admin(POST, &subs_path(&topic))
        .json(&json!({ "users": exts }))
        .go()
        .await;
    let body = r.ok(200);
    assert_eq!(body["created"], json!(2), "{r}");
    assert_eq!(body["topic"]["subscribers_count"], json!(5), "{r}");
    let t = app
        .admin(GET, &format!("{A}/topics/{topic}"))
        .go()
        .await
        .ok(200);
    assert_eq!(t["subscribers_count"], json!(5));
    let page = app.admin(GET, &subs_path(&topic)).go().await.page();
    assert_eq!(page["items"].as_array().map(Vec::len), Some(5), "{page}");
    // the single form still refuses a second subscription
    let r = app
        .admin(POST, &subs_path(&topic))
        .json(&json!({"external_id": exts[3]}))
        .go()
        .await;
    let d = assert_error(&r, 409, "conflict");
    assert_eq!(d["reason"], json!("subscription_already_exists"), "{r}");
}

#[tokio::test]
async fn a_bulk_subscription_with_an_unknown_user_stores_nothing() {
    let app = TestApp::spawn();
    let (topic, exts) = topic_with_users(&app, 2).await;
    let r = app
        .admin(POST, &subs_path(&topic))
        .json(&json!({"users": [exts[0], "nobody-here", exts[1], 7]}))
        .go()
        .await;
    assert_validation(&r, &[("users.3", "format")]);
    let r = app
        .admin(POST, &subs_path(&topic))
        .json(&json!({"users": [exts[0], "nobody-here", exts[1]]}))
        .go()
        .await;
    assert_validation(&r, &[("users.1", "inclusion")]);
    let t = app
        .admin(GET, &format!("{A}/topics/{topic}"))
        .go()
        .await
        .ok(200);
    assert_eq!(t["subscribers_count"], json!(0), "nothing stored: {t}");

    let too_many: Vec<String> = (0..1001).map(|i| format!("u{i}")).collect();
    let r = app
        .admin(POST, &subs_path(&topic))
        .json(&json!({ "users": too_many }))
        .go()
        .await;
    assert_validation(&r, &[("users", "length")]);
    let r = app
        .admin(POST, &subs_path("no-such-topic"))
        .json(&json!({"users": [exts[0]]}))
        .go()
        .await;
    assert_not_found(&r, "topic", "no-such-topic");
}

#[tokio::test]
async fn a_bulk_subscription_replays_by_idempotency_key_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let mut app = TestApp::spawn_on(dir.path(), &keys);
    let (topic, exts) = topic_with_users(&app, 3).await;
    let key = format!("key-{}", random_hex());
    let body = json!({ "users": exts });
    let r1 = app
        .admin(POST, &subs_path(&topic))
        .header("Idempotency-Key", &key)
        .json(&body)
        .go()
        .await;
    let first = r1.ok(200);
    assert_eq!(first["created"], json!(3));
    let r2 = app
        .admin(POST, &subs_path(&topic))
        .header("Idempotency-Key", &key)
        .json(&body)
        .go()
        .await;
    assert_eq!(r2.json, first, "the first answer, created 3: {r2}");
    assert_eq!(r2.header("idempotent-replayed").as_deref(), Some("true"));

    app.stop();
    let app = TestApp::spawn_on(dir.path(), &keys);
    let t = app
        .admin(GET, &format!("{A}/topics/{topic}"))
        .go()
        .await
        .ok(200);
    assert_eq!(t["subscribers_count"], json!(3));
    let page = app.admin(GET, &subs_path(&topic)).go().await.page();
    assert_eq!(page["items"].as_array().map(Vec::len), Some(3), "{page}");
}

fn bulk_delete_path() -> String {
    format!("{A}/users/bulk_delete")
}

#[tokio::test]
async fn bulk_delete_removes_users_with_their_subscriptions() {
    let dir = tempfile::tempdir().unwrap();
    let other = create_project_keys("other", dir.path());
    let keys = Keys::random();
    let mut app = TestApp::spawn_on(dir.path(), &keys);
    let (topic, exts) = topic_with_users(&app, 4).await;
    app.admin(POST, &subs_path(&topic))
        .json(&json!({ "users": exts }))
        .go()
        .await
        .ok(200);
    // the same external id in the other project stays
    app.admin_with(&other, PUT, &user_path(&exts[0]))
        .json(&json!({"first_name": "Other"}))
        .go()
        .await
        .ok(201);

    let r = app
        .admin(POST, &bulk_delete_path())
        .json(&json!({"external_ids": [exts[0], "nobody-here", exts[1], exts[0]]}))
        .go()
        .await;
    let body = r.ok(200);
    assert_eq!(
        body,
        json!({"deleted": 2, "not_found": ["nobody-here"]}),
        "{r}"
    );
    for ext in &exts[..2] {
        assert_not_found(&app.admin(GET, &user_path(ext)).go().await, "user", ext);
    }
    app.admin(GET, &user_path(&exts[2])).go().await.ok(200);
    let t = app
        .admin(GET, &format!("{A}/topics/{topic}"))
        .go()
        .await
        .ok(200);
    assert_eq!(t["subscribers_count"], json!(2), "{t}");
    let page = app.admin(GET, &subs_path(&topic)).go().await.page();
    let left: Vec<&Value> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["user_external_id"])
        .collect();
    assert_eq!(left.len(), 2, "{page}");
    assert!(
        !left.contains(&&json!(exts[0])) && !left.contains(&&json!(exts[1])),
        "{page}"
    );

    // bad bodies, limits, idempotent replay
    let r = app
        .admin(POST, &bulk_delete_path())
        .json(&json!({}))
        .go()
        .await;
    assert_validation(&r, &[("external_ids", "required")]);
    let r = app
        .admin(POST, &bulk_delete_path())
        .json(&json!({"external_ids": [exts[2], 5]}))
        .go()
        .await;
    assert_validation(&r, &[("external_ids.1", "format")]);
    let too_many: Vec<String> = (0..1001).map(|i| format!("u{i}")).collect();
    let r = app
        .admin(POST, &bulk_delete_path())
        .json(&json!({ "external_ids": too_many }))
        .go()
        .await;
    assert_validation(&r, &[("external_ids", "length")]);
    app.admin(GET, &user_path(&exts[2])).go().await.ok(200);
    let key = format!("key-{}", random_hex());
    let del = json!({"external_ids": [exts[2]]});
    let r1 = app
        .admin(POST, &bulk_delete_path())
        .header("Idempotency-Key", &key)
        .json(&del)
        .go()
        .await;
    assert_eq!(r1.ok(200), json!({"deleted": 1, "not_found": []}));
    let r2 = app
        .admin(POST, &bulk_delete_path())
        .header("Idempotency-Key", &key)
        .json(&del)
        .go()
        .await;
    assert_eq!(r2.json, r1.json, "{r2}");
    assert_eq!(r2.header("idempotent-replayed").as_deref(), Some("true"));

    // durable: after a restart the deletions and the count hold
    app.stop();
    let app = TestApp::spawn_on(dir.path(), &keys);
    for ext in &exts[..3] {
        assert_not_found(&app.admin(GET, &user_path(ext)).go().await, "user", ext);
    }
    let t = app
        .admin(GET, &format!("{A}/topics/{topic}"))
        .go()
        .await
        .ok(200);
    assert_eq!(t["subscribers_count"], json!(1), "{t}");
    let u = app
        .admin_with(&other, GET, &user_path(&exts[0]))
        .go()
        .await
        .ok(200);
    assert_eq!(
        u["first_name"],
        json!("Other"),
        "another project's user is untouched"
    );
}

#[tokio::test]
async fn users_named_bulk_or_bulk_delete_stay_reachable() {
    let app = TestApp::spawn();
    for ext in ["bulk", "bulk_delete"] {
        let created = app
            .admin(PUT, &user_path(ext))
            .json(&json!({"first_name": "Named like a route"}))
            .go()
            .await
            .ok(201);
        assert_eq!(created["external_id"], ext);
        let got = app.admin(GET, &user_path(ext)).go().await.ok(200);
        assert_eq!(got["first_name"], "Named like a route");
        app.admin(DELETE, &user_path(ext)).go().await.ok(204);
        assert_not_found(&app.admin(GET, &user_path(ext)).go().await, "user", ext);
    }
    // The routes themselves still answer POST.
    let r = app
        .admin(POST, &bulk_path())
        .json(&json!({"users": [{"external_id": "bulk"}]}))
        .go()
        .await
        .ok(200);
    assert_eq!(r["results"][0]["status"], "created");
}
