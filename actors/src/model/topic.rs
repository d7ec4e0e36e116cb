//! Topics, their subscriptions, and users' push subscriptions (device tokens).

use super::Timestamp;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Topic {
    pub id: Uuid,
    pub key: String,
    pub name: Option<String>,
    pub description: Option<String>,
    pub subscribers_count: u64,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Subscription {
    pub id: Uuid,
    pub topic: String,
    pub user_id: Uuid,
    pub user_external_id: String,
    pub created_at: Timestamp,
}

/// A registered push subscription or device token of one user on one channel
/// (its JSON view is `storage::PushSubscription::view`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PushSubscription {
    pub id: Uuid,
    pub channel_id: Uuid,
    pub identifier: String,
    pub keys: Option<serde_json::Value>,
    pub platform: Option<String>,
    pub created_at: Timestamp,
}
