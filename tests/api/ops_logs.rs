//! Logs (README, Operations): logs through `tracing`, JSON with `--log-format json`, human
//! otherwise; every request logs its request id (one span per request, one
//! completion line with status and latency); no secret is ever logged.

use std::time::Duration;

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

fn json_lines(app: &TestApp) -> Vec<Value> {
    app.output
        .stderr_lines()
        .into_iter()
        .map(|l| {
            serde_json::from_str::<Value>(&l)
                .unwrap_or_else(|e| panic!("a log line that is not JSON ({e}): {l}"))
        })
        .collect()
}

/// The `request completed` line of the request with id `rid`.
fn completion<'a>(lines: &'a [Value], rid: &str) -> &'a Value {
    lines
        .iter()
        .find(|l| {
            l["fields"]["message"] == json!("request completed")
                && l["span"]["request_id"] == json!(rid)
        })
        .unwrap_or_else(|| {
            panic!(
                "no `request completed` line for {rid}; lines:\n{}",
                lines
                    .iter()
                    .map(|l| l.to_string())
                    .collect::<Vec<_>>()
                    .join("\n")
            )
        })
}

#[tokio::test]
async fn json_logs_carry_the_request_id_and_never_a_secret() {
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let mut app = TestApp::spawn_with(&["--log-format", "json"], &[("RUST_LOG", "debug")]);

    // Admin API, with a request id of our own
    let r = app
        .admin(GET, &format!("{A}/users"))
        .header("x-request-id", "ops-log-admin-1")
        .go()
        .await;
    assert_eq!(r.status, 200, "{r}");
    let (ext, _) = app.create_user("logs", json!({"first_name": "Lou"})).await;

    // User API with a JWT and with a user id
    app.put_signing_key(&key_a().public_pem).await;
    let jwt = key_a().token(&ext);
    let r = app
        .user_jwt(GET, &format!("{U}/me"), &jwt)
        .header("x-request-id", "ops-log-user-jwt")
        .go()
        .await;
    assert_eq!(r.status, 200, "{r}");
    let r = app
        .user(GET, &format!("{U}/feed"), &ext)
        .header("x-request-id", "ops-log-user-id")
        .go()
        .await;
    assert_eq!(r.status, 200, "{r}");
    // a rejected secret key is not logged either
    let wrong_secret = format!("sk_test_{}", random_hex());
    let r = app
        .api(GET, &format!("{A}/users"))
        .header("x-service-secret-key", &wrong_secret)
        .header("x-request-id", "ops-log-bad-secret")
        .go()
        .await;
    assert_eq!(r.status, 401, "{r}");

    // a webhook channel with a secret, and a delivery through it
    let (webhook_secret, _) = webhook_secret();
    let ch = create_webhook_channel_with(
        &app,
        json!({"url": hook_url(&hook), "secret": webhook_secret}),
    )
    .await;
    let flow = active_flow(
        &app,
        "logs",
        json!([channel_step(
            &s(&ch["id"]),
            Some("Hi"),
            "Hello {{ recipient.first_name }}"
        )]),
    )
    .await;
    let (_, n) = run_one(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}]}),
    )
    .await;
    let d = wait_delivery_final(&app, &s(&delivery_of(&n, "chat")["id"]), 30).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    // a generated key pair: the private key is returned once, never logged
    let r = app
        .admin(POST, &format!("{A}/project/signing_key"))
        .go()
        .await;
    let private_key = r.ok(201)["private_key"].as_str().unwrap().to_string();

    tokio::time::sleep(Duration::from_millis(300)).await;
    let status = app.stop();
    assert!(status.success(), "{status}");
    std::thread::sleep(Duration::from_millis(200));

    let lines = json_lines(&app);
    assert!(lines.len() > 10, "debug logging produced lines");
    for l in &lines {
        assert!(l["timestamp"].is_string() && l["level"].is_string(), "{l}");
    }
    let admin = completion(&lines, "ops-log-admin-1");
    assert_eq!(admin["level"], json!("INFO"), "{admin}");
    assert_eq!(admin["fields"]["status"], json!(200), "{admin}");
    assert!(admin["fields"]["latency_ms"].is_number(), "{admin}");
    assert_eq!(admin["span"]["method"], json!("GET"), "{admin}");
    assert_eq!(admin["span"]["route"], json!("/admin/v1/users"), "{admin}");
    assert!(
        admin["span"]["project_id"]
            .as_str()
            .is_some_and(|p| p.len() == 36),
        "project id on the span: {admin}"
    );
    let jwt_line = completion(&lines, "ops-log-user-jwt");
    assert_eq!(
        jwt_line["span"]["route"],
        json!("/user/v1/me"),
        "{jwt_line}"
    );
    assert_eq!(
        jwt_line["span"]["project_id"], admin["span"]["project_id"],
        "{jwt_line}"
    );
    completion(&lines, "ops-log-user-id");
    let bad = completion(&lines, "ops-log-bad-secret");
    assert_eq!(bad["fields"]["status"], json!(401), "{bad}");
    // every request logged a completion line with its own request id
    let completed: Vec<&Value> = lines
        .iter()
        .filter(|l| l["fields"]["message"] == json!("request completed"))
        .collect();
    assert!(completed.len() >= 10, "{}", completed.len());
    for l in &completed {
        assert!(
            l["span"]["request_id"]
                .as_str()
                .is_some_and(|s| !s.is_empty()),
            "{l}"
        );
    }

    let everything = app.output.text();
    let b64 = webhook_secret.trim_start_matches("whsec_").to_string();
    let private_body: String = private_key
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .take(2)
        .collect();
    for (what, secret) in [
        ("the bootstrap secret key", app.secret_key.as_str()),
        ("a rejected secret key", wrong_secret.as_str()),
        ("the user JWT", jwt.as_str()),
        ("the webhook secret", webhook_secret.as_str()),
        ("the webhook secret's key", b64.as_str()),
        ("a generated private key", private_body.as_str()),
    ] {
        assert!(!secret.is_empty());
        assert!(
            !everything.contains(secret),
            "{what} appears in the logs:\n{}",
            everything
                .lines()
                .filter(|l| l.contains(secret))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    // the JWT's signature part alone neither
    let sig = jwt.rsplit('.').next().unwrap();
    assert!(
        !everything.contains(sig),
        "the JWT signature appears in the logs"
    );
}

#[tokio::test]
async fn human_logs_by_default_with_request_id() {
    let mut app = TestApp::spawn_with(&[], &[("RUST_LOG", "info")]);
    let r = app
        .request(GET, "/healthz")
        .header("x-request-id", "ops-log-human-1")
        .go()
        .await;
    assert_eq!(r.status, 200, "{r}");
    assert_eq!(r.header("x-request-id").as_deref(), Some("ops-log-human-1"));
    tokio::time::sleep(Duration::from_millis(200)).await;
    app.stop();
    std::thread::sleep(Duration::from_millis(100));
    let stderr = app.output.stderr_lines();
    let line = stderr
        .iter()
        .find(|l| l.contains("request completed") && l.contains("ops-log-human-1"))
        .unwrap_or_else(|| panic!("no completion line:\n{}", stderr.join("\n")));
    assert!(
        !line.trim_start().starts_with('{'),
        "human, not JSON: {line}"
    );
    assert!(line.contains("INFO"), "{line}");
    assert!(line.contains("status=200"), "{line}");
    assert!(line.contains("route=/healthz"), "{line}");
    assert!(line.contains("method=GET"), "{line}");
    assert!(
        !line.contains('\x1b'),
        "no colour codes when not a terminal: {line:?}"
    );
}

/// The human format printed `project_id=…` twice on every request line
/// (the field was recorded by the auth layer and again at completion).
#[tokio::test]
async fn human_logs_name_the_project_once_per_line() {
    let mut app = TestApp::spawn_with(&[], &[("RUST_LOG", "info")]);
    let r = app
        .admin(GET, &format!("{A}/users"))
        .header("x-request-id", "ops-log-human-project")
        .go()
        .await;
    assert_eq!(r.status, 200, "{r}");
    app.create_user_as("log-once", json!({"first_name": "Lou"}))
        .await;
    let r = app
        .user(GET, &format!("{U}/feed"), "log-once")
        .header("x-request-id", "ops-log-human-user")
        .go()
        .await;
    assert_eq!(r.status, 200, "{r}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    app.stop();
    std::thread::sleep(Duration::from_millis(100));
    let stderr = app.output.stderr_lines();
    for rid in ["ops-log-human-project", "ops-log-human-user"] {
        let line = stderr
            .iter()
            .find(|l| l.contains("request completed") && l.contains(rid))
            .unwrap_or_else(|| panic!("no completion line for {rid}:\n{}", stderr.join("\n")));
        assert_eq!(
            line.matches("project_id=").count(),
            1,
            "project_id once on the line: {line}"
        );
    }
}
