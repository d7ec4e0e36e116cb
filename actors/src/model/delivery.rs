//! Deliveries (one per notification and step): their status and errors,
//! the rendered content, the feed entry and the feed counts.

use super::{conditions, ChannelType, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryStatus {
    Pending,
    Sent,
    Failed,
    Skipped,
    /// Stopped by a cancellation before it was attempted.
    Canceled,
    /// The provider reported the message delivered (`feedback`).
    Delivered,
    /// The provider reported the message bounced (`Delivery::bounce` says
    /// hard or soft).
    Bounced,
    /// The recipient reported the message as spam.
    Complained,
}

/// A bounce's kind: a hard bounce (the address does not exist) suppresses
/// the address at once; soft bounces (full mailbox, greylisting) only when
/// they repeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BounceKind {
    Hard,
    Soft,
}

impl BounceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BounceKind::Hard => "hard",
            BounceKind::Soft => "soft",
        }
    }
}

impl DeliveryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Sent => "sent",
            DeliveryStatus::Failed => "failed",
            DeliveryStatus::Skipped => "skipped",
            DeliveryStatus::Canceled => "canceled",
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Bounced => "bounced",
            DeliveryStatus::Complained => "complained",
        }
    }
    /// Every status, in index order.
    pub const ALL: [DeliveryStatus; 8] = [
        Self::Pending,
        Self::Sent,
        Self::Failed,
        Self::Skipped,
        Self::Canceled,
        Self::Delivered,
        Self::Bounced,
        Self::Complained,
    ];

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|x| x.as_str() == s)
    }
    pub fn index(self) -> u8 {
        self as u8
    }
    pub fn is_final(self) -> bool {
        self != DeliveryStatus::Pending
    }
}

/// Why a delivery failed, will be retried, or was skipped: `delivery.error.code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryErrorCode {
    /// Skipped: the recipient's preferences turn the channel type or flow off.
    Preference,
    /// Skipped: the recipient has no address for the channel (no email, no
    /// phone, no push subscription) or was deleted.
    MissingAddress,
    /// Failed: the address the recipient has is one the provider cannot send to.
    InvalidAddress,
    /// Failed: the step's template did not render with the run's data.
    TemplateError,
    /// Failed: the provider answered 401 or 403 (the channel's credentials).
    ProviderUnauthorized,
    /// Failed: the provider refused the message for good (another 4xx).
    ProviderRejected,
    /// Retried, and failed once the attempts are used up: the provider could
    /// not be reached or answered 408, 429 or 5xx.
    ProviderUnavailable,
    /// Failed: the channel's provider access is revoked.
    ProviderRevoked,
    /// Failed: the channel is unconfigured, deleted, or its configuration
    /// cannot be used.
    ProviderNotConfigured,
    /// Failed: every push subscription of the recipient on the channel is gone.
    SubscriptionExpired,
    /// Failed: the egress policy refused the destination; nothing was sent.
    DestinationNotAllowed,
    /// Canceled: the run's cancellation key was canceled while the delivery
    /// waited.
    Canceled,
    /// Skipped: the step's condition (`if`) was false when it was reached.
    ConditionFalse,
    /// Failed: storing it would have taken its project over its storage
    /// quota (`quota`; a topic run's chunk staged after the quota was used).
    QuotaExceeded,
    /// Failed: the process died while the delivery was in progress at two
    /// starts in a row (`actors::poison`); it is not attempted a third time.
    Crashed,
    /// Skipped: the recipient's address (email, phone) is on the project's
    /// suppression list (`crate::suppression`).
    Suppressed,
    /// Skipped: an earlier channel of its route step reached the recipient
    /// (`delivery::route`).
    RouteSatisfied,
}

impl DeliveryErrorCode {
    pub const ALL: [DeliveryErrorCode; 17] = [
        DeliveryErrorCode::Preference,
        DeliveryErrorCode::MissingAddress,
        DeliveryErrorCode::InvalidAddress,
        DeliveryErrorCode::TemplateError,
        DeliveryErrorCode::ProviderUnauthorized,
        DeliveryErrorCode::ProviderRejected,
        DeliveryErrorCode::ProviderUnavailable,
        DeliveryErrorCode::ProviderRevoked,
        DeliveryErrorCode::ProviderNotConfigured,
        DeliveryErrorCode::SubscriptionExpired,
        DeliveryErrorCode::DestinationNotAllowed,
        DeliveryErrorCode::Canceled,
        DeliveryErrorCode::ConditionFalse,
        DeliveryErrorCode::QuotaExceeded,
        DeliveryErrorCode::Crashed,
        DeliveryErrorCode::Suppressed,
        DeliveryErrorCode::RouteSatisfied,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryErrorCode::Preference => "preference",
            DeliveryErrorCode::MissingAddress => "missing_address",
            DeliveryErrorCode::InvalidAddress => "invalid_address",
            DeliveryErrorCode::TemplateError => "template_error",
            DeliveryErrorCode::ProviderUnauthorized => "provider_unauthorized",
            DeliveryErrorCode::ProviderRejected => "provider_rejected",
            DeliveryErrorCode::ProviderUnavailable => "provider_unavailable",
            DeliveryErrorCode::ProviderRevoked => "provider_revoked",
            DeliveryErrorCode::ProviderNotConfigured => "provider_not_configured",
            DeliveryErrorCode::SubscriptionExpired => "subscription_expired",
            DeliveryErrorCode::DestinationNotAllowed => "destination_not_allowed",
            DeliveryErrorCode::Canceled => "canceled",
            DeliveryErrorCode::ConditionFalse => "condition_false",
            DeliveryErrorCode::QuotaExceeded => "quota_exceeded",
            DeliveryErrorCode::Crashed => "crashed",
            DeliveryErrorCode::Suppressed => "suppressed",
            DeliveryErrorCode::RouteSatisfied => "route_satisfied",
        }
    }
}

