//! Domain records: what Herald stores, one file per aggregate (projects,
//! users, channels, flows, topics, runs, deliveries) and the step condition
//! language.
//!
//! Records are serialised with serde for the stores (MessagePack on sled,
//! see `store::sled::codec`; JSON documents on PostgreSQL). What the APIs,
//! the live feed and the events show of them are the wire views of
//! `crate::views`, built from records, so a record can change without
//! changing the API; only small value enums shared by both (`ChannelType`,
//! `DeliveryStatus`, …) describe themselves to the OpenAPI document here.

use chrono::{DateTime, TimeZone, Utc};
use serde::{Deserialize, Serialize};

use utoipa::ToSchema;
use uuid::Uuid;

mod channel;
pub mod conditions;
mod content;
mod delivery;
mod flow;
pub mod presence;
mod project;
mod run;
mod suppression;
mod topic;
mod user;

pub use channel::*;
pub use content::*;
pub use delivery::*;
pub use flow::*;
pub use project::*;
pub use run::*;
pub use suppression::*;
pub use topic::*;
pub use user::*;

/// A UTC instant with millisecond precision, rendered `2026-11-21T10:00:00.123Z`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub DateTime<Utc>);

impl Timestamp {
    pub fn now() -> Self {
        Self::from_millis(Utc::now().timestamp_millis())
    }
    pub fn from_millis(ms: i64) -> Self {
        Timestamp(Utc.timestamp_millis_opt(ms).single().unwrap_or_default())
    }
    pub fn millis(&self) -> i64 {
        self.0.timestamp_millis()
    }
    /// The creation instant encoded in a UUIDv7.
    pub fn of_id(id: &Uuid) -> Self {
        let b = id.as_bytes();
        let ms = u64::from_be_bytes([0, 0, b[0], b[1], b[2], b[3], b[4], b[5]]);
        Self::from_millis(ms as i64)
    }
    pub fn plus_millis(&self, ms: i64) -> Self {
        Self::from_millis(self.millis().saturating_add(ms))
    }
    pub fn to_rfc3339(&self) -> String {
        // `to_rfc3339_opts` writes the fields directly; `format` would parse a
        // format string on every call, which showed in delivery profiles.
        self.0.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    }
}

/// JSON (human-readable formats) gets RFC 3339 text; the store's MessagePack gets
/// the milliseconds as an integer, which is smaller and far cheaper to write and
/// read. Either form is accepted when reading.
impl Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            s.serialize_str(&self.to_rfc3339())
        } else {
            s.serialize_i64(self.millis())
        }
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Timestamp;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an RFC 3339 timestamp or milliseconds since the epoch")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Timestamp, E> {
                DateTime::parse_from_rfc3339(s)
                    .map(|t| Timestamp(t.with_timezone(&Utc)))
                    .map_err(E::custom)
            }
            fn visit_i64<E: serde::de::Error>(self, ms: i64) -> Result<Timestamp, E> {
                Ok(Timestamp::from_millis(ms))
            }
            fn visit_u64<E: serde::de::Error>(self, ms: u64) -> Result<Timestamp, E> {
                Ok(Timestamp::from_millis(ms.min(i64::MAX as u64) as i64))
            }
        }
        if d.is_human_readable() {
            d.deserialize_str(V)
        } else {
            d.deserialize_any(V)
        }
    }
}

/// A new time-ordered id, plus the instant it encodes (so `created_at` and id order agree).
pub fn new_id() -> (Uuid, Timestamp) {
    let id = Uuid::now_v7();
    (id, Timestamp::of_id(&id))
}

/// The last byte of every notification id. A delivery's id is its notification's
/// with that byte replaced by the step index (below `MAX_STEPS`, so never 0xFF):
/// the notification of a delivery is found without an index, and the
/// deliveries sort just before their notification. Notification ids are handed
/// out by `delivery::accept::NotificationIds`.
pub const NOTIFICATION_TAG: u8 = 0xFF;

/// The notification a delivery (or notification) id belongs to.
pub fn notification_of(id: &Uuid) -> Uuid {
    let mut b = *id.as_bytes();
    b[15] = NOTIFICATION_TAG;
    Uuid::from_bytes(b)
}

/// The id of the delivery of step `step` of notification `nid`: the notification's
/// id with its last byte replaced by the step index. A notification's deliveries
/// are then one contiguous key range in step order, found without an index, and
/// still ordered by creation time among all deliveries.
pub fn delivery_id(nid: &Uuid, step: usize) -> Uuid {
    let mut b = *nid.as_bytes();
    b[15] = step.min(255) as u8;
    Uuid::from_bytes(b)
}

/// The id of hop `hop` of route step `step` of notification `nid`: its
/// last byte is `step + MAX_STEPS * hop` (at most 249 with
/// `MAX_ROUTE_CHANNELS` hops, so never the notification tag). Hop 0 has the
/// step's own id; later hops sort after every step's first delivery, in hop
/// order within their step.
pub fn hop_delivery_id(nid: &Uuid, step: usize, hop: usize) -> Uuid {
    delivery_id(nid, step + MAX_STEPS * hop)
}

/// The step and hop of a delivery id (`hop_delivery_id`; hop 0 for a
/// delivery of any other step).
pub fn step_and_hop(id: &Uuid) -> (usize, usize) {
    let b = id.as_bytes()[15] as usize;
    (b % MAX_STEPS, b / MAX_STEPS)
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ChannelType {
    Chat,
    Email,
    InApp,
    MobilePush,
    Sms,
    WebPush,
}

impl ChannelType {
    pub const ALL: [ChannelType; 6] = [
        ChannelType::Chat,
        ChannelType::Email,
        ChannelType::InApp,
        ChannelType::MobilePush,
        ChannelType::Sms,
        ChannelType::WebPush,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            ChannelType::Chat => "chat",
            ChannelType::Email => "email",
            ChannelType::InApp => "in_app",
            ChannelType::MobilePush => "mobile_push",
            ChannelType::Sms => "sms",
            ChannelType::WebPush => "web_push",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }
    pub fn index(self) -> u8 {
        self as u8
    }
    pub fn from_index(i: u8) -> Option<Self> {
        Self::ALL.get(i as usize).copied()
    }
}
