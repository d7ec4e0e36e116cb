//! The storage interface: what the engine asks of a backend, one narrow trait
//! per aggregate (projects, users, channels, flows, topics, runs, notifications,
//! the delivery queue, feeds, push subscriptions, throttle counters, batches,
//! idempotency, suppressions, presence, the audit log, console members) plus durability,
//! gathered in `Storage`, which the engine holds as `Arc<dyn Storage>`.
//!
//! Arguments and results are domain values (`model::*`, ids, filters, pages;
//! see `types`). Each call that changes something is atomic on its own: a
//! backend applies it as one batch (sled) or one transaction (SQL), and a
//! read-modify-write call (a user upsert, a subscription, settling attempts)
//! does its own locking. A change is applied when the call returns and durable
//! once `Durability::wait_durable` returns for a ticket taken after it.
//!
//! Calls block: async callers run them on the blocking pool, never on an
//! executor thread. Page boundaries (`PageReq::after`, `Page::first_key`) are
//! opaque sort keys that a backend makes and reads back itself.

mod audit;
mod console;
mod keys;
mod presence;
mod suppressions;
mod types;

pub use audit::*;
pub use console::*;
pub use keys::*;
pub use presence::*;
pub use suppressions::*;
pub use types::*;

use crate::error::Result;
use crate::events::{AttemptNext, EventAttempt, OutboxEvent, WebhookEndpoint};
use crate::model::ChannelHealth;
use crate::model::Timestamp;
use crate::model::{
    Channel, ChannelType, ContentKind, ContentRecord, Delivery, Flow, Preferences, Project,
    Subscription, Topic, User, UserPatch, UserRef,
};
use crate::trace::{AttemptNotes, TraceEntry};
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;
use uuid::Uuid;

/// A change of a record made under its lock.
pub type Edit<'a, T> = Box<dyn FnOnce(&mut T) + Send + 'a>;

/// A change of a record made under its lock that may refuse (and then leaves
/// the record as it was).
pub type Change<'a, T> = Box<dyn FnOnce(&mut T) -> Result<()> + Send + 'a>;

