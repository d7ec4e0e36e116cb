//! Delivery feedback signed with the providers' own schemes
//! (docs/channels/sendgrid.md, vonage.md, ses.md): a delivery sent through a
//! local SendGrid, Vonage or SES counterpart, then the provider's callback
//! at `POST /hooks/v1/{channel_id}` signed as the provider signs it (ECDSA
//! P-256 over timestamp and body; Vonage's `sig` over the sorted
//! parameters; SNS's RSA signature with a certificate this test makes and
//! serves from 127.0.0.1, the host `HERALD_SNS_TRUSTED_CERT_HOST` trusts).
//! The delivery becomes `delivered`, `bounced` or `complained` with its
//! event and a `delivery.feedback` trace entry; a badly signed (or stale,
//! or another topic's) callback is 401 and changes nothing; the same report
//! twice changes nothing.

use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use crate::engine_helpers::*;
use crate::helpers::*;
use crate::providers_support::*;

const FROM: &str = "Herald <noreply@herald.test>";
const VONAGE_SIG_SECRET: &str = "vonage-signature-secret-xyz";
const TOPIC: &str = "arn:aws:sns:eu-west-1:123456789012:herald-ses-events";

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A provider counterpart answering each send with a new message id, in the
/// provider's own answer shape.
struct Answers {
    provider: &'static str,
    tag: String,
    n: AtomicUsize,
}

impl Respond for Answers {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        let i = self.n.fetch_add(1, Ordering::SeqCst);
        let id = format!("{}-{i:04}-{}", self.provider, self.tag);
        match self.provider {
            "sendgrid" => ResponseTemplate::new(202).insert_header("X-Message-Id", id.as_str()),
            "vonage" => ResponseTemplate::new(200).set_body_json(json!({
                "message-count": "1",
                "messages": [{"to": "447700900001", "status": "0", "message-id": id}]})),
            _ => ResponseTemplate::new(200).set_body_json(json!({"MessageId": id})),
        }
    }
}

async fn counterpart(provider: &'static str) -> MockServer {
    let server = mock_server().await;
    Mock::given(method("POST"))
        .respond_with(Answers {
            provider,
            tag: new_uuid().replace('-', ""),
            n: AtomicUsize::new(0),
        })
        .mount(&server)
        .await;
    server
}

/// A channel of `provider` with `config` and a one-step flow to it.
async fn setup(app: &TestApp, provider: &str, config: Value) -> (Value, Value) {
    let ct = if provider == "vonage" { "sms" } else { "email" };
    let ch = active_channel(app, ct, provider, config).await;
    let flow = template_flow(
        app,
        &s(&ch["id"]),
        json!({"subject": "Hi", "body": "Hello {{ recipient.first_name }}"}),
    )
    .await;
    (ch, flow)
}

/// Sends the flow to a new user; the delivery, sent, and its message id.
async fn send(app: &TestApp, flow: &Value) -> (Value, String) {
    // An address of its own per send: a hard bounce or a complaint of an
    // earlier send suppresses its address (docs/DELIVERABILITY.md).
    static SENDS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = SENDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let (ext, _) = app
        .create_user(
            "fbs",
            json!({"email": format!("ada{n}@example.com"), "phone": "+447700900001", "first_name": "Ada"}),
        )
        .await;
    let d = deliver_once(app, flow, &ext, json!({})).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    let id = s(&d["data"]["outcomes"][0]["message_id"]);
    assert!(!id.is_empty(), "{d}");
    (d, id)
}

async fn delivery(app: &TestApp, id: &str) -> Value {
    app.admin(GET, &format!("{A}/deliveries/{id}"))
        .go()
        .await
        .ok(200)
}

/// An event endpoint (a wiremock answering 200) for every event type.
async fn event_endpoint(app: &TestApp) -> MockServer {
    let rx = mock_server().await;
    mock_always(&rx, 200).await;
    app.admin(POST, "/admin/v1/webhook_endpoints")
        .json(&json!({"url": format!("{}/events", rx.uri())}))
        .go()
        .await
        .ok(201);
    rx
}

