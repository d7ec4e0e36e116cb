//! Work shared by the nodes on one database (`storage::WorkRepo`): leases
//! on queue rows, on runs being expanded and on outbox entries.
//!
//! A lease is `(lease_owner, lease_until)` on the row: the node id of the
//! process that holds it (`PgStore::node`, random per process) and until
//! when, in real milliseconds. A claim takes rows whose lease is free or
//! expired, `FOR UPDATE SKIP LOCKED` so that nodes claiming at once never
//! wait for each other nor take the same row; the conditions sit on the
//! locked table itself, so a row leased by another node between this
//! statement's snapshot and its lock is re-checked and left. Renewals skip
//! rows locked by a transaction in progress (a settle, which deletes or
//! moves them anyway), so they never wait in a cycle with one.
//!
//! A test-clock project's queue rows are due by its clock, kept in its
//! record (`Project::test_clock`): the claim reads every such clock in the
//! same statement, so a clock advanced on any node counts at once.

use super::{db_err, PgStore};
use crate::error::Result;
use crate::model::ChannelType;
use crate::storage::{Leased, QueueItem, Release, RunClaim, WorkNode, WorkRepo};
use sqlx::Row;
use std::time::Duration;
use uuid::Uuid;

/// How long a lease holds unless renewed (`HERALD_LEASE_SECONDS`): far
/// longer than the renewals' period (a third of it), so a node busy for a
/// moment keeps its work; short enough that a dead node's work waits
/// little.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

impl WorkRepo for PgStore {
    fn node(&self) -> WorkNode {
        WorkNode {
            id: PgStore::node(self),
            lease: Duration::from_millis(self.lease_ms() as u64),
        }
    }

    fn claim_queue(&self, ct: ChannelType, now_ms: i64, limit: usize) -> Result<Vec<QueueItem>> {
        if limit == 0 {
            return Ok(vec![]);
        }
        let rows = self
            .block(
                sqlx::query(
                    "WITH clocks AS (
                         SELECT id, (extract(epoch FROM (doc->>'test_clock')::timestamptz) * 1000)::int8 AS now_ms
                         FROM projects WHERE doc->>'test_clock' IS NOT NULL
                     ), pick AS (
                         SELECT q.project, q.delivery_id FROM queue q
                         LEFT JOIN clocks c ON c.id = q.project
                         WHERE q.channel_type = $1
                           AND q.due_ms <= (SELECT GREATEST($2, max(now_ms)) FROM clocks)
                           AND q.due_ms <= COALESCE(c.now_ms, $2)
                           AND (q.lease_until IS NULL OR q.lease_until <= $2)
                         ORDER BY q.due_ms LIMIT $3
                         FOR UPDATE OF q SKIP LOCKED
                     )
                     UPDATE queue q SET lease_owner = $4, lease_until = $2 + $5
                     FROM pick WHERE q.project = pick.project AND q.delivery_id = pick.delivery_id
                     RETURNING q.project, q.delivery_id, q.due_ms",
                )
                .bind(i16::from(ct.index()))
                .bind(now_ms)
                .bind(limit as i64)
                .bind(self.node())
                .bind(self.lease_ms())
                .fetch_all(self.pool()),
            )
            .map_err(db_err)?;
        let mut items: Vec<QueueItem> = rows
            .into_iter()
            .map(|r| QueueItem {
                project: r.get("project"),
                delivery_id: r.get("delivery_id"),
                channel_type: ct,
                due_ms: r.get("due_ms"),
            })
            .collect();
        items.sort_by_key(|q| (q.due_ms, q.delivery_id));
        Ok(items)
    }

    fn claim_runs(&self, which: RunClaim<'_>, now_ms: i64) -> Result<Vec<(Uuid, Uuid)>> {
        match which {
            RunClaim::Any { limit } => self.claim_any_runs(now_ms, limit),
            RunClaim::One { project, run } => Ok(if self.claim_run(project, run, now_ms)? {
                vec![(*project, *run)]
            } else {
                vec![]
            }),
        }
    }

    fn renew(&self, what: Leased, now_ms: i64) -> Result<()> {
        match what {
            Leased::Queue(ct) => self.renew_queue_leases(ct, now_ms),
            Leased::RunsAndEvents => self.renew_leases(now_ms),
        }
    }

    fn release(&self, what: Release<'_>) -> Result<()> {
        match what {
            Release::Queued(ct, items) => self.release_queue(ct, Some(items)),
            Release::Queue(ct) => self.release_queue(ct, None),
            Release::All => self.release_all(),
        }
    }
}

/// The statements behind `WorkRepo`'s calls, one per kind of lease.
impl PgStore {
    fn renew_queue_leases(&self, ct: ChannelType, now_ms: i64) -> Result<()> {
        self.block(
            sqlx::query(
                "UPDATE queue SET lease_until = GREATEST(lease_until, $3 + $4)
                 WHERE lease_owner = $1 AND (project, delivery_id) IN (
                     SELECT project, delivery_id FROM queue
                     WHERE lease_owner = $1 AND channel_type = $2
                     FOR UPDATE SKIP LOCKED)",
            )
            .bind(self.node())
            .bind(i16::from(ct.index()))
            .bind(now_ms)
            .bind(self.lease_ms())
            .execute(self.pool()),
        )
        .map_err(db_err)?;
        Ok(())
    }

