//! The domain values the storage interface takes and gives: run input and
//! results, queue items and attempt outcomes, list filters and pages, feed
//! changes and frames, idempotent responses, push subscriptions. None of them
//! carries a backend's layout; page boundaries are opaque sort keys each
//! backend makes and reads back itself.

use crate::model::{
    ChannelType, Delivery, DeliveryError, DeliveryStatus, FeedCounts, Flow, FlowRun, Notification,
    Timestamp, User, UserPatch,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;
use uuid::Uuid;

/// One explicit recipient of a run, identified inline.
#[derive(Debug, Clone)]
pub struct RunRecipient {
    pub external_id: String,
    pub patch: UserPatch,
}

#[derive(Debug, Clone)]
pub enum ActorSpec {
    Existing(String),
    Inline(String, UserPatch),
}

pub struct AcceptInput {
    pub flow: Flow,
    pub recipients: Vec<RunRecipient>,
    pub actor: Option<ActorSpec>,
    pub topic: Option<String>,
    pub data: Value,
    /// `(scope, payload hash)`: the 202 is stored for replay in the same commit.
    pub idempotency: Option<(Vec<u8>, Vec<u8>)>,
    /// Workflow options of the run: its schedule and cancellation key, and
    /// the project's test-clock time (filled in by the engine).
    pub timing: RunTiming,
    /// A channel's test send: the channel tested (`FlowRun::test_channel_id`).
    pub test_channel_id: Option<Uuid>,
}

/// When a run's steps start and how it is canceled (`FlowRun::send_at`,
/// `clock_at`, `cancellation_key`).
#[derive(Debug, Clone, Default)]
pub struct RunTiming {
    pub send_at: Option<Timestamp>,
    pub cancellation_key: Option<String>,
    /// The project's test-clock time at acceptance (`None`: real clock).
    pub clock_at: Option<Timestamp>,
    /// The project's default timezone (`Project::timezone`).
    pub timezone: Option<String>,
    /// The project's own storage quota (`Project::quota_bytes`; `None`:
    /// the server default), checked before the run is stored (`quota`).
    pub quota_bytes: Option<u64>,
}

/// A pending delivery as the delivery actors know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct QueueItem {
    pub project: Uuid,
    pub delivery_id: Uuid,
    pub channel_type: ChannelType,
    pub due_ms: i64,
}

pub struct AcceptedRun {
    pub run: FlowRun,
    /// The 202 body, as stored for idempotent replay.
    pub body: Vec<u8>,
    pub queued: Vec<QueueItem>,
    /// Live-feed frames of the in-app deliveries settled with the run, to push
    /// once the commit is durable.
    pub frames: UserFrames,
}

/// One notification as the delivery rules staged it (`delivery::accept`),
/// ready for a backend to store.
#[derive(Debug, Clone)]
pub struct StagedNotification {
    pub n: Notification,
    pub deliveries: Vec<Delivery>,
    /// In-app deliveries settled at once: their index in `deliveries` and
    /// their feed entry's JSON (made before any lock is taken). The backend
    /// writes each one's feed entry and `feed_entry.created` event.
    pub to_feed: Vec<(usize, String)>,
    /// Some delivery waits in the queue.
    pub pending: bool,
    /// The throttle counter this notification passed (and so counts in).
    pub throttle: Option<ThrottleWrite>,
    /// The batch this notification opens or joins (`delivery::batch`).
    pub batch: Option<BatchWrite>,
    /// The decisions that staged it (`crate::trace`), stored with it.
    pub trace: crate::trace::Accepted,
}

/// One throttle counter: a throttle step of a flow for one recipient and
/// rendered key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ThrottleKey {
    pub flow_id: Uuid,
    pub recipient: Uuid,
    pub step: u8,
    pub key: String,
}

/// A throttle counter as staging read it (`before`: the times, in project
/// milliseconds, of the runs it counts) and as it leaves it (`after`). A
/// backend writes `after` with the notification and, for a run with
/// explicit recipients, refuses the change (`RunCommit::Stale`) when the
/// counter it finds under the recipients' locks is not `before`.
#[derive(Debug, Clone)]
pub struct ThrottleWrite {
    pub key: ThrottleKey,
    pub before: Vec<i64>,
    pub after: Vec<i64>,
}

