//! The configuration reference in `docs/channels/`. Every page names
//! every config field `/openapi.json` describes for its providers, shows a
//! channel, a flow step and a run, and explains delivery errors; README links
//! each page. The webhook page's signature-verification snippets (Python and
//! JavaScript) are run, as extracted from the Markdown, against a request
//! Herald really sent.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The fenced block right after the `<!-- tested: NAME … -->` marker.
fn tested_block(md: &str, name: &str) -> String {
    let marker = format!("<!-- tested: {name} ");
    let at = md
        .find(&marker)
        .unwrap_or_else(|| panic!("no block marked {name}"));
    let rest = &md[at..];
    let open = rest.find("\n```").expect("a fence after the marker") + 4;
    let body_start = open + rest[open..].find('\n').expect("fence line") + 1;
    let end = rest[body_start..].find("\n```").expect("closing fence");
    rest[body_start..body_start + end + 1].to_string()
}

/// Page -> providers it documents.
const PAGES: &[(&str, &[&str])] = &[
    (
        "docs/channels/email.md",
        &["smtp", "sendgrid", "postmark", "mailgun", "resend", "ses"],
    ),
    ("docs/channels/sms.md", &["twilio", "vonage", "messagebird"]),
    (
        "docs/channels/chat.md",
        &["webhook", "slack_webhook", "slack", "discord", "teams"],
    ),
    ("docs/channels/web_push.md", &["web_push"]),
    ("docs/channels/mobile_push.md", &["fcm", "apns", "expo"]),
    ("docs/channels/in_app.md", &["in_app"]),
];

#[tokio::test]
async fn channel_pages_document_every_config_field_and_are_linked() {
    let app = TestApp::spawn();
    let r = app.request(GET, "/openapi.json").go().await;
    let doc = r.ok(200);
    let alternatives = doc["components"]["schemas"]["ChannelInput"]["oneOf"]
        .as_array()
        .expect("ChannelInput.oneOf")
        .clone();
    let readme = read("README.md");
    let channels = &readme[readme
        .find("\n## Channels and providers")
        .expect("README: Channels and providers")..];
    let mut covered = vec![];
    for (page, providers) in PAGES {
        let md = read(page);
        let file = Path::new(page).file_name().unwrap().to_str().unwrap();
        assert!(
            channels.contains(&format!("(docs/channels/{file})")),
            "README's Channels and providers links {page}"
        );
        for needle in [
            "/admin/v1/channels",
            "/admin/v1/flows",
            "/run",
            "error.code",
            "curl",
        ] {
            assert!(md.contains(needle), "{page} mentions {needle}");
        }
        for p in *providers {
            covered.push(p.to_string());
            let alt = alternatives
                .iter()
                .find(|a| a["properties"]["provider"]["const"] == json!(p))
                .unwrap_or_else(|| panic!("no ChannelInput alternative for {p}"));
            let reference = alt["properties"]["config"]["$ref"].as_str().unwrap();
            let config = doc
                .pointer(reference.trim_start_matches('#'))
                .expect("config schema");
            for (field, schema) in config["properties"].as_object().unwrap() {
                assert!(
                    md.contains(&format!("`{field}`")),
                    "{page} documents {p}'s config field `{field}`"
                );
                if schema["writeOnly"] == json!(true) {
                    assert!(md.contains("********"), "{page} says how secrets read back");
                }
            }
            assert!(
                md.contains(&format!("\"provider\":\"{p}\"")) || *p == "in_app",
                "{page}: a {p} channel is created"
            );
        }
    }
    assert_eq!(
        covered.len(),
        alternatives.len(),
        "every provider has a page"
    );
}

/// Runs `interpreter script dir` and returns its stdout.
fn run_snippet(interpreter: &str, script: &Path, dir: &Path) -> String {
    let mut cmd = Command::new(interpreter);
    cmd.arg(script).arg(dir).stdin(Stdio::null());
    let out = run_with_timeout(cmd, Duration::from_secs(30));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{interpreter} {script:?}: {out:?}"
    );
    out.stdout.trim().to_string()
}