// A delivery's error as stored and shown. `code` stays a string in the record
// (a code a later version adds still reads); it is written from a
// [`DeliveryErrorCode`] through [`DeliveryError::new`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, ToSchema)]
pub struct DeliveryError {
    /// `preference`, `missing_address`, `invalid_address`, `provider_unauthorized`,
    /// `provider_rejected`, `provider_unavailable`, `provider_revoked`,
    /// `provider_not_configured`, `subscription_expired`, `destination_not_allowed`
    /// (the egress guard refused the address; nothing was sent), `suppressed`
    /// (the address is on the project's suppression list)…
    pub code: String,
    pub message: String,
}

impl DeliveryError {
    pub fn new(code: DeliveryErrorCode, message: impl Into<String>) -> Self {
        DeliveryError {
            code: code.as_str().into(),
            message: message.into(),
        }
    }
}

/// Rendered content of one delivery.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Rendered {
    pub subject: String,
    pub body: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub html: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub url: Option<String>,
    /// An in_app entry's action buttons, rendered; absent when none (and in
    /// entries stored before actions existed).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub actions: Vec<RenderedAction>,
}

impl Rendered {
    /// Every text part, in order: subject, body, html, url, then each
    /// action's label and url.
    fn parts_mut(&mut self) -> impl Iterator<Item = &mut String> {
        [&mut self.subject, &mut self.body]
            .into_iter()
            .chain(self.html.as_mut())
            .chain(self.url.as_mut())
            .chain(
                self.actions
                    .iter_mut()
                    .flat_map(|a| [&mut a.label, &mut a.url]),
            )
    }

    /// Whether any part holds `mark` (a placeholder a link made at send
    /// time replaces: `rules::preference_link`, `rules::unsubscribe_link`).
    pub fn has_mark(&self, mark: &str) -> bool {
        let parts = [self.subject.as_str(), self.body.as_str()];
        parts.into_iter().any(|p| p.contains(mark))
            || self.html.as_deref().is_some_and(|p| p.contains(mark))
            || self.url.as_deref().is_some_and(|p| p.contains(mark))
            || self
                .actions
                .iter()
                .any(|a| a.label.contains(mark) || a.url.contains(mark))
    }

    /// Replaces `mark` in every part with `with`.
    pub fn fill_mark(&mut self, mark: &str, with: &str) {
        for s in self.parts_mut() {
            if s.contains(mark) {
                *s = s.replace(mark, with);
            }
        }
    }
}

/// One rendered action button of a feed entry.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, ToSchema)]
pub struct RenderedAction {
    pub label: String,
    pub url: String,
}

// The record as stored: empty fields are left out (an absent `Option`
// reads as `None`), since each named empty field costs bytes in every
// stored copy on both stores; the wire form is `DeliveryView`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Delivery {
    pub id: Uuid,
    pub notification_id: Uuid,
    pub flow_run_id: Uuid,
    pub flow_id: Uuid,
    pub channel_id: Uuid,
    pub channel_type: ChannelType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    pub status: DeliveryStatus,
    pub data: Rendered,
    /// Per-device outcomes and other provider facts, shown under `data.outcomes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcomes: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor_id: Option<Uuid>,
    pub recipient_id: Uuid,
    pub attempts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<DeliveryError>,
    /// When the delivery may first be attempted (after `delay` steps).
    pub due_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_attempt_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seen_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clicked_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived_at: Option<Timestamp>,
    /// When the recipient last pressed one of the entry's action buttons,
    /// and which (its index in `data.actions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interacted_at: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interacted_action: Option<u8>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// What is left of the step's condition to decide when the delivery
    /// comes due (rules over earlier steps, see `model::conditions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<conditions::Conditions>,
    /// A step after a batch step, of the run that opened the batch: it is
    /// rendered when it comes due, with the batch in its context, once the
    /// batch is closed (see `delivery::batch`); false once rendered.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub batch: bool,
    /// When an in-app delivery that waited in the queue (a step after a
    /// delay or a batch, a scheduled run) entered its recipient's feed:
    /// the entry's time and its place in the feed. `None` for an entry
    /// that entered the feed when the run was accepted (its time is
    /// `created_at`) and for every other channel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feed_at: Option<Timestamp>,
    /// A bounced delivery's bounce kind (`DeliveryStatus::Bounced`, from
    /// the provider's report).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounce: Option<BounceKind>,
    /// The backup channels left to the delivery, in order (its step's
    /// `fallback_channel_ids` as staged; a failover takes the first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fallback_channel_ids: Vec<Uuid>,
    /// The channel of each attempt, in order, once a failover made them
    /// differ; empty while every attempt went through `channel_id`
    /// (`Delivery::attempt_channels`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempt_channels: Vec<Uuid>,
    /// A hop of a route step: which, and what it waits for
    /// (`delivery::route`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<RouteHop>,
    /// A step after a route step: the route's step index; it goes once
    /// every hop of that route has settled (`delivery::route`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_route: Option<u8>,
}

