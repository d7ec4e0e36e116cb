//! The delivery queue and settling on PostgreSQL (`storage::QueueRepo`).
//! Settling locks the notifications of its deliveries (`FOR UPDATE`, in key
//! order) and applies the engine's rules (`delivery::settle`,
//! `rules::settle`), counting their runs down in its last statements (each
//! run's row held from there to the commit, not for the whole settle), with
//! the `delivery.*` and `notification.processed` events and the attempts'
//! trace entries in the same transaction. In-app deliveries whose condition
//! over earlier steps is false are skipped, not fed. The queue is rows
//! `(project, delivery, channel type, due)`, which a node claims with a
//! lease when several share the work (`work.rs`).

use super::events::{users_of, Outbound, Traces};
use super::{db_err, doc_of_opt, record_of, to_body, PgStore, DELIVERIES_OF_EACH};
use crate::delivery::settle;
use crate::delivery::tally::Tally;
use crate::error::{Error, Result};
use crate::events::EventType;
use crate::model::{
    notification_of, ChannelType, Delivery, DeliveryStatus, FlowRun, Notification, Timestamp,
};
use crate::rules;
use crate::rules::settle::SettledOne;
use crate::storage::*;
use crate::store::trace_codec;
use crate::trace::AttemptNotes;
use serde_json::Value;
use sqlx::{PgConnection, Row};
use std::collections::{BTreeSet, HashMap};
use uuid::Uuid;

use super::feed::*;
use super::rows::*;

/// Deliveries being settled with their notifications, locked.
pub(super) struct Settling {
    /// `(project, notification, its deliveries)`.
    recs: Vec<(Uuid, Notification, Vec<Delivery>)>,
    /// Each item's queue entry, outcome, record and delivery index.
    items: Vec<(QueueItem, Outcome, usize, usize)>,
}

impl Settling {
    fn delivery(&self, i: usize) -> &Delivery {
        let (_, _, ri, di) = &self.items[i];
        &self.recs[*ri].2[*di]
    }
}

/// Outcomes recorded whoever holds the delivery's lease: a cancellation,
/// and a wait, which sends nothing and only moves the delivery's due time.
/// A wait decided by a node that does not hold the lease (a digest rendered
/// when its batch closed early, by the node the close was handed to) must
/// still move the queue row: left where it was, the row would be claimed
/// again at once and the digest sent without waiting for its send window.
fn recorded_by_anyone(o: &Outcome) -> bool {
    matches!(o, Outcome::Canceled(_) | Outcome::Wait { .. })
}