/// One batch slot: a batch step of a flow for one recipient and rendered
/// key (the same shape as a throttle counter's key).
pub type BatchKey = ThrottleKey;

/// Why a batch closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BatchCloseReason {
    /// Its window ended.
    Window,
    /// It reached the step's `max` activities.
    Max,
    /// The run that opened it was canceled.
    Canceled,
}

/// One activity of a batch: a run that reached the step while it was open
/// (the first is the opener's own).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchActivity {
    pub notification_id: Uuid,
    /// The run's `data`.
    pub data: Value,
    /// The run's actor as templates see it (`null` without one).
    pub actor: Value,
    /// When it reached the step (project milliseconds).
    pub at_ms: i64,
}

/// A delivery of the opener waiting for the batch to close: due at the
/// close plus `offset_ms` (the delays and send windows between the step and
/// it, as staged).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchWaiting {
    pub delivery_id: Uuid,
    pub channel_type: ChannelType,
    pub offset_ms: i64,
}

/// A batch (`delivery::batch`): opened by one run's notification (its id is
/// that notification's), joined by later runs until it closes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Batch {
    pub id: Uuid,
    pub key: BatchKey,
    /// Project milliseconds.
    pub opened_at_ms: i64,
    pub closes_at_ms: i64,
    pub window_ms: i64,
    /// A sliding window: each activity moves the close to its time plus the
    /// window, never later than `opened_at_ms + max_window_ms`.
    pub max_window_ms: Option<i64>,
    /// Closes as soon as it holds this many activities.
    pub max: Option<u32>,
    pub activities: Vec<BatchActivity>,
    pub waiting: Vec<BatchWaiting>,
    /// When (project milliseconds) and why it closed; `None` while open.
    pub closed: Option<(i64, BatchCloseReason)>,
}

impl Batch {
    /// Whether a run reaching the step at `at_ms` joins it.
    pub fn open_at(&self, at_ms: i64) -> bool {
        self.closed.is_none() && at_ms < self.closes_at_ms
    }
}

/// What a staged notification does to a batch, applied by the backend with
/// the notification (`delivery::batch::join` for a join, under the batch's
/// lock).
#[derive(Debug, Clone)]
pub enum BatchWrite {
    /// Opens `Batch` (no batch of its key is open at its `opened_at_ms`).
    Open(Batch),
    /// Joins the open batch `batch`, reaching the step at `activity.at_ms`.
    Join {
        key: BatchKey,
        batch: Uuid,
        activity: BatchActivity,
    },
}

/// A closing batch as the delivery rules rendered one of its opener's
/// deliveries (`BatchRepo::close_batch`).
#[derive(Debug, Clone)]
pub struct BatchClose {
    pub batch: Uuid,
    /// How many activities the render saw: the close is refused when the
    /// batch holds another number by then.
    pub count: usize,
    pub delivery_id: Uuid,
    /// The delivery's content rendered with the batch, or why it did not
    /// render (the caller fails the delivery).
    pub rendered: std::result::Result<crate::model::Rendered, String>,
    pub at_ms: i64,
    pub reason: BatchCloseReason,
}

/// A user a run creates, changes or only names (its actor), as the run was
/// staged for: the user as read (`before`, `None` when new) and as the run's
/// patches leave it (`after`). A backend writes `after` when it differs from
/// `before`, and refuses the whole change (`RunCommit::Stale`) when the user
/// it finds under its lock is not `before`.
#[derive(Debug, Clone)]
pub struct UserWrite {
    pub external_id: String,
    pub before: Option<User>,
    pub after: User,
}

/// A run with explicit recipients as decided by `delivery::accept`: one
/// atomic change with its users, notifications, queue items, in-app feed
/// entries and events, the run's record and its idempotent 202.
pub struct StagedRun {
    /// The run's record as stored (processed already when nothing is left).
    pub run: FlowRun,
    pub users: Vec<UserWrite>,
    pub notifications: Vec<StagedNotification>,
    pub queued: Vec<QueueItem>,
    /// The 202 body.
    pub body: Vec<u8>,
    /// `(scope, payload hash)`: the 202 is stored for replay in the same change.
    pub idempotency: Option<(Vec<u8>, Vec<u8>)>,
}

