//! mobile_push / `fcm`: Firebase Cloud Messaging, HTTP v1 API.
//!
//! The channel's service account signs an RS256 JWT assertion, exchanged at
//! `token_url` (OAuth 2.0 JWT bearer grant) for an access token that is cached per
//! channel until shortly before it expires. Each device token of the recipient
//! gets one `messages:send`; `UNREGISTERED` or 404 means the token is gone.

use super::{
    answer_json, answered, cfg_str, channel::Fields, classify_status, error_token, fingerprint,
    settle, transport_error, webhook::retry_after, Clients, ConfigField, Device, FieldFormat,
    Guard, Provider, ProviderSpec, SendError, SendRequest, SendResult, HTTP_TIMEOUT,
};
use crate::error::Validator;
use crate::model::ChannelType;
use dashmap::DashMap;
use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use uuid::Uuid;

pub const DEFAULT_BASE_URL: &str = "https://fcm.googleapis.com";
pub const DEFAULT_TOKEN_URL: &str = "https://oauth2.googleapis.com/token";
const SCOPE: &str = "https://www.googleapis.com/auth/firebase.messaging";

struct Token {
    fingerprint: [u8; 32],
    access_token: String,
    refresh_at: Instant,
}

pub struct Fcm {
    http: reqwest::Client,
    guard: Guard,
    /// Access token per channel; the async mutex makes concurrent deliveries of a
    /// channel wait for one exchange instead of each doing their own.
    tokens: DashMap<Uuid, Slot>,
}

static SPEC: ProviderSpec = ProviderSpec {
    name: "fcm",
    channel_type: ChannelType::MobilePush,
    summary: "Firebase Cloud Messaging HTTP v1 to each device token registered as a subscription.",
    // without the service account: an example cannot hold a real key
    example: || json!({"project_id": "my-app"}),
    retry: true,
    fields: &[
        ConfigField {
            name: "project_id",
            required: true,
            secret: false,
            format: FieldFormat::Pattern(PROJECT_ID),
            description: "The Firebase project id.",
        },
        ConfigField {
            name: "service_account",
            required: true,
            secret: true,
            format: FieldFormat::Object {
                name: "FcmServiceAccount",
                schema: service_account_schema,
            },
            description: "The service account's JSON key file, as an object.",
        },
        ConfigField {
            name: "base_url",
            required: false,
            secret: false,
            format: FieldFormat::Url {
                default: Some(DEFAULT_BASE_URL),
            },
            description: "FCM API base URL (a mock or a proxy).",
        },
        ConfigField {
            name: "token_url",
            required: false,
            secret: false,
            format: FieldFormat::Url {
                default: Some(DEFAULT_TOKEN_URL),
            },
            description: "OAuth 2 token endpoint (else the account's `token_uri`, else Google's).",
        },
    ],
    together: &[],
    // the service account's signed assertion goes to `token_url`, the access
    // token it buys to `base_url`, for `project_id`
    destinations: &["base_url", "token_url", "project_id"],
};

/// `config.service_account`: `client_email` and an RSA `private_key` PEM.
/// A Firebase project id as the provider's `validate` takes it.
const PROJECT_ID: &str = "^[A-Za-z0-9._:-]*$";

/// What [`validate_service_account`] takes, for the API's documentation.
fn service_account_schema() -> Value {
    json!({
        "type": "object",
        "description": "A Google service account key file (JSON), as downloaded from the console; \
                        other keys of the file are kept.",
        "properties": {
            "type": {"description": "`service_account` in a downloaded key file; kept as given."},
            "project_id": {"description": "Kept as given (the channel's own `project_id` is used)."},
            "private_key_id": {"description": "Kept as given."},
            "private_key": {"type": "string", "format": "pem-rsa-private-key",
                            "description": "The RSA private key (PEM: PKCS#8 or PKCS#1)."},
            "client_email": {"type": "string", "format": "email", "description": "The JWT's `iss`."},
            "token_uri": {"type": "string", "pattern": crate::validate::HTTP_URL,
                          "description": "Token endpoint, used when the channel has no `token_url`."},
        },
        "required": ["client_email", "private_key"],
    })
}

