//! Keeping the store writable: a full disk (or any I/O error) makes the store
//! *degraded* — writes answer 503 with `Retry-After` without touching sled, and
//! `/readyz` says so — and a doctor thread brings it back by itself once the
//! disk can take writes again. Reads keep working while degraded.
//!
//! What sled 0.34 does on an I/O error (read in its source, `pagecache/iobuf.rs`,
//! `logger.rs`, `config.rs`, and reproduced on a full tmpfs): the failed write of
//! an IO buffer is stored as the database's *global error*, which is never
//! cleared while the `Db` lives (`reset_global_error` only runs when a `Db` is
//! opened). Every later write and flush of that `Db` returns it, even after the
//! space is back. So the doctor *reopens* the `Db` in-process once a probe write
//! of `PROBE_BYTES` into the data directory succeeds: what was flushed is there
//! (reopen recovers the log up to the last flushed batch, atomically), and what
//! was applied but never flushed was never acknowledged either.
//!
//! Worse, a write that fails on sled's reservation path sets that error without
//! waking the threads waiting in `make_stable` (only the seal path does), so a
//! flush can sleep forever while holding sled's *process-wide* concurrency-control
//! read lock, and every later `apply_batch` then waits for it too. Nothing in
//! sled's API can wake it, and a new `Db` in the same process shares that lock,
//! so then the only way out is a new process: the doctor answers the waiters
//! (503) after `STUCK_AFTER`, and after `EXIT_AFTER` exits with a clear message
//! for the supervisor (systemd, Kubernetes) to restart Herald. Acknowledged writes
//! were flushed before they were acknowledged, so the restart loses nothing.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// A flush running longer than this answers its waiters with 503 and marks the
/// store degraded (a healthy fsync takes milliseconds).
pub const STUCK_AFTER: Duration = Duration::from_secs(5);
/// A flush still stuck after this: the process exits for a restart (see above).
pub const EXIT_AFTER: Duration = Duration::from_secs(30);
/// How often the doctor looks (and, while degraded, probes the disk).
const TICK: Duration = Duration::from_millis(250);
const PROBE_EVERY: Duration = Duration::from_secs(1);
/// A probe write of this size must succeed before sled is reopened: room for
/// sled's segment buffer (512 KiB) and its metadata, so a reopen is not followed
/// by the same error at once.
const PROBE_BYTES: usize = 1024 * 1024;
const PROBE_FILE: &str = ".space-probe";

/// The store's health, shared by the store, its flusher and its doctor.
#[derive(Default)]
pub struct Health {
    degraded: AtomicBool,
    /// Set with `degraded` when sled has seen an I/O error and must be reopened.
    needs_reopen: AtomicBool,
    reason: Mutex<String>,
    /// Bumped by every reopen: the engine reloads what it keeps in memory.
    generation: AtomicU64,
    /// Set when the store is closing: the doctor stops.
    closing: AtomicBool,
}

impl Health {
    pub fn is_degraded(&self) -> bool {
        self.degraded.load(Ordering::SeqCst)
    }

