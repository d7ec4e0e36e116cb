//! The sled store as a `storage::Storage`: each repository call is the store's
//! own method of that name (the store keeps its locks, caches and batches
//! behind them).

use super::Store;
use crate::error::Result;
use crate::model::{
    Channel, ChannelType, Delivery, FeedCounts, Flow, FlowRun, Notification, Preferences, Project,
    Subscription, Topic, User, UserPatch,
};
use crate::storage::*;
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

impl ProjectRepo for Store {
    fn project(&self, id: &Uuid) -> Result<Option<Project>> {
        Store::project(self, id)
    }
    fn project_by_name(&self, name: &str) -> Result<Option<Project>> {
        Store::project_by_name(self, name)
    }
    fn projects(&self) -> Result<Vec<Project>> {
        Store::projects(self)
    }
    fn create_project(&self, name: &str, keys: Option<(String, String)>) -> Result<NewProjectKeys> {
        Store::create_project(self, name, keys)
    }
    fn project_cached(&self, public_key: &str) -> Option<Arc<Project>> {
        Store::project_cached(self, public_key)
    }
    fn project_by_api_key(&self, public_key: &str) -> Result<Option<Arc<Project>>> {
        Store::project_by_api_key(self, public_key)
    }
    fn update_project(&self, id: &Uuid, f: Edit<'_, Project>) -> Result<Project> {
        Store::update_project(self, id, f)
    }
    fn rotate_secret(&self, name: &str, grace: Duration) -> Result<(Project, String)> {
        Store::rotate_secret(self, name, grace)
    }
    fn delete_project(&self, name: &str) -> Result<Project> {
        Store::delete_project(self, name)
    }
}

impl UserRepo for Store {
    fn user(&self, project: &Uuid, id: &Uuid) -> Result<Option<User>> {
        Store::user(self, project, id)
    }
    fn user_by_ext(&self, project: &Uuid, ext: &str) -> Result<Option<User>> {
        Store::user_by_ext(self, project, ext)
    }
    fn user_cached(&self, project: &Uuid, ext: &str) -> Option<Arc<User>> {
        Store::user_cached(self, project, ext)
    }
    fn user_by_ext_cached(&self, project: &Uuid, ext: &str) -> Result<Option<Arc<User>>> {
        Store::user_by_ext_cached(self, project, ext)
    }
    fn user_required(&self, project: &Uuid, ext: &str) -> Result<User> {
        Store::user_required(self, project, ext)
    }
    fn upsert_user(&self, project: &Uuid, ext: &str, patch: &UserPatch) -> Result<(User, bool)> {
        Store::upsert_user(self, project, ext, patch)
    }
    fn list_users(&self, project: &Uuid, req: &PageReq) -> Result<Page<User>> {
        Store::list_users(self, project, req)
    }
    fn delete_user(&self, project: &Uuid, ext: &str) -> Result<()> {
        Store::delete_user(self, project, ext)
    }
    fn preferences(&self, project: &Uuid, user: &Uuid) -> Result<Preferences> {
        Store::preferences(self, project, user)
    }
    fn update_preferences(
        &self,
        project: &Uuid,
        user: &User,
        patch: &Preferences,
    ) -> Result<Preferences> {
        Store::update_preferences(self, project, user, patch)
    }
}

impl ChannelRepo for Store {
    fn channel(&self, project: &Uuid, id: &Uuid) -> Result<Option<Channel>> {
        Store::channel(self, project, id)
    }
    fn list_channels(&self, project: &Uuid, req: &PageReq) -> Result<Page<Channel>> {
        Store::list_channels(self, project, req)
    }
    fn all_channels(&self, project: &Uuid) -> Result<Vec<Channel>> {
        Store::all_channels(self, project)
    }
    fn put_channel(&self, project: &Uuid, c: &Channel) -> Result<()> {
        Store::put_channel(self, project, c)
    }
    fn update_channel(&self, project: &Uuid, id: &Uuid, f: Change<'_, Channel>) -> Result<Channel> {
        Store::update_channel(self, project, id, f).map(|(c, ())| c)
    }
    fn delete_channel(&self, project: &Uuid, id: &Uuid) -> Result<()> {
        Store::delete_channel(self, project, id)
    }
}

