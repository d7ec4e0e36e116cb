//! Batches in sled (`storage::BatchRepo`, `delivery::batch`): one record per
//! batch keyed by `(project, opener notification)` in `batches`, and per
//! `(project, flow, recipient, step, key)` the id of the batch last opened
//! there in `batch_keys`. Opens and joins are applied in the commit of the
//! notifications that make them (`Store::stage_batches`), under the batches'
//! locks (their own class: after entity locks, before run and feed locks);
//! a close (`Store::close_batch`) takes its opener's notification lock, then
//! the batch's, so a join and a close never interleave.

use super::keys::Key;
use super::removal::SCAN_FACTOR;
use super::runs::notif_key;
use super::{Store, Writes, T};
use crate::delivery::batch;
use crate::error::Result;
use crate::model::Timestamp;
use crate::storage::*;
use crate::storage::{Batch, BatchClose, BatchCloseReason, BatchKey, BatchWrite, QueueItem};
use uuid::Uuid;

fn slot_key(project: &Uuid, k: &BatchKey) -> Key {
    Key::new()
        .id(project)
        .id(&k.flow_id)
        .id(&k.recipient)
        .u8(k.step)
        .bytes(k.key.as_bytes())
}

pub(super) fn batch_key(project: &Uuid, id: &Uuid) -> Key {
    Key::new().id(project).id(id)
}

/// The lock of a batch slot (batch class).
pub(super) fn batch_lock_key(project: &Uuid, k: &BatchKey) -> Vec<u8> {
    slot_key(project, k).0
}

/// What `stage_batches` staged: the opener deliveries a `max` close made
/// due now, or `None` when a batch was not as staged (the run is stale).
pub(super) type Staged = Option<Vec<QueueItem>>;

impl Store {
    /// The locks of the batch slots `writes` touch and of the throttle
    /// counters `throttles` count in (one class, one call: the stripes are
    /// not reentrant). Runs and topic chunks both hold them while they check
    /// and write, so a chunk's decisions are as exact as a run's.
    pub(super) fn lock_slots(
        &self, project: &Uuid, writes: &[BatchWrite], throttles: &[crate::storage::ThrottleWrite],
    ) -> Vec<std::sync::MutexGuard<'_, ()>> {
        let keys: Vec<Vec<u8>> = writes
            .iter()
            .map(|b| match b {
                BatchWrite::Open(b) => batch_lock_key(project, &b.key),
                BatchWrite::Join { key, .. } => batch_lock_key(project, key),
            })
            .chain(throttles.iter().map(|t| batch_lock_key(project, &t.key)))
            .collect();
        self.lock_batches(keys.iter().map(|k| k.as_slice()))
    }

    /// Stages the opens and joins of `writes` (the caller holds their locks):
    /// `None` when a batch is no longer as staging read it (another run
    /// opened one, or the one joined closed meanwhile); the caller then
    /// stores nothing and the run, or the topic chunk, is staged again.
    pub(super) fn stage_batches(
        &self, w: &mut Writes, project: &Uuid, writes: Vec<BatchWrite>,
    ) -> Result<Staged> {
        let now = Timestamp::now();
        let mut due = vec![];
        for bw in writes {
            match bw {
                BatchWrite::Open(b) => {
                    if let Some(cur) = self.latest_batch(project, &b.key)? {
                        if cur.open_at(b.opened_at_ms) {
                            return Ok(None);
                        }
                    }
                    if b.closed.is_some() {
                        self.stage_trace(w, project, &b.id, &[batch::closed_entry(&b, now)]);
                    }
                    w.put(T::batch_keys, slot_key(project, &b.key), b.id.as_bytes());
                    w.put_rec(T::batches, batch_key(project, &b.id), &b);
                }
                BatchWrite::Join {
                    key,
                    batch: id,
                    activity,
                } => {
                    let cur = self.latest_batch(project, &key)?;
                    let mut b = match cur {
                        Some(b) if b.id == id && b.open_at(activity.at_ms) => b,
                        _ => return Ok(None),
                    };
                    if let Some(q) = batch::join(project, &mut b, activity) {
                        self.stage_trace(w, project, &b.id, &[batch::closed_entry(&b, now)]);
                        for q in &q {
                            w.put(T::queue, q.key(), q.value());
                        }
                        due.extend(q);
                    }
                    w.put_rec(T::batches, batch_key(project, &b.id), &b);
                }
            }
        }
        Ok(Some(due))
    }
}