/// What a route hop's delivery knows of its route (`delivery::route`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouteHop {
    /// The route's step index and this hop's place in it (0: first).
    pub step: u8,
    pub hop: u8,
    pub success: super::RouteSuccess,
    /// How long after the previous hop went out this one is tried.
    pub after_ms: i64,
    /// The route's own condition over earlier steps, decided when each
    /// hop comes due (the channel's own is the delivery's `gate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<conditions::Conditions>,
}

/// `Delivery::feed_sort_id` of a delivery id and its `feed_at`.
pub fn feed_sort_id(id: &Uuid, feed_at: Option<Timestamp>) -> Uuid {
    match feed_at {
        Some(t) => {
            let mut b = *id.as_bytes();
            b[..6].copy_from_slice(&(t.millis().max(0) as u64).to_be_bytes()[2..]);
            Uuid::from_bytes(b)
        }
        None => *id,
    }
}

impl Delivery {
    /// The channel of each of its `attempts`, in order: attempts made before
    /// the first failover, and those of a delivery that never moved, went
    /// through `channel_id`.
    pub fn attempt_channels(&self) -> Vec<Uuid> {
        let n = self.attempts as usize;
        let mut out = Vec::with_capacity(n);
        out.extend(self.attempt_channels.iter().take(n));
        out.resize(n, self.channel_id);
        out
    }

    /// The channel of attempt number `n` (1-based): `channel_id` past the
    /// recorded ones (`attempt_channels`).
    pub fn attempt_channel(&self, n: u32) -> Uuid {
        let i = (n as usize).saturating_sub(1);
        self.attempt_channels
            .get(i)
            .copied()
            .unwrap_or(self.channel_id)
    }

    /// Attempts made through its current channel since it last moved: the
    /// retry policy of that channel counts these.
    pub fn attempts_on_channel(&self) -> u32 {
        self.attempt_channels()
            .iter()
            .rev()
            .take_while(|c| **c == self.channel_id)
            .count() as u32
    }

    /// The time a feed entry shows: when its step delivered it.
    pub fn feed_time(&self) -> Timestamp {
        self.feed_at.unwrap_or(self.created_at)
    }

    /// The id that orders the entry in its feed: the delivery id with its
    /// first 48 bits (a UUIDv7's millisecond time) set to `feed_at` when
    /// there is one. Entries then sort by when they entered the feed, ties
    /// in delivery id order, and an entry that entered at acceptance keeps
    /// its delivery id (so entries stored before `feed_at` existed keep
    /// their place).
    pub fn feed_sort_id(&self) -> Uuid {
        feed_sort_id(&self.id, self.feed_at)
    }

    /// Moves `updated_at` up to the latest feed flag change (seen, read,
    /// clicked, archived, interacted): both stores call it after setting the
    /// flags, so an entry's `updated_at` never lags its flags.
    pub fn follow_feed_flags(&mut self) {
        let latest = [
            self.seen_at,
            self.read_at,
            self.clicked_at,
            self.archived_at,
            self.interacted_at,
        ]
        .into_iter()
        .flatten()
        .max();
        if let Some(t) = latest {
            self.updated_at = self.updated_at.max(t);
        }
    }

    /// The in-app feed entry state: `unseen`, `seen` or `read`.
    pub fn feed_state(&self) -> &'static str {
        if self.read_at.is_some() {
            "read"
        } else if self.seen_at.is_some() {
            "seen"
        } else {
            "unseen"
        }
    }
}

/// Unread and unseen entries of a user's feed per preference category
/// (`rules::feed::by_category`): every category the project declares, by
/// handle.
pub type CategoryCounts = std::collections::BTreeMap<String, FeedCounts>;

/// Unread and unseen counts of a user's feed (archived entries left out).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct FeedCounts {
    pub unread: u64,
    pub unseen: u64,
    /// The user's latest live-feed event sequence number (0 before any event).
    #[serde(default)]
    pub seq: u64,
}
