//! Runs of a flow and the notifications they make (one per recipient).

use super::{Flow, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

/// At most this many explicit recipients per run.
pub const MAX_RECIPIENTS: usize = 1000;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FlowRun {
    pub id: Uuid,
    pub flow_id: Uuid,
    /// The flow as it was when the run was accepted (docs/API.md §9).
    pub flow: Flow,
    pub topic: Option<String>,
    pub data: Value,
    pub actor_id: Option<Uuid>,
    pub processed: bool,
    pub recipients_count: u64,
    pub notifications_count: u64,
    /// Explicit recipients of a run that also names a topic (deduplication).
    #[serde(default)]
    pub explicit_ids: Vec<Uuid>,
    /// Topic expansion: the last subscription id already expanded, and whether done.
    pub expand_cursor: Option<Uuid>,
    pub expanded: bool,
    pub created_at: Timestamp,
    pub processed_at: Option<Timestamp>,
    /// A scheduled run: the project-time instant its steps start from (its
    /// deliveries wait until then).
    #[serde(default)]
    pub send_at: Option<Timestamp>,
    /// The project time the run was accepted at when the project is on a
    /// test clock (its delays count from there); `None` on the real clock.
    #[serde(default)]
    pub clock_at: Option<Timestamp>,
    /// The key `POST /admin/v1/flows/{id}/cancel` stops the run's waiting
    /// deliveries by.
    #[serde(default)]
    pub cancellation_key: Option<String>,
    /// The project's default timezone when the run was accepted (send
    /// windows of recipients without one).
    #[serde(default)]
    pub timezone: Option<String>,
    /// A channel's test send (`POST /admin/v1/channels/{id}/test`): the
    /// channel tested. Its flow is a one-step flow made for the test, with
    /// the channel's id (`rules::channel_test`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_channel_id: Option<Uuid>,
}

impl FlowRun {
    /// The instant (project time) the run's steps start from: its `send_at`,
    /// else the test clock's time at acceptance, else its creation.
    pub fn starts_at(&self) -> Timestamp {
        self.send_at.or(self.clock_at).unwrap_or(self.created_at)
    }
}

// The record as stored: empty fields are left out (an absent `Option`
// reads as `None`); the wire form is `NotificationView`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Notification {
    pub id: Uuid,
    pub flow_id: Uuid,
    pub flow_run_id: Uuid,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    pub processed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor_id: Option<Uuid>,
    pub recipient_id: Uuid,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processed_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// Why the run ended early for this recipient (its steps after that
    /// point have no deliveries).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<StopReason>,
    /// A run that joined another run's batch (`StopReason::Batched`): the
    /// notification that carries the batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batched_into: Option<Uuid>,
    /// A notification of a channel's test send (`FlowRun::test_channel_id`):
    /// the channel tested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_channel_id: Option<Uuid>,
}

/// Why a notification's run stopped at a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// A throttle step's limit was reached.
    Throttled,
    /// The run joined a batch another run opened (`Notification::batched_into`).
    Batched,
}
