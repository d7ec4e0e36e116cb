//! Channels: a provider configured for one channel type of a project.

use super::{ChannelType, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;
use uuid::Uuid;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChannelStatus {
    Unconfigured,
    Active,
    Revoked,
}

impl ChannelStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ChannelStatus::Unconfigured => "unconfigured",
            ChannelStatus::Active => "active",
            ChannelStatus::Revoked => "revoked",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Channel {
    pub id: Uuid,
    #[serde(rename = "type")]
    pub channel_type: ChannelType,
    pub name: String,
    pub provider: String,
    /// The full config, secrets included. Never rendered as is: see `masked_config`.
    pub config: Map<String, Value>,
    pub revoked: bool,
    /// The in_app channel every project starts with: cannot be deleted or revoked.
    #[serde(default)]
    pub builtin: bool,
    /// Sandbox: no provider is called; its deliveries are rendered, stored
    /// and `sent` with `sandbox: true` (`delivery::sandbox`). Channels
    /// stored before it existed are not.
    #[serde(default)]
    pub sandbox: bool,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// A channel's circuit breaker as stored and shown (`crate::health`): its
/// state, since when, and the last failure that counted against it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ChannelHealth {
    pub state: HealthState,
    #[schema(value_type = DateTime<Utc>)]
    pub since: Timestamp,
    /// What the provider last said when it failed (absent before any failure).
    pub last_error: Option<String>,
}

/// `ok`: attempts go through; `degraded`: its circuit is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum HealthState {
    Ok,
    Degraded,
}

impl ChannelHealth {
    /// The health of a channel that never stored one: ok since it exists.
    pub fn ok_since(since: Timestamp) -> ChannelHealth {
        ChannelHealth {
            state: HealthState::Ok,
            since,
            last_error: None,
        }
    }
}

impl Channel {
    /// The in-app channel every project starts with (it cannot be deleted or revoked).
    pub fn builtin_in_app(id: Uuid, now: Timestamp) -> Channel {
        Channel {
            id,
            channel_type: ChannelType::InApp,
            name: "In-app feed".into(),
            provider: "in_app".into(),
            config: Default::default(),
            revoked: false,
            builtin: true,
            sandbox: false,
            created_at: now,
            updated_at: now,
        }
    }
}