/// What `RunRepo::commit_run` did.
pub enum RunCommit {
    /// Stored, with the frames of the in-app deliveries settled with the run.
    Committed(AcceptedRun),
    /// Nothing stored: a user was not as staged (changed meanwhile). The
    /// run's record comes back, to be staged again.
    Stale(FlowRun),
}

impl RunCommit {
    /// A run stored: its record, its 202 body, its queued deliveries and
    /// the frames to push once durable.
    pub fn committed(
        run: FlowRun, body: Vec<u8>, queued: Vec<QueueItem>, frames: UserFrames,
    ) -> Self {
        RunCommit::Committed(AcceptedRun {
            run,
            body,
            queued,
            frames,
        })
    }
}

/// One chunk of a topic run's expansion as decided by `delivery::expand`:
/// its notifications and queue items and the run's record as of this chunk
/// (expansion cursor, count, `expanded`), stored as one atomic change.
pub struct StagedChunk {
    pub run: FlowRun,
    pub notifications: Vec<StagedNotification>,
    pub queued: Vec<QueueItem>,
}

/// A change a backend has prepared for a later commit (encoded, without
/// taking any lock), opaque to the engine: only the backend that made it
/// reads it back.
pub struct Prepared(Box<dyn std::any::Any + Send>);

impl Prepared {
    pub fn new<T: std::any::Any + Send>(value: T) -> Self {
        Prepared(Box::new(value))
    }

    /// The value as the backend made it; an internal error for another type.
    pub fn take<T: std::any::Any>(self) -> crate::error::Result<T> {
        self.0
            .downcast::<T>()
            .map(|b| *b)
            .map_err(|_| crate::error::Error::internal("a change prepared by another backend"))
    }
}

/// Deliveries as written, the `(project, run)` pairs that became processed,
/// and the queued deliveries the settle made due sooner (route hops and
/// the steps after a route, `delivery::route::released`), for the engine
/// to hand to their channel actors.
pub type Finished = (Vec<Delivery>, Vec<(Uuid, Uuid)>, Vec<QueueItem>);

/// Frames per `(project, user)`, each list in `seq` order.
pub type UserFrames = Vec<(Uuid, Uuid, Vec<Frame>)>;

/// What happened to one delivery attempt.
#[derive(Debug, Clone)]
pub enum Outcome {
    Sent {
        outcomes: Option<Value>,
    },
    Failed(DeliveryError),
    Skipped(DeliveryError),
    /// Stopped by a cancellation before it was attempted.
    Canceled(DeliveryError),
    Retry {
        error: DeliveryError,
        at: Timestamp,
        outcomes: Option<Value>,
    },
    /// Not attempted: waits until `at` (a batch whose close moved later,
    /// a channel whose circuit is open and that has no backup).
    Wait {
        at: Timestamp,
    },
    /// Not sent through its channel: the delivery moves to its backup `to`
    /// (the first of `Delivery::fallback_channel_ids`) and is due again at
    /// `at` (`delivery::failover`). Stored with the settle, so the move is
    /// durable before the backup is tried.
    Failover {
        /// Why the channel did not send it.
        error: DeliveryError,
        /// Whether its channel was called (false: an open circuit, a
        /// channel gone or revoked).
        attempted: bool,
        to: Uuid,
        /// `failed`, `retries_exhausted` or `unhealthy`.
        reason: &'static str,
        at: Timestamp,
    },
}

#[derive(Debug, Clone, Default)]
pub struct NotificationFilter {
    pub status: Option<bool>,
    pub topic: Option<String>,
    pub created_after: Option<Timestamp>,
    pub created_before: Option<Timestamp>,
    pub flow_id: Option<Uuid>,
    pub flow_run_id: Option<Uuid>,
    pub recipient: Option<Uuid>,
}

#[derive(Debug, Clone, Default)]
pub struct DeliveryFilter {
    pub status: Option<DeliveryStatus>,
    pub channel_type: Option<ChannelType>,
    pub channel_id: Option<Uuid>,
    pub notification_id: Option<Uuid>,
    pub recipient: Option<Uuid>,
    pub created_after: Option<Timestamp>,
    pub created_before: Option<Timestamp>,
}

