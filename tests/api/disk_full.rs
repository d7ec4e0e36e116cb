//! A full disk. Writes answer 503 with `Retry-After`,
//! `/readyz` turns 503, reads keep working, writes succeed again by themselves once
//! space is freed, SIGTERM exits within its grace period, and every acknowledged
//! write survives `kill -9`. Needs root to mount a small tmpfs (CI runs as root);
//! elsewhere it says plainly that it skipped. Also the startup free-space check.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::helpers::*;

/// A tmpfs of `size` mounted on a fresh directory, unmounted on drop.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .stderr(std::process::Stdio::null())
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
    // a few KiB each, so sled's log crosses into pages not yet allocated soon
    json!({"first_name": format!("U{i}"), "custom_fields": {"pad": "x".repeat(6000)}})
}

async fn put_user(app: &TestApp, ext: &str, i: usize) -> Resp {
    app.admin(PUT, &format!("{A}/users/{}", enc(ext)))
        .json(&user_body(i))
        .go()
        .await
}

/// Asserts a storage 503: the error object, `Retry-After` and `details.retry_after`.
#[track_caller]
fn assert_storage_503(r: &Resp) {
    let d = assert_error(r, 503, "service_unavailable");
    let ra = r
        .header("retry-after")
        .unwrap_or_else(|| panic!("a 503 for a full disk carries Retry-After: {r}"));
    let secs: u64 = ra.parse().expect("Retry-After in seconds");
    assert!((1..=60).contains(&secs), "Retry-After {secs}: {r}");
    assert_eq!(d["retry_after"], json!(secs), "details.retry_after: {r}");
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

#[tokio::test]
async fn a_full_disk_answers_503_and_recovers_by_itself_losing_nothing() {
    if sled_only("a full disk under the embedded store") {
        return;
    }
    let Some(fs) = Tmpfs::mount("24m") else {
        println!("disk_full: skipped (needs root to mount a tmpfs)");
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
    let mut acked: Vec<String> = Vec::new();
    for i in 0..3 {
        let ext = format!("before-{i}");
        put_user(&app, &ext, i).await.ok(201);
        acked.push(ext);
    }

    // ---- the disk fills up: 503 with Retry-After, /readyz 503, reads work
    let filler = fill(fs.path());
    let t = Instant::now();
    let (more, first) = write_until_full(&app, "full").await;
    acked.extend(more);
    assert_storage_503(&first);
    let r = put_user(&app, "full-again", 0).await;
    assert_storage_503(&r);
    let r = app.request(GET, "/readyz").go().await;
    assert_storage_503(&r);
    let r = app
        .admin(GET, &format!("{A}/users/{}", enc(&acked[0])))
        .go()
        .await;
    assert_eq!(
        r.ok(200)["external_id"],
        json!(acked[0]),
        "reads keep working"
    );
    let r = app.request(GET, "/healthz").go().await;
    r.ok(200);
    println!("disk_full: first 503 after {:?}", t.elapsed());

    // ---- space returns: writes succeed again by themselves
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
            freed.elapsed() < Duration::from_secs(15),
            "writes still refused 15 s after space was freed: {r}\n{}",
            app.output.tail(20)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
        i += 1;
    }
    let recovered_in = freed.elapsed();
    println!("disk_full: writes accepted again {recovered_in:?} after the space was freed");
    let r = app.request(GET, "/readyz").go().await;
    r.ok(200);
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

    // ---- full again, then SIGTERM: exits within the grace period, never hangs
    let filler = fill(fs.path());
    let (more, first) = write_until_full(&app, "full2").await;
    acked.extend(more);
    assert_storage_503(&first);
    let (status, took) = app.stop_timed();
    println!("disk_full: SIGTERM on a full disk exited {status} in {took:?}");
    assert!(
        took < Duration::from_secs(12),
        "SIGTERM took {took:?} (grace 10 s)"
    );
    assert!(
        !status.success(),
        "the final flush on a full disk cannot succeed: exit non-zero ({status}); output:\n{}",
        app.output.tail(10)
    );
    assert!(
        app.output.text().contains("final flush"),
        "a log line says why: {}",
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
