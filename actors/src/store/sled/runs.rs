//! Flow runs, notifications, deliveries and the delivery queue.
//!
//! What a run stores is decided in `delivery` (`accept`, `expand`); this
//! stores it. `commit_run` writes a run with explicit recipients, its users'
//! upserts, its notifications, its deliveries, their queue entries, feed
//! entries and events and the idempotency record in one atomic commit,
//! under its users' locks. Topic runs are stored first and expanded later in
//! chunks (`commit_chunk`), each chunk atomic with the run's expansion
//! cursor, so a crash resumes where it stopped. `finish_deliveries` records
//! outcomes and marks notifications and runs `processed` when their last
//! delivery settles.

use super::super::trace_codec;
use super::feed::feed_lock_key;
use super::keys::{uuid_at, Key};
use super::page::{key_range, packed_chunk, within, Bounds};
use super::records::{group_member, group_members, Grouper, NotifRec};
use super::users::user_lock_key;
use super::{codec, Space, Store, Writes, T};
use crate::delivery::frames::FeedEvent;
use crate::delivery::settle;
use crate::error::{Error, Result};
use crate::events::EventType;
use crate::model::*;
use crate::storage::Refusal;
use crate::storage::*;
use crate::storage::{
    IdempotentResponse, Prepared, QueueItem, RunCommit, StagedChunk, StagedNotification, StagedRun,
    UserFrames, UserWrite,
};
use std::collections::{BTreeMap, HashMap};
use uuid::Uuid;

/// The `queue` tree holds exactly the pending deliveries: key `(project,
/// delivery)`, value `(channel type, due ms)`. It is both the recovery list and the
/// `status=pending` index, so a delivery costs one entry there while pending and
/// none after (sent deliveries have no index entry at all).
impl QueueItem {
    pub(crate) fn key(&self) -> Key {
        Key::new().id(&self.project).id(&self.delivery_id)
    }
    pub(super) fn value(&self) -> [u8; 9] {
        let mut v = [0u8; 9];
        v[0] = self.channel_type.index();
        v[1..].copy_from_slice(&(self.due_ms.max(0) as u64).to_be_bytes());
        v
    }
    pub(super) fn from_kv(k: &[u8], v: &[u8]) -> Option<QueueItem> {
        if k.len() != 32 || v.len() != 9 {
            return None;
        }
        let mut due = [0u8; 8];
        due.copy_from_slice(&v[1..9]);
        Some(QueueItem {
            channel_type: ChannelType::from_index(v[0])?,
            due_ms: u64::from_be_bytes(due) as i64,
            project: uuid_at(k, 0),
            delivery_id: uuid_at(k, 16),
        })
    }
}

/// Deliveries whose final status is not `sent` or `delivered` are indexed by
/// status (they are the ones worth finding); `sent` and `delivered` ones are
/// found by scanning with a filter. A status a delivery leaves (`sent` for
/// `failed` on a provider's report) is never an indexed one, so an index
/// entry is never stale.
pub(super) fn status_indexed(s: DeliveryStatus) -> bool {
    matches!(
        s,
        DeliveryStatus::Failed
            | DeliveryStatus::Skipped
            | DeliveryStatus::Canceled
            | DeliveryStatus::Bounced
            | DeliveryStatus::Complained
    )
}

pub(crate) fn notif_key(project: &Uuid, nid: &Uuid) -> Key {
    Key::new().id(project).id(nid)
}

/// The packed index of a run's notifications (see `page::packed_chunk`).
pub(super) fn run_index(project: &Uuid, run: &Uuid) -> Key {
    Key::new().id(project).id(run)
}

/// The packed index of a topic's notifications.
pub(super) fn topic_index(project: &Uuid, topic: &str) -> Key {
    Key::new().id(project).str(topic)
}

/// The packed index of a flow's notifications (all its runs'; built for
/// data written before it by `flow_index::backfill`).
pub(super) fn flow_index(project: &Uuid, flow: &Uuid) -> Key {
    Key::new().id(project).id(flow)
}

