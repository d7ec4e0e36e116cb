//! Group commit. sled makes writes durable only on `flush`, and one flush costs as
//! much as dozens of inserts, so one thread flushes for everybody: a writer takes a
//! ticket after its write is applied, the flusher notes the highest ticket handed
//! out, flushes once, and then releases every waiter up to that ticket. Under load
//! one flush covers many requests, so throughput rises with concurrency.

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use tokio::sync::watch;

struct Shared {
    requested: AtomicU64,
    /// Flusher sleeps here until `requested` moves.
    wake: (Mutex<bool>, Condvar),
    /// Highest ticket known durable, for blocking waiters.
    done: (Mutex<u64>, Condvar),
    /// Same number, for async waiters.
    done_tx: watch::Sender<u64>,
    failed: std::sync::atomic::AtomicBool,
    exit: std::sync::atomic::AtomicBool,
}

#[derive(Clone)]
pub struct Flusher {
    shared: Arc<Shared>,
    thread: Arc<Mutex<Option<std::thread::JoinHandle<()>>>>,
}

impl Flusher {
    pub fn start(db: sled::Db) -> Flusher {
        let (done_tx, _) = watch::channel(0u64);
        let shared = Arc::new(Shared {
            requested: AtomicU64::new(0),
            wake: (Mutex::new(false), Condvar::new()),
            done: (Mutex::new(0), Condvar::new()),
            done_tx,
            failed: std::sync::atomic::AtomicBool::new(false),
            exit: std::sync::atomic::AtomicBool::new(false),
        });
        let s = shared.clone();
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
                let target = s.requested.load(Ordering::SeqCst);
                if let Err(e) = db.flush() {
                    tracing::error!(error = %e, "store flush failed");
                    s.failed.store(true, Ordering::SeqCst);
                }
                let (m, cv) = &s.done;
                let mut d = m.lock().unwrap_or_else(|p| p.into_inner());
                if target > *d {
                    *d = target;
                }
                cv.notify_all();
                drop(d);
                s.done_tx.send_replace(target);
                if exiting {
                    return; // the store is closing; `db` is released with this thread
                }
            })
            .expect("spawn flusher thread");
        Flusher {
            shared,
            thread: Arc::new(Mutex::new(Some(handle))),
        }
    }

    /// A ticket covering every write applied before this call.
    pub fn request(&self) -> u64 {
        let t = self.shared.requested.fetch_add(1, Ordering::SeqCst) + 1;
        let (m, cv) = &self.shared.wake;
        *m.lock().unwrap_or_else(|p| p.into_inner()) = true;
        cv.notify_one();
        t
    }

    /// Flushes one last time and stops the thread (the store is closing).
    pub fn shutdown(&self) {
        self.shared.exit.store(true, Ordering::SeqCst);
        let (m, cv) = &self.shared.wake;
        *m.lock().unwrap_or_else(|p| p.into_inner()) = true;
        cv.notify_one();
        if let Some(h) = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = h.join();
        }
    }

    fn check(&self) -> Result<()> {
        if self.shared.failed.load(Ordering::SeqCst) {
            Err(Error::unavailable("storage flush failed"))
        } else {
            Ok(())
        }
    }

    pub fn wait_blocking(&self, ticket: u64) -> Result<()> {
        let (m, cv) = &self.shared.done;
        let mut d = m.lock().unwrap_or_else(|p| p.into_inner());
        while *d < ticket {
            d = cv.wait(d).unwrap_or_else(|p| p.into_inner());
        }
        drop(d);
        self.check()
    }

    pub async fn wait(&self, ticket: u64) -> Result<()> {
        let mut rx = self.shared.done_tx.subscribe();
        rx.wait_for(|d| *d >= ticket)
            .await
            .map_err(|_| Error::unavailable("store closed"))?;
        self.check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tickets_are_released_after_a_flush_and_writes_survive_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let db = sled::open(dir.path()).unwrap();
            let f = Flusher::start(db.clone());
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
        let db = sled::open(dir.path()).unwrap();
        assert_eq!(db.len(), 8);
    }
}
