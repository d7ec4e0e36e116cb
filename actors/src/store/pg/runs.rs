//! Flow runs on PostgreSQL (`storage::RunRepo`), with the sled backend's
//! semantics:
//!
//! - `commit_run` stores a run with its users, notifications, deliveries,
//!   queue rows, in-app feed entries and their events, and its idempotent
//!   202, in one transaction, under the users' advisory locks; a user not as
//!   staged makes it `Stale` (rolled back), and so does a throttle counter
//!   not as staged (read under the same locks). Notifications, deliveries,
//!   queue rows, throttle counters and trace entries go in one multi-row
//!   insert each (`UNNEST`), and so do the outbound events of what was
//!   settled at once and `flow_run.accepted` (`events::Outbound`).
//! - A topic run's chunk is one transaction too; the run's `pending` count
//!   is changed under its row lock, taken by the chunk's last statement.

use super::batches::put_batches;
use super::catalog::put_idempotent_new;
use super::events::{users_of, Outbound, Traces};
use super::throttles::{put_throttles, throttles_stale};
use super::users::{lock_all, put_user, user_by_ext_in, user_lock};
use super::{db_err, to_body, to_doc, PgStore};
use crate::delivery::settle;
use crate::error::{Error, Result};
use crate::events::EventType;
use crate::model::{Delivery, FlowRun, Timestamp};
use crate::storage::*;
use crate::store::trace_codec;
use sqlx::{PgConnection, Row};
use uuid::Uuid;

use super::feed::*;
use super::rows::*;

/// Inserts notifications and all their deliveries, one statement each.
pub(super) async fn insert_notifications(
    conn: &mut PgConnection, project: &Uuid, ns: &[StagedNotification],
) -> Result<()> {
    if ns.is_empty() {
        return Ok(());
    }
    let mut ids = Vec::with_capacity(ns.len());
    let mut runs = Vec::with_capacity(ns.len());
    let mut topics: Vec<Option<String>> = Vec::with_capacity(ns.len());
    let mut recipients = Vec::with_capacity(ns.len());
    let mut processed = Vec::with_capacity(ns.len());
    let mut flows = Vec::with_capacity(ns.len());
    let mut bodies = Vec::with_capacity(ns.len());
    let mut d_ids = vec![];
    let mut d_nids = vec![];
    let mut d_recipients = vec![];
    let mut d_status: Vec<String> = vec![];
    let mut d_types: Vec<i16> = vec![];
    let mut d_channels = vec![];
    let mut d_flows = vec![];
    let mut d_docs = vec![];
    for sn in ns {
        ids.push(sn.n.id);
        runs.push(sn.n.flow_run_id);
        topics.push(sn.n.topic.clone());
        recipients.push(sn.n.recipient_id);
        processed.push(sn.n.processed);
        flows.push(sn.n.flow_id);
        bodies.push(to_body(&sn.n));
        for d in &sn.deliveries {
            d_ids.push(d.id);
            d_nids.push(d.notification_id);
            d_recipients.push(d.recipient_id);
            d_status.push(d.status.as_str().to_string());
            d_types.push(i16::from(d.channel_type.index()));
            d_channels.push(d.channel_id);
            d_flows.push(d.flow_id);
            d_docs.push(to_body(d));
        }
    }
    sqlx::query(
        "INSERT INTO notifications (project, id, run_id, topic, recipient, processed, flow_id, body)
         SELECT $1, * FROM UNNEST($2::uuid[], $3::uuid[], $4::text[], $5::uuid[], $6::bool[], $7::uuid[], $8::bytea[])",
    )
    .bind(project)
    .bind(&ids)
    .bind(&runs)
    .bind(&topics)
    .bind(&recipients)
    .bind(&processed)
    .bind(&flows)
    .bind(&bodies)
    .execute(&mut *conn)
    .await
    .map_err(db_err)?;
    if !d_ids.is_empty() {
        sqlx::query(
            "INSERT INTO deliveries (project, id, notification_id, recipient, status, channel_type, channel_id, flow_id, body)
             SELECT $1, * FROM UNNEST($2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::int2[], $7::uuid[], $8::uuid[], $9::bytea[])",
        )
        .bind(project)
        .bind(&d_ids)
        .bind(&d_nids)
        .bind(&d_recipients)
        .bind(&d_status)
        .bind(&d_types)
        .bind(&d_channels)
        .bind(&d_flows)
        .bind(&d_docs)
        .execute(&mut *conn)
        .await
        .map_err(db_err)?;
    }
    Ok(())
}

