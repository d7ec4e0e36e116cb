//! mobile_push / `apns`: Apple Push Notification service, token-based auth.
//!
//! The provider token is an ES256 JWT (`iss` the team id, `kid` the key id)
//! signed with the channel's .p8 key and reused for 50 minutes (Apple wants it
//! refreshed between 20 and 60 minutes). One HTTP/2 POST per device token to
//! `{base_url}/3/device/{token}` with `apns-topic`, `apns-push-type: alert` and
//! `apns-id` = the delivery id. 410, `BadDeviceToken` or `Unregistered`: the token
//! is gone.

use super::{
    answer_json, cfg_str,
    channel::{Fields, ALPHANUMERIC, MASK},
    classify_status, error_token, fingerprint, fit_body, settle, transport_error,
    webhook::retry_after,
    Clients, ConfigField, Device, FieldFormat, Guard, Provider, ProviderSpec, SendError,
    SendRequest, SendResult, HTTP_TIMEOUT,
};
use crate::error::Validator;
use crate::model::{ChannelType, DeliveryErrorCode};
use dashmap::DashMap;
use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use uuid::Uuid;

pub const PRODUCTION_URL: &str = "https://api.push.apple.com";
pub const SANDBOX_URL: &str = "https://api.sandbox.push.apple.com";
/// How long a provider token is reused.
const TOKEN_LIFETIME: Duration = Duration::from_secs(50 * 60);
/// APNs refuses alert payloads above 4 KiB.
const MAX_PAYLOAD: usize = 4096;

struct Token {
    fingerprint: [u8; 32],
    jwt: String,
    issued: Instant,
}

pub struct Apns {
    http: reqwest::Client,
    guard: Guard,
    tokens: Arc<DashMap<Uuid, Token>>,
}

static SPEC: ProviderSpec = ProviderSpec {
    name: "apns",
    channel_type: ChannelType::MobilePush,
    summary: "Apple Push Notification service, token-based (ES256 .p8 key) over HTTP/2.",
    // without the private key: an example cannot hold a real key
    example: || {
        json!({"team_id": "ABCDE12345", "key_id": "KEY1234567", "topic": "com.example.app",
               "environment": "sandbox"})
    },
    retry: true,
    fields: &[
        ConfigField {
            name: "team_id",
            required: true,
            secret: false,
            format: FieldFormat::Pattern(ALPHANUMERIC),
            description: "Apple developer team id (the provider token's `iss`).",
        },
        ConfigField {
            name: "key_id",
            required: true,
            secret: false,
            format: FieldFormat::Pattern(ALPHANUMERIC),
            description: "Id of the .p8 key (the provider token's `kid`).",
        },
        ConfigField {
            name: "private_key",
            required: true,
            secret: true,
            format: FieldFormat::Format("pem-p256-private-key"),
            description: "The .p8 file's PEM (a P-256 key).",
        },
        ConfigField {
            name: "topic",
            required: true,
            secret: false,
            format: FieldFormat::Text,
            description: "The app's bundle id (`apns-topic`).",
        },
        ConfigField {
            name: "environment",
            required: false,
            secret: false,
            format: FieldFormat::OneOf {
                values: ENVIRONMENTS,
                default: "production",
            },
            description: "Picks Apple's host when `base_url` is not set.",
        },
        ConfigField {
            name: "base_url",
            required: false,
            secret: false,
            format: FieldFormat::Url {
                default: Some(PRODUCTION_URL),
            },
            description: "APNs base URL; a plain `http://` one is spoken as HTTP/2 with prior knowledge (a local test server).",
        },
    ],
    together: &[],
    // the signed provider token goes to `base_url` (or the host `environment`
    // picks), for `topic`, as `team_id`/`key_id`
    destinations: &["base_url", "environment", "topic", "team_id", "key_id"],
};

const ENVIRONMENTS: &[&str] = &["production", "sandbox"];

/// True when `pem` is a PKCS#8 P-256 private key (Apple's .p8 file).
pub fn private_key_ok(pem: &str) -> bool {
    use p256::pkcs8::DecodePrivateKey;
    p256::SecretKey::from_pkcs8_pem(pem.trim()).is_ok()
}

