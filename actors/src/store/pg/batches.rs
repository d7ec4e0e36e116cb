//! Batches on PostgreSQL (`storage::BatchRepo`, `delivery::batch`): one row
//! per batch (migration 0003), a slot's current batch its latest row. Opens
//! and joins are applied in the transaction of the notifications that make
//! them (`put_batches`) under the slots' advisory locks; a close
//! (`close_batch`) locks its opener's notification row, then the slot, so a
//! join and a close never interleave.

use super::events::Traces;
use super::users::{lock_all, lock_key};
use super::{db_err, doc_of, record_of, to_body, to_doc, PgStore};
use crate::delivery::batch;
use crate::error::{Error, Result};
use crate::model::{Delivery, Timestamp};
use crate::storage::{
    Batch, BatchClose, BatchCloseReason, BatchKey, BatchRepo, BatchWrite, QueueItem,
    StagedNotification,
};
use sqlx::PgConnection;
use uuid::Uuid;

/// The advisory lock of a batch slot.
/// The lock of a batch slot or throttle counter (the same key shape).
pub(super) fn slot_lock(project: &Uuid, k: &BatchKey) -> i64 {
    let name = format!("{}/{}/{}/{}", k.flow_id, k.recipient, k.step, k.key);
    lock_key(b'b', project, &name)
}

async fn batch_in(conn: &mut PgConnection, project: &Uuid, id: &Uuid) -> Result<Option<Batch>> {
    let row = sqlx::query("SELECT doc FROM batches WHERE project = $1 AND id = $2")
        .bind(project)
        .bind(id)
        .fetch_optional(conn)
        .await
        .map_err(db_err)?;
    row.map(|r| doc_of(&r, "doc")).transpose()
}

async fn latest_in(conn: &mut PgConnection, project: &Uuid, k: &BatchKey) -> Result<Option<Batch>> {
    let row = sqlx::query(
        "SELECT doc FROM batches
         WHERE project = $1 AND flow_id = $2 AND recipient = $3 AND step = $4 AND key = $5
         ORDER BY id DESC LIMIT 1",
    )
    .bind(project)
    .bind(k.flow_id)
    .bind(k.recipient)
    .bind(i16::from(k.step))
    .bind(&k.key)
    .fetch_optional(conn)
    .await
    .map_err(db_err)?;
    row.map(|r| doc_of(&r, "doc")).transpose()
}

async fn save(conn: &mut PgConnection, project: &Uuid, b: &Batch) -> Result<()> {
    sqlx::query(
        "INSERT INTO batches (project, id, flow_id, recipient, step, key, closed, doc)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (project, id) DO UPDATE SET closed = EXCLUDED.closed, doc = EXCLUDED.doc",
    )
    .bind(project)
    .bind(b.id)
    .bind(b.key.flow_id)
    .bind(b.key.recipient)
    .bind(i16::from(b.key.step))
    .bind(&b.key.key)
    .bind(b.closed.is_some())
    .bind(to_doc(b))
    .execute(conn)
    .await
    .map_err(db_err)?;
    Ok(())
}

/// Applies the opens and joins of staged notifications under their slots'
/// locks: the opener deliveries a `max` close made due now, or `None` when a
/// batch is not as staged (the caller rolls back and stages again). Trace
/// entries of closes go into `traces`.
pub(super) async fn put_batches(
    conn: &mut PgConnection, project: &Uuid, ns: &[StagedNotification], traces: &mut Traces,
) -> Result<Option<Vec<QueueItem>>> {
    let writes: Vec<&BatchWrite> = ns.iter().filter_map(|n| n.batch.as_ref()).collect();
    if writes.is_empty() {
        return Ok(Some(vec![]));
    }
    let locks = writes
        .iter()
        .map(|w| match w {
            BatchWrite::Open(b) => slot_lock(project, &b.key),
            BatchWrite::Join { key, .. } => slot_lock(project, key),
        })
        .collect();
    lock_all(conn, locks).await.map_err(db_err)?;
    let now = Timestamp::now();
    let mut due = vec![];
    for w in writes {
        match w {
            BatchWrite::Open(b) => {
                if let Some(cur) = latest_in(conn, project, &b.key).await? {
                    if cur.open_at(b.opened_at_ms) {
                        return Ok(None);
                    }
                }
                if b.closed.is_some() {
                    traces.add(project, &b.id, &[batch::closed_entry(b, now)]);
                }
                save(conn, project, b).await?;
            }
            BatchWrite::Join {
                key,
                batch: id,
                activity,
            } => {
                let mut b = match latest_in(conn, project, key).await? {
                    Some(b) if b.id == *id && b.open_at(activity.at_ms) => b,
                    _ => return Ok(None),
                };
                if let Some(q) = batch::join(project, &mut b, activity.clone()) {
                    traces.add(project, &b.id, &[batch::closed_entry(&b, now)]);
                    due.extend(q);
                }
                save(conn, project, &b).await?;
            }
        }
    }
    Ok(Some(due))
}

