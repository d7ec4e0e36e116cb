//! Row writes that runs, settling and feeds share on PostgreSQL: the
//! deliveries (with their place in the queue), runs' records. They import nothing of those modules, so each
//! of them can use these without an import circle.

use super::{db_err, to_doc};
use crate::error::Result;
use crate::model::{Delivery, FlowRun};
use crate::storage::*;
use sqlx::PgConnection;
use uuid::Uuid;

/// Queues deliveries that are already stored (a queued delivery is one
/// with a due time, `due_ms`, on its row): one already queued moves to its
/// new due time and keeps its lease; with `lease`, the others are leased to
/// that node, each until its time in the list (`PgStore::lease_for`). A
/// delivery being stored in the same statement is queued by
/// `insert_notifications` instead, in its insert.
pub(super) async fn put_queue(
    conn: &mut PgConnection, items: &[QueueItem], lease: Option<(Uuid, &[i64])>,
) -> Result<()> {
    if items.is_empty() {
        return Ok(());
    }
    let projects: Vec<Uuid> = items.iter().map(|q| q.project).collect();
    let ids: Vec<Uuid> = items.iter().map(|q| q.delivery_id).collect();
    let due: Vec<i64> = items.iter().map(|q| q.due_ms.max(0)).collect();
    let (owner, untils) = match lease {
        Some((node, untils)) => (Some(node), untils.to_vec()),
        None => (None, vec![0; items.len()]),
    };
    // A lease given wins; without one, a delivery already queued keeps its
    // own and one not queued has none.
    sqlx::query(
        "UPDATE deliveries AS d SET due_ms = x.due,
             lease_owner = CASE WHEN $4::uuid IS NOT NULL THEN $4::uuid
                 WHEN d.due_ms IS NULL THEN NULL ELSE d.lease_owner END,
             lease_until = CASE WHEN $4::uuid IS NOT NULL THEN x.u
                 WHEN d.due_ms IS NULL THEN NULL ELSE d.lease_until END
         FROM UNNEST($1::uuid[], $2::uuid[], $3::int8[], $5::int8[]) AS x (p, id, due, u)
         WHERE d.project = x.p AND d.id = x.id",
    )
    .bind(&projects)
    .bind(&ids)
    .bind(&due)
    .bind(owner)
    .bind(&untils)
    .execute(conn)
    .await
    .map_err(db_err)?;
    Ok(())
}

/// Takes deliveries out of the queue (`keys`: project, delivery) in one
/// statement: their due time and lease are cleared.
pub(super) async fn unqueue_all(conn: &mut PgConnection, keys: &[(Uuid, Uuid)]) -> Result<()> {
    if keys.is_empty() {
        return Ok(());
    }
    let (ps, ds): (Vec<Uuid>, Vec<Uuid>) = keys.iter().copied().unzip();
    sqlx::query(
        "UPDATE deliveries SET due_ms = NULL, lease_owner = NULL, lease_until = NULL
         WHERE (project, id) IN (SELECT * FROM UNNEST($1::uuid[], $2::uuid[]))
           AND due_ms IS NOT NULL",
    )
    .bind(&ps)
    .bind(&ds)
    .execute(conn)
    .await
    .map_err(db_err)?;
    Ok(())
}

/// What a settle does to a saved delivery's place in the queue.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Queued {
    /// Left as it is.
    Keep,
    /// Out of the queue (settled for good).
    Out,
    /// Queued again, due then; a delivery still queued keeps its lease.
    Due(i64),
}

/// `save_delivery` for many (each once, with what becomes of its place in
/// the queue): one statement, so a settle writes each row once.
pub(super) async fn save_deliveries<'a>(
    conn: &mut PgConnection, ds: impl IntoIterator<Item = (Uuid, &'a Delivery, Queued)>,
) -> Result<()> {
    let (mut ps, mut ids, mut sts, mut docs) = (vec![], vec![], vec![], vec![]);
    let (mut chs, mut qset, mut qdue) = (vec![], vec![], vec![]);
    for (p, d, q) in ds {
        ps.push(p);
        ids.push(d.id);
        sts.push(d.status.as_str().to_string());
        docs.push(to_doc(d));
        // a failover changes the channel: the column follows the document
        chs.push(d.channel_id);
        qset.push(q != Queued::Keep);
        qdue.push(match q {
            Queued::Due(due) => Some(due.max(0)),
            _ => None,
        });
    }
    if ps.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "UPDATE deliveries AS d SET status = x.s, doc = x.doc, channel_id = x.ch,
             due_ms = CASE WHEN x.qset THEN x.due ELSE d.due_ms END,
             lease_owner = CASE WHEN x.qset AND (x.due IS NULL OR d.due_ms IS NULL)
                 THEN NULL ELSE d.lease_owner END,
             lease_until = CASE WHEN x.qset AND (x.due IS NULL OR d.due_ms IS NULL)
                 THEN NULL ELSE d.lease_until END
         FROM UNNEST($1::uuid[], $2::uuid[], $3::text[], $4::jsonb[], $5::uuid[], $6::bool[], $7::int8[])
           AS x (p, id, s, doc, ch, qset, due)
         WHERE d.project = x.p AND d.id = x.id",
    )
    .bind(&ps)
    .bind(&ids)
    .bind(&sts)
    .bind(&docs)
    .bind(&chs)
    .bind(&qset)
    .bind(&qdue)
    .execute(conn)
    .await
    .map_err(db_err)?;
    Ok(())
}

pub(super) async fn save_delivery(
    conn: &mut PgConnection, project: &Uuid, d: &Delivery,
) -> Result<()> {
    sqlx::query("UPDATE deliveries SET status = $3, doc = $4 WHERE project = $1 AND id = $2")
        .bind(project)
        .bind(d.id)
        .bind(d.status.as_str())
        .bind(to_doc(d))
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
