//! New records whose fields are decided by the engine, not by a backend: a
//! topic created by its first write, an erasure's record, a push
//! subscription's.

use crate::model::{new_id, PushSubscription, Timestamp, Topic};
use crate::storage::{Erasure, ErasureStatus, TopicPatch};
use uuid::Uuid;

/// A topic created by its first write (`put_topic`, a subscription): no
/// name, no description, no subscribers.
pub fn new_topic(key: &str) -> Topic {
    let (id, now) = new_id();
    Topic {
        id,
        key: key.into(),
        name: None,
        description: None,
        subscribers_count: 0,
        created_at: now,
        updated_at: now,
    }
}

/// Applies a topic PATCH (`None`: the field is left as it is) to `t`; a
/// topic that existed before gets a new `updated_at`.
pub fn patch_topic(t: &mut Topic, patch: TopicPatch, created: bool) {
    if let Some(n) = patch.name {
        t.name = n;
    }
    if let Some(d) = patch.description {
        t.description = d;
    }
    if !created {
        t.updated_at = Timestamp::now();
    }
}

/// The record of a user's erasure as it starts (`Running`, nothing removed
/// yet); its id is a UUIDv7 taken now, so it dates itself.
pub fn new_erasure(project: &Uuid, user: &Uuid) -> Erasure {
    let id = Uuid::now_v7();
    Erasure {
        id,
        project: *project,
        user_id: *user,
        status: ErasureStatus::Running,
        notifications_removed: 0,
        created_at: Timestamp::of_id(&id),
        completed_at: None,
    }
}

/// A new push subscription (a web push endpoint or a device token) of a user
/// on `channel`.
pub fn new_push_subscription(
    channel: &Uuid, identifier: &str, keys: Option<serde_json::Value>, platform: Option<String>,
) -> PushSubscription {
    let (id, now) = new_id();
    PushSubscription {
        id,
        channel_id: *channel,
        identifier: identifier.into(),
        keys,
        platform,
        created_at: now,
    }
}
