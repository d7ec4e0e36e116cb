//! `RecordRepo` on sled: each key or list names the tree (or the reader of
//! `catalog.rs`, `users.rs`, … that knows its layout) that holds it.

use super::Store;
use crate::error::Result;
use crate::storage::{
    Deletion, FlowRef, Page, PageReq, Record, RecordKey, RecordRepo, RecordsOf, SubscriptionsOf,
};
use std::sync::Arc;
use uuid::Uuid;

/// A page of typed records as a page of `Record`s.
fn records<T: Into<Record>>(page: Page<T>) -> Page<Record> {
    page.map(Into::into)
}

impl RecordRepo for Store {
    fn record(&self, project: &Uuid, key: RecordKey<'_>) -> Result<Option<Record>> {
        let found: Option<Record> = match key {
            RecordKey::User(id) => self.user(project, id)?.map(Into::into),
            RecordKey::UserByExt(ext) => self
                .user_by_ext_cached(project, ext)?
                .map(|u| Arc::unwrap_or_clone(u).into()),
            RecordKey::Channel(id) => self.channel(project, id)?.map(Into::into),
            RecordKey::Flow(FlowRef::Id(id)) => self.flow(project, id)?.map(Into::into),
            RecordKey::Flow(FlowRef::Handle(h)) => self.flow_by_handle(project, h)?.map(Into::into),
            RecordKey::Topic(key) => self.topic(project, key)?.map(Into::into),
            RecordKey::Run(id) => self.flow_run(project, id)?.map(Into::into),
            RecordKey::Notification(id) => self.notification(project, id)?.map(Into::into),
            RecordKey::Delivery(id) => self.delivery(project, id)?.map(Into::into),
            RecordKey::Deliveries(nid) => Some(self.notification_deliveries(project, nid)?.into()),
            RecordKey::Batch(id) => self.batch(project, id)?.map(Into::into),
            RecordKey::LatestBatch(k) => self.latest_batch(project, k)?.map(Into::into),
            RecordKey::Erasure(id) => self.erasure(project, id)?.map(Into::into),
            RecordKey::EventEndpoint(id) => self.event_endpoint(project, id)?.map(Into::into),
            RecordKey::FeedCounts(user) => Some(self.feed_counts(project, user)?.into()),
            RecordKey::ThrottleHits(k) => Some(self.throttle_hits(project, k)?.into()),
            RecordKey::ForAttempt(id) => match self.delivery(project, id)? {
                // One read each: all three are local.
                Some(d) => {
                    let channel = self.channel(project, &d.channel_id)?;
                    let user = self.user(project, &d.recipient_id)?;
                    Some(Record::ForAttempt(Box::new((d, channel, user))))
                }
                None => None,
            },
        };
        Ok(found)
    }

    fn records(&self, project: &Uuid, of: RecordsOf<'_>, req: &PageReq) -> Result<Page<Record>> {
        Ok(match of {
            RecordsOf::Users => records(self.list_users(project, req)?),
            RecordsOf::Channels => records(self.list_channels(project, req)?),
            RecordsOf::Flows => records(self.list_flows(project, req)?),
            RecordsOf::Topics => records(self.list_topics(project, req)?),
            RecordsOf::Notifications(f) => records(self.list_notifications(project, f, req)?),
            RecordsOf::Deliveries(f) => records(self.list_deliveries(project, f, req)?),
            RecordsOf::Subscriptions(SubscriptionsOf::Topic(key)) => {
                records(self.topic_subscriptions(project, key, req)?)
            }
            RecordsOf::Subscriptions(SubscriptionsOf::User(user)) => {
                records(self.user_subscriptions(project, user, req)?)
            }
            RecordsOf::EventEndpoints => records(self.list_event_endpoints(project, req)?),
            RecordsOf::EventAttempts(id) => records(self.list_event_attempts(project, id, req)?),
        })
    }

    fn remove(&self, project: &Uuid, what: Deletion<'_>) -> Result<()> {
        match what {
            Deletion::Channel(id) => self.delete_channel(project, id),
            Deletion::Topic(key) => self.delete_topic(project, key),
            Deletion::EventEndpoint(id) => self.delete_event_endpoint(project, id),
        }
    }
}