/// Locks the notifications of `items` (in key order) and reads them with
/// their deliveries; items whose notification or delivery is gone are left
/// out (a delivery gone with its project or by erasure settles nothing). With `held`, so are attempts whose queue
/// row that node no longer holds (its lease was taken over: the new holder
/// records its own attempt); a cancellation or a wait is recorded whoever
/// holds it (`recorded_by_anyone`).
pub(super) async fn load_for_finish(
    conn: &mut PgConnection, mut items: Vec<(QueueItem, Outcome)>, held: Option<Uuid>,
) -> Result<Settling> {
    let keys: BTreeSet<(Uuid, Uuid)> = items
        .iter()
        .map(|(q, _)| (q.project, notification_of(&q.delivery_id)))
        .collect();
    let (ps, ns): (Vec<Uuid>, Vec<Uuid>) = keys.iter().copied().unzip();
    let rows = sqlx::query(
        "SELECT project, id, doc, body FROM notifications
         WHERE (project, id) IN (SELECT * FROM UNNEST($1::uuid[], $2::uuid[]))
         ORDER BY project, id FOR UPDATE",
    )
    .bind(&ps)
    .bind(&ns)
    .fetch_all(&mut *conn)
    .await
    .map_err(db_err)?;
    if let Some(node) = held {
        // after the notifications' locks, as a cancellation takes them
        let check: BTreeSet<(Uuid, Uuid)> = items
            .iter()
            .filter(|(_, o)| !recorded_by_anyone(o))
            .map(|(q, _)| (q.project, q.delivery_id))
            .collect();
        let (cps, cds): (Vec<Uuid>, Vec<Uuid>) = check.iter().copied().unzip();
        let mine: BTreeSet<(Uuid, Uuid)> = sqlx::query(
            "SELECT project, delivery_id FROM queue
             WHERE (project, delivery_id) IN (SELECT * FROM UNNEST($1::uuid[], $2::uuid[]))
               AND lease_owner = $3
             ORDER BY project, delivery_id FOR UPDATE",
        )
        .bind(&cps)
        .bind(&cds)
        .bind(node)
        .fetch_all(&mut *conn)
        .await
        .map_err(db_err)?
        .into_iter()
        .map(|r| (r.get("project"), r.get("delivery_id")))
        .collect();
        items.retain(|(q, o)| recorded_by_anyone(o) || mine.contains(&(q.project, q.delivery_id)));
    }
    let mut recs: Vec<(Uuid, Notification, Vec<Delivery>)> = Vec::with_capacity(rows.len());
    let mut at: HashMap<(Uuid, Uuid), usize> = HashMap::new();
    for r in rows {
        let p: Uuid = r.get("project");
        let n: Notification = record_of(&r, "doc", "body")?;
        at.insert((p, n.id), recs.len());
        recs.push((p, n, vec![]));
    }
    let rows = sqlx::query(&format!(
        "SELECT d.project, d.doc, d.body FROM UNNEST($1::uuid[], $2::uuid[]) AS k (p, nid)
         {DELIVERIES_OF_EACH} ORDER BY d.project, d.id"
    ))
    .bind(&ps)
    .bind(&ns)
    .fetch_all(&mut *conn)
    .await
    .map_err(db_err)?;
    for r in rows {
        let p: Uuid = r.get("project");
        let d: Delivery = record_of(&r, "doc", "body")?;
        if let Some(&i) = at.get(&(p, d.notification_id)) {
            recs[i].2.push(d);
        }
    }
    // Their runs are not locked here: `count_down` changes each run's
    // count last, so a run's row is held only from that statement to the
    // commit, and every transaction keeps one order (notifications, feeds,
    // runs) so none waits on another in a cycle.
    let mut loaded = vec![];
    for (q, o) in items {
        let Some(&ri) = at.get(&(q.project, notification_of(&q.delivery_id))) else {
            continue;
        };
        if let Some(di) = recs[ri].2.iter().position(|d| d.id == q.delivery_id) {
            loaded.push((q, o, ri, di));
        }
    }
    Ok(Settling {
        recs,
        items: loaded,
    })
}

