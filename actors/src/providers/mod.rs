//! Channel providers: what each needs in its config, which config fields are
//! secret, and how a delivery is handed to it. One module per transport, each
//! behind the `Provider` trait; the delivery actor of a channel type drives them.

pub mod webhook;

use crate::error::Validator;
use crate::model::{ChannelType, Delivery, User};
use futures_util::future::BoxFuture;
use serde_json::{Map, Value};
use std::time::Duration;

/// `(provider, channel type, required fields, secret fields)`, API.md §10.
const TABLE: &[(&str, ChannelType, &[&str], &[&str])] = &[
    ("in_app", ChannelType::InApp, &[], &[]),
    (
        "smtp",
        ChannelType::Email,
        &["host", "port", "from"],
        &["password"],
    ),
    (
        "twilio",
        ChannelType::Sms,
        &["account_sid", "auth_token", "from"],
        &["auth_token"],
    ),
    ("slack_webhook", ChannelType::Chat, &["url"], &["url"]),
    ("webhook", ChannelType::Chat, &["url"], &["secret"]),
    (
        "web_push",
        ChannelType::WebPush,
        &["subject"],
        &["vapid_private_key"],
    ),
    (
        "fcm",
        ChannelType::MobilePush,
        &["project_id", "service_account"],
        &["service_account"],
    ),
    (
        "apns",
        ChannelType::MobilePush,
        &["team_id", "key_id", "private_key", "topic"],
        &["private_key"],
    ),
];

pub fn provider_type(provider: &str) -> Option<ChannelType> {
    TABLE.iter().find(|r| r.0 == provider).map(|r| r.1)
}

pub fn secret_fields(provider: &str) -> &'static [&'static str] {
    TABLE
        .iter()
        .find(|r| r.0 == provider)
        .map(|r| r.3)
        .unwrap_or(&[])
}

/// Required config fields that are absent (or null/empty).
pub fn missing_required(provider: &str, config: &Map<String, Value>) -> Vec<&'static str> {
    let req = TABLE
        .iter()
        .find(|r| r.0 == provider)
        .map(|r| r.2)
        .unwrap_or(&[]);
    req.iter()
        .copied()
        .filter(|k| match config.get(*k) {
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => s.is_empty(),
            _ => false,
        })
        .collect()
}

fn is_http_url(s: &str) -> bool {
    url_like(s, &["http://", "https://"])
}

fn url_like(s: &str, schemes: &[&str]) -> bool {
    schemes
        .iter()
        .any(|p| s.len() > p.len() && s[..p.len()].eq_ignore_ascii_case(p))
        && !s.contains(char::is_whitespace)
}

/// Checks the shape of the fields that are present (a partial config is allowed:
/// the channel stays `unconfigured` until every required field is set).
pub fn validate_config(provider: &str, config: &Map<String, Value>, v: &mut Validator) {
    let s = |k: &str| config.get(k).and_then(|x| x.as_str());
    let present = |k: &str| config.get(k).map_or(false, |x| !x.is_null());
    let want_str = |k: &str, v: &mut Validator| {
        if present(k) && s(k).is_none() {
            v.push(format!("config.{k}"), "format", "must be a string");
        }
    };
    if let Some(r) = config.get("retry") {
        match r {
            Value::Object(m) => {
                if let Some(x) = m.get("max_attempts") {
                    if !x.as_u64().map_or(false, |n| (1..=100).contains(&n)) {
                        v.push(
                            "config.retry.max_attempts",
                            "number",
                            "an integer from 1 to 100",
                        );
                    }
                }
                for k in ["base_seconds", "max_seconds"] {
                    if let Some(x) = m.get(k) {
                        if !x.as_f64().map_or(false, |n| n > 0.0 && n <= 86_400.0) {
                            v.push(
                                format!("config.retry.{k}"),
                                "number",
                                "a number of seconds above 0, at most 86400",
                            );
                        }
                    }
                }
            }
            Value::Null => {}
            _ => v.push("config.retry", "format", "must be an object"),
        }
    }
    match provider {
        "smtp" => {
            want_str("host", v);
            want_str("from", v);
            want_str("username", v);
            want_str("password", v);
            if present("port")
                && !config["port"]
                    .as_u64()
                    .map_or(false, |p| (1..=65535).contains(&p))
            {
                v.push("config.port", "number", "a port number from 1 to 65535");
            }
            if let Some(f) = s("from") {
                if !crate::validate::is_email(f) && !f.contains('<') {
                    v.push("config.from", "format", "must be an email address");
                }
            }
            if present("tls") && !matches!(s("tls"), Some("none" | "starttls" | "tls")) {
                v.push("config.tls", "inclusion", "one of none, starttls, tls");
            }
        }
        "twilio" => {
            want_str("account_sid", v);
            want_str("auth_token", v);
            if let Some(f) = s("from") {
                if !crate::validate::is_e164(f) {
                    v.push("config.from", "format", "must be an E.164 phone number");
                }
            } else {
                want_str("from", v);
            }
            if let Some(u) = s("base_url") {
                if !is_http_url(u) {
                    v.push("config.base_url", "format", "must be an http(s) URL");
                }
            }
        }
        "slack_webhook" | "webhook" => {
            if let Some(u) = s("url") {
                if !is_http_url(u) {
                    v.push("config.url", "format", "must be an http(s) URL");
                }
            } else {
                want_str("url", v);
            }
            if provider == "webhook" {
                if let Some(sec) = s("secret") {
                    if sec != "********" && webhook::secret_key(sec).is_none() {
                        v.push(
                            "config.secret",
                            "format",
                            "must be whsec_ followed by base64",
                        );
                    }
                } else {
                    want_str("secret", v);
                }
                if present("timeout_ms")
                    && !config["timeout_ms"]
                        .as_u64()
                        .map_or(false, |t| (1..=120_000).contains(&t))
                {
                    v.push(
                        "config.timeout_ms",
                        "number",
                        "milliseconds from 1 to 120000",
                    );
                }
            }
        }
        "web_push" => {
            if let Some(sub) = s("subject") {
                if !(sub.starts_with("mailto:") || url_like(sub, &["https://"])) {
                    v.push("config.subject", "format", "must be a mailto: or https URL");
                }
            } else {
                want_str("subject", v);
            }
            want_str("vapid_public_key", v);
            want_str("vapid_private_key", v);
        }
        "fcm" => {
            want_str("project_id", v);
            if present("service_account") && !config["service_account"].is_object() {
                v.push(
                    "config.service_account",
                    "format",
                    "must be the service-account JSON object",
                );
            }
            for k in ["base_url", "token_url"] {
                if let Some(u) = s(k) {
                    if !is_http_url(u) {
                        v.push(format!("config.{k}"), "format", "must be an http(s) URL");
                    }
                }
            }
        }
        "apns" => {
            for k in ["team_id", "key_id", "private_key", "topic"] {
                want_str(k, v);
            }
            if present("environment") && !matches!(s("environment"), Some("production" | "sandbox"))
            {
                v.push(
                    "config.environment",
                    "inclusion",
                    "one of production, sandbox",
                );
            }
            if let Some(u) = s("base_url") {
                if !is_http_url(u) {
                    v.push("config.base_url", "format", "must be an http(s) URL");
                }
            }
        }
        _ => {}
    }
}

