//! Event endpoint bodies: the create and update requests, the endpoint as
//! read back (never with its secret), the one answer that carries a secret
//! (creation and rotation), attempts, replay, and the notification trace.

use crate::extract::Given;
use herald_engine::actors::EndpointChange;
use herald_engine::egress::EgressPolicy;
use herald_engine::events::{self, EventAttempt, WebhookEndpoint as Model};
use herald_engine::model::Timestamp;
use herald_engine::trace::TraceEntry;
use herald_engine::{validate, Validator};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;
use uuid::Uuid;

/// Longest endpoint URL accepted.
const MAX_URL: usize = 2048;

/// An event endpoint. Its signing secret is only ever shown when it is made
/// (creation, `rotate_secret`).
#[derive(Serialize, ToSchema)]
pub struct WebhookEndpoint {
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Timestamp,
    /// Why Herald disabled it (events undelivered for the retry horizon); null
    /// while enabled.
    pub disabled_reason: Option<String>,
    pub enabled: bool,
    /// The event types it receives; `["*"]`: every type.
    pub event_types: Vec<String>,
    pub id: Uuid,
    #[schema(value_type = DateTime<Utc>)]
    pub updated_at: Timestamp,
    pub url: String,
}

impl From<&Model> for WebhookEndpoint {
    fn from(e: &Model) -> Self {
        WebhookEndpoint {
            created_at: e.created_at,
            disabled_reason: e.disabled_reason.clone(),
            enabled: e.enabled,
            event_types: match &e.event_types {
                None => vec!["*".to_string()],
                Some(ts) => ts.iter().map(|t| t.as_str().to_string()).collect(),
            },
            id: e.id,
            updated_at: e.updated_at,
            url: e.url.clone(),
        }
    }
}

/// An endpoint with its new signing secret: the answer to creation and to
/// `rotate_secret`, the only times the secret is shown.
#[derive(Serialize, ToSchema)]
pub struct WebhookEndpointWithSecret {
    #[serde(flatten)]
    #[schema(inline)]
    pub endpoint: WebhookEndpoint,
    /// `whsec_` + base64 of 32 random bytes: the HMAC-SHA256 key is the
    /// base64-decoded part (Standard Webhooks).
    pub secret: String,
}

/// A new event endpoint.
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"url": "https://example.com/herald-events", "event_types": ["delivery.sent", "delivery.failed"]}))]
pub struct WebhookEndpointInput {
    /// Where events are POSTed (http or https).
    #[serde(default)]
    #[schema(value_type = String, required = true, max_length = 2048)]
    pub url: Given<String>,
    /// The event types to receive; absent, null or `["*"]`: every type.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    pub event_types: Given<Vec<String>>,
    /// Default true.
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub enabled: Given<bool>,
}

/// A change of an endpoint: present fields replace the stored ones.
/// Enabling it again clears `disabled_reason`.
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"enabled": true}))]
pub struct WebhookEndpointUpdate {
    /// Where events are POSTed (http or https); absent keeps it.
    #[serde(default)]
    #[schema(value_type = String, max_length = 2048)]
    pub url: Given<String>,
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    pub event_types: Given<Vec<String>>,
    /// Absent keeps it; not null.
    #[serde(default)]
    #[schema(value_type = bool)]
    pub enabled: Given<bool>,
}

/// The URL as given, checked: an http(s) URL the egress policy allows.
fn check_url(u: &str, egress: &EgressPolicy, v: &mut Validator) {
    if !validate::is_http_url(u) {
        v.push("url", "format", "must be an http(s) URL");
    } else if let Err(refused) = egress.check_url(u) {
        v.push(
            "url",
            "exclusion",
            format!("destination not allowed: {refused}"),
        );
    }
}

/// `event_types` as given: `None` every type; a wrong JSON type is reported.
fn types_of(
    given: &Given<Vec<String>>, v: &mut Validator,
) -> Option<Option<Vec<events::EventType>>> {
    match given {
        Given::Absent => None,
        Given::Null => Some(None),
        Given::Value(list) => Some(events::parse_event_types(
            Some(list.as_slice()),
            "event_types",
            v,
        )),
        Given::Wrong(_) => {
            v.push("event_types", "format", "must be an array of event types");
            None
        }
    }
}

