//! Channel providers: what each needs in its config, which config fields are
//! secret, and how a delivery is handed to it. One module per provider, each
//! implementing [`Provider`], declared and listed once in the registry below;
//! the delivery actor of a channel type drives their transports.

pub mod apns;
mod channel;
pub mod discord;
pub mod expo;
pub mod fcm;
pub mod in_app;
mod mail;
pub mod mailgun;
pub mod messagebird;
pub mod postmark;
pub mod resend;
pub mod sendgrid;
pub mod ses;
pub mod slack;
pub mod slack_bot;
pub mod smtp;
mod spec;
pub mod teams;
pub mod twilio;
pub mod vonage;
pub mod web_push;
pub mod webhook;

pub use channel::{
    check_secret_restated, complete_config, destination_fields, missing_required, provider_type,
    secret_fields, validate_config, MASK,
};
pub use spec::{Clients, ConfigField, FieldFormat, HttpTransport, Provider, ProviderSpec};

use crate::egress::{self, EgressPolicy};
use crate::error::Validator;
use crate::model::{ChannelType, Delivery, DeliveryErrorCode, PushSubscription, User};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;

/// Declares [`ProviderKind`] and its dispatch from one list, in the order the
/// API documents the providers: `Kind => module::Type`, `Type` implementing
/// [`Provider`]. (The modules are declared above, outside the macro, where
/// rustfmt sees them.)
macro_rules! registry {
    ($($kind:ident => $module:ident :: $ty:ident,)*) => {
        /// Every provider of this build.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ProviderKind {
            $($kind,)*
        }

        impl ProviderKind {
            pub const ALL: &'static [ProviderKind] = &[$(ProviderKind::$kind,)*];

            pub fn spec(self) -> &'static ProviderSpec {
                match self {
                    $(ProviderKind::$kind => <$module::$ty as Provider>::spec(),)*
                }
            }

            fn validate(self, config: &Map<String, Value>, v: &mut Validator) {
                match self {
                    $(ProviderKind::$kind => <$module::$ty as Provider>::validate(config, v),)*
                }
            }

            fn inner_destinations(self, config: &Map<String, Value>) -> Vec<(&'static str, &str)> {
                match self {
                    $(ProviderKind::$kind => <$module::$ty as Provider>::inner_destinations(config),)*
                }
            }

            fn complete(self, config: &mut Map<String, Value>) {
                match self {
                    $(ProviderKind::$kind => <$module::$ty as Provider>::complete(config),)*
                }
            }

            fn transport(self, clients: &Clients) -> Option<Arc<dyn Provider>> {
                match self {
                    $(ProviderKind::$kind => <$module::$ty as Provider>::transport(clients),)*
                }
            }
        }
    };
}

registry! {
    InApp => in_app::InApp,
    Webhook => webhook::Webhook,
    SlackWebhook => slack::SlackWebhook,
    Slack => slack_bot::SlackBot,
    Discord => discord::Discord,
    Teams => teams::Teams,
    Smtp => smtp::Smtp,
    Sendgrid => sendgrid::Sendgrid,
    Postmark => postmark::Postmark,
    Mailgun => mailgun::Mailgun,
    Resend => resend::Resend,
    Ses => ses::Ses,
    Twilio => twilio::Twilio,
    Vonage => vonage::Vonage,
    MessageBird => messagebird::MessageBird,
    WebPush => web_push::WebPush,
    Fcm => fcm::Fcm,
    Apns => apns::Apns,
    Expo => expo::Expo,
}

impl ProviderKind {
    /// The kind a channel's `provider` names.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|k| k.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        self.spec().name
    }

    pub fn channel_type(self) -> ChannelType {
        self.spec().channel_type
    }

    /// The names of its secret fields (see [`ConfigField::secret`]).
    pub fn secret_fields(self) -> &'static [&'static str] {
        static SECRETS: std::sync::OnceLock<Vec<Vec<&'static str>>> = std::sync::OnceLock::new();
        &SECRETS.get_or_init(|| {
            ProviderKind::ALL
                .iter()
                .map(|k| k.spec().secrets().collect())
                .collect()
        })[self as usize]
    }
}

/// Every provider's spec, in the registry's order: what the API's schema of a
/// channel (`type`, `provider`, `config`) can be derived from.
pub fn specs() -> impl Iterator<Item = &'static ProviderSpec> {
    ProviderKind::ALL.iter().map(|k| k.spec())
}

/// How an attempt failed, which decides retry or not (docs/API.md §9).
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
    Rejected {
        code: DeliveryErrorCode,
        message: String,
    },
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
    /// The status the provider answered with (HTTP status, SMTP reply code),
    /// for the decision trace; per device in `outcomes` for push.
    pub status_code: Option<u16>,
}

impl Sent {
    /// A plain acceptance answered with `status`.
    pub fn answered(status: u16) -> Sent {
        Sent {
            status_code: Some(status),
            ..Sent::default()
        }
    }
}

impl SendError {
    /// The status the provider answered with, for the decision trace: every
    /// message of a provider's answer is made by [`answered`] (or says
    /// `… answered NNN` the same way: SMTP, push services), so the code is
    /// read back from it rather than carried in every variant. `None` when
    /// there was no answer (a timeout, a refused connection).
    pub fn status_code(&self) -> Option<u16> {
        let message = match self {
            SendError::Transient { message, .. }
            | SendError::Unauthorized { message }
            | SendError::Rejected { message, .. }
            | SendError::NoAddress { message }
            | SendError::Expired { message, .. } => message,
            SendError::AlsoExpired { error, .. } => return error.status_code(),
        };
        let rest = &message[message.find("answered ")? + "answered ".len()..];
        let digits = rest.get(..3)?;
        let after = rest[3..].chars().next();
        (digits.bytes().all(|b| b.is_ascii_digit()) && !after.is_some_and(|c| c.is_ascii_digit()))
            .then(|| digits.parse().ok())
            .flatten()
    }
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
    pub subscriptions: Vec<PushSubscription>,
    /// For an email of a commercial flow: its one-click unsubscribe link,
    /// made for this attempt, which the provider sends in
    /// `List-Unsubscribe` with `List-Unsubscribe-Post`
    /// (`rules::unsubscribe_link::headers`); `None` for any other.
    pub unsubscribe_url: Option<String>,
    /// The channel's provider callback URL (`Engine::callback_url`), for
    /// the providers that are told it with each message (Twilio's
    /// `StatusCallback`); `None` when the server has no public URL.
    pub callback_url: Option<String>,
}

