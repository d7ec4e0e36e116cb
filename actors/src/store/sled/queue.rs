//! The delivery queue and settling in the sled store (`storage::QueueRepo`):
//! outcomes recorded under the notifications' and runs' locks (`Settling`),
//! notifications and runs marked processed as their last delivery settles,
//! by the engine's rules (`delivery::settle`, `rules::settle`).

use super::super::trace_codec;
use super::feed::feed_lock_key;
use super::keys::Key;
use super::records::NotifRec;
use super::runs::*;
use super::{Store, Writes, T};
use crate::delivery::frames::{actor_json, FeedEvent};
use crate::delivery::settle;
use crate::delivery::tally::Tally;
use crate::error::Result;
use crate::model::*;
use crate::rules;
use crate::rules::settle::SettledOne;
use crate::storage::*;
use crate::storage::{Finished, Outcome, QueueItem};
use crate::trace::AttemptNotes;
use serde_json::Value;
use std::collections::HashMap;
use uuid::Uuid;

impl Store {
    /// Locks the notifications of `items` and loads them with the deliveries
    /// the items settle, then locks their runs (see `Settling`).
    pub(super) fn load_for_finish<'a>(
        &self, items: impl IntoIterator<Item = (&'a QueueItem, Outcome)>,
    ) -> Result<Settling<'_>> {
        let items: Vec<(QueueItem, Outcome)> = items.into_iter().map(|(q, o)| (*q, o)).collect();
        let nkeys: Vec<Vec<u8>> = items
            .iter()
            .map(|(q, _)| {
                Key::new()
                    .u8(b'n')
                    .id(&q.project)
                    .id(&notification_of(&q.delivery_id))
                    .0
            })
            .collect();
        let notif_guards = self.lock_many(nkeys.iter().map(|k| k.as_slice()));
        let mut recs: Vec<((Uuid, Uuid), NotifRec)> = vec![];
        let mut at: HashMap<(Uuid, Uuid), usize> = HashMap::new();
        let mut loaded = vec![];
        for (q, o) in items {
            let key = (q.project, notification_of(&q.delivery_id));
            let ri = match at.get(&key) {
                Some(&i) => i,
                None => match self.notif_rec(&key.0, &key.1)? {
                    Some(r) => {
                        recs.push((key, r));
                        at.insert(key, recs.len() - 1);
                        recs.len() - 1
                    }
                    None => continue,
                },
            };
            if let Some(di) = recs[ri].1.d.iter().position(|d| d.id == q.delivery_id) {
                loaded.push((q, o, ri, di));
            }
        }
        let rkeys: Vec<Vec<u8>> = recs
            .iter()
            .map(|((p, _), r)| run_lock_key(p, &r.n.flow_run_id))
            .collect();
        let run_guards = self.lock_runs(rkeys.iter().map(|k| k.as_slice()));
        Ok(Settling {
            recs,
            items: loaded,
            _guards: (notif_guards, run_guards),
        })
    }

    /// Records the outcomes of attempts, plus `extra` writes staged by the caller,
    /// in one commit (see `stage_finish`). Returns the deliveries as written and
    /// the runs that became processed.
    pub(crate) fn finish_deliveries(
        &self, items: &[(QueueItem, Outcome)], notes: &AttemptNotes, extra: Writes,
    ) -> Result<Finished> {
        let mut w = extra;
        let now = Timestamp::now();
        let mut settling = self.load_for_finish(items.iter().map(|(q, o)| (q, o.clone())))?;
        let (written, runs, pulled) = self.stage_finish(&mut w, &mut settling, Some(notes), now)?;
        self.commit(w)?;
        drop(settling); // the locks, after the commit
        Tally::record(&written, now);
        Ok((written, runs, pulled))
    }

    /// Stages the outcomes into `w`: each notification touched is rewritten once,
    /// `processed` when its deliveries have all settled, and runs whose
    /// notifications have all been processed are marked so. The caller keeps
    /// `settling` (its locks) until it has committed `w`. Each attempt's
    /// trace entry takes its note from `notes` (none: no provider call was
    /// made, an in-app delivery).
    pub(super) fn stage_finish(
        &self, w: &mut Writes, settling: &mut Settling<'_>, notes: Option<&AttemptNotes>,
        now: Timestamp,
    ) -> Result<Finished> {
        let mut recs = std::mem::take(&mut settling.recs);
        let items = std::mem::take(&mut settling.items);
        let mut written: Vec<Delivery> = Vec::with_capacity(items.len());
        let mut touched: Vec<bool> = vec![false; recs.len()];
        // Trace entries per touched notification (index in `recs`), encoded
        // as they are made (`trace_codec::Writer`).
        let mut traces: Vec<trace_codec::Writer> = recs
            .iter()
            .map(|((p, _), _)| trace_codec::Writer::new(trace_codec::project_time(p)))
            .collect();
        // The cancellation keys of the runs whose deliveries are canceled
        // here (a cancellation settles many of one run), each read once.
        let mut cancel_keys: HashMap<Uuid, Option<String>> = HashMap::new();
        let mut pulled_all = vec![];
        // A settle may hand on others of the notification to settle in this
        // write (`SettledOne::Applied::then`): they join the end of the work.
        let mut work: std::collections::VecDeque<_> = items.into();
        while let Some((q, o, ri, di)) = work.pop_front() {
            let old = recs[ri].1.d[di].status;
            let facts = notes.and_then(|n| n.take_gate(&q.delivery_id));
            let (was_attempt, next, after) = match rules::settle::settle_one(
                &mut recs[ri].1.d,
                di,
                &q,
                o,
                now,
                facts.as_ref(),
            ) {
                SettledOne::AlreadyFinal => {
                    w.del(T::queue, q.key());
                    continue;
                }
                SettledOne::Applied {
                    was_attempt,
                    gate,
                    next,
                    after,
                    route,
                    pulled,
                    then,
                } => {
                    for (i, tq, to) in then {
                        work.push_back((tq, to, ri, i));
                    }
                    for e in gate.iter().chain(route.iter()) {
                        traces[ri].push_entry(e);
                    }
                    // Written with the notification's record below.
                    for (_, pq) in pulled {
                        w.put(T::queue, pq.key(), pq.value());
                        pulled_all.push(pq);
                    }
                    (was_attempt, next, after)
                }
            };
            match next {
                Some(nq) => w.put(T::queue, nq.key(), nq.value()),
                None => w.del(T::queue, q.key()),
            }
            let d = &mut recs[ri].1.d[di];
            if old != d.status && status_indexed(d.status) {
                w.put(
                    T::deliv_by_status,
                    Key::new().id(&q.project).u8(d.status.index()).id(&d.id),
                    b"",
                );
            }
            self.stage_delivery_event(w, &q.project, d);
            if old != d.status {
                if let Some(e) = crate::feedback::sent_message(d) {
                    self.stage_sent_message(w, &q.project, &e);
                }
            }
            let note = notes.and_then(|n| n.take(&d.id));
            if d.status == DeliveryStatus::Canceled {
                let run = recs[ri].1.n.flow_run_id;
                let key = match cancel_keys.get(&run) {
                    Some(k) => k.clone(),
                    None => {
                        let k = self
                            .flow_run(&q.project, &run)?
                            .and_then(|r| r.cancellation_key);
                        cancel_keys.insert(run, k.clone());
                        k
                    }
                };
                let d = &recs[ri].1.d[di];
                traces[ri].push_entry(&crate::trace::canceled(d, key.as_deref(), now));
            }
            let d = &recs[ri].1.d[di];
            crate::trace::settled_into(d, was_attempt, note, now, &mut traces[ri]);
            if let Some(e) = after {
                traces[ri].push_entry(&e);
            }
            written.push(d.clone());
            touched[ri] = true;
        }
        // Notifications whose deliveries have all settled.
        let mut run_done: HashMap<(Uuid, Uuid), u64> = HashMap::new();
        // The runs' data, for the notifications' events, each read once.
        let mut run_data: HashMap<Uuid, Value> = HashMap::new();
        let none = HashMap::new();
        for ((((p, nid), rec), t), mut trace) in recs.iter_mut().zip(touched).zip(traces) {
            if !t {
                continue;
            }
            if settle::notification_done(&mut rec.n, &rec.d, now) {
                *run_done.entry((*p, rec.n.flow_run_id)).or_default() += 1;
                let run = rec.n.flow_run_id;
                let mut data = || -> Result<Value> {
                    if let Some(d) = run_data.get(&run) {
                        return Ok(d.clone());
                    }
                    let d = self.flow_run(p, &run)?.map_or(Value::Null, |r| r.data);
                    run_data.insert(run, d.clone());
                    Ok(d)
                };
                self.stage_notification_events(w, p, &rec.n, &rec.d, &mut data, &none)?;
                crate::trace::processed_into(now, &mut trace);
            }
            self.stage_trace_part(w, p, nid, trace.finish());
            w.put_rec(T::notifications, notif_key(p, nid), &*rec);
        }
        let mut runs_processed = vec![];
        for ((p, rid), k) in run_done {
            // The small counter, not the run record (which holds the flow), is what
            // changes per notification; the record is rewritten once, at the end.
            let pk = Key::new().id(&p).id(&rid);
            let left = self.run_pending(&pk)?.saturating_sub(k);
            w.put(T::run_pending, &pk, left.to_be_bytes());
            if left == 0 {
                if let Some(mut run) = self.flow_run(&p, &rid)? {
                    if settle::run_done(&mut run, now) {
                        w.del(T::runs_active, Key::new().id(&rid).id(&p));
                        w.put_rec(T::flow_runs, Key::new().id(&p).id(&rid), &run);
                        runs_processed.push((p, rid));
                    }
                }
            }
        }
        Ok((written, runs_processed, pulled_all))
    }
}

