//! Runs, notifications, deliveries, the delivery queue and users' feeds on
//! PostgreSQL.
//!
//! Not implemented on this backend yet: storing a run (`commit_run`, topic
//! chunks), settling deliveries and the in-app feed. Those calls answer a
//! clear internal error instead of storing something half-way, so a run
//! started against PostgreSQL fails loudly. The reads that recovery makes at
//! start (`active_runs`, `queue_items`) and `flow_run` read their tables.

use super::{db_err, from_doc, PgStore};
use crate::error::{Error, Result};
use crate::model::{ChannelType, Delivery, FeedCounts, FlowRun, Notification};
use crate::storage::*;
use sqlx::Row;
use std::sync::Arc;
use uuid::Uuid;

fn not_yet(method: &str) -> Error {
    Error::internal(format!("not implemented on PostgreSQL yet: {method}"))
}

impl RunRepo for PgStore {
    fn commit_run(&self, _project: &Uuid, _run: StagedRun) -> Result<RunCommit> {
        Err(not_yet("commit_run"))
    }

    fn prepare_chunk(&self, _project: &Uuid, _chunk: StagedChunk) -> Result<Prepared> {
        Err(not_yet("prepare_chunk"))
    }

    fn commit_chunk(
        &self,
        _project: &Uuid,
        _chunk: Prepared,
    ) -> Result<(Vec<QueueItem>, UserFrames)> {
        Err(not_yet("commit_chunk"))
    }

    fn flow_run(&self, project: &Uuid, id: &Uuid) -> Result<Option<FlowRun>> {
        let row = self
            .block(
                sqlx::query("SELECT doc FROM flow_runs WHERE project = $1 AND id = $2")
                    .bind(project)
                    .bind(id)
                    .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        row.map(|r| from_doc(r.get("doc"))).transpose()
    }

    fn active_runs(&self) -> Result<Vec<(Uuid, Uuid)>> {
        let rows = self
            .block(
                sqlx::query("SELECT project, id FROM flow_runs WHERE NOT processed ORDER BY id")
                    .fetch_all(self.pool()),
            )
            .map_err(db_err)?;
        Ok(rows
            .into_iter()
            .map(|r| (r.get("project"), r.get("id")))
            .collect())
    }
}

impl NotificationRepo for PgStore {
    fn notification(&self, _project: &Uuid, _id: &Uuid) -> Result<Option<Notification>> {
        Err(not_yet("notification"))
    }

    fn delivery(&self, _project: &Uuid, _id: &Uuid) -> Result<Option<Delivery>> {
        Err(not_yet("delivery"))
    }

    fn notification_deliveries(&self, _project: &Uuid, _nid: &Uuid) -> Result<Vec<Delivery>> {
        Err(not_yet("notification_deliveries"))
    }

    fn list_notifications(
        &self,
        _project: &Uuid,
        _f: &NotificationFilter,
        _req: &PageReq,
    ) -> Result<Page<Notification>> {
        Err(not_yet("list_notifications"))
    }

    fn list_deliveries(
        &self,
        _project: &Uuid,
        _f: &DeliveryFilter,
        _req: &PageReq,
    ) -> Result<Page<Delivery>> {
        Err(not_yet("list_deliveries"))
    }
}

impl QueueRepo for PgStore {
    fn queue_items(&self, ct: ChannelType) -> Result<Vec<QueueItem>> {
        let rows = self
            .block(
                sqlx::query(
                    "SELECT project, delivery_id, due_ms FROM queue
                     WHERE channel_type = $1 ORDER BY due_ms, delivery_id",
                )
                .bind(i16::from(ct.index()))
                .fetch_all(self.pool()),
            )
            .map_err(db_err)?;
        Ok(rows
            .into_iter()
            .map(|r| QueueItem {
                project: r.get("project"),
                delivery_id: r.get("delivery_id"),
                channel_type: ct,
                due_ms: r.get("due_ms"),
            })
            .collect())
    }

    fn settle(&self, _items: &[(QueueItem, Outcome)]) -> Result<Finished> {
        Err(not_yet("settle"))
    }

    fn deliver_in_app(&self, _items: &[QueueItem]) -> Result<InAppBatch> {
        Err(not_yet("deliver_in_app"))
    }
}

impl FeedRepo for PgStore {
    /// Nothing reaches a feed on this backend yet: every feed is empty.
    fn feed_counts(&self, _project: &Uuid, _user: &Uuid) -> Result<FeedCounts> {
        Ok(FeedCounts::default())
    }

    fn feed_page(
        &self,
        _project: &Uuid,
        _user: &Uuid,
        _filter: FeedFilter,
        _req: &PageReq,
    ) -> Result<Page<Delivery>> {
        Err(not_yet("feed_page"))
    }

    fn feed_entry(&self, _project: &Uuid, _user: &Uuid, _id: &Uuid) -> Result<Delivery> {
        Err(not_yet("feed_entry"))
    }

    fn feed_page_cached(&self, _project: &Uuid, _user: &Uuid, _limit: usize) -> Option<Arc<[u8]>> {
        None
    }

    fn feed_page_fill(
        &self,
        _project: &Uuid,
        _user: &Uuid,
        _limit: usize,
        build: &mut dyn FnMut(&dyn Storage) -> Result<Vec<u8>>,
    ) -> Result<Arc<[u8]>> {
        Ok(build(self)?.into())
    }

    fn events_between(
        &self,
        _project: &Uuid,
        _user: &Uuid,
        _after: u64,
        _upto: u64,
    ) -> Result<Option<Vec<Vec<u8>>>> {
        Err(not_yet("events_between"))
    }

    fn update_feed_entry(
        &self,
        _project: &Uuid,
        _user: &Uuid,
        _id: &Uuid,
        _u: FeedUpdate,
    ) -> Result<FeedChange<Delivery>> {
        Err(not_yet("update_feed_entry"))
    }

    fn mark_feed(&self, _project: &Uuid, _user: &Uuid, _read: bool) -> Result<FeedChange<usize>> {
        Err(not_yet("mark_feed"))
    }
}