/// Applies the outcomes: deliveries, their queue rows, notifications that
/// became processed and the runs they finish. Each attempt's trace entry
/// takes its note from `notes` (none: no provider call was made, an in-app
/// delivery).
pub(super) async fn stage_finish(
    conn: &mut PgConnection, settling: &mut Settling, notes: Option<&AttemptNotes>, now: Timestamp,
    out: &mut Outbound,
) -> Result<Finished> {
    let items = std::mem::take(&mut settling.items);
    let recs = &mut settling.recs;
    let mut written: Vec<Delivery> = Vec::with_capacity(items.len());
    let mut touched = vec![false; recs.len()];
    // trace entries per touched notification (index in `recs`), encoded as
    // they are made (`trace_codec::Writer`)
    let mut traces_of: Vec<trace_codec::Writer> = recs
        .iter()
        .map(|(p, _, _)| trace_codec::Writer::new(trace_codec::project_time(p)))
        .collect();
    let mut requeue = vec![];
    // Queue rows to delete and deliveries to write, each in one statement
    // after the loop (a round trip per row held the run's lock for as many
    // round trips as the batch has deliveries). Nothing in the loop reads
    // them back; the deletes go before `requeue`'s inserts, as they did.
    let mut unqueued: Vec<(Uuid, Uuid)> = vec![];
    let mut saved: BTreeSet<(usize, usize)> = BTreeSet::new();
    // The cancellation keys of the runs whose deliveries are canceled here
    // (a cancellation settles many of one run), each read once.
    let mut cancel_keys: HashMap<Uuid, Option<String>> = HashMap::new();
    // Index entries of deliveries that settled as sent (`feedback`).
    let mut sent_index = vec![];
    // Deliveries made due sooner (`rules::settle::SettledOne::Applied`).
    let mut pulled_all: Vec<QueueItem> = vec![];
    // A settle may hand on others of the notification to settle in this
    // write (`SettledOne::Applied::then`): they join the end of the work.
    let mut work: std::collections::VecDeque<_> = items.into();
    while let Some((q, o, ri, di)) = work.pop_front() {
        let p = recs[ri].0;
        let old = recs[ri].2[di].status;
        let facts = notes.and_then(|n| n.take_gate(&q.delivery_id));
        let settled = rules::settle::settle_one(&mut recs[ri].2, di, &q, o, now, facts.as_ref());
        let SettledOne::Applied {
            was_attempt,
            gate,
            next,
            after,
            route,
            pulled,
            then,
        } = settled
        else {
            unqueued.push((q.project, q.delivery_id));
            continue;
        };
        for (i, tq, to) in then {
            work.push_back((tq, to, ri, i));
        }
        for e in gate.iter().chain(route.iter()) {
            traces_of[ri].push_entry(e);
        }
        for (pi, pq) in pulled {
            saved.insert((ri, pi));
            pulled_all.push(pq);
        }
        match next {
            Some(nq) => requeue.push(nq),
            None => unqueued.push((q.project, q.delivery_id)),
        }
        let d = &mut recs[ri].2[di];
        saved.insert((ri, di));
        out.stage_delivery(&p, d);
        if old != d.status {
            if let Some(e) = crate::feedback::sent_message(d) {
                sent_index.push((p, e));
            }
        }
        if d.status == DeliveryStatus::Canceled {
            let run = recs[ri].1.flow_run_id;
            let key = match cancel_keys.get(&run) {
                Some(k) => k.clone(),
                None => {
                    // the key alone, not the run's whole document (its flow copy)
                    let k: Option<String> = sqlx::query_scalar(
                        "SELECT doc->>'cancellation_key' FROM flow_runs WHERE project = $1 AND id = $2",
                    )
                    .bind(p)
                    .bind(run)
                    .fetch_optional(&mut *conn)
                    .await
                    .map_err(db_err)?
                    .flatten();
                    cancel_keys.insert(run, k.clone());
                    k
                }
            };
            let d = &recs[ri].2[di];
            traces_of[ri].push_entry(&crate::trace::canceled(d, key.as_deref(), now));
        }
        let d = &recs[ri].2[di];
        let note = notes.and_then(|n| n.take(&d.id));
        crate::trace::settled_into(d, was_attempt, note, now, &mut traces_of[ri]);
        if let Some(e) = after {
            traces_of[ri].push_entry(&e);
        }
        written.push(d.clone());
        touched[ri] = true;
    }
    unqueue_all(conn, &unqueued).await?;
    save_deliveries(
        conn,
        saved.iter().map(|&(ri, di)| (recs[ri].0, &recs[ri].2[di])),
    )
    .await?;
    super::feedback::put_sent_messages(conn, &sent_index).await?;
    put_queue(conn, &requeue, None).await?;
    // Those this node requeued here it waits on itself (their leases kept).
    let held: BTreeSet<(Uuid, Uuid)> = requeue.iter().map(|q| (q.project, q.delivery_id)).collect();
    pull_queue(conn, &pulled_all, &held).await?;
    let mut run_done: HashMap<(Uuid, Uuid), i64> = HashMap::new();
    let mut traces = Traces::default();
    let (mut nps, mut nids, mut ndocs) = (vec![], vec![], vec![]);
    // Notifications that became processed (index in `recs`), for their events.
    let mut done = vec![];
    for (ri, (((p, n, ds), t), mut trace)) in
        recs.iter_mut().zip(touched).zip(traces_of).enumerate()
    {
        if !t {
            continue;
        }
        // A notification's record changes in a settle only when it becomes
        // processed (its deliveries are rows of their own): only then is its
        // row rewritten. Rewriting every touched one cost a dead tuple and
        // new index entries per settle (the update is never HOT: `processed`
        // is in a partial index's predicate).
        if settle::notification_done(n, ds, now) {
            *run_done.entry((*p, n.flow_run_id)).or_default() += 1;
            if out.wants(p, EventType::NotificationProcessed) {
                done.push(ri);
            }
            crate::trace::processed_into(now, &mut trace);
            nps.push(*p);
            nids.push(n.id);
            ndocs.push(to_body(&*n));
        }
        traces.add_part(p, &n.id, trace.finish());
    }
    if !nps.is_empty() {
        // The notifications that became processed (locked since
        // `load_for_finish`), in one statement.
        sqlx::query(
            "UPDATE notifications AS n SET processed = true, body = x.body, doc = NULL
             FROM UNNEST($1::uuid[], $2::uuid[], $3::bytea[]) AS x (p, id, body)
             WHERE n.project = x.p AND n.id = x.id",
        )
        .bind(&nps)
        .bind(&nids)
        .bind(&ndocs)
        .execute(&mut *conn)
        .await
        .map_err(db_err)?;
    }
    if !done.is_empty() {
        stage_processed(conn, recs, &done, out).await?;
    }
    traces.flush(&mut *conn).await?;
    let runs_processed = count_down(conn, &run_done, now).await?;
    Ok((written, runs_processed, pulled_all))
}

