//! SendGrid's Event Webhook, signed ("Signed Event Webhook Requests" in
//! SendGrid's mail settings): SendGrid signs `timestamp + raw body` with an
//! ECDSA P-256 key of its own (SHA-256, the signature DER-encoded, base64, in
//! `X-Twilio-Email-Event-Webhook-Signature`; the timestamp, Unix seconds, in
//! `X-Twilio-Email-Event-Webhook-Timestamp`) and shows the public key, base64
//! DER SubjectPublicKeyInfo, which the channel keeps as
//! `webhook_verification_key`.
//!
//! The body is a JSON array of events, each naming its message by
//! `sg_message_id`: `<X-Message-Id>.<filter…>`, where `X-Message-Id` is the
//! header of SendGrid's send answer that the `sendgrid` provider stores as the
//! delivery's message id.

use super::detail::short;
use super::{BounceKind, Hook, Refused, Report, ReportKind, Verified};
use crate::model::Timestamp;
use base64::Engine as _;
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};
use p256::pkcs8::DecodePublicKey;
use serde_json::Value;

/// The config field holding SendGrid's public verification key.
pub const KEY_FIELD: &str = "webhook_verification_key";
const SIGNATURE_HEADER: &str = "x-twilio-email-event-webhook-signature";
const TIMESTAMP_HEADER: &str = "x-twilio-email-event-webhook-timestamp";

/// How far the signed timestamp may be from Herald's clock, either way.
/// SendGrid documents no window; the timestamp is signed so that an old
/// request cannot be replayed at will, and ten minutes leave room for clock
/// skew and a slow delivery of the request.
pub const TOLERANCE_SECONDS: i64 = 600;

/// The verification key as SendGrid shows it: base64 DER
/// SubjectPublicKeyInfo of a P-256 key (a PEM `PUBLIC KEY` block is taken
/// too). Also the provider's check of the field.
pub fn parse_key(raw: &str) -> Result<VerifyingKey, String> {
    let b64: String = raw
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .flat_map(|l| l.chars())
        .filter(|c| !c.is_whitespace())
        .collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_err(|_| "not base64".to_string())?;
    let key = p256::PublicKey::from_public_key_der(&der)
        .map_err(|_| "not a P-256 public key (DER SubjectPublicKeyInfo)".to_string())?;
    Ok(VerifyingKey::from(&key))
}

/// Checks a SendGrid callback's signature and timestamp and reads its events.
pub fn verify(config: &Value, hook: &Hook<'_>, now: Timestamp) -> Result<Verified, Refused> {
    let key = config[KEY_FIELD]
        .as_str()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| Refused::new(format!("the channel has no {KEY_FIELD}")))?;
    let key = parse_key(key).map_err(|e| Refused::new(format!("{KEY_FIELD}: {e}")))?;
    let signature = hook
        .header(SIGNATURE_HEADER)
        .ok_or_else(|| Refused::new("no X-Twilio-Email-Event-Webhook-Signature"))?;
    let timestamp = hook
        .header(TIMESTAMP_HEADER)
        .ok_or_else(|| Refused::new("no X-Twilio-Email-Event-Webhook-Timestamp"))?;
    let signed_at: i64 = timestamp
        .trim()
        .parse()
        .map_err(|_| Refused::new("the signature's timestamp is not a number"))?;
    if (now.millis() / 1000 - signed_at).abs() > TOLERANCE_SECONDS {
        return Err(Refused::new(
            "the signature's timestamp is more than 10 minutes from now",
        ));
    }
    let der = base64::engine::general_purpose::STANDARD
        .decode(signature.trim())
        .map_err(|_| Refused::new("the signature is not base64"))?;
    let signature = Signature::from_der(&der)
        .map_err(|_| Refused::new("the signature is not a DER ECDSA signature"))?;
    // a high-S signature is as valid as its low-S twin: either is accepted
    let signature = signature.normalize_s().unwrap_or(signature);
    let mut signed = Vec::with_capacity(timestamp.len() + hook.body.len());
    signed.extend_from_slice(timestamp.as_bytes());
    signed.extend_from_slice(hook.body);
    key.verify(&signed, &signature)
        .map_err(|_| Refused::new("the signature does not match"))?;
    let events: Vec<Value> = serde_json::from_slice(hook.body)
        .map_err(|_| Refused::new("the body is not a JSON array of events"))?;
    Ok(Verified::Reports(
        events.iter().filter_map(report).collect(),
    ))
}

