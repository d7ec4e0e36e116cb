//! Channel providers: what each needs in its config, which config fields are
//! secret, and how a delivery is handed to it. One module per transport, each
//! behind the `Provider` trait; the delivery actor of a channel type drives them.

pub mod apns;
pub mod fcm;
pub mod slack;
pub mod smtp;
pub mod twilio;
pub mod web_push;
pub mod webhook;

use crate::egress::{self, EgressPolicy};
use crate::error::Validator;
use crate::model::{ChannelType, Delivery, User};
use futures_util::future::BoxFuture;
use serde_json::{Map, Value};
use std::time::Duration;

/// `(provider, channel type, required fields, secret fields)`: what `/openapi.json`
/// (`src/openapi/channels.rs`) and `docs/channels/` document.
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

/// Config fields that decide where a provider's secret (or what it signs or
/// obtains) is sent, over what, or as whom. Changing one keeps the stored secret
/// only when the secret is sent again (`check_secret_restated`): otherwise a
/// caller who cannot read the secret could redirect it to a host of theirs.
/// - smtp: the password goes to `host`:`port` over `tls` (`none` sends it in
///   clear) as `username`.
/// - twilio: the token is basic auth to `base_url`, as `account_sid`.
/// - webhook: payloads signed with the secret go to `url`.
/// - fcm: the service account's signed assertion goes to `token_url`, the access
///   token it buys to `base_url`, for `project_id`.
/// - apns: the signed provider token goes to `base_url` (or the host
///   `environment` picks), for `topic`, as `team_id`/`key_id`.
/// - slack_webhook: the URL is the secret itself; web_push: the VAPID key signs
///   for push services the subscriptions name, not the config: none.
pub fn destination_fields(provider: &str) -> &'static [&'static str] {
    match provider {
        "smtp" => &["host", "port", "tls", "username"],
        "twilio" => &["base_url", "account_sid"],
        "webhook" => &["url"],
        "fcm" => &["base_url", "token_url", "project_id"],
        "apns" => &["base_url", "environment", "topic", "team_id", "key_id"],
        _ => &[],
    }
}

/// The value a secret was given as by `patch`, when it is given anew (not the
/// mask, not absent, not null).
fn restated<'a>(patch: &'a Map<String, Value>, field: &str, mask: &str) -> Option<&'a Value> {
    patch
        .get(field)
        .filter(|v| !v.is_null() && v.as_str() != Some(mask))
}

/// A configuration update that changes a destination field (see
/// `destination_fields`) of a channel holding a secret must send that secret
/// again: 422 `required` on `config.<secret>` otherwise.
pub fn check_secret_restated(
    provider: &str,
    stored: &Map<String, Value>,
    merged: &Map<String, Value>,
    patch: &Map<String, Value>,
    mask: &str,
    v: &mut Validator,
) {
    let changed: Vec<&str> = destination_fields(provider)
        .iter()
        .copied()
        // A field set to a new value. A field removed is not a redirect: the
        // provider's own default (api.twilio.com, Apple's, Google's hosts) is
        // used, or the channel is unconfigured until the field is set again,
        // and setting it is then a change from nothing.
        .filter(|f| {
            merged
                .get(*f)
                .is_some_and(|m| !m.is_null() && stored.get(*f) != Some(m))
        })
        .collect();
    let Some(first) = changed.first() else {
        return;
    };
    for secret in secret_fields(provider) {
        let held = stored.get(*secret).is_some_and(|x| !x.is_null());
        let kept = merged.get(*secret) == stored.get(*secret);
        if held && kept && restated(patch, secret, mask).is_none() {
            v.push(
                format!("config.{secret}"),
                "required",
                format!(
                    "config.{first} changes where or as whom the channel's secret is used: send config.{secret} again with it (the stored one is never sent to a new destination)"
                ),
            );
        }
    }
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
        && url::Url::parse(s).is_ok_and(|u| u.host_str().is_some_and(|h| !h.is_empty()))
}

