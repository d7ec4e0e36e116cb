//! A project's suppression of one address (`crate::suppression`): an email
//! or a phone number the project no longer sends to, and why.

use super::{ChannelType, Timestamp};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// Why an address is suppressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SuppressionReason {
    /// Added through the API.
    Manual,
    /// The provider reported a hard bounce (the address does not exist).
    HardBounce,
    /// Soft bounces repeated (`suppression::rules::soft_bounces_suppress`).
    SoftBounce,
    /// The recipient marked a message as spam.
    Complaint,
}

impl SuppressionReason {
    pub fn as_str(self) -> &'static str {
        match self {
            SuppressionReason::Manual => "manual",
            SuppressionReason::HardBounce => "hard_bounce",
            SuppressionReason::SoftBounce => "soft_bounce",
            SuppressionReason::Complaint => "complaint",
        }
    }
}

/// One suppressed address of a project, keyed by `(channel_type, address)`
/// (the address normalised, `suppression::normalize`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suppression {
    /// A UUIDv7: the list's order (newest first) and its page boundaries.
    pub id: Uuid,
    pub channel_type: ChannelType,
    pub address: String,
    pub reason: SuppressionReason,
    pub created_at: Timestamp,
}
