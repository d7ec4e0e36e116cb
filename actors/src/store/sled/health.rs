//! Keeping the store writable, and readable whatever the disk does: a full
//! disk (or any I/O error) makes the store *degraded* — writes answer 503 with
//! `Retry-After` without touching sled, and `/readyz` says so — while reads
//! keep working, and a doctor thread brings it back by itself, in the process,
//! once the disk takes writes again.
//!
//! What sled 0.34 does on an I/O error (read in its source, `pagecache/iobuf.rs`,
//! `logger.rs`, `config.rs`, and reproduced on a full tmpfs): the failed write of
//! an IO buffer is stored as the database's *global error*, which is never
//! cleared while the `Db` lives (`reset_global_error` only runs when a `Db` is
//! opened). Every later write and flush of that `Db` returns it, even after the
//! space is back, and so do reads that must bring a page in from disk or split
//! a node: lists and feeds answered 503 on a full disk. And opening a `Db` needs
//! some free space itself. Hence three lines of defence:
//!
//! 1. **A free-space reserve** (`--min-free-space`): commits are refused once
//!    less than that is free on the data directory's filesystem (`check_space`,
//!    looked up at most every `SPACE_LOOK_EVERY` and by the doctor on each
//!    tick), so sled never meets ENOSPC from Herald's own growth nor from a disk
//!    another process filled while Herald was idle: the `Db` stays healthy,
//!    reads keep working, and writes resume as soon as the space is back.
//! 2. **A reopen** when sled met an I/O error anyway (a disk that filled in the
//!    middle of a write): once a probe write of `PROBE_BYTES` succeeds, the `Db`
//!    is opened again in-process. What was flushed is there (reopen recovers
//!    the log up to the last flushed batch, atomically); what was applied but
//!    never flushed was never acknowledged either. On a disk still full, the
//!    doctor removes its *ballast* (`BALLAST_FILE`, `BALLAST_BYTES` set aside
//!    at open) to make room for the reopen, so reads work on a healthy `Db`
//!    while writes stay refused until the reserve and the ballast are free again.
//! 3. **A flush that never returns.** Some failed writes set sled's global
//!    error without waking the threads waiting in `make_stable` (a reservation
//!    dropped on an error); any later flush sees the error and wakes every
//!    waiter, so the doctor *kicks* a flush that runs longer than `KICK_AFTER`
//!    (`kick`). Worse, a value large enough for a blob file of its own whose
//!    file cannot be written (ENOSPC) leaves its IO buffer claimed for good and
//!    sets no error at all: that buffer is never written, and every flush
//!    waits for it forever — nothing in sled's API can release it, and even
//!    dropping the `Db` flushes (and waits). Either way the waiting flush holds
//!    sled's *process-wide* concurrency-control read lock, and a writer queued
//!    for its exclusive lock would block every later read (the lock is fair),
//!    so batches are never applied while a flush runs (`enter_io`): they wait
//!    on Herald's gate, with a deadline, and reads go on. A flush stuck for
//!    `STUCK_AFTER` has its waiters answered 503 (writes are refused, reads
//!    keep working); stuck for `EXIT_AFTER` once the disk takes writes again,
//!    the process exits (status 70) for its supervisor (systemd, Kubernetes)
//!    to restart it: it would not start on a full disk, so it keeps serving
//!    reads until then. Acknowledged writes were flushed before they were
//!    acknowledged, so the restart loses nothing.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::{open_sled, Handles, Inner, Store, FORMAT_VERSION};
use crate::error::{Error, Result};

/// A flush running longer than this answers its waiters with 503 and marks the
/// store degraded (a healthy fsync takes milliseconds); a batch waits this long
/// at most for a flush to end before it is refused.
pub const STUCK_AFTER: Duration = Duration::from_secs(5);
/// A flush still stuck after this, on a disk that takes writes: the process
/// exits for a restart (see above).
pub const EXIT_AFTER: Duration = Duration::from_secs(15);
/// A probe that takes longer than this counts as a disk that does not answer.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// A flush running this long is kicked (see above), and again each time this
/// passes while it runs; on a healthy `Db` a kick is one more flush, harmless.
const KICK_AFTER: Duration = Duration::from_secs(1);
/// How often the doctor looks (and, while degraded, probes the disk).
const TICK: Duration = Duration::from_millis(250);
const PROBE_EVERY: Duration = Duration::from_millis(500);
/// A commit looks up the free space again when the last look is older than this.
const SPACE_LOOK_EVERY: Duration = Duration::from_millis(20);
/// A probe write of this size must succeed before sled is reopened: room for
/// sled's segment buffer (512 KiB) and its metadata, so a reopen is not followed
/// by the same error at once.
const PROBE_BYTES: usize = 1024 * 1024;
const PROBE_FILE: &str = ".space-probe";
/// Space set aside at open for a reopen on a full disk (see above): the probe
/// and what sled writes when it opens, with room to spare.
pub const BALLAST_BYTES: u64 = 4 * 1024 * 1024;
pub const BALLAST_FILE: &str = ".space-ballast";

