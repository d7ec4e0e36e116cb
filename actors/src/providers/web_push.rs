//! web_push / `web_push`: one RFC 8030 push per subscription of the recipient,
//! its JSON payload encrypted for the subscription's keys (RFC 8291 `aes128gcm`)
//! and the request signed with the channel's VAPID key (RFC 8292, an ES256 JWT).
//!
//! The subscription's identifier is its push endpoint URL; `keys.p256dh` and
//! `keys.auth` come from the browser's `PushSubscription`. 404/410 from the push
//! service: the subscription is gone (removed by the delivery actor).

use super::{
    b64url, b64url_decode,
    channel::{url_like, Fields, MASK},
    classify_status, fit_body, settle, transport_error,
    webhook::retry_after,
    Clients, ConfigField, Device, FieldFormat, Guard, HttpTransport, Provider, ProviderSpec,
    SendError, SendRequest, SendResult, HTTP_TIMEOUT,
};
use crate::error::Validator;
use crate::model::{ChannelType, DeliveryErrorCode, PushSubscription};
use futures_util::future::BoxFuture;
use p256::elliptic_curve::sec1::ToEncodedPoint;
use p256::pkcs8::EncodePrivateKey;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use web_push_native::Auth;

/// A VAPID subject as the provider's `validate` takes it: a `mailto:`
/// address or an https URL, without whitespace (U+0085 is whitespace to the
/// check, not to every pattern dialect's `\s`).
const SUBJECT: &str = r"^(mailto:[\s\S]*|[Hh][Tt][Tt][Pp][Ss]://[^\s\x85]+)$";

/// How long a push service keeps an undelivered message (the `TTL` header).
pub const TTL_SECONDS: u64 = 24 * 3600;
/// Lifetime of a VAPID JWT (RFC 8292: at most 24 hours).
const VAPID_LIFETIME_SECS: i64 = 12 * 3600;
/// Largest plaintext that fits the 4096-byte payload every push service takes:
/// 4096 − 86 (salt, record size, key id) − 17 (padding delimiter, tag).
const MAX_PLAINTEXT: usize = 4096 - 86 - 17;

pub struct WebPush(HttpTransport);

static SPEC: ProviderSpec = ProviderSpec {
    name: "web_push",
    channel_type: ChannelType::WebPush,
    summary: "RFC 8030 web push (RFC 8291 encryption, RFC 8292 VAPID) to each browser subscription.",
    example: || json!({"subject": "mailto:ops@example.com"}),
    retry: true,
    fields: &[
        ConfigField {
            name: "subject",
            required: true,
            secret: false,
            format: FieldFormat::Pattern(SUBJECT),
            description: "VAPID `sub`: a `mailto:` address or an https URL push services can reach you at.",
        },
        ConfigField {
            name: "vapid_public_key",
            required: false,
            secret: false,
            format: FieldFormat::Format("vapid-public-key"),
            description: "base64url uncompressed P-256 point (65 bytes). Give both keys or neither: Herald then generates the pair.",
        },
        ConfigField {
            name: "vapid_private_key",
            required: false,
            secret: true,
            format: FieldFormat::Format("vapid-private-key"),
            description: "base64url P-256 private scalar (32 bytes), the `web-push generate-vapid-keys` format.",
        },
    ],
    // checked by `validate_vapid`
    together: &[["vapid_public_key", "vapid_private_key"]],
    // the VAPID key signs for the push services the subscriptions name, not the
    // config
    destinations: &[],
};

/// A new VAPID key pair: (public key as the base64url uncompressed P-256 point,
/// private key as the base64url 32-byte scalar), the forms browsers and the
/// `web-push` tools use.
pub fn generate_vapid_keys() -> (String, String) {
    let sk = p256::SecretKey::random(&mut rand::rngs::OsRng);
    let public = sk.public_key().as_affine().to_encoded_point(false);
    (b64url(public.as_bytes()), b64url(&sk.to_bytes()))
}

fn parse_private(s: &str) -> Option<p256::SecretKey> {
    let raw = b64url_decode(s)?;
    if raw.len() != 32 {
        return None;
    }
    p256::SecretKey::from_slice(&raw).ok()
}

fn parse_public(s: &str) -> Option<p256::PublicKey> {
    let raw = b64url_decode(s)?;
    if raw.len() != 65 || raw[0] != 4 {
        return None;
    }
    p256::PublicKey::from_sec1_bytes(&raw).ok()
}

