//! email / `sendgrid`, `postmark`, `mailgun`, `resend` and `ses` against local
//! counterparts on 127.0.0.1 (wiremock): the request each sends (method, path,
//! credentials, a text and an HTML part), the provider's message id in the
//! delivery's `data.outcomes`, and how answers map to outcomes: 401/403
//! `provider_unauthorized`, 5xx and 429 retried, a refused address
//! `invalid_address`, another 4xx `provider_rejected`. The SES counterpart
//! recomputes the AWS Signature Version 4 of each request with the channel's
//! secret and refuses a request whose signature differs.

use std::collections::HashMap;

use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::engine_helpers::*;
use crate::helpers::*;
use crate::providers_support::*;

const FROM: &str = "Herald <noreply@herald.test>";
const SG_KEY: &str = "SG.sendgrid-key-xyz";
const PM_TOKEN: &str = "postmark-server-token-xyz";
const MG_KEY: &str = "mailgun-key-xyz";
const RS_KEY: &str = "re_resend_key_xyz";
const AWS_KEY_ID: &str = "AKIAHERALDTEST0001";
const AWS_SECRET: &str = "ses/secret+access-key-xyz";
const REGION: &str = "eu-west-1";

/// What the tests know of one provider: its channel config, the path it posts
/// to, and the answers of its counterpart.
struct Case {
    provider: &'static str,
    path: &'static str,
    config: fn(&str) -> Value,
    message_id: &'static str,
    ok: fn() -> ResponseTemplate,
    unauthorized: fn() -> ResponseTemplate,
    bad_address: fn() -> ResponseTemplate,
    rejected: fn() -> ResponseTemplate,
}

fn with_retry(mut config: Value) -> Value {
    config["from"] = json!(FROM);
    config["retry"] = quick_retry();
    config
}

fn err_json(status: u16, body: Value) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_json(body)
}

fn sendgrid() -> Case {
    Case {
        provider: "sendgrid",
        path: "/v3/mail/send",
        config: |b| with_retry(json!({"api_key": SG_KEY, "base_url": b})),
        message_id: "sg-message-id-0001",
        ok: || ResponseTemplate::new(202).insert_header("X-Message-Id", "sg-message-id-0001"),
        unauthorized: || {
            err_json(
                401,
                json!({"errors": [{"message": "The provided authorization grant is invalid", "field": null}]}),
            )
        },
        bad_address: || {
            err_json(
                400,
                json!({"errors": [{"message": "Does not contain a valid address.",
                                   "field": "personalizations.0.to.0.email"}]}),
            )
        },
        rejected: || {
            err_json(
                400,
                json!({"errors": [{"message": "The subject is required.", "field": "subject"}]}),
            )
        },
    }
}

fn postmark() -> Case {
    Case {
        provider: "postmark",
        path: "/email",
        config: |b| with_retry(json!({"server_token": PM_TOKEN, "base_url": b})),
        message_id: "b7bc2f4a-e38e-4336-af7d-e6c392c2f817",
        ok: || {
            err_json(
                200,
                json!({"To": "ada@example.com", "SubmittedAt": "2026-01-01T00:00:00Z",
                       "MessageID": "b7bc2f4a-e38e-4336-af7d-e6c392c2f817", "ErrorCode": 0, "Message": "OK"}),
            )
        },
        unauthorized: || {
            err_json(
                401,
                json!({"ErrorCode": 10, "Message": "Bad or missing Server API token."}),
            )
        },
        bad_address: || {
            err_json(
                422,
                json!({"ErrorCode": 406, "Message": "You tried to send to a recipient that has been marked as inactive."}),
            )
        },
        rejected: || {
            err_json(
                422,
                json!({"ErrorCode": 412, "Message": "Your account is pending approval."}),
            )
        },
    }
}

