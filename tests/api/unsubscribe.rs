//! One-click unsubscribe (docs/API.md §6 "One-click unsubscribe", RFC
//! 8058): a commercial flow's email carries `List-Unsubscribe` and
//! `List-Unsubscribe-Post` through SMTP and every HTTP email provider, a
//! transactional flow's neither; `{{ unsubscribe_url }}` is the header's
//! link; `POST /u/TOKEN` turns that flow's email off (the next run's email
//! is skipped, the preferences show it off), idempotently; a tampered token
//! changes nothing; `GET /u/TOKEN` is a page whose form posts to itself;
//! and a commercial flow is active only on a server with a public URL.

use serde_json::{json, Value};
use wiremock::matchers::method;
use wiremock::{Mock, Request, ResponseTemplate};

use crate::engine_helpers::*;
use crate::helpers::*;
use crate::providers_support::*;

/// The public URL the servers of these tests are given: mail links start
/// with it; the tests post to the server's own address.
const PUBLIC: &str = "https://mail.herald.test";

fn spawn_public() -> TestApp {
    TestApp::spawn_with(&["--public-url", PUBLIC], &[])
}

/// A flow of one email step on `channel`, `commercial` or not, active.
async fn email_flow(app: &TestApp, channel: &str, commercial: bool) -> Value {
    let steps = json!([{"type": "channel", "channel_id": channel, "template": {
        "subject": "News", "body": "Bye: {{ unsubscribe_url }}",
        "html": "<p><a href=\"{{ unsubscribe_url }}\">Unsubscribe</a></p>"}}]);
    let h = handle("news");
    let f = app
        .admin(POST, &format!("{A}/flows"))
        .json(
            &json!({"handle": h, "name": "News & <b>deals</b>", "steps": steps,
                      "commercial": commercial}),
        )
        .go()
        .await
        .ok(201);
    assert_eq!(f["commercial"], json!(commercial), "{f}");
    activate(app, &s(&f["id"])).await
}

/// The token of a `List-Unsubscribe` value `<PUBLIC/u/TOKEN>`.
fn token_of(header: &str) -> String {
    let url = header
        .strip_prefix('<')
        .and_then(|h| h.strip_suffix('>'))
        .unwrap_or_else(|| panic!("not <URL>: {header}"));
    url.strip_prefix(&format!("{PUBLIC}/u/"))
        .unwrap_or_else(|| panic!("not a link of {PUBLIC}: {url}"))
        .to_string()
}