/// The key, in a user's feed tree, that lists a notification for its recipient
/// when no feed entry does (see `stage_notification`).
pub(crate) fn recipient_marker(project: &Uuid, user: &Uuid, nid: &Uuid) -> Key {
    Key::new().id(project).id(user).id(nid)
}

/// Whether `key` is the lowest key of its notification's group (keys that share
/// the notification's first 15 bytes at `at`) in `tree`: lists with several keys
/// per notification show it once, at that key.
pub(super) fn first_of_group(tree: &Space<'_>, key: &[u8], at: usize) -> Result<bool> {
    let group = &key[..at + 15];
    Ok(tree.range(group..key).next().is_none())
}

/// The writes of notifications as the delivery rules staged them (see
/// `stage_notifications`), the in-app deliveries settled at once with their
/// feed entries' JSON (see `stage_feeds`), the notifications' ids and how
/// many are pending.
struct Part {
    w: Writes,
    feed: Vec<(Delivery, String)>,
    nids: Vec<Uuid>,
    pending: u64,
}

impl Store {
    /// Stages notifications and their deliveries as `delivery::accept`
    /// decided them: each record (grouped when nothing is pending, see
    /// `records::Grouper`), its status index, a recipient marker when no feed
    /// entry lists it, and the queue entries of `queued`. Takes no lock.
    fn stage_notifications(
        &self, project: &Uuid, run: &FlowRun, users: &[UserWrite],
        notifications: Vec<StagedNotification>, queued: &[QueueItem],
    ) -> Result<Part> {
        let p = project;
        // The users this change writes, for the notifications' events (the
        // others are read): only when an endpoint wants them.
        let known: HashMap<Uuid, &User> = if self.wants_notification_events(p) {
            users.iter().map(|u| (u.after.id, &u.after)).collect()
        } else {
            HashMap::new()
        };
        let mut part = Part {
            w: Writes::new(),
            feed: vec![],
            nids: Vec::with_capacity(notifications.len()),
            pending: 0,
        };
        let mut group = Grouper::default();
        self.stage_throttles(&mut part.w, p, &notifications);
        for sn in notifications {
            let StagedNotification {
                n,
                deliveries,
                to_feed,
                pending,
                throttle: _,
                batch: _,
                trace,
            } = sn;
            let nid = n.id;
            self.stage_accept_events(&mut part.w, p, &n, &deliveries, &run.data, &known)?;
            for d in &deliveries {
                if status_indexed(d.status) {
                    part.w.put(
                        T::deliv_by_status,
                        Key::new().id(p).u8(d.status.index()).id(&d.id),
                        b"",
                    );
                }
            }
            if to_feed.is_empty() {
                // No feed entry lists this notification for its recipient.
                part.w
                    .put(T::feed, recipient_marker(p, &n.recipient_id, &nid), b"");
            }
            let rec = NotifRec { n, d: deliveries };
            if pending {
                let t = trace_codec::encode_accepted(&trace, &rec.d);
                self.stage_trace_part(&mut part.w, p, &nid, t);
                part.w.put_rec(T::notifications, notif_key(p, &nid), &rec);
            } else {
                // In its group the trace is a stub beside the record it is
                // made from (`trace_codec::stub`); alone, it is written out.
                let t = trace_codec::stub(&trace, &rec.n)
                    .unwrap_or_else(|| trace_codec::encode_accepted(&trace, &rec.d));
                if let Some((alone, t)) = group.add(&nid, codec::enc(&rec), t) {
                    let t = if trace_codec::is_stub(&t) {
                        trace_codec::encode_accepted(&trace, &rec.d)
                    } else {
                        t
                    };
                    self.stage_trace_part(&mut part.w, p, &nid, t);
                    part.w.put(T::notifications, notif_key(p, &nid), alone);
                }
            }
            // The record is encoded: its in-app deliveries move on to the feed.
            let mut ds = rec.d;
            let mut moved: Vec<(Delivery, String)> = to_feed
                .into_iter()
                .rev()
                .map(|(i, json)| (ds.swap_remove(i), json))
                .collect();
            moved.reverse();
            part.feed.extend(moved);
            part.nids.push(nid);
            part.pending += pending as u64;
        }
        for (tail, v) in group.take() {
            part.w
                .put(T::notifications, Key::new().id(p).bytes(&tail), v);
        }
        for q in queued {
            part.w.put(T::queue, q.key(), q.value());
        }
        Ok(part)
    }

