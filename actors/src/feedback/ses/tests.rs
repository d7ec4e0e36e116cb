//! SNS verification with real RSA keys: a self-signed certificate made
//! here, messages signed with its key as SNS signs them, the certificate
//! served from a listener on 127.0.0.1 (the trusted host) for the fetch.

use super::*;
use rsa::pkcs1v15::SigningKey;
use rsa::signature::{SignatureEncoding, Signer};
use rsa::RsaPrivateKey;
use serde_json::json;
use std::str::FromStr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use x509_cert::builder::{Builder, CertificateBuilder, Profile};
use x509_cert::der::EncodePem;
use x509_cert::name::Name;
use x509_cert::serial_number::SerialNumber;
use x509_cert::spki::SubjectPublicKeyInfoOwned;
use x509_cert::time::Validity;

const TOPIC: &str = "arn:aws:sns:eu-west-1:123456789012:ses-events";
const CERT_URL: &str = "https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-t.pem";

/// A key and its self-signed certificate (PEM), made once: RSA key
/// generation is slow.
fn key(n: usize) -> &'static (RsaPrivateKey, String) {
    static KEYS: OnceLock<Vec<(RsaPrivateKey, String)>> = OnceLock::new();
    &KEYS.get_or_init(|| {
        (0..2)
            .map(|_| {
                let sk = RsaPrivateKey::new(&mut rand::rngs::OsRng, 2048).unwrap();
                let signer = SigningKey::<sha2::Sha256>::new(sk.clone());
                let spki = SubjectPublicKeyInfoOwned::from_key(sk.to_public_key()).unwrap();
                let cert = CertificateBuilder::new(
                    Profile::Root,
                    SerialNumber::from(1u32),
                    Validity::from_now(Duration::from_secs(3600)).unwrap(),
                    Name::from_str("CN=sns.test").unwrap(),
                    spki,
                    &signer,
                )
                .unwrap()
                .build::<rsa::pkcs1v15::Signature>()
                .unwrap();
                let pem = cert.to_pem(x509_cert::der::pem::LineEnding::LF).unwrap();
                (sk, pem)
            })
            .collect::<Vec<_>>()
    })[n]
}

fn cert(n: usize) -> SigningCert {
    SigningCert::from_pem(key(n).1.as_bytes()).unwrap()
}

/// `fields` signed by key `n` with SignatureVersion `version`.
fn signed(mut fields: Value, n: usize, version: &str) -> Value {
    fields["SignatureVersion"] = json!(version);
    let text = Message(fields.as_object().unwrap().clone())
        .canonical()
        .unwrap();
    let sk = key(n).0.clone();
    let sig = match version {
        "1" => SigningKey::<sha1::Sha1>::new(sk)
            .sign(text.as_bytes())
            .to_vec(),
        _ => SigningKey::<sha2::Sha256>::new(sk)
            .sign(text.as_bytes())
            .to_vec(),
    };
    fields["Signature"] = json!(base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        sig
    ));
    fields
}

fn notification(event: Value, cert_url: &str) -> Value {
    json!({
        "Type": "Notification",
        "MessageId": "22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324",
        "TopicArn": TOPIC,
        "Message": event.to_string(),
        "Timestamp": "2026-11-29T20:00:00.000Z",
        "SigningCertURL": cert_url,
        "UnsubscribeURL": "https://sns.eu-west-1.amazonaws.com/?Action=Unsubscribe",
    })
}

fn bounce(kind: &str) -> Value {
    json!({
        "notificationType": "Bounce",
        "bounce": {"bounceType": kind, "bounceSubType": "General",
                   "bouncedRecipients": [{"emailAddress": "a@example.com",
                                          "diagnosticCode": "smtp; 550 5.1.1 user unknown"}],
                   "timestamp": "2026-11-29T19:59:00.000Z"},
        "mail": {"messageId": "0102018c-ses-id", "timestamp": "2026-11-29T19:58:00.000Z"},
    })
}

fn now() -> Timestamp {
    Timestamp::now()
}

/// The verification after the fetch: `check` then `finish` with `cert`.
fn run(
    config: &Value, body: &Value, header: Option<&str>, c: &SigningCert,
) -> Result<Verified, Refused> {
    let headers: Vec<(String, String)> = header
        .map(|h| vec![(TYPE_HEADER.to_string(), h.to_string())])
        .unwrap_or_default();
    let body = serde_json::to_vec(body).unwrap();
    let hook = Hook {
        url: "https://herald.example/hooks/v1/c",
        headers: &headers,
        body: &body,
    };
    let (msg, _) = check(config, &hook, None)?;
    finish(&msg, c, now(), None)
}