impl BatchRepo for Store {
    fn close_batch(&self, project: &Uuid, c: &BatchClose) -> Result<bool> {
        let Some(first) = self.batch(project, &c.batch)? else {
            return Ok(false);
        };
        let nk = Key::new().u8(b'n').id(project).id(&c.batch).0;
        let _n = self.lock(&nk);
        let bk = batch_lock_key(project, &first.key);
        let _b = self.lock_batches([bk.as_slice()]);
        let Some(mut b) = self.batch(project, &c.batch)? else {
            return Ok(false);
        };
        let now = Timestamp::now();
        let mut rec = self.notif_rec(project, &b.id)?;
        let d = rec
            .as_mut()
            .and_then(|r| r.d.iter_mut().find(|d| d.id == c.delivery_id));
        let Some(done) = batch::close(&mut b, d, c, now) else {
            return Ok(false);
        };
        let mut w = Writes::new();
        if done.batch {
            w.put_rec(T::batches, batch_key(project, &b.id), &b);
        }
        if !done.trace.is_empty() {
            self.stage_trace(&mut w, project, &b.id, &done.trace);
        }
        if let (true, Some(rec)) = (done.delivery, &rec) {
            w.put_rec(T::notifications, notif_key(project, &b.id), rec);
        }
        self.commit(w)?;
        Ok(true)
    }

    fn cancel_batch(&self, project: &Uuid, id: &Uuid, at_ms: i64) -> Result<()> {
        let Some(first) = self.batch(project, id)? else {
            return Ok(());
        };
        let bk = batch_lock_key(project, &first.key);
        let _b = self.lock_batches([bk.as_slice()]);
        let Some(mut b) = self.batch(project, id)? else {
            return Ok(());
        };
        if b.closed.is_some() {
            return Ok(());
        }
        b.closed = Some((at_ms, BatchCloseReason::Canceled));
        let mut w = Writes::new();
        self.stage_trace(
            &mut w,
            project,
            &b.id,
            &[batch::closed_entry(&b, Timestamp::now())],
        );
        w.put_rec(T::batches, batch_key(project, &b.id), &b);
        self.commit(w)
    }
}

// Retention (`RetentionRepo::purge`) of closed batches.
impl Store {
    /// Batches that are done (`batch_done`): closed, or past their close at
    /// project time `cut.now`, with their opener's notification processed
    /// or gone, so nothing will render with them again. Checked again under
    /// the batch's lock; the slot's entry goes with its batch. Swept like
    /// throttle counters.
    pub(super) fn purge_batches(
        &self, project: &Uuid, cut: &PurgeCutoffs, max: usize,
    ) -> Result<PurgeReport> {
        if !self.sweep_due(project, T::batches, cut.notifications) {
            return Ok(PurgeReport::default());
        }
        let (lo, hi) = self.sweep_range(project, T::batches);
        let now = cut.now.millis();
        let mut doomed: Vec<crate::storage::Batch> = vec![];
        let mut stop = None;
        for (seen, kv) in self
            .tree(T::batches)
            .range::<Vec<u8>, _>((lo, hi))
            .enumerate()
        {
            let (k, v) = kv?;
            if seen >= max * SCAN_FACTOR || doomed.len() >= max {
                stop = Some((k.to_vec(), true));
                break;
            }
            let b: crate::storage::Batch = super::codec::dec(&v)?;
            if self.batch_done(project, &b, now)? {
                doomed.push(b);
            }
        }
        let mut report = PurgeReport {
            more: stop.is_some(),
            ..Default::default()
        };
        self.sweep_stopped(project, T::batches, stop);
        if doomed.is_empty() {
            return Ok(report);
        }
        let locks: Vec<Vec<u8>> = doomed
            .iter()
            .map(|b| super::batches::batch_lock_key(project, &b.key))
            .collect();
        let _batches = self.lock_batches(locks.iter().map(|k| k.as_slice()));
        let mut w = Writes::new();
        for b in &doomed {
            let Some(b) = self.batch(project, &b.id)? else {
                continue;
            };
            if !self.batch_done(project, &b, now)? {
                continue;
            }
            let k = super::batches::batch_key(project, &b.id);
            report.bytes += (k.0.len() + super::codec::enc(&b).len()) as u64;
            w.del(T::batches, &k);
            if self
                .latest_batch(project, &b.key)?
                .is_some_and(|l| l.id == b.id)
            {
                w.del(
                    T::batch_keys,
                    super::batches::batch_lock_key(project, &b.key),
                );
            }
            report.batches += 1;
        }
        self.commit_now(w)?;
        Ok(report)
    }

    /// Whether nothing will read batch `b` again at project time `now`.
    pub(super) fn batch_done(
        &self, project: &Uuid, b: &crate::storage::Batch, now: i64,
    ) -> Result<bool> {
        if b.closed.is_none() && b.closes_at_ms > now {
            return Ok(false);
        }
        Ok(self
            .notif_rec(project, &b.id)?
            .is_none_or(|r| r.n.processed))
    }
}

/// Reads of the trait `RecordRepo` answers (`lookups.rs`).
impl Store {
    pub fn batch(&self, project: &Uuid, id: &Uuid) -> Result<Option<Batch>> {
        self.get_rec(T::batches, batch_key(project, id).as_ref())
    }

    pub fn latest_batch(&self, project: &Uuid, k: &BatchKey) -> Result<Option<Batch>> {
        let Some(v) = self.tree(T::batch_keys).get(slot_key(project, k))? else {
            return Ok(None);
        };
        if v.len() != 16 {
            return Ok(None);
        }
        let mut b = [0u8; 16];
        b.copy_from_slice(&v);
        self.batch(project, &Uuid::from_bytes(b))
    }
}
