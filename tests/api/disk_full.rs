//! A full disk, survived (docs/SECURITY.md, "A full disk"). With the data dir
//! on a small tmpfs the test fills: writes answer 503 with `Retry-After` and
//! empty details, `/readyz` turns 503, every read (Admin and User API lists
//! and gets) keeps answering 200, writes succeed again in the same process
//! seconds after space is freed, every acknowledged write survives `kill -9`,
//! and SIGTERM exits within its grace period, also with the server's log on
//! the full disk or going to a pipe nobody reads. Mounting needs root (CI runs
//! as root); elsewhere the tmpfs tests say plainly that they skipped. Also the
//! startup free-space check.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

/// A tmpfs of `size` mounted on a fresh directory, unmounted on drop (also
/// when the test fails).
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        ok.then_some(Tmpfs { dir })
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// The tmpfs of a test, or `None` (said) where the test cannot run.
fn tmpfs_for(test: &str) -> Option<Tmpfs> {
    if sled_only("a full disk under the embedded store") {
        return None;
    }
    let fs = Tmpfs::mount("24m");
    if fs.is_none() {
        println!("disk_full::{test}: skipped (needs root to mount a tmpfs)");
    }
    fs
}

/// Fills the filesystem of `path` with one file until it refuses more.
fn fill(path: &Path) -> PathBuf {
    use std::io::Write;
    let p = path.join("filler");
    let mut f = std::fs::File::create(&p).expect("create filler");
    let chunk = vec![0xA5u8; 64 * 1024];
    while f.write_all(&chunk).is_ok() {}
    // the last partial pages
    while f.write_all(&chunk[..512]).is_ok() {}
    let _ = f.sync_all();
    p
}

fn user_body(i: usize) -> Value {
    // a few KiB each, so the disk's reserve is reached soon
    json!({"first_name": format!("U{i}"), "custom_fields": {"pad": "x".repeat(6000)}})
}

async fn put_user(app: &TestApp, ext: &str, i: usize) -> Resp {
    app.admin(PUT, &format!("{A}/users/{}", enc(ext)))
        .json(&user_body(i))
        .go()
        .await
}

/// Asserts a storage 503: the contract's error object (empty details) and
/// `Retry-After` in seconds.
#[track_caller]
fn assert_storage_503(r: &Resp) {
    let d = assert_error(r, 503, "service_unavailable");
    assert_eq!(d, json!({}), "a 503's details are empty: {r}");
    let ra = r
        .header("retry-after")
        .unwrap_or_else(|| panic!("a 503 for a full disk carries Retry-After: {r}"));
    let secs: u64 = ra.parse().expect("Retry-After in seconds");
    assert!((1..=60).contains(&secs), "Retry-After {secs}: {r}");
}

async fn all_user_ids(app: &TestApp) -> Vec<String> {
    let r = app
        .admin(GET, &format!("{A}/users"))
        .query(&[("limit", "1000")])
        .go()
        .await;
    r.page()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["external_id"].as_str().unwrap().to_string())
        .collect()
}

/// Writes users until the disk refuses one; every answer is 201 or a storage 503.
/// Returns the acknowledged ids and the first 503.
async fn write_until_full(app: &TestApp, tag: &str) -> (Vec<String>, Resp) {
    let mut acked = Vec::new();
    for i in 0..400 {
        let ext = format!("{tag}-{i:03}");
        let r = put_user(app, &ext, i).await;
        match r.status {
            201 => acked.push(ext),
            503 => return (acked, r),
            _ => panic!(
                "a write on a full disk answers 201 or 503, never {}: {r}",
                r.status
            ),
        }
    }
    panic!("400 writes of 6 KiB fit on a full 24 MiB filesystem");
}

/// What the reads look at: a processed run's notification, its delivery and
/// its recipient's feed entry.
struct Seen {
    user: String,
    run: String,
    notification: String,
    delivery: String,
    flow: String,
}

async fn seed(app: &TestApp) -> Seen {
    let inapp = in_app_channel(app).await;
    let flow = active_flow(
        app,
        "diskfull",
        json!([channel_step(&inapp, Some("S"), "B {{ data.i }}")]),
    )
    .await;
    let (user, _) = app.create_user("reader", json!({"first_name": "R"})).await;
    let run = run_flow(
        app,
        &s(&flow["id"]),
        json!({"recipients": [user], "data": {"i": 1}}),
    )
    .await;
    let run = s(&run["id"]);
    wait_run_processed(app, &run, 30).await;
    let ns = run_notifications(app, &run).await;
    assert_eq!(ns.len(), 1, "{ns:?}");
    let delivery = s(&ns[0]["deliveries"][0]["id"]);
    wait_delivery_final(app, &delivery, 30).await;
    Seen {
        user,
        run,
        notification: s(&ns[0]["id"]),
        delivery,
        flow: s(&flow["id"]),
    }
}

