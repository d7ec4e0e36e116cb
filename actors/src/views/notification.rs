//! A notification as `GET /admin/v1/notifications/{id}` shows it, which is
//! also the `data` of the `notification.processed` and
//! `notification.batched` events (docs/API.md §15). One constructor,
//! `NotificationView::new`, so the two cannot drift apart.

use super::{DeliveryView, UserView};
use crate::model::{self, Delivery, Timestamp, User};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProcessingStatus {
    /// A scheduled run whose `send_at` has not come yet (project time).
    Scheduled,
    Pending,
    Processed,
    /// A notification whose run a throttle step stopped for its recipient.
    Throttled,
    /// A notification whose run joined another run's batch (see
    /// `batched_into`) and ended there for its recipient.
    Batched,
}

impl ProcessingStatus {
    pub fn of(processed: bool) -> Self {
        if processed {
            ProcessingStatus::Processed
        } else {
            ProcessingStatus::Pending
        }
    }
}

// A whole notification: its run's data, its actor and recipient users and
// its deliveries (a `//` comment: a doc comment would become the schema's
// description in the OpenAPI document).
// Fields in name order: the bytes the `json!` form of the object wrote.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(as = Notification)]
pub struct NotificationView {
    /// Null once the user is deleted.
    pub actor: Option<UserView>,
    pub actor_id: Option<Uuid>,
    /// A `batched` notification: the notification whose batch it joined,
    /// which carries the digest. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub batched_into: Option<Uuid>,
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Timestamp,
    /// The run's `data`.
    pub data: Value,
    pub deliveries: Vec<DeliveryView>,
    pub flow_id: Uuid,
    pub flow_run_id: Uuid,
    pub id: Uuid,
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub processed_at: Option<Timestamp>,
    /// Null once the user is deleted.
    pub recipient: Option<UserView>,
    pub recipient_id: Uuid,
    pub status: ProcessingStatus,
    /// A channel's test send (`POST /admin/v1/channels/{channel_id}/test`):
    /// the channel tested (the notification's `flow_id` is that channel's id
    /// too). Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    pub test_channel_id: Option<Uuid>,
    pub topic: Option<String>,
    #[schema(value_type = DateTime<Utc>)]
    pub updated_at: Timestamp,
}

impl NotificationView {
    /// `n` with its actor and recipient users (`None`: deleted), its run's
    /// `data` and its deliveries.
    pub fn new(
        n: &model::Notification, actor: Option<User>, recipient: Option<User>, data: Value,
        deliveries: Vec<DeliveryView>,
    ) -> Self {
        NotificationView {
            actor: actor.as_ref().map(UserView::from),
            actor_id: n.actor_id,
            batched_into: n.batched_into,
            created_at: n.created_at,
            data,
            deliveries,
            flow_id: n.flow_id,
            flow_run_id: n.flow_run_id,
            id: n.id,
            processed_at: n.processed_at,
            recipient: recipient.as_ref().map(UserView::from),
            recipient_id: n.recipient_id,
            status: match n.stopped {
                Some(model::StopReason::Throttled) => ProcessingStatus::Throttled,
                Some(model::StopReason::Batched) => ProcessingStatus::Batched,
                None => ProcessingStatus::of(n.processed),
            },
            test_channel_id: n.test_channel_id,
            topic: n.topic.clone(),
            updated_at: n.updated_at,
        }
    }

    /// `new` as a backend stages the notification's event: its deliveries
    /// `ds` as being written and its users from `user` (read in the same
    /// change; `None`: a deleted user).
    pub fn staged(
        n: &model::Notification, ds: &[Delivery], data: Value, user: impl Fn(&Uuid) -> Option<User>,
    ) -> Self {
        Self::new(
            n,
            n.actor_id.as_ref().and_then(&user),
            user(&n.recipient_id),
            data,
            ds.iter().map(Delivery::view).collect(),
        )
    }

    /// The users `new` needs: the actor (if any) and the recipient.
    pub fn user_ids(n: &model::Notification) -> impl Iterator<Item = Uuid> {
        n.actor_id.into_iter().chain([n.recipient_id])
    }
}
