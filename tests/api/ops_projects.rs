//! Projects and keys on a running server and on a stopped data directory:
//! `herald project create|list|show|rotate-secret|delete` both ways, the
//! operator API behind them (`/ops/v1/projects…`, the operator token: the
//! `ops.json` one from this machine or `HERALD_OPERATOR_TOKEN`), secret
//! rotation with its grace period, project deletion removing every key of that
//! project and nothing of another, and `herald --version`.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

use crate::engine_helpers::*;
use crate::helpers::*;

const OPS: &str = "/ops/v1/projects";
const TOKEN_HEADER: &str = "x-herald-ops-token";

/// Runs `herald ARGS…` with a clean `HERALD_*` environment plus `env`.
pub(crate) fn herald_env(args: &[&str], env: &[(&str, &str)]) -> CmdOutput {
    let mut cmd = Command::new(herald_bin());
    for (var, _) in std::env::vars_os() {
        if var.to_string_lossy().starts_with("HERALD_") {
            cmd.env_remove(var);
        }
    }
    cmd.env("NO_COLOR", "1")
        .env("RUST_LOG", "warn")
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null());
    run_with_timeout(cmd, Duration::from_secs(60))
}

/// `herald project ARGS… --data-dir DIR`.
pub(crate) fn project(dir: &Path, args: &[&str]) -> CmdOutput {
    let mut all = vec!["project"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--data-dir", dir.to_str().unwrap()]);
    herald_env(&all, &[])
}

#[track_caller]
fn assert_exit(out: &CmdOutput, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "expected exit {code}: {out:?}"
    );
}

/// `key: value` lines.
fn fields(out: &CmdOutput) -> HashMap<String, String> {
    out.stdout
        .lines()
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `(name, public key)` of every line of `project list`.
fn listed(out: &CmdOutput) -> Vec<(String, String)> {
    out.stdout
        .lines()
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(w.len(), 2, "a list line is `NAME PUBLIC_KEY`: {l:?}");
            (w[0].to_string(), w[1].to_string())
        })
        .collect()
}

/// The new secret of a `rotate-secret` and the expiry line's value.
pub(crate) fn rotated(out: &CmdOutput) -> (String, String) {
    assert_exit(out, 0);
    let f = fields(out);
    let sk = f.get("secret_key").cloned().unwrap_or_default();
    assert!(
        sk.starts_with("sk_") && sk.len() >= 40,
        "new secret: {out:?}"
    );
    let exp = f
        .get("previous_secret_expires_at")
        .cloned()
        .unwrap_or_else(|| panic!("rotate-secret says when the old secret expires: {out:?}"));
    (sk, exp)
}

/// `GET /admin/v1/project` with these keys: the status (and the error reason).
async fn admin_status(app: &TestApp, keys: &Keys) -> (u16, Value) {
    let r = app
        .admin_with(keys, GET, &format!("{A}/project"))
        .go()
        .await;
    (r.status, r.json["error"]["details"]["reason"].clone())
}

fn jv(s: &str) -> Value {
    Value::String(s.to_string())
}

fn with_secret(keys: &Keys, secret: &str) -> Keys {
    Keys {
        public_key: keys.public_key.clone(),
        secret_key: secret.to_string(),
    }
}

fn ops_token(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join("ops.json")).expect("ops.json");
    let v: Value = serde_json::from_str(&text).unwrap();
    v["token"].as_str().unwrap().to_string()
}

fn ops(app: &TestApp, token: &str, method: Method, path: &str) -> reqwest::RequestBuilder {
    app.request(method, path).header(TOKEN_HEADER, token)
}

// ================================================================ the CLI