struct Creds {
    team_id: String,
    key_id: String,
    private_key: String,
    topic: String,
    base_url: String,
}

impl Creds {
    fn from_config(config: &Map<String, Value>) -> Result<Creds, SendError> {
        let get = |k: &str| {
            cfg_str(config, k)
                .map(str::to_string)
                .ok_or_else(|| super::misconfigured(format!("config.{k} is missing")))
        };
        let base_url = match cfg_str(config, "base_url") {
            Some(u) => u.to_string(),
            None if cfg_str(config, "environment") == Some("sandbox") => SANDBOX_URL.into(),
            None => PRODUCTION_URL.into(),
        };
        Ok(Creds {
            team_id: get("team_id")?,
            key_id: get("key_id")?,
            private_key: get("private_key")?,
            topic: get("topic")?,
            base_url: base_url.trim_end_matches('/').to_string(),
        })
    }

    fn fingerprint(&self) -> [u8; 32] {
        fingerprint(&[&self.team_id, &self.key_id, &self.private_key])
    }

    fn sign(&self) -> Result<String, SendError> {
        let key = jsonwebtoken::EncodingKey::from_ec_pem(self.private_key.trim().as_bytes())
            .map_err(|_| SendError::Unauthorized {
                message: "the APNs private key does not parse".into(),
            })?;
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::ES256);
        header.kid = Some(self.key_id.clone());
        let claims = json!({"iss": self.team_id, "iat": chrono::Utc::now().timestamp()});
        jsonwebtoken::encode(&header, &claims, &key).map_err(|e| SendError::Unauthorized {
            message: format!("cannot sign the APNs provider token: {e}"),
        })
    }
}

/// The channel's provider token: reused while younger than 50 minutes.
fn provider_token(
    tokens: &DashMap<Uuid, Token>, channel: Uuid, creds: &Creds,
) -> Result<String, SendError> {
    let fp = creds.fingerprint();
    if let Some(t) = tokens.get(&channel) {
        if t.fingerprint == fp && t.issued.elapsed() < TOKEN_LIFETIME {
            return Ok(t.jwt.clone());
        }
    }
    let jwt = creds.sign()?;
    tokens.insert(
        channel,
        Token {
            fingerprint: fp,
            jwt: jwt.clone(),
            issued: Instant::now(),
        },
    );
    Ok(jwt)
}

/// The alert payload, the body shortened when it would not fit 4 KiB.
pub fn payload(req: &SendRequest) -> Vec<u8> {
    let d = &req.delivery;
    fit_body(&d.data.body, MAX_PAYLOAD, |body| {
        let mut alert = Map::new();
        if !d.data.subject.is_empty() {
            alert.insert("title".into(), Value::String(d.data.subject.clone()));
        }
        alert.insert("body".into(), Value::String(body.to_string()));
        let mut p = json!({
            "aps": {"alert": alert, "sound": "default"},
            "delivery_id": d.id,
        });
        if let Some(u) = &d.data.url {
            p["url"] = Value::String(u.clone());
        }
        p.to_string().into_bytes()
    })
}

