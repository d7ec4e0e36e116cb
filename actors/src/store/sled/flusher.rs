//! Group commit. sled makes writes durable only on `flush`, and one flush costs as
//! much as dozens of inserts, so one thread flushes for everybody: a writer takes a
//! ticket after its write is applied, the flusher notes the highest ticket handed
//! out, flushes once, and then releases every waiter up to that ticket. Under load
//! one flush covers many requests, so throughput rises with concurrency.
//!
//! Every ticket gets an answer: a flush that fails answers its tickets with 503,
//! and a flush that does not return (sled 0.34 can lose the wake-up of a flush
//! after an I/O error, see `health`) is abandoned by the store's doctor through
//! `fail_pending`, so no waiter ever hangs on durability.

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use tokio::sync::watch;

/// What flushes the store's current database (it changes when the store reopens).
pub type FlushFn = Arc<dyn Fn() -> Result<()> + Send + Sync>;

/// Tickets whose flush failed, as ranges `(lo, hi]`, oldest first. Consecutive
/// failures merge into one range; only the latest few are kept (a waiter is
/// answered as soon as its range is settled, long before it could fall off).
const FAILED_RANGES_KEPT: usize = 256;

#[derive(Default)]
struct Settled {
    /// Every ticket up to here has its answer.
    upto: u64,
    failed: std::collections::VecDeque<(u64, u64)>,
}

impl Settled {
    fn record(&mut self, hi: u64, ok: bool) -> bool {
        if hi <= self.upto {
            return false;
        }
        if !ok {
            match self.failed.back_mut() {
                Some(last) if last.1 == self.upto => last.1 = hi,
                _ => self.failed.push_back((self.upto, hi)),
            }
            if self.failed.len() > FAILED_RANGES_KEPT {
                self.failed.pop_front();
            }
        }
        self.upto = hi;
        true
    }
    fn failed(&self, ticket: u64) -> bool {
        self.failed
            .iter()
            .rev()
            .any(|&(lo, hi)| lo < ticket && ticket <= hi)
    }
}

struct Shared {
    requested: AtomicU64,
    /// Flusher sleeps here until `requested` moves.
    wake: (Mutex<bool>, Condvar),
    /// Which tickets are answered and which of them failed, for blocking waiters.
    settled: (Mutex<Settled>, Condvar),
    /// `settled.upto`, for async waiters.
    done_tx: watch::Sender<u64>,
    /// When the flush in progress started (ms since `epoch`, plus one), or 0.
    flushing_since: AtomicU64,
    epoch: std::time::Instant,
    exit: AtomicBool,
    /// Run at the start of each cycle, before the flush's target is read:
    /// the store applies the commits queued for the flusher there (see
    /// `combine`), so this cycle's flush covers them.
    prepare: std::sync::OnceLock<Box<dyn Fn() + Send + Sync>>,
}

#[derive(Clone)]
pub struct Flusher {
    shared: Arc<Shared>,
    thread: Arc<Mutex<Option<std::thread::JoinHandle<()>>>>,
}