#[tokio::test]
async fn project_commands_on_a_stopped_data_dir() {
    if sled_only("project commands on the data directory (PostgreSQL: pg_store)") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let default = Keys::random();
    let mut app = TestApp::spawn_on(&dir, &default);
    // (answering a request: the signal handlers are in place)
    assert_eq!(admin_status(&app, &default).await.0, 200);
    assert_eq!(app.stop().code(), Some(0));
    assert!(
        !dir.join("ops.json").exists(),
        "a clean stop removes ops.json"
    );

    let acme = create_project_keys("acme", &dir);
    let beta = create_project_keys("beta", &dir);

    let out = project(&dir, &["list"]);
    assert_exit(&out, 0);
    assert_eq!(
        listed(&out),
        vec![
            ("default".to_string(), default.public_key.clone()),
            ("acme".to_string(), acme.public_key.clone()),
            ("beta".to_string(), beta.public_key.clone()),
        ],
        "{out:?}"
    );

    let out = project(&dir, &["show", "acme"]);
    assert_exit(&out, 0);
    let f = fields(&out);
    assert_eq!(f["name"], "acme", "{out:?}");
    assert_eq!(f["public_key"], acme.public_key, "{out:?}");
    assert_eq!(f["security_mode"], "false", "{out:?}");
    assert!(is_uuid_v7(&jv(&f["id"])), "{out:?}");
    assert!(is_timestamp(&jv(&f["created_at"])), "{out:?}");
    assert!(!f.contains_key("secret_rotated_at"), "{out:?}");
    assert!(
        !out.stdout.contains("sk_"),
        "show never prints a secret: {out:?}"
    );

    // rotation: no grace, then an hour of grace
    let (a1, exp) = rotated(&project(&dir, &["rotate-secret", "acme", "--grace", "0"]));
    assert_ne!(a1, acme.secret_key);
    assert!(exp.starts_with("now"), "{exp}");
    let (a2, exp) = rotated(&project(&dir, &["rotate-secret", "acme", "--grace", "1h"]));
    let until = parse_ts(&jv(&exp));
    let left = until.timestamp() - now_secs();
    assert!((3500..=3600).contains(&left), "expires in {left} s");
    let out = project(&dir, &["show", "acme"]);
    let f = fields(&out);
    assert!(is_timestamp(&jv(&f["secret_rotated_at"])), "{out:?}");
    assert_eq!(f["previous_secret_expires_at"], exp, "{out:?}");

    // delete: refused without --yes (usage, exit 2), done with it
    let out = project(&dir, &["delete", "beta"]);
    assert_exit(&out, 2);
    assert!(out.stderr.contains("--yes"), "{out:?}");
    assert_eq!(listed(&project(&dir, &["list"])).len(), 3);
    let out = project(&dir, &["delete", "beta", "--yes"]);
    assert_exit(&out, 0);
    let names: Vec<String> = listed(&project(&dir, &["list"]))
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(names, ["default", "acme"]);

    // failures: exit 1 with a message
    let out = project(&dir, &["show", "beta"]);
    assert_exit(&out, 1);
    assert!(out.stderr.contains("no project named \"beta\""), "{out:?}");
    let out = project(&dir, &["rotate-secret", "beta"]);
    assert_exit(&out, 1);
    let out = project(&dir, &["delete", "beta", "--yes"]);
    assert_exit(&out, 1);
    let out = project_create("acme", &dir);
    assert_exit(&out, 1);
    assert!(out.stderr.contains("already exists"), "{out:?}");
    assert!(!out.stdout.contains("sk_"), "{out:?}");
    let out = project_create("no spaces", &dir);
    assert_exit(&out, 1);
    assert!(out.stderr.contains("name"), "{out:?}");
    // usage errors: exit 2
    assert_exit(
        &project(&dir, &["rotate-secret", "acme", "--grace", "31d"]),
        2,
    );
    assert_exit(&project(&dir, &["frobnicate"]), 2);
    let out = project(&tmp.path().join("absent"), &["list"]);
    assert_exit(&out, 1);
    assert!(out.stderr.contains("does not exist"), "{out:?}");

    // what the stopped store says, a server serves
    let app = TestApp::spawn_on(&dir, &default);
    assert_eq!(admin_status(&app, &with_secret(&acme, &a2)).await.0, 200);
    assert_eq!(
        admin_status(&app, &with_secret(&acme, &a1)).await.0,
        200,
        "the previous secret works during its grace period"
    );
    assert_eq!(
        admin_status(&app, &acme).await,
        (401, json!("invalid_secret_key")),
        "the secret replaced without grace is refused"
    );
    assert_eq!(
        admin_status(&app, &beta).await,
        (401, json!("invalid_api_key"))
    );
    assert_eq!(admin_status(&app, &default).await.0, 200);
}