/// Moves the queue rows of `items` (pending deliveries made due sooner) to
/// their new due time, in one statement. A row that is gone (its delivery
/// settled) stays gone.
async fn pull_queue(
    conn: &mut PgConnection, items: &[QueueItem], held: &BTreeSet<(Uuid, Uuid)>,
) -> Result<()> {
    if items.is_empty() {
        return Ok(());
    }
    // One row each, the earliest time (an UPDATE takes a row once).
    let mut by: std::collections::BTreeMap<(Uuid, Uuid), i64> = Default::default();
    for q in items {
        let e = by.entry((q.project, q.delivery_id)).or_insert(q.due_ms);
        *e = (*e).min(q.due_ms);
    }
    let free: Vec<bool> = by.keys().map(|k| !held.contains(k)).collect();
    let (keys, due): (Vec<(Uuid, Uuid)>, Vec<i64>) = by.into_iter().unzip();
    let (ps, ds): (Vec<Uuid>, Vec<Uuid>) = keys.into_iter().unzip();
    // A row that was not due yet is freed for whichever node sees it due
    // now. A row due already keeps its lease: its holder has it in flight
    // (an attempt deciding to wait, whose settle decides again under the
    // notification's lock) or about to be; freed, another node could claim
    // and send it while that attempt sends it too. So does a row `held`:
    // this node just requeued it and waits on it itself, until the sooner
    // time (the channel actor's `flushed`).
    sqlx::query(
        "UPDATE queue AS q SET due_ms = x.due,
             lease_owner = CASE WHEN x.free AND q.due_ms > x.due THEN NULL ELSE q.lease_owner END,
             lease_until = CASE WHEN x.free AND q.due_ms > x.due THEN NULL ELSE q.lease_until END
         FROM UNNEST($1::uuid[], $2::uuid[], $3::int8[], $4::bool[]) AS x (p, d, due, free)
         WHERE q.project = x.p AND q.delivery_id = x.d",
    )
    .bind(&ps)
    .bind(&ds)
    .bind(&due)
    .bind(&free)
    .execute(conn)
    .await
    .map_err(db_err)?;
    Ok(())
}