/// `POST /u/{token}` as a mail client sends it (RFC 8058).
async fn one_click(app: &TestApp, token: &str) -> Resp {
    app.request(POST, &format!("/u/{token}"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("List-Unsubscribe=One-Click")
        .go()
        .await
}

fn prefs_path(ext: &str) -> String {
    format!("{A}/users/{}/preferences", enc(ext))
}

/// The user's effective setting of the flow's email (on when nothing is set).
async fn flow_email(app: &TestApp, ext: &str, flow: &Value) -> Value {
    let p = app.admin(GET, &prefs_path(ext)).go().await.ok(200);
    p["flows"][s(&flow["handle"])]["channel_types"]["email"].clone()
}

#[track_caller]
fn assert_link_not_found(r: &Resp) {
    let d = assert_error(r, 404, "not_found");
    assert_eq!(d["resource"], json!("unsubscribe_link"), "{r}");
}

/// SMTP: both headers on a commercial flow's mail, `{{ unsubscribe_url }}`
/// is the header's link (the stored content keeps the mark), the POST
/// turns the flow's email off (twice is fine), the next run's email is
/// skipped by preference; a transactional flow's mail has neither header.
#[tokio::test]
async fn unsubscribe_smtp_headers_link_and_one_click_post() {
    let sink = SmtpSink::start(SinkScript::default()).await;
    let app = spawn_public();
    let ch = active_channel(&app, "email", "smtp", smtp_config(&sink)).await;
    let commercial = email_flow(&app, &s(&ch["id"]), true).await;
    let transactional = email_flow(&app, &s(&ch["id"]), false).await;
    let (ext, _) = app
        .create_user("unsub", json!({"email": "ada@example.com"}))
        .await;

    let d = deliver_once(&app, &commercial, &ext, json!({})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    let mails = sink.mails();
    assert_eq!(mails.len(), 1, "{mails:?}");
    let m = &mails[0];
    let lu = m.header("List-Unsubscribe").expect("List-Unsubscribe");
    assert_eq!(
        m.header("List-Unsubscribe-Post").as_deref(),
        Some("List-Unsubscribe=One-Click"),
        "{}",
        m.data
    );
    let token = token_of(&lu);
    // the text part, quoted-printable undone, carries the same link
    let text = m.data.replace("=\r\n", "").replace("=3D", "=");
    assert!(
        text.contains(&format!("Bye: {PUBLIC}/u/{token}")),
        "{{{{ unsubscribe_url }}}} is the header's link: {text}"
    );
    // stored: the mark, never the link
    let stored = app
        .admin(GET, &format!("{A}/deliveries/{}", s(&d["id"])))
        .go()
        .await
        .ok(200);
    assert_eq!(
        stored["data"]["body"],
        json!("Bye: herald:unsubscribe_url"),
        "{stored}"
    );

    // a transactional flow's mail: neither header, an empty link
    let t = deliver_once(&app, &transactional, &ext, json!({})).await;
    assert_eq!(t["status"], json!("sent"), "{t}");
    let mails = sink.mails();
    assert_eq!(mails.len(), 2, "{mails:?}");
    assert_eq!(
        mails[1].header("List-Unsubscribe"),
        None,
        "{}",
        mails[1].data
    );
    assert_eq!(mails[1].header("List-Unsubscribe-Post"), None);

    // the one-click POST: 200, the flow's email off; again: 200, the same
    assert_eq!(flow_email(&app, &ext, &commercial).await, json!(true));
    for _ in 0..2 {
        let r = one_click(&app, &token).await;
        assert_eq!(r.status, 200, "{r}");
        assert_eq!(flow_email(&app, &ext, &commercial).await, json!(false));
    }
    // the transactional flow is untouched
    assert_eq!(flow_email(&app, &ext, &transactional).await, json!(true));
    // the next run's email is skipped by preference, the other flow's goes
    let d = deliver_once(&app, &commercial, &ext, json!({})).await;
    assert_eq!(d["status"], json!("skipped"), "{d}");
    assert_eq!(d["error"]["code"], json!("preference"), "{d}");
    let t = deliver_once(&app, &transactional, &ext, json!({})).await;
    assert_eq!(t["status"], json!("sent"), "{t}");
}

/// A tampered, malformed or foreign token is 404 and changes nothing; so
/// is the token of a user deleted since. A body-less POST unsubscribes.
#[tokio::test]
async fn unsubscribe_refuses_tampered_tokens_and_changes_nothing() {
    let sink = SmtpSink::start(SinkScript::default()).await;
    let app = spawn_public();
    let ch = active_channel(&app, "email", "smtp", smtp_config(&sink)).await;
    let flow = email_flow(&app, &s(&ch["id"]), true).await;
    let (ext, _) = app
        .create_user("unsub", json!({"email": "ada@example.com"}))
        .await;
    let d = deliver_once(&app, &flow, &ext, json!({})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    let token = token_of(&sink.mails()[0].header("List-Unsubscribe").unwrap());

    // one character changed, anywhere: refused
    let mut bad = token.clone().into_bytes();
    for at in [0, 10, 40, bad.len() - 2] {
        let was = bad[at];
        bad[at] = if was == b'A' { b'B' } else { b'A' };
        let t = String::from_utf8(bad.clone()).unwrap();
        assert_link_not_found(&one_click(&app, &t).await);
        assert_link_not_found(&app.request(GET, &format!("/u/{t}")).go().await);
        bad[at] = was;
    }
    for t in ["x", "not-a-token", &token[..token.len() - 4]] {
        assert_link_not_found(&one_click(&app, t).await);
    }
    // another server's token (its own stored key)
    let other = spawn_public();
    let och = active_channel(&other, "email", "smtp", smtp_config(&sink)).await;
    let oflow = email_flow(&other, &s(&och["id"]), true).await;
    let (oext, _) = other
        .create_user("unsub", json!({"email": "bob@example.com"}))
        .await;
    let od = deliver_once(&other, &oflow, &oext, json!({})).await;
    assert_eq!(od["status"], json!("sent"), "{od}");
    let mails = sink.mails();
    let foreign = token_of(&mails.last().unwrap().header("List-Unsubscribe").unwrap());
    assert_link_not_found(&one_click(&app, &foreign).await);
    // nothing changed
    assert_eq!(flow_email(&app, &ext, &flow).await, json!(true));

    // a POST without a body works
    let r = app.request(POST, &format!("/u/{token}")).go().await;
    assert_eq!(r.status, 200, "{r}");
    assert_eq!(flow_email(&app, &ext, &flow).await, json!(false));

    // a user deleted since: as a bad token
    app.admin(DELETE, &format!("{A}/users/{}", enc(&ext)))
        .go()
        .await
        .ok(204);
    assert_link_not_found(&one_click(&app, &token).await);
    assert_link_not_found(&app.request(GET, &format!("/u/{token}")).go().await);
}

/// `GET /u/TOKEN`: a page under the preference page's headers whose form
/// posts to the same URL; the form's POST with `Accept: text/html` gets
/// the "unsubscribed" page.
#[tokio::test]
async fn unsubscribe_page_shows_a_form_posting_to_itself() {
    let sink = SmtpSink::start(SinkScript::default()).await;
    let app = spawn_public();
    let ch = active_channel(&app, "email", "smtp", smtp_config(&sink)).await;
    let flow = email_flow(&app, &s(&ch["id"]), true).await;
    let (ext, _) = app
        .create_user("unsub", json!({"email": "ada@example.com"}))
        .await;
    deliver_once(&app, &flow, &ext, json!({})).await;
    let token = token_of(&sink.mails()[0].header("List-Unsubscribe").unwrap());

    let r = app.request(GET, &format!("/u/{token}")).go().await;
    assert_eq!(r.status, 200, "{r}");
    let csp = r.header("content-security-policy").unwrap_or_default();
    assert!(csp.contains("default-src 'none'"), "{csp}");
    assert!(csp.contains("form-action 'self'"), "{csp}");
    assert_eq!(r.header("cache-control").as_deref(), Some("no-store"));
    assert_eq!(r.header("referrer-policy").as_deref(), Some("no-referrer"));
    let html = r.text.clone();
    // a form without an action posts to the page's own URL
    assert!(html.contains("<form method=\"post\">"), "{html}");
    assert!(!html.contains("action="), "{html}");
    assert!(!html.contains("<script"), "{html}");
    // the flow's name, escaped
    assert!(
        html.contains("News &amp; &lt;b&gt;deals&lt;/b&gt;"),
        "{html}"
    );
    // a GET changes nothing (link scanners fetch links)
    assert_eq!(flow_email(&app, &ext, &flow).await, json!(true));

    // the form's post, as a browser sends it
    let r = app
        .request(POST, &format!("/u/{token}"))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "text/html,application/xhtml+xml")
        .body("List-Unsubscribe=One-Click")
        .go()
        .await;
    assert_eq!(r.status, 200, "{r}");
    assert!(
        r.header("content-type")
            .unwrap_or_default()
            .starts_with("text/html"),
        "{r}"
    );
    assert!(r.text.contains("You are unsubscribed"), "{r}");
    assert_eq!(flow_email(&app, &ext, &flow).await, json!(false));
    // the preference page's stylesheet, which the page links, is there
    let css = app.request(GET, "/p/preferences.css").go().await;
    assert_eq!(css.status, 200);
}

/// Without `--public-url`, a commercial flow is not activated (409
/// `public_url_required`), neither is an active flow made commercial; a
/// draft may be commercial. A critical flow is not commercial (422).
#[tokio::test]
async fn unsubscribe_commercial_flows_need_a_public_url() {
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let steps = json!([channel_step(&inapp, None, "Hi")]);
    let draft = app
        .admin(POST, &format!("{A}/flows"))
        .json(&json!({"handle": handle("c"), "name": "c", "steps": steps, "commercial": true}))
        .go()
        .await
        .ok(201);
    assert_eq!(draft["commercial"], json!(true), "{draft}");
    assert_eq!(draft["status"], json!("draft"), "{draft}");
    let r = app
        .admin(POST, &format!("{A}/flows/{}/activate", s(&draft["id"])))
        .go()
        .await;
    let d = assert_conflict(&r, "public_url_required");
    assert_eq!(d["resource"], json!("flow"), "{r}");
    assert_eq!(d["id"], draft["id"], "{r}");
    let f = app
        .admin(GET, &format!("{A}/flows/{}", s(&draft["id"])))
        .go()
        .await
        .ok(200);
    assert_eq!(f["status"], json!("draft"), "unchanged: {f}");

    // an active transactional flow made commercial: refused, unchanged
    let active = active_flow(&app, "t", steps.clone()).await;
    assert_eq!(active["commercial"], json!(false), "{active}");
    let r = app
        .admin(PUT, &format!("{A}/flows/{}", s(&active["id"])))
        .json(&json!({"commercial": true}))
        .go()
        .await;
    assert_conflict(&r, "public_url_required");
    let f = app
        .admin(GET, &format!("{A}/flows/{}", s(&active["id"])))
        .go()
        .await
        .ok(200);
    assert_eq!(f["commercial"], json!(false), "{f}");

    // critical and commercial: 422 at `commercial`
    let r = app
        .admin(POST, &format!("{A}/flows"))
        .json(
            &json!({"handle": handle("cc"), "name": "cc", "steps": steps,
                      "commercial": true, "critical": true}),
        )
        .go()
        .await;
    assert_validation(&r, &[("commercial", "exclusion")]);

    // with a public URL the same flow activates
    let app = spawn_public();
    let inapp = in_app_channel(&app).await;
    let f = app
        .admin(POST, &format!("{A}/flows"))
        .json(&json!({"handle": handle("c"), "name": "c",
                      "steps": [channel_step(&inapp, None, "Hi")], "commercial": true}))
        .go()
        .await
        .ok(201);
    let a = activate(&app, &s(&f["id"])).await;
    assert_eq!(a["commercial"], json!(true), "{a}");
}

// ================================================================ HTTP providers

/// One HTTP email provider: its name, its config against `base`, and how
/// to read the unsubscribe headers back from the request it made.
struct Http {
    provider: &'static str,
    config: fn(&str) -> Value,
    headers: fn(&Request) -> (Option<String>, Option<String>),
}

fn from(mut c: Value) -> Value {
    c["from"] = json!("Herald <noreply@herald.test>");
    c["retry"] = quick_retry();
    c
}

fn json_object_headers(q: &Request) -> (Option<String>, Option<String>) {
    let b = req_json(q);
    let h = &b["headers"];
    let get = |n: &str| h[n].as_str().map(str::to_string);
    (get("List-Unsubscribe"), get("List-Unsubscribe-Post"))
}

fn name_value_headers(list: &Value) -> (Option<String>, Option<String>) {
    let get = |n: &str| {
        list.as_array()?
            .iter()
            .find(|h| h["Name"] == json!(n))
            .and_then(|h| h["Value"].as_str().map(str::to_string))
    };
    (get("List-Unsubscribe"), get("List-Unsubscribe-Post"))
}

fn http_providers() -> Vec<Http> {
    vec![
        Http {
            provider: "sendgrid",
            config: |b| from(json!({"api_key": "SG.key", "base_url": b})),
            headers: json_object_headers,
        },
        Http {
            provider: "postmark",
            config: |b| from(json!({"server_token": "pm-token", "base_url": b})),
            headers: |q| name_value_headers(&req_json(q)["Headers"]),
        },
        Http {
            provider: "mailgun",
            config: |b| {
                from(json!({"api_key": "mg-key", "domain": "mg.herald.test", "base_url": b}))
            },
            headers: |q| {
                let f: std::collections::HashMap<String, String> =
                    url::form_urlencoded::parse(&q.body).into_owned().collect();
                (
                    f.get("h:List-Unsubscribe").cloned(),
                    f.get("h:List-Unsubscribe-Post").cloned(),
                )
            },
        },
        Http {
            provider: "resend",
            config: |b| from(json!({"api_key": "re_key", "base_url": b})),
            headers: json_object_headers,
        },
        Http {
            provider: "ses",
            config: |b| {
                from(json!({"access_key_id": "AKIAHERALDTEST0001",
                    "secret_access_key": "ses-secret", "region": "eu-west-1", "base_url": b}))
            },
            headers: |q| name_value_headers(&req_json(q)["Content"]["Simple"]["Headers"]),
        },
    ]
}

/// Each HTTP email provider's request carries both headers for a
/// commercial flow (the link `{{ unsubscribe_url }}` renders, which
/// unsubscribes), neither for a transactional one.
#[tokio::test]
async fn unsubscribe_headers_through_every_http_email_provider() {
    let app = spawn_public();
    let (ext, _) = app
        .create_user("unsub", json!({"email": "ada@example.com"}))
        .await;
    for p in http_providers() {
        let server = mock_server().await;
        // one answer every provider takes as sent
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "id": "m-1", "MessageId": "m-1", "MessageID": "m-1",
                "ErrorCode": 0, "Message": "OK"})))
            .mount(&server)
            .await;
        let ch = active_channel(&app, "email", p.provider, (p.config)(&server.uri())).await;
        let commercial = email_flow(&app, &s(&ch["id"]), true).await;
        let transactional = email_flow(&app, &s(&ch["id"]), false).await;
        let d = deliver_once(&app, &commercial, &ext, json!({})).await;
        assert_eq!(d["status"], json!("sent"), "{}: {d}", p.provider);
        let t = deliver_once(&app, &transactional, &ext, json!({})).await;
        assert_eq!(t["status"], json!("sent"), "{}: {t}", p.provider);
        let reqs = received(&server).await;
        assert_eq!(reqs.len(), 2, "{}", p.provider);
        let (lu, post) = (p.headers)(&reqs[0]);
        let lu = lu.unwrap_or_else(|| panic!("{}: no List-Unsubscribe", p.provider));
        assert_eq!(
            post.as_deref(),
            Some("List-Unsubscribe=One-Click"),
            "{}",
            p.provider
        );
        let token = token_of(&lu);
        // the request's text: a form's values decoded (mailgun), else JSON
        let body = match p.provider {
            "mailgun" => url::form_urlencoded::parse(&reqs[0].body)
                .map(|(_, v)| v.into_owned())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::from_utf8_lossy(&reqs[0].body).into_owned(),
        };
        assert!(
            body.contains(&format!("Bye: {PUBLIC}/u/{token}")),
            "{}: the text part has the header's link: {body}",
            p.provider
        );
        assert_eq!(
            (p.headers)(&reqs[1]),
            (None, None),
            "{}: a transactional flow's mail has neither",
            p.provider
        );
        let r = one_click(&app, &token).await;
        assert_eq!(r.status, 200, "{}: {r}", p.provider);
        assert_eq!(
            flow_email(&app, &ext, &commercial).await,
            json!(false),
            "{}",
            p.provider
        );
    }
}