/// How an attempt failed, which decides retry or not (API.md §8).
#[derive(Debug, Clone)]
pub enum SendError {
    /// Connection errors, timeouts, 408, 429, 5xx: retried with backoff.
    Transient {
        message: String,
        retry_after: Option<Duration>,
    },
    /// 401/403 from the provider.
    Unauthorized { message: String },
    /// Any other permanent rejection (other 4xx, invalid address).
    Rejected { code: &'static str, message: String },
    /// Nothing to send to (no email, no push subscription): the delivery is skipped.
    NoAddress { message: String },
    /// Every device's subscription is gone (404/410 from the push service, an
    /// unregistered token): the delivery fails with `subscription_expired`.
    Expired {
        message: String,
        expired: Vec<String>,
    },
}

/// A successful attempt: provider facts to keep (per-device outcomes under
/// `data.outcomes`), and subscriptions the provider reported gone (removed).
#[derive(Debug, Clone, Default)]
pub struct Sent {
    pub outcomes: Option<Value>,
    pub expired: Vec<String>,
}

pub type SendResult = Result<Sent, SendError>;

/// What a provider gets for one attempt.
pub struct SendRequest {
    pub delivery: Delivery,
    pub recipient: Option<User>,
    /// The channel: its id (cache key for tokens) and full config, secrets included.
    pub channel_id: uuid::Uuid,
    pub config: Map<String, Value>,
    /// For web_push and mobile_push: the recipient's subscriptions on this channel.
    pub subscriptions: Vec<crate::store::PushSubscription>,
}

/// A transport to one kind of provider. One instance serves every channel of its
/// provider for the life of the process (so it may cache, e.g. OAuth tokens per
/// channel). Implementations do their I/O on the runtime of the calling delivery
/// actor and must not block.
pub trait Provider: Send + Sync {
    fn send(&self, req: SendRequest) -> BoxFuture<'static, SendResult>;
}

/// The transports of this build, by provider name.
pub type Transports = std::collections::HashMap<&'static str, std::sync::Arc<dyn Provider>>;

/// Maps an HTTP status from a provider to the error class (API.md §8).
pub fn classify_status(status: u16, body: &str, retry_after: Option<Duration>) -> SendError {
    let snippet: String = body.chars().take(200).collect();
    let message = format!("provider answered {status}: {snippet}");
    match status {
        408 | 429 | 500..=599 => SendError::Transient {
            message,
            retry_after,
        },
        401 | 403 => SendError::Unauthorized { message },
        _ => SendError::Rejected {
            code: "provider_rejected",
            message,
        },
    }
}

/// Every transport this build has (in_app is not one: the user actors deliver it).
pub fn transports(http: &reqwest::Client) -> Transports {
    let mut t: Transports = std::collections::HashMap::new();
    t.insert(
        "webhook",
        std::sync::Arc::new(webhook::Webhook::new(http.clone())),
    );
    t
}
