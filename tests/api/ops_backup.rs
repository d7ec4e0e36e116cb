//! `herald backup` and `herald restore` (README "Operations"): a consistent
//! snapshot of a data directory while a server serves it (asked over loopback)
//! or when none does (the store opened directly); restore only into a new or
//! empty directory; data directories and backups of a newer format refused.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

fn herald(args: &[&str]) -> CmdOutput {
    let mut cmd = Command::new(herald_bin());
    for (var, _) in std::env::vars_os() {
        if var.to_string_lossy().starts_with("HERALD_") {
            cmd.env_remove(var);
        }
    }
    cmd.env("NO_COLOR", "1")
        .env("RUST_LOG", "warn")
        .args(args)
        .stdin(Stdio::null());
    run_with_timeout(cmd, Duration::from_secs(120))
}

fn backup(data_dir: &Path, to: &Path) -> CmdOutput {
    herald(&[
        "backup",
        "--data-dir",
        data_dir.to_str().unwrap(),
        "--to",
        to.to_str().unwrap(),
    ])
}

fn restore(from: &Path, data_dir: &Path) -> CmdOutput {
    herald(&[
        "restore",
        "--from",
        from.to_str().unwrap(),
        "--data-dir",
        data_dir.to_str().unwrap(),
    ])
}

#[track_caller]
fn assert_ok(out: &CmdOutput, what: &str) {
    assert_eq!(out.status.code(), Some(0), "{what}: {out:?}");
}

/// Every item of an admin list, walking all pages.
async fn all(app: &TestApp, path: &str) -> Vec<Value> {
    list_all(app, path, &[]).await
}

/// What the restored server must answer the same: users, flows, notifications
/// (with their deliveries), topics and subscriptions.
async fn lists(app: &TestApp, topic: &str) -> Vec<Vec<Value>> {
    vec![
        all(app, &format!("{A}/users")).await,
        all(app, &format!("{A}/flows")).await,
        all(app, &format!("{A}/notifications")).await,
        all(app, &format!("{A}/deliveries")).await,
        all(app, &format!("{A}/channels")).await,
        all(app, &format!("{A}/topics")).await,
        all(app, &format!("{A}/topics/{topic}/subscriptions")).await,
    ]
}

