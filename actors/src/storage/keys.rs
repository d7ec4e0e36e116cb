//! How the engine names a project's records to `RecordRepo`: one key enum
//! for reads (`RecordKey`), one for lists (`RecordsOf`), one for removals
//! (`Deletion`), and `Record`, what comes back. A backend answers each with
//! its own layout (a sled tree and key, a SQL table); the typed accessors
//! the engine calls (`dyn Storage::channel`, `::list_users`, …) are written
//! once over these, in `rules::lookups`.

use super::types::{
    BatchKey, DeliveryFilter, FlowRef, NotificationFilter, SubscriptionsOf, ThrottleKey,
};
use super::{Batch, Erasure};
use crate::events::{EventAttempt, WebhookEndpoint};
use crate::model::{
    Channel, Delivery, FeedCounts, Flow, FlowRun, Notification, Subscription, Topic, User,
};
use uuid::Uuid;

/// A record of a project as a read names it.
#[derive(Debug, Clone, Copy)]
pub enum RecordKey<'a> {
    User(&'a Uuid),
    /// A user by external id.
    UserByExt(&'a str),
    Channel(&'a Uuid),
    Flow(FlowRef<'a>),
    Topic(&'a str),
    Run(&'a Uuid),
    Notification(&'a Uuid),
    Delivery(&'a Uuid),
    /// Every delivery of a notification, in the order they were staged
    /// (`Record::Deliveries`; empty when the notification is gone).
    Deliveries(&'a Uuid),
    /// The batch opened by a notification.
    Batch(&'a Uuid),
    /// The batch last opened for a key, closed or not.
    LatestBatch(&'a BatchKey),
    Erasure(&'a Uuid),
    EventEndpoint(&'a Uuid),
    /// A delivery with its channel and its recipient, as an attempt reads
    /// them (`Record::ForAttempt`). A backend behind a network reads the
    /// three in one statement.
    ForAttempt(&'a Uuid),
    /// A user's feed counts (`Record::FeedCounts`; zero when it has no feed).
    FeedCounts(&'a Uuid),
    /// The times (project milliseconds) a throttle counter holds
    /// (`Record::ThrottleHits`; empty when none).
    ThrottleHits(&'a ThrottleKey),
}

/// A list of a project's records, each in its own order.
#[derive(Debug, Clone, Copy)]
pub enum RecordsOf<'a> {
    Users,
    Channels,
    Flows,
    Topics,
    Notifications(&'a NotificationFilter),
    Deliveries(&'a DeliveryFilter),
    Subscriptions(SubscriptionsOf<'a>),
    EventEndpoints,
    /// The attempt log of one event endpoint.
    EventAttempts(&'a Uuid),
}

/// A record removed with what hangs off it.
#[derive(Debug, Clone, Copy)]
pub enum Deletion<'a> {
    /// A channel (`catalog::may_delete` decided it may go; absent: no-op).
    Channel(&'a Uuid),
    /// A topic with its subscriptions; `Refusal::Missing` when absent.
    Topic(&'a str),
    /// An event endpoint with its outbox and attempts; `Refusal::Missing`
    /// when absent.
    EventEndpoint(&'a Uuid),
}

/// A record as `RecordRepo` returns it: the variant its key or list names.
#[derive(Debug, Clone)]
pub enum Record {
    User(User),
    Channel(Channel),
    Flow(Flow),
    Topic(Topic),
    Run(FlowRun),
    Notification(Notification),
    Delivery(Delivery),
    Deliveries(Vec<Delivery>),
    Batch(Batch),
    Erasure(Erasure),
    EventEndpoint(WebhookEndpoint),
    Subscription(Subscription),
    EventAttempt(EventAttempt),
    ForAttempt(Box<super::AttemptReads>),
    FeedCounts(FeedCounts),
    ThrottleHits(Vec<i64>),
}

/// A record type that `Record` carries: the typed accessors take theirs out.
pub trait FromRecord: Sized {
    /// The record, when `r` is of this type.
    fn from_record(r: Record) -> Option<Self>;
}

macro_rules! from_record {
    ($($variant:ident => $ty:ty),* $(,)?) => {$(
        impl FromRecord for $ty {
            fn from_record(r: Record) -> Option<Self> {
                match r {
                    Record::$variant(v) => Some(v),
                    _ => None,
                }
            }
        }
        impl From<$ty> for Record {
            fn from(v: $ty) -> Self {
                Record::$variant(v)
            }
        }
    )*};
}

from_record! {
    User => User,
    Channel => Channel,
    Flow => Flow,
    Topic => Topic,
    Run => FlowRun,
    Notification => Notification,
    Delivery => Delivery,
    Deliveries => Vec<Delivery>,
    Batch => Batch,
    Erasure => Erasure,
    EventEndpoint => WebhookEndpoint,
    Subscription => Subscription,
    EventAttempt => EventAttempt,
    ForAttempt => Box<super::AttemptReads>,
    FeedCounts => FeedCounts,
    ThrottleHits => Vec<i64>,
}

/// The record of type `R` read by a `RecordRepo::record` call; a record of
/// another type is a backend's bug, reported as an internal error.
pub fn typed<R: FromRecord>(r: Option<Record>) -> crate::error::Result<Option<R>> {
    match r {
        None => Ok(None),
        Some(r) => R::from_record(r)
            .map(Some)
            .ok_or_else(|| crate::error::Error::internal("a record of another kind")),
    }
}

/// What a backend may know from memory, without a read (`Durability::memory`).
#[derive(Debug, Clone, Copy)]
pub enum Memory<'a> {
    /// The project of a public API key, as last read.
    Project(&'a str),
    /// A user by external id, as last read.
    User(&'a Uuid, &'a str),
    /// The change stamp of a user's feed: it differs from any stamp read
    /// before the feed, or a user of the project (an actor of its entries),
    /// last changed, so what was read after a stamp is current while the
    /// stamp is the same (the engine's cache of first feed pages).
    FeedStamp(&'a Uuid, &'a Uuid),
}

/// What a `Memory` question answers.
#[derive(Debug, Clone)]
pub enum Remembered {
    Project(std::sync::Arc<crate::model::Project>),
    User(std::sync::Arc<User>),
    Stamp(u64),
}
