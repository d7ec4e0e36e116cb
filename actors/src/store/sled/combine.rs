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

use std::collections::HashMap;
use std::sync::{Condvar, Mutex};

pub(crate) struct Combiner<W> {
    state: Mutex<State<W>>,
    applied: Condvar,
}

struct State<W> {
    next: u64,
    queued: Vec<(u64, W)>,
    leading: bool,
    results: HashMap<u64, sled::Result<()>>,
}

impl<W> Combiner<W> {
    pub(crate) fn new() -> Self {
        Combiner {
            state: Mutex::new(State {
                next: 0,
                queued: vec![],
                leading: false,
                results: HashMap::new(),
            }),
            applied: Condvar::new(),
        }
    }

    /// Applies `w` with whatever else is queued, through `apply` (given the
    /// group in queue order); the group's result.
    pub(crate) fn commit(
        &self,
        w: W,
        apply: impl Fn(Vec<W>) -> sled::Result<()>,
    ) -> sled::Result<()> {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let me = st.next;
        st.next += 1;
        st.queued.push((me, w));
        loop {
            if let Some(r) = st.results.remove(&me) {
                return r;
            }
            if !st.leading {
                st.leading = true;
                let group = std::mem::take(&mut st.queued);
                drop(st);
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
                st = self.state.lock().unwrap_or_else(|p| p.into_inner());
                st.leading = false;
                for id in ids {
                    st.results.insert(id, res.clone());
                }
                self.applied.notify_all();
                continue;
            }
            st = self.applied.wait(st).unwrap_or_else(|p| p.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        assert!(r.is_err());
        assert!(c
            .commit(2, |g| {
                assert_eq!(g, vec![2]);
                Ok(())
            })
            .is_ok());
    }
}
