//! Outbound events: what Herald tells a project's own systems about the
//! changes it makes (a delivery sent, a feed entry read…), POSTed to the
//! project's event endpoints the Standard Webhooks way.
//!
//! This module holds the domain values (event types, endpoints, outbox
//! entries, attempts) and the signing; the store writes an event into an
//! outbox in the same atomic change as the change it describes (see
//! `store::sled::events`), and `actors::events` sends what is in the outbox.
//!
//! Delivery rules, decided here and documented in docs/API.md:
//! - at least once: an outbox entry leaves the outbox only once an attempt
//!   got a 2xx (or the endpoint was disabled); the `webhook-id` is the event's
//!   id, the same on every attempt, so a receiver deduplicates on it;
//! - in order per resource: an event about a resource (a delivery, a feed
//!   entry…) is not attempted while an earlier event of the same resource
//!   for the same endpoint is still in the outbox;
//! - retried with backoff and full jitter (`RetryPolicy`, as deliveries), for
//!   up to the retry horizon (24 h by default); an event still undelivered
//!   after it disables its endpoint, with the reason on the endpoint.

use crate::error::Validator;
use crate::model::Timestamp;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use uuid::Uuid;

/// How long an event is retried before its endpoint is disabled, by default.
pub const DEFAULT_RETRY_HORIZON: Duration = Duration::from_secs(24 * 3600);

/// How long a rotated-out signing secret keeps signing.
pub const SECRET_GRACE: Duration = Duration::from_secs(24 * 3600);

/// How long the event log (what `replay` resends) and the attempt log keep
/// their entries.
pub const LOG_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);

/// The part of a receiver's answer an attempt keeps.
pub const RESPONSE_KEPT: usize = 1024;

/// How long one attempt waits for the receiver's answer.
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);

macro_rules! event_types {
    ($($v:ident = $s:literal),* $(,)?) => {
        /// The kinds of events.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum EventType { $(#[serde(rename = $s)] $v),* }

        impl EventType {
            /// Every type, in documentation order.
            pub const ALL: &'static [EventType] = &[$(EventType::$v),*];

            pub fn as_str(self) -> &'static str {
                match self { $(EventType::$v => $s),* }
            }

            pub fn parse(s: &str) -> Option<EventType> {
                match s { $($s => Some(EventType::$v),)* _ => None }
            }
        }
    };
}

event_types!(
    FlowRunAccepted = "flow_run.accepted",
    NotificationProcessed = "notification.processed",
    DeliverySent = "delivery.sent",
    DeliveryFailed = "delivery.failed",
    DeliverySkipped = "delivery.skipped",
    DeliveryRetrying = "delivery.retrying",
    FeedEntrySeen = "feed_entry.seen",
    FeedEntryRead = "feed_entry.read",
    FeedEntryClicked = "feed_entry.clicked",
    FeedEntryArchived = "feed_entry.archived",
    PushSubscriptionRemoved = "push_subscription.removed",
    DeliveryCanceled = "delivery.canceled",
    NotificationBatched = "notification.batched",
    FeedEntryInteracted = "feed_entry.interacted",
    DeliveryDelivered = "delivery.delivered",
    DeliveryBounced = "delivery.bounced",
    DeliveryComplained = "delivery.complained",
    ChannelDegraded = "channel.degraded",
    ChannelRecovered = "channel.recovered",
);

/// The events of a notification's own state, in order (docs/API.md §15):
/// `notification.batched` when its run joined a batch, then
/// `notification.processed` once every delivery is final. Their data is the
/// notification as the Admin API shows it (`views::NotificationView`).
pub fn notification_events(n: &crate::model::Notification) -> impl Iterator<Item = EventType> {
    let batched = n.stopped == Some(crate::model::StopReason::Batched);
    [
        batched.then_some(EventType::NotificationBatched),
        n.processed.then_some(EventType::NotificationProcessed),
    ]
    .into_iter()
    .flatten()
}

impl EventType {
    /// This type's bit in an `EventMask`.
    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

/// A set of event types (an endpoint's subscription), for the cheap lookup the
/// hot paths make before they build any event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EventMask(u32);

impl EventMask {
    pub const ALL: EventMask = EventMask(u32::MAX);

    pub fn of(types: Option<&[EventType]>) -> EventMask {
        match types {
            None => EventMask::ALL,
            Some(ts) => EventMask(ts.iter().fold(0, |m, t| m | t.bit())),
        }
    }

