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
