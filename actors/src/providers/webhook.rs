//! chat / `webhook`: a JSON POST of the delivery and its recipient, signed the
//! Standard Webhooks way (`webhook-id`, `webhook-timestamp`, `webhook-signature`)
//! and carrying the delivery id as `Idempotency-Key` so receivers can deduplicate.

use super::{
    channel::Fields, classify_status, transport_error, Clients, ConfigField, FieldFormat,
    HttpTransport, Provider, ProviderSpec, SendError, SendRequest, SendResult, Sent, MASK,
};
use crate::error::Validator;
use crate::model::{ChannelType, DeliveryErrorCode};
use base64::Engine;
use futures_util::future::BoxFuture;
use hmac::{Hmac, Mac};
use serde_json::{json, Map, Value};
use sha2::Sha256;
use std::sync::Arc;
use std::time::Duration;

pub struct Webhook(HttpTransport);

static SPEC: ProviderSpec = ProviderSpec {
    name: "webhook",
    channel_type: ChannelType::Chat,
    summary: "POSTs `{\"delivery\", \"recipient\"}` as JSON with Standard Webhooks headers \
              (`webhook-id`, `webhook-timestamp`, and `webhook-signature` with a secret).",
    example: || {
        json!({"url": "https://example.com/herald", "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
               "timeout_ms": 5000})
    },
    retry: true,
    fields: &[
        ConfigField {
            name: "url",
            required: true,
            secret: false,
            format: FieldFormat::Url { default: None },
            description: "Where each delivery is POSTed (http or https).",
        },
        ConfigField {
            name: "secret",
            required: false,
            secret: true,
            format: FieldFormat::Pattern(SECRET),
            description: "Signing secret: `whsec_` + base64 of random bytes (e.g. `echo whsec_$(openssl rand -base64 32)`); \
                          each request then carries `webhook-signature: v1,<base64 HMAC-SHA256 of \"id.timestamp.body\">`.",
        },
        ConfigField {
            name: "timeout_ms",
            required: false,
            secret: false,
            format: FieldFormat::Integer {
                min: 1,
                max: 120_000,
                default: Some(10_000),
            },
            description: "How long to wait for the receiver's answer; a timeout is retried.",
        },
    ],
    together: &[],
    destinations: &["url"],
};

/// A signing secret as [`secret_key`] takes it: `whsec_` and standard
/// base64 of at least one byte, padded, its unused last bits zero (the
/// decoder refuses others).
const SECRET: &str = "^whsec_(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{4}|[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)$";

/// The HMAC key of a `whsec_<base64>` secret (the rule [`SECRET`] states).
pub fn secret_key(secret: &str) -> Option<Vec<u8>> {
    let b64 = secret.strip_prefix("whsec_")?;
    base64::engine::general_purpose::STANDARD
        .decode(b64)
        .ok()
        .filter(|k| !k.is_empty())
}

/// `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`.
pub fn sign(key: &[u8], id: &str, ts: i64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("hmac takes any key length");
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(ts.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    )
}

pub(crate) fn retry_after(h: &reqwest::header::HeaderMap) -> Option<Duration> {
    h.get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .map(Duration::from_secs)
}

impl Provider for Webhook {
    fn spec() -> &'static ProviderSpec {
        &SPEC
    }

    fn validate(config: &Map<String, Value>, v: &mut Validator) {
        let f = Fields(config);
        f.want_url("url", v);
        if let Some(sec) = f.str("secret") {
            if sec != MASK && secret_key(sec).is_none() {
                v.push(
                    "config.secret",
                    "format",
                    "must be whsec_ followed by base64",
                );
            }
        } else {
            f.want_str("secret", v);
        }
        f.want_integer(
            "timeout_ms",
            1..=120_000,
            "milliseconds from 1 to 120000",
            v,
        );
    }

    fn transport(c: &Clients) -> Option<Arc<dyn Provider>> {
        Some(Arc::new(Webhook(c.http_transport())))
    }

    fn send(&self, req: SendRequest) -> BoxFuture<'static, SendResult> {
        let HttpTransport { http, guard } = self.0.clone();
        Box::pin(async move {
            let url = guard.url(
                req.config
                    .get("url")
                    .and_then(|v| v.as_str())
                    .unwrap_or_default(),
            )?;
            let timeout = req
                .config
                .get("timeout_ms")
                .and_then(|v| v.as_u64())
                .unwrap_or(10_000);
            let id = req.delivery.id.to_string();
            let body = serde_json::to_vec(&serde_json::json!({
                "delivery": req.delivery.view(),
                "recipient": req.recipient,
            }))
            .map_err(|e| SendError::Rejected {
                code: DeliveryErrorCode::ProviderRejected,
                message: e.to_string(),
            })?;
            let ts = chrono::Utc::now().timestamp();
            let timeout = Duration::from_millis(timeout);
            let mut rb = http
                .post(url)
                .timeout(timeout)
                .header("content-type", "application/json")
                .header("idempotency-key", &id)
                .header("webhook-id", &id)
                .header("webhook-timestamp", ts.to_string());
            if let Some(key) = req
                .config
                .get("secret")
                .and_then(|v| v.as_str())
                .and_then(secret_key)
            {
                rb = rb.header("webhook-signature", sign(&key, &id, ts, &body));
            }
            let resp = rb
                .body(body)
                .send()
                .await
                .map_err(|e| transport_error(timeout, e))?;
            let status = resp.status().as_u16();
            if (200..300).contains(&status) {
                return Ok(Sent::answered(status));
            }
            // a receiver's body is its own business (and may be anything): only
            // the status is kept
            Err(classify_status(status, None, retry_after(resp.headers())))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::spec::testing::pattern_agrees;

    #[test]
    fn the_secret_pattern_is_the_check() {
        pattern_agrees::<Webhook>(
            "secret",
            &[
                ("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", true),
                ("whsec_YQ==", true),
                ("whsec_YWI=", true),
                ("whsec_YR==", false),
                ("whsec_YWJ=", false),
                ("whsec_", false),
                ("whsec_YQ", false),
                ("whsec_a b=", false),
                ("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", false),
                ("", false),
            ],
        );
    }
}