/// A project, its credentials and its settings.
pub trait ProjectRepo {
    /// The project of an id, a name or an API key (`None`: there is none).
    fn find_project(&self, by: ProjectRef<'_>) -> Result<Option<Project>>;
    fn projects(&self) -> Result<Vec<Project>>;
    /// Creates a project with new keys (or the given `(public, secret)`);
    /// 422 `unique` when the name is taken.
    fn create_project(&self, name: &str, keys: Option<(String, String)>) -> Result<NewProjectKeys>;
    /// Changes a project under its lock; 404 when it does not exist.
    fn update_project(&self, id: &Uuid, f: Edit<'_, Project>) -> Result<Project>;
    /// Deletes the named project and everything it owns.
    fn delete_project(&self, name: &str) -> Result<Project>;
}

/// Users and their preferences.
pub trait UserRepo: RecordRepo {
    /// The users of these external ids as subscriptions name them, in order
    /// (`None` for an unknown one), without reading their records.
    fn user_refs_by_ext(&self, project: &Uuid, exts: &[String]) -> Result<Vec<Option<UserRef>>>;
    /// Creates or patches many users in one atomic change, in order (a later
    /// item of the same external id sees the earlier one, as
    /// `rules::users::upsert_all` decides); each user and whether it was
    /// created, in the items' order.
    fn upsert_users(&self, project: &Uuid, items: &[(&str, &UserPatch)]) -> Result<Upserted>;
    /// Deletes users with their subscriptions (the topics' counts follow),
    /// preferences and devices, in one atomic change; per external id
    /// whether it was a user (one user: `dyn Storage::delete_user`).
    fn delete_users(&self, project: &Uuid, exts: &[String]) -> Result<Vec<bool>>;
    fn preferences(&self, project: &Uuid, user: &Uuid) -> Result<Preferences>;
    /// The users of `ids` that exist, each with their preferences, in the
    /// order of `ids` (a topic chunk's recipients, read for staging). A
    /// backend behind a network reads them in one round trip; by default,
    /// one `user` and one `preferences` each.
    fn users_with_preferences(
        &self, project: &Uuid, ids: &[Uuid],
    ) -> Result<Vec<(User, Preferences)>> {
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(u) = typed::<User>(self.record(project, RecordKey::User(id))?)? {
                let prefs = self.preferences(project, id)?;
                out.push((u, prefs));
            }
        }
        Ok(out)
    }
    /// Merges `patch` into the user's preferences.
    fn update_preferences(
        &self, project: &Uuid, user: &User, patch: &Preferences,
    ) -> Result<Preferences>;
}

/// Channels (a provider and its configuration, secrets sealed at rest).
pub trait ChannelRepo {
    fn put_channel(&self, project: &Uuid, c: &Channel) -> Result<()>;
    /// Changes a channel under its lock; 404 when it does not exist.
    fn update_channel(&self, project: &Uuid, id: &Uuid, f: Change<'_, Channel>) -> Result<Channel>;
    /// The health its circuit breaker last stored (`None`: never stored),
    /// shared by the nodes of a cluster (`crate::health`).
    fn channel_health(&self, project: &Uuid, id: &Uuid) -> Result<Option<ChannelHealth>>;
    /// Stores a transition of a channel's circuit breaker and its event
    /// (`channel.degraded`, `channel.recovered`, data `event_data`) in one
    /// change.
    fn set_channel_health(
        &self, project: &Uuid, id: &Uuid, h: &ChannelHealth, event: crate::events::EventType,
        event_data: &serde_json::Value,
    ) -> Result<()>;
}

/// Flows and their handles.
pub trait FlowRepo {
    /// Every flow that is not archived.
    fn live_flows(&self, project: &Uuid) -> Result<Vec<Flow>>;
    /// Stores a new flow; 422 `unique` when its handle is taken.
    fn create_flow(&self, project: &Uuid, f: &Flow) -> Result<()>;
    /// Changes a flow under its lock; 404 when it does not exist.
    fn update_flow(&self, project: &Uuid, id: &Uuid, f: Change<'_, Flow>) -> Result<Flow>;
}

/// Topics and their subscriptions.
pub trait TopicRepo {
    /// Creates or patches a topic; true when it was created.
    fn put_topic(&self, project: &Uuid, key: &str, patch: TopicPatch) -> Result<(Topic, bool)>;
    /// Subscribes every user not subscribed yet (the others are left as they
    /// are) in one atomic change; the topic and the new subscriptions.
    fn subscribe_many(
        &self, project: &Uuid, key: &str, users: &[UserRef],
    ) -> Result<(Topic, Vec<Subscription>)>;
    fn unsubscribe(&self, project: &Uuid, key: &str, user: &User) -> Result<()>;
    /// Whether the user is subscribed to the topic.
    fn subscribed(&self, project: &Uuid, user: &Uuid, key: &str) -> Result<bool>;
    /// A chunk of the topic's subscribers: `(subscription id, user id)`.
    fn topic_subscribers_chunk(
        &self, project: &Uuid, chunk: SubscriberChunk<'_>,
    ) -> Result<Vec<(Uuid, Uuid)>>;
}

/// Flow runs: storing what `delivery::accept` and `delivery::expand` decided,
/// finding what is unfinished.
pub trait RunRepo {
    /// Stores a staged run with its users, notifications, deliveries, feed
    /// entries, events, queue items and idempotent 202, as one atomic change,
    /// under the locks of its users: `Stale` (nothing stored) when one of them
    /// is not as the run was staged for.
    fn commit_run(&self, project: &Uuid, run: StagedRun) -> Result<RunCommit>;
    /// Prepares one chunk of a topic run's expansion for `commit_chunk`
    /// without taking any lock (sled encodes its records here), so that a
    /// chunk is prepared on the thread that staged it while the previous one
    /// commits. By default the chunk as staged, for a backend that prepares
    /// nothing ahead.
    fn prepare_chunk(&self, _project: &Uuid, chunk: StagedChunk) -> Result<Prepared> {
        Ok(Prepared::new(chunk))
    }
    /// Stores a prepared chunk with the run's record, as one atomic change
    /// (the run's pending count is added to under its lock); the chunk's
    /// queued deliveries and the frames of its in-app deliveries settled at
    /// once, to release once durable.
    fn commit_chunk(&self, project: &Uuid, chunk: Prepared) -> Result<CommittedChunk>;
    /// `(project, run)` of every run not yet processed.
    fn active_runs(&self) -> Result<Vec<(Uuid, Uuid)>>;
}

/// A project's records read, listed and removed by key (`keys`): one
/// method per kind of access rather than one per record kind; the typed
/// accessors over them are `rules::lookups`.
pub trait RecordRepo {
    /// The record `key` names (`None`: there is none).
    fn record(&self, project: &Uuid, key: RecordKey<'_>) -> Result<Option<Record>>;
    /// One page of a list, in its order.
    fn records(&self, project: &Uuid, of: RecordsOf<'_>, req: &PageReq) -> Result<Page<Record>>;
    /// Removes a record with what hangs off it, as one atomic change.
    fn remove(&self, project: &Uuid, what: Deletion<'_>) -> Result<()>;
}

/// The delivery queue and the settling of attempts.
pub trait QueueRepo {
    /// Every pending delivery of a channel type (the recovery list).
    fn queue_items(&self, ct: ChannelType) -> Result<Vec<QueueItem>>;
    /// Records attempts' outcomes, and notifications and runs processed by
    /// them, as one atomic change. On a backend that shares its work
    /// (`WorkRepo::shares_work`) an attempt's outcome is recorded only while
    /// this node holds the delivery's lease (a cancellation always is); the
    /// deliveries written say which were. The `attempt` trace entry of
    /// each takes what the attempt saw from `notes` (the engine's).
    fn settle(&self, items: &[(QueueItem, Outcome)], notes: &AttemptNotes) -> Result<Finished>;
    /// Settles queued in-app deliveries into their users' feeds, with their
    /// events, as one atomic change (on a backend that shares its work, only
    /// those whose lease this node holds). A gate over the recipient's
    /// presence is decided with the facts the engine noted in `notes`
    /// (`AttemptNotes::note_gate`); one it noted none for is left queued and
    /// returned (`InAppBatch::need_facts`).
    fn deliver_in_app(&self, items: &[QueueItem], notes: &AttemptNotes) -> Result<InAppBatch>;
}

/// Work shared by several nodes on one database (`actors::cluster`): the
/// delivery queue, topic expansions and the event outbox are claimed with
/// leases, so each piece is worked on by one node at a time and a dead
/// node's leases are taken over once they expire. An optional capability
/// (`Storage::work`): a backend that does not share its work (sled: one
/// process owns the data) has none, and the engine never claims.
pub trait WorkRepo {
    /// This process's node id (random, taken when the store opens) and how
    /// long its claims hold unless renewed.
    fn node(&self) -> WorkNode;
    /// Claims up to `limit` queued deliveries of `ct` that are due by
    /// `now_ms` (a test-clock project's by its clock) and that no live lease
    /// holds, leasing them to this node.
    fn claim_queue(&self, ct: ChannelType, now_ms: i64, limit: usize) -> Result<Vec<QueueItem>>;
    /// Leases runs not expanded yet whose expansion no live lease holds (or
    /// that this node holds already) to this node: `(project, run)`, the
    /// ones it holds now (see `RunClaim`).
    fn claim_runs(&self, which: RunClaim<'_>, now_ms: i64) -> Result<Vec<(Uuid, Uuid)>>;
    /// Extends this node's leases of `what` to at least `now_ms` plus the
    /// lease.
    fn renew(&self, what: Leased, now_ms: i64) -> Result<()>;
    /// Gives up this node's leases of `what`, for any node to claim when due.
    fn release(&self, what: Release<'_>) -> Result<()>;
}

/// Who this node is in the work it shares (`WorkRepo::node`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkNode {
    /// Random, taken when the store opens.
    pub id: Uuid,
    /// How long a claim holds unless renewed.
    pub lease: Duration,
}

/// Which runs `WorkRepo::claim_runs` claims.
#[derive(Debug, Clone, Copy)]
pub enum RunClaim<'a> {
    /// Up to `limit` of them, others' first, this node's own after them (the
    /// engine starts an expansion for each one it is not running).
    Any { limit: usize },
    /// This one run, if it is free, expired or this node's already (none
    /// back too when it needs no expansion).
    One { project: &'a Uuid, run: &'a Uuid },
}

/// Which of this node's leases `WorkRepo::renew` extends: those the channel
/// actor of `ct` holds, or those the cluster task holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leased {
    /// Queued deliveries of one channel type.
    Queue(ChannelType),
    /// Runs being expanded and outbound events.
    RunsAndEvents,
}

/// Which of this node's leases `WorkRepo::release` gives up.
#[derive(Debug, Clone, Copy)]
pub enum Release<'a> {
    /// These queued deliveries of `ct`.
    Queued(ChannelType, &'a [QueueItem]),
    /// Every queued delivery of `ct` (a restarted channel actor).
    Queue(ChannelType),
    /// Every lease (at shutdown), so the other nodes need not wait for
    /// them to expire.
    All,
}

/// Users' in-app feeds, their counts and their event logs.
pub trait FeedRepo {
    /// A page of the entries of `scope` (its status, and its flow when given).
    fn feed_page(
        &self, project: &Uuid, user: &Uuid, scope: FeedScope, req: &PageReq,
    ) -> Result<Page<Delivery>>;
    fn feed_entry(&self, project: &Uuid, user: &Uuid, id: &Uuid) -> Result<Delivery>;
    /// The logged frames after `after` up to `upto` (`after < upto`: the
    /// empty span is `dyn Storage::events_between`'s); `None` when the log
    /// no longer reaches back that far.
    fn frames_between(&self, feed: FeedOf<'_>, after: u64, upto: u64) -> Result<LoggedFrames>;
    /// Changes one entry's flags with its event, as one atomic change.
    fn update_feed_entry(
        &self, project: &Uuid, user: &Uuid, id: &Uuid, u: FeedUpdate,
    ) -> Result<FeedChange<Delivery>>;
    /// Marks every entry of `scope` seen, read or archived (those
    /// `rules::feed::marks` selects) with their events, as one atomic
    /// change; the value is how many entries changed.
    fn mark_feed(
        &self, project: &Uuid, user: &Uuid, mark: FeedMark, scope: FeedScope,
    ) -> Result<FeedChange<usize>>;
    /// The unread and unseen entries of the user's feed (not archived), per
    /// flow, for the flows with any: read from the entries, not kept as
    /// counters, so it costs a pass over the user's unread or unseen entries.
    fn feed_counts_by_flow(&self, project: &Uuid, user: &Uuid) -> Result<Vec<FlowFeedCounts>>;
    /// The latest `seq` of each feed of `users` (`(project, user)`; 0 for a
    /// user without a feed), in the order given.
    fn feed_positions(&self, users: &[(Uuid, Uuid)]) -> Result<Vec<u64>>;
}

/// Web push subscriptions and device tokens of users on channels.
pub trait PushRepo {
    fn push_subscriptions(
        &self, project: &Uuid, user: &Uuid, channel: &Uuid,
    ) -> Result<Vec<PushSubscription>>;
    /// Registers `sub` (made by `rules::records::new_push_subscription`)
    /// unless the user has one of its channel and identifier: the one
    /// stored, and true when it is `sub`, new.
    fn add_push_subscription(
        &self, project: &Uuid, user: &Uuid, sub: PushSubscription,
    ) -> Result<(PushSubscription, bool)>;
    /// Removes a subscription; true when there was one.
    fn remove_push_subscription(&self, project: &Uuid, key: PushKey<'_>) -> Result<bool>;
}

/// Batches (`delivery::batch`), opened and joined with the notifications
/// that do so (`StagedNotification::batch`), closed as their opener's
/// deliveries come due.
pub trait BatchRepo {
    /// Under the batch's lock: when it still holds `c.count` activities and
    /// is closed or may close at `c.at_ms` (its window ended), marks it closed
    /// (with a `batch.closed` trace entry on its opener, once) and stores the
    /// rendered content in the opener's delivery `c.delivery_id` (which no
    /// longer waits for its batch). `Ok(false)`, nothing changed, otherwise.
    fn close_batch(&self, project: &Uuid, c: &BatchClose) -> Result<bool>;
    /// Marks the batch closed (`canceled`) if it is open, with its trace
    /// entry: later runs open a batch of their own.
    fn cancel_batch(&self, project: &Uuid, id: &Uuid, at_ms: i64) -> Result<()>;
}

/// A project's content (`model::ContentRecord`): partials, layouts and
/// translation catalogs, one record per `(project, kind, key)`. The
/// project's `content_version` is bumped by the engine after each change
/// (`actors::content`), not here: a backend stores what it is given.
pub trait ContentRepo {
    /// The record of `kind` and `key` (`None`: there is none).
    fn content(
        &self, project: &Uuid, kind: ContentKind, key: &str,
    ) -> Result<Option<ContentRecord>>;
    /// Every record of the project (of `kind` only, when given), by kind
    /// then key. Bounded by what the engine lets a project store
    /// (`rules::content`).
    fn contents(&self, project: &Uuid, kind: Option<ContentKind>) -> Result<Vec<ContentRecord>>;
    /// Stores `r` under its kind and key, replacing one there; true when
    /// there was none.
    fn put_content(&self, project: &Uuid, r: &ContentRecord) -> Result<bool>;
    /// Removes the record of `kind` and `key`; true when there was one.
    fn remove_content(&self, project: &Uuid, kind: ContentKind, key: &str) -> Result<bool>;
}

/// Stored responses of requests with an idempotency key.
pub trait IdempotencyRepo {
    fn idempotent_response(
        &self, project: &Uuid, scope: &[u8],
    ) -> Result<Option<IdempotentResponse>>;
    fn put_idempotent_response(
        &self, project: &Uuid, scope: &[u8], r: &IdempotentResponse,
    ) -> Result<()>;
}

/// Retention and erasure: removing what a project no longer keeps.
pub trait RetentionRepo {
    /// Removes, in bounded atomic steps, at most about `max` records of each
    /// kind from `project`: settled notifications created before
    /// `cut.notifications` with their deliveries and every index entry and
    /// feed entry of theirs; feed entries created and live-feed events
    /// written before `cut.feed` (a user's latest event stays: it holds the
    /// feed's counts); processed runs created before `cut.notifications`
    /// whose notifications are all gone. Nothing pending goes. Feed counts
    /// stay equal to what the feed lists.
    fn purge(&self, project: &Uuid, cut: &PurgeCutoffs, max: usize) -> Result<PurgeReport>;
    /// When the project's oldest notification was created.
    fn oldest_notification(&self, project: &Uuid) -> Result<Option<crate::model::Timestamp>>;
    /// `Start`: deletes the user as `UserRepo::delete_users` does and
    /// records, in the same durable change, an erasure of their
    /// notifications (`Running`); missing when there is no such user.
    /// `Continue`: one bounded atomic step of an erasure (at most about
    /// `max` notifications); `Complete` once nothing of the user's remains.
    /// Pending notifications wait until they settle.
    fn erase(&self, project: &Uuid, step: ErasureStep<'_>) -> Result<Erasure>;
    /// Every erasure still running, all projects (to resume after a restart).
    fn running_erasures(&self) -> Result<Vec<Erasure>>;
    /// Removes up to `max` records of `what` (see `Sweep`); how many it
    /// removed.
    fn sweep(&self, what: Sweep, max: usize) -> Result<usize>;
}

/// What `RetentionRepo::sweep` removes, all projects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sweep {
    /// Stored idempotent responses that expired.
    Idempotency,
    /// Logged events and attempts older than `before_ms`, and outbox entries
    /// of endpoints that are gone.
    EventLogs { before_ms: i64 },
}

/// Each project's usage counter (`crate::quota`): an estimate of the bytes
/// of its live records, raised as content is stored and lowered, by the
/// backend itself, as retention and erasures remove it.
pub trait UsageRepo {
    /// The project's counter (0 when it has counted nothing yet).
    fn usage_bytes(&self, project: &Uuid) -> Result<u64>;
    /// Adds `delta` to the project's counter (a negative one takes away;
    /// the counter stops at 0).
    fn add_usage(&self, project: &Uuid, delta: i64) -> Result<()>;
}

/// Event endpoints, the event outbox and the attempt log (`crate::events`).
/// The outbox entries themselves are written by the calls whose changes they
/// describe, in the same atomic change.
pub trait EventRepo {
    /// Writes an endpoint (see `EndpointWrite`); the endpoint as stored.
    fn put_event_endpoint(&self, project: &Uuid, w: EndpointWrite<'_>) -> Result<WebhookEndpoint>;
    /// The secrets that sign the endpoint's events now, the current one first.
    fn event_secrets(&self, project: &Uuid, id: &Uuid) -> Result<Vec<String>>;
    /// Due outbox entries of enabled endpoints other than `skip`, oldest
    /// first, at most one per endpoint and resource (the first still
    /// waiting), at most `limit`. A backend that shares its work leases
    /// them to this node (an entry leased to a live node is not due).
    fn due_events(&self, now_ms: i64, limit: usize, skip: &[Uuid]) -> Result<Vec<OutboxEvent>>;
    /// Records attempts and what follows each, as one atomic change (on a
    /// backend that shares its work, what follows only for entries this node
    /// still holds; the attempts are logged in any case).
    fn record_event_attempts(
        &self, done: &[(OutboxEvent, EventAttempt, AttemptNext)],
    ) -> Result<()>;
    /// Queues again, for one endpoint, the logged events since `since`; how many.
    fn replay_events(&self, project: &Uuid, id: &Uuid, since: Timestamp) -> Result<usize>;
    /// The decision trace of a notification, in order (`crate::trace`).
    fn notification_trace(&self, project: &Uuid, id: &Uuid) -> Result<Vec<TraceEntry>>;
}

/// Delivery feedback (`crate::feedback`): the provider message index that
/// settling writes (a delivery settled as sent with a provider message id
/// leaves `feedback::sent_message`'s entry in the same atomic change, and
/// the entry goes with its delivery under retention, erasure and project
/// deletion), and the change a provider's report makes.
pub trait FeedbackRepo {
    /// The project of a channel id, whichever it is (`None`: no such
    /// channel); a provider's callback names only the channel.
    fn channel_project(&self, channel: &Uuid) -> Result<Option<Uuid>>;
    /// The delivery of `project` that the provider message id (normalised,
    /// `feedback::normalize_message_id`) of `channel` names, and the
    /// address it went to (`None`: no such message in that project).
    fn sent_message(
        &self, project: &Uuid, channel: &Uuid, message_id: &str,
    ) -> Result<Option<SentMessage>>;
    /// Under the delivery's lock, `f` (the engine's rule) changes the
    /// delivery and returns the trace entry of the change, or `None` when
    /// it changed nothing (then nothing is written). A change is written
    /// with the delivery's status event and that trace entry as one atomic
    /// change. The delivery as it is after, and whether it changed (`None`:
    /// the delivery is gone).
    fn apply_report(
        &self, project: &Uuid, delivery: &Uuid, f: ReportEdit<'_>,
    ) -> Result<Option<(Delivery, bool)>>;
}

/// The engine's rule as `FeedbackRepo::apply_report` runs it.
pub type ReportEdit<'a> = Box<dyn FnOnce(&mut Delivery) -> Option<TraceEntry> + Send + 'a>;

/// An entry of the provider message index (`FeedbackRepo::sent_message`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentMessage {
    pub delivery_id: Uuid,
    /// The address the message went to (an email, a phone number).
    pub address: String,
}

/// What `EventRepo::put_event_endpoint` writes.
pub enum EndpointWrite<'a> {
    /// A new endpoint whose signing secret is `secret` (new, made by the
    /// engine, which returns it this once).
    Create {
        ep: WebhookEndpoint,
        secret: &'a str,
    },
    /// A change of the endpoint under its lock; 404 when it does not exist.
    Change {
        id: &'a Uuid,
        f: Change<'a, WebhookEndpoint>,
    },
    /// `secret` (new, made by the engine) becomes the endpoint's signing
    /// secret; the previous one signs for `grace`, older ones are dropped;
    /// 404 when the endpoint does not exist.
    Secret {
        id: &'a Uuid,
        secret: &'a str,
        grace: Duration,
    },
}

/// A future a durability wait returns.
pub type DurableWait<'a> = Pin<Box<dyn Future<Output = Result<()>> + Send + 'a>>;

/// When changes are durable, and whether the backend can write.
pub trait Durability {
    /// A ticket (see `Ticket`): what it covers is durable once
    /// `wait_durable(ticket)` returns (group commit: one flush for many).
    fn ticket(&self, of: Ticket) -> u64;
    /// Waits, without blocking a thread, until `ticket` is durable.
    fn wait_durable(&self, ticket: u64) -> DurableWait<'_>;
    /// The backend's health as of now.
    fn health_status(&self) -> HealthStatus;
}

/// Which ticket `Durability::ticket` answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ticket {
    /// One covering every change applied before this call.
    Now,
    /// Marks the start of a storage job on this thread (see `JobEnd`); no
    /// ticket (0).
    JobStart,
    /// Called on the job's thread at its end: a ticket covering what the job
    /// committed and everything applied before (a backend whose commits are
    /// applied by its flusher answers the ticket of the flush that is about
    /// to cover them, without asking for a new flush).
    JobEnd,
}

/// Everything the engine needs of a backend.
pub trait Storage:
    ProjectRepo
    + UserRepo
    + ChannelRepo
    + FlowRepo
    + TopicRepo
    + RunRepo
    + RecordRepo
    + QueueRepo
    + FeedRepo
    + PushRepo
    + IdempotencyRepo
    + BatchRepo
    + RetentionRepo
    + UsageRepo
    + ContentRepo
    + EventRepo
    + SuppressionRepo
    + PresenceRepo
    + ConsoleRepo
    + FeedbackRepo
    + AuditRepo
    + Durability
    + Send
    + Sync
    + 'static
{
    /// The work this node shares with others on the same data, when the
    /// backend lets several processes work on it (then the engine claims
    /// its work through it); `None`: this process owns all the work.
    fn work(&self) -> Option<&dyn WorkRepo> {
        None
    }
    /// What the backend knows from memory, without a read (`None`: it does
    /// not know, or keeps nothing in memory: a backend whose records other
    /// processes change, PostgreSQL, never does). Answered on an executor
    /// thread, so the engine skips the hop to the blocking pool on a hit.
    fn memory(&self, _of: Memory<'_>) -> Option<Remembered> {
        None
    }
    /// `commit_chunk` in two steps: the chunk's writes now, in a
    /// transaction left open, and the run's record with the commit at
    /// `WrittenChunk::commit`. A backend behind a network writes the next
    /// chunks of an expansion while the one before commits
    /// (`expand_topic`); their commits stay in order. By default (an
    /// embedded store), everything happens at `commit`.
    fn write_chunk<'a>(
        &'a self, project: &Uuid, chunk: Prepared,
    ) -> Result<Box<dyn WrittenChunk + 'a>> {
        Ok(Box::new(CommitLater {
            store: self,
            project: *project,
            chunk,
        }))
    }
}

/// What an attempt reads (`RecordKey::ForAttempt`): the delivery,
/// its channel and its recipient (`None`: gone).
pub type AttemptReads = (Delivery, Option<Channel>, Option<User>);

/// A topic chunk written but not committed yet (`Storage::write_chunk`):
/// dropped, it rolls back.
pub trait WrittenChunk: Send {
    /// Adds the chunk to its run and commits (`RunRepo::commit_chunk`'s
    /// result).
    fn commit(self: Box<Self>) -> Result<CommittedChunk>;
}

/// `Storage::write_chunk` by default: the whole `commit_chunk` at commit.
struct CommitLater<'a, S: ?Sized> {
    store: &'a S,
    project: Uuid,
    chunk: Prepared,
}

impl<S: Storage + ?Sized> WrittenChunk for CommitLater<'_, S> {
    fn commit(self: Box<Self>) -> Result<CommittedChunk> {
        self.store.commit_chunk(&self.project, self.chunk)
    }
}