    pub fn wants(self, t: EventType) -> bool {
        self.0 & t.bit() != 0
    }
}

/// The event types an endpoint asks for, as given: absent, `null` or `["*"]`
/// is every type; an unknown name is a 422 `inclusion` at `{field}.{i}`.
pub fn parse_event_types(
    given: Option<&[String]>, field: &str, v: &mut Validator,
) -> Option<Vec<EventType>> {
    let list = given?;
    if list.is_empty() {
        v.push(
            field,
            "length",
            "must name at least one event type (or \"*\" for every type)",
        );
        return None;
    }
    if list.iter().any(|s| s == "*") {
        if list.len() > 1 {
            v.push(
                field,
                "format",
                "\"*\" (every type) cannot be combined with named types",
            );
        }
        return None;
    }
    let mut out = Vec::with_capacity(list.len());
    for (i, s) in list.iter().enumerate() {
        match EventType::parse(s) {
            Some(t) if !out.contains(&t) => out.push(t),
            Some(_) => {}
            None => v.push(
                format!("{field}.{i}"),
                "inclusion",
                format!(
                    "must be one of {}",
                    EventType::ALL
                        .iter()
                        .map(|t| t.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
        }
    }
    Some(out)
}

/// An event endpoint: where a project's events go. Its signing secrets are
/// kept by the store (sealed) and never part of this value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebhookEndpoint {
    pub id: Uuid,
    pub url: String,
    /// `None`: every type.
    pub event_types: Option<Vec<EventType>>,
    pub enabled: bool,
    /// Why Herald disabled it (an event undelivered for the retry horizon);
    /// cleared when it is enabled again.
    pub disabled_reason: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl WebhookEndpoint {
    pub fn mask(&self) -> EventMask {
        EventMask::of(self.event_types.as_deref())
    }
}

/// An event waiting in an endpoint's outbox.
#[derive(Debug, Clone)]
pub struct OutboxEvent {
    pub project: Uuid,
    pub endpoint: Uuid,
    /// Its place in the outbox (and in the project's event log): microseconds
    /// since the epoch, unique and increasing within a store.
    pub seq: u64,
    /// The event's id, sent as `webhook-id` on every attempt.
    pub id: Uuid,
    pub event_type: EventType,
    /// The resource the event is about (ordering is per resource).
    pub resource: Uuid,
    /// The JSON body: `{"type", "timestamp", "data"}`.
    pub body: Vec<u8>,
    /// Attempts made so far.
    pub attempts: u32,
    /// When the first attempt was made (the retry horizon counts from it).
    pub first_attempt_ms: Option<i64>,
    /// When the next attempt is due.
    pub due_ms: i64,
}

/// One attempt to POST an event, as recorded.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EventAttempt {
    pub id: Uuid,
    pub event_id: Uuid,
    pub event_type: EventType,
    /// 1 for the first attempt of this event.
    pub attempt: u32,
    pub status_code: Option<u16>,
    pub latency_ms: u64,
    /// The first `RESPONSE_KEPT` bytes of the answer's body (lossy UTF-8);
    /// empty when the answer came from an address that is not public (a range
    /// the operator opened: an internal service's answer is not kept).
    pub response: String,
    /// What went wrong (transport error, non-2xx), `None` on success.
    pub error: Option<String>,
    pub created_at: Timestamp,
}

impl EventAttempt {
    pub fn succeeded(&self) -> bool {
        self.error.is_none()
    }
}

/// What to do with an outbox entry after an attempt.
#[derive(Debug, Clone)]
pub enum AttemptNext {
    /// Delivered: it leaves the outbox.
    Done,
    /// Try again at this time (milliseconds since the epoch).
    Retry(i64),
    /// The retry horizon passed: the endpoint is disabled for this reason.
    GiveUp(String),
}

/// A JSON event body: `{"type", "timestamp", "data"}`.
pub fn event_body(t: EventType, at: Timestamp, data: &impl Serialize) -> Vec<u8> {
    #[derive(Serialize)]
    struct Body<'a, D> {
        #[serde(rename = "type")]
        t: &'static str,
        timestamp: Timestamp,
        data: &'a D,
    }
    serde_json::to_vec(&Body {
        t: t.as_str(),
        timestamp: at,
        data,
    })
    .unwrap_or_default()
}

/// A new signing secret: `whsec_` and base64 of 32 random bytes.
pub fn new_secret() -> String {
    use base64::Engine;
    let k: [u8; 32] = rand::random();
    format!(
        "whsec_{}",
        base64::engine::general_purpose::STANDARD.encode(k)
    )
}

/// The `webhook-signature` value for `secrets` (each `whsec_…`): one
/// `v1,<sig>` per secret, space-separated, as the Standard Webhooks
/// specification allows while a rotated-out secret is still valid.
pub fn signature_header(secrets: &[String], id: &str, ts: i64, body: &[u8]) -> String {
    secrets
        .iter()
        .filter_map(|s| crate::providers::webhook::secret_key(s))
        .map(|k| crate::providers::webhook::sign(&k, id, ts, body))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_and_parsing() {
        let mut v = Validator::new();
        assert_eq!(parse_event_types(None, "event_types", &mut v), None);
        assert_eq!(
            parse_event_types(Some(&["*".into()]), "event_types", &mut v),
            None
        );
        let got = parse_event_types(
            Some(&["delivery.sent".into(), "nope".into()]),
            "event_types",
            &mut v,
        );
        assert_eq!(got, Some(vec![EventType::DeliverySent]));
        assert_eq!(v.fields.len(), 1);
        assert_eq!(v.fields[0].field, "event_types.1");
        parse_event_types(Some(&[]), "event_types", &mut v);
        assert_eq!(
            (v.fields[1].field.as_str(), v.fields[1].reason),
            ("event_types", "length")
        );
        let m = EventMask::of(Some(&[EventType::DeliverySent]));
        assert!(m.wants(EventType::DeliverySent) && !m.wants(EventType::DeliveryFailed));
        assert!(EventMask::ALL.wants(EventType::PushSubscriptionRemoved));
        for t in EventType::ALL {
            assert_eq!(EventType::parse(t.as_str()), Some(*t));
        }
    }

    #[test]
    fn two_secrets_give_two_signatures() {
        let (a, b) = (new_secret(), new_secret());
        let h = signature_header(&[a, b], "id", 1, b"{}");
        assert_eq!(h.split(' ').count(), 2);
        assert!(h.split(' ').all(|s| s.starts_with("v1,")));
    }
}