fn mailgun() -> Case {
    Case {
        provider: "mailgun",
        path: "/v3/mg.herald.test/messages",
        config: |b| {
            with_retry(json!({"api_key": MG_KEY, "domain": "mg.herald.test", "base_url": b}))
        },
        message_id: "<20260101000000.1.ABC@mg.herald.test>",
        ok: || {
            err_json(
                200,
                json!({"id": "<20260101000000.1.ABC@mg.herald.test>", "message": "Queued. Thank you."}),
            )
        },
        unauthorized: || ResponseTemplate::new(401).set_body_string("Forbidden"),
        bad_address: || {
            err_json(
                400,
                json!({"message": "to parameter is not a valid address. please check documentation"}),
            )
        },
        rejected: || err_json(400, json!({"message": "from parameter is missing"})),
    }
}

fn resend() -> Case {
    Case {
        provider: "resend",
        path: "/emails",
        config: |b| with_retry(json!({"api_key": RS_KEY, "base_url": b})),
        message_id: "49a3999c-0ce1-4ea6-ab68-afcd6dc2e794",
        ok: || err_json(200, json!({"id": "49a3999c-0ce1-4ea6-ab68-afcd6dc2e794"})),
        unauthorized: || {
            err_json(
                401,
                json!({"statusCode": 401, "name": "missing_api_key",
                       "message": "Missing API key in the authorization header"}),
            )
        },
        bad_address: || {
            err_json(
                422,
                json!({"statusCode": 422, "name": "validation_error",
                       "message": "Invalid `to` field. The email address needs to follow the `email@example.com` format."}),
            )
        },
        rejected: || {
            err_json(
                422,
                json!({"statusCode": 422, "name": "validation_error",
                       "message": "The herald.test domain is not verified."}),
            )
        },
    }
}

fn ses_config(base_url: &str) -> Value {
    with_retry(
        json!({"access_key_id": AWS_KEY_ID, "secret_access_key": AWS_SECRET,
                      "region": REGION, "base_url": base_url}),
    )
}

fn ses() -> Case {
    Case {
        provider: "ses",
        path: "/v2/email/outbound-emails",
        config: ses_config,
        message_id: "0102018c-ses-message-id-0001",
        ok: || err_json(200, json!({"MessageId": "0102018c-ses-message-id-0001"})),
        unauthorized: || {
            err_json(
                403,
                json!({"message": "The security token included in the request is invalid."}),
            )
            .insert_header("x-amzn-ErrorType", "UnrecognizedClientException:")
        },
        bad_address: || {
            err_json(400, json!({"message": "Illegal address"}))
                .insert_header("x-amzn-ErrorType", "BadRequestException:")
        },
        rejected: || {
            err_json(400, json!({"message": "Email address is not verified."}))
                .insert_header("x-amzn-ErrorType", "MessageRejected:")
        },
    }
}

fn cases() -> Vec<Case> {
    vec![sendgrid(), postmark(), mailgun(), resend(), ses()]
}

// ================================================================ SigV4, the counterpart's side

type HmacSha256 = Hmac<Sha256>;