/// Deliveries being settled: their notifications, loaded under the
/// notifications' locks (entity class) and with their runs' locks (run class)
/// held, which this value keeps until it is dropped. Every writer of a
/// notification record holds its lock from reading it to committing, so two
/// channels settling deliveries of one notification never lose an update.
pub(crate) struct Settling<'s> {
    recs: Vec<((Uuid, Uuid), NotifRec)>,
    /// `(item, outcome, index in recs, index of the delivery in its record)`.
    items: Vec<(QueueItem, Outcome, usize, usize)>,
    _guards: (Guards<'s>, Guards<'s>),
}

impl Settling<'_> {
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn delivery(&self, i: usize) -> &Delivery {
        let (_, _, ri, di) = &self.items[i];
        &self.recs[*ri].1.d[*di]
    }

    /// The queue item and delivery of each item, in order.
    pub fn deliveries(&self) -> impl Iterator<Item = (&QueueItem, &Delivery)> {
        self.items
            .iter()
            .map(|(q, _, ri, di)| (q, &self.recs[*ri].1.d[*di]))
    }

    pub fn set_outcome(&mut self, i: usize, o: Outcome) {
        self.items[i].1 = o;
    }

    /// Drops the items whose delivery waits for its batch to be rendered
    /// (`Delivery::batch`) and returns them.
    pub fn take_batched(&mut self) -> Vec<QueueItem> {
        let recs = &self.recs;
        let mut out = vec![];
        self.items.retain(|(q, _, ri, di)| {
            let waits = recs[*ri].1.d[*di].batch;
            if waits {
                out.push(*q);
            }
            !waits
        });
        out
    }

    /// Drops the items whose gate names the recipient's presence and has
    /// no facts noted in `notes`, and returns them with their recipients.
    pub fn take_unnoted(&mut self, notes: &AttemptNotes) -> Vec<(QueueItem, Uuid)> {
        let recs = &self.recs;
        let mut out = vec![];
        self.items.retain(|(q, _, ri, di)| {
            let d = &recs[*ri].1.d[*di];
            let needs = crate::delivery::route::needs_presence(d)
                && notes.gate_facts(&q.delivery_id).is_none();
            if needs {
                out.push((*q, d.recipient_id));
            }
            !needs
        });
        out
    }

    /// Drops items whose delivery has already settled.
    pub fn retain_unsettled(&mut self) {
        let recs = &self.recs;
        self.items
            .retain(|(_, _, ri, di)| !recs[*ri].1.d[*di].status.is_final());
    }
}

