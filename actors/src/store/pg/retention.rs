//! Retention and erasure on PostgreSQL (`storage::RetentionRepo`): removing
//! settled notifications with everything that points at them, old feed
//! entries and live-feed events, runs whose notifications are all gone, and
//! a deleted user's notifications.
//!
//! Every step is one transaction of bounded size (`LIMIT`), so the next
//! pass resumes where the last committed one stopped: the database itself
//! is the cursor. A notification's deliveries and trace go with it (foreign
//! keys); its feed entries go in the same transaction, with their users'
//! counts brought down under the feed locks, taken after the notifications'
//! row locks (the order every writer keeps: notifications, runs, feeds).
//! Rows another transaction holds are skipped (`SKIP LOCKED`) and taken by
//! a later pass.

use super::feed::{count_delta, lock_feeds};
use super::page::id_floor;
use super::users::{delete_in, lock_all, user_by_ext_in, user_lock};
use super::{db_err, doc_of, record_of, to_doc, PgStore, DELIVERIES_OF_EACH};
use crate::error::{Error, Result};
use crate::model::{Delivery, FeedCounts, Timestamp};
use crate::rules::records;
use crate::storage::Refusal;
use crate::storage::{
    Erasure, ErasureStatus, ErasureStep, PurgeCutoffs, PurgeReport, RetentionRepo, Sweep,
};
use sqlx::{PgConnection, Row};
use std::collections::HashMap;
use uuid::Uuid;

/// A settled notification: processed, and none of its deliveries pending
/// (its deliveries' key range, migration 17). A scalar subquery, not `NOT
/// EXISTS`: the planner turns `NOT EXISTS` into an anti join, and with the
/// count of pending deliveries underestimated (statistics lag behind a busy
/// table) it read every pending delivery once and compared each
/// notification with all of them (1.1 s for 1,024 notifications against
/// 1,694 pending deliveries in the PostgreSQL soak, the purge falling
/// behind); a scalar subquery is one range probe per notification.
const SETTLED: &str = "n.processed AND (
    SELECT 1 FROM deliveries d
    WHERE d.project = n.project AND d.id >= deliveries_from(n.id) AND d.id < n.id
      AND d.status = 'pending'
    LIMIT 1) IS NULL";

/// The deliveries of notifications `$2` (an array) of project `$1`, as a
/// subquery (`DELIVERIES_OF_EACH`).
fn deliveries_of() -> String {
    format!("(SELECT d.* FROM (SELECT $1::uuid AS p, UNNEST($2::uuid[]) AS nid) k {DELIVERIES_OF_EACH})")
}

/// Removes feed rows (returned as `(user_id, flags, size)` by `delete`, a
/// statement whose `$1` is the project) and brings their users' counts down
/// by what they counted; `users` are the users whose rows may go, locked
/// first. How many rows went and their bytes.
async fn remove_feed_rows(
    conn: &mut PgConnection, project: &Uuid, users: Vec<Uuid>,
    delete: sqlx::query::Query<'_, sqlx::Postgres, sqlx::postgres::PgArguments>,
) -> Result<(u64, u64)> {
    if users.is_empty() {
        return Ok((0, 0));
    }
    lock_feeds(conn, users.into_iter().map(|u| (*project, u))).await?;
    let rows = delete.fetch_all(&mut *conn).await.map_err(db_err)?;
    let mut removed: HashMap<Uuid, FeedCounts> = HashMap::new();
    let mut bytes = 0u64;
    for r in &rows {
        bytes += r.get::<i32, _>("size") as u64;
        count_delta(
            removed.entry(r.get("user_id")).or_default(),
            r.get::<i16, _>("flags") as u8,
            1,
        );
    }
    let (mut us, mut unread, mut unseen) = (vec![], vec![], vec![]);
    for (u, c) in removed {
        us.push(u);
        unread.push(c.unread as i64);
        unseen.push(c.unseen as i64);
    }
    sqlx::query(
        "UPDATE feed_state s
         SET unread = greatest(s.unread - d.r, 0), unseen = greatest(s.unseen - d.s, 0)
         FROM UNNEST($2::uuid[], $3::int8[], $4::int8[]) AS d (u, r, s)
         WHERE s.project = $1 AND s.user_id = d.u",
    )
    .bind(project)
    .bind(&us)
    .bind(&unread)
    .bind(&unseen)
    .execute(&mut *conn)
    .await
    .map_err(db_err)?;
    Ok((rows.len() as u64, bytes))
}