/// The free space last looked up: when, how much, and the bytes committed since.
#[derive(Clone, Copy)]
struct SpaceLook {
    at: Instant,
    free: u64,
    written: u64,
}

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
    /// Bytes kept free on the data directory's filesystem (0: not checked).
    reserve: AtomicU64,
    space: Mutex<Option<SpaceLook>>,
    /// The ballast was removed to make room for a reopen: writes wait for the
    /// reserve and the ballast to be free again.
    ballast_spent: AtomicBool,
    /// Held while sled applies a batch or flushes: never both at once (see above).
    io: Mutex<bool>,
    io_free: Condvar,
}

/// Sled's I/O slot (`Health::enter_io`), given back on drop.
pub(crate) struct IoSlot<'a>(&'a Health);

impl Drop for IoSlot<'_> {
    fn drop(&mut self) {
        *self.0.io.lock().unwrap_or_else(|p| p.into_inner()) = false;
        self.0.io_free.notify_one();
    }
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
                "store degraded: writes answer 503 until the disk takes writes again; reads keep working"
            );
        }
        *self.reason.lock().unwrap_or_else(|p| p.into_inner()) = reason.to_string();
    }

    pub(crate) fn recovered(&self, reopened: bool) {
        if reopened {
            self.needs_reopen.store(false, Ordering::SeqCst);
            self.generation.fetch_add(1, Ordering::SeqCst);
        }
        *self.space.lock().unwrap_or_else(|p| p.into_inner()) = None;
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

    /// Sets the free space to keep on the data directory's filesystem (0: none).
    pub fn set_reserve(&self, bytes: u64) {
        self.reserve.store(bytes, Ordering::SeqCst);
        *self.space.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// What must be free before writes resume: the reserve, and the ballast
    /// once it was spent.
    fn needed(&self) -> u64 {
        let reserve = self.reserve.load(Ordering::SeqCst);
        if self.ballast_spent.load(Ordering::SeqCst) {
            reserve + BALLAST_BYTES
        } else {
            reserve
        }
    }

    /// Whether a commit of about `bytes` may go to sled: refused (and the
    /// store degraded) once less than the reserve is free. sled writes more
    /// than a batch holds (headers, rewritten pages), hence the factor of 2
    /// on what was committed since the last look.
    pub(crate) fn check_space(&self, dir: &Path, bytes: u64) -> Result<()> {
        let reserve = self.reserve.load(Ordering::SeqCst);
        if reserve == 0 {
            return Ok(());
        }
        let mut look = self.space.lock().unwrap_or_else(|p| p.into_inner());
        let room = |l: &SpaceLook| l.free.saturating_sub(l.written.saturating_mul(2));
        let stale = match &*look {
            None => true,
            Some(l) => {
                l.at.elapsed() >= SPACE_LOOK_EVERY
                    || room(l) < reserve.saturating_add(bytes.saturating_mul(2))
            }
        };
        if stale {
            if let Ok(free) = available_space(dir) {
                *look = Some(SpaceLook {
                    at: Instant::now(),
                    free,
                    written: 0,
                });
            }
        }
        let Some(l) = look.as_mut() else {
            return Ok(()); // the free space cannot be read: sled will tell
        };
        if room(l) < reserve {
            let free = l.free;
            drop(look);
            let reason = format!(
                "less than the reserve of {reserve} bytes is free on the data directory's filesystem ({free} bytes; --min-free-space)"
            );
            self.degrade(&reason, false);
            return Err(Error::storage_unavailable(format!(
                "the store cannot write now ({reason}); try again later"
            )));
        }
        l.written = l.written.saturating_add(bytes);
        Ok(())
    }

    /// Takes sled's I/O slot: a batch or a flush, never both at once (see
    /// the module doc). `None` when `wait` passes first.
    pub(crate) fn enter_io(&self, wait: Option<Duration>) -> Option<IoSlot<'_>> {
        let deadline = wait.map(|w| Instant::now() + w);
        let mut busy = self.io.lock().unwrap_or_else(|p| p.into_inner());
        while *busy {
            busy = match deadline {
                None => self.io_free.wait(busy).unwrap_or_else(|p| p.into_inner()),
                Some(d) => {
                    let left = d.checked_duration_since(Instant::now())?;
                    self.io_free
                        .wait_timeout(busy, left)
                        .unwrap_or_else(|p| p.into_inner())
                        .0
                }
            };
        }
        *busy = true;
        Some(IoSlot(self))
    }
}