pub(crate) fn validate_service_account(sa: &Map<String, Value>, v: &mut Validator) {
    match sa.get("client_email") {
        Some(Value::String(e)) if crate::validate::is_email(e) => {}
        None | Some(Value::Null) => v.push(
            "config.service_account.client_email",
            "required",
            "the service account's client_email is required",
        ),
        Some(_) => v.push(
            "config.service_account.client_email",
            "format",
            "must be the service account's email address",
        ),
    }
    match sa.get("private_key") {
        Some(Value::String(pem)) if rsa_key_ok(pem) => {}
        None | Some(Value::Null) => v.push(
            "config.service_account.private_key",
            "required",
            "the service account's private_key is required",
        ),
        Some(_) => v.push(
            "config.service_account.private_key",
            "format",
            "must be the service account's RSA private key (PEM)",
        ),
    }
    if let Some(t) = sa.get("token_uri") {
        if !t.as_str().is_some_and(crate::validate::is_http_url) {
            v.push(
                "config.service_account.token_uri",
                "format",
                "must be an http(s) URL",
            );
        }
    }
}

fn rsa_key_ok(pem: &str) -> bool {
    use rsa::pkcs1::DecodeRsaPrivateKey;
    use rsa::pkcs8::DecodePrivateKey;
    rsa::RsaPrivateKey::from_pkcs8_pem(pem).is_ok()
        || rsa::RsaPrivateKey::from_pkcs1_pem(pem).is_ok()
}

/// What a send needs from the channel config.
struct Account {
    project_id: String,
    client_email: String,
    private_key: String,
    private_key_id: Option<String>,
    base_url: String,
    token_url: String,
}

impl Account {
    fn from_config(config: &Map<String, Value>) -> Result<Account, SendError> {
        let sa = config
            .get("service_account")
            .and_then(|v| v.as_object())
            .ok_or_else(|| super::misconfigured("the channel has no service account"))?;
        let s = |k: &str| sa.get(k).and_then(|v| v.as_str()).filter(|s| !s.is_empty());
        let client_email = s("client_email")
            .ok_or_else(|| super::misconfigured("service_account.client_email is missing"))?;
        let private_key = s("private_key")
            .ok_or_else(|| super::misconfigured("service_account.private_key is missing"))?;
        let token_url = cfg_str(config, "token_url")
            .or_else(|| s("token_uri"))
            .unwrap_or(DEFAULT_TOKEN_URL);
        Ok(Account {
            project_id: cfg_str(config, "project_id")
                .unwrap_or_default()
                .to_string(),
            client_email: client_email.to_string(),
            private_key: private_key.to_string(),
            private_key_id: s("private_key_id").map(str::to_string),
            base_url: cfg_str(config, "base_url")
                .unwrap_or(DEFAULT_BASE_URL)
                .trim_end_matches('/')
                .to_string(),
            token_url: token_url.to_string(),
        })
    }

    fn fingerprint(&self) -> [u8; 32] {
        fingerprint(&[&self.client_email, &self.private_key, &self.token_url])
    }

    /// The signed JWT assertion of the JWT bearer grant (RFC 7523).
    fn assertion(&self) -> Result<String, SendError> {
        let key =
            jsonwebtoken::EncodingKey::from_rsa_pem(self.private_key.as_bytes()).map_err(|_| {
                SendError::Unauthorized {
                    message: "the service account's private key does not parse".into(),
                }
            })?;
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
        header.kid = self.private_key_id.clone();
        let now = chrono::Utc::now().timestamp();
        let claims = json!({
            "iss": self.client_email,
            "scope": SCOPE,
            "aud": self.token_url,
            "iat": now,
            "exp": now + 3600,
        });
        jsonwebtoken::encode(&header, &claims, &key).map_err(|e| SendError::Unauthorized {
            message: format!("cannot sign with the service account's key: {e}"),
        })
    }
}