async fn push_one(
    http: &reqwest::Client, guard: &Guard, creds: &Creds, jwt: &str, apns_id: &str, device: &str,
    body: Vec<u8>,
) -> (Device, bool) {
    if device.is_empty() || !device.chars().all(|c| c.is_ascii_alphanumeric()) {
        return (
            Device::Failed(SendError::Rejected {
                code: DeliveryErrorCode::InvalidAddress,
                message: "an APNs device token is hexadecimal".into(),
            }),
            false,
        );
    }
    let url = match guard.url(&format!("{}/3/device/{device}", creds.base_url)) {
        Ok(u) => u,
        Err(e) => return (Device::Failed(e), false),
    };
    let resp = http
        .post(url)
        .timeout(HTTP_TIMEOUT)
        .header("authorization", format!("bearer {jwt}"))
        .header("apns-topic", &creds.topic)
        .header("apns-id", apns_id)
        .header("apns-push-type", "alert")
        .header("apns-priority", "10")
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await;
    let resp = match resp {
        Ok(r) => r,
        Err(e) => return (Device::Failed(transport_error(HTTP_TIMEOUT, e)), false),
    };
    let status = resp.status().as_u16();
    let ra = retry_after(resp.headers());
    let unique = resp
        .headers()
        .get("apns-unique-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let v = answer_json(resp).await;
    if status == 200 {
        let mut extra = Map::new();
        extra.insert("status_code".into(), status.into());
        if let Some(u) = unique {
            extra.insert("message_id".into(), Value::String(u));
        }
        return (Device::Sent(extra), false);
    }
    // APNs' own code (`reason`), never anything else of the body
    let reason = v["reason"]
        .as_str()
        .and_then(error_token)
        .unwrap_or_default()
        .to_string();
    match (status, reason.as_str()) {
        (410, _) | (_, "BadDeviceToken" | "Unregistered") => (
            Device::Expired(format!("APNs answered {status} {reason}")),
            false,
        ),
        // a token Apple considers stale: sign a new one and try again later
        (403, "ExpiredProviderToken") => (
            Device::Failed(SendError::Transient {
                message: "APNs answered 403 ExpiredProviderToken".into(),
                retry_after: None,
            }),
            true,
        ),
        (403, "InvalidProviderToken") => (
            Device::Failed(SendError::Unauthorized {
                message:
                    "APNs answered 403 InvalidProviderToken: check team_id, key_id and private_key"
                        .into(),
            }),
            true,
        ),
        _ => (
            Device::Failed(classify_status(
                status,
                Some(reason.as_str()).filter(|r| !r.is_empty()),
                ra,
            )),
            false,
        ),
    }
}

impl Provider for Apns {
    fn spec() -> &'static ProviderSpec {
        &SPEC
    }

    fn validate(config: &Map<String, Value>, v: &mut Validator) {
        let f = Fields(config);
        for k in ["team_id", "key_id", "private_key", "topic"] {
            f.want_str(k, v);
        }
        for k in ["team_id", "key_id"] {
            if let Some(x) = f.str(k) {
                if !x.chars().all(|c| c.is_ascii_alphanumeric()) {
                    v.push(format!("config.{k}"), "format", "letters and digits");
                }
            }
        }
        if let Some(pem) = f.str("private_key") {
            if pem != MASK && !private_key_ok(pem) {
                v.push(
                    "config.private_key",
                    "format",
                    "must be the .p8 PEM of a P-256 (ES256) key",
                );
            }
        }
        f.want_one_of("environment", ENVIRONMENTS, v);
        f.want_url("base_url", v);
    }

    /// APNs speaks HTTP/2 only: the HTTP/2 client.
    fn transport(c: &Clients) -> Option<Arc<dyn Provider>> {
        Some(Arc::new(Apns {
            http: c.h2.clone(),
            guard: c.guard.clone(),
            tokens: Arc::new(DashMap::new()),
        }))
    }

    fn send(&self, req: SendRequest) -> BoxFuture<'static, SendResult> {
        let http = self.http.clone();
        let guard = self.guard.clone();
        let tokens = self.tokens.clone();
        Box::pin(async move {
            if req.subscriptions.is_empty() {
                return settle(vec![]);
            }
            let creds = Creds::from_config(&req.config)?;
            let jwt = provider_token(&tokens, req.channel_id, &creds)?;
            let apns_id = req.delivery.id.to_string();
            let body = payload(&req);
            let sends = req.subscriptions.iter().map(|sub| {
                let (http, guard, creds, jwt, apns_id, body) =
                    (&http, &guard, &creds, &jwt, &apns_id, body.clone());
                async move {
                    let r = push_one(http, guard, creds, jwt, apns_id, &sub.identifier, body).await;
                    (sub.identifier.clone(), r)
                }
            });
            let results = futures_util::future::join_all(sends).await;
            if results.iter().any(|(_, (_, stale))| *stale) {
                tokens.remove(&req.channel_id);
            }
            settle(results.into_iter().map(|(id, (d, _))| (id, d)).collect())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::spec::testing::pattern_agrees;

    #[test]
    fn the_id_patterns_are_the_checks() {
        for field in ["team_id", "key_id"] {
            pattern_agrees::<Apns>(
                field,
                &[
                    ("ABCDE12345", true),
                    ("", true),
                    ("ABC-1", false),
                    ("ABC 1", false),
                ],
            );
        }
    }
}