/// Takes the locks of the throttle counters a run or topic chunk counts in
/// (`batches::slot_lock`): runs and chunks both check and write them under
/// these, so neither lets a run too many through.
pub(super) async fn lock_slots(
    conn: &mut PgConnection, project: &Uuid, ts: &[&ThrottleWrite],
) -> Result<()> {
    if ts.is_empty() {
        return Ok(());
    }
    let keys = ts
        .iter()
        .map(|t| super::batches::slot_lock(project, &t.key))
        .collect();
    lock_all(conn, keys).await.map_err(db_err)
}

/// Writes what comes with staged notifications besides their records (after
/// them): the throttle counters they count in and their trace entries; the
/// events of what was settled at once go into `out`.
pub(super) async fn notification_extras(
    conn: &mut PgConnection, project: &Uuid, run: &FlowRun, ns: &[StagedNotification],
    out: &mut Outbound,
) -> Result<()> {
    put_throttles(conn, project, ns).await?;
    // The users of the notifications whose own events are staged (the
    // transaction's upserts included), only when an endpoint wants them.
    let users = if out.wants_notification(project) {
        let own = ns
            .iter()
            .filter(|sn| crate::events::notification_events(&sn.n).next().is_some())
            .map(|sn| (project, &sn.n));
        users_of(conn, own).await?
    } else {
        Default::default()
    };
    let mut traces = Traces::default();
    for sn in ns {
        traces.add_part(
            project,
            &sn.n.id,
            trace_codec::encode_accepted(&sn.trace, &sn.deliveries),
        );
        out.stage_accepted(project, &sn.n, &sn.deliveries, &run.data, &users);
    }
    traces.flush(conn).await
}

/// The in-app deliveries settled at once of staged notifications, with
/// their entries' JSON.
pub(super) fn to_feed(ns: &[StagedNotification]) -> Vec<(Delivery, String)> {
    ns.iter()
        .flat_map(|sn| {
            sn.to_feed
                .iter()
                .filter_map(|(i, json)| sn.deliveries.get(*i).map(|d| (d.clone(), json.clone())))
        })
        .collect()
}

impl PgStore {
    /// Until when the queue rows a run just staged are leased to this node:
    /// a lease past each one's due time (real-clock runs: the node keeps its
    /// deliveries in its timers and renews while it lives), or, on a test
    /// clock (whose due times are project time), one lease from now (the
    /// engine gives back those not due yet).
    fn lease_for(&self, run: &FlowRun, queued: &[QueueItem]) -> Vec<i64> {
        let now = Timestamp::now().millis();
        let lease = self.lease_ms();
        queued
            .iter()
            .map(|q| match run.clock_at {
                Some(_) => now + lease,
                None => q.due_ms.max(now).saturating_add(lease),
            })
            .collect()
    }

    /// Adds a committed chunk to its run, the chunk transaction's last
    /// statement (see `count_down`): the run's record as of the chunk and
    /// `pending` more notifications to wait for, only while this node holds
    /// the run's lease. One that lost it (it stalled past the lease, another
    /// node took over from the cursor committed last) fails here and the
    /// chunk rolls back, so no chunk goes in twice. So does a chunk of
    /// `fresh` notifications (one or more) whose run already counts as many
    /// as it would make it: another expansion of the same run, on this node
    /// too (one started while this one's chunk was in flight), committed
    /// the same subscribers from the same cursor first. The run is
    /// processed when the chunk ends the expansion with nothing left
    /// pending.
    async fn add_chunk(
        &self, conn: &mut PgConnection, project: &Uuid, run: &mut FlowRun, pending: i64, fresh: i64,
    ) -> Result<()> {
        let row = sqlx::query(
            "UPDATE flow_runs SET pending = pending + $4, doc = $5
             WHERE project = $1 AND id = $2 AND lease_owner = $3
               AND ($6 = 0 OR (doc->>'notifications_count')::int8 < $7)
             RETURNING pending",
        )
        .bind(project)
        .bind(run.id)
        .bind(self.node())
        .bind(pending)
        .bind(to_doc(&*run))
        .bind(fresh)
        .bind(run.notifications_count as i64)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_err)?;
        let total = match row {
            Some(r) => r.get::<i64, _>("pending"),
            None => {
                let exists = sqlx::query("SELECT 1 FROM flow_runs WHERE project = $1 AND id = $2")
                    .bind(project)
                    .bind(run.id)
                    .fetch_optional(&mut *conn)
                    .await
                    .map_err(db_err)?;
                if exists.is_some() {
                    return Err(Refusal::LeaseLost { run: run.id }.err());
                }
                put_run(conn, project, run, pending).await?;
                pending
            }
        };
        if total == 0 && settle::run_done(run, Timestamp::now()) {
            save_processed(conn, project, run).await?;
        }
        Ok(())
    }

    /// Leases a run's expansion to this node.
    async fn lease_run(&self, conn: &mut PgConnection, project: &Uuid, run: &Uuid) -> Result<()> {
        sqlx::query(
            "UPDATE flow_runs SET lease_owner = $3, lease_until = $4 WHERE project = $1 AND id = $2",
        )
        .bind(project)
        .bind(run)
        .bind(self.node())
        .bind(Timestamp::now().millis() + self.lease_ms())
        .execute(conn)
        .await
        .map_err(db_err)?;
        Ok(())
    }
}

