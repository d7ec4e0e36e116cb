//! Combined commits: concurrent `Store::commit`s applied as one sled batch.
//!
//! sled 0.34 rolls its I/O buffer on every `apply_batch` (`PageCache::pin_log`
//! seals the buffer before and after reserving the batch's manifest), and each
//! sealed buffer is written, with a `sync_file_range`, by sled's I/O pool,
//! whose every send wakes all of its idle threads (seven at least). So each
//! batch cost a dozen thread wake-ups whatever its size, and with many small
//! commits at once (single-recipient runs, user PUTs) those wake-ups were
//! most of the server's CPU.
//!
//! Here the first committer that finds nobody applying becomes the leader: it
//! takes every commit queued so far (its own included), applies them as one
//! batch and hands each member the result; commits that arrive meanwhile
//! queue for the next leader, one of themselves. The batch is atomic as a
//! whole, so each member's writes are too, and members are in queue order, so
//! a later member's op on a key wins as it would had it been applied after.
//! A member blocks until its group is applied, still holding its own locks,
//! so a commit has applied when `commit` returns, as before. A lone commit
//! leads its own group of one, at once.
//!
//! Once `delegate` is set (the store does it at open), nobody leads: the
//! group-commit flusher takes every queued commit at the start of each of
//! its cycles (`drain`), applies them as one batch, and flushes right after.
//! A sled batch costs the same whatever it holds, so the commits that arrive
//! during one flush share one batch and that flush's successor covers them
//! all; each member learns the flusher's ticket of that cycle, which its
//! caller may wait on instead of asking for a new one (`Ticket::JobEnd`).

use std::collections::HashMap;
use std::sync::{Condvar, Mutex};

pub(crate) struct Combiner<W> {
    state: Mutex<State<W>>,
    applied: Condvar,
    /// Wakes whoever applies queued commits when they are delegated.
    wake: std::sync::OnceLock<Box<dyn Fn() + Send + Sync>>,
}

/// A member's answer: its group's result and, when the flusher applied the
/// group, the ticket of the flush that follows.
pub(crate) type Applied = (sled::Result<()>, Option<u64>);

struct State<W> {
    next: u64,
    queued: Vec<(u64, W)>,
    leading: bool,
    /// Queued commits wait for `drain` instead of leading.
    delegated: bool,
    results: HashMap<u64, Applied>,
}

impl<W> Combiner<W> {
    pub(crate) fn new() -> Self {
        Combiner {
            state: Mutex::new(State {
                next: 0,
                queued: vec![],
                leading: false,
                delegated: false,
                results: HashMap::new(),
            }),
            applied: Condvar::new(),
            wake: std::sync::OnceLock::new(),
        }
    }

    /// From now on queued commits are applied by `drain`; `wake` is called
    /// whenever a commit is queued, so the drainer comes.
    pub(crate) fn delegate(&self, wake: Box<dyn Fn() + Send + Sync>) {
        let _ = self.wake.set(wake);
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        st.delegated = true;
    }

    /// Commits lead their groups again (the drainer has stopped); waiting
    /// members take over.
    #[cfg(test)]
    pub(crate) fn undelegate(&self) {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        st.delegated = false;
        self.applied.notify_all();
    }

    /// Applies every queued commit as one group through `apply`, then asks
    /// `ticket` for the ticket its members get. False when nothing was
    /// queued (or a member is leading its own group, before `delegate`).
    pub(crate) fn drain(
        &self, apply: impl FnOnce(Vec<W>) -> sled::Result<()>, ticket: impl FnOnce() -> u64,
    ) -> bool {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if st.leading || st.queued.is_empty() {
            return false;
        }
        st.leading = true;
        let group = std::mem::take(&mut st.queued);
        drop(st);
        let (res, ids) = Self::apply_group(group, apply);
        let t = ticket();
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        st.leading = false;
        for id in ids {
            st.results.insert(id, (res.clone(), Some(t)));
        }
        self.applied.notify_all();
        true
    }