/// Removes notifications `ids` (locked by the caller) with their
/// deliveries, queue rows, traces and feed entries.
async fn remove_notifications(
    conn: &mut PgConnection, project: &Uuid, ids: &[Uuid],
) -> Result<PurgeReport> {
    let mut report = PurgeReport::default();
    if ids.is_empty() {
        return Ok(report);
    }
    let of = deliveries_of();
    let users: Vec<Uuid> = sqlx::query_scalar(&format!(
        "SELECT DISTINCT f.user_id FROM {of} d
             JOIN feed f ON f.project = d.project AND f.delivery_id = d.id"
    ))
    .bind(project)
    .bind(ids)
    .fetch_all(&mut *conn)
    .await
    .map_err(db_err)?;
    let (feed_entries, feed_bytes) = remove_feed_rows(
        conn,
        project,
        users,
        sqlx::query(&format!(
            "DELETE FROM feed f USING {of} d
             WHERE f.project = d.project AND f.user_id = d.recipient AND f.delivery_id = d.id
             RETURNING f.user_id, f.flags, pg_column_size(f.*) AS size"
        ))
        .bind(project)
        .bind(ids),
    )
    .await?;
    report.feed_entries = feed_entries;
    // a settled delivery has no queue row; this makes sure of it
    sqlx::query(&format!(
        "DELETE FROM queue q USING {of} d
         WHERE q.project = d.project AND q.delivery_id = d.id"
    ))
    .bind(project)
    .bind(ids)
    .execute(&mut *conn)
    .await
    .map_err(db_err)?;
    // The deliveries go, their records returned for `content`: their
    // rendered parts, as `quota::content_bytes` counted them when stored;
    // read from the records, since a compact one's parts cannot be reached
    // in SQL.
    let rows = sqlx::query(&format!(
        "DELETE FROM deliveries x USING {of} d
         WHERE x.project = d.project AND x.id = d.id
         RETURNING x.doc, x.body, coalesce(pg_column_size(x.body), pg_column_size(x.doc)) AS size"
    ))
    .bind(project)
    .bind(ids)
    .fetch_all(&mut *conn)
    .await
    .map_err(db_err)?;
    let mut content = 0;
    report.bytes = feed_bytes;
    for r in &rows {
        let d: Delivery = record_of(r, "doc", "body")?;
        content += crate::quota::content_bytes(&d.data);
        report.bytes += r.get::<i32, _>("size") as u64;
    }
    report.deliveries = rows.len() as u64;
    // traces go by their foreign key
    let bytes: Vec<i32> = sqlx::query_scalar(
        "DELETE FROM notifications WHERE project = $1 AND id = ANY($2)
         RETURNING coalesce(pg_column_size(body), pg_column_size(doc))",
    )
    .bind(project)
    .bind(ids)
    .fetch_all(&mut *conn)
    .await
    .map_err(db_err)?;
    report.notifications = bytes.len() as u64;
    report.bytes += bytes.iter().map(|b| *b as u64).sum::<u64>();
    // What they counted in the project's usage (`quota::cost_of` for each
    // notification), taken off in this transaction.
    report.usage_bytes = report.notifications * crate::quota::NOTIFICATION_COST
        + report.deliveries * crate::quota::DELIVERY_COST
        + content;
    super::usage::take_usage(conn, project, report.usage_bytes).await?;
    Ok(report)
}