/// A topic chunk written in its transaction, not committed yet
/// (`Storage::write_chunk`): its notifications, deliveries, queue rows,
/// trace, events and feeds are in; the run's record (`add_chunk`, under
/// the run's lease and row lock) and the commit come at `commit`, so the
/// chunks of an expansion commit in order while the next ones are
/// written. Dropped, it rolls back.
pub(super) struct PgWrittenChunk<'a> {
    store: &'a PgStore,
    tx: super::Tx,
    project: Uuid,
    run: FlowRun,
    pending: i64,
    /// The chunk's notifications (`add_chunk`).
    fresh: i64,
    queued: Vec<QueueItem>,
    frames: UserFrames,
}

impl WrittenChunk for PgWrittenChunk<'_> {
    fn commit(self: Box<Self>) -> Result<CommittedChunk> {
        let PgWrittenChunk {
            store,
            mut tx,
            project,
            mut run,
            pending,
            fresh,
            queued,
            frames,
        } = *self;
        store.block(store.add_chunk(&mut tx, &project, &mut run, pending, fresh))?;
        store.commit(tx)?;
        Ok((queued, frames))
    }
}

impl PgStore {
    /// The rows of a run's or a topic chunk's notifications: notifications,
    /// deliveries and their extras, the traces of batches they close, the
    /// queue entries (`queues`: the queued deliveries, then those of a batch
    /// closed early by `max`, due now; this node dispatches both and takes
    /// their lease) and the recipients' feeds, whose frames it returns.
    #[allow(clippy::too_many_arguments)]
    async fn write_notifications(
        &self, conn: &mut PgConnection, project: &Uuid, run: &FlowRun,
        notifications: &[StagedNotification], closes: Traces, out: &mut Outbound,
        queues: [&[QueueItem]; 2], feed: Vec<(Delivery, String)>,
    ) -> Result<UserFrames> {
        insert_notifications(conn, project, notifications).await?;
        notification_extras(conn, project, run, notifications, out).await?;
        closes.flush(conn).await?;
        for items in queues {
            let untils = self.lease_for(run, items);
            put_queue(conn, items, Some((self.node(), &untils))).await?;
        }
        stage_feeds(conn, project, feed).await
    }

    /// Writes a topic chunk in a transaction left open (`PgWrittenChunk`).
    /// Decided while the chunk was staged (see the sled store): a throttle
    /// counter or batch that changed since rolls the chunk back, to be
    /// staged again.
    pub(super) fn write_chunk_tx(
        &self, project: &Uuid, chunk: Prepared,
    ) -> Result<PgWrittenChunk<'_>> {
        let StagedChunk {
            run,
            notifications,
            queued,
        } = chunk.take()?;
        let pending = notifications.iter().filter(|n| n.pending).count() as i64;
        let fresh = notifications.len() as i64;
        let feed = to_feed(&notifications);
        let mut tx = self.begin()?;
        let (frames, due_now) = self.block(async {
            // A chunk written ahead waits, uncommitted, for the one before it
            // to commit, and that one may wait on a row lock of a third
            // transaction (another run's chunk or settle over the same
            // users) that waits on a row this chunk holds: a cycle through
            // the expansion's commit order, which PostgreSQL's deadlock
            // detector cannot see. A bounded lock wait breaks it: the chunk
            // fails, every chunk written after it rolls back, and the
            // expansion resumes from the run's cursor (`FlowRunActor`).
            sqlx::query("SET LOCAL lock_timeout = '5s'")
                .execute(&mut *tx)
                .await
                .map_err(db_err)?;
            let throttles: Vec<&ThrottleWrite> = notifications
                .iter()
                .filter_map(|n| n.throttle.as_ref())
                .collect();
            lock_slots(&mut tx, project, &throttles).await?;
            if throttles_stale(&mut tx, project, &throttles).await? {
                return Err(Refusal::StaleChunk.err());
            }
            let mut closes = Traces::default();
            let due_now = put_batches(&mut tx, project, &notifications, &mut closes)
                .await?
                .ok_or_else(|| Refusal::StaleChunk.err())?;
            let mut out = Outbound::load(&mut tx, [*project]).await?;
            let frames = self
                .write_notifications(
                    &mut tx,
                    project,
                    &run,
                    &notifications,
                    closes,
                    &mut out,
                    [&queued, &due_now],
                    feed,
                )
                .await?;
            out.flush(&mut tx).await?;
            Ok::<_, Error>((frames, due_now))
        })?;
        let mut queued = queued;
        queued.extend(due_now);
        Ok(PgWrittenChunk {
            store: self,
            tx,
            project: *project,
            run,
            pending,
            fresh,
            queued,
            frames,
        })
    }
}

