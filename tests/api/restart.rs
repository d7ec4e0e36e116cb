//! SIGTERM (README, Operations) flushes and exits 0; data survive a restart, and
//! acknowledged writes survive a SIGKILL.

use std::time::Duration;

use serde_json::{json, Value};

use crate::engine_helpers::Deadline;
use crate::helpers::*;

fn user_path(ext: &str) -> String {
    format!("{A}/users/{}", enc(ext))
}

async fn all_users(app: &TestApp) -> Value {
    let r = app
        .admin(GET, &format!("{A}/users"))
        .query(&[("limit", "1000")])
        .go()
        .await;
    r.page()["items"].clone()
}

#[tokio::test]
async fn sigterm_exits_0_and_a_restart_keeps_everything() {
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let mut app = TestApp::spawn_on(dir.path(), &keys);

    let mut exts = Vec::new();
    for i in 0..30 {
        let ext = format!("keep-{i:02}-{}", &random_hex()[..6]);
        app.create_user_as(
            &ext,
            json!({
                "first_name": format!("K{i}"),
                "email": format!("k{i}@example.com"),
                "timezone": "Europe/Berlin",
                "custom_fields": {"i": i, "tags": ["x"]}
            }),
        )
        .await;
        exts.push(ext);
    }
    for ext in &exts[..5] {
        let r = app
            .admin(PUT, &format!("{}/preferences", user_path(ext)))
            .json(&json!({"channel_types": {"email": false, "chat": false}}))
            .go()
            .await;
        r.ok(200);
    }
    let r = app
        .user(PUT, &format!("{U}/preferences"), &exts[5])
        .json(&json!({"channel_types": {"sms": false}}))
        .go()
        .await;
    r.ok(200);
    let r = app
        .admin(PUT, &user_path(&exts[6]))
        .json(&json!({"last_name": "Updated", "email": null}))
        .go()
        .await;
    r.ok(200);
    let r = app.admin(DELETE, &user_path(&exts[7])).go().await;
    assert_eq!(r.status, 204, "{r}");
    let r = app.put_project(&json!({"name": "Persisted"})).await;
    r.ok(200);
    let r = app
        .admin(POST, &format!("{A}/project/signing_key"))
        .go()
        .await;
    let private = r.ok(201)["private_key"].as_str().unwrap().to_string();
    app.set_security_mode(true).await;

    let users_before = all_users(&app).await;
    assert_eq!(users_before.as_array().unwrap().len(), 29);
    let project_before = app.get_project().await.ok(200);

    let (status, took) = app.stop_timed();
    assert_eq!(
        status.code(),
        Some(0),
        "SIGTERM must exit 0 (status {status:?}); output:\n{}",
        app.output.tail(20)
    );
    assert!(took < Duration::from_secs(10), "SIGTERM exit took {took:?}");

    let mut app = TestApp::spawn_on(dir.path(), &keys);
    assert_eq!(
        all_users(&app).await,
        users_before,
        "the same users, in the same order"
    );
    for ext in &exts[..5] {
        let r = app
            .admin(GET, &format!("{}/preferences", user_path(ext)))
            .go()
            .await;
        assert_eq!(
            r.ok(200)["channel_types"],
            channel_types(&["email", "chat"]),
            "{r}"
        );
    }
    let r = app
        .admin(GET, &format!("{}/preferences", user_path(&exts[5])))
        .go()
        .await;
    assert_eq!(r.ok(200)["channel_types"], channel_types(&["sms"]), "{r}");
    let r = app
        .admin(GET, &format!("{}/preferences", user_path(&exts[8])))
        .go()
        .await;
    assert_eq!(r.ok(200)["channel_types"], all_true(), "{r}");
    let r = app.admin(GET, &user_path(&exts[6])).go().await;
    let u = r.ok(200);
    assert_eq!(u["last_name"], json!("Updated"), "{r}");
    assert!(u["email"].is_null(), "{r}");
    assert_not_found(
        &app.admin(GET, &user_path(&exts[7])).go().await,
        "user",
        &exts[7],
    );

    let r = app.get_project().await;
    let p = r.ok(200);
    for k in [
        "id",
        "name",
        "security_mode",
        "signing_key_configured",
        "created_at",
    ] {
        assert_eq!(p[k], project_before[k], "project.{k} after restart: {r}");
    }
    assert_eq!(p["name"], json!("Persisted"));
    // the stored signing key and security mode still apply
    let token = sign_with(
        &private,
        jsonwebtoken::Algorithm::RS256,
        &json!({"sub": exts[0], "exp": now_secs() + 300}),
    );
    let r = app.user_jwt(GET, &format!("{U}/me"), &token).go().await;
    assert_eq!(r.ok(200)["external_id"], json!(exts[0]), "{r}");
    assert_unauth(
        &app.user(GET, &format!("{U}/me"), &exts[0]).go().await,
        "user_key_jwt",
        "missing_user_key",
    );

    // new writes after the restart: ids keep growing, newest first still holds
    let (_, fresh) = app.create_user("after", json!({})).await;
    let users = all_users(&app).await;
    assert_eq!(users[0]["id"], fresh["id"], "the newest user comes first");
    assert!(fresh["id"].as_str().unwrap() > users_before[0]["id"].as_str().unwrap());

    // and a second clean stop
    let status = app.stop();
    assert_eq!(status.code(), Some(0), "second SIGTERM: {status:?}");
}