impl PgStore {
    /// Settled notifications created before `cut.notifications` (on a test
    /// clock: accepted before it in project time), oldest first. The ids'
    /// range (`PurgeCutoffs::id_bound`) bounds the index scan; the run's
    /// time decides within it.
    fn purge_notifications(
        &self, project: &Uuid, cut: &PurgeCutoffs, max: usize,
    ) -> Result<PurgeReport> {
        let before = cut.notifications;
        let mut tx = self.begin()?;
        let report = self.block(async {
            // A run accepted on a test clock is as old as the project time it
            // was accepted at (`FlowRun::clock_at`), not as its id's real time.
            let ids: Vec<Uuid> = sqlx::query_scalar(&format!(
                "SELECT n.id FROM notifications n
                 LEFT JOIN flow_runs r ON r.project = n.project AND r.id = n.run_id
                 WHERE n.project = $1 AND n.id < $5 AND {SETTLED}
                   AND CASE WHEN r.doc->>'clock_at' IS NOT NULL
                            THEN (r.doc->>'clock_at')::timestamptz < $4
                            ELSE n.id < $2 END
                 ORDER BY n.id LIMIT $3 FOR UPDATE OF n SKIP LOCKED"
            ))
            .bind(project)
            .bind(id_floor(before.millis()))
            .bind(max as i64)
            .bind(before.0)
            .bind(id_floor(cut.id_bound().millis()))
            .fetch_all(&mut *tx)
            .await
            .map_err(db_err)?;
            let mut report = remove_notifications(&mut tx, project, &ids).await?;
            report.more = ids.len() >= max;
            Ok::<_, Error>(report)
        })?;
        self.commit(tx)?;
        Ok(report)
    }

    /// Processed runs created before `cut.notifications` (on a test clock:
    /// accepted before it in project time) whose notifications are all
    /// gone; the ids' range bounds the scan as for the notifications.
    fn purge_runs(&self, project: &Uuid, cut: &PurgeCutoffs, max: usize) -> Result<PurgeReport> {
        let before = cut.notifications;
        let bytes: Vec<i32> = self
            .block(
                sqlx::query_scalar(
                    "DELETE FROM flow_runs WHERE project = $1 AND id IN (
                         SELECT r.id FROM flow_runs r
                         WHERE r.project = $1 AND r.id < $5 AND r.processed
                           AND CASE WHEN r.doc->>'clock_at' IS NOT NULL
                                    THEN (r.doc->>'clock_at')::timestamptz < $4
                                    ELSE r.id < $2 END
                           AND NOT EXISTS (SELECT 1 FROM notifications n
                                           WHERE n.project = r.project AND n.run_id = r.id)
                         ORDER BY r.id LIMIT $3 FOR UPDATE SKIP LOCKED)
                     RETURNING pg_column_size(doc)",
                )
                .bind(project)
                .bind(id_floor(before.millis()))
                .bind(max as i64)
                .bind(before.0)
                .bind(id_floor(cut.id_bound().millis()))
                .fetch_all(self.pool()),
            )
            .map_err(db_err)?;
        Ok(PurgeReport {
            runs: bytes.len() as u64,
            bytes: bytes.iter().map(|b| *b as u64).sum(),
            more: bytes.len() >= max,
            ..Default::default()
        })
    }

    /// Feed entries created before `before` (an entry's id is its time).
    fn purge_feed(&self, project: &Uuid, before: Timestamp, max: usize) -> Result<PurgeReport> {
        let mut tx = self.begin()?;
        let report = self.block(async {
            let rows = sqlx::query(
                "SELECT user_id, delivery_id FROM feed WHERE project = $1 AND delivery_id < $2
                 ORDER BY delivery_id LIMIT $3",
            )
            .bind(project)
            .bind(id_floor(before.millis()))
            .bind(max as i64)
            .fetch_all(&mut *tx)
            .await
            .map_err(db_err)?;
            let found = rows.len();
            let (us, ds): (Vec<Uuid>, Vec<Uuid>) = rows
                .into_iter()
                .map(|r| (r.get::<Uuid, _>("user_id"), r.get::<Uuid, _>("delivery_id")))
                .unzip();
            let mut users = us.clone();
            users.sort();
            users.dedup();
            let (removed, bytes) = remove_feed_rows(
                &mut tx,
                project,
                users,
                sqlx::query(
                    "DELETE FROM feed f USING UNNEST($2::uuid[], $3::uuid[]) AS k (u, d)
                     WHERE f.project = $1 AND f.user_id = k.u AND f.delivery_id = k.d
                     RETURNING f.user_id, f.flags, pg_column_size(f.*) AS size",
                )
                .bind(project)
                .bind(&us)
                .bind(&ds),
            )
            .await?;
            Ok::<_, Error>(PurgeReport {
                feed_entries: removed,
                bytes,
                more: found >= max,
                ..Default::default()
            })
        })?;
        self.commit(tx)?;
        Ok(report)
    }

    /// Live-feed events written before `before`, except each user's latest
    /// (the feed's `seq`). A client resuming from an event that is gone is
    /// told to reload (`events_between` → `None`).
    fn purge_events(&self, project: &Uuid, before: Timestamp, max: usize) -> Result<PurgeReport> {
        let bytes: Vec<i32> = self
            .block(
                sqlx::query_scalar(
                    "DELETE FROM feed_events WHERE ctid = ANY(ARRAY(
                         SELECT e.ctid FROM feed_events e
                         JOIN feed_state s ON s.project = e.project AND s.user_id = e.user_id
                         WHERE e.project = $1 AND e.created_ms < $2 AND e.seq < s.seq
                         LIMIT $3))
                     RETURNING pg_column_size(frame)",
                )
                .bind(project)
                .bind(before.millis())
                .bind(max as i64)
                .fetch_all(self.pool()),
            )
            .map_err(db_err)?;
        Ok(PurgeReport {
            events: bytes.len() as u64,
            bytes: bytes.iter().map(|b| *b as u64).sum(),
            more: bytes.len() >= max,
            ..Default::default()
        })
    }

    async fn erasure_in(
        conn: &mut PgConnection, project: &Uuid, id: &Uuid, lock: bool,
    ) -> Result<Option<Erasure>> {
        let sql = if lock {
            "SELECT doc FROM erasures WHERE project = $1 AND id = $2 FOR UPDATE"
        } else {
            "SELECT doc FROM erasures WHERE project = $1 AND id = $2"
        };
        let row = sqlx::query(sql)
            .bind(project)
            .bind(id)
            .fetch_optional(conn)
            .await
            .map_err(db_err)?;
        row.map(|r| doc_of(&r, "doc")).transpose()
    }

    async fn save_erasure(conn: &mut PgConnection, e: &Erasure) -> Result<()> {
        sqlx::query(
            "INSERT INTO erasures (project, id, running, doc) VALUES ($1, $2, $3, $4)
             ON CONFLICT (project, id) DO UPDATE SET running = EXCLUDED.running, doc = EXCLUDED.doc",
        )
        .bind(e.project)
        .bind(e.id)
        .bind(e.status == ErasureStatus::Running)
        .bind(to_doc(e))
        .execute(conn)
        .await
        .map_err(db_err)?;
        Ok(())
    }
}

