//! Each project's usage counter on sled (`storage::UsageRepo`, see
//! `crate::quota`): one key per project in the `usage` space, its value the
//! count as 8 big-endian bytes. The key starts with the project's id, so
//! deleting the project deletes it with the rest.
//!
//! The count lives in memory (`Counters`) and is written at the start of
//! the flusher's next cycle, not by a commit of its own: a commit per run,
//! under a per-project lock, halved the runs/s of a project's small
//! transactional runs (docs/PERFORMANCE.md). A change does not wake the
//! flusher either: the commit it counts already has a cycle coming, and a
//! cycle of its own per change doubled the flushes of small runs. On a store
//! that goes idle the doctor wakes the flusher for a change no cycle took
//! (`Counters::pending`, within a tick), so a crash loses the changes of the
//! last cycle or tick at most, with the records they counted.

use super::{Store, Writes, T};
use crate::error::Result;
use crate::storage::UsageRepo;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use uuid::Uuid;

/// The counters of the projects changed since the store opened: the count
/// and whether it changed since it was last written.
#[derive(Default)]
pub(super) struct Counters {
    counts: dashmap::DashMap<Uuid, (u64, bool)>,
    /// Whether some counter changed since the last write: a cycle without
    /// a change does not walk the counters.
    changed: AtomicBool,
    /// Held from a write's read of the counters to its commit, so two
    /// writes never store their values in the other order.
    writing: Mutex<()>,
}

impl Counters {
    /// Whether some counter changed since the last write.
    pub(super) fn pending(&self) -> bool {
        self.changed.load(Ordering::SeqCst)
    }
}

fn decode(v: &[u8]) -> u64 {
    v.try_into().map(u64::from_be_bytes).unwrap_or(0)
}

impl Store {
    fn stored_usage(&self, project: &Uuid) -> Result<u64> {
        Ok(self
            .tree(T::usage)
            .get(project.as_bytes())?
            .map_or(0, |v| decode(&v)))
    }

    /// Writes the counters changed since the last write (the flusher's
    /// cycle, `flush`); applied at once (`commit_now`).
    pub(super) fn write_usage(&self) -> Result<()> {
        let c = &self.inner.usage;
        let _writing = c.writing.lock().unwrap_or_else(|p| p.into_inner());
        if !c.changed.swap(false, Ordering::SeqCst) {
            return Ok(());
        }
        let mut w = Writes::new();
        let mut taken = vec![];
        for mut e in c.counts.iter_mut() {
            if e.1 {
                e.1 = false;
                w.put(T::usage, e.key().as_bytes(), e.0.to_be_bytes());
                taken.push(*e.key());
            }
        }
        let res = self.commit_now(w);
        if res.is_err() {
            for p in taken {
                if let Some(mut e) = c.counts.get_mut(&p) {
                    e.1 = true;
                }
            }
            c.changed.store(true, Ordering::SeqCst);
        }
        res
    }
}

impl UsageRepo for Store {
    fn usage_bytes(&self, project: &Uuid) -> Result<u64> {
        match self.inner.usage.counts.get(project) {
            Some(e) => Ok(e.0),
            None => self.stored_usage(project),
        }
    }

    /// Changed in memory, written by the flusher's next cycle (see the
    /// module doc for why this does not wake it).
    fn add_usage(&self, project: &Uuid, delta: i64) -> Result<()> {
        if delta == 0 || self.is_deleted(project) {
            return Ok(());
        }
        {
            let mut e = self
                .inner
                .usage
                .counts
                .entry(*project)
                .or_try_insert_with(|| self.stored_usage(project).map(|n| (n, false)))?;
            e.0 = if delta < 0 {
                e.0.saturating_sub(delta.unsigned_abs())
            } else {
                e.0.saturating_add(delta as u64)
            };
            e.1 = true;
        }
        self.inner.usage.changed.store(true, Ordering::SeqCst);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[allow(unused_imports)]
    use crate::storage::*;

    #[test]
    fn the_counter_adds_takes_away_and_stops_at_zero() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let (p, q) = (Uuid::now_v7(), Uuid::now_v7());
        assert_eq!(store.usage_bytes(&p).unwrap(), 0);
        store.add_usage(&p, 1000).unwrap();
        store.add_usage(&p, -300).unwrap();
        store.add_usage(&q, 5).unwrap();
        assert_eq!(store.usage_bytes(&p).unwrap(), 700);
        assert_eq!(store.usage_bytes(&q).unwrap(), 5);
        store.add_usage(&p, -5000).unwrap();
        assert_eq!(store.usage_bytes(&p).unwrap(), 0);
        store.add_usage(&p, 42).unwrap();
        store.flush().unwrap();
        drop(store);
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(store.usage_bytes(&p).unwrap(), 42, "written by the flush");
        assert_eq!(store.usage_bytes(&q).unwrap(), 5);
    }

    #[test]
    fn an_idle_stores_change_is_written_by_a_cycle_the_doctor_wakes() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let p = Uuid::now_v7();
        store.add_usage(&p, 42).unwrap();
        assert!(store.inner.usage.pending());
        // Nothing else writes: only the doctor's tick brings a cycle.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while store.stored_usage(&p).unwrap() != 42 {
            assert!(
                std::time::Instant::now() < until,
                "no cycle wrote the change"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(!store.inner.usage.pending());
    }
}
