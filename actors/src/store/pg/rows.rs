//! Row writes that runs, settling and feeds share on PostgreSQL: queue rows,
//! deliveries, runs' records. They import nothing of those modules, so each
//! of them can use these without an import circle.

use super::{db_err, to_body, to_doc};
use crate::error::Result;
use crate::model::{Delivery, FlowRun};
use crate::storage::*;
use sqlx::PgConnection;
use uuid::Uuid;

/// Puts queue rows (a row already there is moved to its new due time and
/// keeps its lease); with `lease`, new rows are leased to that node, each
/// until its time in the list (`PgStore::lease_for`).
pub(super) async fn put_queue(
    conn: &mut PgConnection, items: &[QueueItem], lease: Option<(Uuid, &[i64])>,
) -> Result<()> {
    if items.is_empty() {
        return Ok(());
    }
    let projects: Vec<Uuid> = items.iter().map(|q| q.project).collect();
    let ids: Vec<Uuid> = items.iter().map(|q| q.delivery_id).collect();
    let types: Vec<i16> = items
        .iter()
        .map(|q| i16::from(q.channel_type.index()))
        .collect();
    let due: Vec<i64> = items.iter().map(|q| q.due_ms.max(0)).collect();
    let (owner, untils) = match lease {
        Some((node, untils)) => (Some(node), untils.to_vec()),
        None => (None, vec![0; items.len()]),
    };
    sqlx::query(
        "INSERT INTO queue (project, delivery_id, channel_type, due_ms, lease_owner, lease_until)
         SELECT p, d, t, due, $5::uuid, CASE WHEN $5::uuid IS NULL THEN NULL ELSE u END
         FROM UNNEST($1::uuid[], $2::uuid[], $3::int2[], $4::int8[], $6::int8[]) AS x (p, d, t, due, u)
         ON CONFLICT (project, delivery_id) DO UPDATE
             SET channel_type = EXCLUDED.channel_type, due_ms = EXCLUDED.due_ms,
                 lease_owner = COALESCE(EXCLUDED.lease_owner, queue.lease_owner),
                 lease_until = CASE WHEN EXCLUDED.lease_owner IS NULL
                     THEN queue.lease_until ELSE EXCLUDED.lease_until END",
    )
    .bind(&projects)
    .bind(&ids)
    .bind(&types)
    .bind(&due)
    .bind(owner)
    .bind(&untils)
    .execute(conn)
    .await
    .map_err(db_err)?;
    Ok(())
}

/// Deletes the queue rows of `keys` (project, delivery) in one statement.
pub(super) async fn unqueue_all(conn: &mut PgConnection, keys: &[(Uuid, Uuid)]) -> Result<()> {
    if keys.is_empty() {
        return Ok(());
    }
    let (ps, ds): (Vec<Uuid>, Vec<Uuid>) = keys.iter().copied().unzip();
    sqlx::query(
        "DELETE FROM queue
         WHERE (project, delivery_id) IN (SELECT * FROM UNNEST($1::uuid[], $2::uuid[]))",
    )
    .bind(&ps)
    .bind(&ds)
    .execute(conn)
    .await
    .map_err(db_err)?;
    Ok(())
}

/// `save_delivery` for many (each once): one statement.
pub(super) async fn save_deliveries<'a>(
    conn: &mut PgConnection, ds: impl IntoIterator<Item = (Uuid, &'a Delivery)>,
) -> Result<()> {
    let (mut ps, mut ids, mut sts, mut docs) = (vec![], vec![], vec![], vec![]);
    let mut chs = vec![];
    for (p, d) in ds {
        ps.push(p);
        ids.push(d.id);
        sts.push(d.status.as_str().to_string());
        docs.push(to_body(d));
        // a failover changes the channel: the column follows the record
        chs.push(d.channel_id);
    }
    if ps.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "UPDATE deliveries AS d SET status = x.s, body = x.body, doc = NULL, channel_id = x.ch
         FROM UNNEST($1::uuid[], $2::uuid[], $3::text[], $4::bytea[], $5::uuid[])
           AS x (p, id, s, body, ch)
         WHERE d.project = x.p AND d.id = x.id",
    )
    .bind(&ps)
    .bind(&ids)
    .bind(&sts)
    .bind(&docs)
    .bind(&chs)
    .execute(conn)
    .await
    .map_err(db_err)?;
    Ok(())
}

pub(super) async fn save_delivery(
    conn: &mut PgConnection, project: &Uuid, d: &Delivery,
) -> Result<()> {
    sqlx::query(
        "UPDATE deliveries SET status = $3, body = $4, doc = NULL WHERE project = $1 AND id = $2",
    )
    .bind(project)
    .bind(d.id)
    .bind(d.status.as_str())
    .bind(to_body(d))
    .execute(conn)
    .await
    .map_err(db_err)?;
    Ok(())
}

/// Writes back a run that `settle::run_done` just marked processed.
pub(super) async fn save_processed(
    conn: &mut PgConnection, project: &Uuid, run: &FlowRun,
) -> Result<()> {
    sqlx::query("UPDATE flow_runs SET processed = $3, doc = $4 WHERE project = $1 AND id = $2")
        .bind(project)
        .bind(run.id)
        .bind(run.processed)
        .bind(to_doc(run))
        .execute(&mut *conn)
        .await
        .map_err(db_err)?;
    Ok(())
}

/// Upserts a run's record with its pending count.
pub(super) async fn put_run(
    conn: &mut PgConnection, p: &Uuid, run: &FlowRun, pending: i64,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO flow_runs (project, id, processed, pending, doc) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (project, id) DO UPDATE
             SET processed = EXCLUDED.processed, pending = EXCLUDED.pending, doc = EXCLUDED.doc",
    )
    .bind(p)
    .bind(run.id)
    .bind(run.processed)
    .bind(pending)
    .bind(to_doc(run))
    .execute(conn)
    .await
    .map_err(db_err)?;
    Ok(())
}