/// The `notification.processed` events of the notifications of `recs` at
/// `done` (they just became processed), with their users and their runs'
/// data, each read once.
pub(super) async fn stage_processed(
    conn: &mut PgConnection, recs: &[(Uuid, Notification, Vec<Delivery>)], done: &[usize],
    out: &mut Outbound,
) -> Result<()> {
    let users = users_of(conn, done.iter().map(|&ri| (&recs[ri].0, &recs[ri].1))).await?;
    let runs: BTreeSet<(Uuid, Uuid)> = done
        .iter()
        .map(|&ri| (recs[ri].0, recs[ri].1.flow_run_id))
        .collect();
    let (ps, ids): (Vec<Uuid>, Vec<Uuid>) = runs.into_iter().unzip();
    // the data alone, not the run's whole document (its flow copy)
    let rows = sqlx::query(
        "SELECT project, id, doc->'data' AS data FROM flow_runs
         WHERE (project, id) IN (SELECT * FROM UNNEST($1::uuid[], $2::uuid[]))",
    )
    .bind(&ps)
    .bind(&ids)
    .fetch_all(&mut *conn)
    .await
    .map_err(db_err)?;
    let mut data: HashMap<(Uuid, Uuid), Value> = HashMap::with_capacity(rows.len());
    for r in &rows {
        let d: Option<Value> = doc_of_opt(r, "data")?;
        data.insert((r.get("project"), r.get("id")), d.unwrap_or(Value::Null));
    }
    for &ri in done {
        let (p, n, ds) = &recs[ri];
        let d = data.get(&(*p, n.flow_run_id)).unwrap_or(&Value::Null);
        out.stage_notification(p, n, ds, d, &users);
    }
    Ok(())
}