/// The transports of one engine, by provider.
pub struct Transports(Vec<Option<Arc<dyn Provider>>>);

impl Transports {
    /// The transport of the provider a channel names (`None`: no such
    /// provider, or one without a transport: in_app).
    pub fn get(&self, provider: &str) -> Option<&Arc<dyn Provider>> {
        self.0
            .get(ProviderKind::parse(provider)? as usize)?
            .as_ref()
    }
}

/// Maps an HTTP status from a provider to the error class (docs/API.md §9). Only the
/// status and the provider's own error code (`code`: Twilio's `code`, FCM's
/// `errorCode`, APNs' `reason`…) are kept, never the body: the answer of a
/// server Herald should not have reached could otherwise be read back through
/// `delivery.error.message`.
pub fn classify_status(
    status: u16, code: Option<&str>, retry_after: Option<Duration>,
) -> SendError {
    let message = answered(status, code);
    match status {
        408 | 429 | 500..=599 => SendError::Transient {
            message,
            retry_after,
        },
        401 | 403 => SendError::Unauthorized { message },
        _ => SendError::Rejected {
            code: DeliveryErrorCode::ProviderRejected,
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

/// Every transport this build has (in_app has none: the user actors deliver
/// it). `http` must come from [`egress::client_builder`] (the guarded resolver,
/// no redirects); the HTTP/2 client is built here the same way.
pub fn transports(http: &reqwest::Client, policy: &Arc<EgressPolicy>) -> Transports {
    let clients = Clients {
        http: http.clone(),
        h2: egress::client_builder(policy)
            .http2_prior_knowledge()
            .build()
            .unwrap_or_else(|_| http.clone()),
        guard: Guard(policy.clone()),
    };
    Transports(
        ProviderKind::ALL
            .iter()
            .map(|k| k.transport(&clients))
            .collect(),
    )
}

/// The egress policy as the transports use it at send time.
#[derive(Clone)]
pub struct Guard(pub Arc<EgressPolicy>);

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
        code: DeliveryErrorCode::DestinationNotAllowed,
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
        code: DeliveryErrorCode::ProviderNotConfigured,
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
    let mut rejected: Option<(DeliveryErrorCode, String)> = None;
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
                    serde_json::json!({"code": DeliveryErrorCode::SubscriptionExpired.as_str(), "message": message}),
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
                        (DeliveryErrorCode::ProviderUnavailable, message)
                    }
                    SendError::Unauthorized { message } => {
                        unauthorized.get_or_insert(message.clone());
                        (DeliveryErrorCode::ProviderUnauthorized, message)
                    }
                    SendError::Rejected { code, message } => {
                        rejected.get_or_insert((code, message.clone()));
                        (code, message)
                    }
                    SendError::NoAddress { message } => {
                        rejected
                            .get_or_insert((DeliveryErrorCode::InvalidAddress, message.clone()));
                        (DeliveryErrorCode::InvalidAddress, message)
                    }
                    SendError::Expired { message, .. } => {
                        (DeliveryErrorCode::SubscriptionExpired, message)
                    }
                    SendError::AlsoExpired { error, .. } => {
                        (DeliveryErrorCode::ProviderRejected, format!("{error:?}"))
                    }
                };
                o.insert("status".into(), "failed".into());
                o.insert(
                    "error".into(),
                    serde_json::json!({"code": code.as_str(), "message": message}),
                );
            }
        }
        outcomes.push(Value::Object(o));
    }
    let n = outcomes.len();
    if sent > 0 {
        // The attempt's status: the first accepted device's.
        let status_code = outcomes
            .iter()
            .find(|o| o["status"] == "sent")
            .and_then(|o| o["status_code"].as_u64())
            .and_then(|c| u16::try_from(c).ok());
        return Ok(Sent {
            outcomes: Some(Value::Array(outcomes)),
            expired,
            status_code,
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
    let (code, message) =
        rejected.unwrap_or((DeliveryErrorCode::ProviderRejected, "rejected".into()));
    Err(with_expired(SendError::Rejected { code, message }, expired))
}

/// `s` cut to at most `max` characters, ending in `…` when it was cut (chat
/// services refuse texts over their limit; a shortened message is still one).
pub(crate) fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// A push payload built by `build` around `body`, the body shortened (on a
/// char boundary, ending in `…`) until the payload fits in `max` bytes: push
/// services refuse larger messages, and a shortened notification is still one.
pub(crate) fn fit_body(body: &str, max: usize, build: impl Fn(&str) -> Vec<u8>) -> Vec<u8> {
    let mut body = body.to_string();
    loop {
        let p = build(&body);
        if p.len() <= max || body.is_empty() {
            return p;
        }
        let over = p.len() - max;
        let mut cut = body.len().saturating_sub(over.max(16) + 3);
        while cut > 0 && !body.is_char_boundary(cut) {
            cut -= 1;
        }
        body.truncate(cut);
        if !body.is_empty() {
            body.push('…');
        }
    }
}

#[cfg(test)]
mod tests;