type Slot = Arc<tokio::sync::Mutex<Option<Token>>>;

/// The channel's access token: cached in `slot`, or exchanged now.
async fn access_token(
    http: &reqwest::Client, egress: &Guard, slot: &Slot, acct: &Account, fresh: bool,
) -> Result<String, SendError> {
    let mut guard = slot.lock().await;
    let fp = acct.fingerprint();
    if let Some(t) = guard.as_ref() {
        if !fresh && t.fingerprint == fp && Instant::now() < t.refresh_at {
            return Ok(t.access_token.clone());
        }
    }
    *guard = None;
    let token_url = egress.url(&acct.token_url)?;
    let assertion = acct.assertion()?;
    let resp = http
        .post(token_url)
        .timeout(HTTP_TIMEOUT)
        .form(&[
            ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
            ("assertion", assertion.as_str()),
        ])
        .send()
        .await
        .map_err(|e| transport_error(HTTP_TIMEOUT, e))?;
    let status = resp.status().as_u16();
    let ra = retry_after(resp.headers());
    let v: Value = answer_json(resp).await;
    if !(200..300).contains(&status) {
        // OAuth's own code (`invalid_grant`, `invalid_client`), never its description
        let code = v["error"].as_str();
        return Err(match status {
            // invalid_grant / invalid_client: the credentials are wrong
            400 | 401 | 403 => SendError::Unauthorized {
                message: format!(
                    "the token endpoint refused the service account: {}",
                    answered(status, code)
                ),
            },
            _ => classify_status(status, code, ra),
        });
    }
    let Some(access_token) = v["access_token"].as_str().filter(|t| !t.is_empty()) else {
        return Err(SendError::Transient {
            message: "the token endpoint answered without an access_token".into(),
            retry_after: None,
        });
    };
    let expires_in = v["expires_in"].as_u64().unwrap_or(3600);
    // refresh a minute early (at least halfway) so a token never expires in flight
    let life = Duration::from_secs(expires_in.saturating_sub(60).max(expires_in / 2));
    *guard = Some(Token {
        fingerprint: fp,
        access_token: access_token.to_string(),
        refresh_at: Instant::now() + life,
    });
    Ok(access_token.to_string())
}

