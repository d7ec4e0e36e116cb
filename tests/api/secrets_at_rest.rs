//! Channel secrets sealed at rest. Channels of every
//! provider with known secrets; then every file of the stopped server's data
//! directory and two backups searched for the secrets' bytes (absent), the
//! modes checked (0700/0600), deliveries after a restart and after a restore
//! that prove the secrets still open (a webhook signature verified, SMTP AUTH
//! accepted), a wrong or missing key refused at start, and a channel update
//! that changes where a secret goes refused unless the secret is sent again.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};
use wiremock::matchers::method;
use wiremock::{Mock, ResponseTemplate};

use crate::engine_helpers::*;
use crate::helpers::*;
use crate::providers_support::*;

/// `herald ARGS` without the caller's HERALD_* environment.
fn herald(args: &[&str], env: &[(&str, &str)]) -> CmdOutput {
    let mut cmd = Command::new(herald_bin());
    for (var, _) in std::env::vars_os() {
        if var.to_string_lossy().starts_with("HERALD_") {
            cmd.env_remove(var);
        }
    }
    cmd.env("NO_COLOR", "1")
        .env("RUST_LOG", "warn")
        .envs(env.iter().copied())
        .args(args)
        .stdin(Stdio::null());
    run_with_timeout(cmd, Duration::from_secs(120))
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Paths with their permission bits.
type Modes = Vec<(PathBuf, u32)>;

/// Every file under `dir` (recursively) with its mode, and every directory's mode.
fn walk(dir: &Path) -> (Modes, Modes) {
    use std::os::unix::fs::PermissionsExt;
    let (mut files, mut dirs) = (vec![], vec![]);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let m = std::fs::metadata(&d).unwrap().permissions().mode() & 0o777;
        dirs.push((d.clone(), m));
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let md = std::fs::symlink_metadata(e.path()).unwrap();
            if md.is_dir() {
                stack.push(e.path());
            } else if md.is_file() {
                files.push((e.path(), md.permissions().mode() & 0o777));
            }
        }
    }
    (files, dirs)
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[track_caller]
fn assert_holds_none(path: &Path, needles: &[(String, Vec<u8>)]) {
    let bytes = std::fs::read(path).unwrap();
    for (what, n) in needles {
        assert!(
            !bytes.windows(n.len()).any(|w| w == &n[..]),
            "{what} found in plaintext in {}",
            path.display()
        );
    }
}

/// A line from the middle of a PEM body (as it would appear in any encoding).
fn pem_line(pem: &str) -> String {
    let lines: Vec<&str> = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    lines[lines.len() / 2].to_string()
}

struct Secrets {
    smtp_password: String,
    twilio_token: String,
    slack_url: String,
    webhook_secret: String,
    webhook_key: Vec<u8>,
    vapid_private: String,
    fcm_pem: String,
    apns_pem: String,
    /// The key, token or secret of every HTTP email provider.
    email_key: String,
}

impl Secrets {
    fn new() -> Secrets {
        use p256::pkcs8::EncodePrivateKey;
        let (webhook_secret, webhook_key) = webhook_secret();
        let pem = |sk: p256::SecretKey| {
            sk.to_pkcs8_pem(p256::pkcs8::LineEnding::LF)
                .unwrap()
                .to_string()
        };
        Secrets {
            smtp_password: format!("smtp-pw-{}", random_hex()),
            twilio_token: format!("twilio-tok-{}", random_hex()),
            slack_url: format!(
                "https://hooks.slack.com/services/T0/B0/slack-{}",
                random_hex()
            ),
            webhook_secret,
            webhook_key,
            vapid_private: b64url(&p256_pair().0.to_bytes()),
            fcm_pem: key_a().private_pem.clone(),
            apns_pem: pem(p256_pair().0),
            email_key: format!("email-key-{}", random_hex()),
        }
    }

    fn needles(&self) -> Vec<(String, Vec<u8>)> {
        let b64 = self.webhook_secret.trim_start_matches("whsec_");
        [
            ("smtp password", self.smtp_password.clone()),
            ("twilio token", self.twilio_token.clone()),
            ("slack url", self.slack_url.clone()),
            ("webhook secret", b64.to_string()),
            ("vapid private key", self.vapid_private.clone()),
            ("fcm private key", pem_line(&self.fcm_pem)),
            ("apns private key", pem_line(&self.apns_pem)),
            ("email API key", self.email_key.clone()),
        ]
        .into_iter()
        .map(|(w, s)| (w.to_string(), s.into_bytes()))
        .chain([("webhook HMAC key".to_string(), self.webhook_key.clone())])
        .collect()
    }
}