fn hmac(key: &[u8], data: &str) -> Vec<u8> {
    let mut m = HmacSha256::new_from_slice(key).unwrap();
    m.update(data.as_bytes());
    m.finalize().into_bytes().to_vec()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Why the request's AWS Signature Version 4 is not the one `secret` makes
/// (`Ok` when it is): the counterpart recomputes it from what it received.
fn check_sigv4(req: &Request, key_id: &str, secret: &str) -> Result<(), String> {
    let auth = req_header(req, "authorization").ok_or("no Authorization")?;
    let rest = auth
        .strip_prefix("AWS4-HMAC-SHA256 ")
        .ok_or("not AWS4-HMAC-SHA256")?;
    let mut parts = HashMap::new();
    for p in rest.split(", ") {
        let (k, v) = p.split_once('=').ok_or("malformed Authorization")?;
        parts.insert(k, v);
    }
    let credential: Vec<&str> = parts
        .get("Credential")
        .ok_or("no Credential")?
        .split('/')
        .collect();
    let amz_date = req_header(req, "x-amz-date").ok_or("no x-amz-date")?;
    let want_scope = [key_id, &amz_date[..8], REGION, "ses", "aws4_request"];
    if credential != want_scope {
        return Err(format!(
            "credential scope {credential:?}, want {want_scope:?}"
        ));
    }
    let signed = *parts.get("SignedHeaders").ok_or("no SignedHeaders")?;
    for must in ["host", "x-amz-date", "content-type"] {
        if !signed.split(';').any(|h| h == must) {
            return Err(format!("{must} is not signed: {signed}"));
        }
    }
    let canonical_headers: String = signed
        .split(';')
        .map(|h| format!("{h}:{}\n", req_header(req, h).unwrap_or_default().trim()))
        .collect();
    let canonical = format!(
        "{}\n{}\n\n{canonical_headers}\n{signed}\n{}",
        req.method,
        req.url.path(),
        hex(&Sha256::digest(&req.body))
    );
    let scope = format!("{}/{REGION}/ses/aws4_request", &amz_date[..8]);
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{scope}\n{}",
        hex(&Sha256::digest(canonical.as_bytes()))
    );
    let k = hmac(format!("AWS4{secret}").as_bytes(), &amz_date[..8]);
    let k = hmac(&k, REGION);
    let k = hmac(&k, "ses");
    let k = hmac(&k, "aws4_request");
    let want = hex(&hmac(&k, &to_sign));
    let got = *parts.get("Signature").ok_or("no Signature")?;
    if got == want {
        Ok(())
    } else {
        Err(format!("signature {got}, want {want}"))
    }
}

/// SES's side: 200 with a `MessageId` when the signature verifies with
/// `AWS_SECRET`, else 403 `SignatureDoesNotMatch` (as SES answers).
struct SesCounterpart;

impl Respond for SesCounterpart {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        match check_sigv4(req, AWS_KEY_ID, AWS_SECRET) {
            Ok(()) => (ses().ok)(),
            Err(why) => err_json(403, json!({"message": why}))
                .insert_header("x-amzn-ErrorType", "SignatureDoesNotMatch:"),
        }
    }
}

// ================================================================ helpers

/// A counterpart answering every POST to `path` with `answer`.
async fn counterpart(path_: &str, answer: impl Respond + 'static) -> MockServer {
    let server = mock_server().await;
    Mock::given(method("POST"))
        .and(path(path_.to_string()))
        .respond_with(answer)
        .mount(&server)
        .await;
    server
}

/// An email channel of `case` sending to `base_url`, and a flow with one step
/// of `template`.
async fn email_flow(app: &TestApp, case: &Case, base_url: &str, template: Value) -> Value {
    let ch = active_channel(app, "email", case.provider, (case.config)(base_url)).await;
    template_flow(app, &s(&ch["id"]), template).await
}

fn invoice() -> Value {
    json!({"subject": "Invoice {{ data.n }}",
           "body": "Hello {{ recipient.first_name }}, invoice {{ data.n }} is ready.",
           "html": "<p>Hello <b>{{ recipient.first_name }}</b>, invoice {{ data.n }}.</p>"})
}

const TEXT: &str = "Hello Ada, invoice 42 is ready.";
const HTML: &str = "<p>Hello <b>Ada</b>, invoice 42.</p>";

fn form(req: &Request) -> HashMap<String, String> {
    url::form_urlencoded::parse(&req.body)
        .into_owned()
        .collect()
}

