//! The typed reads, lists and removals of a project's records, written once
//! over `RecordRepo`'s three doors (`record`, `records`, `remove`): the
//! engine calls `s.channel(..)` or `s.list_users(..)` on `dyn Storage`, and
//! no backend implements them.

use crate::error::{Error, Result};
use crate::events::{EventAttempt, WebhookEndpoint};
use crate::model::{
    Channel, Delivery, FeedCounts, Flow, FlowRun, Notification, Subscription, Topic, User,
};
use crate::storage::{
    typed, AttemptReads, Batch, BatchKey, Deletion, DeliveryFilter, Erasure, FlowRef, FromRecord,
    NotificationFilter, Page, PageReq, RecordKey, RecordsOf, Storage, SubscriptionsOf, ThrottleKey,
};
use uuid::Uuid;

/// How many records a page of `all_channels` reads at a time.
const ALL_PAGE: usize = 500;

impl dyn Storage {
    fn get<R: FromRecord>(&self, project: &Uuid, key: RecordKey<'_>) -> Result<Option<R>> {
        typed(self.record(project, key)?)
    }

    fn page<R: FromRecord>(
        &self, project: &Uuid, of: RecordsOf<'_>, req: &PageReq,
    ) -> Result<Page<R>> {
        self.records(project, of, req)?.try_map(|r| {
            R::from_record(r).ok_or_else(|| Error::internal("a record of another kind"))
        })
    }

    pub fn user(&self, project: &Uuid, id: &Uuid) -> Result<Option<User>> {
        self.get(project, RecordKey::User(id))
    }

    pub fn user_by_ext(&self, project: &Uuid, ext: &str) -> Result<Option<User>> {
        self.get(project, RecordKey::UserByExt(ext))
    }

    pub fn channel(&self, project: &Uuid, id: &Uuid) -> Result<Option<Channel>> {
        self.get(project, RecordKey::Channel(id))
    }

    /// The flow of an id or a handle (`None`: there is none).
    pub fn find_flow(&self, project: &Uuid, by: FlowRef<'_>) -> Result<Option<Flow>> {
        self.get(project, RecordKey::Flow(by))
    }

    pub fn topic(&self, project: &Uuid, key: &str) -> Result<Option<Topic>> {
        self.get(project, RecordKey::Topic(key))
    }

    pub fn flow_run(&self, project: &Uuid, id: &Uuid) -> Result<Option<FlowRun>> {
        self.get(project, RecordKey::Run(id))
    }

    pub fn notification(&self, project: &Uuid, id: &Uuid) -> Result<Option<Notification>> {
        self.get(project, RecordKey::Notification(id))
    }

    pub fn delivery(&self, project: &Uuid, id: &Uuid) -> Result<Option<Delivery>> {
        self.get(project, RecordKey::Delivery(id))
    }

    /// Every delivery of a notification (none when it is gone).
    pub fn notification_deliveries(&self, project: &Uuid, nid: &Uuid) -> Result<Vec<Delivery>> {
        Ok(self
            .get(project, RecordKey::Deliveries(nid))?
            .unwrap_or_default())
    }

    /// The batch opened by notification `id`.
    pub fn batch(&self, project: &Uuid, id: &Uuid) -> Result<Option<Batch>> {
        self.get(project, RecordKey::Batch(id))
    }

    /// The batch last opened for `key`, closed or not.
    pub fn latest_batch(&self, project: &Uuid, key: &BatchKey) -> Result<Option<Batch>> {
        self.get(project, RecordKey::LatestBatch(key))
    }

    pub fn erasure(&self, project: &Uuid, id: &Uuid) -> Result<Option<Erasure>> {
        self.get(project, RecordKey::Erasure(id))
    }

    pub fn event_endpoint(&self, project: &Uuid, id: &Uuid) -> Result<Option<WebhookEndpoint>> {
        self.get(project, RecordKey::EventEndpoint(id))
    }

