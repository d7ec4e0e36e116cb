//! Throttle counters in sled: one record per `(project, flow, recipient,
//! step, key)` holding the times (project milliseconds) of the runs the
//! counter counts within its window. They are written in the commit of the
//! notifications that count in them (`Store::stage_throttles`), and a run
//! with explicit recipients checks them under the recipients' locks
//! (`Store::throttles_stale`), so two runs racing for one recipient's last
//! slot cannot both take it.

use super::keys::uuid_at;
use super::keys::Key;
use super::removal::{counter_expired, SCAN_FACTOR};
use super::{Store, Writes, T};
use crate::error::Result;
use crate::storage::*;
use crate::storage::{StagedNotification, ThrottleKey, ThrottleWrite};
use std::collections::HashMap;
use uuid::Uuid;

fn key(project: &Uuid, k: &ThrottleKey) -> Key {
    Key::new()
        .id(project)
        .id(&k.flow_id)
        .id(&k.recipient)
        .u8(k.step)
        .bytes(k.key.as_bytes())
}

impl Store {
    /// Stages the counters the notifications passed.
    pub(super) fn stage_throttles(
        &self, w: &mut Writes, project: &Uuid, notifications: &[StagedNotification],
    ) {
        for t in notifications.iter().filter_map(|n| n.throttle.as_ref()) {
            w.put_rec(T::throttles, key(project, &t.key), &t.after);
        }
    }

    /// Whether a counter is no longer as staging read it.
    pub(super) fn throttles_stale(
        &self, project: &Uuid, throttles: &[ThrottleWrite],
    ) -> Result<bool> {
        for t in throttles {
            if self.throttle_hits(project, &t.key)? != t.before {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// Reads of the trait `RecordRepo` answers (`lookups.rs`).
impl Store {
    pub fn throttle_hits(&self, project: &Uuid, k: &ThrottleKey) -> Result<Vec<i64>> {
        Ok(self
            .get_rec::<Vec<i64>>(T::throttles, &key(project, k).0)?
            .unwrap_or_default())
    }
}

// Retention (`RetentionRepo::purge`) of throttle windows.
impl Store {
    /// Throttle counters with nothing left in their window at project time
    /// `cut.now`: a counter only ever keeps the runs within its step's window
    /// (`delivery::throttle::pass` trims it on each write), but a counter no
    /// run reaches again would stay forever, one per flow, recipient and key.
    /// One whose newest run is past the window reads as empty, so it goes, as
    /// does one whose flow, step or window is gone. Checked again under the
    /// recipient's user lock (the one a run commits its counters under), so
    /// a run passing meanwhile keeps its counter. Swept like feed entries (a
    /// new sweep at most every tenth of the notifications window, 1 s to 10
    /// minutes).
    pub(super) fn purge_throttles(
        &self, project: &Uuid, cut: &PurgeCutoffs, max: usize,
    ) -> Result<PurgeReport> {
        if !self.sweep_due(project, T::throttles, cut.notifications) {
            return Ok(PurgeReport::default());
        }
        let (lo, hi) = self.sweep_range(project, T::throttles);
        let now = cut.now.millis();
        // The window of each (flow, step) seen, read once per batch.
        let mut windows: HashMap<(Uuid, u8), Option<i64>> = HashMap::new();
        let mut doomed: Vec<(Uuid, Vec<u8>)> = vec![];
        let mut stop = None;
        for (seen, kv) in self
            .tree(T::throttles)
            .range::<Vec<u8>, _>((lo, hi))
            .enumerate()
        {
            let (k, v) = kv?;
            if seen >= max * SCAN_FACTOR || doomed.len() >= max {
                stop = Some((k.to_vec(), true));
                break;
            }
            if k.len() < 49 {
                continue;
            }
            let (flow, user, step) = (uuid_at(&k, 16), uuid_at(&k, 32), k[48]);
            let window = match windows.get(&(flow, step)) {
                Some(w) => *w,
                None => {
                    let w = self.flow(project, &flow)?.and_then(|f| {
                        let s = f.steps.get(step as usize)?;
                        (s.kind == "throttle").then_some(())?;
                        let span = crate::delivery::clock::Span::parse(s.window.as_deref()?);
                        span.ok().map(|w| w.millis())
                    });
                    windows.insert((flow, step), w);
                    w
                }
            };
            if counter_expired(&v, window, now)? {
                doomed.push((user, k.to_vec()));
            }
        }
        let mut report = PurgeReport {
            more: stop.is_some(),
            ..Default::default()
        };
        self.sweep_stopped(project, T::throttles, stop);
        if doomed.is_empty() {
            return Ok(report);
        }
        let mut locks = vec![];
        for (u, _) in &doomed {
            // A deleted user's counters no run can reach again: no lock needed.
            if let Some(user) = self.user(project, u)? {
                locks.push(super::users::user_lock_key(project, &user.external_id));
            }
        }
        let _users = self.lock_many(locks.iter().map(|k| k.as_slice()));
        let mut w = Writes::new();
        for (_, k) in &doomed {
            // Read again under the lock: a run may have passed meanwhile.
            let Some(v) = self.tree(T::throttles).get(k)? else {
                continue;
            };
            let flow = uuid_at(k, 16);
            let window = windows.get(&(flow, k[48])).copied().flatten();
            if counter_expired(&v, window, now)? {
                w.del(T::throttles, k);
                report.throttle_counters += 1;
                report.bytes += (k.len() + v.len()) as u64;
            }
        }
        self.commit_now(w)?;
        Ok(report)
    }
}