/// Both VAPID keys or neither (Herald generates them); each in its format; the
/// public key the private key's.
pub(crate) fn validate_vapid(config: &Map<String, Value>, v: &mut Validator) {
    let get = |k: &str| {
        config
            .get(k)
            .and_then(|x| x.as_str())
            .filter(|s| !s.is_empty() && *s != MASK)
    };
    let (public, private) = (get("vapid_public_key"), get("vapid_private_key"));
    let sk = private.map(|p| (p, parse_private(p)));
    let pk = public.map(|p| (p, parse_public(p)));
    if let Some((_, None)) = sk {
        v.push(
            "config.vapid_private_key",
            "format",
            "must be a base64url P-256 private key (32 bytes)",
        );
    }
    if let Some((_, None)) = pk {
        v.push(
            "config.vapid_public_key",
            "format",
            "must be a base64url uncompressed P-256 point (65 bytes)",
        );
    }
    match (pk, sk) {
        (Some((_, Some(pk))), Some((_, Some(sk)))) if sk.public_key() != pk => v.push(
            "config.vapid_public_key",
            "format",
            "is not the public key of vapid_private_key",
        ),
        (Some(_), None) => v.push(
            "config.vapid_private_key",
            "required",
            "give both VAPID keys, or neither and Herald generates them",
        ),
        (None, Some(_)) => v.push(
            "config.vapid_public_key",
            "required",
            "give both VAPID keys, or neither and Herald generates them",
        ),
        _ => {}
    }
}

/// The VAPID signing key of a channel, ready for jsonwebtoken.
struct Vapid {
    key: jsonwebtoken::EncodingKey,
    public: String,
    subject: String,
}

impl Vapid {
    fn from_config(config: &Map<String, Value>) -> Result<Vapid, SendError> {
        let sk = config
            .get("vapid_private_key")
            .and_then(|x| x.as_str())
            .and_then(parse_private)
            .ok_or_else(|| super::misconfigured("the channel has no usable VAPID private key"))?;
        let der = sk
            .to_pkcs8_der()
            .map_err(|_| super::misconfigured("the VAPID key cannot be encoded"))?;
        let public = b64url(
            sk.public_key()
                .as_affine()
                .to_encoded_point(false)
                .as_bytes(),
        );
        let subject = super::cfg_str(config, "subject")
            .unwrap_or_default()
            .to_string();
        Ok(Vapid {
            key: jsonwebtoken::EncodingKey::from_ec_der(der.as_bytes()),
            public,
            subject,
        })
    }

    /// `vapid t=<JWT>, k=<public key>` for the origin of `endpoint`.
    fn authorization(&self, endpoint: &reqwest::Url) -> Result<String, SendError> {
        let aud = endpoint.origin().ascii_serialization();
        let claims = json!({
            "aud": aud,
            "exp": chrono::Utc::now().timestamp() + VAPID_LIFETIME_SECS,
            "sub": self.subject,
        });
        let header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
        let t = jsonwebtoken::encode(&header, &claims, &self.key)
            .map_err(|e| super::misconfigured(format!("cannot sign the VAPID token: {e}")))?;
        Ok(format!("vapid t={t}, k={}", self.public))
    }
}

/// The notification as the service worker receives it (after decryption).
pub fn payload(req: &SendRequest) -> Vec<u8> {
    let d = &req.delivery;
    fit_body(&d.data.body, MAX_PLAINTEXT, |body| {
        json!({
            "title": d.data.subject,
            "body": body,
            "url": d.data.url,
            "delivery_id": d.id,
        })
        .to_string()
        .into_bytes()
    })
}

fn subscription_keys(sub: &PushSubscription) -> Option<(p256::PublicKey, Auth)> {
    let keys = sub.keys.as_ref()?;
    let p256dh = b64url_decode(keys.get("p256dh")?.as_str()?)?;
    let auth: [u8; 16] = b64url_decode(keys.get("auth")?.as_str()?)?
        .try_into()
        .ok()?;
    let public = p256::PublicKey::from_sec1_bytes(&p256dh).ok()?;
    Some((public, Auth::from(auth)))
}

async fn push_one(
    http: reqwest::Client, guard: &Guard, vapid: &Vapid, sub: &PushSubscription, plaintext: Vec<u8>,
) -> Device {
    let endpoint = match guard.policy().check_url(&sub.identifier) {
        Ok(Some(u)) => u,
        Ok(None) => {
            return Device::Failed(SendError::Rejected {
                code: DeliveryErrorCode::InvalidAddress,
                message: "the subscription's endpoint is not a URL".into(),
            })
        }
        Err(refused) => return Device::Failed(super::refused_error(&refused)),
    };
    let Some((ua_public, auth)) = subscription_keys(sub) else {
        return Device::Failed(SendError::Rejected {
            code: DeliveryErrorCode::InvalidAddress,
            message: "the subscription's keys (p256dh, auth) do not parse".into(),
        });
    };
    let body = match web_push_native::encrypt(plaintext, &ua_public, &auth) {
        Ok(b) => b,
        Err(e) => {
            return Device::Failed(SendError::Rejected {
                code: DeliveryErrorCode::InvalidAddress,
                message: format!("cannot encrypt for this subscription: {e}"),
            })
        }
    };
    let authorization = match vapid.authorization(&endpoint) {
        Ok(a) => a,
        Err(e) => return Device::Failed(e),
    };
    let resp = http
        .post(endpoint)
        .timeout(HTTP_TIMEOUT)
        .header("ttl", TTL_SECONDS.to_string())
        .header("content-encoding", "aes128gcm")
        .header("content-type", "application/octet-stream")
        .header("urgency", "normal")
        .header("authorization", authorization)
        .body(body)
        .send()
        .await;
    let resp = match resp {
        Ok(r) => r,
        Err(e) => return Device::Failed(transport_error(HTTP_TIMEOUT, e)),
    };
    let status = resp.status().as_u16();
    if (200..300).contains(&status) {
        let mut extra = Map::new();
        extra.insert("status_code".into(), status.into());
        if let Some(loc) = resp
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
        {
            extra.insert("message_id".into(), Value::String(loc.to_string()));
        }
        return Device::Sent(extra);
    }
    let ra = retry_after(resp.headers());
    // push services answer free text or JSON of their own: only the status is kept
    match status {
        404 | 410 => Device::Expired(format!("the push service answered {status}")),
        _ => Device::Failed(classify_status(status, None, ra)),
    }
}