    /// Stages the feed entries and live-feed events of in_app deliveries settled
    /// with their notifications (`stage_notifications`), in order, and returns
    /// their frames per user. The caller holds the recipients' feed locks from
    /// here until it has committed (each user's counts and `seq` are read here).
    fn stage_feeds(
        &self, w: &mut Writes, project: &Uuid, feed: Vec<(Delivery, String)>,
    ) -> Result<UserFrames> {
        let mut frames: UserFrames = vec![];
        let mut at: HashMap<Uuid, (usize, FeedCounts)> = HashMap::new();
        for (d, json) in feed {
            let u = d.recipient_id;
            let (i, counts) = match at.entry(u) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    frames.push((*project, u, vec![]));
                    e.insert((frames.len() - 1, self.feed_counts_locked(project, &u)?))
                }
            };
            self.stage_feed_insert(w, project, &d, counts);
            let f =
                self.stage_feed_event_with(w, project, &u, FeedEvent::Created, &d, &json, counts)?;
            frames[*i].2.push(f);
        }
        Ok(frames)
    }

    /// The feed locks of the recipients of `feed`.
    fn lock_feeds_of(&self, project: &Uuid, feed: &[(Delivery, String)]) -> Guards<'_> {
        let keys: Vec<Vec<u8>> = feed
            .iter()
            .map(|(d, _)| feed_lock_key(project, &d.recipient_id))
            .collect();
        self.lock_feeds(keys.iter().map(|k| k.as_slice()))
    }

    /// Stages the packed index chunks of a run's new notifications `nids`: by run,
    /// by flow, and by topic for a topic run. Pending notifications need no
    /// index: they are the ones with deliveries in the queue.
    fn stage_run_indexes(&self, w: &mut Writes, project: &Uuid, run: &FlowRun, nids: &mut [Uuid]) {
        if let Some((k, v)) = packed_chunk(&run_index(project, &run.id), nids) {
            w.put(T::run_index, k, v);
        }
        if let Some((k, v)) = packed_chunk(&flow_index(project, &run.flow_id), nids) {
            w.put(T::flow_index, k, v);
        }
        if let Some(t) = &run.topic {
            if let Some((k, v)) = packed_chunk(&topic_index(project, t), nids) {
                w.put(T::topic_index, k, v);
            }
        }
    }

    pub(super) fn run_pending(&self, key: &Key) -> Result<u64> {
        Ok(match self.tree(T::run_pending).get(key)? {
            Some(v) if v.len() == 8 => {
                let mut b = [0u8; 8];
                b.copy_from_slice(&v);
                u64::from_be_bytes(b)
            }
            _ => 0,
        })
    }

    /// A notification's record: stored alone, or in its group (see
    /// `records::Grouper`).
    pub(crate) fn notif_rec(&self, project: &Uuid, nid: &Uuid) -> Result<Option<NotifRec>> {
        if let Some(r) = self.get_rec(T::notifications, notif_key(project, nid).as_ref())? {
            return Ok(Some(r));
        }
        let gk = Key::new().id(project).bytes(&nid.as_bytes()[..14]);
        let Some(v) = self.tree(T::notifications).get(gk)? else {
            return Ok(None);
        };
        match group_member(&v, nid)? {
            Some(m) => Ok(Some(codec::dec::<NotifRec>(m.rec)?).filter(|r| r.n.id == *nid)),
            None => Ok(None),
        }
    }

    /// Visits the project's notification records within bounds (on notification
    /// ids) in id order, descending when `rev`, until `f` returns false: records
    /// stored alone and groups' members, a record stored alone taking the place
    /// of a group's copy.
    pub(crate) fn visit_records(
        &self, project: &Uuid, bounds: Bounds, rev: bool, f: &mut dyn FnMut(NotifRec) -> bool,
    ) -> Result<()> {
        use std::ops::Bound;
        let p = Key::new().id(project);
        let n = p.0.len();
        // A group sorts just before its members: start from the lower bound's.
        let lo = match bounds.0 {
            Bound::Included(k) | Bound::Excluded(k) if k.len() >= 14 => Bound::Included(&k[..14]),
            other => other,
        };
        let (klo, khi) = key_range(&p.0, (lo, bounds.1));
        let it = self.tree(T::notifications).range::<Vec<u8>, _>((klo, khi));
        // Entries sharing a 14-byte prefix (a group and any record of one of
        // its members stored alone) are gathered, then emitted in order.
        let mut batch: Vec<(sled::IVec, sled::IVec)> = vec![];
        let mut flush = |batch: &mut Vec<(sled::IVec, sled::IVec)>| -> Result<bool> {
            let mut recs: BTreeMap<[u8; 16], Vec<u8>> = BTreeMap::new();
            for (k, v) in batch.drain(..) {
                let tail = &k[n..];
                let mut id = [0u8; 16];
                match tail.len() {
                    14 => {
                        for m in group_members(&v)? {
                            id[..14].copy_from_slice(tail);
                            id[14] = m.i;
                            id[15] = NOTIFICATION_TAG;
                            recs.entry(id).or_insert_with(|| m.rec.to_vec());
                        }
                    }
                    16 => {
                        id.copy_from_slice(tail);
                        recs.insert(id, v.to_vec());
                    }
                    _ => return Err(Error::internal("corrupt notification key")),
                }
            }
            let ordered: Box<dyn Iterator<Item = ([u8; 16], Vec<u8>)>> = if rev {
                Box::new(recs.into_iter().rev())
            } else {
                Box::new(recs.into_iter())
            };
            for (id, v) in ordered {
                if within(&id, bounds) && !f(codec::dec(&v)?) {
                    return Ok(false);
                }
            }
            Ok(true)
        };
        let mut step = |kv: sled::Result<(sled::IVec, sled::IVec)>| -> Result<bool> {
            let (k, v) = kv?;
            if k.len() < n + 14 {
                return Err(Error::internal("corrupt notification key"));
            }
            let same = batch
                .first()
                .is_some_and(|(b, _)| b[n..n + 14] == k[n..n + 14]);
            if !same && !flush(&mut batch)? {
                return Ok(false);
            }
            batch.push((k, v));
            Ok(true)
        };
        let entries: Box<dyn Iterator<Item = _>> = if rev {
            Box::new(it.rev())
        } else {
            Box::new(it)
        };
        for kv in entries {
            if !step(kv)? {
                return Ok(());
            }
        }
        flush(&mut batch)?;
        Ok(())
    }
}