#[tokio::test]
async fn project_commands_on_a_running_server() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let default = Keys::random();
    let app = TestApp::spawn_on(&dir, &default);

    // create: the same two lines, and the keys work at once (no restart)
    let acme = create_project_keys("acme", &dir);
    let r = app
        .admin_with(&acme, GET, &format!("{A}/project"))
        .go()
        .await;
    assert_eq!(r.ok(200)["name"], json!("acme"), "{r}");
    let out = project_create("acme", &dir);
    assert_exit(&out, 1);
    assert!(out.stderr.contains("already exists"), "{out:?}");

    let out = project(&dir, &["list"]);
    assert_exit(&out, 0);
    assert!(
        !out.stderr.contains("opening the data directory"),
        "the running server answered: {out:?}"
    );
    assert_eq!(
        listed(&out),
        vec![
            ("default".to_string(), default.public_key.clone()),
            ("acme".to_string(), acme.public_key.clone()),
        ]
    );
    let out = project(&dir, &["show", "acme"]);
    assert_exit(&out, 0);
    let f = fields(&out);
    assert_eq!(f["name"], "acme");
    assert_eq!(f["public_key"], acme.public_key);
    assert!(!out.stdout.contains("sk_"), "{out:?}");

    // rotation with a 5 s grace (room for the command's own start and exit):
    // the new secret at once, the old one until then
    let (new, exp) = rotated(&project(&dir, &["rotate-secret", "acme", "--grace", "5s"]));
    let rotated_at = Instant::now();
    assert!(is_timestamp(&jv(&exp)), "{exp}");
    assert_eq!(admin_status(&app, &with_secret(&acme, &new)).await.0, 200);
    assert_eq!(
        admin_status(&app, &acme).await.0,
        200,
        "old secret during grace"
    );
    tokio::time::sleep(Duration::from_millis(5500).saturating_sub(rotated_at.elapsed())).await;
    assert_eq!(
        admin_status(&app, &acme).await,
        (401, json!("invalid_secret_key")),
        "old secret after its grace period"
    );
    assert_eq!(admin_status(&app, &with_secret(&acme, &new)).await.0, 200);

    // delete: refused without --yes; with it, the keys stop working at once
    assert_exit(&project(&dir, &["delete", "acme"]), 2);
    assert_eq!(admin_status(&app, &with_secret(&acme, &new)).await.0, 200);
    let out = project(&dir, &["delete", "acme", "--yes"]);
    assert_exit(&out, 0);
    assert_eq!(
        admin_status(&app, &with_secret(&acme, &new)).await,
        (401, json!("invalid_api_key"))
    );
    let out = project(&dir, &["show", "acme"]);
    assert_exit(&out, 1);
    assert!(out.stderr.contains("no project named"), "{out:?}");

    // the server is unharmed
    assert_eq!(admin_status(&app, &default).await.0, 200);
    assert_eq!(app.request(GET, "/readyz").go().await.status, 200);
}

// ================================================================ the operator API

