//! `RecordRepo` on PostgreSQL. Most records are one JSON document in a
//! table of their own, keyed by project and id: those are read with one
//! statement on the table the key names; the others by the reader of the
//! file that knows their rows (`topics.rs`, `notifications.rs`, …).

use super::PgStore;
use crate::error::Result;
use crate::events::WebhookEndpoint;
use crate::model::{Channel, Flow, FlowRun, User};
use crate::storage::{
    Deletion, FlowRef, Page, PageReq, Record, RecordKey, RecordRepo, RecordsOf, SubscriptionsOf,
};
use serde::de::DeserializeOwned;
use uuid::Uuid;

impl PgStore {
    /// The document of `table` with this id, as a `Record`.
    fn doc_record<T: DeserializeOwned + Into<Record>>(
        &self, table: &str, project: &Uuid, id: &Uuid,
    ) -> Result<Option<Record>> {
        Ok(self.doc_by_id::<T>(table, project, id)?.map(Into::into))
    }
}

/// A page of typed rows as a page of `Record`s.
fn paged<T: Into<Record>>(rows: Result<Page<T>>) -> Result<Page<Record>> {
    Ok(rows?.map(Into::into))
}

impl RecordRepo for PgStore {
    fn record(&self, project: &Uuid, key: RecordKey<'_>) -> Result<Option<Record>> {
        let p = project;
        match key {
            RecordKey::User(id) => self.doc_record::<User>("users", p, id),
            RecordKey::Channel(id) => self.doc_record::<Channel>("channels", p, id),
            RecordKey::Run(id) => self.doc_record::<FlowRun>("flow_runs", p, id),
            RecordKey::EventEndpoint(id) => {
                self.doc_record::<WebhookEndpoint>("event_endpoints", p, id)
            }
            RecordKey::Flow(FlowRef::Id(id)) => self.doc_record::<Flow>("flows", p, id),
            RecordKey::Flow(by) => Ok(self.find_flow(p, by)?.map(Record::Flow)),
            RecordKey::UserByExt(ext) => Ok(self.user_by_ext(p, ext)?.map(Record::User)),
            RecordKey::Topic(key) => Ok(self.topic(p, key)?.map(Record::Topic)),
            RecordKey::Notification(id) => Ok(self.notification(p, id)?.map(Record::Notification)),
            RecordKey::Delivery(id) => Ok(self.delivery(p, id)?.map(Record::Delivery)),
            RecordKey::Deliveries(n) => Ok(Some(Record::Deliveries(
                self.notification_deliveries(p, n)?,
            ))),
            RecordKey::Batch(id) => Ok(self.batch(p, id)?.map(Record::Batch)),
            RecordKey::LatestBatch(k) => Ok(self.latest_batch(p, k)?.map(Record::Batch)),
            RecordKey::Erasure(id) => Ok(self.erasure(p, id)?.map(Record::Erasure)),
            RecordKey::FeedCounts(u) => Ok(Some(Record::FeedCounts(self.feed_counts(p, u)?))),
            RecordKey::ThrottleHits(k) => Ok(Some(Record::ThrottleHits(self.throttle_hits(p, k)?))),
            RecordKey::ForAttempt(id) => Ok(self
                .delivery_for_attempt(p, id)?
                .map(|r| Record::ForAttempt(Box::new(r)))),
        }
    }

    fn records(&self, project: &Uuid, of: RecordsOf<'_>, req: &PageReq) -> Result<Page<Record>> {
        let p = project;
        match of {
            RecordsOf::Channels => paged(self.page_docs::<Channel>("channels", p, req)),
            RecordsOf::Flows => paged(self.page_docs::<Flow>("flows", p, req)),
            RecordsOf::Users => paged(self.list_users(p, req)),
            RecordsOf::Topics => paged(self.list_topics(p, req)),
            RecordsOf::Notifications(f) => paged(self.list_notifications(p, f, req)),
            RecordsOf::Deliveries(f) => paged(self.list_deliveries(p, f, req)),
            RecordsOf::Subscriptions(SubscriptionsOf::Topic(key)) => {
                paged(self.subscriptions_page("topic", p, Err(key.to_string()), req))
            }
            RecordsOf::Subscriptions(SubscriptionsOf::User(user)) => {
                paged(self.subscriptions_page("user_id", p, Ok(*user), req))
            }
            RecordsOf::EventEndpoints => paged(self.list_event_endpoints(p, req)),
            RecordsOf::EventAttempts(id) => paged(self.list_event_attempts(p, id, req)),
        }
    }

    fn remove(&self, project: &Uuid, what: Deletion<'_>) -> Result<()> {
        match what {
            Deletion::Channel(id) => self.delete_channel(project, id),
            Deletion::Topic(key) => self.delete_topic(project, key),
            Deletion::EventEndpoint(id) => self.delete_event_endpoint(project, id),
        }
    }
}