/// Sends one invoice to Ada through `case` and returns (the delivery, the
/// request the counterpart received), after the checks every provider shares:
/// sent at the first attempt, the provider's message id in the outcome, the
/// secret absent from the server's output.
async fn send_one(case: &Case, answer: impl Respond + 'static, secret: &str) -> (Value, Request) {
    let server = counterpart(case.path, answer).await;
    let app = TestApp::spawn();
    let flow = email_flow(&app, case, &server.uri(), invoice()).await;
    let (ext, _) = app
        .create_user(
            case.provider,
            json!({"email": "ada@example.com", "first_name": "Ada"}),
        )
        .await;
    let d = deliver_once(&app, &flow, &ext, json!({"n": 42})).await;
    assert_eq!(d["status"], json!("sent"), "{}: {d}", case.provider);
    assert_eq!(d["attempts"], json!(1), "{d}");
    assert_eq!(
        d["data"]["outcomes"],
        json!([{"identifier": "ada@example.com", "status": "sent", "message_id": case.message_id}]),
        "{}: {d}",
        case.provider
    );
    let reqs = received(&server).await;
    assert_eq!(reqs.len(), 1, "{}", case.provider);
    assert_eq!(reqs[0].method.as_str(), "POST");
    assert_eq!(reqs[0].url.path(), case.path);
    assert!(
        !app.output.text().contains(secret),
        "{}: the secret is in the server's output",
        case.provider
    );
    (d, reqs.into_iter().next().unwrap())
}

// ================================================================ request shapes

#[tokio::test]
async fn providers_sendgrid_posts_mail_send_with_bearer_key() {
    let case = sendgrid();
    let (d, q) = send_one(&case, (case.ok)(), SG_KEY).await;
    assert_eq!(
        req_header(&q, "authorization"),
        Some(format!("Bearer {SG_KEY}"))
    );
    let b = req_json(&q);
    assert_eq!(
        b["personalizations"],
        json!([{"to": [{"email": "ada@example.com"}]}]),
        "{b}"
    );
    assert_eq!(
        b["from"],
        json!({"email": "noreply@herald.test", "name": "Herald"}),
        "{b}"
    );
    assert_eq!(b["subject"], json!("Invoice 42"), "{b}");
    assert_eq!(
        b["content"],
        json!([{"type": "text/plain", "value": TEXT}, {"type": "text/html", "value": HTML}]),
        "{b}"
    );
    assert_eq!(b["custom_args"]["delivery_id"], d["id"], "{b}");
}

#[tokio::test]
async fn providers_postmark_posts_email_with_server_token() {
    let case = postmark();
    let (_, q) = send_one(&case, (case.ok)(), PM_TOKEN).await;
    assert_eq!(
        req_header(&q, "x-postmark-server-token").as_deref(),
        Some(PM_TOKEN)
    );
    assert_eq!(req_header(&q, "authorization"), None);
    let b = req_json(&q);
    for (k, want) in [
        ("From", FROM),
        ("To", "ada@example.com"),
        ("Subject", "Invoice 42"),
        ("TextBody", TEXT),
        ("HtmlBody", HTML),
        ("MessageStream", "outbound"),
    ] {
        assert_eq!(b[k], json!(want), "{k}: {b}");
    }
}

#[tokio::test]
async fn providers_mailgun_posts_the_form_with_basic_auth() {
    let case = mailgun();
    let (_, q) = send_one(&case, (case.ok)(), MG_KEY).await;
    let want = format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("api:{MG_KEY}"))
    );
    assert_eq!(req_header(&q, "authorization"), Some(want));
    assert!(
        req_header(&q, "content-type")
            .unwrap_or_default()
            .starts_with("application/x-www-form-urlencoded"),
        "{:?}",
        q.headers
    );
    let f = form(&q);
    for (k, want) in [
        ("from", FROM),
        ("to", "ada@example.com"),
        ("subject", "Invoice 42"),
        ("text", TEXT),
        ("html", HTML),
    ] {
        assert_eq!(f.get(k).map(String::as_str), Some(want), "{k}: {f:?}");
    }
}

#[tokio::test]
async fn providers_resend_posts_emails_with_bearer_key_and_idempotency() {
    let case = resend();
    let (d, q) = send_one(&case, (case.ok)(), RS_KEY).await;
    assert_eq!(
        req_header(&q, "authorization"),
        Some(format!("Bearer {RS_KEY}"))
    );
    assert_eq!(req_header(&q, "idempotency-key"), Some(s(&d["id"])));
    let b = req_json(&q);
    assert_eq!(
        b,
        json!({"from": FROM, "to": ["ada@example.com"], "subject": "Invoice 42",
               "text": TEXT, "html": HTML}),
    );
}