/// The events of type `t` about `delivery` the endpoint got, once there are
/// `n` (and a moment longer, to see none more come).
async fn events(rx: &MockServer, t: &str, delivery: &str, n: usize) -> Vec<Value> {
    let d = Deadline::new(format!("{n} {t} event(s) of {delivery}"), 30);
    loop {
        let got: Vec<Value> = received(rx)
            .await
            .iter()
            .map(req_json)
            .filter(|e| e["type"] == json!(t) && e["data"]["id"] == json!(delivery))
            .collect();
        if got.len() >= n {
            tokio::time::sleep(Duration::from_millis(500)).await;
            return received(rx)
                .await
                .iter()
                .map(req_json)
                .filter(|e| e["type"] == json!(t) && e["data"]["id"] == json!(delivery))
                .collect();
        }
        d.tick(got.len()).await;
    }
}

/// The `delivery.feedback` entries of the delivery's notification trace.
async fn feedback_trace(app: &TestApp, d: &Value) -> Vec<Value> {
    let t = app
        .admin(
            GET,
            &format!("{A}/notifications/{}/trace", s(&d["notification_id"])),
        )
        .go()
        .await
        .ok(200);
    t["entries"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("{t}"))
        .into_iter()
        .filter(|e| e["code"] == json!("delivery.feedback"))
        .collect()
}

/// (applied, duplicate, ignored, unknown) of a 200 answer.
fn counts(r: &Resp) -> (u64, u64, u64, u64) {
    let v = r.ok(200);
    let n = |k: &str| v[k].as_u64().unwrap_or(99);
    (n("applied"), n("duplicate"), n("ignored"), n("unknown"))
}

// ================================================================ SendGrid

/// A P-256 key and its public key as SendGrid shows it (base64 DER SPKI).
fn sendgrid_key() -> (p256::ecdsa::SigningKey, String) {
    use p256::pkcs8::EncodePublicKey;
    let sk = p256::ecdsa::SigningKey::random(&mut rand::rngs::OsRng);
    let der = sk.verifying_key().to_public_key_der().unwrap();
    (sk, b64(der.as_bytes()))
}

/// Posts `events` to the channel, signed by `sk` at `ts` as SendGrid signs.
async fn sendgrid_post(
    app: &TestApp, ch: &Value, sk: &p256::ecdsa::SigningKey, ts: i64, events: Value,
) -> Resp {
    use p256::ecdsa::signature::Signer;
    let body = serde_json::to_vec(&events).unwrap();
    let ts = ts.to_string();
    let mut signed = ts.as_bytes().to_vec();
    signed.extend_from_slice(&body);
    let sig: p256::ecdsa::Signature = sk.sign(&signed);
    let headers = vec![
        (
            "x-twilio-email-event-webhook-signature".to_string(),
            b64(sig.to_der().as_bytes()),
        ),
        ("x-twilio-email-event-webhook-timestamp".to_string(), ts),
    ];
    app.provider_callback(&s(&ch["id"]), "application/json", body, |_| headers)
        .await
}