/// The advisory lock key of a project's purge: its id folded to 64 bits.
fn purge_lock_key(project: &Uuid) -> i64 {
    let b = project.as_bytes();
    let (hi, lo) = b.split_at(8);
    let f = |x: &[u8]| i64::from_be_bytes(x.try_into().expect("8 bytes"));
    f(hi) ^ f(lo) ^ 0x7075_7267_6500_0000 // "purge"
}

impl PgStore {
    /// A purge pass's phases, under the project's purge lock.
    fn purge_locked(&self, project: &Uuid, cut: &PurgeCutoffs, max: usize) -> Result<PurgeReport> {
        let max = max.max(1);
        let mut report = PurgeReport::default();
        let phases: [&dyn Fn() -> Result<PurgeReport>; 5] = [
            &|| self.purge_notifications(project, cut, max),
            &|| self.purge_runs(project, cut, max),
            &|| self.purge_feed(project, cut.feed, max),
            &|| self.purge_events(project, cut.feed, max),
            &|| self.purge_batches(project, cut.now.millis(), max),
        ];
        for phase in phases {
            report.add(&phase()?);
            if report.more {
                break;
            }
        }
        Ok(report)
    }
}

impl RetentionRepo for PgStore {
    fn erase(&self, project: &Uuid, step: ErasureStep<'_>) -> Result<Erasure> {
        match step {
            ErasureStep::Start(ext) => {
                let mut tx = self.begin()?;
                let e = self.block(async {
                    lock_all(&mut tx, vec![user_lock(project, ext)])
                        .await
                        .map_err(db_err)?;
                    let user = user_by_ext_in(&mut tx, project, ext)
                        .await?
                        .ok_or_else(|| Refusal::missing("user", ext))?;
                    delete_in(&mut tx, project, &[user.id]).await?;
                    let e = records::new_erasure(project, &user.id);
                    PgStore::save_erasure(&mut tx, &e).await?;
                    Ok::<_, Error>(e)
                })?;
                self.commit(tx)?;
                Ok(e)
            }
            ErasureStep::Continue { id, max } => {
                let max = max.max(1);
                let mut tx = self.begin()?;
                let job = self.block(async {
            let mut job = PgStore::erasure_in(&mut tx, project, id, true)
                .await?
                .ok_or_else(|| Refusal::missing("erasure", id))?;
            if job.status == ErasureStatus::Complete {
                return Ok(job);
            }
            let ids: Vec<Uuid> = sqlx::query_scalar(&format!(
                "SELECT n.id FROM notifications n
                 WHERE n.project = $1 AND n.recipient = $2 AND {SETTLED}
                 ORDER BY n.id LIMIT $3 FOR UPDATE SKIP LOCKED"
            ))
            .bind(project)
            .bind(job.user_id)
            .bind(max as i64)
            .fetch_all(&mut *tx)
            .await
            .map_err(db_err)?;
            if ids.is_empty() {
                // Pending ones (their deliveries to a deleted user settle
                // soon) wait for a later step.
                let left: bool = sqlx::query_scalar(
                    "SELECT EXISTS (SELECT 1 FROM notifications WHERE project = $1 AND recipient = $2)",
                )
                .bind(project)
                .bind(job.user_id)
                .fetch_one(&mut *tx)
                .await
                .map_err(db_err)?;
                if !left {
                    job.status = ErasureStatus::Complete;
                    job.completed_at = Some(Timestamp::now());
                    PgStore::save_erasure(&mut tx, &job).await?;
                }
                return Ok(job);
            }
            let report = remove_notifications(&mut tx, project, &ids).await?;
            job.notifications_removed += report.notifications;
            PgStore::save_erasure(&mut tx, &job).await?;
            Ok::<_, Error>(job)
        })?;
                self.commit(tx)?;
                Ok(job)
            }
        }
    }

