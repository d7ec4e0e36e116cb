//! A delivery as the Admin API and the events show it (`DeliveryView`, built
//! from the record by `Delivery::view`).

use crate::model::{
    BounceKind, ChannelType, Delivery, DeliveryError, DeliveryStatus, RenderedAction, Timestamp,
};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

/// The rendered content of a delivery.
// The schema of a delivery's `data`: the stored `Rendered` plus the provider's
// outcomes (a feed entry's `data` is the stored `Rendered`, without them).
// Fields in name order: the bytes the `json!` form of the object wrote.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(as = Rendered)]
pub struct DeliveryData {
    /// An in_app delivery's action buttons, rendered; absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<RenderedAction>,
    pub body: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub html: Option<String>,
    /// Per-device outcomes and other provider facts (push channels).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcomes: Option<Value>,
    pub subject: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// A delivery as the Admin API and the webhooks show it.
// Fields in name order: the bytes the `json!` form of the object wrote.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(as = Delivery)]
pub struct DeliveryView {
    pub actor_id: Option<Uuid>,
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub archived_at: Option<Timestamp>,
    /// The channel of each attempt, in order (as many as `attempts`): they
    /// differ from `channel_id` once a failover moved the delivery to a
    /// backup channel.
    pub attempt_channels: Vec<Uuid>,
    /// Provider calls made so far, through every channel it went through.
    pub attempts: u32,
    /// A bounced delivery's bounce kind (`hard` or `soft`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub bounce: Option<BounceKind>,
    /// The channel the delivery goes through: its step's channel, or the
    /// backup a failover moved it to (the one that sent it, once sent).
    pub channel_id: Uuid,
    pub channel_type: ChannelType,
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub clicked_at: Option<Timestamp>,
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Timestamp,
    pub data: DeliveryData,
    pub error: Option<DeliveryError>,
    pub flow_id: Uuid,
    pub flow_run_id: Uuid,
    pub id: Uuid,
    /// The index in `data.actions` of the action the recipient last pressed.
    pub interacted_action: Option<u8>,
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub interacted_at: Option<Timestamp>,
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub next_attempt_at: Option<Timestamp>,
    pub notification_id: Uuid,
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub read_at: Option<Timestamp>,
    pub recipient_id: Uuid,
    /// Sent in sandbox mode (the project's or the channel's): no provider
    /// was called.
    pub sandbox: bool,
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub seen_at: Option<Timestamp>,
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub sent_at: Option<Timestamp>,
    pub status: DeliveryStatus,
    pub topic: Option<String>,
    #[schema(value_type = DateTime<Utc>)]
    pub updated_at: Timestamp,
}

impl Delivery {
    pub fn view(&self) -> DeliveryView {
        DeliveryView {
            actor_id: self.actor_id,
            archived_at: self.archived_at,
            attempt_channels: self.attempt_channels(),
            attempts: self.attempts,
            bounce: self.bounce,
            channel_id: self.channel_id,
            channel_type: self.channel_type,
            clicked_at: self.clicked_at,
            created_at: self.feed_time(),
            data: DeliveryData {
                actions: self.data.actions.clone(),
                body: self.data.body.clone(),
                html: self.data.html.clone(),
                outcomes: self.outcomes.clone(),
                subject: self.data.subject.clone(),
                url: self.data.url.clone(),
            },
            error: self.error.clone(),
            flow_id: self.flow_id,
            flow_run_id: self.flow_run_id,
            id: self.id,
            interacted_action: self.interacted_action,
            interacted_at: self.interacted_at,
            next_attempt_at: self.next_attempt_at,
            notification_id: self.notification_id,
            read_at: self.read_at,
            recipient_id: self.recipient_id,
            sandbox: self.sandboxed(),
            seen_at: self.seen_at,
            sent_at: self.sent_at,
            status: self.status,
            topic: self.topic.clone(),
            updated_at: self.updated_at,
        }
    }
}