impl WebhookEndpointInput {
    /// A new endpoint (id and timestamps made here), or the 422.
    pub fn validate(&self, egress: &EgressPolicy) -> herald_engine::Result<Model> {
        let mut v = Validator::new();
        let url = self.url.required_text("url", MAX_URL, &mut v);
        if let Some(u) = &url {
            check_url(u, egress, &mut v);
        }
        let event_types = types_of(&self.event_types, &mut v).flatten();
        let enabled = self.enabled.flag("enabled", &mut v).unwrap_or(true);
        v.finish()?;
        let (id, now) = herald_engine::model::new_id();
        Ok(Model {
            id,
            url: url.unwrap_or_default(),
            event_types,
            enabled,
            disabled_reason: None,
            created_at: now,
            updated_at: now,
        })
    }
}

impl WebhookEndpointUpdate {
    /// Checks the change; `apply` then makes it.
    pub fn validate(&self, egress: &EgressPolicy) -> herald_engine::Result<EndpointChange> {
        let mut v = Validator::new();
        let url = match &self.url {
            Given::Absent => None,
            _ => self.url.required_text("url", MAX_URL, &mut v),
        };
        if let Some(u) = &url {
            check_url(u, egress, &mut v);
        }
        let event_types = types_of(&self.event_types, &mut v);
        let enabled = self.enabled.flag("enabled", &mut v);
        if matches!(self.enabled, Given::Null) {
            v.push("enabled", "format", "must be a boolean");
        }
        v.finish()?;
        Ok(EndpointChange {
            url,
            event_types,
            enabled,
        })
    }
}

/// One attempt to deliver an event to an endpoint.
#[derive(Serialize, ToSchema)]
pub struct EventAttemptView {
    /// 1 for the event's first attempt.
    pub attempt: u32,
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Timestamp,
    /// What went wrong (transport error, non-2xx answer); null on success.
    pub error: Option<String>,
    /// The event's id (its `webhook-id`).
    pub event_id: Uuid,
    pub event_type: String,
    pub id: Uuid,
    pub latency_ms: u64,
    /// The first 1 KiB of the answer's body; always empty from an address that
    /// is not public (a range the operator opened), where only the status is kept.
    pub response: String,
    /// The answer's status; null when there was none.
    pub status_code: Option<u16>,
}

impl From<&EventAttempt> for EventAttemptView {
    fn from(a: &EventAttempt) -> Self {
        EventAttemptView {
            attempt: a.attempt,
            created_at: a.created_at,
            error: a.error.clone(),
            event_id: a.event_id,
            event_type: a.event_type.as_str().to_string(),
            id: a.id,
            latency_ms: a.latency_ms,
            response: a.response.clone(),
            status_code: a.status_code,
        }
    }
}

/// Sends again the events written since a time.
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"since": "2026-11-24T10:00:00Z"}))]
pub struct ReplayInput {
    /// RFC 3339 date-time: events written at or after it are sent again.
    #[serde(default)]
    #[schema(value_type = String, format = DateTime, required = true)]
    pub since: Given<String>,
}

impl ReplayInput {
    pub fn validate(&self) -> herald_engine::Result<Timestamp> {
        let mut v = Validator::new();
        let s = self.since.required_text("since", 64, &mut v);
        let mut at = None;
        if let Some(s) = s {
            match chrono::DateTime::parse_from_rfc3339(&s) {
                Ok(t) => at = Some(Timestamp(t.with_timezone(&chrono::Utc))),
                Err(_) => v.push("since", "format", "must be an RFC 3339 date-time"),
            }
        }
        v.finish()?;
        Ok(at.unwrap_or_else(Timestamp::now))
    }
}

/// How many events a replay queued.
#[derive(Serialize, ToSchema)]
pub struct ReplayResult {
    pub queued: usize,
}

/// One decision of a notification's trace.
#[derive(Serialize, ToSchema)]
pub struct TraceEntryView {
    /// The decision's arguments, which depend on its code (times among
    /// them, such as `until` or `send_at`, are project time).
    #[schema(value_type = Object)]
    pub args: Map<String, Value>,
    /// When it was decided, wall time.
    #[schema(value_type = DateTime<Utc>)]
    pub at: Timestamp,
    /// What was decided, e.g. `preference.skipped`.
    pub code: String,
    /// A readable sentence made from `code` and `args`.
    pub message: String,
    /// When it was decided in project time, while the project was on a
    /// test clock; null on the real clock, where project time is `at`.
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub project_at: Option<Timestamp>,
}

impl From<&TraceEntry> for TraceEntryView {
    fn from(e: &TraceEntry) -> Self {
        TraceEntryView {
            args: e.args.clone(),
            at: e.at,
            code: e.code.clone(),
            message: e.message(),
            project_at: e.project_at,
        }
    }
}

/// A notification's decision trace, in order.
#[derive(Serialize, ToSchema)]
pub struct NotificationTrace {
    pub entries: Vec<TraceEntryView>,
    pub notification_id: Uuid,
}
