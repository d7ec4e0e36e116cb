//! Retention and erasure in the sled store: removing notifications with
//! everything that points at them, old feed entries and live-feed events, and
//! runs whose notifications are all gone.
//!
//! Every step is one atomic batch of bounded size, so a crash leaves the
//! store consistent and the next pass (or the erasure's next step) resumes
//! where the last committed batch stopped: the store itself is the cursor.
//! A notification leaves in the same batch as its deliveries' status index
//! entries, queue entries (there are none: only settled notifications go),
//! feed entries and recipient marker, its decision trace, and its ids in the run and topic
//! indexes, so a list never shows what a read would answer 404 for.
//! Lists also skip an index id whose record is gone, so an id left behind in
//! a packed index chunk (see `strip_packed`) costs bytes, never consistency.
//!
//! Batches hold `Inner::removals`, then (for runs) run locks and (for feeds)
//! the users' feed locks, the order every other writer takes them in.

use super::feed::keyed_by_feed_time;
use super::feed::{count_delta, entry_id, feed_lock_key, EVENT_HEADER};
use super::keys::{tail_id, uuid_at, Key};
use super::page::key_range;
use super::records::group_members;
use super::removal::*;
use super::runs::{recipient_marker, run_index, run_lock_key};
use super::{Store, Writes, T};
use crate::error::{Error, Result};
use crate::model::{feed_sort_id, notification_of, FeedCounts, Timestamp};
use crate::rules::records;
use crate::storage::*;
use crate::storage::{PurgeCutoffs, PurgeReport};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Bound;
use uuid::Uuid;

impl Store {
    /// Takes what removed records counted off the project's usage.
    pub(super) fn take_usage(&self, project: &Uuid, bytes: u64) -> Result<()> {
        use crate::storage::UsageRepo;
        self.add_usage(project, -(bytes.min(i64::MAX as u64) as i64))
    }