/// One live-feed frame as sent and as logged: `(seq, JSON text, counts after it)`.
pub type Frame = (u64, Arc<str>, FeedCounts);

/// What one `deliver_in_app` batch did.
#[derive(Default)]
pub struct InAppBatch {
    /// The frames of each user whose feed changed, in `seq` order. They may be
    /// pushed to sockets once the commit is durable.
    pub frames: UserFrames,
    /// Runs that became processed.
    pub runs: Vec<(Uuid, Uuid)>,
    /// Deliveries settled (sent, or skipped for a deleted recipient).
    pub settled: usize,
    /// Deliveries left in the queue because they wait for their batch to be
    /// rendered (`Delivery::batch`, see `delivery::batch::due`).
    pub batched: Vec<QueueItem>,
    /// Deliveries left in the queue because their gate names the
    /// recipient's presence and the engine noted no facts for it
    /// (`AttemptNotes::note_gate`): each with its recipient, for the engine
    /// to read the facts and hand back.
    pub need_facts: Vec<(QueueItem, Uuid)>,
    /// Deliveries that wait longer (`delivery::route::at_due`): queued
    /// again, still held by this node.
    pub requeued: Vec<QueueItem>,
    /// Deliveries the batch made due sooner (`Finished`'s third part).
    pub pulled: Vec<QueueItem>,
}

/// How many of a user's feed entries (archived ones left out) of one flow
/// are unread and unseen: a fact `FeedRepo::feed_counts_by_flow` returns,
/// which `rules::feed::by_category` groups into the feed's tabs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowFeedCounts {
    pub flow_id: Uuid,
    pub unread: u64,
    pub unseen: u64,
}

/// What a change of many feed entries (`mark_feed`) sets on each it
/// selects: `seen_all`, `read_all`, `archive_all`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedMark {
    Seen,
    Read,
    Archived,
}

/// The entries a change of many selects: those a feed list of `status`
/// shows, of one of `flows` only when given (a flow filter, a category's
/// flows, or both: their intersection; empty selects nothing).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FeedScope {
    pub status: FeedFilter,
    pub flows: Option<Vec<Uuid>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FeedFilter {
    #[default]
    All,
    Unread,
    Unseen,
    Read,
    Archived,
}

/// What `RetentionRepo::erase` does.
#[derive(Debug, Clone, Copy)]
pub enum ErasureStep<'a> {
    /// Starts the erasure of the user of this external id.
    Start(&'a str),
    /// One step of a running erasure.
    Continue { id: &'a Uuid, max: usize },
}

/// One user's feed, as the feed's calls name it.
#[derive(Debug, Clone, Copy)]
pub struct FeedOf<'a> {
    pub project: &'a Uuid,
    pub user: &'a Uuid,
}

/// Logged live-feed frames (`FeedRepo::frames_between`): `None` when the
/// log no longer reaches back that far.
pub type LoggedFrames = Option<Vec<Vec<u8>>>;

/// One push subscription of a user, as its removal names it.
#[derive(Debug, Clone, Copy)]
pub struct PushKey<'a> {
    pub user: &'a Uuid,
    pub channel: &'a Uuid,
    pub identifier: &'a str,
}

/// Users as an upsert left them, each with whether it was created.
pub type Upserted = Vec<(crate::model::User, bool)>;

/// A chunk of a topic's subscribers (`TopicRepo::topic_subscribers_chunk`):
/// at most `n`, in subscription order, after the subscription `after`.
#[derive(Debug, Clone, Copy)]
pub struct SubscriberChunk<'a> {
    pub topic: &'a str,
    pub after: Option<&'a Uuid>,
    pub n: usize,
}

/// What committing a topic chunk gives back: its queued deliveries and the
/// frames of its in-app deliveries settled at once, to release once durable.
pub type CommittedChunk = (Vec<QueueItem>, UserFrames);

