//! Notifications and deliveries read back on PostgreSQL
//! (`storage::NotificationRepo`): by id, and listed by filters, newest first.

use super::page::id_floor;
use super::{db_err, record_of, PgStore};
use crate::error::Result;
use crate::model::{delivery_id, notification_of, Delivery, Notification, Timestamp};
use crate::storage::*;
use sqlx::Row;
use uuid::Uuid;

/// Bounds on ids for "created after `a`" and "created before `b`" (an id's
/// time is its millisecond), as `(lowest id included, lowest id excluded)`.
pub(super) fn id_range(
    a: &Option<Timestamp>, b: &Option<Timestamp>,
) -> (Option<Uuid>, Option<Uuid>) {
    let lo = a.map(|a| id_floor(a.millis() + 1));
    let hi = b.map(|b| {
        let whole = b.0.timestamp_subsec_nanos() % 1_000_000 == 0;
        id_floor(b.millis() + i64::from(!whole))
    });
    (lo, hi)
}

/// A page of a list that has no items (with the boundary it was asked from).
pub(super) fn empty_page<T>(req: &PageReq) -> Page<T> {
    Page {
        items: vec![],
        first_key: req.after.clone(),
        last_key: req.before.clone(),
        has_more_after: false,
        has_more_before: false,
    }
}

// ---------------------------------------------------------------- writes

/// Reads of the trait `RecordRepo` answers (`lookups.rs`).
impl PgStore {
    pub fn notification(&self, project: &Uuid, id: &Uuid) -> Result<Option<Notification>> {
        if notification_of(id) != *id {
            return Ok(None);
        }
        let row = self
            .block(
                sqlx::query("SELECT doc, body FROM notifications WHERE project = $1 AND id = $2")
                    .bind(project)
                    .bind(id)
                    .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        row.map(|r| record_of(&r, "doc", "body")).transpose()
    }

    pub fn delivery(&self, project: &Uuid, id: &Uuid) -> Result<Option<Delivery>> {
        if notification_of(id) == *id {
            return Ok(None);
        }
        let row = self
            .block(
                sqlx::query("SELECT doc, body FROM deliveries WHERE project = $1 AND id = $2")
                    .bind(project)
                    .bind(id)
                    .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        row.map(|r| record_of(&r, "doc", "body")).transpose()
    }

    pub fn notification_deliveries(&self, project: &Uuid, nid: &Uuid) -> Result<Vec<Delivery>> {
        let rows = self
            .block(
                sqlx::query(
                    "SELECT doc, body FROM deliveries
                     WHERE project = $1 AND id >= $2 AND id < $3 ORDER BY id",
                )
                .bind(project)
                .bind(delivery_id(nid, 0))
                .bind(notification_of(nid))
                .fetch_all(self.pool()),
            )
            .map_err(db_err)?;
        rows.into_iter()
            .map(|r| record_of(&r, "doc", "body"))
            .collect()
    }

    pub fn list_notifications(
        &self, project: &Uuid, f: &NotificationFilter, req: &PageReq,
    ) -> Result<Page<Notification>> {
        let (lo, hi) = id_range(&f.created_after, &f.created_before);
        if matches!((lo, hi), (Some(l), Some(h)) if l >= h) {
            return Ok(empty_page(req));
        }
        let p = *project;
        let f = f.clone();
        self.page(
            &|q| {
                q.push("SELECT id, doc, body FROM notifications WHERE project = ");
                q.push_bind(p);
                // Written out rather than bound, so the partial index of
                // pending notifications matches.
                match f.status {
                    Some(true) => q.push(" AND processed"),
                    Some(false) => q.push(" AND NOT processed"),
                    None => q,
                };
                if let Some(t) = &f.topic {
                    q.push(" AND topic = ").push_bind(t.clone());
                }
                if let Some(x) = f.flow_id {
                    // The expression of the index `notifications_by_flow`.
                    q.push(" AND coalesce(flow_id, (doc->>'flow_id')::uuid) = ")
                        .push_bind(x);
                }
                if let Some(x) = f.flow_run_id {
                    q.push(" AND run_id = ").push_bind(x);
                }
                if let Some(x) = f.recipient {
                    q.push(" AND recipient = ").push_bind(x);
                }
                if let Some(l) = lo {
                    q.push(" AND id >= ").push_bind(l);
                }
                if let Some(h) = hi {
                    q.push(" AND id < ").push_bind(h);
                }
            },
            "id",
            req,
            &|r| Ok((r.get("id"), record_of(&r, "doc", "body")?)),
        )
    }

    pub fn list_deliveries(
        &self, project: &Uuid, f: &DeliveryFilter, req: &PageReq,
    ) -> Result<Page<Delivery>> {
        let (lo, hi) = id_range(&f.created_after, &f.created_before);
        if matches!((lo, hi), (Some(l), Some(h)) if l >= h) {
            return Ok(empty_page(req));
        }
        let p = *project;
        let f = f.clone();
        self.page(
            &|q| {
                q.push("SELECT id, doc, body FROM deliveries WHERE project = ");
                q.push_bind(p);
                if let Some(s) = f.status {
                    q.push(" AND status = ").push_bind(s.as_str());
                }
                if let Some(t) = f.channel_type {
                    q.push(" AND channel_type = ")
                        .push_bind(i16::from(t.index()));
                }
                if let Some(x) = f.channel_id {
                    q.push(" AND channel_id = ").push_bind(x);
                }
                if let Some(x) = f.notification_id {
                    // its deliveries' key range (migration 17)
                    q.push(" AND id >= ")
                        .push_bind(delivery_id(&x, 0))
                        .push(" AND id < ")
                        .push_bind(notification_of(&x));
                }
                if let Some(x) = f.recipient {
                    q.push(" AND recipient = ").push_bind(x);
                }
                if let Some(l) = lo {
                    q.push(" AND id >= ").push_bind(l);
                }
                if let Some(h) = hi {
                    q.push(" AND id < ").push_bind(h);
                }
            },
            "id",
            req,
            &|r| Ok((r.get("id"), record_of(&r, "doc", "body")?)),
        )
    }
}