impl Flusher {
    /// Starts the flusher thread. `on_error` hears every failed flush.
    pub fn start(flush: FlushFn, on_error: Arc<dyn Fn(&Error) + Send + Sync>) -> Flusher {
        let (done_tx, _) = watch::channel(0u64);
        let shared = Arc::new(Shared {
            requested: AtomicU64::new(0),
            wake: (Mutex::new(false), Condvar::new()),
            settled: (Mutex::new(Settled::default()), Condvar::new()),
            done_tx,
            flushing_since: AtomicU64::new(0),
            epoch: std::time::Instant::now(),
            exit: AtomicBool::new(false),
            prepare: std::sync::OnceLock::new(),
        });
        let s = shared.clone();
        let f = Flusher {
            shared,
            thread: Arc::new(Mutex::new(None)),
        };
        let me = f.clone();
        // A plain thread, not a tokio task: flush is a blocking fsync and the store
        // is also used from the CLI where no runtime runs.
        let handle = std::thread::Builder::new()
            .name("herald-flusher".into())
            .spawn(move || loop {
                {
                    let (m, cv) = &s.wake;
                    let mut pending = m.lock().unwrap_or_else(|p| p.into_inner());
                    while !*pending {
                        pending = cv.wait(pending).unwrap_or_else(|p| p.into_inner());
                    }
                    *pending = false;
                }
                let exiting = s.exit.load(Ordering::SeqCst);
                // The cycle's batch counts as its flush: applying it can
                // wait on sled as long as a flush can (see `health`).
                s.flushing_since
                    .store(s.epoch.elapsed().as_millis() as u64 + 1, Ordering::SeqCst);
                if let Some(prepare) = s.prepare.get() {
                    prepare();
                }
                let target = s.requested.load(Ordering::SeqCst);
                let res = flush();
                s.flushing_since.store(0, Ordering::SeqCst);
                if let Err(e) = &res {
                    tracing::error!(error = %e.message, "store flush failed");
                    on_error(e);
                }
                me.settle(target, res.is_ok());
                if exiting {
                    return; // the store is closing
                }
            })
            .expect("spawn flusher thread");
        *f.thread.lock().unwrap_or_else(|p| p.into_inner()) = Some(handle);
        f
    }

    fn settle(&self, hi: u64, ok: bool) {
        let (m, cv) = &self.shared.settled;
        let mut st = m.lock().unwrap_or_else(|p| p.into_inner());
        if st.record(hi, ok) {
            cv.notify_all();
            drop(st);
            self.shared.done_tx.send_replace(hi);
        }
    }

    /// Answers every ticket handed out so far with an error, without waiting for
    /// the flush in progress (which may never return).
    pub fn fail_pending(&self) {
        self.settle(self.shared.requested.load(Ordering::SeqCst), false);
    }

    /// How long the flush in progress (with the batch applied before it)
    /// has been running, if one is.
    pub fn flushing_for(&self) -> Option<std::time::Duration> {
        match self.shared.flushing_since.load(Ordering::SeqCst) {
            0 => None,
            t => Some(
                self.shared
                    .epoch
                    .elapsed()
                    .saturating_sub(std::time::Duration::from_millis(t - 1)),
            ),
        }
    }

    /// Sets what runs at the start of every cycle (once; later calls are
    /// ignored).
    pub(crate) fn set_prepare(&self, f: Box<dyn Fn() + Send + Sync>) {
        let _ = self.shared.prepare.set(f);
    }

    /// Wakes the flusher for a cycle without taking a ticket.
    pub(crate) fn nudge(&self) {
        let (m, cv) = &self.shared.wake;
        *m.lock().unwrap_or_else(|p| p.into_inner()) = true;
        cv.notify_one();
    }