#[tokio::test]
async fn operator_api_needs_the_operator_token() {
    if single_node_only("the ops.json token is one node's (each node writes its own)") {
        return;
    }
    let operator = format!("op_{}", random_hex());
    let app = TestApp::spawn_with(&[], &[("HERALD_OPERATOR_TOKEN", &operator)]);
    let local = ops_token(&app.data_dir);
    let routes = [
        (GET, OPS.to_string()),
        (POST, OPS.to_string()),
        (PUT, OPS.to_string()),
        (GET, format!("{OPS}/default")),
        (POST, format!("{OPS}/default/rotate_secret")),
        (DELETE, format!("{OPS}/default?confirm=default")),
    ];
    for (m, path) in &routes {
        let r = app
            .request(m.clone(), path)
            .json(&json!({"name": "x"}))
            .go()
            .await;
        assert_unauth(&r, "ops_token", "invalid_ops_token");
        let r = ops(&app, &format!("op_{}", random_hex()), m.clone(), path)
            .json(&json!({"name": "x"}))
            .go()
            .await;
        assert_unauth(&r, "ops_token", "invalid_ops_token");
        // a project's own keys are not an operator's
        let r = app.admin(m.clone(), path).go().await;
        assert_unauth(&r, "ops_token", "invalid_ops_token");
    }
    // nothing happened: the default project's keys still work
    assert_eq!(admin_status(&app, &app.keys()).await.0, 200);

    // both tokens work
    for token in [&local, &operator] {
        let r = ops(&app, token, GET, OPS).go().await;
        let items = r.ok(200)["items"].as_array().cloned().unwrap();
        assert_eq!(items.len(), 1, "{r}");
        assert_eq!(items[0]["name"], json!("default"), "{r}");
        assert_eq!(items[0]["public_key"], json!(app.public_key), "{r}");
    }
    let r = ops(&app, &operator, PUT, OPS).go().await;
    assert_error(&r, 404, "not_found");

    // create: 201, keys shown once
    let r = ops(&app, &operator, POST, OPS)
        .json(&json!({"name": "acme"}))
        .go()
        .await;
    let created = r.ok(201);
    assert_eq!(created["name"], json!("acme"), "{r}");
    assert!(is_uuid_v7(&created["id"]), "{r}");
    assert!(is_timestamp(&created["created_at"]), "{r}");
    let acme = Keys {
        public_key: s(&created["public_key"]),
        secret_key: s(&created["secret_key"]),
    };
    assert!(acme.public_key.starts_with("pk_"), "{r}");
    assert!(
        acme.secret_key.starts_with("sk_") && acme.secret_key.len() >= 40,
        "{r}"
    );
    assert_eq!(admin_status(&app, &acme).await.0, 200);
    let r = ops(&app, &operator, POST, OPS)
        .json(&json!({"name": "acme"}))
        .go()
        .await;
    assert_error(&r, 409, "conflict");
    for bad in ["", "a b", "a/b", "-x", "ü"] {
        let r = ops(&app, &local, POST, OPS)
            .json(&json!({ "name": bad }))
            .go()
            .await;
        assert_eq!(r.status, 422, "name {bad:?}: {r}");
        assert_error(&r, 422, "validation_failed");
    }
    let r = ops(&app, &local, POST, OPS).json(&json!({})).go().await;
    assert_validation(&r, &[("name", "required")]);

    // show: never a secret
    let r = ops(&app, &local, GET, &format!("{OPS}/acme")).go().await;
    let shown = r.ok(200);
    for k in ["id", "name", "public_key", "security_mode", "created_at"] {
        assert_eq!(shown[k], created[k], "{k}: {r}");
    }
    assert!(shown.get("secret_key").is_none(), "{r}");
    assert!(!r.text.contains("sk_") && !r.text.contains("hash"), "{r}");
    let r = ops(&app, &local, GET, &format!("{OPS}/nope")).go().await;
    assert_not_found(&r, "project", "nope");

    // rotation: bad grace periods
    for bad in [json!(-1), json!("1h"), json!(1.5), json!(2_592_001)] {
        let r = ops(&app, &local, POST, &format!("{OPS}/acme/rotate_secret"))
            .json(&json!({ "grace_seconds": bad }))
            .go()
            .await;
        assert_validation(&r, &[("grace_seconds", "number")]);
    }
    let r = ops(&app, &local, POST, &format!("{OPS}/nope/rotate_secret"))
        .go()
        .await;
    assert_not_found(&r, "project", "nope");
    assert_eq!(admin_status(&app, &acme).await.0, 200, "nothing rotated");

    // deletion needs the confirmation
    let r = ops(&app, &local, DELETE, &format!("{OPS}/acme")).go().await;
    assert_validation(&r, &[("confirm", "required")]);
    let r = ops(&app, &local, DELETE, &format!("{OPS}/acme?confirm=default"))
        .go()
        .await;
    assert_validation(&r, &[("confirm", "format")]);
    let r = ops(&app, &local, DELETE, &format!("{OPS}/nope?confirm=nope"))
        .go()
        .await;
    assert_not_found(&r, "project", "nope");
    assert_eq!(admin_status(&app, &acme).await.0, 200, "nothing deleted");
    let r = ops(&app, &operator, DELETE, &format!("{OPS}/acme?confirm=acme"))
        .go()
        .await;
    assert_eq!(r.status, 204, "{r}");
    assert_eq!(
        admin_status(&app, &acme).await,
        (401, json!("invalid_api_key"))
    );
}