#[tokio::test]
async fn backup_while_serving_then_restore_answers_the_same_lists() {
    if sled_only("herald backup and restore are the embedded store's (PostgreSQL: pg_dump)") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let live_dir = tmp.path().join("live");
    let keys = Keys::random();
    let mut app = TestApp::spawn_on(&live_dir, &keys);
    let ops_file = live_dir.join("ops.json");
    assert!(ops_file.exists(), "serve writes {}", ops_file.display());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&ops_file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "ops.json is private to its owner");
    }

    // the snapshot endpoint needs the ops token (and a local peer)
    let r = app.request(GET, "/ops/v1/backup").go().await;
    assert_unauth(&r, "ops_token", "invalid_ops_token");
    let r = app
        .request(GET, "/ops/v1/backup")
        .header("x-herald-ops-token", "not-the-token")
        .go()
        .await;
    assert_unauth(&r, "ops_token", "invalid_ops_token");
    let r = app.request(POST, "/ops/v1/backup").go().await;
    assert_error(&r, 404, "not_found");

    // some data: users, a topic with subscribers, a flow run through in_app
    let mut exts = vec![];
    for i in 0..5 {
        let (ext, _) = app
            .create_user(
                "bk",
                json!({"first_name": format!("U{i}"), "email": format!("u{i}@example.com")}),
            )
            .await;
        exts.push(ext);
    }
    let topic = handle("bk");
    app.admin(PUT, &format!("{A}/topics/{topic}"))
        .json(&json!({"name": "Backups"}))
        .go()
        .await
        .ok(201);
    for ext in &exts[..3] {
        app.admin(POST, &format!("{A}/topics/{topic}/subscriptions"))
            .json(&json!({ "external_id": ext }))
            .go()
            .await
            .ok(201);
    }
    let in_app = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "bk",
        json!([channel_step(&in_app, None, "Hi {{ recipient.first_name }}")]),
    )
    .await;
    let run = run_flow(&app, &s(&flow["id"]), json!({"recipients": exts.clone()})).await;
    wait_run_processed(&app, &s(&run["id"]), 30).await;
    let before = lists(&app, &topic).await;
    assert_eq!(before[0].len(), 5);
    assert_eq!(before[2].len(), 5, "notifications");

    // the server keeps serving writes while the backup is taken
    let writer = {
        let client = app.client.clone();
        let url = app.url(&format!("{A}/users"));
        let (pk, sk) = (keys.public_key.clone(), keys.secret_key.clone());
        tokio::spawn(async move {
            for i in 0..40 {
                let r = client
                    .put(format!("{url}/during-{i}"))
                    .header("x-service-api-key", &pk)
                    .header("x-service-secret-key", &sk)
                    .json(&json!({"first_name": "During"}))
                    .send()
                    .await
                    .expect("request");
                assert!(r.status().is_success(), "{}", r.status());
            }
        })
    };
    let file = tmp.path().join("live.herald");
    let out = tokio::task::spawn_blocking({
        let (d, f) = (live_dir.clone(), file.clone());
        move || backup(&d, &f)
    })
    .await
    .unwrap();
    assert_ok(&out, "backup while serving");
    assert!(out.stdout.contains("running server"), "{out:?}");
    writer.await.unwrap();
    assert!(file.exists());
    assert!(
        !tmp.path().join("live.herald.partial").exists(),
        "no partial file left"
    );
    // nothing left in the live data dir by the snapshot
    for e in std::fs::read_dir(&live_dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        assert!(!name.contains("backup"), "left behind: {name}");
    }
    // the server still serves
    app.admin(GET, &format!("{A}/users")).go().await.ok(200);
    // the snapshot is consistent: whatever it caught of the concurrent writes,
    // every user in it is listed once with its by-id record (index and records agree)
    let now = lists(&app, &topic).await;
    app.stop();

    let restored_dir = tmp.path().join("restored");
    let out = restore(&file, &restored_dir);
    assert_ok(&out, "restore");
    assert!(restored_dir.join("FORMAT").exists());
    let restored = TestApp::spawn_on(&restored_dir, &Keys::random());
    // the original keys work on the restored data (the project came along)
    let mut restored = restored;
    restored.public_key = keys.public_key.clone();
    restored.secret_key = keys.secret_key.clone();
    let after = lists(&restored, &topic).await;
    let users = &after[0];
    // the snapshot lies between `before` and `now`
    assert!(
        users.len() >= before[0].len() && users.len() <= now[0].len(),
        "{} users",
        users.len()
    );
    for u in users {
        let ext = u["external_id"].as_str().unwrap();
        let r = restored
            .admin(GET, &format!("{A}/users/{}", enc(ext)))
            .go()
            .await;
        assert_eq!(r.ok(200), *u, "user {ext} by id and in the list agree");
    }
    for (i, name) in [
        (1, "flows"),
        (2, "notifications"),
        (3, "deliveries"),
        (4, "channels"),
        (5, "topics"),
        (6, "subscriptions"),
    ] {
        assert_eq!(after[i], before[i], "{name} after restore");
    }
    // the restored server works: feeds and a new run
    let feed = restored
        .user(GET, &format!("{U}/feed"), &exts[0])
        .go()
        .await
        .page();
    assert_eq!(feed["items"].as_array().unwrap().len(), 1, "{feed}");
    let run = run_flow(&restored, &s(&flow["id"]), json!({"topic": topic})).await;
    assert_eq!(run["recipients_count"], json!(3), "{run}");
    wait_run_processed(&restored, &s(&run["id"]), 30).await;
}

#[tokio::test]
async fn backup_of_a_stopped_data_dir_and_restore_refusals() {
    if sled_only("herald backup and restore are the embedded store's (PostgreSQL: pg_dump)") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("stopped");
    let keys = Keys::random();
    let mut app = TestApp::spawn_on(&dir, &keys);
    let (ext, user) = app
        .create_user("stopped", json!({"last_name": "Still"}))
        .await;
    let flow = create_flow(&app, &handle("stopped"), json!([])).await;
    app.stop();
    assert!(
        !dir.join("ops.json").exists(),
        "a clean stop removes ops.json"
    );

    let file = tmp.path().join("stopped.herald");
    let out = backup(&dir, &file);
    assert_ok(&out, "backup of a stopped data dir");
    assert!(out.stdout.contains("data directory"), "{out:?}");

    // a stale ops.json (a server that died) does not get in the way
    std::fs::write(
        dir.join("ops.json"),
        r#"{"address":"127.0.0.1:9","token":"stale","pid":1}"#,
    )
    .unwrap();
    let file2 = tmp.path().join("stale.herald");
    assert_ok(&backup(&dir, &file2), "backup with a stale ops.json");

    // restore refuses a non-empty directory, and leaves it alone
    let busy = tmp.path().join("busy");
    std::fs::create_dir_all(&busy).unwrap();
    std::fs::write(busy.join("keep.txt"), "mine").unwrap();
    let out = restore(&file, &busy);
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stderr.contains("not empty"), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(busy.join("keep.txt")).unwrap(),
        "mine"
    );
    assert_eq!(std::fs::read_dir(&busy).unwrap().count(), 1);
    // … and the live data dir itself
    let out = restore(&file, &dir);
    assert_ne!(out.status.code(), Some(0), "{out:?}");

    // restore into an empty directory works and serves the same data
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    assert_ok(&restore(&file, &empty), "restore into an empty dir");
    let mut restored = TestApp::spawn_on(&empty, &Keys::random());
    restored.public_key = keys.public_key.clone();
    restored.secret_key = keys.secret_key.clone();
    let r = restored
        .admin(GET, &format!("{A}/users/{}", enc(&ext)))
        .go()
        .await;
    assert_eq!(r.ok(200), user);
    let r = restored
        .admin(GET, &format!("{A}/flows/{}", s(&flow["id"])))
        .go()
        .await;
    assert_eq!(r.ok(200), flow);
    restored.stop();

    // a corrupted backup is refused, leaving nothing behind
    let mut bytes = std::fs::read(&file).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 0x5a;
    let bad = tmp.path().join("bad.herald");
    std::fs::write(&bad, &bytes).unwrap();
    let target = tmp.path().join("from-bad");
    let out = restore(&bad, &target);
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    assert!(!target.exists(), "nothing left behind: {out:?}");
    // not a backup at all
    let out = restore(&dir.join("FORMAT"), &target);
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stderr.contains("not a Herald backup"), "{out:?}");
}