/// The FCM error code of an error body (`details[].errorCode`, else `status`).
fn fcm_error_code(v: &Value) -> Option<String> {
    let err = &v["error"];
    err["details"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(|d| d["errorCode"].as_str())
        .or_else(|| err["status"].as_str())
        .and_then(error_token)
        .map(str::to_string)
}

fn message(req: &SendRequest, token: &str) -> Value {
    let d = &req.delivery;
    let mut data = Map::new();
    data.insert("delivery_id".into(), Value::String(d.id.to_string()));
    if let Some(u) = &d.data.url {
        data.insert("url".into(), Value::String(u.clone()));
    }
    json!({"message": {
        "token": token,
        "notification": {"title": d.data.subject, "body": d.data.body},
        "data": data,
    }})
}

enum One {
    Done(Device),
    /// 401 at send: the cached access token is no longer accepted.
    TokenRejected(String),
}

async fn send_one(http: &reqwest::Client, url: &reqwest::Url, bearer: &str, body: &Value) -> One {
    let resp = match http
        .post(url.clone())
        .timeout(HTTP_TIMEOUT)
        .bearer_auth(bearer)
        .json(body)
        .send()
        .await
    {
        Ok(r) => r,
        Err(e) => return One::Done(Device::Failed(transport_error(HTTP_TIMEOUT, e))),
    };
    let status = resp.status().as_u16();
    let ra = retry_after(resp.headers());
    let v = answer_json(resp).await;
    if (200..300).contains(&status) {
        let mut extra = Map::new();
        extra.insert("status_code".into(), status.into());
        if let Some(name) = v["name"].as_str() {
            extra.insert("message_id".into(), Value::String(name.to_string()));
        }
        return One::Done(Device::Sent(extra));
    }
    let code = fcm_error_code(&v);
    if status == 404 || code.as_deref() == Some("UNREGISTERED") {
        return One::Done(Device::Expired(format!(
            "FCM answered {status} {}",
            code.unwrap_or_default()
        )));
    }
    if status == 401 {
        return One::TokenRejected(answered(status, code.as_deref()));
    }
    One::Done(Device::Failed(classify_status(status, code.as_deref(), ra)))
}

impl Provider for Fcm {
    fn spec() -> &'static ProviderSpec {
        &SPEC
    }

    fn validate(config: &Map<String, Value>, v: &mut Validator) {
        let f = Fields(config);
        f.want_chars(
            "project_id",
            |c| c.is_ascii_alphanumeric() || "-_.:".contains(c),
            "a Firebase project id: letters, digits, - _ . :",
            v,
        );
        match config.get("service_account") {
            None | Some(Value::Null) => {}
            Some(Value::Object(sa)) => validate_service_account(sa, v),
            Some(_) => v.push(
                "config.service_account",
                "format",
                "must be the service-account JSON object",
            ),
        }
        for k in ["base_url", "token_url"] {
            f.want_url(k, v);
        }
    }

    /// The service account's `token_uri`, used when `token_url` is not set.
    fn inner_destinations(config: &Map<String, Value>) -> Vec<(&'static str, &str)> {
        config
            .get("service_account")
            .and_then(|sa| sa.get("token_uri"))
            .and_then(|t| t.as_str())
            .map(|t| ("config.service_account.token_uri", t))
            .into_iter()
            .collect()
    }

    fn transport(c: &Clients) -> Option<Arc<dyn Provider>> {
        Some(Arc::new(Fcm {
            http: c.http.clone(),
            guard: c.guard.clone(),
            tokens: DashMap::new(),
        }))
    }

    fn send(&self, req: SendRequest) -> BoxFuture<'static, SendResult> {
        let http = self.http.clone();
        let guard = self.guard.clone();
        let slot = self.tokens.entry(req.channel_id).or_default().clone();
        Box::pin(async move {
            if req.subscriptions.is_empty() {
                return settle(vec![]);
            }
            let acct = Account::from_config(&req.config)?;
            let url = guard.url(&format!(
                "{}/v1/projects/{}/messages:send",
                acct.base_url, acct.project_id
            ))?;
            let mut results = Vec::with_capacity(req.subscriptions.len());
            let mut bearer = access_token(&http, &guard, &slot, &acct, false).await?;
            let mut refreshed = false;
            for sub in &req.subscriptions {
                let body = message(&req, &sub.identifier);
                let mut r = send_one(&http, &url, &bearer, &body).await;
                if let One::TokenRejected(_) = r {
                    if !refreshed {
                        // one fresh exchange per attempt, then the token stands
                        refreshed = true;
                        bearer = access_token(&http, &guard, &slot, &acct, true).await?;
                        r = send_one(&http, &url, &bearer, &body).await;
                    }
                }
                let d = match r {
                    One::Done(d) => d,
                    One::TokenRejected(message) => {
                        Device::Failed(SendError::Unauthorized { message })
                    }
                };
                results.push((sub.identifier.clone(), d));
            }
            settle(results)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::spec::testing::pattern_agrees;

    #[test]
    fn the_project_id_pattern_is_the_check() {
        pattern_agrees::<Fcm>(
            "project_id",
            &[
                ("my-app", true),
                ("a.b:c_d", true),
                ("", true),
                ("my app", false),
                ("my/app", false),
            ],
        );
    }
}