impl Provider for WebPush {
    fn spec() -> &'static ProviderSpec {
        &SPEC
    }

    fn validate(config: &Map<String, Value>, v: &mut Validator) {
        let f = Fields(config);
        if let Some(sub) = f.str("subject") {
            if !(sub.starts_with("mailto:") || url_like(sub, &["https://"])) {
                v.push("config.subject", "format", "must be a mailto: or https URL");
            }
        } else {
            f.want_str("subject", v);
        }
        f.want_str("vapid_public_key", v);
        f.want_str("vapid_private_key", v);
        validate_vapid(config, v);
    }

    /// A channel with neither VAPID key gets a fresh P-256 pair (API.md
    /// §10): the public key shows in channel responses (and to users, who
    /// subscribe with it), the private key is a secret.
    fn complete(config: &mut Map<String, Value>) {
        let absent = |k: &str| config.get(k).is_none_or(|v| v.is_null() || v == "");
        if absent("vapid_public_key") && absent("vapid_private_key") {
            let (public, private) = generate_vapid_keys();
            config.insert("vapid_public_key".into(), Value::String(public));
            config.insert("vapid_private_key".into(), Value::String(private));
        }
    }

    fn transport(c: &Clients) -> Option<Arc<dyn Provider>> {
        Some(Arc::new(WebPush(c.http_transport())))
    }

    fn send(&self, req: SendRequest) -> BoxFuture<'static, SendResult> {
        let HttpTransport { http, guard } = self.0.clone();
        Box::pin(async move {
            if req.subscriptions.is_empty() {
                return settle(vec![]);
            }
            let vapid = Vapid::from_config(&req.config)?;
            let plaintext = payload(&req);
            let sends = req.subscriptions.iter().map(|sub| {
                let (http, guard, vapid, plaintext) =
                    (http.clone(), &guard, &vapid, plaintext.clone());
                async move {
                    (
                        sub.identifier.clone(),
                        push_one(http, guard, vapid, sub, plaintext).await,
                    )
                }
            });
            settle(futures_util::future::join_all(sends).await)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::spec::testing::pattern_agrees;

    #[test]
    fn the_subject_pattern_is_the_check() {
        pattern_agrees::<WebPush>(
            "subject",
            &[
                ("mailto:ops@example.com", true),
                ("https://example.com/contact", true),
                ("HTTPS://example.com", true),
                ("http://example.com", false),
                ("https://", false),
                ("https://a b", false),
                ("https://a\u{85}b", false),
                ("https://a\u{a0}b", false),
                ("ops@example.com", false),
                ("", false),
            ],
        );
    }

    /// `together`: one VAPID key without the other is refused.
    #[test]
    fn the_vapid_keys_come_together() {
        assert_eq!(SPEC.together, &[["vapid_public_key", "vapid_private_key"]]);
        let (public, private) = generate_vapid_keys();
        for (given, missing) in [
            ("vapid_public_key", "vapid_private_key"),
            ("vapid_private_key", "vapid_public_key"),
        ] {
            let mut cfg = SPEC.example();
            let key = if given == "vapid_public_key" {
                &public
            } else {
                &private
            };
            cfg.insert(given.into(), key.clone().into());
            let mut v = Validator::new();
            WebPush::validate(&cfg, &mut v);
            assert!(
                v.fields
                    .iter()
                    .any(|e| e.field == format!("config.{missing}") && e.reason == "required"),
                "{given} alone: {:?}",
                v.fields
            );
        }
    }

    #[test]
    fn generated_keys_parse_and_match() {
        let (public, private) = generate_vapid_keys();
        let sk = parse_private(&private).expect("private key parses");
        let pk = parse_public(&public).expect("public key parses");
        assert_eq!(sk.public_key(), pk);
        let mut cfg = Map::new();
        cfg.insert("vapid_public_key".into(), public.into());
        cfg.insert("vapid_private_key".into(), private.into());
        let mut v = Validator::new();
        validate_vapid(&cfg, &mut v);
        assert!(v.is_empty());
        let (other, _) = generate_vapid_keys();
        cfg.insert("vapid_public_key".into(), other.into());
        let mut v = Validator::new();
        validate_vapid(&cfg, &mut v);
        assert!(!v.is_empty(), "a public key of another pair is refused");
    }
}
