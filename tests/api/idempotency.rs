//! docs/API.md §5 (idempotency): replays through the
//! `Idempotency-Key` header or the body's `idempotency_key`, key reuse with
//! another payload, canonical payload comparison, key validation, errors that
//! are not stored, other creating POSTs, and concurrent identical requests.

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

fn run_path(flow: &str) -> String {
    format!("{A}/flows/{flow}/run")
}

/// Notifications of `ext` (all runs).
async fn notifications_of(app: &TestApp, ext: &str) -> Vec<Value> {
    list_all(app, &format!("{A}/notifications"), &[("recipient", ext)]).await
}

async fn in_app_flow(app: &TestApp, tag: &str) -> String {
    let inapp = in_app_channel(app).await;
    let f = active_flow(
        app,
        tag,
        json!([channel_step(&inapp, None, "hi {{ data.n }}")]),
    )
    .await;
    s(&f["id"])
}

#[tokio::test]
async fn run_replays_by_header_and_by_body_field() {
    let app = TestApp::spawn();
    let fid = in_app_flow(&app, "idem").await;
    let (ext, _) = app.create_user("idem", json!({})).await;
    let key = format!("key-{}", random_hex());
    let body = json!({"recipients": [{"external_id": ext}], "data": {"n": 1, "m": [1, 2]}});

    // header
    let r1 = app
        .admin(POST, &run_path(&fid))
        .header("Idempotency-Key", &key)
        .json(&body)
        .go()
        .await;
    let run = r1.ok(202);
    assert!(r1.header("idempotent-replayed").is_none(), "{r1}");
    let r2 = app
        .admin(POST, &run_path(&fid))
        .header("Idempotency-Key", &key)
        .json(&body)
        .go()
        .await;
    assert_eq!(r2.status, 202, "{r2}");
    assert_eq!(r2.json, run, "the original body is replayed: {r2}");
    assert_eq!(
        r2.header("idempotent-replayed").as_deref(),
        Some("true"),
        "{r2}"
    );
    // key order does not matter (raw bodies with other key order, same values)
    let reordered =
        format!(r#"{{"data":{{"m":[1,2],"n":1}},"recipients":[{{"external_id":"{ext}"}}]}}"#);
    let r3 = app
        .admin(POST, &run_path(&fid))
        .header("Idempotency-Key", &key)
        .header("content-type", "application/json")
        .body(reordered)
        .go()
        .await;
    assert_eq!(r3.status, 202, "{r3}");
    assert_eq!(r3.json, run, "{r3}");
    assert_eq!(
        r3.header("idempotent-replayed").as_deref(),
        Some("true"),
        "{r3}"
    );
    // the body's idempotency_key is the same key and not part of the payload
    let mut with_field = body.clone();
    with_field["idempotency_key"] = json!(key);
    let r4 = app
        .admin(POST, &run_path(&fid))
        .json(&with_field)
        .go()
        .await;
    assert_eq!(r4.status, 202, "{r4}");
    assert_eq!(r4.json, run, "{r4}");
    assert_eq!(
        r4.header("idempotent-replayed").as_deref(),
        Some("true"),
        "{r4}"
    );

    // nothing was done twice
    wait_run_processed(&app, &s(&run["id"]), 30).await;
    let ns = notifications_of(&app, &ext).await;
    assert_eq!(ns.len(), 1, "one run, one notification: {ns:?}");
    let feed = wait_feed(&app, &ext, 1).await;
    assert_eq!(feed["items"].as_array().unwrap().len(), 1, "{feed}");

    // another payload with that key: 409 naming the key and flow_run
    let other = json!({"recipients": [{"external_id": ext}], "data": {"n": 2, "m": [1, 2]}});
    let r = app
        .admin(POST, &run_path(&fid))
        .header("Idempotency-Key", &key)
        .json(&other)
        .go()
        .await;
    let d = assert_error(&r, 409, "idempotency_key_reused");
    assert_eq!(d["idempotency_key"], json!(key), "{r}");
    assert_eq!(d["resource"], json!("flow_run"), "{r}");
    let r = app
        .admin(POST, &run_path(&fid))
        .json(&json!({"recipients": [{"external_id": ext}], "data": {"n": 2}, "idempotency_key": key}))
        .go()
        .await;
    let d = assert_error(&r, 409, "idempotency_key_reused");
    assert_eq!(d["idempotency_key"], json!(key), "{r}");

    // a body key alone works the same way
    let bkey = format!("body-{}", random_hex());
    let bb =
        json!({"recipients": [{"external_id": ext}], "data": {"n": 3}, "idempotency_key": bkey});
    let r = app.admin(POST, &run_path(&fid)).json(&bb).go().await;
    let brun = r.ok(202);
    assert!(r.header("idempotent-replayed").is_none(), "{r}");
    assert_ne!(brun["id"], run["id"], "a new key is a new run: {r}");
    let r = app.admin(POST, &run_path(&fid)).json(&bb).go().await;
    assert_eq!(r.status, 202, "{r}");
    assert_eq!(r.json, brun, "{r}");
    assert_eq!(
        r.header("idempotent-replayed").as_deref(),
        Some("true"),
        "{r}"
    );
    // and the header carrying the same key replays it too
    let mut bare = bb.clone();
    bare.as_object_mut().unwrap().remove("idempotency_key");
    let r = app
        .admin(POST, &run_path(&fid))
        .header("Idempotency-Key", &bkey)
        .json(&bare)
        .go()
        .await;
    assert_eq!(r.json, brun, "{r}");
    assert_eq!(
        r.header("idempotent-replayed").as_deref(),
        Some("true"),
        "{r}"
    );
    wait_run_processed(&app, &s(&brun["id"]), 30).await;
    assert_eq!(notifications_of(&app, &ext).await.len(), 2);

    // the same key on another endpoint (another flow) is another request
    let fid2 = in_app_flow(&app, "idem-two").await;
    let r = app
        .admin(POST, &run_path(&fid2))
        .header("Idempotency-Key", &key)
        .json(&body)
        .go()
        .await;
    let run2 = r.ok(202);
    assert!(r.header("idempotent-replayed").is_none(), "{r}");
    assert_ne!(run2["id"], run["id"], "{r}");
    assert_eq!(run2["flow_id"], json!(fid2), "{r}");

    // errors are not stored: a retry after an error runs
    let inapp = in_app_channel(&app).await;
    let draft = create_flow(
        &app,
        &handle("later"),
        json!([channel_step(&inapp, None, "x")]),
    )
    .await;
    let did = s(&draft["id"]);
    let ekey = format!("err-{}", random_hex());
    let r = app
        .admin(POST, &run_path(&did))
        .header("Idempotency-Key", &ekey)
        .json(&body)
        .go()
        .await;
    assert_conflict(&r, "flow_not_active");
    activate(&app, &did).await;
    let r = app
        .admin(POST, &run_path(&did))
        .header("Idempotency-Key", &ekey)
        .json(&body)
        .go()
        .await;
    let run3 = r.ok(202);
    assert!(
        r.header("idempotent-replayed").is_none(),
        "not a replay of the 409: {r}"
    );
    assert_eq!(run3["flow_id"], json!(did), "{r}");
}

#[tokio::test]
async fn key_validation_and_other_creating_posts() {
    let app = TestApp::spawn();
    let fid = in_app_flow(&app, "keys").await;
    let (ext, _) = app.create_user("keys", json!({})).await;
    let body = json!({"recipients": [{"external_id": ext}]});

    // empty and over-long keys, in the header and in the body
    for k in [String::new(), "k".repeat(256)] {
        let r = app
            .admin(POST, &run_path(&fid))
            .header("Idempotency-Key", &k)
            .json(&body)
            .go()
            .await;
        assert_validation(&r, &[("idempotency_key", "length")]);
        let mut b = body.clone();
        b["idempotency_key"] = json!(k);
        let r = app.admin(POST, &run_path(&fid)).json(&b).go().await;
        assert_validation(&r, &[("idempotency_key", "length")]);
    }
    // 255 characters are fine
    let r = app
        .admin(POST, &run_path(&fid))
        .header("Idempotency-Key", "k".repeat(255))
        .json(&body)
        .go()
        .await;
    r.ok(202);
    // a body key that is not a string
    let mut b = body.clone();
    b["idempotency_key"] = json!(5);
    let r = app.admin(POST, &run_path(&fid)).json(&b).go().await;
    assert_validation(&r, &[("idempotency_key", "format")]);
    // header and body disagree
    let mut b = body.clone();
    b["idempotency_key"] = json!("body-key");
    let r = app
        .admin(POST, &run_path(&fid))
        .header("Idempotency-Key", "header-key")
        .json(&b)
        .go()
        .await;
    assert_validation(&r, &[("idempotency_key", "format")]);
    // they may agree
    let r = app
        .admin(POST, &run_path(&fid))
        .header("Idempotency-Key", "body-key")
        .json(&b)
        .go()
        .await;
    r.ok(202);
    // only the two accepted runs made notifications
    let d = Deadline::new("two notifications", 30);
    loop {
        let n = list_all(
            &app,
            &format!("{A}/notifications"),
            &[("recipient", ext.as_str())],
        )
        .await;
        if n.len() == 2 {
            break;
        }
        assert!(n.len() < 2, "refused requests made notifications: {n:?}");
        d.tick(format!("{n:?}")).await;
    }

    // POST /channels
    let ckey = format!("chan-{}", random_hex());
    let cbody = json!({"type": "chat", "provider": "webhook", "name": "idem",
        "config": {"url": "http://127.0.0.1:9/hook"}});
    let r1 = app
        .admin(POST, &format!("{A}/channels"))
        .header("Idempotency-Key", &ckey)
        .json(&cbody)
        .go()
        .await;
    let c = r1.ok(201);
    assert!(r1.header("idempotent-replayed").is_none(), "{r1}");
    let r2 = app
        .admin(POST, &format!("{A}/channels"))
        .header("Idempotency-Key", &ckey)
        .json(&cbody)
        .go()
        .await;
    assert_eq!(r2.status, 201, "{r2}");
    assert_eq!(r2.json, c, "{r2}");
    assert_eq!(
        r2.header("idempotent-replayed").as_deref(),
        Some("true"),
        "{r2}"
    );
    let r = app.admin(GET, &format!("{A}/channels")).go().await;
    assert_eq!(
        r.page()["items"].as_array().unwrap().len(),
        2,
        "in_app + one webhook channel: {r}"
    );
    let r = app
        .admin(POST, &format!("{A}/channels"))
        .header("Idempotency-Key", &ckey)
        .json(&json!({"type": "chat", "provider": "webhook", "name": "other"}))
        .go()
        .await;
    let d = assert_error(&r, 409, "idempotency_key_reused");
    assert_eq!(d["idempotency_key"], json!(ckey), "{r}");
    assert!(d["resource"].as_str().is_some_and(|s| !s.is_empty()), "{r}");

    // POST /flows: the replay is a 201, not a duplicate-handle 422
    let fkey = format!("flow-{}", random_hex());
    let fbody = json!({"handle": handle("idem-flow"), "name": "Idem", "steps": []});
    let r1 = app
        .admin(POST, &format!("{A}/flows"))
        .header("Idempotency-Key", &fkey)
        .json(&fbody)
        .go()
        .await;
    let f = r1.ok(201);
    let r2 = app
        .admin(POST, &format!("{A}/flows"))
        .header("Idempotency-Key", &fkey)
        .json(&fbody)
        .go()
        .await;
    assert_eq!(r2.status, 201, "{r2}");
    assert_eq!(r2.json, f, "{r2}");
    assert_eq!(
        r2.header("idempotent-replayed").as_deref(),
        Some("true"),
        "{r2}"
    );
    // without the key the same body is a duplicate
    let r = app
        .admin(POST, &format!("{A}/flows"))
        .json(&fbody)
        .go()
        .await;
    assert_validation(&r, &[("handle", "unique")]);
    let mut other = fbody.clone();
    other["name"] = json!("Other name");
    let r = app
        .admin(POST, &format!("{A}/flows"))
        .header("Idempotency-Key", &fkey)
        .json(&other)
        .go()
        .await;
    let d = assert_error(&r, 409, "idempotency_key_reused");
    assert_eq!(d["idempotency_key"], json!(fkey), "{r}");
}

#[tokio::test]
async fn concurrent_identical_runs_make_one_run() {
    let app = TestApp::spawn();
    let fid = in_app_flow(&app, "race").await;
    let (ext, _) = app.create_user("race", json!({})).await;
    let key = format!("race-{}", random_hex());
    let body = json!({"recipients": [{"external_id": ext}], "data": {"n": 1}});
    let send = || {
        app.admin(POST, &run_path(&fid))
            .header("Idempotency-Key", &key)
            .json(&body)
            .go()
    };
    let (a, b) = tokio::join!(send(), send());
    let (c, d) = tokio::join!(send(), send());
    let all = [&a, &b, &c, &d];
    for r in all {
        assert_eq!(r.status, 202, "{r}");
    }
    assert!(
        all.iter().all(|r| r.json == a.json),
        "all four answer the same run: {a} / {b} / {c} / {d}"
    );
    let fresh = all
        .iter()
        .filter(|r| r.header("idempotent-replayed").is_none())
        .count();
    assert_eq!(fresh, 1, "exactly one original response, the rest replays");
    assert!(
        all.iter().all(|r| {
            r.header("idempotent-replayed").is_none()
                || r.header("idempotent-replayed").as_deref() == Some("true")
        }),
        "replays carry idempotent-replayed: true"
    );
    wait_run_processed(&app, &s(&a.json["id"]), 30).await;
    let ns = notifications_of(&app, &ext).await;
    assert_eq!(ns.len(), 1, "one run was made: {ns:?}");

    // a burst of 8 with a new key
    let key2 = format!("burst-{}", random_hex());
    let futs = (0..8).map(|_| {
        app.admin(POST, &run_path(&fid))
            .header("Idempotency-Key", &key2)
            .json(&body)
            .go()
    });
    let rs = futures_util::future::join_all(futs).await;
    let first = &rs[0].json;
    assert!(
        rs.iter().all(|r| r.status == 202 && &r.json == first),
        "{rs:?}"
    );
    assert_eq!(
        rs.iter()
            .filter(|r| r.header("idempotent-replayed").is_none())
            .count(),
        1,
        "{rs:?}"
    );
    wait_run_processed(&app, &s(&first["id"]), 30).await;
    assert_eq!(notifications_of(&app, &ext).await.len(), 2);
}

#[tokio::test]
async fn keys_belong_to_one_project() {
    let dir = tempfile::tempdir().unwrap();
    let second = create_project_keys("second", dir.path());
    let keys = Keys::random();
    let app = TestApp::spawn_on(dir.path(), &keys);
    let key = format!("shared-{}", random_hex());
    let body = json!({"type": "chat", "provider": "webhook", "name": "same",
        "config": {"url": "http://127.0.0.1:9/hook"}});
    let r1 = app
        .admin(POST, &format!("{A}/channels"))
        .header("Idempotency-Key", &key)
        .json(&body)
        .go()
        .await;
    let c1 = r1.ok(201);
    // the same key, path and payload in another project is a new request
    let r2 = app
        .admin_with(&second, POST, &format!("{A}/channels"))
        .header("Idempotency-Key", &key)
        .json(&body)
        .go()
        .await;
    let c2 = r2.ok(201);
    assert!(r2.header("idempotent-replayed").is_none(), "{r2}");
    assert_ne!(c2["id"], c1["id"], "{r2}");
    let r = app
        .admin_with(&second, GET, &format!("{A}/channels/{}", s(&c2["id"])))
        .go()
        .await;
    r.ok(200);
    let r = app
        .admin_with(&second, GET, &format!("{A}/channels/{}", s(&c1["id"])))
        .go()
        .await;
    assert_not_found(&r, "channel", &s(&c1["id"]));

    // runs by handle: same concrete path in both projects, same key
    let h = handle("shared");
    let mut run_ids = Vec::new();
    for k in [&keys, &second] {
        let r = app.admin_with(k, GET, &format!("{A}/channels")).go().await;
        let inapp = r.page()["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == json!("in_app"))
            .map(|c| s(&c["id"]))
            .expect("in_app channel");
        let r = app
            .admin_with(k, POST, &format!("{A}/flows"))
            .json(
                &json!({"handle": h, "name": "Shared", "steps": [channel_step(&inapp, None, "x")]}),
            )
            .go()
            .await;
        r.ok(201);
        let r = app
            .admin_with(k, POST, &format!("{A}/flows/{h}/activate"))
            .go()
            .await;
        r.ok(200);
        let r = app
            .admin_with(k, POST, &format!("{A}/flows/{h}/run"))
            .header("Idempotency-Key", &key)
            .json(&json!({"recipients": [{"external_id": "same-user"}]}))
            .go()
            .await;
        let run = r.ok(202);
        assert!(r.header("idempotent-replayed").is_none(), "{r}");
        run_ids.push(s(&run["id"]));
    }
    assert_ne!(run_ids[0], run_ids[1]);
    let r = app
        .admin_with(&second, GET, &format!("{A}/flow_runs/{}", run_ids[1]))
        .go()
        .await;
    r.ok(200);
    let r = app
        .admin_with(&second, GET, &format!("{A}/flow_runs/{}", run_ids[0]))
        .go()
        .await;
    assert_not_found(&r, "flow_run", &run_ids[0]);
}

#[tokio::test]
async fn topic_subscriptions_are_idempotent_creates() {
    let app = TestApp::spawn();
    let t = handle("idem-topic");
    let r = app
        .admin(PUT, &format!("{A}/topics/{t}"))
        .json(&json!({"name": "T"}))
        .go()
        .await;
    r.ok(201);
    let (a, _) = app.create_user("sub-a", json!({})).await;
    let (b, _) = app.create_user("sub-b", json!({})).await;

    // admin: the replay is the 201, not a 409 subscription_already_exists
    let key = format!("sub-{}", random_hex());
    let path = format!("{A}/topics/{t}/subscriptions");
    let r1 = app
        .admin(POST, &path)
        .header("Idempotency-Key", &key)
        .json(&json!({"external_id": a}))
        .go()
        .await;
    let sub = r1.ok(201);
    let r2 = app
        .admin(POST, &path)
        .header("Idempotency-Key", &key)
        .json(&json!({"external_id": a}))
        .go()
        .await;
    assert_eq!(r2.status, 201, "{r2}");
    assert_eq!(r2.json, sub, "{r2}");
    assert_eq!(
        r2.header("idempotent-replayed").as_deref(),
        Some("true"),
        "{r2}"
    );
    let r = app
        .admin(POST, &path)
        .json(&json!({"external_id": a}))
        .go()
        .await;
    assert_conflict(&r, "subscription_already_exists");

    // user API
    let ukey = format!("usub-{}", random_hex());
    let upath = format!("{U}/topics/{t}/subscriptions");
    let r1 = app
        .user(POST, &upath, &b)
        .header("Idempotency-Key", &ukey)
        .json(&json!({}))
        .go()
        .await;
    let usub = r1.ok(201);
    let r2 = app
        .user(POST, &upath, &b)
        .header("Idempotency-Key", &ukey)
        .json(&json!({}))
        .go()
        .await;
    assert_eq!(r2.status, 201, "{r2}");
    assert_eq!(r2.json, usub, "{r2}");
    assert_eq!(
        r2.header("idempotent-replayed").as_deref(),
        Some("true"),
        "{r2}"
    );

    let r = app.admin(GET, &format!("{A}/topics/{t}")).go().await;
    assert_eq!(r.ok(200)["subscribers_count"], json!(2), "{r}");
}
