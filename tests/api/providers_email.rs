//! docs/API.md §7, email / `smtp`: a real SMTP exchange with an in-process sink on
//! 127.0.0.1 (`tls: "none"`): envelope, headers, plain and HTML parts,
//! `Message-ID: <DELIVERY_ID@herald>`, AUTH, and how SMTP replies map to
//! delivery outcomes.

use serde_json::{json, Value};

use crate::engine_helpers::*;
use crate::helpers::*;
use crate::providers_support::*;

#[tokio::test]
async fn providers_smtp_delivers_text_and_html_with_message_id() {
    let sink = SmtpSink::start(SinkScript::default()).await;
    let app = TestApp::spawn();
    let ch = active_channel(&app, "email", "smtp", smtp_config(&sink)).await;
    let flow = template_flow(
        &app,
        &s(&ch["id"]),
        json!({"subject": "Invoice {{ data.n }} is ready",
            "body": "Hello {{ recipient.first_name }}, invoice {{ data.n }} is ready.\n.dot line",
            "html": "<p>Hello <b>{{ recipient.first_name }}</b>, invoice {{ data.n }}.</p>"}),
    )
    .await;
    let (ext, _) = app
        .create_user(
            "mail",
            json!({"email": "ada@example.com", "first_name": "Ada", "last_name": "Lovelace"}),
        )
        .await;
    let d = deliver_once(&app, &flow, &ext, json!({"n": 42})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
    assert_eq!(d["error"], Value::Null, "{d}");
    let did = s(&d["id"]);

    let mails = sink.mails();
    assert_eq!(mails.len(), 1, "one message: {mails:?}");
    let m = &mails[0];
    // envelope
    assert_eq!(m.mail_from, "noreply@herald.test", "{m:?}");
    assert_eq!(m.rcpt_to, vec!["ada@example.com".to_string()], "{m:?}");
    assert!(!m.ehlo.is_empty(), "EHLO names the client: {m:?}");
    // headers
    let from = m.header("From").expect("From header");
    assert!(
        from.contains("<noreply@herald.test>") && from.contains("Herald"),
        "{from}"
    );
    let to = m.header("To").expect("To header");
    assert!(
        to.contains("<ada@example.com>") && to.contains("Ada Lovelace"),
        "{to}"
    );
    assert_eq!(m.header("Subject").as_deref(), Some("Invoice 42 is ready"));
    assert_eq!(
        m.header("Message-ID").as_deref(),
        Some(format!("<{did}@herald>").as_str()),
        "the delivery id is the Message-ID: {}",
        m.data
    );
    assert!(m.header("Date").is_some(), "{}", m.data);
    let ct = m.header("Content-Type").unwrap_or_default();
    assert!(ct.starts_with("multipart/alternative"), "{ct}");
    // parts: text first, then HTML (RFC 2046: the preferred last)
    let parts = mime_parts(&m.data);
    assert_eq!(parts.len(), 2, "{parts:?}");
    assert!(parts[0].0.starts_with("text/plain"), "{parts:?}");
    assert!(
        parts[0].1.contains("Hello Ada, invoice 42 is ready.") && parts[0].1.contains(".dot line"),
        "text part (dot-stuffing undone): {parts:?}"
    );
    assert!(parts[1].0.starts_with("text/html"), "{parts:?}");
    assert!(
        parts[1].1.contains("<p>Hello <b>Ada</b>, invoice 42.</p>"),
        "{parts:?}"
    );
    // the delivery shows what was rendered
    assert_eq!(d["data"]["subject"], json!("Invoice 42 is ready"), "{d}");
}

#[tokio::test]
async fn providers_smtp_plain_text_only_and_auth() {
    let sink = SmtpSink::start(SinkScript {
        auth: Some(("mailer".into(), "s3cret-pw".into())),
        ..Default::default()
    })
    .await;
    let app = TestApp::spawn();
    let mut cfg = smtp_config(&sink);
    cfg["username"] = json!("mailer");
    cfg["password"] = json!("s3cret-pw");
    let ch = active_channel(&app, "email", "smtp", cfg).await;
    assert_eq!(ch["config"]["password"], json!("********"), "{ch}");
    let flow = template_flow(
        &app,
        &s(&ch["id"]),
        json!({"subject": "Plain", "body": "Just text"}),
    )
    .await;
    let (ext, _) = app
        .create_user("plain", json!({"email": "bob@example.com"}))
        .await;
    let d = deliver_once(&app, &flow, &ext, json!({})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    let mails = sink.mails();
    assert_eq!(mails.len(), 1);
    let m = &mails[0];
    assert_eq!(
        m.auth,
        Some(("mailer".to_string(), "s3cret-pw".to_string())),
        "AUTH PLAIN with the channel's credentials"
    );
    assert!(
        m.header("Content-Type")
            .unwrap_or_default()
            .starts_with("text/plain"),
        "no HTML template: a single text part: {}",
        m.data
    );
    assert!(m.data.contains("Just text"), "{}", m.data);
    assert_eq!(
        m.header("Message-ID"),
        Some(format!("<{}@herald>", s(&d["id"])))
    );
    // the secret stays out of the server's output
    assert!(!app.output.text().contains("s3cret-pw"), "password logged");

    // wrong password: 535 -> provider_unauthorized at once
    let r = app
        .admin(PUT, &format!("{A}/channels/{}", s(&ch["id"])))
        .json(&json!({"config": {"password": "wrong"}}))
        .go()
        .await;
    r.ok(200);
    let d = deliver_once(&app, &flow, &ext, json!({})).await;
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("provider_unauthorized"), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
    assert_eq!(sink.mails().len(), 1, "nothing more accepted");
}

#[tokio::test]
async fn providers_smtp_missing_address_and_reply_codes() {
    // 1st RCPT: 550 (permanent), 2nd: 451 (transient), then accepted
    let sink = SmtpSink::start(SinkScript {
        rcpt_replies: vec![
            "550 5.1.1 No such user".into(),
            "451 4.3.0 Try again later".into(),
        ],
        ..Default::default()
    })
    .await;
    let app = TestApp::spawn();
    let ch = active_channel(&app, "email", "smtp", smtp_config(&sink)).await;
    let flow = template_flow(&app, &s(&ch["id"]), json!({"subject": "S", "body": "B"})).await;

    // no email: skipped with missing_address, nothing sent
    let (noaddr, _) = app.create_user("noaddr", json!({"first_name": "N"})).await;
    let d = deliver_once(&app, &flow, &noaddr, json!({})).await;
    assert_eq!(d["status"], json!("skipped"), "{d}");
    assert_eq!(d["error"]["code"], json!("missing_address"), "{d}");
    assert!(
        sink.commands().is_empty(),
        "no SMTP session for a skipped delivery"
    );

    let (ext, _) = app
        .create_user("codes", json!({"email": "carol@example.com"}))
        .await;
    // 550 on RCPT: permanent, failed after one attempt
    let d = deliver_once(&app, &flow, &ext, json!({})).await;
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("provider_rejected"), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
    assert!(
        d["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("550"),
        "{d}"
    );
    // 451 on RCPT: transient, retried, then sent
    let d = deliver_once(&app, &flow, &ext, json!({})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["attempts"], json!(2), "{d}");
    let mails = sink.mails();
    assert_eq!(mails.len(), 1, "{mails:?}");
    assert_eq!(
        mails[0].header("Message-ID"),
        Some(format!("<{}@herald>", s(&d["id"]))),
        "the retry carries the same Message-ID"
    );

    // nothing listening: transient until the attempts run out
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let r = app
        .admin(PUT, &format!("{A}/channels/{}", s(&ch["id"])))
        .json(&json!({"config": {"port": port}}))
        .go()
        .await;
    r.ok(200);
    let d = deliver_once(&app, &flow, &ext, json!({})).await;
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("provider_unavailable"), "{d}");
    assert_eq!(d["attempts"], json!(3), "{d}");
}