impl RunRepo for PgStore {
    fn commit_run(&self, project: &Uuid, staged: StagedRun) -> Result<RunCommit> {
        let (run, users, notifications) = (staged.run, staged.users, staged.notifications);
        let (queued, body, idempotency) = (staged.queued, staged.body, staged.idempotency);
        let pending = notifications.iter().filter(|n| n.pending).count() as i64;
        let feed = to_feed(&notifications);
        // checked under the recipients' and their counters' locks, below
        let throttles: Vec<&ThrottleWrite> = notifications
            .iter()
            .filter_map(|n| n.throttle.as_ref())
            .collect();
        let mut tx = self.begin()?;
        let frames = self.block(async {
            lock_all(
                &mut tx,
                users
                    .iter()
                    .map(|u| user_lock(project, &u.external_id))
                    .collect(),
            )
            .await
            .map_err(db_err)?;
            for u in &users {
                if user_by_ext_in(&mut tx, project, &u.external_id).await? != u.before {
                    return Ok(None);
                }
            }
            lock_slots(&mut tx, project, &throttles).await?;
            if throttles_stale(&mut tx, project, &throttles).await? {
                return Ok(None);
            }
            let mut closes = Traces::default();
            let Some(due_now) = put_batches(&mut tx, project, &notifications, &mut closes).await?
            else {
                return Ok(None);
            };
            for u in &users {
                if u.before.as_ref() != Some(&u.after) {
                    put_user(&mut tx, project, &u.after).await?;
                }
            }
            let mut out = Outbound::load(&mut tx, [*project]).await?;
            let frames = self
                .write_notifications(
                    &mut tx,
                    project,
                    &run,
                    &notifications,
                    closes,
                    &mut out,
                    [&queued, &due_now],
                    feed,
                )
                .await?;
            put_run(&mut tx, project, &run, pending).await?;
            if !run.expanded {
                // this node expands the run it accepted (`WorkRepo`)
                self.lease_run(&mut tx, project, &run.id).await?;
            }
            out.stage(project, EventType::FlowRunAccepted, &run.id, || {
                run.accepted_view()
            });
            out.flush(&mut tx).await?;
            if let Some((scope, hash)) = &idempotency {
                let rec = IdempotentResponse {
                    payload_hash: hash.clone(),
                    status: 202,
                    body: body.clone(),
                    created_at: run.created_at,
                };
                // Another node may have taken the key meanwhile (the
                // requests sharing a key are serialised per node only).
                if !put_idempotent_new(&mut tx, project, scope, &rec).await? {
                    return Err(Refusal::IdempotencyRace.err());
                }
            }
            Ok::<_, Error>(Some((frames, due_now)))
        })?;
        let Some((frames, due_now)) = frames else {
            return Ok(RunCommit::Stale(run)); // rolled back as `tx` goes
        };
        self.commit(tx)?;
        let mut queued = queued;
        queued.extend(due_now);
        Ok(RunCommit::committed(run, body, queued, frames))
    }

    /// Nothing to encode ahead on this backend: the chunk is kept as staged.
    fn commit_chunk(&self, project: &Uuid, chunk: Prepared) -> Result<CommittedChunk> {
        Box::new(self.write_chunk_tx(project, chunk)?).commit()
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