fn url_like(s: &str, schemes: &[&str]) -> bool {
    schemes
        .iter()
        .any(|p| s.len() > p.len() && s[..p.len()].eq_ignore_ascii_case(p))
        && !s.contains(char::is_whitespace)
}

/// A destination field the egress policy refuses: 422 `exclusion` on its path.
fn check_destination(
    egress: &EgressPolicy,
    field: &str,
    raw: &str,
    bare_host: bool,
    v: &mut Validator,
) {
    let r = if bare_host {
        egress.check_bare_host(raw)
    } else {
        egress.check_url(raw).map(|_| ())
    };
    if let Err(refused) = r {
        v.push(
            field,
            "exclusion",
            format!("destination not allowed: {refused}"),
        );
    }
}

/// Checks the shape of the fields that are present (a partial config is allowed:
/// the channel stays `unconfigured` until every required field is set), and that
/// every destination (URL, base URL, token URL, SMTP host) is one the server's
/// egress policy allows, as far as a literal shows.
pub fn validate_config(
    provider: &str,
    config: &Map<String, Value>,
    egress: &EgressPolicy,
    v: &mut Validator,
) {
    for (key, bare_host) in [
        ("url", false),
        ("base_url", false),
        ("token_url", false),
        ("host", true),
    ] {
        let used = match provider {
            "smtp" => key == "host",
            "slack_webhook" | "webhook" => key == "url",
            "twilio" | "apns" => key == "base_url",
            "fcm" => key == "base_url" || key == "token_url",
            _ => false,
        };
        if let (true, Some(raw)) = (used, config.get(key).and_then(|x| x.as_str())) {
            // a masked secret (`********`, a Slack URL kept as it was) is checked as
            // the stored value it stands for: the caller merges before validating
            check_destination(egress, &format!("config.{key}"), raw, bare_host, v);
        }
    }
    if provider == "fcm" {
        if let Some(t) = config
            .get("service_account")
            .and_then(|sa| sa.get("token_uri"))
            .and_then(|t| t.as_str())
        {
            check_destination(egress, "config.service_account.token_uri", t, false, v);
        }
    }
    let s = |k: &str| config.get(k).and_then(|x| x.as_str());
    let present = |k: &str| config.get(k).is_some_and(|x| !x.is_null());
    let want_str = |k: &str, v: &mut Validator| {
        if present(k) && s(k).is_none() {
            v.push(format!("config.{k}"), "format", "must be a string");
        }
    };
    if let Some(r) = config.get("retry") {
        match r {
            Value::Object(m) => {
                if let Some(x) = m.get("max_attempts") {
                    if !x.as_u64().is_some_and(|n| (1..=100).contains(&n)) {
                        v.push(
                            "config.retry.max_attempts",
                            "number",
                            "an integer from 1 to 100",
                        );
                    }
                }
                for k in ["base_seconds", "max_seconds"] {
                    if let Some(x) = m.get(k) {
                        if !x.as_f64().is_some_and(|n| n > 0.0 && n <= 86_400.0) {
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
                    .is_some_and(|p| (1..=65535).contains(&p))
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
            if let Some(sid) = s("account_sid") {
                if !sid.chars().all(|c| c.is_ascii_alphanumeric()) {
                    v.push(
                        "config.account_sid",
                        "format",
                        "an account SID: letters and digits (AC…)",
                    );
                }
            }
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
            } else {
                want_str("base_url", v);
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
                        .is_some_and(|t| (1..=120_000).contains(&t))
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
            web_push::validate_vapid(config, v);
        }
        "fcm" => {
            want_str("project_id", v);
            if let Some(p) = s("project_id") {
                if !p
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.:".contains(c))
                {
                    v.push(
                        "config.project_id",
                        "format",
                        "a Firebase project id: letters, digits, - _ . :",
                    );
                }
            }
            match config.get("service_account") {
                None | Some(Value::Null) => {}
                Some(Value::Object(sa)) => fcm::validate_service_account(sa, v),
                Some(_) => v.push(
                    "config.service_account",
                    "format",
                    "must be the service-account JSON object",
                ),
            }
            for k in ["base_url", "token_url"] {
                if let Some(u) = s(k) {
                    if !is_http_url(u) {
                        v.push(format!("config.{k}"), "format", "must be an http(s) URL");
                    }
                } else {
                    want_str(k, v);
                }
            }
        }
        "apns" => {
            for k in ["team_id", "key_id", "private_key", "topic"] {
                want_str(k, v);
            }
            for k in ["team_id", "key_id"] {
                if let Some(x) = s(k) {
                    if !x.chars().all(|c| c.is_ascii_alphanumeric()) {
                        v.push(format!("config.{k}"), "format", "letters and digits");
                    }
                }
            }
            if let Some(pem) = s("private_key") {
                if pem != "********" && !apns::private_key_ok(pem) {
                    v.push(
                        "config.private_key",
                        "format",
                        "must be the .p8 PEM of a P-256 (ES256) key",
                    );
                }
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
            } else {
                want_str("base_url", v);
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
    /// `error` decides the outcome, and some devices were also reported gone on
    /// the way (their subscriptions are removed even though nothing was sent).
    AlsoExpired {
        error: Box<SendError>,
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

/// Maps an HTTP status from a provider to the error class (API.md §8). Only the
/// status and the provider's own error code (`code`: Twilio's `code`, FCM's
/// `errorCode`, APNs' `reason`…) are kept, never the body: the answer of a
/// server Herald should not have reached could otherwise be read back through
/// `delivery.error.message`.
pub fn classify_status(
    status: u16,
    code: Option<&str>,
    retry_after: Option<Duration>,
) -> SendError {
    let message = answered(status, code);
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

/// `provider answered 400 (21211)`.
pub(crate) fn answered(status: u16, code: Option<&str>) -> String {
    match code.and_then(error_token) {
        Some(c) => format!("provider answered {status} ({c})"),
        None => format!("provider answered {status}"),
    }
}

/// A provider error code as it may be stored: a short token of letters, digits
/// and `_ . -` (what providers use for codes), else nothing. Free text is not a
/// code and is dropped.
pub(crate) fn error_token(s: &str) -> Option<&str> {
    let s = s.trim();
    (!s.is_empty()
        && s.len() <= 64
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)))
    .then_some(s)
}

/// The start of an answer's body, at most `limit` bytes (enough for a provider's
/// JSON error; a huge or endless body is not read to the end).
pub(crate) async fn read_capped(mut resp: reqwest::Response, limit: usize) -> Vec<u8> {
    let mut out = Vec::new();
    while let Ok(Some(chunk)) = resp.chunk().await {
        let room = limit - out.len();
        out.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if out.len() >= limit {
            break;
        }
    }
    out
}

/// Largest answer body a provider's error code is looked for in.
pub(crate) const MAX_ANSWER: usize = 64 * 1024;

/// The JSON of an answer's body (`Null` when it is not JSON).
pub(crate) async fn answer_json(resp: reqwest::Response) -> Value {
    serde_json::from_slice(&read_capped(resp, MAX_ANSWER).await).unwrap_or(Value::Null)
}

/// Every transport this build has (in_app is not one: the user actors deliver
/// it). `http` must come from [`egress::client_builder`] (the guarded resolver,
/// no redirects); the APNs client is built here the same way.
pub fn transports(http: &reqwest::Client, policy: &std::sync::Arc<EgressPolicy>) -> Transports {
    use std::sync::Arc;
    let g = || Guard(policy.clone());
    let mut t: Transports = std::collections::HashMap::new();
    t.insert(
        "webhook",
        Arc::new(webhook::Webhook::new(http.clone(), g())),
    );
    t.insert("smtp", Arc::new(smtp::Smtp::new(g())));
    t.insert("twilio", Arc::new(twilio::Twilio::new(http.clone(), g())));
    t.insert(
        "slack_webhook",
        Arc::new(slack::SlackWebhook::new(http.clone(), g())),
    );
    t.insert(
        "web_push",
        Arc::new(web_push::WebPush::new(http.clone(), g())),
    );
    t.insert("fcm", Arc::new(fcm::Fcm::new(http.clone(), g())));
    // APNs speaks HTTP/2 only: its own client, h2 by ALPN over TLS and by prior
    // knowledge over plain http (a local test server).
    let h2 = egress::client_builder(policy)
        .http2_prior_knowledge()
        .build()
        .unwrap_or_else(|_| http.clone());
    t.insert("apns", Arc::new(apns::Apns::new(h2, g())));
    t
}

/// The egress policy as the transports use it at send time.
#[derive(Clone)]
pub struct Guard(pub std::sync::Arc<EgressPolicy>);

impl Guard {
    /// The URL to send to, when its host (as written) is allowed; names are
    /// judged again by the client's resolver on the addresses they resolve to.
    pub(crate) fn url(&self, raw: &str) -> Result<reqwest::Url, SendError> {
        match self.0.check_url(raw) {
            Ok(Some(u)) => Ok(u),
            Ok(None) => Err(misconfigured("the destination URL does not parse")),
            Err(refused) => Err(refused_error(&refused)),
        }
    }

    pub(crate) fn policy(&self) -> &EgressPolicy {
        &self.0
    }
}

/// A destination the egress policy refuses: failed at once, nothing sent.
pub(crate) fn refused_error(r: &egress::Refused) -> SendError {
    SendError::Rejected {
        code: egress::REFUSED_CODE,
        message: format!("destination not allowed: {r}"),
    }
}

// ---------------------------------------------------------------- shared by the transports

/// Timeout of one HTTP request to a provider.
pub(crate) const HTTP_TIMEOUT: Duration = Duration::from_secs(15);

/// A string config value (absent, null or not a string: `None`).
pub(crate) fn cfg_str<'a>(config: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    config
        .get(key)
        .and_then(|v| v.as_str())
        .filter(|s| !s.is_empty())
}

/// A request that never got an answer, in plain words with the host and port
/// (never the path or query: URLs may carry secrets, a Slack webhook URL is one).
/// A destination the resolver refused is permanent (`destination_not_allowed`);
/// everything else (connection refused or reset, DNS, TLS, timeout) is transient.
pub(crate) fn transport_error(timeout: Duration, e: reqwest::Error) -> SendError {
    if let Some(r) = egress::find_cause::<egress::Refused>(&e) {
        return refused_error(r);
    }
    let host = e
        .url()
        .and_then(|u| {
            let h = u.host_str()?;
            Some(match u.port_or_known_default() {
                Some(p) => format!("{h}:{p}"),
                None => h.to_string(),
            })
        })
        .unwrap_or_else(|| "the provider".into());
    let mut causes = vec![];
    let mut src = std::error::Error::source(&e);
    while let Some(s) = src {
        causes.push(s);
        src = s.source();
    }
    let io_kind = causes
        .iter()
        .find_map(|c| c.downcast_ref::<std::io::Error>())
        .map(|io| io.kind());
    // rustls' errors reach here as text only (it is not a direct dependency): its
    // messages name certificates, handshakes and TLS alerts
    let tls = causes.iter().any(|c| {
        let t = c.to_string().to_ascii_lowercase();
        t.contains("certificate") || t.contains("handshake") || t.contains("tls")
    });
    let message = if e.is_timeout() {
        let secs = timeout.as_secs_f64();
        if secs >= 1.0 {
            format!("timed out after {} s waiting for {host}", secs.round())
        } else {
            format!(
                "timed out after {} ms waiting for {host}",
                timeout.as_millis()
            )
        }
    } else if egress::find_cause::<egress::LookupFailed>(&e).is_some() {
        format!("DNS lookup failed for {host}")
    } else if io_kind == Some(std::io::ErrorKind::ConnectionRefused) {
        format!("connection refused by {host}")
    } else if tls {
        format!("TLS handshake with {host} failed")
    } else if io_kind == Some(std::io::ErrorKind::ConnectionReset) {
        format!("connection reset by {host}")
    } else if e.is_connect() {
        format!("could not connect to {host}")
    } else {
        format!("the request to {host} failed before an answer")
    };
    SendError::Transient {
        message,
        retry_after: None,
    }
}

/// A configuration the transport cannot use (a key that does not parse...).
pub(crate) fn misconfigured(message: impl Into<String>) -> SendError {
    SendError::Rejected {
        code: "provider_not_configured",
        message: message.into(),
    }
}

pub(crate) fn b64url_decode(s: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    let t = s.trim().trim_end_matches('=');
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(t)
        .or_else(|_| base64::engine::general_purpose::STANDARD_NO_PAD.decode(t))
        .ok()
}

pub(crate) fn b64url(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// A stable fingerprint of credential parts: cache entries built from other
/// credentials (the channel was reconfigured) are not reused.
pub(crate) fn fingerprint(parts: &[&str]) -> [u8; 32] {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    h.finalize().into()
}

/// What happened at one device (push subscription or device token).
pub(crate) enum Device {
    /// Accepted; extra facts for its outcome entry (e.g. the provider's message id).
    Sent(Map<String, Value>),
    /// The push service says the subscription or token is gone.
    Expired(String),
    Failed(SendError),
}

/// Folds per-device results into one attempt result. Any device accepted: sent
/// (a retry would send the others twice); none and some transient: retried; all
/// gone: `Expired`; otherwise the first permanent error, 401/403 first.
pub(crate) fn settle(results: Vec<(String, Device)>) -> SendResult {
    if results.is_empty() {
        return Err(SendError::NoAddress {
            message: "the recipient has no push subscription on this channel".into(),
        });
    }
    let mut outcomes = Vec::with_capacity(results.len());
    let mut expired = vec![];
    let mut sent = 0usize;
    let mut transient: Option<(String, Option<Duration>)> = None;
    let mut unauthorized: Option<String> = None;
    let mut rejected: Option<(&'static str, String)> = None;
    for (identifier, r) in results {
        let mut o = Map::new();
        o.insert("identifier".into(), Value::String(identifier.clone()));
        match r {
            Device::Sent(extra) => {
                sent += 1;
                o.insert("status".into(), "sent".into());
                o.extend(extra);
            }
            Device::Expired(message) => {
                o.insert("status".into(), "expired".into());
                o.insert(
                    "error".into(),
                    serde_json::json!({"code": "subscription_expired", "message": message}),
                );
                expired.push(identifier);
            }
            Device::Failed(e) => {
                let (code, message) = match e {
                    SendError::Transient {
                        message,
                        retry_after,
                    } => {
                        let ra = match &transient {
                            Some((_, Some(prev))) => retry_after.max(Some(*prev)),
                            _ => retry_after,
                        };
                        transient = Some((message.clone(), ra));
                        ("provider_unavailable", message)
                    }
                    SendError::Unauthorized { message } => {
                        unauthorized.get_or_insert(message.clone());
                        ("provider_unauthorized", message)
                    }
                    SendError::Rejected { code, message } => {
                        rejected.get_or_insert((code, message.clone()));
                        (code, message)
                    }
                    SendError::NoAddress { message } => {
                        rejected.get_or_insert(("invalid_address", message.clone()));
                        ("invalid_address", message)
                    }
                    SendError::Expired { message, .. } => ("subscription_expired", message),
                    SendError::AlsoExpired { error, .. } => {
                        ("provider_rejected", format!("{error:?}"))
                    }
                };
                o.insert("status".into(), "failed".into());
                o.insert(
                    "error".into(),
                    serde_json::json!({"code": code, "message": message}),
                );
            }
        }
        outcomes.push(Value::Object(o));
    }
    let n = outcomes.len();
    if sent > 0 {
        return Ok(Sent {
            outcomes: Some(Value::Array(outcomes)),
            expired,
        });
    }
    // Nothing sent: the devices reported gone are still removed.
    let with_expired = |error: SendError, expired: Vec<String>| {
        if expired.is_empty() {
            error
        } else {
            SendError::AlsoExpired {
                error: Box::new(error),
                expired,
            }
        }
    };
    if let Some((message, retry_after)) = transient {
        return Err(with_expired(
            SendError::Transient {
                message,
                retry_after,
            },
            expired,
        ));
    }
    if expired.len() == n {
        return Err(SendError::Expired {
            message: format!(
                "the push service reports every subscription of the recipient gone ({n})"
            ),
            expired,
        });
    }
    if let Some(message) = unauthorized {
        return Err(with_expired(SendError::Unauthorized { message }, expired));
    }
    let (code, message) = rejected.unwrap_or(("provider_rejected", "rejected".into()));
    Err(with_expired(SendError::Rejected { code, message }, expired))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn attempt(policy: EgressPolicy, url: &str, timeout: Duration) -> SendError {
        let http = egress::client_builder(&std::sync::Arc::new(policy))
            .build()
            .unwrap();
        let e = http
            .get(url)
            .timeout(timeout)
            .send()
            .await
            .expect_err("no answer expected");
        transport_error(timeout, e)
    }

    fn message(e: &SendError) -> &str {
        match e {
            SendError::Transient { message, .. } | SendError::Rejected { message, .. } => message,
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn transport_errors_say_what_failed_with_the_host_only() {
        let open = EgressPolicy::open;
        // nothing listens
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        drop(l);
        let e = attempt(
            open(),
            &format!("http://127.0.0.1:{port}/services/secret?x=1"),
            HTTP_TIMEOUT,
        )
        .await;
        assert!(matches!(e, SendError::Transient { .. }));
        assert_eq!(
            message(&e),
            format!("connection refused by 127.0.0.1:{port}")
        );
        // a listener that never answers
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = l.local_addr().unwrap().port();
        let _held = tokio::spawn(async move {
            let (_sock, _) = l.accept().await.unwrap();
            tokio::time::sleep(Duration::from_secs(5)).await;
        });
        let e = attempt(
            open(),
            &format!("http://127.0.0.1:{port}/secret"),
            Duration::from_millis(300),
        )
        .await;
        assert_eq!(
            message(&e),
            format!("timed out after 300 ms waiting for 127.0.0.1:{port}")
        );
        // a name that does not resolve
        let e = attempt(open(), "https://no-such-host.invalid/secret", HTTP_TIMEOUT).await;
        assert_eq!(
            message(&e),
            "DNS lookup failed for no-such-host.invalid:443"
        );
        // refused by the resolver: permanent, destination_not_allowed
        let e = attempt(
            EgressPolicy::default(),
            "http://localhost:9/secret",
            HTTP_TIMEOUT,
        )
        .await;
        match &e {
            SendError::Rejected { code, message } => {
                assert_eq!(*code, egress::REFUSED_CODE);
                assert!(
                    message.contains("localhost") && !message.contains("secret"),
                    "{message}"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn answers_keep_the_status_and_a_code_token_only() {
        assert_eq!(answered(500, None), "provider answered 500");
        assert_eq!(
            answered(400, Some("21211")),
            "provider answered 400 (21211)"
        );
        assert_eq!(
            answered(400, Some("the secret text of an internal service")),
            "provider answered 400"
        );
        // Slack's plain-text token, its trailing newline aside
        assert_eq!(
            answered(404, Some("channel_not_found\n")),
            "provider answered 404 (channel_not_found)"
        );
        assert_eq!(answered(404, Some("not found!")), "provider answered 404");
        assert!(matches!(
            classify_status(302, None, None),
            SendError::Rejected {
                code: "provider_rejected",
                ..
            }
        ));
    }

    fn transient() -> Device {
        Device::Failed(SendError::Transient {
            message: "503".into(),
            retry_after: Some(Duration::from_secs(2)),
        })
    }

    #[test]
    fn a_new_destination_needs_the_secret_again() {
        let obj = |v: serde_json::Value| v.as_object().unwrap().clone();
        let stored = obj(serde_json::json!({"base_url": "https://a", "auth_token": "t"}));
        let check = |patch: serde_json::Value| {
            let patch = obj(patch);
            let mut merged = stored.clone();
            for (k, v) in &patch {
                match v {
                    Value::Null => {
                        merged.remove(k);
                    }
                    Value::String(s) if s == "********" => {}
                    _ => {
                        merged.insert(k.clone(), v.clone());
                    }
                }
            }
            let mut v = Validator::new();
            check_secret_restated("twilio", &stored, &merged, &patch, "********", &mut v);
            v.is_empty()
        };
        assert!(!check(serde_json::json!({"base_url": "https://b"})));
        assert!(!check(
            serde_json::json!({"base_url": "https://b", "auth_token": "********"})
        ));
        assert!(check(
            serde_json::json!({"base_url": "https://b", "auth_token": "t2"})
        ));
        assert!(check(
            serde_json::json!({"base_url": "https://b", "auth_token": "t"})
        ));
        assert!(
            check(serde_json::json!({"base_url": "https://a"})),
            "unchanged"
        );
        assert!(
            check(serde_json::json!({"base_url": null})),
            "removed: the default"
        );
        assert!(
            check(serde_json::json!({"from": "+1555"})),
            "not a destination"
        );
        assert!(check(
            serde_json::json!({"base_url": "https://b", "auth_token": null})
        ));
    }

    #[test]
    fn settle_folds_device_results() {
        assert!(matches!(settle(vec![]), Err(SendError::NoAddress { .. })));
        // one accepted: sent, the gone one reported for removal, the others recorded
        let r = settle(vec![
            ("a".into(), Device::Sent(Map::new())),
            ("b".into(), Device::Expired("410".into())),
            ("c".into(), transient()),
        ])
        .expect("sent");
        assert_eq!(r.expired, vec!["b".to_string()]);
        let o = r.outcomes.expect("outcomes");
        assert_eq!(o[0]["status"], "sent");
        assert_eq!(o[1]["status"], "expired");
        assert_eq!(o[2]["status"], "failed");
        assert_eq!(o[2]["error"]["code"], "provider_unavailable");
        // none accepted, one transient: retried (with the Retry-After)
        match settle(vec![
            ("b".into(), Device::Expired("410".into())),
            ("c".into(), transient()),
        ]) {
            Err(SendError::AlsoExpired { error, expired }) => {
                assert_eq!(
                    expired,
                    vec!["b"],
                    "the gone device is removed though the attempt is retried"
                );
                match *error {
                    SendError::Transient { retry_after, .. } => {
                        assert_eq!(retry_after, Some(Duration::from_secs(2)))
                    }
                    other => panic!("{other:?}"),
                }
            }
            other => panic!("{other:?}"),
        }
        // all gone
        match settle(vec![
            ("b".into(), Device::Expired("410".into())),
            ("d".into(), Device::Expired("404".into())),
        ]) {
            Err(SendError::Expired { expired, .. }) => assert_eq!(expired, vec!["b", "d"]),
            other => panic!("{other:?}"),
        }
        // permanent: 401/403 first, else the first rejection's code
        let rej = |code| {
            Device::Failed(SendError::Rejected {
                code,
                message: "x".into(),
            })
        };
        let unauth = Device::Failed(SendError::Unauthorized {
            message: "401".into(),
        });
        assert!(matches!(
            settle(vec![
                ("a".into(), rej("provider_rejected")),
                ("b".into(), unauth)
            ]),
            Err(SendError::Unauthorized { .. })
        ));
        assert!(matches!(
            settle(vec![
                ("a".into(), rej("invalid_address")),
                ("b".into(), Device::Expired("410".into()))
            ]),
            Err(SendError::AlsoExpired { ref error, ref expired })
                if expired == &vec!["b".to_string()]
                    && matches!(**error, SendError::Rejected { code: "invalid_address", .. })
        ));
    }
}