/// A project as a lookup names it.
#[derive(Debug, Clone, Copy)]
pub enum ProjectRef<'a> {
    Id(&'a Uuid),
    Name(&'a str),
    /// The project of a public API key.
    ApiKey(&'a str),
}

/// A flow as a lookup names it.
#[derive(Debug, Clone, Copy)]
pub enum FlowRef<'a> {
    Id(&'a Uuid),
    Handle(&'a str),
}

/// Whose subscriptions a list is of.
#[derive(Debug, Clone, Copy)]
pub enum SubscriptionsOf<'a> {
    Topic(&'a str),
    User(&'a Uuid),
}

/// A topic PATCH: `None` leaves a field as it is, `Some(None)` clears it.
#[derive(Debug, Clone, Default)]
pub struct TopicPatch {
    pub name: Option<Option<String>>,
    pub description: Option<Option<String>>,
}

/// A PATCH of one feed entry; `None` leaves a flag alone.
#[derive(Debug, Clone, Copy, Default)]
pub struct FeedUpdate {
    pub seen: Option<bool>,
    pub read: Option<bool>,
    pub clicked: Option<bool>,
    pub archived: Option<bool>,
    /// A press of the entry's action button of this index
    /// (`POST /user/v1/feed/{id}/interact`).
    pub interact: Option<u8>,
}

pub struct FeedUpdateOutcome {
    pub entry: Delivery,
    pub counts: FeedCounts,
    pub changed: bool,
}

/// A stored 2xx response, replayed for a repeated idempotency key.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IdempotentResponse {
    pub payload_hash: Vec<u8>,
    pub status: u16,
    pub body: Vec<u8>,
    pub created_at: Timestamp,
}

/// The model's push subscription: the providers read it without the storage layer.
pub use crate::model::PushSubscription;

#[derive(Debug, Clone, Default)]
pub struct PageReq {
    pub limit: usize,
    /// Sort key (bytes after the list prefix) of the boundary item.
    pub after: Option<Vec<u8>>,
    pub before: Option<Vec<u8>>,
}

#[derive(Debug, Clone)]
pub struct Page<T> {
    pub items: Vec<T>,
    /// Sort keys of the first and last item (or of the boundary on an empty page).
    pub first_key: Option<Vec<u8>>,
    pub last_key: Option<Vec<u8>>,
    pub has_more_after: bool,
    pub has_more_before: bool,
}

impl<T> Page<T> {
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U> {
        Page {
            items: self.items.into_iter().map(f).collect(),
            first_key: self.first_key,
            last_key: self.last_key,
            has_more_after: self.has_more_after,
            has_more_before: self.has_more_before,
        }
    }

    /// `map` with a conversion that may fail: the first error is the page's.
    pub fn try_map<U>(
        self, f: impl FnMut(T) -> crate::error::Result<U>,
    ) -> crate::error::Result<Page<U>> {
        Ok(Page {
            items: self
                .items
                .into_iter()
                .map(f)
                .collect::<crate::error::Result<_>>()?,
            first_key: self.first_key,
            last_key: self.last_key,
            has_more_after: self.has_more_after,
            has_more_before: self.has_more_before,
        })
    }
}

/// A change of a user's feed as applied: its result, the counts after it and
/// the frames of its events, to push once the change is durable (none when
/// nothing changed).
pub struct FeedChange<T> {
    pub value: T,
    pub counts: FeedCounts,
    pub frames: Vec<Frame>,
}

/// Whether a backend can write now.
#[derive(Debug, Clone, Default)]
pub struct HealthStatus {
    pub degraded: bool,
    /// Why it is degraded ("" when it is not).
    pub reason: String,
    /// Bumped each time the backend recovered from a failure: the engine
    /// reloads what it keeps in memory.
    pub generation: u64,
}

/// The keys of a newly created project; the secret is shown once and then only its
/// hash is kept.
pub struct NewProjectKeys {
    pub public_key: String,
    pub secret_key: String,
}

/// The cut-off instants of one purge pass over a project (see
/// `RetentionRepo::purge`): what was created (or written) before them goes.
#[derive(Debug, Clone, Copy)]
pub struct PurgeCutoffs {
    /// Settled notifications with their deliveries, and processed runs whose
    /// notifications are all gone.
    pub notifications: Timestamp,
    /// Feed entries and live-feed events.
    pub feed: Timestamp,
    /// The project's time (its test clock's, when it has one): throttle
    /// counters whose newest run is past their step's window then go.
    pub now: Timestamp,
    /// The project is on a test clock: `notifications` is in its project
    /// time, so a notification's age is its run's acceptance in project time
    /// (`FlowRun::clock_at`), not its id's real time.
    pub test_clock: bool,
}

impl PurgeCutoffs {
    /// The time no purgeable notification's or run's id reaches (an id
    /// carries the real time of its creation), so that a range scan of the
    /// ids below it finds every candidate. On a test clock, the real now:
    /// a run's age is then its project time at acceptance, which a run of
    /// any id may be old enough by. Otherwise `notifications`: a run
    /// accepted on a test clock the project has since left goes once its
    /// id is past the window too, whatever its project time said.
    pub fn id_bound(&self) -> Timestamp {
        if self.test_clock {
            Timestamp::now()
        } else {
            self.notifications
        }
    }
}

/// What one purge call removed, by kind; `more` when it stopped at its bound
/// with more to remove (the caller calls again, after yielding).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PurgeReport {
    pub notifications: u64,
    pub deliveries: u64,
    pub feed_entries: u64,
    pub events: u64,
    pub runs: u64,
    /// Throttle counters whose runs are all past the step's window.
    pub throttle_counters: u64,
    /// Closed batches whose opener's notification is settled.
    pub batches: u64,
    /// Keys and values removed, in bytes (an estimate of the space reclaimed:
    /// the store reuses it as it compacts).
    pub bytes: u64,
    /// What the records removed counted in their project's usage
    /// (`crate::quota`), which the backend has taken off its counter.
    pub usage_bytes: u64,
    pub more: bool,
}

impl PurgeReport {
    pub fn add(&mut self, o: &PurgeReport) {
        self.notifications += o.notifications;
        self.deliveries += o.deliveries;
        self.feed_entries += o.feed_entries;
        self.events += o.events;
        self.runs += o.runs;
        self.throttle_counters += o.throttle_counters;
        self.batches += o.batches;
        self.bytes += o.bytes;
        self.usage_bytes += o.usage_bytes;
        self.more |= o.more;
    }
}

/// Where an erasure stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErasureStatus {
    /// The user is deleted; their notifications are being removed.
    Running,
    /// Nothing of the user's notifications remains.
    Complete,
}

/// The erasure of a deleted user's notifications, deliveries, feed entries
/// and events: persisted with the user's deletion, then worked through in
/// bounded steps (`RetentionRepo::erase_step`) that resume after a restart.
/// It keeps the user's internal id, never the external id (personal data).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Erasure {
    pub id: Uuid,
    pub project: Uuid,
    pub user_id: Uuid,
    pub status: ErasureStatus,
    /// Notifications removed so far.
    pub notifications_removed: u64,
    pub created_at: Timestamp,
    pub completed_at: Option<Timestamp>,
}

