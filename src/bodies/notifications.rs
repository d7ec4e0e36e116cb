//! Bodies of the Admin API's read side of runs: a notification with its users
//! and deliveries, and a flow run. A notification is the engine's
//! `views::NotificationView` (the `notification.processed` event sends it
//! too), a delivery the engine's `model::DeliveryView` (the webhooks send it
//! too).

use herald_engine::model::{self, Timestamp};
pub use herald_engine::views::{NotificationView as Notification, ProcessingStatus};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

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