#[tokio::test]
async fn acknowledged_writes_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let mut app = TestApp::spawn_on(dir.path(), &keys);

    // a sequential run of writes, each acknowledged
    let mut created: Vec<(String, Value)> = Vec::new();
    for i in 0..10 {
        let (ext, u) = app
            .create_user(
                "k9",
                json!({"first_name": format!("S{i}"), "locale": "de-DE"}),
            )
            .await;
        created.push((ext, u));
    }
    // concurrent creates, all acknowledged before the kill
    let mut set = tokio::task::JoinSet::new();
    for i in 0..20 {
        let rb = app
            .admin(
                PUT,
                &user_path(&format!("conc-{i:02}-{}", &random_hex()[..6])),
            )
            .json(&json!({"first_name": format!("C{i}")}));
        set.spawn(async move { rb.go().await });
    }
    while let Some(res) = set.join_next().await {
        let r = res.unwrap();
        let u = r.ok(201);
        created.push((u["external_id"].as_str().unwrap().to_string(), u));
    }
    let (del_ext, _) = app.create_user("k9-del", json!({})).await;
    let r = app.admin(DELETE, &user_path(&del_ext)).go().await;
    assert_eq!(r.status, 204, "{r}");
    let (pref_ext, _) = created[0].clone();
    let r = app
        .admin(PUT, &format!("{}/preferences", user_path(&pref_ext)))
        .json(&json!({"channel_types": {"in_app": false}}))
        .go()
        .await;
    r.ok(200);
    let r = app
        .user(PUT, &format!("{U}/me"), &created[1].0)
        .json(&json!({"last_name": "ViaMe"}))
        .go()
        .await;
    r.ok(200);
    // the last acknowledged write, then SIGKILL at once
    let (last_ext, last) = app
        .create_user(
            "k9-last",
            json!({"first_name": "Last", "email": "last@example.com"}),
        )
        .await;
    app.kill9();

    let app = TestApp::spawn_on(dir.path(), &keys);
    for (ext, u) in &created {
        let r = app.admin(GET, &user_path(ext)).go().await;
        let g = r.ok(200);
        assert_eq!(g["id"], u["id"], "{r}");
        assert_eq!(g["first_name"], u["first_name"], "{r}");
    }
    let r = app.admin(GET, &user_path(&last_ext)).go().await;
    let g = r.ok(200);
    assert_eq!(
        g["id"], last["id"],
        "the user acknowledged right before SIGKILL: {r}"
    );
    assert_eq!(g["email"], json!("last@example.com"), "{r}");
    assert_not_found(
        &app.admin(GET, &user_path(&del_ext)).go().await,
        "user",
        &del_ext,
    );
    let r = app
        .admin(GET, &format!("{}/preferences", user_path(&pref_ext)))
        .go()
        .await;
    assert_eq!(
        r.ok(200)["channel_types"],
        channel_types(&["in_app"]),
        "{r}"
    );
    let r = app.admin(GET, &user_path(&created[1].0)).go().await;
    assert_eq!(r.ok(200)["last_name"], json!("ViaMe"), "{r}");
    assert_eq!(
        all_users(&app).await.as_array().unwrap().len(),
        created.len() + 1,
        "every acknowledged user, nothing more"
    );
}