    /// A delivery with its channel and its recipient, as an attempt reads
    /// them (`None`: the delivery is gone).
    pub fn delivery_for_attempt(&self, project: &Uuid, id: &Uuid) -> Result<Option<AttemptReads>> {
        Ok(self
            .get::<Box<AttemptReads>>(project, RecordKey::ForAttempt(id))?
            .map(|b| *b))
    }

    /// A user's feed counts (zero when the user has no feed).
    pub fn feed_counts(&self, project: &Uuid, user: &Uuid) -> Result<FeedCounts> {
        Ok(self
            .get(project, RecordKey::FeedCounts(user))?
            .unwrap_or_default())
    }

    /// The times (project milliseconds) a throttle counter holds.
    pub fn throttle_hits(&self, project: &Uuid, key: &ThrottleKey) -> Result<Vec<i64>> {
        Ok(self
            .get(project, RecordKey::ThrottleHits(key))?
            .unwrap_or_default())
    }

    pub fn list_users(&self, project: &Uuid, req: &PageReq) -> Result<Page<User>> {
        self.page(project, RecordsOf::Users, req)
    }

    pub fn list_channels(&self, project: &Uuid, req: &PageReq) -> Result<Page<Channel>> {
        self.page(project, RecordsOf::Channels, req)
    }

    /// Every channel of the project, read a page at a time.
    pub fn all_channels(&self, project: &Uuid) -> Result<Vec<Channel>> {
        let mut out = vec![];
        let mut req = PageReq {
            limit: ALL_PAGE,
            ..Default::default()
        };
        loop {
            let page = self.list_channels(project, &req)?;
            out.extend(page.items);
            if !page.has_more_after || page.last_key.is_none() {
                return Ok(out);
            }
            req.after = page.last_key;
        }
    }

    pub fn list_flows(&self, project: &Uuid, req: &PageReq) -> Result<Page<Flow>> {
        self.page(project, RecordsOf::Flows, req)
    }

    pub fn list_topics(&self, project: &Uuid, req: &PageReq) -> Result<Page<Topic>> {
        self.page(project, RecordsOf::Topics, req)
    }

    pub fn list_notifications(
        &self, project: &Uuid, f: &NotificationFilter, req: &PageReq,
    ) -> Result<Page<Notification>> {
        self.page(project, RecordsOf::Notifications(f), req)
    }

    pub fn list_deliveries(
        &self, project: &Uuid, f: &DeliveryFilter, req: &PageReq,
    ) -> Result<Page<Delivery>> {
        self.page(project, RecordsOf::Deliveries(f), req)
    }

    /// One page of the subscriptions of a topic or of a user.
    pub fn subscriptions(
        &self, project: &Uuid, of: SubscriptionsOf<'_>, req: &PageReq,
    ) -> Result<Page<Subscription>> {
        self.page(project, RecordsOf::Subscriptions(of), req)
    }

    pub fn list_event_endpoints(
        &self, project: &Uuid, req: &PageReq,
    ) -> Result<Page<WebhookEndpoint>> {
        self.page(project, RecordsOf::EventEndpoints, req)
    }

    /// One page of an event endpoint's attempt log.
    pub fn list_event_attempts(
        &self, project: &Uuid, id: &Uuid, req: &PageReq,
    ) -> Result<Page<EventAttempt>> {
        self.page(project, RecordsOf::EventAttempts(id), req)
    }

    pub fn delete_channel(&self, project: &Uuid, id: &Uuid) -> Result<()> {
        self.remove(project, Deletion::Channel(id))
    }

    pub fn delete_topic(&self, project: &Uuid, key: &str) -> Result<()> {
        self.remove(project, Deletion::Topic(key))
    }

    /// Deletes an endpoint with its outbox and attempts; missing when absent.
    pub fn delete_event_endpoint(&self, project: &Uuid, id: &Uuid) -> Result<()> {
        self.remove(project, Deletion::EventEndpoint(id))
    }
}