/// A non-loopback address of this machine, if it has one.
fn outward_ip() -> Option<std::net::IpAddr> {
    let s = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    // no packet is sent: this only picks the interface a route would use
    s.connect("192.0.2.1:9").ok()?;
    let ip = s.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[tokio::test]
async fn the_ops_json_token_is_local_and_the_operator_token_works_from_anywhere() {
    if single_node_only("the ops.json token is one node's (each node writes its own)") {
        return;
    }
    let operator = format!("op_{}", random_hex());
    let tmp = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let app = TestApp::start(ServeOptions {
        data_dir: tmp.path(),
        bootstrap: Some(&keys),
        args: &[
            "--bind",
            "0.0.0.0:0",
            "--data-dir",
            tmp.path().to_str().unwrap(),
        ],
        env: &[("HERALD_OPERATOR_TOKEN", &operator)],
        default_flags: false,
    })
    .unwrap();
    let local = ops_token(tmp.path());
    let port = app.address.rsplit(':').next().unwrap().to_string();
    let client = http_client();
    let get = |base: String, token: String| {
        let client = client.clone();
        async move {
            client
                .get(format!("{base}{OPS}"))
                .header(TOKEN_HEADER, token)
                .go()
                .await
        }
    };
    let loopback = format!("http://127.0.0.1:{port}");
    assert_eq!(get(loopback.clone(), local.clone()).await.status, 200);
    assert_eq!(get(loopback, operator.clone()).await.status, 200);
    // From another address of this machine (the container's own interface):
    // the ops.json token is refused, the operator token accepted.
    let Some(ip) = outward_ip() else {
        eprintln!("note: no non-loopback interface; the remote half is not exercised");
        return;
    };
    let remote = format!("http://{ip}:{port}");
    let r = get(remote.clone(), local).await;
    assert_unauth(&r, "ops_token", "invalid_ops_token");
    let r = get(remote, operator).await;
    assert_eq!(r.ok(200)["items"][0]["name"], json!("default"), "{r}");
}

#[tokio::test]
async fn a_weak_operator_token_is_refused_at_start() {
    let tmp = tempfile::tempdir().unwrap();
    let out = herald_env(
        &[
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--data-dir",
            tmp.path().to_str().unwrap(),
        ],
        &[("HERALD_OPERATOR_TOKEN", "hunter2hunter2")],
    );
    assert_exit(&out, 2);
    assert!(out.stderr.contains("HERALD_OPERATOR_TOKEN"), "{out:?}");
    assert!(
        !out.stderr.contains("hunter2"),
        "the token is not echoed: {out:?}"
    );
    assert!(
        !tmp.path().join("ops.json").exists(),
        "it never served: {out:?}"
    );
}

#[tokio::test]
async fn a_rotated_secret_stays_valid_for_its_grace_period_only() {
    if single_node_only("the ops.json token is one node's (each node writes its own)") {
        return;
    }
    let app = TestApp::spawn();
    let token = ops_token(&app.data_dir);
    let old = app.keys();
    let r = ops(&app, &token, POST, &format!("{OPS}/default/rotate_secret"))
        .json(&json!({"grace_seconds": 2}))
        .go()
        .await;
    let at = Instant::now();
    let body = r.ok(200);
    let new = with_secret(&old, &s(&body["secret_key"]));
    assert_ne!(new.secret_key, old.secret_key);
    let left = parse_ts(&body["previous_secret_expires_at"]).timestamp_millis()
        - chrono::Utc::now().timestamp_millis();
    assert!((0..=2100).contains(&left), "expires in {left} ms: {r}");
    assert!(is_timestamp(&body["secret_rotated_at"]), "{r}");
    assert_eq!(admin_status(&app, &new).await.0, 200, "new secret at once");
    assert_eq!(
        admin_status(&app, &old).await.0,
        200,
        "old secret during grace"
    );
    let shown = ops(&app, &token, GET, &format!("{OPS}/default")).go().await;
    assert_eq!(
        shown.ok(200)["previous_secret_expires_at"],
        body["previous_secret_expires_at"]
    );
    tokio::time::sleep(Duration::from_millis(2500).saturating_sub(at.elapsed())).await;
    assert_eq!(
        admin_status(&app, &old).await,
        (401, json!("invalid_secret_key"))
    );
    assert_eq!(admin_status(&app, &new).await.0, 200);
    let shown = ops(&app, &token, GET, &format!("{OPS}/default")).go().await;
    assert!(shown.ok(200).get("previous_secret_expires_at").is_none());

    // without a body: 24 h of grace
    let r = ops(&app, &token, POST, &format!("{OPS}/default/rotate_secret"))
        .go()
        .await;
    let body = r.ok(200);
    let left = parse_ts(&body["previous_secret_expires_at"]).timestamp() - now_secs();
    assert!((86_390..=86_400).contains(&left), "{r}");
    let newer = with_secret(&old, &s(&body["secret_key"]));
    assert_eq!(admin_status(&app, &newer).await.0, 200);
    assert_eq!(admin_status(&app, &new).await.0, 200);
    // grace 0: the previous one is refused at once, and the one before is forgotten
    let r = ops(&app, &token, POST, &format!("{OPS}/default/rotate_secret"))
        .json(&json!({"grace_seconds": 0}))
        .go()
        .await;
    let last = with_secret(&old, &s(&r.ok(200)["secret_key"]));
    assert_eq!(admin_status(&app, &last).await.0, 200);
    for gone in [&newer, &new, &old] {
        assert_eq!(
            admin_status(&app, gone).await,
            (401, json!("invalid_secret_key"))
        );
    }
}

// ================================================================ deletion

/// Whether `needle` occurs in the file.
fn file_holds(path: &Path, needle: &[u8]) -> bool {
    let bytes = std::fs::read(path).unwrap();
    bytes.windows(needle.len()).any(|w| w == needle)
}

fn uuid_bytes(v: &Value) -> Vec<u8> {
    uuid::Uuid::parse_str(v.as_str().unwrap())
        .unwrap()
        .as_bytes()
        .to_vec()
}

fn backup_to(dir: &Path, to: &Path) {
    let out = herald_env(
        &[
            "backup",
            "--data-dir",
            dir.to_str().unwrap(),
            "--to",
            to.to_str().unwrap(),
        ],
        &[],
    );
    assert_exit(&out, 0);
}

#[tokio::test]
async fn deleting_a_project_removes_all_its_data_and_nothing_of_another() {
    if sled_only("it counts the data directory's keys through a backup") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    // the victim is the server's default project, so the engine helpers serve it
    let victim = Keys::random();
    let mut app = TestApp::spawn_on(&dir, &victim);
    let token = ops_token(&dir);
    let show = |name: &'static str| ops(&app, &token, GET, &format!("{OPS}/{name}"));
    let victim_id = show("default").go().await.ok(200)["id"].clone();

    // another project with data of its own
    let r = ops(&app, &token, POST, OPS)
        .json(&json!({"name": "survivor"}))
        .go()
        .await;
    let created = r.ok(201);
    let survivor = Keys {
        public_key: s(&created["public_key"]),
        secret_key: s(&created["secret_key"]),
    };
    let survivor_id = created["id"].clone();
    let r = app
        .admin_with(&survivor, PUT, &format!("{A}/users/sam"))
        .json(&json!({"first_name": "Sam"}))
        .go()
        .await;
    r.ok(201);

    // the victim: users, a topic, channels, flows, runs with deliveries still
    // waiting (a delay, then a webhook to a closed port), a live socket
    let users = topic_of_new_users(&app, "news", "v", 3).await;
    let in_app = in_app_channel(&app).await;
    let hook = create_webhook_channel(&app, &closed_port_url(), None).await;
    let flow = active_flow(
        &app,
        "doomed",
        json!([
            channel_step(&in_app, Some("Hi"), "hello {{ recipient.external_id }}"),
            delay_step(2),
            channel_step(&s(&hook["id"]), None, "later"),
        ]),
    )
    .await;
    run_flow(
        &app,
        &s(&flow["id"]),
        json!({"recipients": recipients(&users)}),
    )
    .await;
    run_flow(&app, &s(&flow["id"]), json!({"topic": "news"})).await;
    wait_feed(&app, &users[0], 2).await;
    let user_id = app
        .admin(GET, &format!("{A}/users/{}", users[0]))
        .go()
        .await
        .ok(200)["id"]
        .clone();

    let base = app.next_ws_base();
    let mut req = format!("{base}{U}/feed/live")
        .into_client_request()
        .unwrap();
    req.headers_mut()
        .insert("x-service-api-key", app.public_key.parse().unwrap());
    req.headers_mut()
        .insert("x-service-user-id", users[1].parse().unwrap());
    let (mut ws, _) = tokio_tungstenite::connect_async(req)
        .await
        .expect("live socket");
    let hello = tokio::time::timeout(Duration::from_secs(5), ws.next())
        .await
        .expect("hello in time");
    assert!(matches!(hello, Some(Ok(Message::Text(_)))), "{hello:?}");

    // before: the backup holds both projects
    let before = tmp.path().join("before.backup");
    backup_to(&dir, &before);
    assert!(file_holds(&before, &uuid_bytes(&victim_id)));
    assert!(file_holds(&before, &uuid_bytes(&survivor_id)));

    let r = ops(
        &app,
        &token,
        DELETE,
        &format!("{OPS}/default?confirm=default"),
    )
    .go()
    .await;
    assert_eq!(r.status, 204, "{r}");
    assert_eq!(r.text, "", "{r}");

    // the socket is closed, its keys are refused
    let closed = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(m) = ws.next().await {
            if let Ok(Message::Close(c)) = m {
                return c.map(|c| u16::from(c.code));
            }
        }
        None
    })
    .await
    .expect("the socket closes in time");
    assert_eq!(closed, Some(4401));
    assert_eq!(
        admin_status(&app, &victim).await,
        (401, json!("invalid_api_key"))
    );
    let r = app.user(GET, &format!("{U}/feed"), &users[0]).go().await;
    assert_unauth(&r, "api_key", "invalid_api_key");
    assert_not_found(&show("default").go().await, "project", "default");

    // the delayed webhook deliveries come due and find nothing: the server stays ready
    tokio::time::sleep(Duration::from_millis(3000)).await;
    assert_eq!(app.request(GET, "/readyz").go().await.status, 200);

    // the survivor is intact
    let r = app
        .admin_with(&survivor, GET, &format!("{A}/users/sam"))
        .go()
        .await;
    assert_eq!(r.ok(200)["first_name"], json!("Sam"), "{r}");
    let remaining = ops(&app, &token, GET, OPS).go().await.ok(200);
    assert_eq!(
        remaining["items"].as_array().unwrap().len(),
        1,
        "{remaining}"
    );
    assert_eq!(remaining["items"][0]["name"], json!("survivor"));

    // nothing of the victim remains, in a backup of the running server…
    let after = tmp.path().join("after.backup");
    backup_to(&dir, &after);
    assert!(
        !file_holds(&after, &uuid_bytes(&victim_id)),
        "a key of the deleted project remains"
    );
    assert!(
        !file_holds(&after, &uuid_bytes(&user_id)),
        "a record of its users remains"
    );
    assert!(file_holds(&after, &uuid_bytes(&survivor_id)));
    assert!(file_holds(&after, b"sam"));

    // …and in the data directory once stopped
    assert_eq!(app.stop().code(), Some(0));
    let stopped = tmp.path().join("stopped.backup");
    backup_to(&dir, &stopped);
    assert!(!file_holds(&stopped, &uuid_bytes(&victim_id)));
    assert!(file_holds(&stopped, &uuid_bytes(&survivor_id)));
    let out = project(&dir, &["list"]);
    assert_exit(&out, 0);
    assert_eq!(
        listed_names(&out),
        ["survivor"],
        "the deleted project stays deleted: {out:?}"
    );
}