/// A store that takes long to open (here: a test delay before opening; in
/// production a large data dir): the port is served after a second anyway,
/// `/healthz` answers 200 and everything else, `/readyz` included, 503
/// `service_unavailable` at once, never hanging; once the store is open the
/// same port serves the API.
#[tokio::test]
async fn a_slow_store_open_answers_503_until_ready() {
    if single_node_only("it watches one process open its store") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let app = TestApp::start(ServeOptions {
        data_dir: dir.path(),
        bootstrap: Some(&keys),
        args: &[],
        env: &[(OPEN_DELAY_ENV, "8000")],
        default_flags: true,
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let r = app.request(GET, "/healthz").go().await;
    assert_eq!(r.ok(200)["status"], json!("ok"), "{r}");
    let r = app.request(GET, "/readyz").go().await;
    assert_error(&r, 503, "service_unavailable");
    assert!(r.header("retry-after").is_some(), "{r}");
    let r = app.admin(GET, &format!("{A}/users")).go().await;
    assert_error(&r, 503, "service_unavailable");
    let r = app
        .admin(PUT, &user_path("early"))
        .json(&json!({}))
        .go()
        .await;
    assert_error(&r, 503, "service_unavailable");
    let d = Deadline::new("/readyz to answer 200", 30);
    loop {
        let r = app.request(GET, "/readyz").go().await;
        if r.status == 200 {
            break;
        }
        assert_error(&r, 503, "service_unavailable");
        d.tick(&r).await;
    }
    app.create_user_as("after", json!({})).await;
    let users = all_users(&app).await;
    assert_eq!(users.as_array().map(Vec::len), Some(1), "{users}");
}

/// A second `herald serve` on a data directory a running server holds
/// stops before it binds its port: exit status 1 within moments, an error
/// naming the directory, and never a `listening on` line (which once came
/// first, a second before the exit, while the store's own lock was awaited).
/// The first server goes on serving.
#[tokio::test]
async fn a_second_server_on_a_data_dir_in_use_exits_without_listening() {
    if sled_only("the data directory holds a server's state only with the embedded store") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let app = TestApp::spawn_on(dir.path(), &keys);
    let mut cmd = std::process::Command::new(herald_bin());
    for (var, _) in std::env::vars_os() {
        if var.to_string_lossy().starts_with("HERALD_") {
            cmd.env_remove(var);
        }
    }
    cmd.env("NO_COLOR", "1")
        .env("RUST_LOG", "warn")
        .arg("serve")
        .arg("--bind")
        .arg("127.0.0.1:0")
        .arg("--data-dir")
        .arg(dir.path())
        .stdin(std::process::Stdio::null());
    let started = std::time::Instant::now();
    let out = run_with_timeout(cmd, Duration::from_secs(30));
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(!out.stdout.contains("listening on"), "{out:?}");
    assert!(
        out.stderr.contains(&format!(
            "data directory {} is in use",
            dir.path().display()
        )),
        "{out:?}"
    );
    // No wait for a lock that will not come (loose: a loaded machine starts
    // a debug build slowly).
    assert!(took < Duration::from_secs(5), "took {took:?}: {out:?}");
    app.create_user_as("still-serving", json!({})).await;
}