/// What one event reports, if anything Herald tracks.
fn report(e: &Value) -> Option<Report> {
    let text = |k: &str| e[k].as_str().filter(|s| !s.is_empty());
    let (kind, detail) = match text("event")? {
        "delivered" => (ReportKind::Delivered, text("response")),
        "bounce" => (ReportKind::Bounced(bounce_kind(e)), None),
        "dropped" => (ReportKind::Failed, text("reason")),
        "spamreport" => (ReportKind::Complained, None),
        // deferred: SendGrid is still trying; processed, open, click,
        // unsubscribe…: nothing about the delivery's outcome
        _ => return None,
    };
    let detail = match kind {
        ReportKind::Bounced(_) => {
            let words: Vec<&str> = ["type", "bounce_classification", "status", "reason"]
                .iter()
                .filter_map(|k| text(k))
                .collect();
            (!words.is_empty()).then(|| short(&words.join(": ")))
        }
        _ => detail.map(short),
    };
    let message_id = text("sg_message_id")?.split('.').next()?.to_string();
    if message_id.is_empty() {
        return None;
    }
    Some(Report {
        message_id,
        kind,
        at: e["timestamp"]
            .as_i64()
            .map(|s| Timestamp::from_millis(s.saturating_mul(1000))),
        detail,
    })
}