#[tokio::test]
async fn webhook_page_snippets_verify_a_signature_herald_sent() {
    let md = read("docs/channels/chat.md");
    let python = tested_block(&md, "verify-webhook-python");
    let js = tested_block(&md, "verify-webhook-js");
    assert!(python.contains("def verify_webhook("), "{python}");
    assert!(js.contains("function verifyWebhook("), "{js}");

    // a real delivery to a local listener, signed with a secret made as the page says
    let server = mock_server().await;
    mock_always(&server, 204).await;
    let app = TestApp::spawn();
    let (secret, _) = webhook_secret();
    let ch = create_webhook_channel(&app, &hook_url(&server), Some(&secret)).await;
    let flow = active_flow(
        &app,
        "docs-hook",
        json!([channel_step(
            &s(&ch["id"]),
            Some("Hi"),
            "Hello {{ recipient.first_name }} ✓"
        )]),
    )
    .await;
    let (ext, _) = app
        .create_user("docs-hook", json!({"first_name": "Zoë"}))
        .await;
    run_flow(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}]}),
    )
    .await;
    let d = Deadline::new("the webhook request", 20);
    let req = loop {
        if let Some(r) = received(&server).await.into_iter().next() {
            break r;
        }
        d.tick("no request yet").await;
    };

    // what a receiver has: the headers (lower-case names) and the raw body
    let dir = tempfile::tempdir().expect("tempdir");
    let mut headers = serde_json::Map::new();
    for h in ["webhook-id", "webhook-timestamp", "webhook-signature"] {
        let v = req_header(&req, h).unwrap_or_else(|| panic!("{h} header"));
        headers.insert(h.into(), Value::String(v));
    }
    std::fs::write(
        dir.path().join("headers.json"),
        Value::Object(headers).to_string(),
    )
    .unwrap();
    std::fs::write(dir.path().join("body.bin"), &req.body).unwrap();
    std::fs::write(dir.path().join("secret"), &secret).unwrap();
    let (other, _) = webhook_secret();
    std::fs::write(dir.path().join("other-secret"), &other).unwrap();

    // each snippet, verbatim, then a few lines that feed it the request; it must
    // accept the request and refuse a changed body and another secret
    let py = dir.path().join("verify.py");
    std::fs::write(
        &py,
        format!(
            "{python}\n\
import json, pathlib, sys\n\
d = pathlib.Path(sys.argv[1])\n\
h = json.loads((d / 'headers.json').read_text())\n\
body = (d / 'body.bin').read_bytes()\n\
secret = (d / 'secret').read_text()\n\
other = (d / 'other-secret').read_text()\n\
print(verify_webhook(secret, h, body), verify_webhook(secret, h, body + b' '), verify_webhook(other, h, body))\n"
        ),
    )
    .unwrap();
    assert_eq!(run_snippet("python3", &py, dir.path()), "True False False");

    let node = dir.path().join("verify.cjs");
    std::fs::write(
        &node,
        format!(
            "{js}\n\
const fs = require('node:fs');\n\
const path = require('node:path');\n\
const d = process.argv[2];\n\
const h = JSON.parse(fs.readFileSync(path.join(d, 'headers.json'), 'utf8'));\n\
const body = fs.readFileSync(path.join(d, 'body.bin'));\n\
const secret = fs.readFileSync(path.join(d, 'secret'), 'utf8');\n\
const other = fs.readFileSync(path.join(d, 'other-secret'), 'utf8');\n\
console.log([verifyWebhook(secret, h, body), verifyWebhook(secret, h, Buffer.concat([body, Buffer.from(' ')])), verifyWebhook(other, h, body)].join(' '));\n"
        ),
    )
    .unwrap();
    assert_eq!(run_snippet("node", &node, dir.path()), "true false false");
}

/// Every ```` ```sh ```` block of a page, in order.
fn sh_blocks(md: &str) -> Vec<String> {
    let mut out = vec![];
    let mut rest = md;
    while let Some(i) = rest.find("\n```sh\n") {
        let start = i + "\n```sh\n".len();
        let end = rest[start..].find("\n```").expect("closing fence");
        out.push(rest[start..start + end].to_string());
        rest = &rest[start + end..];
    }
    out
}

/// Each page's shell examples, run as written (`bash -e -o pipefail`, curl and
/// python3) against a server: only the first line's keys and address are
/// replaced, and the files the mobile push examples read (a service-account
/// key file, an APNs .p8 key) are made in the working directory. No request
/// may answer an error, and every flow the page activates is active.
#[tokio::test]
async fn channel_pages_examples_run_as_written() {
    let app = TestApp::spawn();
    let work = tempfile::tempdir().expect("tempdir");
    let account = json!({"type": "service_account", "project_id": "my-app", "private_key_id": "kid-1",
        "private_key": key_a().private_pem, "client_email": "herald@my-app.iam.gserviceaccount.com",
        "token_uri": "https://oauth2.googleapis.com/token"});
    std::fs::write(
        work.path().join("service-account.json"),
        account.to_string(),
    )
    .unwrap();
    let p8 = {
        use p256::pkcs8::EncodePrivateKey;
        crate::providers_support::p256_pair()
            .0
            .to_pkcs8_pem(p256::pkcs8::LineEnding::LF)
            .unwrap()
            .to_string()
    };
    std::fs::write(work.path().join("AuthKey_KEY1234567.p8"), p8).unwrap();
    let first = "PK=pk_…; SK=sk_…; H=http://127.0.0.1:8080";
    for (page, _) in PAGES {
        let script = sh_blocks(&read(page)).join("\n");
        assert!(
            script.contains(first),
            "{page}: the example names the keys with {first}"
        );
        let script = script.replacen(
            first,
            &format!(
                "PK={}; SK={}; H={}",
                app.public_key, app.secret_key, app.address
            ),
            1,
        );
        let mut cmd = Command::new("bash");
        cmd.arg("-e")
            .arg("-o")
            .arg("pipefail")
            .arg("-c")
            .arg(&script)
            .current_dir(work.path())
            .stdin(Stdio::null());
        for v in [
            "http_proxy",
            "https_proxy",
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "ALL_PROXY",
            "all_proxy",
        ] {
            cmd.env_remove(v);
        }
        let out = run_with_timeout(cmd, Duration::from_secs(60));
        assert_eq!(out.status.code(), Some(0), "{page}: {out:?}");
        assert!(
            // an API error is a top-level `{"error": {...}}` (a delivery's own
            // `error` member, e.g. a DNS failure of example.com, is no failure)
            !out.stdout.contains("{\"error\":{"),
            "{page}: a request answered an error: {}",
            out.stdout
        );
        let mut activated = 0;
        for part in script.split("/admin/v1/flows/").skip(1) {
            // `HANDLE/activate`: that flow must now be active
            let Some((handle, _)) = part.split_once("/activate") else {
                continue;
            };
            if handle.is_empty() || handle.contains(['/', ' ', '\n', '"', '\'']) {
                continue;
            }
            let r = app.admin(GET, &format!("{A}/flows/{handle}")).go().await;
            assert_eq!(
                r.ok(200)["status"],
                json!("active"),
                "{page}: flow {handle}"
            );
            activated += 1;
        }
        assert!(activated >= 1, "{page}: activates a flow");
    }
}