/// SendGrid: delivered, then a hard bounce; a spam report on another
/// delivery; another key, a stale timestamp and a changed body are 401 and
/// change nothing; the same batch twice changes nothing.
#[tokio::test]
async fn sendgrid_signed_events_update_the_delivery() {
    let app = TestApp::spawn();
    let rx = event_endpoint(&app).await;
    let server = counterpart("sendgrid").await;
    let (sk, key) = sendgrid_key();
    let (ch, flow) = setup(
        &app,
        "sendgrid",
        json!({"api_key": "SG.key", "from": FROM, "base_url": server.uri(),
               "webhook_verification_key": key}),
    )
    .await;
    assert_eq!(ch["config"]["webhook_verification_key"], json!(key), "{ch}");
    let (d, mid) = send(&app, &flow).await;
    let did = s(&d["id"]);
    let sg_id = format!("{mid}.filterdrecv-5645d9c87f-abcd-1-64B0-3.0");
    let delivered = json!([
        {"event": "processed", "sg_message_id": sg_id, "timestamp": now_secs()},
        {"event": "delivered", "sg_message_id": sg_id, "timestamp": now_secs(),
         "email": "ada@example.com", "response": "250 2.0.0 OK"},
    ]);

    // another key, a stale timestamp, a body changed after signing
    let (other, _) = sendgrid_key();
    let r = sendgrid_post(&app, &ch, &other, now_secs(), delivered.clone()).await;
    assert_error(&r, 401, "unauthenticated");
    let r = sendgrid_post(&app, &ch, &sk, now_secs() - 3600, delivered.clone()).await;
    assert_error(&r, 401, "unauthenticated");
    let body = serde_json::to_vec(&delivered).unwrap();
    let ts = now_secs().to_string();
    let sig = {
        use p256::ecdsa::signature::Signer;
        let mut m = ts.as_bytes().to_vec();
        m.extend_from_slice(b"[]");
        let s: p256::ecdsa::Signature = sk.sign(&m);
        b64(s.to_der().as_bytes())
    };
    let r = app
        .provider_callback(&s(&ch["id"]), "application/json", body, |_| {
            vec![
                ("x-twilio-email-event-webhook-signature".into(), sig),
                ("x-twilio-email-event-webhook-timestamp".into(), ts),
            ]
        })
        .await;
    assert_error(&r, 401, "unauthenticated");
    assert_eq!(delivery(&app, &did).await["status"], json!("sent"));

    // signed: delivered (the `processed` event says nothing)
    let r = sendgrid_post(&app, &ch, &sk, now_secs(), delivered.clone()).await;
    assert_eq!(counts(&r), (1, 0, 0, 0), "{r}");
    assert_eq!(delivery(&app, &did).await["status"], json!("delivered"));
    let r = sendgrid_post(&app, &ch, &sk, now_secs(), delivered).await;
    assert_eq!(counts(&r), (0, 1, 0, 0), "{r}");

    // a hard bounce after it, twice
    let bounce = json!([{"event": "bounce", "type": "bounce", "sg_message_id": sg_id,
                         "bounce_classification": "Invalid Address", "status": "5.1.1",
                         "reason": "550 5.1.1 The email account does not exist",
                         "timestamp": now_secs()}]);
    let r = sendgrid_post(&app, &ch, &sk, now_secs(), bounce.clone()).await;
    assert_eq!(counts(&r), (1, 0, 0, 0), "{r}");
    let r = sendgrid_post(&app, &ch, &sk, now_secs(), bounce).await;
    assert_eq!(counts(&r), (0, 1, 0, 0), "{r}");
    let now = delivery(&app, &did).await;
    assert_eq!(now["status"], json!("bounced"), "{now}");
    assert_eq!(now["bounce"], json!("hard"), "{now}");

    let ev = events(&rx, "delivery.delivered", &did, 1).await;
    assert_eq!(ev.len(), 1, "{ev:?}");
    let ev = events(&rx, "delivery.bounced", &did, 1).await;
    assert_eq!(ev.len(), 1, "the same bounce twice sends one event: {ev:?}");
    assert_eq!(ev[0]["data"]["bounce"], json!("hard"), "{}", ev[0]);
    let tr = feedback_trace(&app, &now).await;
    assert_eq!(tr.len(), 2, "{tr:?}");
    assert_eq!(tr[0]["args"]["report"], json!("delivered"), "{tr:?}");
    assert_eq!(tr[1]["args"]["report"], json!("bounced"), "{tr:?}");
    assert_eq!(tr[1]["args"]["provider"], json!("sendgrid"), "{tr:?}");
    assert!(
        s(&tr[1]["args"]["detail"]).contains("Invalid Address"),
        "{tr:?}"
    );

    // a spam report on another delivery; a blocked message is a soft bounce
    let (d2, mid2) = send(&app, &flow).await;
    let (d3, mid3) = send(&app, &flow).await;
    let r = sendgrid_post(
        &app,
        &ch,
        &sk,
        now_secs(),
        json!([{"event": "spamreport", "sg_message_id": format!("{mid2}.filter1")},
               {"event": "bounce", "type": "blocked", "sg_message_id": format!("{mid3}.filter1")},
               {"event": "open", "sg_message_id": format!("{mid3}.filter1")}]),
    )
    .await;
    assert_eq!(counts(&r), (2, 0, 0, 0), "{r}");
    assert_eq!(
        delivery(&app, &s(&d2["id"])).await["status"],
        json!("complained")
    );
    let now3 = delivery(&app, &s(&d3["id"])).await;
    assert_eq!(now3["status"], json!("bounced"), "{now3}");
    assert_eq!(now3["bounce"], json!("soft"), "{now3}");
    events(&rx, "delivery.complained", &s(&d2["id"]), 1).await;
}