    /// Why the store is degraded ("" when it is not).
    pub fn reason(&self) -> String {
        self.reason
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    pub(crate) fn degrade(&self, reason: &str, needs_reopen: bool) {
        if needs_reopen {
            self.needs_reopen.store(true, Ordering::SeqCst);
        }
        if !self.degraded.swap(true, Ordering::SeqCst) {
            tracing::error!(
                reason,
                "store degraded: writes answer 503 until the disk takes writes again"
            );
        }
        *self.reason.lock().unwrap_or_else(|p| p.into_inner()) = reason.to_string();
    }

    pub(crate) fn recovered(&self, reopened: bool) {
        if reopened {
            self.needs_reopen.store(false, Ordering::SeqCst);
            self.generation.fetch_add(1, Ordering::SeqCst);
        }
        self.reason
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        if self.degraded.swap(false, Ordering::SeqCst) {
            tracing::info!(reopened, "store recovered: writes are accepted again");
        }
    }

    pub(crate) fn needs_reopen(&self) -> bool {
        self.needs_reopen.load(Ordering::SeqCst)
    }

    pub(crate) fn close(&self) {
        self.closing.store(true, Ordering::SeqCst);
    }

    fn closing(&self) -> bool {
        self.closing.load(Ordering::SeqCst)
    }
}

/// Bytes available to this (unprivileged) process on the filesystem holding
/// `path` (statvfs `f_bavail × f_frsize`).
pub fn available_space(path: &Path) -> std::io::Result<u64> {
    let s = rustix::fs::statvfs(path).map_err(std::io::Error::from)?;
    Ok(s.f_bavail.saturating_mul(s.f_frsize))
}

/// Writes and syncs `PROBE_BYTES` in `dir`, then removes the file: whether the
/// disk takes writes now, whatever the reason it did not (space, quota, I/O).
fn probe(dir: &Path) -> std::io::Result<()> {
    use std::io::Write;
    let path = dir.join(PROBE_FILE);
    let res = (|| {
        let mut f = std::fs::File::create(&path)?;
        f.write_all(&vec![0u8; PROBE_BYTES])?;
        f.sync_all()
    })();
    let _ = std::fs::remove_file(&path);
    res
}

/// The doctor: watches the flusher and brings a degraded store back. Holds only
/// a weak reference, so it ends when the store is dropped.
pub(super) fn start_doctor(store: std::sync::Weak<super::Inner>) {
    let spawned = std::thread::Builder::new()
        .name("herald-store-doctor".into())
        .spawn(move || {
            let mut last_probe = std::time::Instant::now() - PROBE_EVERY;
            loop {
                std::thread::sleep(TICK);
                let Some(inner) = store.upgrade() else { return };
                if inner.health.closing() {
                    return;
                }
                let store = super::Store { inner };
                if let Some(d) = store.inner.flusher.flushing_for() {
                    if d >= EXIT_AFTER {
                        let msg = format!(
                            "the store's flush has not returned for {} s after a disk error (sled cannot recover in this process); exiting with status 70 so the supervisor restarts Herald — acknowledged writes are on disk",
                            d.as_secs()
                        );
                        tracing::error!("{msg}");
                        eprintln!("error: {msg}");
                        std::process::exit(70);
                    }
                    if d >= STUCK_AFTER {
                        store
                            .inner
                            .health
                            .degrade("the store's flush is not returning", false);
                        store.inner.flusher.fail_pending();
                    }
                    continue;
                }
                let health = &store.inner.health;
                if !health.is_degraded() || last_probe.elapsed() < PROBE_EVERY {
                    continue;
                }
                last_probe = std::time::Instant::now();
                if let Err(e) = probe(store.path()) {
                    tracing::debug!(error = %e, "disk still refuses writes");
                    continue;
                }
                if health.needs_reopen() {
                    if let Err(e) = store.reopen() {
                        tracing::warn!(error = %e.message, "cannot reopen the store yet");
                        continue;
                    }
                    health.recovered(true);
                } else {
                    // a flush that was stuck returned: degraded only while waiting
                    health.recovered(false);
                }
            }
        });
    if let Err(e) = spawned {
        tracing::error!(error = %e, "cannot start the store doctor thread");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn available_space_of_a_temp_dir_is_positive_and_probe_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        assert!(available_space(dir.path()).unwrap() > 0);
        probe(dir.path()).unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn degrade_and_recover_move_the_generation_only_on_reopen() {
        let h = Health::default();
        h.degrade("disk full", true);
        assert!(h.is_degraded() && h.needs_reopen());
        assert_eq!(h.reason(), "disk full");
        h.recovered(true);
        assert!(!h.is_degraded() && !h.needs_reopen());
        assert_eq!(h.generation(), 1);
        h.degrade("slow", false);
        h.recovered(false);
        assert_eq!(h.generation(), 1);
    }
}