impl FlowRepo for Store {
    fn flow(&self, project: &Uuid, id: &Uuid) -> Result<Option<Flow>> {
        Store::flow(self, project, id)
    }
    fn flow_by_handle(&self, project: &Uuid, handle: &str) -> Result<Option<Flow>> {
        Store::flow_by_handle(self, project, handle)
    }
    fn list_flows(&self, project: &Uuid, req: &PageReq) -> Result<Page<Flow>> {
        Store::list_flows(self, project, req)
    }
    fn live_flows(&self, project: &Uuid) -> Result<Vec<Flow>> {
        Store::live_flows(self, project)
    }
    fn create_flow(&self, project: &Uuid, f: &Flow) -> Result<()> {
        Store::create_flow(self, project, f)
    }
    fn update_flow(&self, project: &Uuid, id: &Uuid, f: Change<'_, Flow>) -> Result<Flow> {
        Store::update_flow(self, project, id, f).map(|(fl, ())| fl)
    }
    fn channel_in_active_flow(&self, project: &Uuid, channel: &Uuid) -> Result<bool> {
        Store::channel_in_active_flow(self, project, channel)
    }
}

impl TopicRepo for Store {
    fn topic(&self, project: &Uuid, key: &str) -> Result<Option<Topic>> {
        Store::topic(self, project, key)
    }
    fn put_topic(
        &self,
        project: &Uuid,
        key: &str,
        name: Option<Option<String>>,
        description: Option<Option<String>>,
    ) -> Result<(Topic, bool)> {
        Store::put_topic(self, project, key, name, description)
    }
    fn list_topics(&self, project: &Uuid, req: &PageReq) -> Result<Page<Topic>> {
        Store::list_topics(self, project, req)
    }
    fn delete_topic(&self, project: &Uuid, key: &str) -> Result<()> {
        Store::delete_topic(self, project, key)
    }
    fn subscription(&self, project: &Uuid, id: &Uuid) -> Result<Option<Subscription>> {
        Store::subscription(self, project, id)
    }
    fn subscribe(&self, project: &Uuid, key: &str, user: &User) -> Result<Subscription> {
        Store::subscribe(self, project, key, user)
    }
    fn unsubscribe(&self, project: &Uuid, key: &str, user: &User) -> Result<()> {
        Store::unsubscribe(self, project, key, user)
    }
    fn topic_subscriptions(
        &self,
        project: &Uuid,
        key: &str,
        req: &PageReq,
    ) -> Result<Page<Subscription>> {
        Store::topic_subscriptions(self, project, key, req)
    }
    fn user_subscriptions(
        &self,
        project: &Uuid,
        user: &Uuid,
        req: &PageReq,
    ) -> Result<Page<Subscription>> {
        Store::user_subscriptions(self, project, user, req)
    }
}

impl RunRepo for Store {
    fn accept_run(&self, project: &Uuid, input: AcceptInput) -> Result<AcceptedRun> {
        Store::accept_run(self, project, input)
    }
    fn flow_run(&self, project: &Uuid, id: &Uuid) -> Result<Option<FlowRun>> {
        Store::flow_run(self, project, id)
    }
    fn active_runs(&self) -> Result<Vec<(Uuid, Uuid)>> {
        Store::active_runs(self)
    }
    fn expand_topic(
        &self,
        project: &Uuid,
        run: &Uuid,
        n: usize,
        out: &mut (dyn FnMut(Vec<QueueItem>, UserFrames) -> bool + Send),
    ) -> Result<()> {
        Store::expand_topic(self, project, run, n, out)
    }
}

impl NotificationRepo for Store {
    fn notification(&self, project: &Uuid, id: &Uuid) -> Result<Option<Notification>> {
        Store::notification(self, project, id)
    }
    fn delivery(&self, project: &Uuid, id: &Uuid) -> Result<Option<Delivery>> {
        Store::delivery(self, project, id)
    }
    fn notification_deliveries(&self, project: &Uuid, nid: &Uuid) -> Result<Vec<Delivery>> {
        Store::notification_deliveries(self, project, nid)
    }
    fn list_notifications(
        &self,
        project: &Uuid,
        f: &NotificationFilter,
        req: &PageReq,
    ) -> Result<Page<Notification>> {
        Store::list_notifications(self, project, f, req)
    }
    fn list_deliveries(
        &self,
        project: &Uuid,
        f: &DeliveryFilter,
        req: &PageReq,
    ) -> Result<Page<Delivery>> {
        Store::list_deliveries(self, project, f, req)
    }
}