/// A chunk of a topic run's expansion, encoded and waiting for its commit.
struct PreparedChunk {
    part: Part,
    run: FlowRun,
    queued: Vec<QueueItem>,
    /// Opens and joins of batches, applied under their locks at commit.
    batches: Vec<crate::storage::BatchWrite>,
    /// Throttle counters as staging read them, checked under their locks at
    /// commit (the counters themselves are in `part`'s writes).
    throttles: Vec<crate::storage::ThrottleWrite>,
}

/// The lock (run class) of a run's counter and record.
pub(super) fn run_lock_key(project: &Uuid, run: &Uuid) -> Vec<u8> {
    Key::new().u8(b'r').id(project).id(run).0
}

pub(super) type Guards<'s> = Vec<std::sync::MutexGuard<'s, ()>>;

#[cfg(test)]
#[path = "tests/runs.rs"]
mod tests;

impl RunRepo for Store {
    /// Stores a run as `delivery::accept::accept_run` staged it, in one commit
    /// (see the module doc). The records are encoded before any lock is
    /// taken; then, under the users' locks (striped, shared by all projects),
    /// each user must still be as the run read it, or nothing is stored and
    /// the run's record comes back (`Stale`) to be staged again. The users'
    /// upserts, the notifications and the run's record go in one batch with
    /// the feed entries and events of in-app deliveries settled at once
    /// (under their recipients' feed locks) and the idempotent 202.
    fn commit_run(&self, project: &Uuid, staged: StagedRun) -> Result<RunCommit> {
        let StagedRun {
            run,
            users,
            notifications,
            queued,
            body,
            idempotency,
        } = staged;
        // Throttle counters and batches are checked under their slots' locks
        // (after the recipients'), below.
        let throttles: Vec<crate::storage::ThrottleWrite> = notifications
            .iter()
            .filter_map(|n| n.throttle.clone())
            .collect();
        let batches: Vec<crate::storage::BatchWrite> = notifications
            .iter()
            .filter_map(|n| n.batch.clone())
            .collect();
        let part = self.stage_notifications(project, &run, &users, notifications, &queued)?;
        let lock_keys: Vec<Vec<u8>> = users
            .iter()
            .map(|u| user_lock_key(project, &u.external_id))
            .collect();
        let _guards = self.lock_many(lock_keys.iter().map(|k| k.as_slice()));
        for u in &users {
            // Under the user's lock a cached user is the stored one (every
            // writer empties the entry under that lock), so a hit needs no read.
            let same = match self.user_cached(project, &u.external_id) {
                Some(c) => u.before.as_ref() == Some(&*c),
                None => self.user_by_ext(project, &u.external_id)? == u.before,
            };
            if !same {
                return Ok(RunCommit::Stale(run)); // the guards go
            }
        }
        let _slots = self.lock_slots(project, &batches, &throttles);
        if !throttles.is_empty() && self.throttles_stale(project, &throttles)? {
            return Ok(RunCommit::Stale(run));
        }
        let mut w = Writes::new();
        let Some(due_now) = self.stage_batches(&mut w, project, batches)? else {
            return Ok(RunCommit::Stale(run));
        };
        let mut queued = queued;
        queued.extend(due_now);
        for u in &users {
            self.stage_user_write(&mut w, project, u);
        }
        let Part {
            w: staged_w,
            feed,
            mut nids,
            pending,
        } = part;
        w.append(staged_w);
        self.stage_run_indexes(&mut w, project, &run, &mut nids);
        let _feeds = self.lock_feeds_of(project, &feed);
        let frames = self.stage_feeds(&mut w, project, feed)?;
        w.put(
            T::run_pending,
            Key::new().id(project).id(&run.id),
            pending.to_be_bytes(),
        );
        if !run.processed {
            w.put(T::runs_active, Key::new().id(&run.id).id(project), b"");
        }
        w.put_rec(T::flow_runs, Key::new().id(project).id(&run.id), &run);
        self.stage_outbound(&mut w, project, EventType::FlowRunAccepted, &run.id, || {
            run.accepted_view()
        });
        if let Some((scope, hash)) = idempotency {
            let rec = IdempotentResponse {
                payload_hash: hash,
                status: 202,
                body: body.clone(),
                created_at: run.created_at,
            };
            w.put_rec(T::idempotency, Key::new().id(project).bytes(&scope), &rec);
        }
        let res = self.commit(w);
        // Still under the users' and feeds' locks; only the users this run
        // wrote (`stage_user_write` skips the unchanged): forgetting the
        // others emptied the users' cache of every recipient and made every
        // cached feed page of the project stale (the users' generation).
        self.forget_users(
            project,
            users
                .iter()
                .filter(|u| u.before.as_ref() != Some(&u.after))
                .map(|u| u.external_id.as_str()),
        );
        for (p, u, _) in &frames {
            self.forget_feed_page(p, u);
        }
        res?;
        Ok(RunCommit::committed(run, body, queued, frames))
    }