#[tokio::test]
async fn providers_ses_sends_a_sigv4_signed_send_email() {
    let case = ses();
    let (_, q) = send_one(&case, SesCounterpart, AWS_SECRET).await;
    // the counterpart answered 200 only because the signature verified; check
    // it once more here, and that another secret would not have matched
    check_sigv4(&q, AWS_KEY_ID, AWS_SECRET).expect("the signature verifies");
    assert!(check_sigv4(&q, AWS_KEY_ID, "another-secret").is_err());
    let b = req_json(&q);
    assert_eq!(b["FromEmailAddress"], json!(FROM), "{b}");
    assert_eq!(
        b["Destination"],
        json!({"ToAddresses": ["ada@example.com"]}),
        "{b}"
    );
    let simple = &b["Content"]["Simple"];
    assert_eq!(simple["Subject"]["Data"], json!("Invoice 42"), "{b}");
    assert_eq!(simple["Body"]["Text"]["Data"], json!(TEXT), "{b}");
    assert_eq!(simple["Body"]["Html"]["Data"], json!(HTML), "{b}");
}

// ================================================================ outcomes

/// Per provider, one counterpart per answer: 401/403, 500 then 429 then
/// accepted, a refused address, another refusal; each delivery's outcome and
/// number of attempts, and no further request after a permanent failure.
#[tokio::test]
async fn providers_email_http_answers_map_to_outcomes() {
    let app = TestApp::spawn();
    let (ext, _) = app
        .create_user(
            "outcomes",
            json!({"email": "bob@example.com", "first_name": "Bob"}),
        )
        .await;
    let template = json!({"subject": "S", "body": "B"});
    let mut runs = vec![];
    for case in cases() {
        let unauthorized = counterpart(case.path, (case.unauthorized)()).await;
        let retried = mock_server().await;
        for st in [500u16, 429] {
            Mock::given(method("POST"))
                .respond_with(
                    ResponseTemplate::new(st)
                        .insert_header("retry-after", "1")
                        .set_body_json(json!({"message": "busy"})),
                )
                .up_to_n_times(1)
                .mount(&retried)
                .await;
        }
        if case.provider == "ses" {
            Mock::given(method("POST"))
                .respond_with(SesCounterpart)
                .mount(&retried)
                .await;
        } else {
            Mock::given(method("POST"))
                .respond_with((case.ok)())
                .mount(&retried)
                .await;
        }
        let bad_address = counterpart(case.path, (case.bad_address)()).await;
        let rejected = counterpart(case.path, (case.rejected)()).await;
        let mut ds = vec![];
        for (server, want) in [
            (&unauthorized, ("failed", "provider_unauthorized", 1)),
            (&retried, ("sent", "", 3)),
            (&bad_address, ("failed", "invalid_address", 1)),
            (&rejected, ("failed", "provider_rejected", 1)),
        ] {
            let flow = email_flow(&app, &case, &server.uri(), template.clone()).await;
            let (_, did) = run_single(&app, &flow, &ext, json!({})).await;
            ds.push((did, want));
        }
        runs.push((case, [unauthorized, retried, bad_address, rejected], ds));
    }
    for (case, servers, ds) in &runs {
        for (i, (did, (status, code, attempts))) in ds.iter().enumerate() {
            let d = wait_delivery_final(&app, did, 30).await;
            let p = case.provider;
            assert_eq!(d["status"], json!(status), "{p}: {d}");
            assert_eq!(d["attempts"], json!(attempts), "{p}: {d}");
            if code.is_empty() {
                assert_eq!(d["error"], Value::Null, "{p}: {d}");
                assert_eq!(
                    d["data"]["outcomes"][0]["message_id"],
                    json!(case.message_id),
                    "{p}: {d}"
                );
            } else {
                assert_eq!(d["error"]["code"], json!(code), "{p}: {d}");
            }
            assert_eq!(
                received(&servers[i]).await.len(),
                *attempts as usize,
                "{p}: {d}"
            );
        }
    }
    // no late retry of a permanent failure
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    for (case, servers, _) in &runs {
        for i in [0, 2, 3] {
            assert_eq!(received(&servers[i]).await.len(), 1, "{}", case.provider);
        }
    }
}