/// A fact a storage call reports instead of doing what it was asked (no
/// such record, a unique key another record holds, a lease another node
/// took). A backend names the fact; what it means to a client (its API
/// error) is the engine's to say (`rules::refusals`), in one place for
/// every backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No record of this kind under this key.
    Missing { kind: &'static str, key: String },
    /// Another project has this name.
    ProjectNameTaken(String),
    /// Another project has this public key.
    PublicKeyTaken,
    /// Another flow of the project has this handle.
    FlowHandleTaken,
    /// The user is subscribed to the topic already.
    AlreadySubscribed,
    /// Another node holds the run's expansion now.
    LeaseLost { run: Uuid },
    /// A page cursor this backend did not make for this list.
    BadCursor,
    /// A feed-entry change that would take the entry back, or that names
    /// an action button it does not have (`rules::feed::update_entry`
    /// refused it).
    EntryRefused {
        entry: Uuid,
        refusal: crate::rules::feed::EntryRefusal,
    },
    /// A topic chunk's decisions (a batch opened or joined, a throttle's
    /// count) no longer hold as it commits: nothing was stored.
    StaleChunk,
    /// The same idempotency key committed first on another node.
    IdempotencyRace,
}

impl Refusal {
    /// No record of `kind` under `key`, as the error the call returns.
    pub fn missing(kind: &'static str, key: impl std::fmt::Display) -> crate::error::Error {
        Refusal::Missing {
            kind,
            key: key.to_string(),
        }
        .into()
    }

    /// This fact as the error the call returns.
    pub fn err(self) -> crate::error::Error {
        self.into()
    }
}