    /// Prepares a chunk of a topic run's expansion as `delivery::expand`
    /// staged it: its records encoded and its run indexes, outside any lock.
    fn prepare_chunk(&self, project: &Uuid, chunk: StagedChunk) -> Result<Prepared> {
        let StagedChunk {
            run,
            notifications,
            queued,
        } = chunk;
        let batches: Vec<crate::storage::BatchWrite> = notifications
            .iter()
            .filter_map(|n| n.batch.clone())
            .collect();
        let throttles: Vec<crate::storage::ThrottleWrite> = notifications
            .iter()
            .filter_map(|n| n.throttle.clone())
            .collect();
        let mut part = self.stage_notifications(project, &run, &[], notifications, &queued)?;
        self.stage_run_indexes(&mut part.w, project, &run, &mut part.nids);
        Ok(Prepared::new(PreparedChunk {
            part,
            run,
            queued,
            batches,
            throttles,
        }))
    }

    /// Stores a prepared chunk: the recipients' feed entries and events under
    /// their feed locks, and the run's pending counter and record under its
    /// lock, in one commit with the run's expansion cursor, so a crash
    /// resumes after the last committed chunk.
    fn commit_chunk(&self, project: &Uuid, chunk: Prepared) -> Result<CommittedChunk> {
        let PreparedChunk {
            part:
                Part {
                    mut w,
                    feed,
                    nids: _,
                    pending,
                },
            mut run,
            mut queued,
            batches,
            throttles,
        } = chunk.take()?;
        // Decided while the chunk was staged; another run may have opened or
        // closed a batch, or counted in a throttle, since: then nothing is
        // stored and the chunk is staged again (a join into a closed batch
        // would lose its activity; a stale count would let one run too many
        // through).
        let _slots = self.lock_slots(project, &batches, &throttles);
        if !throttles.is_empty() && self.throttles_stale(project, &throttles)? {
            return Err(Refusal::StaleChunk.err());
        }
        let Some(due_now) = self.stage_batches(&mut w, project, batches)? else {
            return Err(Refusal::StaleChunk.err());
        };
        queued.extend(due_now);
        let rk = run_lock_key(project, &run.id);
        let _run = self.lock_runs([rk.as_slice()]);
        let _feeds = self.lock_feeds_of(project, &feed);
        let frames = self.stage_feeds(&mut w, project, feed)?;
        let pk = Key::new().id(project).id(&run.id);
        let now_pending = self.run_pending(&pk)? + pending;
        w.put(T::run_pending, &pk, now_pending.to_be_bytes());
        if now_pending == 0 && settle::run_done(&mut run, Timestamp::now()) {
            w.del(T::runs_active, Key::new().id(&run.id).id(project));
        }
        w.put_rec(T::flow_runs, Key::new().id(project).id(&run.id), &run);
        let res = self.commit(w);
        for (p, u, _) in &frames {
            self.forget_feed_page(p, u);
        }
        res?;
        Ok((queued, frames))
    }

    /// Runs not yet processed: `(project, run id)`, for recovery on start.
    fn active_runs(&self) -> Result<Vec<(Uuid, Uuid)>> {
        let mut out = vec![];
        for kv in self.tree(T::runs_active).iter() {
            let (k, _) = kv?;
            out.push((uuid_at(&k, 16), uuid_at(&k, 0)));
        }
        Ok(out)
    }
}

/// Reads of the trait `RecordRepo` answers (`lookups.rs`).
impl Store {
    pub fn flow_run(&self, project: &Uuid, id: &Uuid) -> Result<Option<FlowRun>> {
        self.get_rec(T::flow_runs, Key::new().id(project).id(id).as_ref())
    }
}