    fn release_queue(&self, ct: ChannelType, items: Option<&[QueueItem]>) -> Result<()> {
        let q = match items {
            None => sqlx::query(
                "UPDATE queue SET lease_owner = NULL, lease_until = NULL
                 WHERE lease_owner = $1 AND channel_type = $2",
            )
            .bind(self.node())
            .bind(i16::from(ct.index())),
            Some([]) => return Ok(()),
            Some(items) => {
                let ps: Vec<Uuid> = items.iter().map(|q| q.project).collect();
                let ds: Vec<Uuid> = items.iter().map(|q| q.delivery_id).collect();
                sqlx::query(
                    "UPDATE queue SET lease_owner = NULL, lease_until = NULL
                     WHERE lease_owner = $1 AND channel_type = $2
                       AND (project, delivery_id) IN (SELECT * FROM UNNEST($3::uuid[], $4::uuid[]))",
                )
                .bind(self.node())
                .bind(i16::from(ct.index()))
                .bind(ps)
                .bind(ds)
            }
        };
        self.block(q.execute(self.pool())).map_err(db_err)?;
        Ok(())
    }

    /// This node's own unexpanded runs come back too, after the others: the
    /// engine starts an expansion for each one it is not running (after a
    /// crash of its actor).
    fn claim_any_runs(&self, now_ms: i64, limit: usize) -> Result<Vec<(Uuid, Uuid)>> {
        let rows = self
            .block(
                sqlx::query(
                    "UPDATE flow_runs SET lease_owner = $1, lease_until = $2 + $3
                     WHERE (project, id) IN (
                         SELECT project, id FROM flow_runs
                         WHERE NOT processed AND (doc->>'expanded')::boolean IS NOT TRUE
                           AND (lease_owner IS NULL OR lease_owner = $1 OR lease_until <= $2)
                         ORDER BY lease_owner IS NOT DISTINCT FROM $1, id LIMIT $4
                         FOR UPDATE SKIP LOCKED)
                       AND (lease_owner IS NULL OR lease_owner = $1 OR lease_until <= $2)
                     RETURNING project, id",
                )
                .bind(self.node())
                .bind(now_ms)
                .bind(self.lease_ms())
                .bind(limit as i64)
                .fetch_all(self.pool()),
            )
            .map_err(db_err)?;
        let mut runs: Vec<(Uuid, Uuid)> = rows
            .into_iter()
            .map(|r| (r.get("project"), r.get("id")))
            .collect();
        runs.sort_by_key(|(_, id)| *id);
        Ok(runs)
    }

    fn claim_run(&self, project: &Uuid, run: &Uuid, now_ms: i64) -> Result<bool> {
        let row = self
            .block(
                sqlx::query(
                    "UPDATE flow_runs SET lease_owner = $3, lease_until = $4 + $5
                     WHERE project = $1 AND id = $2
                       AND NOT processed AND (doc->>'expanded')::boolean IS NOT TRUE
                       AND (lease_owner IS NULL OR lease_owner = $3 OR lease_until <= $4)
                     RETURNING 1 AS held",
                )
                .bind(project)
                .bind(run)
                .bind(self.node())
                .bind(now_ms)
                .bind(self.lease_ms())
                .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        Ok(row.is_some())
    }

    fn renew_leases(&self, now_ms: i64) -> Result<()> {
        let (node, until) = (self.node(), now_ms + self.lease_ms());
        self.block(async {
            sqlx::query(
                "UPDATE flow_runs SET lease_until = $2
                 WHERE lease_owner = $1 AND (project, id) IN (
                     SELECT project, id FROM flow_runs
                     WHERE lease_owner = $1 AND NOT processed
                       AND (doc->>'expanded')::boolean IS NOT TRUE
                     FOR UPDATE SKIP LOCKED)",
            )
            .bind(node)
            .bind(until)
            .execute(self.pool())
            .await?;
            sqlx::query(
                "UPDATE outbox SET lease_until = $2
                 WHERE lease_owner = $1 AND (project, endpoint, seq) IN (
                     SELECT project, endpoint, seq FROM outbox
                     WHERE lease_owner = $1 FOR UPDATE SKIP LOCKED)",
            )
            .bind(node)
            .bind(until)
            .execute(self.pool())
            .await
        })
        .map_err(db_err)?;
        // The node's presence lease: its sockets count while it holds.
        self.renew_presence(now_ms, until)
    }

    fn release_all(&self) -> Result<()> {
        let node = self.node();
        self.block(async {
            for table in ["queue", "flow_runs", "outbox"] {
                sqlx::query(&format!(
                    "UPDATE {table} SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1"
                ))
                .bind(node)
                .execute(self.pool())
                .await?;
            }
            Ok::<_, sqlx::Error>(())
        })
        .map_err(db_err)?;
        self.drop_presence()
    }
}