    fn sweep(&self, what: Sweep, max: usize) -> Result<usize> {
        match what {
            Sweep::Idempotency => {
                let r = self
                    .block(
                        sqlx::query(
                            "DELETE FROM idempotency WHERE ctid IN (
                         SELECT ctid FROM idempotency WHERE created_ms < $1 LIMIT $2)",
                        )
                        .bind(Timestamp::now().millis() - super::catalog::IDEMPOTENCY_TTL_MS)
                        .bind(max as i64)
                        .execute(self.pool()),
                    )
                    .map_err(db_err)?;
                Ok(r.rows_affected() as usize)
            }
            Sweep::EventLogs { before_ms } => {
                let max = max as i64;
                let mut tx = self.begin()?;
                let n = self.block(async {
            // outbox rows of endpoints that no longer exist (staged while
            // their endpoint was being deleted)
            let mut n = sqlx::query(
                "DELETE FROM outbox WHERE ctid = ANY(ARRAY(
                     SELECT o.ctid FROM outbox o WHERE NOT EXISTS (
                         SELECT 1 FROM event_endpoints e WHERE e.project = o.project AND e.id = o.endpoint)
                     LIMIT $1))",
            )
            .bind(max)
            .execute(&mut *tx)
            .await
            .map_err(db_err)?
            .rows_affected() as i64;
            if n < max {
                n += sqlx::query(
                    "DELETE FROM event_log WHERE ctid = ANY(ARRAY(
                         SELECT ctid FROM event_log WHERE created_ms < $1 LIMIT $2))",
                )
                .bind(before_ms)
                .bind(max - n)
                .execute(&mut *tx)
                .await
                .map_err(db_err)?
                .rows_affected() as i64;
            }
            if n < max {
                // an attempt's id is its time
                n += sqlx::query(
                    "DELETE FROM event_attempts WHERE ctid = ANY(ARRAY(
                         SELECT ctid FROM event_attempts WHERE id < $1 LIMIT $2))",
                )
                .bind(super::page::id_floor(before_ms))
                .bind(max - n)
                .execute(&mut *tx)
                .await
                .map_err(db_err)?
                .rows_affected() as i64;
            }
            Ok::<_, Error>(n as usize)
        })?;
                self.commit(tx)?;
                Ok(n)
            }
        }
    }

    /// Each kind in its own transaction; it stops after the first kind with
    /// more to remove (`more`), so the next call goes on with that kind.
    ///
    /// One node at a time purges a project: the pass holds a session-level
    /// advisory lock of the project's, and a node that cannot take it at
    /// once leaves the pass to the one that holds it (a dead node's lock
    /// goes with its connection).
    fn purge(&self, project: &Uuid, cut: &PurgeCutoffs, max: usize) -> Result<PurgeReport> {
        let key = purge_lock_key(project);
        let mut conn = self.block(self.pool().acquire()).map_err(db_err)?;
        let got: bool = self
            .block(
                sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
                    .bind(key)
                    .fetch_one(&mut *conn),
            )
            .map_err(db_err)?;
        let report = if got {
            let r = self.purge_locked(project, cut, max);
            let _ = self.block(
                sqlx::query("SELECT pg_advisory_unlock($1)")
                    .bind(key)
                    .execute(&mut *conn),
            );
            r
        } else {
            Ok(PurgeReport::default())
        };
        // handing the connection back needs the backend's runtime
        let _entered = self.runtime().enter();
        drop(conn);
        report
    }

    fn oldest_notification(&self, project: &Uuid) -> Result<Option<Timestamp>> {
        // PostgreSQL has no `min` of uuids: the first id in the key's order.
        let id: Option<Uuid> = self
            .block(
                sqlx::query_scalar(
                    "SELECT id FROM notifications WHERE project = $1 ORDER BY id LIMIT 1",
                )
                .bind(project)
                .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        Ok(id.map(|id| Timestamp::of_id(&id)))
    }

    fn running_erasures(&self) -> Result<Vec<Erasure>> {
        let rows = self
            .block(
                sqlx::query("SELECT doc FROM erasures WHERE running ORDER BY id")
                    .fetch_all(self.pool()),
            )
            .map_err(db_err)?;
        rows.into_iter().map(|r| doc_of(&r, "doc")).collect()
    }
}