/// Every read of the Admin and User APIs the test knows answers 200 (lists
/// with their item), and `/healthz` too.
async fn reads_answer(app: &TestApp, seen: &Seen) {
    let list = |path: String, q: Vec<(&'static str, String)>| {
        let r = app.admin(GET, &path).query(&q);
        async move { r.go().await.page() }
    };
    let items = list(format!("{A}/users"), vec![]).await;
    assert!(!items["items"].as_array().unwrap().is_empty());
    app.admin(GET, &format!("{A}/users/{}", enc(&seen.user)))
        .go()
        .await
        .ok(200);
    let ns = list(
        format!("{A}/notifications"),
        vec![("flow_run_id", seen.run.clone())],
    )
    .await;
    assert_eq!(ns["items"][0]["id"], json!(seen.notification), "{ns}");
    list(format!("{A}/notifications"), vec![]).await;
    app.admin(GET, &format!("{A}/notifications/{}", seen.notification))
        .go()
        .await
        .ok(200);
    let ds = list(format!("{A}/deliveries"), vec![]).await;
    assert!(!ds["items"].as_array().unwrap().is_empty(), "{ds}");
    app.admin(GET, &format!("{A}/deliveries/{}", seen.delivery))
        .go()
        .await
        .ok(200);
    app.admin(GET, &format!("{A}/flow_runs/{}", seen.run))
        .go()
        .await
        .ok(200);
    app.admin(GET, &format!("{A}/flows/{}", seen.flow))
        .go()
        .await
        .ok(200);
    list(format!("{A}/flows"), vec![]).await;
    list(format!("{A}/channels"), vec![]).await;
    let f = list(format!("{A}/users/{}/feed", enc(&seen.user)), vec![]).await;
    assert_eq!(f["items"].as_array().unwrap().len(), 1, "{f}");
    // the User API: the feed, an entry, the profile, preferences
    let r = app.user(GET, &format!("{U}/feed"), &seen.user).go().await;
    let feed = r.page();
    let entry = s(&feed["items"][0]["id"]);
    app.user(GET, &format!("{U}/feed/{entry}"), &seen.user)
        .go()
        .await
        .ok(200);
    app.user(GET, &format!("{U}/me"), &seen.user)
        .go()
        .await
        .ok(200);
    app.user(GET, &format!("{U}/preferences"), &seen.user)
        .go()
        .await
        .ok(200);
    app.request(GET, "/healthz").go().await.ok(200);
}

/// Polls `/readyz` until it answers `status`, for at most `secs`.
async fn wait_ready_status(app: &TestApp, status: u16, secs: u64) -> Resp {
    let d = Deadline::new(format!("/readyz {status}"), secs);
    loop {
        let r = app.request(GET, "/readyz").go().await;
        if r.status == status {
            return r;
        }
        d.tick(&r).await;
    }
}