/// A verification key that is not SendGrid's kind of key is refused when the
/// channel is configured.
#[tokio::test]
async fn a_sendgrid_verification_key_that_is_not_a_key_is_422() {
    let app = TestApp::spawn();
    let r = app
        .admin(POST, &format!("{A}/channels"))
        .json(
            &json!({"type": "email", "provider": "sendgrid", "name": "sg",
                      "config": {"api_key": "SG.key", "from": FROM,
                                 "webhook_verification_key": "bm90IGEga2V5"}}),
        )
        .go()
        .await;
    let e = assert_error(&r, 422, "validation_failed");
    assert!(
        e.to_string().contains("config.webhook_verification_key"),
        "{e}"
    );
}

// ================================================================ Vonage

/// Vonage's `sig` of `params` with the HMAC-SHA256 method.
fn vonage_sig(params: &[(String, String)], secret: &str) -> String {
    let mut sorted: Vec<&(String, String)> = params.iter().collect();
    sorted.sort();
    let mut text = String::new();
    for (k, v) in sorted {
        text.push_str(&format!("&{k}={}", v.replace(['&', '='], "_")));
    }
    let mut m = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    m.update(text.as_bytes());
    m.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect()
}

/// A delivery receipt for `mid` with `status`, signed with `secret`.
fn vonage_receipt(mid: &str, status: &str, secret: &str, ts: i64) -> Vec<u8> {
    let mut p: Vec<(String, String)> = [
        ("msisdn", "447700900001"),
        ("to", "Herald"),
        ("network-code", "23410"),
        ("messageId", mid),
        ("price", "0.03330000"),
        ("status", status),
        ("scts", "2611291000"),
        ("err-code", if status == "delivered" { "0" } else { "1" }),
        ("api-key", "abcd1234"),
        ("message-timestamp", "2026-11-29 10:00:00"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    p.push(("timestamp".into(), ts.to_string()));
    let sig = vonage_sig(&p, secret);
    p.push(("sig".into(), sig));
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(&p)
        .finish()
        .into_bytes()
}

async fn vonage_post(app: &TestApp, ch: &Value, body: Vec<u8>) -> Resp {
    app.provider_callback(
        &s(&ch["id"]),
        "application/x-www-form-urlencoded",
        body,
        |_| vec![],
    )
    .await
}

/// Vonage: a signed receipt moves the delivery; the wrong secret, a stale
/// timestamp and a changed parameter are 401 and change nothing; the same
/// receipt twice changes nothing; the secret reads back masked.
#[tokio::test]
async fn vonage_signed_receipts_update_the_delivery() {
    let app = TestApp::spawn();
    let rx = event_endpoint(&app).await;
    let server = counterpart("vonage").await;
    let (ch, flow) = setup(
        &app,
        "vonage",
        json!({"api_key": "abcd1234", "api_secret": "api-secret", "from": "Herald",
               "base_url": server.uri(), "signature_secret": VONAGE_SIG_SECRET,
               "signature_method": "sha256"}),
    )
    .await;
    assert_eq!(ch["config"]["signature_secret"], json!("********"), "{ch}");
    assert_eq!(ch["config"]["signature_method"], json!("sha256"), "{ch}");
    let (d, mid) = send(&app, &flow).await;
    let did = s(&d["id"]);

    let r = vonage_post(
        &app,
        &ch,
        vonage_receipt(&mid, "delivered", "another-secret", now_secs()),
    )
    .await;
    assert_error(&r, 401, "unauthenticated");
    let r = vonage_post(
        &app,
        &ch,
        vonage_receipt(&mid, "delivered", VONAGE_SIG_SECRET, now_secs() - 3600),
    )
    .await;
    assert_error(&r, 401, "unauthenticated");
    let changed = String::from_utf8(vonage_receipt(
        &mid,
        "failed",
        VONAGE_SIG_SECRET,
        now_secs(),
    ))
    .unwrap()
    .replace("status=failed", "status=delivered");
    let r = vonage_post(&app, &ch, changed.into_bytes()).await;
    assert_error(&r, 401, "unauthenticated");
    assert_eq!(delivery(&app, &did).await["status"], json!("sent"));

    // buffered says nothing yet; delivered moves it, once
    let r = vonage_post(
        &app,
        &ch,
        vonage_receipt(&mid, "buffered", VONAGE_SIG_SECRET, now_secs()),
    )
    .await;
    assert_eq!(counts(&r), (0, 0, 0, 0), "{r}");
    let receipt = vonage_receipt(&mid, "delivered", VONAGE_SIG_SECRET, now_secs());
    let r = vonage_post(&app, &ch, receipt.clone()).await;
    assert_eq!(counts(&r), (1, 0, 0, 0), "{r}");
    let r = vonage_post(&app, &ch, receipt).await;
    assert_eq!(counts(&r), (0, 1, 0, 0), "{r}");
    let now = delivery(&app, &did).await;
    assert_eq!(now["status"], json!("delivered"), "{now}");
    let ev = events(&rx, "delivery.delivered", &did, 1).await;
    assert_eq!(ev.len(), 1, "{ev:?}");
    let tr = feedback_trace(&app, &now).await;
    assert_eq!(tr.len(), 1, "{tr:?}");
    assert_eq!(tr[0]["args"]["provider"], json!("vonage"), "{tr:?}");
    assert_eq!(tr[0]["args"]["report"], json!("delivered"), "{tr:?}");

    // a failed receipt for another delivery
    let (d2, mid2) = send(&app, &flow).await;
    let r = vonage_post(
        &app,
        &ch,
        vonage_receipt(&mid2, "failed", VONAGE_SIG_SECRET, now_secs()),
    )
    .await;
    assert_eq!(counts(&r), (1, 0, 0, 0), "{r}");
    let now2 = delivery(&app, &s(&d2["id"])).await;
    assert_eq!(now2["status"], json!("failed"), "{now2}");
}

// ================================================================ SES through SNS

/// An RSA key and a self-signed certificate of it (PEM).
fn sns_key() -> (rsa::RsaPrivateKey, String) {
    use x509_cert::builder::{Builder, CertificateBuilder, Profile};
    use x509_cert::der::EncodePem;
    let sk = rsa::RsaPrivateKey::new(&mut rand::rngs::OsRng, 2048).unwrap();
    let signer = rsa::pkcs1v15::SigningKey::<sha2::Sha256>::new(sk.clone());
    let spki = x509_cert::spki::SubjectPublicKeyInfoOwned::from_key(sk.to_public_key()).unwrap();
    let cert = CertificateBuilder::new(
        Profile::Root,
        x509_cert::serial_number::SerialNumber::from(7u32),
        x509_cert::time::Validity::from_now(Duration::from_secs(86_400)).unwrap(),
        x509_cert::name::Name::from_str("CN=sns.herald.test").unwrap(),
        spki,
        &signer,
    )
    .unwrap()
    .build::<rsa::pkcs1v15::Signature>()
    .unwrap();
    let pem = cert.to_pem(x509_cert::der::pem::LineEnding::LF).unwrap();
    (sk, pem)
}

/// `fields` signed as SNS signs with SignatureVersion 2.
fn sns_signed(mut fields: Value, sk: &rsa::RsaPrivateKey) -> Value {
    use rsa::signature::{SignatureEncoding, Signer};
    let order: &[&str] = if fields["Type"] == json!("Notification") {
        &[
            "Message",
            "MessageId",
            "Subject",
            "Timestamp",
            "TopicArn",
            "Type",
        ]
    } else {
        &[
            "Message",
            "MessageId",
            "SubscribeURL",
            "Timestamp",
            "Token",
            "TopicArn",
            "Type",
        ]
    };
    let mut text = String::new();
    for k in order {
        if let Some(v) = fields[*k].as_str() {
            text.push_str(&format!("{k}\n{v}\n"));
        }
    }
    let sig = rsa::pkcs1v15::SigningKey::<sha2::Sha256>::new(sk.clone())
        .sign(text.as_bytes())
        .to_vec();
    fields["SignatureVersion"] = json!("2");
    fields["Signature"] = json!(b64(&sig));
    fields
}

fn sns_notification(event: Value, topic: &str, cert_url: &str) -> Value {
    json!({
        "Type": "Notification",
        "MessageId": new_uuid(),
        "TopicArn": topic,
        "Message": event.to_string(),
        "Timestamp": "2026-11-29T10:00:00.000Z",
        "SigningCertURL": cert_url,
        "UnsubscribeURL": "https://sns.eu-west-1.amazonaws.com/?Action=Unsubscribe",
    })
}

async fn sns_post(app: &TestApp, ch: &Value, message: &Value) -> Resp {
    let kind = s(&message["Type"]);
    app.provider_callback(
        &s(&ch["id"]),
        "text/plain; charset=UTF-8",
        serde_json::to_vec(message).unwrap(),
        |_| vec![("x-amz-sns-message-type".into(), kind)],
    )
    .await
}

fn ses_bounce(mid: &str, kind: &str) -> Value {
    json!({"notificationType": "Bounce",
           "bounce": {"bounceType": kind, "bounceSubType": "General",
                      "bouncedRecipients": [{"emailAddress": "ada@example.com",
                                             "diagnosticCode": "smtp; 550 5.1.1 user unknown"}],
                      "timestamp": "2026-11-29T10:00:00.000Z"},
           "mail": {"messageId": mid}})
}

/// SES through SNS: the subscription is confirmed by a GET of its
/// SubscribeURL; a hard bounce and a complaint move their deliveries, once;
/// another key, another topic and a certificate of a host that is not SNS's
/// are 401 and change nothing. The certificate is fetched from the trusted
/// host once.
#[tokio::test]
async fn ses_notifications_through_sns_update_the_delivery() {
    let certs = mock_server().await;
    let (sk, pem) = sns_key();
    Mock::given(method("GET"))
        .and(path("/SimpleNotificationService-test.pem"))
        .respond_with(ResponseTemplate::new(200).set_body_string(pem))
        .mount(&certs)
        .await;
    Mock::given(method("GET"))
        .and(path("/confirm"))
        .respond_with(ResponseTemplate::new(200).set_body_string("<ConfirmSubscriptionResponse/>"))
        .mount(&certs)
        .await;
    let cert_url = format!("{}/SimpleNotificationService-test.pem", certs.uri());
    let app = TestApp::spawn_with(&[], &[("HERALD_SNS_TRUSTED_CERT_HOST", "127.0.0.1")]);
    let rx = event_endpoint(&app).await;
    let server = counterpart("ses").await;
    let (ch, flow) = setup(
        &app,
        "ses",
        json!({"access_key_id": "AKIAHERALDTEST0001", "secret_access_key": "ses-secret",
               "region": "eu-west-1", "from": FROM, "base_url": server.uri(),
               "sns_topic_arn": TOPIC}),
    )
    .await;

    // the subscription's confirmation
    let confirm_url = format!(
        "{}/confirm?Action=ConfirmSubscription&Token=tok",
        certs.uri()
    );
    let confirmation = sns_signed(
        json!({"Type": "SubscriptionConfirmation", "MessageId": new_uuid(), "Token": "tok",
               "TopicArn": TOPIC, "Message": "You have chosen to subscribe …",
               "SubscribeURL": confirm_url, "Timestamp": "2026-11-29T10:00:00.000Z",
               "SigningCertURL": cert_url}),
        &sk,
    );
    let r = sns_post(&app, &ch, &confirmation).await;
    assert_eq!(counts(&r), (0, 0, 0, 0), "{r}");
    let gets: Vec<String> = received(&certs)
        .await
        .iter()
        .map(|q| q.url.path().to_string())
        .collect();
    assert_eq!(
        gets.iter().filter(|p| *p == "/confirm").count(),
        1,
        "{gets:?}"
    );

    let (d, mid) = send(&app, &flow).await;
    let did = s(&d["id"]);
    let bounce = sns_signed(
        sns_notification(ses_bounce(&mid, "Permanent"), TOPIC, &cert_url),
        &sk,
    );

    // another key; another topic (signed); a certificate URL that is not SNS's
    let (other, _) = sns_key();
    let r = sns_post(
        &app,
        &ch,
        &sns_signed(
            sns_notification(ses_bounce(&mid, "Permanent"), TOPIC, &cert_url),
            &other,
        ),
    )
    .await;
    assert_error(&r, 401, "unauthenticated");
    let r = sns_post(
        &app,
        &ch,
        &sns_signed(
            sns_notification(
                ses_bounce(&mid, "Permanent"),
                "arn:aws:sns:eu-west-1:123456789012:someone-else",
                &cert_url,
            ),
            &sk,
        ),
    )
    .await;
    assert_error(&r, 401, "unauthenticated");
    let r = sns_post(
        &app,
        &ch,
        &sns_signed(
            sns_notification(
                ses_bounce(&mid, "Permanent"),
                TOPIC,
                "https://sns.eu-west-1.amazonaws.com.evil.test/cert.pem",
            ),
            &sk,
        ),
    )
    .await;
    assert_error(&r, 401, "unauthenticated");
    let mut tampered = bounce.clone();
    tampered["Message"] = json!(ses_bounce(&mid, "Transient").to_string());
    let r = sns_post(&app, &ch, &tampered).await;
    assert_error(&r, 401, "unauthenticated");
    assert_eq!(delivery(&app, &did).await["status"], json!("sent"));

    // signed: a hard bounce, twice
    let r = sns_post(&app, &ch, &bounce).await;
    assert_eq!(counts(&r), (1, 0, 0, 0), "{r}");
    let r = sns_post(&app, &ch, &bounce).await;
    assert_eq!(counts(&r), (0, 1, 0, 0), "{r}");
    let now = delivery(&app, &did).await;
    assert_eq!(now["status"], json!("bounced"), "{now}");
    assert_eq!(now["bounce"], json!("hard"), "{now}");
    let ev = events(&rx, "delivery.bounced", &did, 1).await;
    assert_eq!(ev.len(), 1, "{ev:?}");
    let tr = feedback_trace(&app, &now).await;
    assert_eq!(tr.len(), 1, "{tr:?}");
    assert_eq!(tr[0]["args"]["provider"], json!("ses"), "{tr:?}");
    assert!(s(&tr[0]["args"]["detail"]).contains("550 5.1.1"), "{tr:?}");

    // a complaint (a configuration set's event) on another delivery
    let (d2, mid2) = send(&app, &flow).await;
    let complaint = sns_signed(
        sns_notification(
            json!({"eventType": "Complaint", "mail": {"messageId": mid2},
                   "complaint": {"complaintFeedbackType": "abuse"}}),
            TOPIC,
            &cert_url,
        ),
        &sk,
    );
    let r = sns_post(&app, &ch, &complaint).await;
    assert_eq!(counts(&r), (1, 0, 0, 0), "{r}");
    assert_eq!(
        delivery(&app, &s(&d2["id"])).await["status"],
        json!("complained")
    );
    events(&rx, "delivery.complained", &s(&d2["id"]), 1).await;

    // the certificate was fetched once per node, however many messages
    let fetched = received(&certs)
        .await
        .iter()
        .filter(|q| q.url.path() == "/SimpleNotificationService-test.pem")
        .count();
    assert!(
        (1..=3).contains(&fetched),
        "fetched {fetched} times (cached per node)"
    );
}