/// Channels of every provider holding `sec`: (webhook channel id, smtp channel id).
async fn configure(app: &TestApp, sec: &Secrets, hook: &str, smtp_port: u16) -> (String, String) {
    let vapid_public = {
        // the public key of the given private scalar
        use p256::elliptic_curve::sec1::ToEncodedPoint;
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(&sec.vapid_private)
            .unwrap();
        let sk = p256::SecretKey::from_slice(&bytes).unwrap();
        b64url(sk.public_key().to_encoded_point(false).as_bytes())
    };
    let configs = [
        (
            "chat",
            "webhook",
            json!({"url": hook, "secret": sec.webhook_secret, "retry": quick_retry()}),
        ),
        (
            "email",
            "smtp",
            json!({"host": "127.0.0.1", "port": smtp_port, "tls": "none",
            "username": "mailer", "password": sec.smtp_password,
            "from": "Herald <noreply@herald.test>", "retry": quick_retry()}),
        ),
        (
            "sms",
            "twilio",
            json!({"account_sid": "AC0123456789abcdef0123456789abcdef",
            "auth_token": sec.twilio_token, "from": "+15005550006",
            "base_url": closed_port_url()}),
        ),
        ("chat", "slack_webhook", json!({"url": sec.slack_url})),
        (
            "web_push",
            "web_push",
            json!({"subject": "mailto:ops@herald.test",
            "vapid_public_key": vapid_public, "vapid_private_key": sec.vapid_private}),
        ),
        (
            "mobile_push",
            "fcm",
            json!({"project_id": "herald-demo", "service_account": {
            "type": "service_account", "project_id": "herald-demo", "private_key_id": "kid-1",
            "private_key": sec.fcm_pem, "client_email": "herald@herald-demo.iam.gserviceaccount.com",
            "token_uri": "https://oauth2.googleapis.com/token"}}),
        ),
        (
            "mobile_push",
            "apns",
            json!({"team_id": "TEAM123456", "key_id": "KEY7654321",
            "private_key": sec.apns_pem, "topic": "test.herald.app"}),
        ),
        (
            "email",
            "sendgrid",
            json!({"api_key": sec.email_key, "from": "noreply@herald.test"}),
        ),
        (
            "email",
            "postmark",
            json!({"server_token": sec.email_key, "from": "noreply@herald.test"}),
        ),
        (
            "email",
            "mailgun",
            json!({"api_key": sec.email_key, "domain": "mg.herald.test",
            "from": "noreply@mg.herald.test"}),
        ),
        (
            "email",
            "resend",
            json!({"api_key": sec.email_key, "from": "noreply@herald.test"}),
        ),
        (
            "email",
            "ses",
            json!({"access_key_id": "AKIAHERALDTEST0001", "secret_access_key": sec.email_key,
            "region": "eu-west-1", "from": "noreply@herald.test"}),
        ),
    ];
    let mut ids = vec![];
    for (ctype, provider, config) in configs {
        let c = active_channel(app, ctype, provider, config).await;
        ids.push(s(&c["id"]));
    }
    (ids[0].clone(), ids[1].clone())
}

/// Every secret is masked in the channel list.
async fn assert_masked(app: &TestApp, sec: &Secrets) {
    let r = app.admin(GET, &format!("{A}/channels")).go().await;
    r.ok(200);
    for (what, n) in sec.needles() {
        let n = String::from_utf8_lossy(&n).to_string();
        assert!(!r.text.contains(&n), "{what} in GET /channels: {r}");
    }
    for c in r.ok(200)["items"].as_array().unwrap() {
        let masked = match s(&c["provider"]).as_str() {
            "webhook" => "secret",
            "smtp" => "password",
            "twilio" => "auth_token",
            "slack_webhook" => "url",
            "web_push" => "vapid_private_key",
            "fcm" => "service_account",
            "apns" => "private_key",
            "sendgrid" | "mailgun" | "resend" => "api_key",
            "postmark" => "server_token",
            "ses" => "secret_access_key",
            _ => continue,
        };
        assert_eq!(c["config"][masked], json!("********"), "{c}");
    }
}