impl PgStore {
    /// Batches nothing will read again: closed,
    /// or past their close at project time `now_ms`, with their opener's
    /// notification processed or gone; at most `max`, one statement.
    fn purge_batches(&self, project: &Uuid, now_ms: i64, max: usize) -> Result<PurgeReport> {
        let n = self
            .block(
                sqlx::query(
                    "DELETE FROM batches WHERE project = $1 AND id IN (
                       SELECT b.id FROM batches b
                       LEFT JOIN notifications n ON n.project = b.project AND n.id = b.id
                       WHERE b.project = $1
                         AND (b.closed OR (b.doc->>'closes_at_ms')::bigint <= $2)
                         AND (n.id IS NULL OR n.processed)
                       LIMIT $3)",
                )
                .bind(project)
                .bind(now_ms)
                .bind(max as i64)
                .execute(self.pool()),
            )
            .map_err(db_err)?
            .rows_affected();
        Ok(PurgeReport {
            batches: n,
            more: n as usize >= max,
            ..Default::default()
        })
    }
}

/// Reads of the trait `RecordRepo` answers (`lookups.rs`).
impl PgStore {
    pub fn erasure(&self, project: &Uuid, id: &Uuid) -> Result<Option<Erasure>> {
        self.block(async {
            let mut conn = self.pool().acquire().await.map_err(db_err)?;
            PgStore::erasure_in(&mut conn, project, id, false).await
        })
    }
}

/// Reads of the trait `RecordRepo` answers (`lookups.rs`).
impl PgStore {}
