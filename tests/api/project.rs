//! Operator contract: README and docs/API.md §13 (printed keys, bootstrap
//! variables, `herald project create`, the listening line, signals) and §2
//! (secret keys stored only as a hash, never logged).

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use crate::helpers::*;

fn key_lines(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l.contains("public_key:") || l.contains("secret_key:"))
        .cloned()
        .collect()
}

/// True when any file under `dir` contains `needle`.
fn dir_contains(dir: &Path, needle: &[u8]) -> Option<String> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(bytes) = std::fs::read(&p) {
                if bytes.windows(needle.len()).any(|w| w == needle) {
                    return Some(p.display().to_string());
                }
            }
        }
    }
    None
}

async fn project_name(app: &TestApp, keys: &Keys) -> String {
    let r = app
        .admin_with(keys, GET, &format!("{A}/project"))
        .go()
        .await;
    r.ok(200)["name"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn fresh_start_prints_the_default_keys_once() {
    let dir = tempfile::tempdir().unwrap();
    let opts = || ServeOptions {
        data_dir: dir.path(),
        bootstrap: None,
        args: &[],
        env: &[],
        default_flags: true,
    };
    let mut app = TestApp::start(opts()).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        app.public_key.starts_with("pk_") && app.secret_key.starts_with("sk_"),
        "a fresh start prints `public_key: pk_…` and `secret_key: sk_…` on stdout; output:\n{}",
        app.output.text()
    );
    let keys = app.keys();
    assert_eq!(
        key_lines(&app.output.stdout_lines()).len(),
        2,
        "the keys are printed once each; output:\n{}",
        app.output.text()
    );
    // the printed keys work
    assert_eq!(project_name(&app, &keys).await, "default");
    let (ext, _) = app.create_user("fresh", json!({})).await;
    let status = app.stop();
    assert_eq!(status.code(), Some(0), "{status:?}");

    // a second start on the same data dir prints no keys; the old ones still work
    let mut app = TestApp::start(opts()).unwrap_or_else(|e| panic!("{e}"));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let lines = app.output.lines();
    assert!(
        lines
            .iter()
            .all(|(_, l)| !l.contains(&keys.secret_key) && !l.contains("secret_key: sk_")),
        "keys must not be printed again; output:\n{}",
        app.output.text()
    );
    assert!(
        key_lines(&app.output.stdout_lines()).is_empty(),
        "no key lines on a second start; output:\n{}",
        app.output.text()
    );
    assert_eq!(project_name(&app, &keys).await, "default");
    let r = app
        .admin_with(&keys, GET, &format!("{A}/users/{ext}"))
        .go()
        .await;
    assert_eq!(r.ok(200)["external_id"], json!(ext), "{r}");
    assert_eq!(app.stop().code(), Some(0));

    // secret keys are stored only as a hash
    assert_eq!(
        dir_contains(dir.path(), keys.secret_key.as_bytes()),
        None,
        "the secret key must not be stored in clear"
    );
}

#[tokio::test]
async fn bootstrap_keys_are_used_never_logged_and_ignored_later() {
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let mut app = TestApp::start(ServeOptions {
        data_dir: dir.path(),
        bootstrap: Some(&keys),
        args: &[],
        env: &[("RUST_LOG", "debug")],
        default_flags: true,
    })
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(project_name(&app, &keys).await, "default");
    // some traffic that a request log would record, with right and wrong keys
    let wrong_secret = format!("sk_test_{}", random_hex());
    let (ext, _) = app.create_user("boot", json!({})).await;
    let r = app
        .api(GET, &format!("{A}/users"))
        .header("x-service-secret-key", &wrong_secret)
        .go()
        .await;
    assert_unauth(&r, "secret_key", "invalid_secret_key");
    let r = app.user(GET, &format!("{U}/me"), &ext).go().await;
    r.ok(200);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(app.stop().code(), Some(0));
    let text = app.output.text();
    assert!(
        !text.contains(&keys.secret_key),
        "the secret key must never appear in the output:\n{text}"
    );
    assert!(
        !text.contains(&wrong_secret),
        "a presented secret key must never be logged:\n{text}"
    );
    assert!(
        key_lines(&app.output.stdout_lines()).is_empty(),
        "bootstrap keys are not printed:\n{text}"
    );
    assert_eq!(
        dir_contains(dir.path(), keys.secret_key.as_bytes()),
        None,
        "the secret key must not be stored in clear"
    );

    // bootstrap variables are ignored once the project exists
    let other = Keys::random();
    let app = TestApp::spawn_on(dir.path(), &other);
    assert_eq!(project_name(&app, &keys).await, "default");
    let r = app
        .admin_with(&keys, GET, &format!("{A}/users/{ext}"))
        .go()
        .await;
    r.ok(200);
    let r = app
        .admin_with(&other, GET, &format!("{A}/users"))
        .go()
        .await;
    assert_unauth(&r, "api_key", "invalid_api_key");
}

#[tokio::test]
async fn project_create_cli() {
    let dir = tempfile::tempdir().unwrap();
    // on a data dir no server holds: exactly two lines, exit 0
    let acme = create_project_keys("acme", dir.path());
    let beta = create_project_keys("beta", dir.path());
    assert_ne!(acme.public_key, beta.public_key);
    assert_ne!(acme.secret_key, beta.secret_key);

    let default = Keys::random();
    let mut app = TestApp::spawn_on(dir.path(), &default);
    assert_eq!(project_name(&app, &acme).await, "acme");
    assert_eq!(project_name(&app, &beta).await, "beta");
    assert_eq!(project_name(&app, &default).await, "default");

    // while a server holds the data dir: created through the server, the
    // same two lines, and the keys work at once
    let live = create_project_keys("live", dir.path());
    assert_eq!(project_name(&app, &live).await, "live");
    let r = app.request(GET, "/healthz").go().await;
    assert_eq!(r.status, 200, "{r}");
    assert_eq!(project_name(&app, &acme).await, "acme");

    // after a stop it works directly, and every key works after a restart
    assert_eq!(app.stop().code(), Some(0));
    let late = create_project_keys("late", dir.path());
    let app = TestApp::spawn_on(dir.path(), &default);
    assert_eq!(project_name(&app, &late).await, "late");
    assert_eq!(project_name(&app, &live).await, "live");
    assert_eq!(project_name(&app, &acme).await, "acme");
    assert_eq!(project_name(&app, &default).await, "default");
    // secret keys stored only as a hash
    for k in [&acme, &beta, &late, &live] {
        assert_eq!(
            dir_contains(dir.path(), k.secret_key.as_bytes()),
            None,
            "a secret key is stored in clear"
        );
    }
}

#[tokio::test]
async fn listening_line_whatever_the_log_setting_and_sigint_exits_0() {
    // json logs and logging switched off: the line is still printed on stdout
    let mut app = TestApp::spawn_with(&["--log-format", "json"], &[("RUST_LOG", "off")]);
    let listening = app
        .output
        .stdout_lines()
        .into_iter()
        .any(|l| l.contains("listening on http://"));
    assert!(
        listening,
        "the listening line goes to stdout:\n{}",
        app.output.text()
    );
    let r = app.request(GET, "/healthz").go().await;
    assert_eq!(r.ok(200), json!({"status": "ok"}), "{r}");
    let r = app.admin(GET, &format!("{A}/users")).go().await;
    r.page();
    let status = app.stop_with("INT");
    assert_eq!(status.code(), Some(0), "SIGINT exits 0: {status:?}");
}