/// Bytes available to this (unprivileged) process on the filesystem holding
/// `path` (statvfs `f_bavail × f_frsize`).
pub fn available_space(path: &Path) -> std::io::Result<u64> {
    let s = rustix::fs::statvfs(path).map_err(std::io::Error::from)?;
    Ok(s.f_bavail.saturating_mul(s.f_frsize))
}

/// Writes and syncs `bytes` into `path`.
fn write_file(path: &Path, bytes: usize) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::File::create(path)?;
    f.write_all(&vec![0u8; bytes])?;
    f.sync_all()
}

/// Writes and syncs `PROBE_BYTES` in `dir`, then removes the file: whether the
/// disk takes writes now, whatever the reason it did not (space, quota, I/O).
fn probe(dir: &Path) -> std::io::Result<()> {
    let path = dir.join(PROBE_FILE);
    let res = write_file(&path, PROBE_BYTES);
    let _ = std::fs::remove_file(&path);
    res
}

/// Whether the disk is full for sure: a probe failed with ENOSPC or EDQUOT
/// (run on a thread of its own: a disk that does not answer is not "full").
fn disk_full(dir: &Path) -> bool {
    let dir = dir.to_path_buf();
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("herald-store-probe".into())
        .spawn(move || {
            let _ = tx.send(probe(&dir));
        });
    if spawned.is_err() {
        return false;
    }
    matches!(
        rx.recv_timeout(PROBE_TIMEOUT),
        Ok(Err(e)) if matches!(e.kind(), std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded)
    )
}

/// Sets the ballast aside in `dir` (see the module doc) when it is not there
/// and the reserve stays free after it; false when it could not be.
pub(super) fn lay_ballast(dir: &Path, reserve: u64) -> bool {
    let path = dir.join(BALLAST_FILE);
    if std::fs::metadata(&path).is_ok_and(|m| m.len() >= BALLAST_BYTES) {
        return true;
    }
    let room = available_space(dir).unwrap_or(0);
    if room < reserve.saturating_add(BALLAST_BYTES) {
        return false;
    }
    // Allocated, not just sized (a sparse file would hold no space); with
    // `fallocate` where the filesystem has it, else written.
    let laid = std::fs::File::create(&path).and_then(|f| {
        match rustix::fs::fallocate(&f, rustix::fs::FallocateFlags::empty(), 0, BALLAST_BYTES) {
            Ok(()) => Ok(()),
            Err(_) => write_file(&path, BALLAST_BYTES as usize),
        }
    });
    if laid.is_err() {
        let _ = std::fs::remove_file(&path);
        return false;
    }
    true
}

/// The flush the flusher runs: the current `Db`'s, in sled's I/O slot.
pub(super) fn flush_fn(
    slot: super::Slot, health: Arc<Health>,
) -> impl Fn() -> Result<()> + Send + Sync {
    move || {
        let _io = health.enter_io(None);
        let handles = slot.read().unwrap_or_else(|p| p.into_inner()).clone();
        match handles {
            Some(hd) => hd.db.flush().map(|_| ()).map_err(Error::from),
            None => Err(Error::storage_unavailable("the store is reopening")),
        }
    }
}

/// Wakes whatever waits in sled's `make_stable` (see the module doc): one
/// more flush, on a thread of its own, so the doctor never waits for it; at
/// most one at a time.
fn kick(handles: Arc<Handles>, kicking: &Arc<AtomicBool>) {
    if kicking.swap(true, Ordering::SeqCst) {
        return;
    }
    let k = kicking.clone();
    let spawned = std::thread::Builder::new()
        .name("herald-store-kick".into())
        .spawn(move || {
            if let Err(e) = handles.db.flush() {
                tracing::debug!(error = %e, "kicked flush: sled reports its error");
            }
            k.store(false, Ordering::SeqCst);
        });
    if spawned.is_err() {
        kicking.store(false, Ordering::SeqCst);
    }
}