/// Counts the runs of `done` (notifications that became processed, per
/// run) down, the last statement of a settle: one `UPDATE … RETURNING` per
/// run takes its row lock there, so the run's other settles and its topic
/// chunks wait for this one's commit only, not for its whole transaction.
/// A run's record is read and written back only when its count reached
/// zero (`settle::run_done` then decides whether it is processed: not
/// before its expansion is done). The runs processed.
pub(super) async fn count_down(
    conn: &mut PgConnection, done: &HashMap<(Uuid, Uuid), i64>, now: Timestamp,
) -> Result<Vec<(Uuid, Uuid)>> {
    let mut runs_processed = vec![];
    // in key order, as every transaction takes several runs' rows
    let runs: BTreeSet<(Uuid, Uuid)> = done.keys().copied().collect();
    for (p, rid) in runs {
        let k = done[&(p, rid)];
        let Some(r) = sqlx::query(
            "UPDATE flow_runs SET pending = GREATEST(pending - $3, 0)
             WHERE project = $1 AND id = $2
             RETURNING pending, CASE WHEN pending = 0 AND NOT processed THEN doc END AS doc",
        )
        .bind(p)
        .bind(rid)
        .bind(k)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_err)?
        else {
            continue;
        };
        let Some(mut run) = doc_of_opt::<FlowRun>(&r, "doc")? else {
            continue;
        };
        if settle::run_done(&mut run, now) {
            save_processed(conn, &p, &run).await?;
            runs_processed.push((p, rid));
        }
    }
    Ok(runs_processed)
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

    fn settle(&self, items: &[(QueueItem, Outcome)], notes: &AttemptNotes) -> Result<Finished> {
        let now = Timestamp::now();
        let mut tx = self.begin()?;
        let done = self.block(async {
            let mut s = load_for_finish(&mut tx, items.to_vec(), Some(self.node())).await?;
            let mut out = Outbound::load(&mut tx, s.recs.iter().map(|r| r.0)).await?;
            let done = stage_finish(&mut tx, &mut s, Some(notes), now, &mut out).await?;
            out.flush(&mut tx).await?;
            Ok::<_, Error>(done)
        })?;
        self.commit(tx)?;
        Tally::record(&done.0, now);
        Ok(done)
    }

    fn deliver_in_app(&self, items: &[QueueItem], notes: &AttemptNotes) -> Result<InAppBatch> {
        let now = Timestamp::now();
        let mut tx = self.begin()?;
        let (out, written) = self.block(async {
            let sent = items
                .iter()
                .map(|q| (*q, Outcome::Sent { outcomes: None }))
                .collect();
            let mut s = load_for_finish(&mut tx, sent, Some(self.node())).await?;
            s.items
                .retain(|(_, _, ri, di)| !s.recs[*ri].2[*di].status.is_final());
            // Rendered with their batch first (`delivery::batch::due`).
            let mut batched = vec![];
            s.items.retain(|(q, _, ri, di)| {
                let waits = s.recs[*ri].2[*di].batch;
                if waits {
                    batched.push(*q);
                }
                !waits
            });
            // A gate over presence whose facts the engine has not noted yet
            // goes back to it (`InAppBatch::need_facts`).
            let mut need_facts = vec![];
            s.items.retain(|(q, _, ri, di)| {
                let d = &s.recs[*ri].2[*di];
                let needs = crate::delivery::route::needs_presence(d)
                    && notes.gate_facts(&q.delivery_id).is_none();
                if needs {
                    need_facts.push((*q, d.recipient_id));
                }
                !needs
            });
            let mut counts = lock_feeds(
                &mut tx,
                s.items
                    .iter()
                    .map(|(q, _, ri, di)| (q.project, s.recs[*ri].2[*di].recipient_id)),
            )
            .await?;
            // which recipients still exist, in one statement
            let exists = existing_users(&mut tx, counts.keys().copied()).await?;
            let mut plan = settle::in_app_feeds(
                s.items
                    .iter()
                    .map(|(q, _, ri, di)| (q, &s.recs[*ri].2[*di])),
                |p, u| Ok(exists.contains(&(*p, *u))),
            )?;
            for i in std::mem::take(&mut plan.skipped) {
                s.items[i].1 = settle::recipient_deleted();
            }
            // Deliveries whose condition over earlier steps (and presence) is
            // false now, or
            // whose route says skip or wait, do not enter the feed
            // (`delivery::route::at_due`); the notification's deliveries
            // were read under its lock.
            let held: Vec<(usize, Outcome)> = s
                .items
                .iter()
                .enumerate()
                .filter_map(|(i, (q, _, ri, di))| {
                    let ds = &s.recs[*ri].2;
                    crate::delivery::route::at_due_settling(q, &ds[*di], ds, now, notes)
                        .map(|o| (i, o))
                })
                .collect();
            let mut requeued = vec![];
            if !held.is_empty() {
                for (_, idx) in &mut plan.feeds {
                    idx.retain(|i| !held.iter().any(|(h, _)| h == i));
                }
                plan.feeds.retain(|(_, idx)| !idx.is_empty());
                for (i, o) in held {
                    if let Outcome::Wait { at } = &o {
                        requeued.push(QueueItem {
                            due_ms: at.millis(),
                            ..s.items[i].0
                        });
                    }
                    s.items[i].1 = o;
                }
            }
            let mut out = InAppBatch {
                batched,
                need_facts,
                requeued,
                ..Default::default()
            };
            // The entries, their actors and events, each table in one
            // statement for the batch (`write_feeds`).
            let entering: Vec<(Uuid, Delivery)> = plan
                .feeds
                .into_iter()
                .flat_map(|((p, _), idx)| idx.into_iter().map(move |i| (p, i)))
                .map(|(p, i)| (p, settle::entering_feed(s.delivery(i), now)))
                .collect();
            let actors = actors_of(&mut tx, entering.iter().map(|(p, d)| (*p, d))).await?;
            let mut feed = Vec::with_capacity(entering.len());
            for (p, d) in entering {
                let actor = d
                    .actor_id
                    .and_then(|a| actors.get(&(p, a)).cloned())
                    .unwrap_or(Value::Null);
                let json = entry_json(&d, &actor)?;
                feed.push((p, d, json));
            }
            out.frames = write_feeds(&mut tx, &mut counts, feed).await?;
            out.settled = s.items.len();
            let mut events = Outbound::load(&mut tx, s.recs.iter().map(|r| r.0)).await?;
            let (written, runs, pulled) =
                stage_finish(&mut tx, &mut s, Some(notes), now, &mut events).await?;
            events.flush(&mut tx).await?;
            out.runs = runs;
            out.pulled = pulled;
            Ok::<_, Error>((out, written))
        })?;
        self.commit(tx)?;
        Tally::record(&written, now);
        Ok(out)
    }
}
