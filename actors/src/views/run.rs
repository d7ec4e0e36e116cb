//! A run's 202 answer (`FlowRunAccepted`, built by `FlowRun::accepted_view`).

use crate::model::{FlowRun, Timestamp};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

impl FlowRun {
    /// The 202 body of a run; the store keeps its bytes as the idempotent replay.
    pub fn accepted_view(&self) -> FlowRunAccepted {
        FlowRunAccepted {
            created_at: self.created_at,
            flow_id: self.flow_id,
            id: self.id,
            recipients_count: self.recipients_count,
            status: PendingStatus::Pending,
        }
    }
}

/// What a run is when it is accepted: always `pending`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PendingStatus {
    Pending,
}

/// The 202 answer to a run: stored durably, delivered asynchronously.
// Fields in name order: the bytes the `json!` form of the object wrote.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FlowRunAccepted {
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Timestamp,
    pub flow_id: Uuid,
    pub id: Uuid,
    pub recipients_count: u64,
    pub status: PendingStatus,
}

/// The 202 answer to a channel's test send: the run and the notification
/// it made (`GET /admin/v1/notifications/{notification_id}` follows it).
// Fields in name order, as the other answers.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChannelTestAccepted {
    pub channel_id: Uuid,
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Timestamp,
    pub flow_run_id: Uuid,
    pub notification_id: Uuid,
    pub status: PendingStatus,
}

impl ChannelTestAccepted {
    /// The answer for a test of `channel` accepted as `run`, whose
    /// notification is `notification`.
    pub fn new(channel: Uuid, run: &FlowRun, notification: Uuid) -> Self {
        ChannelTestAccepted {
            channel_id: channel,
            created_at: run.created_at,
            flow_run_id: run.id,
            notification_id: notification,
            status: PendingStatus::Pending,
        }
    }
}