/// SendGrid's `type`: `blocked` is a temporary refusal (soft); `bounce` is
/// permanent, and hard unless its `bounce_classification` says the refusal
/// was about something other than the address (the content, the sender's
/// reputation, volume, a technical fault, a mailbox that is full or off for
/// now), which says nothing against the address itself.
fn bounce_kind(e: &Value) -> BounceKind {
    if e["type"].as_str() == Some("blocked") {
        return BounceKind::Soft;
    }
    match e["bounce_classification"].as_str() {
        None | Some("Invalid Address") | Some("Unclassified") | Some("") => BounceKind::Hard,
        Some(_) => BounceKind::Soft,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::{signature::Signer, SigningKey};
    use p256::pkcs8::EncodePublicKey;
    use serde_json::json;

    const NOW: i64 = 1_790_000_000;

    fn keys() -> (SigningKey, String) {
        let sk = SigningKey::random(&mut rand::rngs::OsRng);
        let der = sk.verifying_key().to_public_key_der().unwrap();
        let b64 = base64::engine::general_purpose::STANDARD.encode(der.as_bytes());
        (sk, b64)
    }

    fn sign(sk: &SigningKey, ts: &str, body: &[u8]) -> String {
        let mut m = ts.as_bytes().to_vec();
        m.extend_from_slice(body);
        let s: Signature = sk.sign(&m);
        base64::engine::general_purpose::STANDARD.encode(s.to_der().as_bytes())
    }

    fn run(key: &str, ts: &str, sig: &str, body: &[u8]) -> Result<Verified, Refused> {
        let headers = vec![
            (SIGNATURE_HEADER.to_string(), sig.to_string()),
            (TIMESTAMP_HEADER.to_string(), ts.to_string()),
        ];
        let hook = Hook {
            url: "https://herald.example/hooks/v1/x",
            headers: &headers,
            body,
        };
        verify(
            &json!({ KEY_FIELD: key }),
            &hook,
            Timestamp::from_millis(NOW * 1000),
        )
    }

    fn events() -> Vec<u8> {
        serde_json::to_vec(&json!([
            {"event": "processed", "sg_message_id": "abc.filter1", "timestamp": NOW},
            {"event": "delivered", "sg_message_id": "abc.filter1.2.3", "timestamp": NOW,
             "response": "250 OK"},
            {"event": "bounce", "type": "bounce", "sg_message_id": "hard.f",
             "bounce_classification": "Invalid Address", "status": "5.1.1",
             "reason": "550 no such user"},
            {"event": "bounce", "type": "blocked", "sg_message_id": "blk.f"},
            {"event": "bounce", "type": "bounce", "sg_message_id": "rep.f",
             "bounce_classification": "Reputation"},
            {"event": "dropped", "sg_message_id": "drop.f", "reason": "Bounced Address"},
            {"event": "spamreport", "sg_message_id": "spam.f"},
            {"event": "deferred", "sg_message_id": "def.f"},
            {"event": "open", "sg_message_id": "abc.f"},
            {"event": "delivered"},
        ]))
        .unwrap()
    }

    #[test]
    fn a_signed_batch_gives_its_reports() {
        let (sk, key) = keys();
        let body = events();
        let ts = NOW.to_string();
        let Verified::Reports(r) = run(&key, &ts, &sign(&sk, &ts, &body), &body).unwrap() else {
            panic!("reports expected")
        };
        let got: Vec<(&str, ReportKind)> =
            r.iter().map(|r| (r.message_id.as_str(), r.kind)).collect();
        assert_eq!(
            got,
            vec![
                ("abc", ReportKind::Delivered),
                ("hard", ReportKind::Bounced(BounceKind::Hard)),
                ("blk", ReportKind::Bounced(BounceKind::Soft)),
                ("rep", ReportKind::Bounced(BounceKind::Soft)),
                ("drop", ReportKind::Failed),
                ("spam", ReportKind::Complained),
            ]
        );
        assert_eq!(r[0].at, Some(Timestamp::from_millis(NOW * 1000)));
        assert_eq!(r[0].detail.as_deref(), Some("250 OK"));
        assert_eq!(
            r[1].detail.as_deref(),
            Some("bounce: Invalid Address: 5.1.1: 550 no such user")
        );
    }

    #[test]
    fn a_key_in_pem_is_read_too() {
        let (sk, key) = keys();
        let pem = format!("-----BEGIN PUBLIC KEY-----\n{key}\n-----END PUBLIC KEY-----\n");
        let body = b"[]";
        let ts = NOW.to_string();
        assert_eq!(
            run(&pem, &ts, &sign(&sk, &ts, body), body),
            Ok(Verified::Reports(vec![]))
        );
    }

    #[test]
    fn tampering_a_wrong_key_and_a_stale_timestamp_are_refused() {
        let (sk, key) = keys();
        let (_, other) = keys();
        let body = events();
        let ts = NOW.to_string();
        let sig = sign(&sk, &ts, &body);
        // the body changed
        let mut tampered = body.clone();
        let at = tampered.iter().position(|&b| b == b'h').unwrap();
        tampered[at] = b'H';
        assert!(run(&key, &ts, &sig, &tampered).is_err());
        // the timestamp changed (it is signed)
        let later = (NOW + 1).to_string();
        assert!(run(&key, &later, &sig, &body).is_err());
        // another key
        assert!(run(&other, &ts, &sig, &body).is_err());
        // signed, but too old, and too far ahead
        for t in [NOW - TOLERANCE_SECONDS - 1, NOW + TOLERANCE_SECONDS + 1] {
            let ts = t.to_string();
            let r = run(&key, &ts, &sign(&sk, &ts, &body), &body);
            assert!(r.unwrap_err().0.contains("10 minutes"));
        }
        // within the window
        let ts = (NOW - TOLERANCE_SECONDS).to_string();
        assert!(run(&key, &ts, &sign(&sk, &ts, &body), &body).is_ok());
        // no key, a key that is not one, no signature
        assert!(run("", &ts, &sig, &body).is_err());
        assert!(run("bm90IGEga2V5", &ts, &sig, &body).is_err());
        assert!(run(&key, &ts, "", &body).is_err());
    }

    #[test]
    fn a_signed_body_that_is_not_an_array_is_refused() {
        let (sk, key) = keys();
        let body = br#"{"event":"delivered"}"#;
        let ts = NOW.to_string();
        assert!(run(&key, &ts, &sign(&sk, &ts, body), body).is_err());
    }
}
