//! Bodies of the Admin API's read side of runs: a notification with its users
//! and deliveries, and a flow run. A delivery is the engine's
//! `model::DeliveryView` (the webhooks send it too).

use herald_actors::model::{self, DeliveryView, Timestamp, User};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

#[derive(Serialize, ToSchema)]
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
    fn of(processed: bool) -> Self {
        if processed {
            ProcessingStatus::Processed
        } else {
            ProcessingStatus::Pending
        }
    }
}

// Fields in name order: the bytes the `json!` form of the object wrote.
#[derive(Serialize, ToSchema)]
pub struct FlowRun {
    /// The key `POST /admin/v1/flows/{id}/cancel` stops the run by.
    pub cancellation_key: Option<String>,
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Timestamp,
    pub flow_id: Uuid,
    pub id: Uuid,
    pub notifications_count: u64,
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub processed_at: Option<Timestamp>,
    pub recipients_count: u64,
    /// A scheduled run: when its steps start (project time).
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub send_at: Option<Timestamp>,
    pub status: ProcessingStatus,
    pub topic: Option<String>,
}

impl FlowRun {
    /// The run as of project time `now`: `scheduled` until its `send_at`.
    pub fn at(r: &model::FlowRun, now: Timestamp) -> Self {
        let mut v = FlowRun::from(r);
        if !r.processed && r.send_at.is_some_and(|at| at.millis() > now.millis()) {
            v.status = ProcessingStatus::Scheduled;
        }
        v
    }
}

impl From<&model::FlowRun> for FlowRun {
    fn from(r: &model::FlowRun) -> Self {
        FlowRun {
            cancellation_key: r.cancellation_key.clone(),
            created_at: r.created_at,
            flow_id: r.flow_id,
            id: r.id,
            notifications_count: r.notifications_count,
            processed_at: r.processed_at,
            recipients_count: r.recipients_count,
            send_at: r.send_at,
            status: ProcessingStatus::of(r.processed),
            topic: r.topic.clone(),
        }
    }
}

// Fields in name order: the bytes the `json!` form of the object wrote.
#[derive(Serialize, ToSchema)]
pub struct Notification {
    /// Null once the user is deleted.
    pub actor: Option<User>,
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
    pub recipient: Option<User>,
    pub recipient_id: Uuid,
    pub status: ProcessingStatus,
    pub topic: Option<String>,
    #[schema(value_type = DateTime<Utc>)]
    pub updated_at: Timestamp,
}

impl Notification {
    /// `n` with what the caller looked up: its users, its run's data and its deliveries.
    pub fn new(
        n: &model::Notification,
        actor: Option<User>,
        recipient: Option<User>,
        data: Value,
        deliveries: Vec<DeliveryView>,
    ) -> Self {
        Notification {
            actor,
            actor_id: n.actor_id,
            batched_into: n.batched_into,
            created_at: n.created_at,
            data,
            deliveries,
            flow_id: n.flow_id,
            flow_run_id: n.flow_run_id,
            id: n.id,
            processed_at: n.processed_at,
            recipient,
            recipient_id: n.recipient_id,
            status: match n.stopped {
                Some(model::StopReason::Throttled) => ProcessingStatus::Throttled,
                Some(model::StopReason::Batched) => ProcessingStatus::Batched,
                None => ProcessingStatus::of(n.processed),
            },
            topic: n.topic.clone(),
            updated_at: n.updated_at,
        }
    }
}