/// A recipient without an address is skipped with nothing sent, as with
/// `smtp` (the API refuses a user `email` that is not an address), and a
/// channel whose secret is not the one SES knows is refused.
#[tokio::test]
async fn providers_email_http_addresses_and_a_wrong_sigv4_secret() {
    let app = TestApp::spawn();
    let case = resend();
    let server = counterpart(case.path, (case.ok)()).await;
    let flow = email_flow(
        &app,
        &case,
        &server.uri(),
        json!({"subject": "S", "body": "B"}),
    )
    .await;
    let (none, _) = app.create_user("noemail", json!({"first_name": "N"})).await;
    let d = deliver_once(&app, &flow, &none, json!({})).await;
    assert_eq!(d["status"], json!("skipped"), "{d}");
    assert_eq!(d["error"]["code"], json!("missing_address"), "{d}");
    assert!(received(&server).await.is_empty(), "nothing sent");

    // SES with a secret the counterpart does not know: 403, unauthorized
    let ses_server = counterpart("/v2/email/outbound-emails", SesCounterpart).await;
    let mut cfg = ses_config(&ses_server.uri());
    cfg["secret_access_key"] = json!("not-the-secret");
    let ch = active_channel(&app, "email", "ses", cfg).await;
    assert_eq!(ch["config"]["secret_access_key"], json!("********"), "{ch}");
    let flow = template_flow(&app, &s(&ch["id"]), json!({"subject": "S", "body": "B"})).await;
    let (ext, _) = app
        .create_user("ses-wrong", json!({"email": "eve@example.com"}))
        .await;
    let d = deliver_once(&app, &flow, &ext, json!({})).await;
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("provider_unauthorized"), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
    assert_eq!(received(&ses_server).await.len(), 1);
}

/// A step without `html` still sends an HTML part: the body as paragraphs,
/// wrapped in the step's layout like the text part.
#[tokio::test]
async fn providers_email_http_html_part_from_the_body_and_the_layout() {
    let case = postmark();
    let server = counterpart(case.path, (case.ok)()).await;
    let app = TestApp::spawn();
    app.put_content(
        "layouts",
        "frame",
        &json!({"name": "Frame",
                "html": "<html><body><div class=\"frame\">{{ content }}</div></body></html>",
                "text": "{{ content }}\n-- Acme"}),
    )
    .await
    .ok(201);
    let ch = active_channel(&app, "email", "postmark", (case.config)(&server.uri())).await;
    let flow = active_flow(
        &app,
        "framed",
        json!([{"type": "channel", "channel_id": s(&ch["id"]), "layout": "frame",
                "template": {"subject": "Hi", "body": "Line <one>\n\nTwo"}}]),
    )
    .await;
    let (ext, _) = app
        .create_user("framed", json!({"email": "fay@example.com"}))
        .await;
    let d = deliver_once(&app, &flow, &ext, json!({})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    let reqs = received(&server).await;
    assert_eq!(reqs.len(), 1);
    let b = req_json(&reqs[0]);
    assert_eq!(b["TextBody"], json!("Line <one>\n\nTwo\n-- Acme"), "{b}");
    let html = b["HtmlBody"].as_str().unwrap_or_default();
    assert!(html.contains("class=\"frame\""), "the layout: {html}");
    assert!(
        html.contains("<p>Line &lt;one&gt;</p>") && html.contains("<p>Two</p>"),
        "the body as escaped paragraphs: {html}"
    );
}
