//! Runs, notifications, deliveries, the delivery queue and users' feeds on
//! PostgreSQL.
//!
//! Not implemented on this backend yet: storing a run (`commit_run`, topic
//! chunks), settling deliveries and the in-app feed. Those calls answer a
//! clear internal error instead of storing something half-way, so a run
//! started against PostgreSQL fails loudly (500, "not implemented on
//! PostgreSQL yet: commit_run" in the log). As nothing can store a
//! notification, a delivery or a feed entry, the reads of those answer what
//! is true of such a store: no notifications, no deliveries, empty feeds
//! with no events. The reads that recovery makes at start (`active_runs`,
//! `queue_items`) and `flow_run` read their tables.

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

/// A page of a list that has no items (with the boundary it was asked from).
fn empty_page<T>(req: &PageReq) -> Page<T> {
    Page {
        items: vec![],
        first_key: req.after.clone(),
        last_key: req.before.clone(),
        has_more_after: false,
        has_more_before: false,
    }
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
        Ok(None)
    }

    fn delivery(&self, _project: &Uuid, _id: &Uuid) -> Result<Option<Delivery>> {
        Ok(None)
    }

    fn notification_deliveries(&self, _project: &Uuid, _nid: &Uuid) -> Result<Vec<Delivery>> {
        Ok(vec![])
    }

    fn list_notifications(
        &self,
        _project: &Uuid,
        _f: &NotificationFilter,
        req: &PageReq,
    ) -> Result<Page<Notification>> {
        Ok(empty_page(req))
    }

    fn list_deliveries(
        &self,
        _project: &Uuid,
        _f: &DeliveryFilter,
        req: &PageReq,
    ) -> Result<Page<Delivery>> {
        Ok(empty_page(req))
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
        req: &PageReq,
    ) -> Result<Page<Delivery>> {
        Ok(empty_page(req))
    }

    fn feed_entry(&self, _project: &Uuid, _user: &Uuid, id: &Uuid) -> Result<Delivery> {
        Err(Error::not_found("feed_entry", id))
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
        after: u64,
        upto: u64,
    ) -> Result<Option<Vec<Vec<u8>>>> {
        // every log is empty: only "nothing after the latest" can be answered
        Ok((after >= upto).then(Vec::new))
    }

    fn update_feed_entry(
        &self,
        _project: &Uuid,
        _user: &Uuid,
        id: &Uuid,
        _u: FeedUpdate,
    ) -> Result<FeedChange<Delivery>> {
        Err(Error::not_found("feed_entry", id))
    }

    fn mark_feed(&self, _project: &Uuid, _user: &Uuid, _read: bool) -> Result<FeedChange<usize>> {
        Ok(FeedChange {
            value: 0,
            counts: FeedCounts::default(),
            frames: vec![],
        })
    }
}