impl QueueRepo for Store {
    fn queue_items(&self, ct: ChannelType) -> Result<Vec<QueueItem>> {
        Store::queue_items(self, ct)
    }
    fn settle(&self, items: &[(QueueItem, Outcome)]) -> Result<Finished> {
        self.finish_deliveries(items, super::Writes::new())
    }
    fn deliver_in_app(&self, items: &[QueueItem]) -> Result<InAppBatch> {
        Store::deliver_in_app(self, items)
    }
}

impl FeedRepo for Store {
    fn feed_counts(&self, project: &Uuid, user: &Uuid) -> Result<FeedCounts> {
        Store::feed_counts(self, project, user)
    }
    fn feed_page(
        &self,
        project: &Uuid,
        user: &Uuid,
        filter: FeedFilter,
        req: &PageReq,
    ) -> Result<Page<Delivery>> {
        Store::feed_page(self, project, user, filter, req)
    }
    fn feed_entry(&self, project: &Uuid, user: &Uuid, id: &Uuid) -> Result<Delivery> {
        Store::feed_entry(self, project, user, id)
    }
    fn feed_page_cached(&self, project: &Uuid, user: &Uuid, limit: usize) -> Option<Arc<[u8]>> {
        Store::feed_page_cached(self, project, user, limit)
    }
    fn feed_page_fill(
        &self,
        project: &Uuid,
        user: &Uuid,
        limit: usize,
        build: &mut dyn FnMut(&dyn Storage) -> Result<Vec<u8>>,
    ) -> Result<Arc<[u8]>> {
        Store::feed_page_fill(self, project, user, limit, |s| build(s))
    }
    fn events_between(
        &self,
        project: &Uuid,
        user: &Uuid,
        after: u64,
        upto: u64,
    ) -> Result<Option<Vec<Vec<u8>>>> {
        Store::events_between(self, project, user, after, upto)
    }
    fn update_feed_entry(
        &self,
        project: &Uuid,
        user: &Uuid,
        id: &Uuid,
        u: FeedUpdate,
    ) -> Result<FeedChange<Delivery>> {
        Store::update_feed_entry(self, project, user, id, u)
    }
    fn mark_feed(&self, project: &Uuid, user: &Uuid, read: bool) -> Result<FeedChange<usize>> {
        Store::mark_feed(self, project, user, read)
    }
}

impl PushRepo for Store {
    fn push_subscriptions(
        &self,
        project: &Uuid,
        user: &Uuid,
        channel: &Uuid,
    ) -> Result<Vec<PushSubscription>> {
        Store::push_subscriptions(self, project, user, channel)
    }
    fn add_push_subscription(
        &self,
        project: &Uuid,
        user: &Uuid,
        channel: &Uuid,
        identifier: &str,
        keys: Option<serde_json::Value>,
        platform: Option<String>,
    ) -> Result<(PushSubscription, bool)> {
        Store::add_push_subscription(self, project, user, channel, identifier, keys, platform)
    }
    fn remove_push_subscription(
        &self,
        project: &Uuid,
        user: &Uuid,
        channel: &Uuid,
        identifier: &str,
    ) -> Result<bool> {
        Store::remove_push_subscription(self, project, user, channel, identifier)
    }
}

impl IdempotencyRepo for Store {
    fn idempotent_response(
        &self,
        project: &Uuid,
        scope: &[u8],
    ) -> Result<Option<IdempotentResponse>> {
        Store::idempotent_response(self, project, scope)
    }
    fn put_idempotent_response(
        &self,
        project: &Uuid,
        scope: &[u8],
        r: &IdempotentResponse,
    ) -> Result<()> {
        Store::put_idempotent_response(self, project, scope, r)
    }
    fn sweep_idempotency(&self, max: usize) -> Result<usize> {
        Store::sweep_idempotency(self, max)
    }
}

impl Durability for Store {
    fn durable_ticket(&self) -> u64 {
        Store::durable_ticket(self)
    }
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
}

impl Storage for Store {
    fn cursor_key(&self) -> &[u8; 32] {
        Store::cursor_key(self)
    }
    fn template_limits(&self) -> crate::render::Limits {
        Store::template_limits(self)
    }
}