fn listed_names(out: &CmdOutput) -> Vec<String> {
    listed(out).into_iter().map(|(n, _)| n).collect()
}

// ================================================================ --version

#[test]
fn version_names_the_version_and_the_commit() {
    for flag in ["--version", "-V"] {
        let out = herald_env(&[flag], &[]);
        assert_exit(&out, 0);
        let line = out.stdout.trim();
        let rest = line
            .strip_prefix(&format!("herald {} (", env!("CARGO_PKG_VERSION")))
            .and_then(|r| r.strip_suffix(')'))
            .unwrap_or_else(|| panic!("`herald {flag}` printed {line:?}"));
        let git = Command::new("git")
            .args(["rev-parse", "--short", "HEAD"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
        match git {
            Some(commit) => assert_eq!(rest, commit, "the commit built"),
            None => assert_eq!(rest, "unknown"),
        }
    }
}

// ================================================================ README

#[test]
fn readme_documents_every_project_command_and_the_operator_token() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("README.md");
    let out = herald_env(&["project", "--help"], &[]);
    assert_exit(&out, 0);
    let commands: Vec<&str> = out
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert_eq!(
        commands,
        ["create", "list", "show", "rotate-secret", "delete"],
        "{out:?}"
    );
    for c in commands {
        assert!(
            readme.contains(&format!("herald project {c}")),
            "README shows `herald project {c}`"
        );
    }
    for needle in [
        "HERALD_OPERATOR_TOKEN",
        "x-herald-ops-token",
        "/ops/v1/projects",
        "--grace",
        "--yes",
        "herald --version",
    ] {
        assert!(readme.contains(needle), "README mentions {needle}");
    }
    assert!(
        !readme.contains("It fails (exit 1) while a server holds the"),
        "README still says `project create` fails while a server runs"
    );
}