#[tokio::test]
async fn a_full_disk_refuses_writes_keeps_reads_and_recovers_in_the_process() {
    let Some(fs) = tmpfs_for("a_full_disk_refuses_writes") else {
        return;
    };
    let dir = fs.path().join("data");
    let keys = Keys::random();
    let args = ["--min-free-space", "4MiB", "--shutdown-grace", "10"];
    let start = |dir: &Path| {
        TestApp::start(ServeOptions {
            data_dir: dir,
            bootstrap: Some(&keys),
            args: &args,
            env: &[],
            default_flags: true,
        })
        .unwrap_or_else(|e| panic!("{e}"))
    };
    let mut app = start(&dir);
    let seen = seed(&app).await;
    let mut acked: Vec<String> = vec![seen.user.clone()];
    for i in 0..3 {
        let ext = format!("before-{i}");
        put_user(&app, &ext, i).await.ok(201);
        acked.push(ext);
    }

    // ---- the disk fills up: /readyz 503, writes 503, every read 200
    let filler = fill(fs.path());
    let t = Instant::now();
    let r = wait_ready_status(&app, 503, 5).await;
    assert_storage_503(&r);
    println!(
        "disk_full: /readyz 503 {:?} after the disk filled",
        t.elapsed()
    );
    let (more, first) = write_until_full(&app, "full").await;
    acked.extend(more);
    assert_storage_503(&first);
    let r = app
        .admin(POST, &format!("{A}/flows/{}/run", seen.flow))
        .json(&json!({"recipients": [seen.user], "data": {"i": 2}}))
        .go()
        .await;
    assert_storage_503(&r);
    // reads keep working, while the disk stays full (several seconds: past
    // the store's own timers)
    let full_since = Instant::now();
    while full_since.elapsed() < Duration::from_secs(6) {
        reads_answer(&app, &seen).await;
        assert_storage_503(&put_user(&app, "full-again", 0).await);
        tokio::time::sleep(Duration::from_millis(500)).await;
    }

    // ---- space returns: writes succeed again, in the same process
    std::fs::remove_file(&filler).unwrap();
    let freed = Instant::now();
    let mut i = 0;
    loop {
        let ext = format!("after-{i:03}");
        let r = put_user(&app, &ext, i).await;
        if r.status == 201 {
            acked.push(ext);
            break;
        }
        assert_storage_503(&r);
        assert!(
            freed.elapsed() < Duration::from_secs(10),
            "writes still refused 10 s after space was freed: {r}\n{}",
            app.output.tail(20)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        i += 1;
    }
    let recovered_in = freed.elapsed();
    println!("disk_full: writes accepted again {recovered_in:?} after the space was freed");
    assert!(
        !app.output.text().contains("exiting with status 70"),
        "recovered in the process, not by a restart: {}",
        app.output.tail(20)
    );
    wait_ready_status(&app, 200, 5).await;
    reads_answer(&app, &seen).await;
    let run = run_flow(
        &app,
        &seen.flow,
        json!({"recipients": [seen.user], "data": {"i": 3}}),
    )
    .await;
    wait_run_processed(&app, &s(&run["id"]), 30).await;
    for i in 0..3 {
        let ext = format!("later-{i}");
        put_user(&app, &ext, i).await.ok(201);
        acked.push(ext);
    }

    // ---- kill -9 and restart: every acknowledged write is there
    app.kill9();
    let mut app = start(&dir);
    let ids = all_user_ids(&app).await;
    for ext in &acked {
        assert!(
            ids.contains(ext),
            "acknowledged user {ext} lost; have {ids:?}"
        );
    }

    // ---- full again, then SIGTERM: exits within the grace period
    let filler = fill(fs.path());
    let (more, first) = write_until_full(&app, "full2").await;
    acked.extend(more);
    assert_storage_503(&first);
    let (status, took) = app.stop_timed();
    println!("disk_full: SIGTERM on a full disk exited {status} in {took:?}");
    assert!(
        took < Duration::from_secs(10),
        "SIGTERM took {took:?} (grace 10 s)\n{}",
        app.output.tail(10)
    );
    std::fs::remove_file(&filler).unwrap();
    let mut app = start(&dir);
    let ids = all_user_ids(&app).await;
    for ext in &acked {
        assert!(
            ids.contains(ext),
            "acknowledged user {ext} lost after SIGTERM; have {ids:?}"
        );
    }
    let (status, took) = app.stop_timed();
    assert!(status.success(), "a healthy SIGTERM exits 0: {status}");
    assert!(took < Duration::from_secs(10), "{took:?}");
}

// ================================================================ the log on the full disk

/// A `herald serve` whose stderr (its log) goes where the test says, killed
/// on drop; the harness's `TestApp` always reads stderr itself.
struct Server {
    child: Child,
    base: String,
    keys: Keys,
    client: reqwest::Client,
}

impl Server {
    fn start(data_dir: &Path, stderr: Stdio, grace: &str) -> Server {
        let keys = Keys::random();
        let mut cmd = Command::new(herald_bin());
        for (var, _) in std::env::vars_os() {
            if var.to_string_lossy().starts_with("HERALD_") {
                cmd.env_remove(var);
            }
        }
        // every request logs a line at info: a full log disk is met at once
        cmd.env("NO_COLOR", "1")
            .env("RUST_LOG", "info")
            .env("HERALD_BOOTSTRAP_PUBLIC_KEY", &keys.public_key)
            .env("HERALD_BOOTSTRAP_SECRET_KEY", &keys.secret_key)
            .arg("serve")
            .args(["--bind", "127.0.0.1:0", "--data-dir"])
            .arg(data_dir)
            .args(["--min-free-space", "4MiB", "--shutdown-grace", grace])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr);
        let mut child = cmd.spawn().expect("start herald");
        let (tx, rx) = std::sync::mpsc::channel();
        let out = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
                if let Some(a) = line.split("listening on ").nth(1) {
                    let _ = tx.send(a.trim().to_string());
                }
            }
        });
        let base = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("herald prints `listening on`");
        Server {
            child,
            base,
            keys,
            client: http_client(),
        }
    }

    fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.client
            .get(format!("{}{path}", self.base))
            .header("x-service-api-key", &self.keys.public_key)
            .header("x-service-secret-key", &self.keys.secret_key)
    }

    fn put_user(&self, ext: &str) -> reqwest::RequestBuilder {
        self.client
            .put(format!("{}{A}/users/{ext}", self.base))
            .header("x-service-api-key", &self.keys.public_key)
            .header("x-service-secret-key", &self.keys.secret_key)
            .json(&user_body(0))
    }

    /// SIGTERM; the exit status and how long it took (panics past 30 s).
    fn stop(&mut self) -> (std::process::ExitStatus, Duration) {
        let t = Instant::now();
        let ok = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status()
            .expect("kill");
        assert!(ok.success());
        loop {
            if let Some(st) = self.child.try_wait().expect("wait") {
                return (st, t.elapsed());
            }
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "herald did not exit within 30 s of SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Requests while the log cannot be written: every one answered, none an
/// empty reply (a request that logs must not fail because its line cannot
/// be written); then SIGTERM ends the process within its grace.
async fn serves_and_stops_with_its_log_stuck(s: &mut Server, writes_refused: bool) {
    let t = Instant::now();
    for i in 0..300 {
        s.get("/healthz").go().await.ok(200);
        if i % 10 == 0 {
            s.get(&format!("{A}/users")).go().await.page();
            let r = s.put_user(&format!("w-{i}")).go().await;
            if writes_refused {
                assert_storage_503(&r);
            } else {
                r.ok(201);
            }
        }
    }
    println!(
        "disk_full: 330 requests answered in {:?} with the log stuck",
        t.elapsed()
    );
    let (status, took) = s.stop();
    println!("disk_full: SIGTERM with the log stuck exited {status} in {took:?}");
    assert!(
        took < Duration::from_secs(5),
        "SIGTERM took {took:?} (grace 5 s)"
    );
}

#[tokio::test]
async fn with_its_log_on_the_full_disk_the_server_answers_and_stops_within_its_grace() {
    let Some(fs) = tmpfs_for("with_its_log_on_the_full_disk") else {
        return;
    };
    let log = std::fs::File::create(fs.path().join("herald.log")).unwrap();
    let mut s = Server::start(&fs.path().join("data"), Stdio::from(log), "5");
    s.put_user("before").go().await.ok(201);
    let filler = fill(fs.path());
    // the store sees the disk full within a tick of its doctor
    tokio::time::sleep(Duration::from_millis(600)).await;
    serves_and_stops_with_its_log_stuck(&mut s, true).await;
    drop(s);
    std::fs::remove_file(filler).unwrap();
}

#[tokio::test]
async fn with_its_log_to_a_pipe_nobody_reads_the_server_answers_and_stops_within_its_grace() {
    if sled_only("one process on the embedded store") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // stderr is a pipe whose reader never reads: once its 64 KiB are full,
    // a write to it blocks (a stuck log collector)
    let mut s = Server::start(tmp.path(), Stdio::piped(), "5");
    let _unread = s.child.stderr.take();
    serves_and_stops_with_its_log_stuck(&mut s, false).await;
}

#[test]
fn startup_refuses_less_free_space_than_min_free_space() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut cmd = Command::new(herald_bin());
        cmd.arg("serve")
            .args(["--bind", "127.0.0.1:0", "--data-dir"])
            .arg(tmp.path())
            .args(args)
            .env_remove("HERALD_MIN_FREE_SPACE")
            .env("NO_COLOR", "1")
            .env("RUST_LOG", "warn");
        for (k, v) in env {
            cmd.env(k, v);
        }
        run_with_timeout(cmd, Duration::from_secs(30))
    };
    let out = run(&["--min-free-space", "1EiB"], &[]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        out.stderr.contains("not enough free space")
            && out.stderr.contains("1152921504606846976 required"),
        "a clear message: {out:?}"
    );
    assert!(!out.stdout.contains("listening on"), "{out:?}");
    let out = run(&[], &[("HERALD_MIN_FREE_SPACE", "1048576TiB")]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "from the environment too: {out:?}"
    );
    assert!(out.stderr.contains("HERALD_MIN_FREE_SPACE"), "{out:?}");
    let out = run(&["--min-free-space", "12 parsecs"], &[]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a bad size is a usage error: {out:?}"
    );
    assert!(out.stderr.contains("unknown unit"), "{out:?}");
}