impl QueueRepo for Store {
    /// Every queued delivery of one channel type, in due order (recovery).
    fn queue_items(&self, ct: ChannelType) -> Result<Vec<QueueItem>> {
        let mut out = vec![];
        for kv in self.tree(T::queue).iter() {
            let (k, v) = kv?;
            if let Some(q) = QueueItem::from_kv(&k, &v).filter(|q| q.channel_type == ct) {
                out.push(q);
            }
        }
        out.sort_by_key(|q| q.due_ms);
        Ok(out)
    }

    /// Settles due in_app deliveries of many users in one commit: per user, one
    /// read of the counts, a feed entry and an event per delivery, and the counts
    /// once; then the deliveries are marked sent (or skipped when the recipient was
    /// deleted) with notification and run completion. The caller waits for
    /// durability before pushing the returned frames.
    fn deliver_in_app(&self, items: &[QueueItem], notes: &AttemptNotes) -> Result<InAppBatch> {
        let now = Timestamp::now();
        let mut settling =
            self.load_for_finish(items.iter().map(|q| (q, Outcome::Sent { outcomes: None })))?;
        settling.retain_unsettled();
        // Rendered with their batch first (`delivery::batch::due`).
        let batched = settling.take_batched();
        // A gate over presence whose facts the engine has not noted yet goes
        // back to it (`InAppBatch::need_facts`).
        let need_facts = settling.take_unnoted(notes);
        let feed_keys: Vec<Vec<u8>> = settling
            .deliveries()
            .map(|(q, d)| feed_lock_key(&q.project, &d.recipient_id))
            .collect();
        let _feeds = self.lock_feeds(feed_keys.iter().map(|k| k.as_slice()));

        let mut plan =
            settle::in_app_feeds(settling.deliveries(), |p, u| Ok(self.user(p, u)?.is_some()))?;
        for i in plan.skipped {
            settling.set_outcome(i, settle::recipient_deleted());
        }
        // Deliveries whose condition over earlier steps (and presence) is
        // false now, or
        // whose route says skip or wait, do not enter the feed
        // (`delivery::route::at_due`, with the flags of the feed entries).
        let mut held = vec![];
        for (i, (q, d)) in settling.deliveries().enumerate() {
            if crate::delivery::route::needs_check(d) {
                let all = self.notification_deliveries(&q.project, &d.notification_id)?;
                if let Some(o) = crate::delivery::route::at_due_settling(q, d, &all, now, notes) {
                    held.push((i, o));
                }
            }
        }
        let mut requeued = vec![];
        if !held.is_empty() {
            for (_, idx) in &mut plan.feeds {
                idx.retain(|i| !held.iter().any(|(h, _)| h == i));
            }
            plan.feeds.retain(|(_, idx)| !idx.is_empty());
            for (i, o) in held {
                if let Outcome::Wait { at } = &o {
                    let (q, _) = settling.deliveries().nth(i).expect("in the batch");
                    requeued.push(QueueItem {
                        due_ms: at.millis(),
                        ..*q
                    });
                }
                settling.set_outcome(i, o);
            }
        }
        let mut w = Writes::new();
        let mut out = InAppBatch {
            batched,
            need_facts,
            requeued,
            ..Default::default()
        };
        let mut actors: HashMap<(Uuid, Uuid), Value> = HashMap::new();
        for ((p, u), idx) in plan.feeds {
            let mut counts = self.feed_counts_locked(&p, &u)?;
            let mut frames = Vec::with_capacity(idx.len());
            for i in idx {
                let d = &settle::entering_feed(settling.delivery(i), now);
                self.stage_feed_insert(&mut w, &p, d, &mut counts);
                // Actors shown on the entries, each read once per batch.
                let actor = match d.actor_id {
                    Some(a) => match actors.entry((p, a)) {
                        std::collections::hash_map::Entry::Occupied(e) => &*e.into_mut(),
                        std::collections::hash_map::Entry::Vacant(e) => {
                            &*e.insert(actor_json(self.user(&p, &a)?.as_ref()))
                        }
                    },
                    None => &Value::Null,
                };
                // The frame shows the entry (no send time), so the delivery
                // as loaded serves.
                frames.push(self.stage_feed_event(
                    &mut w,
                    &p,
                    &u,
                    FeedEvent::Created,
                    d,
                    actor,
                    &mut counts,
                )?);
            }
            out.frames.push((p, u, frames));
        }
        out.settled = settling.len();
        let (written, runs, pulled) = self.stage_finish(&mut w, &mut settling, Some(notes), now)?;
        out.pulled = pulled;
        let res = self.commit(w);
        for (p, u, _) in &out.frames {
            self.forget_feed_page(p, u);
        }
        drop(settling); // the locks, after the commit
        res?;
        Tally::record(&written, now);
        out.runs = runs;
        Ok(out)
    }

    fn settle(&self, items: &[(QueueItem, Outcome)], notes: &AttemptNotes) -> Result<Finished> {
        self.finish_deliveries(items, notes, super::Writes::new())
    }
}