    /// The project's keys in `t` from where its last sweep stopped (see
    /// `cursor`).
    pub(super) fn sweep_range(&self, project: &Uuid, t: T) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
        let p = Key::new().id(project);
        let (lo, hi) = key_range(&p.0, (Bound::Unbounded, Bound::Unbounded));
        let lo = match self.cursor(project, t) {
            Some((k, true)) => Bound::Included(k),
            Some((k, false)) => Bound::Excluded(k),
            None => lo,
        };
        (lo, hi)
    }

    /// Where the purge of key space `t` stopped in a project: `(key,
    /// inclusive)`, `None` to start from the beginning.
    pub(super) fn cursor(&self, project: &Uuid, t: T) -> Option<(Vec<u8>, bool)> {
        self.inner
            .purge_cursors
            .get(&(*project, t as u8))
            .map(|c| c.clone())
    }

    pub(super) fn set_cursor(&self, project: &Uuid, t: T, c: Option<(Vec<u8>, bool)>) {
        match c {
            Some(c) => {
                self.inner.purge_cursors.insert((*project, t as u8), c);
            }
            None => {
                self.inner.purge_cursors.remove(&(*project, t as u8));
            }
        }
    }

    /// Whether a new sweep of per-user kind `t` (feed entries, events) may
    /// begin: these walk every user of the project, so a sweep that reached
    /// the end is followed by the next only after a tenth of the window
    /// (`before` is now minus the window), between 1 s and 10 minutes: what
    /// comes of age meanwhile stays at most that much past its window.
    pub(super) fn sweep_due(&self, project: &Uuid, t: T, before: Timestamp) -> bool {
        if self.inner.purge_cursors.contains_key(&(*project, t as u8)) {
            return true; // a sweep under way goes on
        }
        let window = (Timestamp::now().millis() - before.millis()).max(0) as u64;
        let gap = std::time::Duration::from_millis((window / 10).clamp(1000, 600_000));
        self.inner
            .purge_swept
            .get(&(*project, t as u8))
            .is_none_or(|at| at.elapsed() >= gap)
    }

    /// Records where a sweep of `t` stopped; `None`: it reached the end.
    pub(super) fn sweep_stopped(&self, project: &Uuid, t: T, stop: Option<(Vec<u8>, bool)>) {
        if stop.is_none() {
            self.inner
                .purge_swept
                .insert((*project, t as u8), std::time::Instant::now());
        }
        self.set_cursor(project, t, stop);
    }

    /// The removals lock (see `Inner::removals`).
    pub(super) fn removals(&self) -> std::sync::MutexGuard<'_, ()> {
        self.inner
            .removals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Settled notifications created before `cut.notifications`, oldest
    /// first, with everything pointing at them. On a test clock, created in
    /// project time: ids (real time) only bound the scan, each notification's
    /// run says when it was accepted in project time (`FlowRun::clock_at`),
    /// and the scan ends at the first one too young. Project time at
    /// acceptance grows with the ids (a test clock starts at the real time
    /// and only moves forward), so nothing older lies beyond it.
    ///
    /// One range scan over the notifications' keys finds them: each record
    /// is skimmed (`Skim`), not decoded, and where it is stored (alone, in
    /// its group, both) is known from the scan, so removing it looks nothing
    /// up again but its feed entries.
    pub(super) fn purge_notifications(
        &self, project: &Uuid, cut: &PurgeCutoffs, max: usize,
    ) -> Result<PurgeReport> {
        let _removals = self.removals();
        let before = cut.notifications;
        let floor = id_floor(cut.id_bound());
        let mut accepted: HashMap<Uuid, Timestamp> = HashMap::new();
        let mut doomed: Vec<Doomed> = vec![];
        // The groups of the doomed, as the scan read them (`None`: none).
        let mut groups: HashMap<Vec<u8>, Option<sled::IVec>> = HashMap::new();
        let (mut seen, mut more) = (0usize, false);
        let mut last: Option<[u8; 16]> = None;
        let cursor = self.cursor(project, T::notifications).map(|(k, _)| k);
        let p = Key::new().id(project);
        let n = p.0.len();
        // A group sorts just before its members: start from the cursor's.
        let lo = match &cursor {
            Some(k) if k.len() >= 14 => p.clone().bytes(&k[..14]).0,
            _ => p.0.clone(),
        };
        let hi = p.clone().bytes(&floor).0;
        // Entries sharing a 14-byte id prefix (a group, and records of its
        // members stored alone), gathered, then looked at in id order.
        let mut batch: Vec<(sled::IVec, sled::IVec)> = vec![];
        // Whether the scan is done: a batch full, or nothing older follows.
        let mut look = |batch: &mut Vec<(sled::IVec, sled::IVec)>| -> Result<bool> {
            let mut done = false;
            let mut group: Option<sled::IVec> = None;
            // id → (encoded record, where its own key stands)
            let mut recs: BTreeMap<[u8; 16], (&[u8], Alone)> = BTreeMap::new();
            let mut gk = vec![];
            for (k, v) in batch.iter() {
                let tail = &k[n..];
                if tail.len() == 14 {
                    group = Some(v.clone());
                    gk = k.to_vec();
                }
            }
            if let Some(g) = &group {
                for m in group_members(g)? {
                    let mut id = [0u8; 16];
                    id[..14].copy_from_slice(&gk[n..]);
                    id[14] = m.i;
                    id[15] = crate::model::NOTIFICATION_TAG;
                    recs.insert(id, (m.rec, Alone::No));
                }
            }
            for (k, v) in batch.iter() {
                let tail = &k[n..];
                match tail.len() {
                    14 => {}
                    16 => {
                        let mut id = [0u8; 16];
                        id.copy_from_slice(tail);
                        recs.insert(id, (&v[..], Alone::Yes(v.len())));
                    }
                    _ => return Err(Error::internal("corrupt notification key")),
                }
            }
            for (id, (v, alone)) in recs {
                if cursor.as_ref().is_some_and(|c| id[..] <= c[..]) {
                    continue;
                }
                if id >= floor {
                    done = true;
                    break;
                }
                let r = skim(v)?;
                if cut.test_clock {
                    let at = self.accepted_at(project, r.n.r, r.n.c, &mut accepted)?;
                    if at >= before {
                        done = true; // too young: nothing older follows
                        break;
                    }
                }
                seen += 1;
                last = Some(id);
                if r.n.p && r.d.iter().all(|d| d.s.is_final()) {
                    if gk.is_empty() {
                        groups.insert(p.clone().bytes(&id[..14]).0, None);
                    } else {
                        groups.insert(gk.clone(), group.clone());
                    }
                    doomed.push(Doomed {
                        id: r.n.i,
                        flow: r.n.f,
                        run: r.n.r,
                        topic: r.n.t.map(|t| t.into_owned()),
                        user: r.n.u,
                        d: r.d
                            .iter()
                            .map(|d| (d.i, d.ct, d.s, feed_sort_id(&d.i, d.fa)))
                            .collect(),
                        alone,
                        usage: crate::quota::cost_of(
                            r.d.len() as u64,
                            r.d.iter().map(|d| d.d.len()).sum(),
                        ),
                    });
                }
                more = doomed.len() >= max || seen >= max * SCAN_FACTOR;
                if more {
                    done = true;
                    break;
                }
            }
            batch.clear();
            Ok(done)
        };
        let mut done = false;
        for kv in self
            .tree(T::notifications)
            .range::<Vec<u8>, _>((Bound::Included(lo), Bound::Excluded(hi)))
        {
            let (k, v) = kv?;
            if k.len() < n + 14 {
                return Err(Error::internal("corrupt notification key"));
            }
            let same = batch
                .first()
                .is_some_and(|(b, _)| b[n..n + 14] == k[n..n + 14]);
            if !same && look(&mut batch)? {
                done = true;
                break;
            }
            batch.push((k, v));
        }
        if !done {
            look(&mut batch)?;
        }
        // Pending notifications stay where they are: the next batch goes on
        // after the last one looked at, the pass after from the start.
        let next = if more {
            last.map(|l| (l.to_vec(), false))
        } else {
            None
        };
        self.set_cursor(project, T::notifications, next);
        if doomed.is_empty() {
            return Ok(PurgeReport {
                more,
                ..Default::default()
            });
        }
        let keys: Vec<Vec<u8>> = doomed
            .iter()
            .map(|r| feed_lock_key(project, &r.user))
            .collect();
        let _feeds = self.lock_feeds(keys.iter().map(|k| k.as_slice()));
        let mut removal = Removal::new(self, *project, true);
        for (gk, v) in groups {
            removal.groups.insert(gk, (v, vec![]));
        }
        for r in &doomed {
            removal.remove(r)?;
        }
        let (w, mut report, users) = removal.finish(true)?;
        let res = self.commit_now(w);
        for u in &users {
            self.forget_feed_page(project, u);
        }
        res?;
        // After the removal's commit: a crash between the two leaves the
        // counter high by this batch (`quota`'s tolerance).
        self.take_usage(project, report.usage_bytes)?;
        report.more = more;
        Ok(report)
    }

    /// Removes `ids` from the packed index chunks under `prefix` (each chunk
    /// keeps its key, its largest id when written: a key at or above a
    /// chunk's ids is all `page::PackedSource` needs). Only chunks from the
    /// smallest id to `CHUNK_SPAN_MS` past the largest are looked at. Returns
    /// the bytes removed.
    pub(super) fn strip_packed(
        &self, w: &mut Writes, t: T, prefix: &Key, ids: &HashSet<[u8; 16]>,
    ) -> Result<u64> {
        let (Some(lo), Some(hi)) = (ids.iter().min(), ids.iter().max()) else {
            return Ok(0);
        };
        let until = Timestamp::of_id(&Uuid::from_bytes(*hi)).millis() + CHUNK_SPAN_MS;
        let (klo, khi) = key_range(&prefix.0, (Bound::Included(&lo[..]), Bound::Unbounded));
        let mut bytes = 0u64;
        for kv in self.tree(t).range::<Vec<u8>, _>((klo, khi)) {
            let (k, v) = kv?;
            if k.len() < 16 {
                continue;
            }
            if Timestamp::of_id(&tail_id(&k)).millis() > until {
                break;
            }
            let kept: Vec<u8> = v
                .chunks_exact(16)
                .filter(|c| !ids.contains(*c))
                .flatten()
                .copied()
                .collect();
            if kept.len() == v.len() {
                continue;
            }
            bytes += (v.len() - kept.len()) as u64;
            if kept.is_empty() {
                bytes += k.len() as u64;
                w.del(t, &k);
            } else {
                w.put(t, &k, kept);
            }
        }
        Ok(bytes)
    }

    /// Brings a user's feed counts down by what removed entries counted: the
    /// counts live in the latest event (see `feed::stage_event`), rewritten
    /// in place. The caller holds the user's feed lock.
    pub(super) fn stage_counts_down(
        &self, w: &mut Writes, project: &Uuid, user: &Uuid, removed: FeedCounts,
    ) -> Result<()> {
        if removed.unread == 0 && removed.unseen == 0 {
            return Ok(());
        }
        let mut c = self.feed_counts_locked(project, user)?;
        c.unread = c.unread.saturating_sub(removed.unread);
        c.unseen = c.unseen.saturating_sub(removed.unseen);
        let ek = Key::new().id(project).id(user).u64(c.seq);
        if let Some(v) = self.tree(T::events).get(&ek)? {
            if v.len() >= EVENT_HEADER {
                let mut v = v.to_vec();
                v[8..16].copy_from_slice(&c.unread.to_be_bytes());
                v[16..24].copy_from_slice(&c.unseen.to_be_bytes());
                w.put(T::events, ek, v);
                w.counts.push((*project, *user, c));
            }
        }
        Ok(())
    }

    /// Feed entries created before `before`. A notification that stays gets
    /// a recipient marker in place of its entry, so it is still listed for
    /// its recipient (`list_notifications` by recipient).
    pub(super) fn purge_feed(
        &self, project: &Uuid, before: Timestamp, max: usize,
    ) -> Result<PurgeReport> {
        if !self.sweep_due(project, T::feed, before) {
            return Ok(PurgeReport::default());
        }
        let _removals = self.removals();
        let floor = id_floor(before);
        let feed = self.tree(T::feed);
        let p = Key::new().id(project);
        // Candidates: (user, key), each user's oldest first; a user is left
        // at their first entry not old enough.
        let mut found: Vec<(Uuid, Vec<u8>)> = vec![];
        let mut seen = 0usize;
        // Where this batch stopped, when it did before the end.
        let mut stop: Option<(Vec<u8>, bool)> = None;
        let mut from = match self.cursor(project, T::feed) {
            Some((k, true)) => Bound::Included(k),
            Some((k, false)) => Bound::Excluded(k),
            None => Bound::Included(p.0.clone()),
        };
        let end = key_range(&p.0, (Bound::Unbounded, Bound::Unbounded)).1;
        'users: loop {
            for kv in feed.range::<Vec<u8>, _>((from.clone(), end.clone())) {
                let (k, v) = kv?;
                if seen >= max * SCAN_FACTOR {
                    stop = Some((k.to_vec(), true));
                    break 'users;
                }
                seen += 1;
                if k.len() != 48 {
                    continue;
                }
                let u = uuid_at(&k, 16);
                if k[32..48] >= floor[..] {
                    // Newer entries of this user follow: on to the next user.
                    let mut next = Key::new().id(project).id(&u).0;
                    next.extend_from_slice(&[0xff; 16]);
                    from = Bound::Excluded(next);
                    continue 'users;
                }
                if !v.is_empty() {
                    found.push((u, k.to_vec()));
                    if found.len() >= max {
                        stop = Some((k.to_vec(), false));
                        break 'users;
                    }
                }
            }
            break;
        }
        let more = stop.is_some();
        self.sweep_stopped(project, T::feed, stop);
        if found.is_empty() {
            return Ok(PurgeReport {
                more,
                ..Default::default()
            });
        }
        let keys: Vec<Vec<u8>> = found
            .iter()
            .map(|(u, _)| feed_lock_key(project, u))
            .collect();
        let _feeds = self.lock_feeds(keys.iter().map(|k| k.as_slice()));
        let mut w = Writes::new();
        let mut report = PurgeReport::default();
        let mut removed: HashMap<Uuid, FeedCounts> = HashMap::new();
        for (u, k) in &found {
            // Read again under the lock: the entry may have changed since.
            let Some(v) = feed.get(k)? else { continue };
            let Some(&flags) = v.first() else { continue };
            count_delta(removed.entry(*u).or_default(), flags, 1);
            w.del(T::feed, k);
            report.feed_entries += 1;
            report.bytes += (k.len() + v.len()) as u64;
            let nid = notification_of(&entry_id(k, &v));
            if self.notif_rec(project, &nid)?.is_some() {
                w.put(T::feed, recipient_marker(project, u, &nid), b"");
            }
        }
        for (u, r) in &removed {
            self.stage_counts_down(&mut w, project, u, *r)?;
        }
        let res = self.commit_now(w);
        for u in removed.keys() {
            self.forget_feed_page(project, u);
        }
        res?;
        report.more = more;
        Ok(report)
    }

    /// Live-feed events written before `before`, except each user's latest
    /// (it holds the feed's counts and `seq`). A client resuming from an
    /// event that is gone is told to reload (`events_between` → `None`).
    pub(super) fn purge_events(
        &self, project: &Uuid, before: Timestamp, max: usize,
    ) -> Result<PurgeReport> {
        if !self.sweep_due(project, T::events, before) {
            return Ok(PurgeReport::default());
        }
        let events = self.tree(T::events);
        let p = Key::new().id(project);
        let cutoff = before.millis().max(0) as u64;
        let mut doomed: Vec<(Vec<u8>, usize)> = vec![];
        let mut seen = 0usize;
        let mut stop: Option<(Vec<u8>, bool)> = None;
        let mut from = match self.cursor(project, T::events) {
            Some((k, true)) => Bound::Included(k),
            Some((k, false)) => Bound::Excluded(k),
            None => Bound::Included(p.0.clone()),
        };
        let end = key_range(&p.0, (Bound::Unbounded, Bound::Unbounded)).1;
        // The old events of the current user seen so far: all but the last
        // go once another event of theirs follows.
        let mut run: Vec<(Vec<u8>, usize)> = vec![];
        let mut user: Option<Uuid> = None;
        'users: loop {
            for kv in events.range::<Vec<u8>, _>((from.clone(), end.clone())) {
                let (k, v) = kv?;
                if k.len() != 40 || v.len() < 8 {
                    continue;
                }
                let u = uuid_at(&k, 16);
                if seen >= max * SCAN_FACTOR || doomed.len() + run.len() >= max {
                    // Stop here, this key next: the old events seen of its
                    // user have a successor (it); another user's last one
                    // may be that user's latest and stays.
                    if user != Some(u) {
                        run.pop();
                    }
                    doomed.append(&mut run);
                    stop = Some((k.to_vec(), true));
                    break 'users;
                }
                seen += 1;
                if user != Some(u) {
                    // A new user: the previous one's last old event was its latest.
                    run.pop();
                    doomed.append(&mut run);
                    user = Some(u);
                }
                if be_u64(&v[..8]) >= cutoff {
                    // Every old event seen of this user has a newer one after it.
                    doomed.append(&mut run);
                    let mut next = Key::new().id(project).id(&u).0;
                    next.extend_from_slice(&[0xff; 8]);
                    from = Bound::Excluded(next);
                    user = None;
                    continue 'users;
                }
                run.push((k.to_vec(), k.len() + v.len()));
            }
            run.pop();
            doomed.append(&mut run);
            break;
        }
        let mut report = PurgeReport {
            more: stop.is_some(),
            ..Default::default()
        };
        self.sweep_stopped(project, T::events, stop);
        if doomed.is_empty() {
            return Ok(report);
        }
        let mut w = Writes::new();
        for (k, n) in doomed {
            w.del(T::events, k);
            report.events += 1;
            report.bytes += n as u64;
        }
        self.commit_now(w)?;
        Ok(report)
    }

    /// When a notification's run was accepted in project time (its test
    /// clock's `clock_at`, else its creation), each run read once per batch.
    pub(super) fn accepted_at(
        &self, project: &Uuid, run: Uuid, created_at: Timestamp,
        seen: &mut HashMap<Uuid, Timestamp>,
    ) -> Result<Timestamp> {
        if let Some(t) = seen.get(&run) {
            return Ok(*t);
        }
        let t = self
            .flow_run(project, &run)?
            .and_then(|r| r.clock_at)
            .unwrap_or(created_at);
        seen.insert(run, t);
        Ok(t)
    }

    /// Processed runs created before `cut.notifications` (on a test clock:
    /// accepted before it in project time) whose notifications are all gone,
    /// with their pending counters and index chunks.
    pub(super) fn purge_runs(
        &self, project: &Uuid, cut: &PurgeCutoffs, max: usize,
    ) -> Result<PurgeReport> {
        let before = cut.notifications;
        let floor = id_floor(cut.id_bound());
        let p = Key::new().id(project);
        let (mut lo, hi) = key_range(&p.0, (Bound::Unbounded, Bound::Excluded(&floor[..])));
        match self.cursor(project, T::flow_runs) {
            Some((k, true)) => lo = Bound::Included(k),
            Some((k, false)) => lo = Bound::Excluded(k),
            None => {}
        }
        let mut report = PurgeReport::default();
        let mut gone: Vec<(Uuid, Vec<u8>)> = vec![];
        let mut stop = None;
        for (seen, kv) in self
            .tree(T::flow_runs)
            .range::<Vec<u8>, _>((lo, hi))
            .enumerate()
        {
            let (k, _) = kv?;
            if seen >= max * SCAN_FACTOR || gone.len() >= max {
                stop = Some((k.to_vec(), true));
                break;
            }
            if k.len() != 32 {
                continue;
            }
            let run = uuid_at(&k, 16);
            let active = Key::new().id(&run).id(project);
            if self.tree(T::runs_active).contains_key(&active)?
                || self.run_has_notifications(project, &run)?
            {
                continue;
            }
            if cut.test_clock {
                let young = self
                    .flow_run(project, &run)?
                    .is_some_and(|r| r.clock_at.unwrap_or(r.created_at) >= before);
                if young {
                    continue;
                }
            }
            gone.push((run, k.to_vec()));
        }
        report.more = stop.is_some();
        self.set_cursor(project, T::flow_runs, stop);
        if gone.is_empty() {
            return Ok(report);
        }
        let locks: Vec<Vec<u8>> = gone.iter().map(|(r, _)| run_lock_key(project, r)).collect();
        let _runs = self.lock_runs(locks.iter().map(|k| k.as_slice()));
        let mut w = Writes::new();
        for (run, k) in &gone {
            // Read again under the run's lock: still processed?
            let active = Key::new().id(run).id(project);
            if self.tree(T::runs_active).contains_key(&active)? {
                continue;
            }
            if let Some(v) = self.tree(T::flow_runs).get(k)? {
                report.bytes += (k.len() + v.len()) as u64;
            }
            w.del(T::flow_runs, k);
            w.del(T::run_pending, k);
            for kv in self.tree(T::run_index).scan_prefix(run_index(project, run)) {
                let (ck, cv) = kv?;
                report.bytes += (ck.len() + cv.len()) as u64;
                w.del(T::run_index, ck);
            }
            report.runs += 1;
        }
        self.commit_now(w)?;
        Ok(report)
    }

    /// Whether a notification listed in the run's index still exists.
    pub(super) fn run_has_notifications(&self, project: &Uuid, run: &Uuid) -> Result<bool> {
        for kv in self.tree(T::run_index).scan_prefix(run_index(project, run)) {
            let (_, v) = kv?;
            for c in v.chunks_exact(16) {
                let id = Uuid::from_slice(c).map_err(|e| Error::internal(e.to_string()))?;
                if self.notif_rec(project, &id)?.is_some() {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }
}

#[cfg(test)]
#[path = "tests/retention.rs"]
mod tests;

impl RetentionRepo for Store {
    fn erase(&self, project: &Uuid, step: ErasureStep<'_>) -> Result<Erasure> {
        match step {
            ErasureStep::Start(ext) => self.start_erasure(project, ext),
            ErasureStep::Continue { id, max } => self.erase_step(project, id, max),
        }
    }

    fn sweep(&self, what: Sweep, max: usize) -> Result<usize> {
        match what {
            Sweep::Idempotency => self.sweep_idempotency(max),
            Sweep::EventLogs { before_ms } => self.sweep_event_logs(before_ms, max),
        }
    }

    /// One purge batch of a project (see `RetentionRepo::purge`): up to
    /// `max` notifications, then runs, feed entries and events, each kind in
    /// its own atomic batch; it stops after the first kind with more to do
    /// (`more`), so the next call goes on with that kind.
    fn purge(&self, project: &Uuid, cut: &PurgeCutoffs, max: usize) -> Result<PurgeReport> {
        let max = max.max(1);
        let mut report = PurgeReport::default();
        let phases: [&dyn Fn() -> Result<PurgeReport>; 6] = [
            &|| self.purge_notifications(project, cut, max),
            &|| self.purge_runs(project, cut, max),
            &|| self.purge_feed(project, cut.feed, max),
            &|| self.purge_events(project, cut.feed, max),
            &|| self.purge_throttles(project, cut, max),
            &|| self.purge_batches(project, cut, max),
        ];
        for phase in phases {
            report.add(&phase()?);
            if report.more {
                break;
            }
        }
        Ok(report)
    }

    /// When the project's oldest notification was created: the first key of
    /// its notifications (ids, and groups' id prefixes, begin with the time).
    fn oldest_notification(&self, project: &Uuid) -> Result<Option<Timestamp>> {
        let Some(kv) = self
            .tree(T::notifications)
            .scan_prefix(Key::new().id(project))
            .next()
        else {
            return Ok(None);
        };
        let (k, _) = kv?;
        if k.len() < 22 {
            return Ok(None);
        }
        let mut id = [0u8; 16];
        id[..6].copy_from_slice(&k[16..22]);
        Ok(Some(Timestamp::of_id(&Uuid::from_bytes(id))))
    }

    fn running_erasures(&self) -> Result<Vec<Erasure>> {
        let mut out = vec![];
        for kv in self.tree(T::erasures).iter() {
            let (_, v) = kv?;
            let e: Erasure = super::codec::dec(&v)?;
            if e.status == ErasureStatus::Running {
                out.push(e);
            }
        }
        Ok(out)
    }
}

/// Reads of the trait `RecordRepo` answers (`lookups.rs`).
impl Store {
    pub fn erasure(&self, project: &Uuid, id: &Uuid) -> Result<Option<Erasure>> {
        self.get_rec(T::erasures, Key::new().id(project).id(id).as_ref())
    }
}

/// Reads of the trait `RecordRepo` answers (`lookups.rs`).
impl Store {
    /// Deletes the user and records their erasure in one durable commit. The
    /// user's feed keys (entries and recipient markers, one or more per
    /// notification of theirs) stay: they are the erasure's list of work.
    pub fn start_erasure(&self, project: &Uuid, ext: &str) -> Result<Erasure> {
        let mut job = None;
        self.delete_user_with(project, ext, |w, user| {
            w.ops.retain(|(t, _, _)| *t != T::feed);
            let e = records::new_erasure(project, &user.id);
            w.put_rec(T::erasures, Key::new().id(project).id(&e.id), &e);
            job = Some(e);
            Ok(())
        })?;
        job.ok_or_else(|| Error::internal("erasure not recorded"))
    }

    /// One step of an erasure: up to `max` of the user's settled
    /// notifications removed, with the job's progress, in one durable
    /// commit; the job is complete once the user's feed keys are all gone.
    pub fn erase_step(&self, project: &Uuid, id: &Uuid, max: usize) -> Result<Erasure> {
        let max = max.max(1);
        let _removals = self.removals();
        let mut job = self
            .erasure(project, id)?
            .ok_or_else(|| Refusal::missing("erasure", id))?;
        if job.status == ErasureStatus::Complete {
            return Ok(job);
        }
        let up = Key::new().id(project).id(&job.user_id);
        // The user's notifications, each with its feed keys.
        let mut nids: Vec<(Uuid, Vec<Vec<u8>>)> = vec![];
        let mut seen = 0usize;
        for kv in self.tree(T::feed).scan_prefix(&up) {
            let (k, v) = kv?;
            seen += 1;
            if k.len() != 48 {
                continue;
            }
            let nid = notification_of(&entry_id(&k, &v));
            // A notification's keys are one run, but for entries that
            // entered the feed after acceptance (keyed by their feed time).
            let group = match nids.last_mut() {
                Some((n, _)) if *n == nid => nids.last_mut(),
                _ if keyed_by_feed_time(&v) => nids.iter_mut().find(|(n, _)| *n == nid),
                _ => None,
            };
            match group {
                Some((_, keys)) => keys.push(k.to_vec()),
                None => {
                    if nids.len() >= max || seen > max * SCAN_FACTOR {
                        break;
                    }
                    nids.push((nid, vec![k.to_vec()]));
                }
            }
        }
        let mut w = Writes::new();
        if nids.is_empty() {
            job.status = ErasureStatus::Complete;
            job.completed_at = Some(Timestamp::now());
            w.put_rec(T::erasures, Key::new().id(project).id(id), &job);
            self.commit_durable(w)?;
            return Ok(job);
        }
        let mut removal = Removal::new(self, *project, false);
        for (nid, keys) in &nids {
            match self.notif_rec(project, nid)? {
                // Still pending (its deliveries to a deleted user settle
                // soon): a later step takes it.
                Some(r) if !r.n.processed || !r.d.iter().all(|d| d.status.is_final()) => {}
                Some(r) => removal.remove(&Doomed::of(&r))?,
                // Gone already (purged): only its feed keys are left, and
                // a trace a purge before traces went with notifications
                // may have left.
                None => {
                    for k in keys {
                        removal.w.del(T::feed, k);
                    }
                    self.stage_trace_removal(&mut removal.w, project, nid)?;
                }
            }
        }
        let (mut rw, report, _) = removal.finish(false)?;
        job.notifications_removed += report.notifications;
        rw.put_rec(T::erasures, Key::new().id(project).id(id), &job);
        w.append(rw);
        self.commit_durable(w)?;
        self.take_usage(project, report.usage_bytes)?;
        Ok(job)
    }
}
