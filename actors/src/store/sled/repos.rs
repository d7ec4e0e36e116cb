//! The sled store as a `storage::Storage`: each repository call is the store's
//! own method of that name (the store keeps its locks, caches and batches
//! behind them).

use super::Store;
use crate::error::Result;
use crate::events::{AttemptNext, EventAttempt, OutboxEvent, WebhookEndpoint};
use crate::model::Timestamp;
use crate::model::{
    Channel, ChannelType, Delivery, FeedCounts, Flow, FlowRun, Notification, Preferences, Project,
    Subscription, Topic, User, UserPatch, UserRef,
};
use crate::storage::*;
use crate::trace::{AttemptNote, TraceEntry};
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

/// `impl $trait for Store` where each listed method is the store's own method
/// of that name (the trait's signatures, one line each); `extra` holds the
/// methods that do more than call it.
macro_rules! forward {
    ($trait:ident { $(fn $name:ident(&self $(, $arg:ident: $ty:ty)*) $(-> $ret:ty)?;)* } $(extra { $($extra:tt)* })?) => {
        impl $trait for Store {
            $(fn $name(&self $(, $arg: $ty)*) $(-> $ret)? {
                Store::$name(self $(, $arg)*)
            })*
            $($($extra)*)?
        }
    };
}

forward! { ProjectRepo {
    fn projects(&self) -> Result<Vec<Project>>;
    fn create_project(&self, name: &str, keys: Option<(String, String)>) -> Result<NewProjectKeys>;
    fn project_by_api_key(&self, public_key: &str) -> Result<Option<Arc<Project>>>;
    fn update_project(&self, id: &Uuid, f: Edit<'_, Project>) -> Result<Project>;
    fn delete_project(&self, name: &str) -> Result<Project>;
} extra {
    fn find_project(&self, by: ProjectRef<'_>) -> Result<Option<Project>> {
        match by {
            ProjectRef::Id(id) => Store::project(self, id),
            ProjectRef::Name(name) => Store::project_by_name(self, name),
        }
    }
} }

forward! { UserRepo {
    fn user(&self, project: &Uuid, id: &Uuid) -> Result<Option<User>>;
    fn user_by_ext(&self, project: &Uuid, ext: &str) -> Result<Option<User>>;
    fn user_refs_by_ext(&self, project: &Uuid, exts: &[String]) -> Result<Vec<Option<UserRef>>>;
    fn list_users(&self, project: &Uuid, req: &PageReq) -> Result<Page<User>>;
    fn delete_user(&self, project: &Uuid, ext: &str) -> Result<()>;
    fn delete_users(&self, project: &Uuid, exts: &[String]) -> Result<Vec<bool>>;
    fn preferences(&self, project: &Uuid, user: &Uuid) -> Result<Preferences>;
    fn update_preferences(&self, project: &Uuid, user: &User, patch: &Preferences) -> Result<Preferences>;
} extra {
    fn upsert_users(&self, project: &Uuid, items: &[(&str, &UserPatch)]) -> Result<Vec<(User, bool)>> {
        self.upsert_many(project, items)
    }
} }

forward! { ChannelRepo {
    fn channel(&self, project: &Uuid, id: &Uuid) -> Result<Option<Channel>>;
    fn list_channels(&self, project: &Uuid, req: &PageReq) -> Result<Page<Channel>>;
    fn all_channels(&self, project: &Uuid) -> Result<Vec<Channel>>;
    fn put_channel(&self, project: &Uuid, c: &Channel) -> Result<()>;
    fn delete_channel(&self, project: &Uuid, id: &Uuid) -> Result<()>;
} extra {
    fn update_channel(&self, project: &Uuid, id: &Uuid, f: Change<'_, Channel>) -> Result<Channel> {
        Store::update_channel(self, project, id, f).map(|(c, ())| c)
    }
} }

forward! { FlowRepo {
    fn list_flows(&self, project: &Uuid, req: &PageReq) -> Result<Page<Flow>>;
    fn live_flows(&self, project: &Uuid) -> Result<Vec<Flow>>;
    fn create_flow(&self, project: &Uuid, f: &Flow) -> Result<()>;
    fn channel_in_active_flow(&self, project: &Uuid, channel: &Uuid) -> Result<bool>;
} extra {
    fn update_flow(&self, project: &Uuid, id: &Uuid, f: Change<'_, Flow>) -> Result<Flow> {
        Store::update_flow(self, project, id, f).map(|(fl, ())| fl)
    }
    fn find_flow(&self, project: &Uuid, by: FlowRef<'_>) -> Result<Option<Flow>> {
        match by {
            FlowRef::Id(id) => Store::flow(self, project, id),
            FlowRef::Handle(handle) => Store::flow_by_handle(self, project, handle),
        }
    }
} }

forward! { TopicRepo {
    fn topic(&self, project: &Uuid, key: &str) -> Result<Option<Topic>>;
    fn put_topic(&self, project: &Uuid, key: &str, patch: TopicPatch) -> Result<(Topic, bool)>;
    fn list_topics(&self, project: &Uuid, req: &PageReq) -> Result<Page<Topic>>;
    fn delete_topic(&self, project: &Uuid, key: &str) -> Result<()>;
    fn subscribe(&self, project: &Uuid, key: &str, user: &User) -> Result<Subscription>;
    fn subscribe_many(&self, project: &Uuid, key: &str, users: &[UserRef]) -> Result<(Topic, usize)>;
    fn unsubscribe(&self, project: &Uuid, key: &str, user: &User) -> Result<()>;
    fn subscribed(&self, project: &Uuid, user: &Uuid, key: &str) -> Result<bool>;
    fn topic_subscribers_chunk(&self, project: &Uuid, key: &str, cursor: Option<&Uuid>, n: usize) -> Result<Vec<(Uuid, Uuid)>>;
} extra {
    fn subscriptions(&self, project: &Uuid, of: SubscriptionsOf<'_>, req: &PageReq) -> Result<Page<Subscription>> {
        match of {
            SubscriptionsOf::Topic(key) => Store::topic_subscriptions(self, project, key, req),
            SubscriptionsOf::User(user) => Store::user_subscriptions(self, project, user, req),
        }
    }
} }

forward! { ThrottleRepo {
    fn throttle_hits(&self, project: &Uuid, key: &ThrottleKey) -> Result<Vec<i64>>;
} }

forward! { BatchRepo {
    fn batch(&self, project: &Uuid, id: &Uuid) -> Result<Option<Batch>>;
    fn latest_batch(&self, project: &Uuid, key: &BatchKey) -> Result<Option<Batch>>;
    fn close_batch(&self, project: &Uuid, c: &BatchClose) -> Result<bool>;
    fn cancel_batch(&self, project: &Uuid, id: &Uuid, at_ms: i64) -> Result<()>;
} }

forward! { RunRepo {
    fn commit_run(&self, project: &Uuid, run: StagedRun) -> Result<RunCommit>;
    fn prepare_chunk(&self, project: &Uuid, chunk: StagedChunk) -> Result<Prepared>;
    fn commit_chunk(&self, project: &Uuid, chunk: Prepared) -> Result<(Vec<QueueItem>, UserFrames)>;
    fn flow_run(&self, project: &Uuid, id: &Uuid) -> Result<Option<FlowRun>>;
    fn active_runs(&self) -> Result<Vec<(Uuid, Uuid)>>;
} }

forward! { NotificationRepo {
    fn notification(&self, project: &Uuid, id: &Uuid) -> Result<Option<Notification>>;
    fn delivery(&self, project: &Uuid, id: &Uuid) -> Result<Option<Delivery>>;
    fn notification_deliveries(&self, project: &Uuid, nid: &Uuid) -> Result<Vec<Delivery>>;
    fn list_notifications(&self, project: &Uuid, f: &NotificationFilter, req: &PageReq) -> Result<Page<Notification>>;
    fn list_deliveries(&self, project: &Uuid, f: &DeliveryFilter, req: &PageReq) -> Result<Page<Delivery>>;
} }

forward! { QueueRepo {
    fn queue_items(&self, ct: ChannelType) -> Result<Vec<QueueItem>>;
    fn deliver_in_app(&self, items: &[QueueItem]) -> Result<InAppBatch>;
} extra {
    fn settle(&self, items: &[(QueueItem, Outcome)]) -> Result<Finished> {
        self.finish_deliveries(items, super::Writes::new())
    }
} }

forward! { FeedRepo {
    fn feed_counts(&self, project: &Uuid, user: &Uuid) -> Result<FeedCounts>;
    fn feed_page(&self, project: &Uuid, user: &Uuid, filter: FeedFilter, req: &PageReq) -> Result<Page<Delivery>>;
    fn feed_entry(&self, project: &Uuid, user: &Uuid, id: &Uuid) -> Result<Delivery>;
    fn events_between(&self, project: &Uuid, user: &Uuid, after: u64, upto: u64) -> Result<Option<Vec<Vec<u8>>>>;
    fn update_feed_entry(&self, project: &Uuid, user: &Uuid, id: &Uuid, u: FeedUpdate) -> Result<FeedChange<Delivery>>;
    fn mark_feed(&self, project: &Uuid, user: &Uuid, read: bool) -> Result<FeedChange<usize>>;
} }

forward! { Caches {
    fn project_cached(&self, public_key: &str) -> Option<Arc<Project>>;
    fn user_cached(&self, project: &Uuid, ext: &str) -> Option<Arc<User>>;
    fn user_by_ext_cached(&self, project: &Uuid, ext: &str) -> Result<Option<Arc<User>>>;
    fn feed_page_cached(&self, project: &Uuid, user: &Uuid, limit: usize) -> Option<Arc<[u8]>>;
} extra {
    fn feed_page_fill(
        &self,
        project: &Uuid,
        user: &Uuid,
        limit: usize,
        build: &mut dyn FnMut(&dyn Storage) -> Result<Vec<u8>>,
    ) -> Result<Arc<[u8]>> {
        Store::feed_page_fill(self, project, user, limit, |s| build(s))
    }
} }

forward! { PushRepo {
    fn push_subscriptions(&self, project: &Uuid, user: &Uuid, channel: &Uuid) -> Result<Vec<PushSubscription>>;
    fn add_push_subscription(&self, project: &Uuid, user: &Uuid, sub: PushSubscription) -> Result<(PushSubscription, bool)>;
    fn remove_push_subscription(&self, project: &Uuid, user: &Uuid, channel: &Uuid, identifier: &str) -> Result<bool>;
} }

forward! { IdempotencyRepo {
    fn idempotent_response(&self, project: &Uuid, scope: &[u8]) -> Result<Option<IdempotentResponse>>;
    fn put_idempotent_response(&self, project: &Uuid, scope: &[u8], r: &IdempotentResponse) -> Result<()>;
    fn sweep_idempotency(&self, max: usize) -> Result<usize>;
} }

forward! { RetentionRepo {
    fn purge(&self, project: &Uuid, cut: &PurgeCutoffs, max: usize) -> Result<PurgeReport>;
    fn oldest_notification(&self, project: &Uuid) -> Result<Option<crate::model::Timestamp>>;
    fn start_erasure(&self, project: &Uuid, ext: &str) -> Result<Erasure>;
    fn erase_step(&self, project: &Uuid, id: &Uuid, max: usize) -> Result<Erasure>;
    fn erasure(&self, project: &Uuid, id: &Uuid) -> Result<Option<Erasure>>;
    fn running_erasures(&self) -> Result<Vec<Erasure>>;
} }

forward! { EventRepo {
    fn create_event_endpoint(&self, project: &Uuid, ep: WebhookEndpoint) -> Result<(WebhookEndpoint, String)>;
    fn event_endpoint(&self, project: &Uuid, id: &Uuid) -> Result<Option<WebhookEndpoint>>;
    fn list_event_endpoints(&self, project: &Uuid, req: &PageReq) -> Result<Page<WebhookEndpoint>>;
    fn update_event_endpoint(&self, project: &Uuid, id: &Uuid, f: Change<'_, WebhookEndpoint>) -> Result<WebhookEndpoint>;
    fn delete_event_endpoint(&self, project: &Uuid, id: &Uuid) -> Result<()>;
    fn replace_event_secret(&self, project: &Uuid, id: &Uuid, secret: &str, grace: Duration) -> Result<WebhookEndpoint>;
    fn event_secrets(&self, project: &Uuid, id: &Uuid) -> Result<Vec<String>>;
    fn due_events(&self, now_ms: i64, limit: usize, skip: &[Uuid]) -> Result<Vec<OutboxEvent>>;
    fn record_event_attempts(&self, done: &[(OutboxEvent, EventAttempt, AttemptNext)]) -> Result<()>;
    fn list_event_attempts(&self, project: &Uuid, id: &Uuid, req: &PageReq) -> Result<Page<EventAttempt>>;
    fn replay_events(&self, project: &Uuid, id: &Uuid, since: Timestamp) -> Result<usize>;
    fn sweep_event_logs(&self, before_ms: i64, max: usize) -> Result<usize>;
    fn notification_trace(&self, project: &Uuid, id: &Uuid) -> Result<Vec<TraceEntry>>;
    fn note_attempt(&self, delivery: &Uuid, note: AttemptNote);
} }

forward! { Durability {
    fn durable_ticket(&self) -> u64;
    fn begin_job(&self);
    fn job_ticket(&self) -> u64;
} extra {
    fn wait_durable(&self, ticket: u64) -> DurableWait<'_> {
        Box::pin(Store::wait_durable(self, ticket))
    }
    fn health_status(&self) -> HealthStatus {
        let h = self.health();
        HealthStatus {
            degraded: h.is_degraded(),
            reason: h.reason(),
            generation: h.generation(),
        }
    }
} }

forward! { Storage {
    fn cursor_key(&self) -> &[u8; 32];
    fn template_limits(&self) -> crate::render::Limits;
} extra {
    /// Projects, users and feeds' first pages, kept by the store's writes.
    fn caches(&self) -> Option<&dyn Caches> {
        Some(self)
    }
} }