fn reports(r: Result<Verified, Refused>) -> Vec<Report> {
    match r {
        Ok(Verified::Reports(r)) => r,
        other => panic!("reports expected, got {other:?}"),
    }
}

#[test]
fn ses_events_become_reports_with_either_signature_version() {
    let none = json!({});
    for version in ["1", "2"] {
        let m = signed(notification(bounce("Permanent"), CERT_URL), 0, version);
        let r = reports(run(&none, &m, Some("Notification"), &cert(0)));
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].message_id, "0102018c-ses-id");
        assert_eq!(r[0].kind, ReportKind::Bounced(BounceKind::Hard));
        assert_eq!(
            r[0].detail.as_deref(),
            Some("Permanent: General: smtp; 550 5.1.1 user unknown")
        );
        assert_eq!(
            r[0].at.map(|t| t.to_rfc3339()).as_deref(),
            Some("2026-11-29T19:59:00.000Z")
        );
    }
    for (event, kind) in [
        (
            bounce("Transient"),
            Some(ReportKind::Bounced(BounceKind::Soft)),
        ),
        (
            bounce("Undetermined"),
            Some(ReportKind::Bounced(BounceKind::Soft)),
        ),
        (
            json!({"eventType": "Delivery", "mail": {"messageId": "m"},
                   "delivery": {"smtpResponse": "250 ok", "timestamp": "2026-11-29T20:00:00Z"}}),
            Some(ReportKind::Delivered),
        ),
        (
            json!({"notificationType": "Complaint", "mail": {"messageId": "m"},
                   "complaint": {"complaintFeedbackType": "abuse"}}),
            Some(ReportKind::Complained),
        ),
        (
            json!({"eventType": "Reject", "mail": {"messageId": "m"}, "reject": {"reason": "Bad content"}}),
            Some(ReportKind::Failed),
        ),
        (
            json!({"eventType": "Open", "mail": {"messageId": "m"}}),
            None,
        ),
        (json!("a plain SNS test message"), None),
    ] {
        let m = signed(notification(event.clone(), CERT_URL), 0, "2");
        let r = reports(run(&none, &m, None, &cert(0)));
        assert_eq!(r.first().map(|r| r.kind), kind, "{event}");
    }
    // a Subject is signed when present
    let mut n = notification(bounce("Permanent"), CERT_URL);
    n["Subject"] = json!("Amazon SES Email Event Notification");
    let m = signed(n, 0, "2");
    assert_eq!(reports(run(&none, &m, None, &cert(0))).len(), 1);
}

#[test]
fn tampering_a_wrong_key_a_wrong_topic_and_a_wrong_host_are_refused() {
    let none = json!({});
    let m = signed(notification(bounce("Permanent"), CERT_URL), 0, "2");
    // the event changed
    let mut t = m.clone();
    t["Message"] = json!(bounce("Transient").to_string());
    assert!(run(&none, &t, None, &cert(0)).is_err());
    // a signed field changed, or the version does not match the signature
    let mut t = m.clone();
    t["Timestamp"] = json!("2026-11-29T20:00:01.000Z");
    assert!(run(&none, &t, None, &cert(0)).is_err());
    let mut t = m.clone();
    t["SignatureVersion"] = json!("1");
    assert!(run(&none, &t, None, &cert(0)).is_err());
    t["SignatureVersion"] = json!("3");
    assert!(run(&none, &t, None, &cert(0)).is_err());
    // a Subject added
    let mut t = m.clone();
    t["Subject"] = json!("added");
    assert!(run(&none, &t, None, &cert(0)).is_err());
    // another key's certificate
    assert!(run(&none, &m, None, &cert(1)).is_err());
    // the header says another type
    assert!(run(&none, &m, Some("SubscriptionConfirmation"), &cert(0)).is_err());
    // the channel takes another topic only; its own is taken
    let other = json!({ TOPIC_FIELD: "arn:aws:sns:eu-west-1:123456789012:other" });
    assert!(run(&other, &m, None, &cert(0)).is_err());
    assert!(run(&json!({ TOPIC_FIELD: TOPIC }), &m, None, &cert(0)).is_ok());
    // a certificate URL that is not SNS's, even correctly signed
    for url in [
        "https://evil.example/cert.pem",
        "http://sns.eu-west-1.amazonaws.com/cert.pem",
        "http://127.0.0.1:1/cert.pem",
    ] {
        let m = signed(notification(bounce("Permanent"), url), 0, "2");
        assert!(run(&none, &m, None, &cert(0)).is_err(), "{url}");
    }
    // not JSON, not signed
    let mut t = m.clone();
    t.as_object_mut().unwrap().remove("Signature");
    assert!(run(&none, &t, None, &cert(0)).is_err());
}