/// A webhook delivery signed with the stored secret, and an email sent with
/// SMTP AUTH by the stored password: both secrets opened.
async fn assert_secrets_used(
    app: &TestApp, hook: &wiremock::MockServer, sink: &SmtpSink, sec: &Secrets,
    (webhook, smtp): (&str, &str),
) {
    let (ext, _) = app
        .create_user("sealed", json!({"email": "ann@example.com"}))
        .await;
    let flow = template_flow(app, webhook, json!({"body": "hi"})).await;
    let d = deliver_once(app, &flow, &ext, json!({})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    let reqs = requests_for(hook, &s(&d["id"])).await;
    assert_eq!(reqs.len(), 1);
    assert_signed(&reqs[0], &sec.webhook_key);
    let before = sink.mails().len();
    let flow = template_flow(app, smtp, json!({"subject": "S", "body": "B"})).await;
    let d = deliver_once(app, &flow, &ext, json!({})).await;
    assert_eq!(
        d["status"],
        json!("sent"),
        "SMTP AUTH with the stored password: {d}"
    );
    assert_eq!(sink.mails().len(), before + 1);
}

#[tokio::test]
async fn secrets_sealed_in_data_dir_and_backups_and_open_after_restart_and_restore() {
    if sled_only("channel secrets sealed with the data directory's key") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let keys = Keys::random();
    let sec = Secrets::new();
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let sink = SmtpSink::start(SinkScript {
        auth: Some(("mailer".into(), sec.smtp_password.clone())),
        ..Default::default()
    })
    .await;
    let mut app = TestApp::spawn_on(&dir, &keys);
    let ids = configure(&app, &sec, &hook_url(&hook), sink.port).await;
    assert_masked(&app, &sec).await;

    // a backup taken from the running server
    let live_backup = tmp.path().join("live.backup");
    let out = herald(
        &["backup", "--data-dir", p(&dir), "--to", p(&live_backup)],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(app.stop().success());

    // the data directory: no secret in any file, everything private
    let key_file = dir.join("secret.key");
    assert_eq!(mode(&key_file), 0o600, "the key file is private");
    let key_hex = std::fs::read_to_string(&key_file).unwrap();
    assert_eq!(key_hex.trim().len(), 64, "64 hex digits: {key_hex:?}");
    let key_bytes: Vec<u8> = (0..32)
        .map(|i| u8::from_str_radix(&key_hex.trim()[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let needles = sec.needles();
    let (files, dirs) = walk(&dir);
    assert!(files.len() >= 3, "sled's files, FORMAT, the key: {files:?}");
    for (f, m) in &files {
        assert_eq!(*m, 0o600, "{} is private", f.display());
        assert_holds_none(f, &needles);
    }
    for (d, m) in &dirs {
        assert_eq!(*m, 0o700, "{} is private", d.display());
    }

    // a backup of the stopped data directory; neither backup holds a secret or the key
    let cold_backup = tmp.path().join("cold.backup");
    let out = herald(
        &["backup", "--data-dir", p(&dir), "--to", p(&cold_backup)],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let mut with_key = needles.clone();
    with_key.push(("the key (hex)".into(), key_hex.trim().as_bytes().to_vec()));
    with_key.push(("the key".into(), key_bytes));
    for b in [&live_backup, &cold_backup] {
        assert_eq!(mode(b), 0o600, "{} is private", b.display());
        assert_holds_none(b, &with_key);
    }

    // restarted: the sealed secrets open (a signed webhook, SMTP AUTH)
    let mut app = TestApp::spawn_on(&dir, &keys);
    assert_masked(&app, &sec).await;
    assert_secrets_used(&app, &hook, &sink, &sec, (&ids.0, &ids.1)).await;
    assert!(app.stop().success());

    // restored without the key file: refused with a clear message; with it: works
    let restored = tmp.path().join("restored");
    let out = herald(
        &[
            "restore",
            "--from",
            p(&cold_backup),
            "--data-dir",
            p(&restored),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        out.stdout.contains("secret key"),
        "restore says what to do: {out:?}"
    );
    assert_eq!(mode(&restored), 0o700);
    let out = herald(
        &["serve", "--bind", "127.0.0.1:0", "--data-dir", p(&restored)],
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        out.stderr.contains("does not exist") && out.stderr.contains("secret.key"),
        "{out:?}"
    );
    std::fs::copy(&key_file, restored.join("secret.key")).unwrap();
    let mut app = TestApp::spawn_on(&restored, &keys);
    assert_secrets_used(&app, &hook, &sink, &sec, (&ids.0, &ids.1)).await;
    assert!(app.stop().success());

    // another key: refused at start, exit 1, and the key file is left alone
    let wrong = tmp.path().join("wrong.key");
    std::fs::write(&wrong, format!("{}\n", random_hex().repeat(2))).unwrap();
    assert_eq!(std::fs::read_to_string(&wrong).unwrap().trim().len(), 64);
    let out = herald(
        &[
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--data-dir",
            p(&dir),
            "--secret-key-file",
            p(&wrong),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stderr.contains("is not the key"), "{out:?}");
    assert!(!out.stdout.contains("listening on"), "{out:?}");
    // a malformed key file: refused too
    std::fs::write(&wrong, "not a key").unwrap();
    let out = herald(
        &["serve", "--bind", "127.0.0.1:0", "--data-dir", p(&dir)],
        &[("HERALD_SECRET_KEY_FILE", p(&wrong))],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stderr.contains("64 hexadecimal digits"), "{out:?}");
}

#[tokio::test]
async fn secrets_key_file_outside_the_data_dir_by_env() {
    if sled_only("channel secrets sealed with the data directory's key") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let key = tmp.path().join("keys/herald.key");
    let keys = Keys::random();
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let (secret, hmac_key) = webhook_secret();
    let env = [("HERALD_SECRET_KEY_FILE", p(&key))];
    let start = |env: &[(&str, &str)]| {
        TestApp::start(ServeOptions {
            data_dir: &dir,
            bootstrap: Some(&keys),
            args: &[],
            env,
            default_flags: true,
        })
    };
    let mut app = start(&env).unwrap();
    assert_eq!(mode(&key), 0o600, "created private where the setting says");
    assert_eq!(mode(key.parent().unwrap()), 0o700);
    assert!(
        !dir.join("secret.key").exists(),
        "no second key in the data dir"
    );
    let c = create_webhook_channel(&app, &hook_url(&hook), Some(&secret)).await;
    assert!(app.stop().success());

    // the default place has no key, and secrets are sealed: refused
    let e = start(&[]).err().expect("no key: no start");
    assert!(e.contains("does not exist"), "{e}");
    assert!(!dir.join("secret.key").exists(), "no new key made");

    let mut app = start(&env).unwrap();
    let (ext, _) = app.create_user("k", json!({})).await;
    let flow = template_flow(&app, &s(&c["id"]), json!({"body": "x"})).await;
    let d = deliver_once(&app, &flow, &ext, json!({})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_signed(&requests_for(&hook, &s(&d["id"])).await[0], &hmac_key);
    assert!(app.stop().success());
}

async fn put_config(app: &TestApp, id: &str, config: Value) -> Resp {
    app.admin(PUT, &format!("{A}/channels/{id}"))
        .json(&json!({ "config": config }))
        .go()
        .await
}

#[track_caller]
fn assert_restate(r: &Resp, secret: &str) {
    let field = format!("config.{secret}");
    let v = assert_validation(r, &[(field.as_str(), "required")]);
    assert!(
        v.to_string().contains("again"),
        "the message says to send the secret again: {v}"
    );
}

#[tokio::test]
async fn secrets_must_be_restated_when_their_destination_changes() {
    let app = TestApp::spawn();
    let (a, b) = (mock_server().await, mock_server().await);
    for m in [&a, &b] {
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(201).set_body_json(json!({"sid": "SM1"})))
            .mount(m)
            .await;
    }
    let sid = "AC0123456789abcdef0123456789abcdef";
    let c = active_channel(
        &app,
        "sms",
        "twilio",
        json!({"account_sid": sid, "auth_token": "token-one", "from": "+15005550006",
            "base_url": a.uri(), "retry": quick_retry()}),
    )
    .await;
    let id = s(&c["id"]);

    // a new base_url with the mask, or without the token: refused, nothing changed
    let r = put_config(
        &app,
        &id,
        json!({"base_url": b.uri(), "auth_token": "********"}),
    )
    .await;
    assert_restate(&r, "auth_token");
    let r = put_config(&app, &id, json!({"base_url": b.uri()})).await;
    assert_restate(&r, "auth_token");
    let r = put_config(
        &app,
        &id,
        json!({"account_sid": "AC99", "auth_token": "********"}),
    )
    .await;
    assert_restate(&r, "auth_token");
    let r = app.admin(GET, &format!("{A}/channels/{id}")).go().await;
    assert_eq!(r.ok(200)["config"]["base_url"], json!(a.uri()), "{r}");
    // the same destination, a name, other fields: the mask keeps the token
    let r = put_config(
        &app,
        &id,
        json!({"base_url": a.uri(), "auth_token": "********",
        "from": "+15005550007"}),
    )
    .await;
    r.ok(200);
    let (ext, _) = app
        .create_user("sms", json!({"phone": "+14155550100"}))
        .await;
    let flow = template_flow(&app, &id, json!({"body": "code"})).await;
    let d = deliver_once(&app, &flow, &ext, json!({})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(received(&a).await.len(), 1);
    assert!(received(&b).await.is_empty(), "the token never went to b");

    // restated with the new base_url: accepted, and the new token goes there
    let r = put_config(
        &app,
        &id,
        json!({"base_url": b.uri(), "auth_token": "token-two"}),
    )
    .await;
    assert_eq!(r.ok(200)["config"]["auth_token"], json!("********"), "{r}");
    let d = deliver_once(&app, &flow, &ext, json!({})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    let rb = received(&b).await;
    assert_eq!(rb.len(), 1);
    let want = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{sid}:token-two"))
    );
    assert_eq!(req_header(&rb[0], "authorization"), Some(want));
    assert_eq!(received(&a).await.len(), 1, "nothing more to a");
    // removing base_url (back to api.twilio.com) is not a redirect elsewhere
    let r = put_config(
        &app,
        &id,
        json!({"base_url": null, "auth_token": "********"}),
    )
    .await;
    r.ok(200);

    // smtp: host, port (and tls, username) carry the password
    let smtp = active_channel(
        &app,
        "email",
        "smtp",
        json!({"host": "mail.example.com", "port": 587, "username": "u", "password": "pw-1",
            "from": "noreply@example.com"}),
    )
    .await;
    let sid_ = s(&smtp["id"]);
    let r = put_config(
        &app,
        &sid_,
        json!({"host": "evil.example.net", "password": "********"}),
    )
    .await;
    assert_restate(&r, "password");
    let r = put_config(&app, &sid_, json!({"port": 2525})).await;
    assert_restate(&r, "password");
    let r = put_config(&app, &sid_, json!({"tls": "none"})).await;
    assert_restate(&r, "password");
    let r = put_config(
        &app,
        &sid_,
        json!({"host": "mail2.example.com", "password": "pw-2"}),
    )
    .await;
    r.ok(200);
    let r = put_config(&app, &sid_, json!({"from": "other@example.com"})).await;
    r.ok(200);

    // webhook: a new url needs the secret again; without a secret, nothing to restate
    let (secret, _) = webhook_secret();
    let hook = create_webhook_channel(&app, "http://127.0.0.1:9/a", Some(&secret)).await;
    let hid = s(&hook["id"]);
    let r = put_config(
        &app,
        &hid,
        json!({"url": "http://127.0.0.1:9/b", "secret": "********"}),
    )
    .await;
    assert_restate(&r, "secret");
    let r = put_config(
        &app,
        &hid,
        json!({"url": "http://127.0.0.1:9/b", "secret": secret}),
    )
    .await;
    r.ok(200);
    let plain = create_webhook_channel(&app, "http://127.0.0.1:9/a", None).await;
    let r = put_config(
        &app,
        &s(&plain["id"]),
        json!({"url": "http://127.0.0.1:9/c"}),
    )
    .await;
    r.ok(200);

    // slack: the URL is the secret, so a new URL is always the secret restated
    let slack = active_channel(
        &app,
        "chat",
        "slack_webhook",
        json!({"url": "https://hooks.slack.com/services/T/B/one"}),
    )
    .await;
    let r = put_config(
        &app,
        &s(&slack["id"]),
        json!({"url": "https://hooks.slack.com/services/T/B/two"}),
    )
    .await;
    assert_eq!(r.ok(200)["config"]["url"], json!("********"), "{r}");

    // fcm and apns: where the signed tokens go
    let fcm = active_channel(
        &app,
        "mobile_push",
        "fcm",
        json!({"project_id": "herald-demo", "service_account": {
            "type": "service_account", "project_id": "herald-demo", "private_key_id": "k",
            "private_key": key_a().private_pem, "client_email": "h@herald-demo.iam.gserviceaccount.com"}}),
    )
    .await;
    let r = put_config(
        &app,
        &s(&fcm["id"]),
        json!({"token_url": "https://tokens.example.net/token"}),
    )
    .await;
    assert_restate(&r, "service_account");
    let apns_pem = {
        use p256::pkcs8::EncodePrivateKey;
        p256_pair()
            .0
            .to_pkcs8_pem(p256::pkcs8::LineEnding::LF)
            .unwrap()
            .to_string()
    };
    let apns = active_channel(
        &app,
        "mobile_push",
        "apns",
        json!({"team_id": "TEAM123456", "key_id": "KEY7654321", "private_key": apns_pem,
            "topic": "test.herald.app"}),
    )
    .await;
    let r = put_config(
        &app,
        &s(&apns["id"]),
        json!({"base_url": "https://apns.example.net", "private_key": "********"}),
    )
    .await;
    assert_restate(&r, "private_key");
    let r = put_config(
        &app,
        &s(&apns["id"]),
        json!({"base_url": "https://apns.example.net", "private_key": apns_pem}),
    )
    .await;
    r.ok(200);
}