    fn apply_group(
        group: Vec<(u64, W)>, apply: impl FnOnce(Vec<W>) -> sled::Result<()>,
    ) -> (sled::Result<()>, Vec<u64>) {
        let ids: Vec<u64> = group.iter().map(|(id, _)| *id).collect();
        let writes = group.into_iter().map(|(_, w)| w).collect();
        // A panic must not leave `leading` set: every later commit
        // would wait for a leader that never comes.
        let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| apply(writes)))
            .unwrap_or_else(|_| {
                Err(sled::Error::ReportableBug(
                    "a combined commit panicked".into(),
                ))
            });
        (res, ids)
    }

    /// Applies `w` with whatever else is queued, through `apply` (given the
    /// group in queue order), or, once delegated, waits for `drain` to;
    /// the group's result and the drainer's ticket.
    pub(crate) fn commit(&self, w: W, apply: impl Fn(Vec<W>) -> sled::Result<()>) -> Applied {
        self.commit_as(w, apply, false)
    }

    /// `commit`, led by the caller even once delegated (as before
    /// `delegate`: it applies its group, with whatever else is queued, as
    /// soon as nobody else is applying): for a writer that holds locks
    /// others wait for and does not itself wait for durability, which
    /// would otherwise hold them until the flusher's next cycle, after the
    /// flush in progress.
    pub(crate) fn commit_now(&self, w: W, apply: impl Fn(Vec<W>) -> sled::Result<()>) -> Applied {
        self.commit_as(w, apply, true)
    }

    fn commit_as(&self, w: W, apply: impl Fn(Vec<W>) -> sled::Result<()>, now: bool) -> Applied {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let me = st.next;
        st.next += 1;
        st.queued.push((me, w));
        if st.delegated && !now {
            drop(st);
            if let Some(wake) = self.wake.get() {
                wake();
            }
            st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        }
        loop {
            if let Some(r) = st.results.remove(&me) {
                return r;
            }
            if !st.leading && (!st.delegated || now) {
                st.leading = true;
                let group = std::mem::take(&mut st.queued);
                drop(st);
                let (res, ids) = Self::apply_group(group, &apply);
                st = self.state.lock().unwrap_or_else(|p| p.into_inner());
                st.leading = false;
                for id in ids {
                    st.results.insert(id, (res.clone(), None));
                }
                self.applied.notify_all();
                if st.delegated && !st.queued.is_empty() {
                    // delegated while this group was applied: the drainer
                    // may have found it leading and left the rest queued
                    if let Some(wake) = self.wake.get() {
                        wake();
                    }
                }
                continue;
            }
            st = self.applied.wait(st).unwrap_or_else(|p| p.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[allow(unused_imports)]
    use crate::storage::*;
    use std::sync::Arc;

    #[test]
    fn every_commit_is_applied_once_and_answered_with_its_groups_result() {
        let c = Arc::new(Combiner::<u32>::new());
        let seen = Arc::new(Mutex::new(vec![]));
        let handles: Vec<_> = (0..16u32)
            .map(|i| {
                let (c, seen) = (c.clone(), seen.clone());
                std::thread::spawn(move || {
                    c.commit(i, |group| {
                        let fail = group.contains(&7);
                        seen.lock().unwrap().extend(group);
                        if fail {
                            Err(sled::Error::Unsupported("seven".into()))
                        } else {
                            Ok(())
                        }
                    })
                    .0
                    .map_err(|_| i)
                })
            })
            .collect();
        let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let mut seen = seen.lock().unwrap().clone();
        seen.sort();
        assert_eq!(seen, (0..16).collect::<Vec<_>>());
        // 7's group failed as a whole; its result reached 7.
        assert_eq!(results[7], Err(7));
    }

    #[test]
    fn a_panicking_group_answers_an_error_and_later_commits_still_apply() {
        let c = Combiner::<u32>::new();
        let r = c.commit(1, |_| panic!("boom"));
        assert!(r.0.is_err());
        assert!(c
            .commit(2, |g| {
                assert_eq!(g, vec![2]);
                Ok(())
            })
            .0
            .is_ok());
    }

    #[test]
    fn commit_now_leads_its_group_while_delegated_commits_wait() {
        let c = Arc::new(Combiner::<u32>::new());
        // a drainer that never comes: only a commit that leads returns
        c.delegate(Box::new(|| {}));
        let (tx, rx) = std::sync::mpsc::channel();
        let c2 = c.clone();
        std::thread::spawn(move || {
            let _ = tx.send(c2.commit_now(7, |g| {
                assert_eq!(g, vec![7]);
                Ok(())
            }));
        });
        let (r, t) = rx
            .recv_timeout(std::time::Duration::from_secs(5))
            .expect("commit_now applied its group itself");
        assert!(r.is_ok());
        assert_eq!(t, None, "no flusher ticket: it did not wait for a cycle");
        // a plain commit queued meanwhile is taken by the next commit_now
        let c3 = c.clone();
        let queued = std::thread::spawn(move || c3.commit(1, |_| Ok(())));
        while c.state.lock().unwrap().queued.is_empty() {
            std::thread::yield_now();
        }
        let (r, _) = c.commit_now(2, |g| {
            assert_eq!(g, vec![1, 2]);
            Ok(())
        });
        assert!(r.is_ok());
        assert!(queued.join().unwrap().0.is_ok());
    }

    #[test]
    fn delegated_commits_wait_for_the_drainer_and_get_its_ticket() {
        let c = Arc::new(Combiner::<u32>::new());
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let tx = Mutex::new(tx);
        c.delegate(Box::new(move || {
            let _ = tx.lock().unwrap().send(());
        }));
        let drainer = {
            let c = c.clone();
            std::thread::spawn(move || {
                let mut applied = vec![];
                while applied.len() < 4 {
                    rx.recv().unwrap();
                    c.drain(
                        |g| {
                            applied.extend(g);
                            Ok(())
                        },
                        || 42,
                    );
                }
                applied
            })
        };
        let members: Vec<_> = (0..4u32)
            .map(|i| {
                let c = c.clone();
                std::thread::spawn(move || c.commit(i, |_| panic!("a member led")))
            })
            .collect();
        for m in members {
            let (r, t) = m.join().unwrap();
            assert!(r.is_ok());
            assert_eq!(t, Some(42));
        }
        let mut applied = drainer.join().unwrap();
        applied.sort();
        assert_eq!(applied, vec![0, 1, 2, 3]);
        // undelegated, a commit leads its own group again
        c.undelegate();
        assert_eq!(c.commit(9, |_| Ok(())).1, None);
    }
}