/// A data directory a server created and stopped with; returns its format version.
fn stopped_data_dir(dir: &Path) -> u32 {
    let mut app = TestApp::spawn_on(dir, &Keys::random());
    app.stop();
    std::fs::read_to_string(dir.join("FORMAT"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn newer_data_format_is_refused_with_a_clear_message() {
    if sled_only("the data directory's format version") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("future");
    let current = stopped_data_dir(&dir);
    std::fs::write(dir.join("FORMAT"), format!("{}\n", current + 1)).unwrap();

    // serve refuses to start
    let out = herald(&[
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--data-dir",
        dir.to_str().unwrap(),
    ]);
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    assert!(
        out.stderr.contains("newer than this Herald understands"),
        "{out:?}"
    );
    assert!(out.stderr.contains(&format!("{}", current + 1)), "{out:?}");
    // so do backup and project create
    let out = backup(&dir, &tmp.path().join("x.herald"));
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    assert!(
        out.stderr.contains("newer than this Herald understands"),
        "{out:?}"
    );
    assert!(!tmp.path().join("x.herald").exists());
    let out = project_create("other", &dir);
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    assert!(
        out.stderr.contains("newer than this Herald understands"),
        "{out:?}"
    );

    // a backup written by a newer Herald is refused by restore
    std::fs::write(dir.join("FORMAT"), format!("{current}\n")).unwrap();
    let file = tmp.path().join("ok.herald");
    assert_ok(&backup(&dir, &file), "backup");
    let bytes = std::fs::read(&file).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    let from = format!("\"format_version\":{current}");
    assert!(text.contains(&from), "header names the format");
    let to = format!("\"format_version\":{}", current + 1);
    // same length only when the digit count does not change; rebuild the file instead
    let header_end = bytes.iter().skip(14).position(|b| *b == b'\n').unwrap() + 14;
    let header = String::from_utf8(bytes[14..header_end].to_vec()).unwrap();
    let mut newer = bytes[..14].to_vec();
    newer.extend_from_slice(header.replace(&from, &to).as_bytes());
    newer.extend_from_slice(&bytes[header_end..]);
    let newer_file = tmp.path().join("newer.herald");
    std::fs::write(&newer_file, newer).unwrap();
    let target = tmp.path().join("target");
    let out = restore(&newer_file, &target);
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    assert!(
        out.stderr.contains("newer than this Herald understands"),
        "{out:?}"
    );
    assert!(!target.exists());
}

#[tokio::test]
async fn older_data_format_is_refused_and_left_alone() {
    if sled_only("the data directory's format version") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("past");
    let current = stopped_data_dir(&dir);
    assert!(current >= 2, "format {current}");
    // what a format-1 directory looks like: FORMAT says 1, the store is in v1/
    std::fs::write(dir.join("FORMAT"), format!("{}\n", current - 1)).unwrap();
    let out = herald(&[
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--data-dir",
        dir.to_str().unwrap(),
    ]);
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    assert!(out.stderr.contains("older than this Herald's"), "{out:?}");
    assert!(out.stderr.contains("no upgrade"), "{out:?}");
    // nothing was created beside it or rewritten
    assert_eq!(
        std::fs::read_to_string(dir.join("FORMAT")).unwrap().trim(),
        (current - 1).to_string()
    );
    let out = backup(&dir, &tmp.path().join("x.herald"));
    assert_ne!(out.status.code(), Some(0), "{out:?}");
    assert!(!tmp.path().join("x.herald").exists());
}