impl BatchRepo for PgStore {
    fn close_batch(&self, project: &Uuid, c: &BatchClose) -> Result<bool> {
        let mut tx = self.begin()?;
        let done = self.block(async {
            // the opener's notification first, as settling locks it
            sqlx::query("SELECT 1 FROM notifications WHERE project = $1 AND id = $2 FOR UPDATE")
                .bind(project)
                .bind(c.batch)
                .execute(&mut *tx)
                .await
                .map_err(db_err)?;
            let Some(first) = batch_in(&mut tx, project, &c.batch).await? else {
                return Ok(false);
            };
            lock_all(&mut tx, vec![slot_lock(project, &first.key)])
                .await
                .map_err(db_err)?;
            let Some(mut b) = batch_in(&mut tx, project, &c.batch).await? else {
                return Ok(false);
            };
            let now = Timestamp::now();
            let row =
                sqlx::query("SELECT doc, body FROM deliveries WHERE project = $1 AND id = $2")
                    .bind(project)
                    .bind(c.delivery_id)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(db_err)?;
            let mut d: Option<Delivery> = row.map(|r| record_of(&r, "doc", "body")).transpose()?;
            let Some(done) = batch::close(&mut b, d.as_mut(), c, now) else {
                return Ok(false);
            };
            if done.batch {
                save(&mut tx, project, &b).await?;
            }
            if !done.trace.is_empty() {
                let mut traces = Traces::default();
                traces.add(project, &b.id, &done.trace);
                traces.flush(&mut tx).await?;
            }
            if let (true, Some(d)) = (done.delivery, &d) {
                sqlx::query(
                    "UPDATE deliveries SET body = $3, doc = NULL WHERE project = $1 AND id = $2",
                )
                .bind(project)
                .bind(d.id)
                .bind(to_body(d))
                .execute(&mut *tx)
                .await
                .map_err(db_err)?;
            }
            Ok::<_, Error>(true)
        })?;
        if done {
            self.commit(tx)?;
        }
        Ok(done)
    }

    fn cancel_batch(&self, project: &Uuid, id: &Uuid, at_ms: i64) -> Result<()> {
        let mut tx = self.begin()?;
        self.block(async {
            let Some(first) = batch_in(&mut tx, project, id).await? else {
                return Ok(());
            };
            lock_all(&mut tx, vec![slot_lock(project, &first.key)])
                .await
                .map_err(db_err)?;
            let Some(mut b) = batch_in(&mut tx, project, id).await? else {
                return Ok(());
            };
            if b.closed.is_some() {
                return Ok(());
            }
            b.closed = Some((at_ms, BatchCloseReason::Canceled));
            let mut traces = Traces::default();
            traces.add(project, &b.id, &[batch::closed_entry(&b, Timestamp::now())]);
            traces.flush(&mut tx).await?;
            save(&mut tx, project, &b).await
        })?;
        self.commit(tx)
    }
}

/// Reads of the trait `RecordRepo` answers (`lookups.rs`).
impl PgStore {
    pub fn batch(&self, project: &Uuid, id: &Uuid) -> Result<Option<Batch>> {
        self.block(async {
            let mut conn = self.pool().acquire().await.map_err(db_err)?;
            batch_in(&mut conn, project, id).await
        })
    }

    pub fn latest_batch(&self, project: &Uuid, key: &BatchKey) -> Result<Option<Batch>> {
        self.block(async {
            let mut conn = self.pool().acquire().await.map_err(db_err)?;
            latest_in(&mut conn, project, key).await
        })
    }
}