#[test]
fn a_subscription_confirmation_names_an_sns_url_to_get() {
    let confirmation = |subscribe: &str| {
        signed(
            json!({
                "Type": "SubscriptionConfirmation",
                "MessageId": "165545c9-2a5c-472c-8df2-7ff2be2b3b1b",
                "Token": "2336412f37fb687f5d51e6e2425f004aed",
                "TopicArn": TOPIC,
                "Message": "You have chosen to subscribe to the topic …",
                "SubscribeURL": subscribe,
                "Timestamp": "2026-11-29T20:00:00.000Z",
                "SigningCertURL": CERT_URL,
            }),
            0,
            "1",
        )
    };
    let url = "https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=x&Token=y";
    assert_eq!(
        run(
            &json!({}),
            &confirmation(url),
            Some("SubscriptionConfirmation"),
            &cert(0)
        ),
        Ok(Verified::ConfirmSubscription {
            subscribe_url: url.to_string()
        })
    );
    // signed, but the URL to confirm with is not SNS's
    let evil = confirmation("https://evil.example/?Action=ConfirmSubscription");
    assert!(run(&json!({}), &evil, None, &cert(0)).is_err());
}

#[test]
fn a_certificate_out_of_its_validity_is_refused() {
    let m = signed(notification(bounce("Permanent"), CERT_URL), 0, "2");
    let body = serde_json::to_vec(&m).unwrap();
    let hook = Hook {
        url: "https://herald.example/hooks/v1/c",
        headers: &[],
        body: &body,
    };
    let (msg, _) = check(&json!({}), &hook, None).unwrap();
    let later = Timestamp::now().plus_millis(2 * 3600 * 1000);
    assert!(finish(&msg, &cert(0), later, None).is_err());
    assert!(finish(&msg, &cert(0), Timestamp::now(), None).is_ok());
}

/// Serves `body` to every request on 127.0.0.1, counting the requests.
async fn serve(body: String) -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = hits.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf).await;
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = s.write_all(answer.as_bytes()).await;
        }
    });
    (port, hits)
}

fn certs(policy: crate::egress::EgressPolicy, trusted: Option<&str>) -> SnsCerts {
    let policy = Arc::new(policy);
    let http = crate::egress::client_builder(&policy).build().unwrap();
    SnsCerts::new(http, policy, trusted.map(str::to_string))
}

#[tokio::test]
async fn the_certificate_is_fetched_from_the_trusted_host_once() {
    let (port, hits) = serve(key(0).1.clone()).await;
    let url = format!("http://127.0.0.1:{port}/SimpleNotificationService-t.pem");
    let certs = certs(crate::egress::EgressPolicy::open(), Some("127.0.0.1"));
    for event in [bounce("Permanent"), bounce("Transient")] {
        let m = signed(notification(event, &url), 0, "2");
        let body = serde_json::to_vec(&m).unwrap();
        let hook = Hook {
            url: "https://herald.example/hooks/v1/c",
            headers: &[],
            body: &body,
        };
        let r = verify(&json!({}), &hook, now(), &certs).await;
        assert_eq!(reports(r).len(), 1);
    }
    // cached by URL: fetched once
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 1);
    // signed with another key than the served certificate's
    let m = signed(notification(bounce("Permanent"), &url), 1, "2");
    let body = serde_json::to_vec(&m).unwrap();
    let hook = Hook {
        url: "https://herald.example/hooks/v1/c",
        headers: &[],
        body: &body,
    };
    assert!(verify(&json!({}), &hook, now(), &certs).await.is_err());
}

#[tokio::test]
async fn the_fetch_goes_through_the_egress_guard_and_needs_the_trusted_host() {
    let (port, hits) = serve(key(0).1.clone()).await;
    let url = format!("http://127.0.0.1:{port}/c.pem");
    let m = signed(notification(bounce("Permanent"), &url), 0, "2");
    let body = serde_json::to_vec(&m).unwrap();
    let hook = Hook {
        url: "https://herald.example/hooks/v1/c",
        headers: &[],
        body: &body,
    };
    // trusted, but the egress policy refuses loopback
    let guarded = certs(crate::egress::EgressPolicy::default(), Some("127.0.0.1"));
    let e = verify(&json!({}), &hook, now(), &guarded)
        .await
        .unwrap_err();
    assert!(e.0.contains("loopback"), "{e:?}");
    // allowed by the policy, but not the trusted host
    let untrusted = certs(crate::egress::EgressPolicy::open(), None);
    assert!(verify(&json!({}), &hook, now(), &untrusted).await.is_err());
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 0);
}