    /// A ticket that the cycle in progress covers, without waking the
    /// flusher: only for `prepare`, which runs before the cycle reads its
    /// target.
    pub(crate) fn ticket_in_cycle(&self) -> u64 {
        self.shared.requested.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// A ticket covering every write applied before this call.
    pub fn request(&self) -> u64 {
        let t = self.shared.requested.fetch_add(1, Ordering::SeqCst) + 1;
        let (m, cv) = &self.shared.wake;
        *m.lock().unwrap_or_else(|p| p.into_inner()) = true;
        cv.notify_one();
        t
    }

    /// Flushes one last time and stops the thread (the store is closing). Does
    /// not wait for a flush that is stuck (see `fail_pending`).
    pub fn shutdown(&self) {
        self.shared.exit.store(true, Ordering::SeqCst);
        let (m, cv) = &self.shared.wake;
        *m.lock().unwrap_or_else(|p| p.into_inner()) = true;
        cv.notify_one();
        if self.flushing_for().is_some_and(|d| d.as_secs() >= 1) {
            return;
        }
        if let Some(h) = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take() {
            // The store's last handle may go on the flusher itself (the
            // `prepare` hook holds one while it applies): it then just ends.
            if h.thread().id() != std::thread::current().id() {
                let _ = h.join();
            }
        }
    }

    fn answer(&self, ticket: u64) -> Result<()> {
        let st = self
            .shared
            .settled
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if st.failed(ticket) {
            Err(Error::storage_unavailable(
                "the store cannot write to disk (flush failed); try again later",
            ))
        } else {
            Ok(())
        }
    }

    pub fn wait_blocking(&self, ticket: u64) -> Result<()> {
        let (m, cv) = &self.shared.settled;
        let mut st = m.lock().unwrap_or_else(|p| p.into_inner());
        while st.upto < ticket {
            st = cv.wait(st).unwrap_or_else(|p| p.into_inner());
        }
        drop(st);
        self.answer(ticket)
    }

    pub async fn wait(&self, ticket: u64) -> Result<()> {
        let mut rx = self.shared.done_tx.subscribe();
        rx.wait_for(|d| *d >= ticket)
            .await
            .map_err(|_| Error::unavailable("store closed"))?;
        self.answer(ticket)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[allow(unused_imports)]
    use crate::storage::*;

    fn flusher_of(db: &sled::Db) -> Flusher {
        let db = db.clone();
        Flusher::start(
            Arc::new(move || db.flush().map(|_| ()).map_err(Error::from)),
            Arc::new(|_| {}),
        )
    }

    #[test]
    fn tickets_are_released_after_a_flush_and_writes_survive_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let db = sled::open(dir.path()).unwrap();
            let f = flusher_of(&db);
            let handles: Vec<_> = (0..8u8)
                .map(|i| {
                    let (db, f) = (db.clone(), f.clone());
                    std::thread::spawn(move || {
                        db.insert([i], &[i]).unwrap();
                        let t = f.request();
                        f.wait_blocking(t).unwrap();
                    })
                })
                .collect();
            for h in handles {
                h.join().unwrap();
            }
            f.shutdown();
        }
        // `shutdown` leaves a flush that has run for a second or more to finish
        // on its own (a loaded machine's fsync can): the flush thread then
        // still holds the database and its file lock for a moment.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let db = loop {
            match sled::open(dir.path()) {
                Ok(db) => break db,
                Err(_) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                Err(e) => panic!("reopen: {e}"),
            }
        };
        assert_eq!(db.len(), 8);
    }

    #[test]
    fn a_failed_flush_answers_its_tickets_with_503_and_later_ones_succeed() {
        let fail = Arc::new(AtomicBool::new(true));
        let errors = Arc::new(AtomicU64::new(0));
        let (f2, e2) = (fail.clone(), errors.clone());
        let f = Flusher::start(
            Arc::new(move || {
                if f2.load(Ordering::SeqCst) {
                    Err(Error::storage_unavailable("disk full"))
                } else {
                    Ok(())
                }
            }),
            Arc::new(move |_| {
                e2.fetch_add(1, Ordering::SeqCst);
            }),
        );
        let t1 = f.request();
        let e = f.wait_blocking(t1).unwrap_err();
        assert_eq!(e.code, crate::error::ErrorCode::ServiceUnavailable);
        assert!(errors.load(Ordering::SeqCst) >= 1);
        fail.store(false, Ordering::SeqCst);
        let t2 = f.request();
        f.wait_blocking(t2).unwrap();
        // the earlier ticket keeps its answer
        assert!(f.wait_blocking(t1).is_err());
        f.shutdown();
    }

    #[test]
    fn fail_pending_answers_waiters_of_a_flush_that_never_returns() {
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        let g2 = gate.clone();
        let f = Flusher::start(
            Arc::new(move || {
                let (m, cv) = &*g2;
                let mut open = m.lock().unwrap();
                while !*open {
                    open = cv.wait(open).unwrap();
                }
                Ok(())
            }),
            Arc::new(|_| {}),
        );
        let t = f.request();
        let waiter = {
            let f = f.clone();
            std::thread::spawn(move || f.wait_blocking(t))
        };
        while f.flushing_for().is_none() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        f.fail_pending();
        assert!(waiter.join().unwrap().is_err());
        // the stuck flush returns at last: it does not turn the answer into success
        let (m, cv) = &*gate;
        *m.lock().unwrap() = true;
        cv.notify_all();
        let t2 = f.request();
        f.wait_blocking(t2).unwrap();
        assert!(f.wait_blocking(t).is_err());
        f.shutdown();
    }
}