/// A commercial flow activated with a public URL, on a server started
/// again without one, is named in a warning at start: its email would go
/// out without the link it must carry.
#[tokio::test]
async fn unsubscribe_a_start_without_public_url_warns_of_commercial_flows() {
    if single_node_only("one server restarted on its own data") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let start = |args: &'static [&'static str]| {
        TestApp::start(ServeOptions {
            data_dir: dir.path(),
            bootstrap: Some(&keys),
            args,
            env: &[],
            default_flags: true,
        })
        .unwrap_or_else(|e| panic!("{e}"))
    };
    let mut app = start(&["--public-url", PUBLIC]);
    let ch = active_channel(
        &app,
        "email",
        "smtp",
        json!({"host": "127.0.0.1", "port": 2525,
        "tls": "none", "from": "Herald <noreply@herald.test>"}),
    )
    .await;
    let f = email_flow(&app, &s(&ch["id"]), true).await;
    let warned = |app: &TestApp| {
        app.output
            .stderr_lines()
            .iter()
            .any(|l| l.contains("--public-url") && l.contains(f["handle"].as_str().unwrap()))
    };
    assert!(!warned(&app), "a server with a public URL warns of nothing");
    app.stop();
    let app = start(&[]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !warned(&app) {
        assert!(
            std::time::Instant::now() < deadline,
            "no warning naming the flow: {:#?}",
            app.output.stderr_lines()
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