/// Exits for the supervisor to restart the process (see the module doc). The
/// line for stderr is written from a thread of its own, as stderr may be a
/// full disk or a pipe nobody reads, and waited for a moment at most.
fn exit_for_restart(msg: String) -> ! {
    tracing::error!("{msg}");
    let _ = std::thread::Builder::new().spawn(move || {
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "error: {msg}");
    });
    std::thread::sleep(Duration::from_millis(500));
    std::process::exit(70)
}

impl Store {
    /// Drops the database sled poisoned after an I/O error and opens it again
    /// (see the module doc). Commits wait meanwhile; reads answer 503 for the
    /// moment it takes. The caches may hold what was applied but never
    /// flushed, so they are emptied. Gives up (to be tried again) rather than
    /// wait more than a few seconds for a commit to let go of the gate: the
    /// doctor must never hang.
    pub(crate) fn reopen(&self) -> Result<()> {
        let deadline = Instant::now() + STUCK_AFTER;
        let _gate = loop {
            match self.inner.commit_gate.try_write() {
                Ok(g) => break g,
                Err(std::sync::TryLockError::Poisoned(p)) => break p.into_inner(),
                Err(std::sync::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(std::sync::TryLockError::WouldBlock) => {
                    return Err(Error::storage_unavailable("a commit holds the store"))
                }
            }
        };
        let old = self
            .inner
            .slot
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        drop(old);
        // Readers that still hold the old tree finish quickly; `open_sled`
        // waits for them to let go of its lock.
        let path = self.inner.path.join(format!("v{FORMAT_VERSION}"));
        let db = open_sled(&path).map_err(Error::from)?;
        let data = db.open_tree("data")?;
        self.inner.projects_cache.clear();
        self.inner.users_cache.clear();
        self.inner.flows_cache.clear();
        self.inner.flow_ids.clear();
        self.inner.feed_stamps.all_changed();
        self.inner.feed_counts.clear();
        *self.inner.slot.write().unwrap_or_else(|p| p.into_inner()) =
            Some(Arc::new(Handles { db, data }));
        self.load_event_endpoints()?;
        tracing::info!("store reopened after a disk error");
        Ok(())
    }

    /// Sets the free space to keep on the data directory's filesystem (see
    /// the module doc; 0: none) and lays the ballast when there is room.
    pub fn set_space_reserve(&self, bytes: u64) {
        self.inner.health.set_reserve(bytes);
        if bytes > 0 && !lay_ballast(self.path(), bytes) {
            tracing::warn!(
                "no room for the store's ballast of {BALLAST_BYTES} bytes: a reopen on a full disk may have to wait for space"
            );
        }
    }
}

/// One look of the doctor at a degraded store: brings it back when it can.
fn treat(store: &Store, last_probe: &mut Instant) {
    let health = &store.inner.health;
    if last_probe.elapsed() < PROBE_EVERY {
        return;
    }
    *last_probe = Instant::now();
    let dir = store.path();
    let free = available_space(dir).unwrap_or(0);
    if health.needs_reopen() && free < PROBE_BYTES as u64 * 2 {
        // A poisoned `Db` on a full disk: the ballast makes room for a
        // reopen, so reads work while writes wait (see the module doc).
        let ballast = dir.join(BALLAST_FILE);
        if std::fs::remove_file(&ballast).is_ok() {
            health.ballast_spent.store(true, Ordering::SeqCst);
            tracing::warn!("the disk is full: the store's ballast is removed to reopen the store");
        }
    }
    if !health.needs_reopen() && free < health.needed() {
        // below the reserve: no write to test yet (a probe is a 1 MiB fsync)
        return;
    }
    if let Err(e) = probe(dir) {
        tracing::debug!(error = %e, "disk still refuses writes");
        return;
    }
    if health.needs_reopen() {
        if let Err(e) = store.reopen() {
            tracing::warn!(error = %e.message, "cannot reopen the store yet");
            return;
        }
        // reads work again; writes wait below until there is room
        health.needs_reopen.store(false, Ordering::SeqCst);
        health.generation.fetch_add(1, Ordering::SeqCst);
    }
    let needed = health.needed();
    if needed > 0 && available_space(dir).unwrap_or(0) < needed {
        return;
    }
    if health.ballast_spent.load(Ordering::SeqCst) {
        let reserve = health.reserve.load(Ordering::SeqCst);
        if !lay_ballast(dir, reserve) {
            return;
        }
        health.ballast_spent.store(false, Ordering::SeqCst);
    }
    health.recovered(false);
}

/// The doctor: watches the flusher and brings a degraded store back. Holds only
/// a weak reference, so it ends when the store is dropped.
pub(super) fn start_doctor(store: std::sync::Weak<Inner>) {
    let spawned = std::thread::Builder::new()
        .name("herald-store-doctor".into())
        .spawn(move || {
            let mut last_probe = Instant::now() - PROBE_EVERY;
            let mut last_kick = Instant::now();
            let kicking = Arc::new(AtomicBool::new(false));
            loop {
                std::thread::sleep(TICK);
                let Some(inner) = store.upgrade() else { return };
                if inner.health.closing() {
                    return;
                }
                let store = Store { inner };
                let health = &store.inner.health;
                // Usage counters changed since the last cycle ride on the
                // next one; on an idle store this is that cycle (see `usage`).
                if store.inner.usage.pending() {
                    store.inner.flusher.nudge();
                }
                if let Some(d) = store.inner.flusher.flushing_for() {
                    if d >= KICK_AFTER && last_kick.elapsed() >= KICK_AFTER {
                        last_kick = Instant::now();
                        if let Ok(h) = store.handles() {
                            kick(h, &kicking);
                        }
                    }
                    if d >= STUCK_AFTER {
                        health.degrade("the store's flush is not returning", false);
                        store.inner.flusher.fail_pending();
                    }
                    // On a disk still full a restart would not start: reads
                    // are served meanwhile (see the module doc).
                    if d >= EXIT_AFTER && last_probe.elapsed() >= PROBE_EVERY {
                        last_probe = Instant::now();
                        if !disk_full(store.path()) {
                            exit_for_restart(format!(
                                "the store's flush has not returned for {} s after a disk error (sled cannot recover in this process); exiting with status 70 so the supervisor restarts Herald — acknowledged writes are on disk",
                                d.as_secs()
                            ));
                        }
                    }
                    continue;
                }
                if !health.is_degraded() {
                    // a disk another process fills is seen without a commit
                    let _ = health.check_space(store.path(), 0);
                    continue;
                }
                treat(&store, &mut last_probe);
            }
        });
    if let Err(e) = spawned {
        tracing::error!(error = %e, "cannot start the store doctor thread");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[allow(unused_imports)]
    use crate::storage::*;

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

    #[test]
    fn a_reserve_larger_than_the_free_space_refuses_commits_and_degrades() {
        let dir = tempfile::tempdir().unwrap();
        let h = Health::default();
        h.check_space(dir.path(), 1 << 20).unwrap();
        h.set_reserve(u64::MAX / 4);
        let e = h.check_space(dir.path(), 10).unwrap_err();
        assert_eq!(e.code, crate::error::ErrorCode::ServiceUnavailable);
        assert!(h.is_degraded() && !h.needs_reopen(), "{}", h.reason());
        h.set_reserve(1);
        h.recovered(false);
        h.check_space(dir.path(), 10).unwrap();
    }

    #[test]
    fn the_io_slot_is_one_at_a_time_and_a_wait_can_run_out() {
        let h = Arc::new(Health::default());
        let slot = h.enter_io(None).unwrap();
        let t = Instant::now();
        assert!(h.enter_io(Some(Duration::from_millis(50))).is_none());
        assert!(t.elapsed() >= Duration::from_millis(50));
        let h2 = h.clone();
        let waiter =
            std::thread::spawn(move || h2.enter_io(Some(Duration::from_secs(10))).is_some());
        std::thread::sleep(Duration::from_millis(20));
        drop(slot);
        assert!(waiter.join().unwrap());
    }

    #[test]
    fn the_ballast_is_laid_once_and_only_with_room_to_spare() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!lay_ballast(dir.path(), u64::MAX / 4));
        assert!(!dir.path().join(BALLAST_FILE).exists());
        assert!(lay_ballast(dir.path(), 0));
        let len = std::fs::metadata(dir.path().join(BALLAST_FILE))
            .unwrap()
            .len();
        assert_eq!(len, BALLAST_BYTES);
        assert!(lay_ballast(dir.path(), u64::MAX / 4), "already there");
    }
}
