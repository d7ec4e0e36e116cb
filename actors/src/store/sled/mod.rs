//! The sled store: the only module that touches sled.
//!
//! Layout (pict-rs style): one key space per kind of record plus explicit index
//! spaces; the spaces share one sled tree under one-byte prefixes (`Space` says
//! why). Keys are big-endian byte tuples that start with the project id, so a
//! prefix scan stays inside one tenant, and ids are UUIDv7, so by-id order is
//! creation order — which is what keyset pagination needs. Records are
//! MessagePack (see `codec`), JSON only exists at the HTTP edge.
//!
//! Every change is one `Writes` set applied as one atomic batch, so an index
//! never points at a missing record. Durability comes from group commit
//! (`flusher`): writers that need it wait for one shared flush.
//!
//! All methods are blocking: callers on async threads run them through
//! `spawn_blocking` (the HTTP layer's `State::run`), never inline.

mod audit;
pub mod backup;
mod batches;
mod caches;
mod catalog;
pub(crate) use super::codec;
mod combine;
mod console;
mod content;
mod dir_lock;
mod events;
mod feed;
mod feedback;
mod flow_index;
mod flusher;
pub mod health;
pub mod keys;
mod lookups;
mod notifications;
mod page;
mod presence;
mod projects;
mod queue;
mod records;
mod removal;
mod retention;
mod runs;
pub mod secrets;
mod space;
mod suppressions;
mod throttles;
mod topics;
mod trace;
mod usage;
mod users;

pub use crate::delivery::frames::feed_frame;
pub use crate::rules::projects::{check_project_name, hash_secret, MAX_SECRET_GRACE};
pub use crate::storage::NewProjectKeys;
use crate::storage::*;
pub use crate::storage::{
    AcceptInput, AcceptedRun, ActorSpec, DeliveryFilter, FeedFilter, FeedUpdate, FeedUpdateOutcome,
    Finished, Frame, IdempotentResponse, InAppBatch, NotificationFilter, Outcome, Page, PageReq,
    PushSubscription, QueueItem, RunRecipient, UserFrames,
};
pub use dir_lock::DirLock;
pub use feed::feed_lock_key;
pub use flusher::Flusher;
use space::reopening;
pub(crate) use space::{Space, SpaceIter};
pub use users::UserFilter;

use crate::error::{Error, Result};
use sled::{Batch, Tree};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

/// Striped locks per class (entity, run, feed).
const STRIPES: usize = 4096;

/// Users whose feed counts are cached (about 100 bytes each).
pub(crate) const FEED_COUNTS_CACHED: usize = 100_000;

/// Version of the on-disk format; a data dir with another one is refused.
/// Format 3 (deliveries stored inside their notification's record, packed
/// run and topic indexes, feed state in the feed tree) replaced formats 1 and 2,
/// layouts of development builds before the first release, for which there is
/// no upgrade.
pub const FORMAT_VERSION: u32 = 3;

macro_rules! spaces {
    ($($name:ident),* $(,)?) => {
        /// Every key space, by name. Its index is its key prefix in the data
        /// tree (see `Space`); new spaces go at the end.
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr(u8)]
        pub enum T { $($name),* }

        impl T {
            /// Every key space, in prefix order.
            pub const ALL: &'static [T] = &[$(T::$name),*];
        }
    };
}

spaces!(
    meta,
    projects,
    projects_by_name,
    api_keys,
    users,
    users_by_ext,
    preferences,
    channels,
    flows,
    flows_by_handle,
    topics,
    topics_by_id,
    subscriptions,
    topic_subs,
    user_subs,
    sub_index,
    flow_runs,
    runs_active,
    run_pending,
    notifications,
    run_index,
    topic_index,
    deliv_by_status,
    queue,
    feed,
    events,
    idempotency,
    push_subs,
    throttles,
    erasures,
    hooks,
    event_log,
    outbox,
    hook_attempts,
    trace,
    batches,
    batch_keys,
    usage,
    content,
    suppressions,
    suppressions_by_id,
    soft_bounces,
    sent_msgs,
    sent_msgs_by_delivery,
    last_seen,
    channel_health,
    audit_log,
    console_members,
    console_links,
    console_sessions,
    flow_index,
);

/// The open sled database. It is replaced when the store reopens after an I/O
/// error (see `health`), so it is reached through `Store::handles`, never kept.
pub(crate) struct Handles {
    pub(crate) db: sled::Db,
    /// Every key space, each under its one-byte prefix (see `Space`).
    pub(crate) data: Tree,
}

thread_local! {
    /// The flusher's ticket for this thread's latest commit in its current
    /// storage job (`Ticket::JobStart`, `Ticket::JobEnd` in `impl Durability`).
    static JOB_TICKET: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// The current `Handles`; `None` for the moment a reopen takes.
type Slot = Arc<RwLock<Option<Arc<Handles>>>>;

struct Inner {
    slot: Slot,
    health: Arc<health::Health>,
    flusher: Flusher,
    /// Striped locks for read-modify-write sequences on one entity (a user, a topic
    /// subscription, an idempotency key). Striping keeps unrelated keys apart
    /// without a map of locks that grows forever.
    stripes: Vec<Mutex<()>>,
    /// Striped locks of users' feeds, a separate class so they can be taken
    /// while entity locks are held: the order is always entity locks, then feed
    /// locks, never the other way round.
    feed_stripes: Vec<Mutex<()>>,
    /// Striped locks of flow runs (their pending counter and record), a class
    /// taken after entity locks and before feed locks: settling deliveries
    /// learns its runs only after reading the notifications it has locked.
    run_stripes: Vec<Mutex<()>>,
    /// Striped locks of batches (`batches`), a class taken after entity
    /// locks and before run and feed locks.
    batch_stripes: Vec<Mutex<()>>,
    cursor_key: [u8; 32],
    /// Seals channel secrets (`secrets`); `None` when the store was opened
    /// without its key (backups, `project create`), which can then neither
    /// read nor write a secret.
    sealer: Option<secrets::Sealer>,
    /// Shared by every commit, exclusive while a backup exports the trees.
    commit_gate: std::sync::RwLock<()>,
    /// Concurrent commits applied as one batch (`combine`).
    combiner: combine::Combiner<Writes>,
    /// Held by each batch of the purge and of erasures (`retention`), so two
    /// of them never rewrite the same notification group or packed index
    /// chunk at once (nothing else rewrites those once written).
    removals: Mutex<()>,
    /// Where each project's purge of each kind stopped (`retention`), so a
    /// pass bounded by its scan budget goes on from there rather than from
    /// the start; in memory only (after a restart the passes start over).
    purge_cursors: dashmap::DashMap<(uuid::Uuid, u8), (Vec<u8>, bool)>,
    /// When each project's sweep of each per-user kind (feed, events) last
    /// reached the end, so a new sweep waits a tenth of the window.
    purge_swept: dashmap::DashMap<(uuid::Uuid, u8), std::time::Instant>,
    projects_cache: dashmap::DashMap<String, Arc<crate::model::Project>>,
    /// Projects deleted (or being deleted) since the store opened: commits
    /// drop every write of theirs, so work that was under way when the
    /// deletion began cannot put a key of theirs back (see
    /// `Store::delete_project`). Ids are UUIDv7, never reused.
    deleted: RwLock<std::collections::HashSet<uuid::Uuid>>,
    /// `deleted` is not empty: the commit path looks at it only then.
    any_deleted: std::sync::atomic::AtomicBool,
    /// Users by `(project, external_id)` for authentication, so a User API
    /// request need not reach sled to know who is asking. Filled and emptied
    /// only under the user's lock (see `users::user_by_ext_cached`).
    users_cache: dashmap::DashMap<(uuid::Uuid, String), Arc<crate::model::User>>,
    /// Flows by `(project, id)` as stored: every run reads its flow, and
    /// reading and decoding it was about 5% of a one-recipient run's CPU.
    /// Filled under `flows_fill`; `update_flow`, the only writer of a stored
    /// flow, empties the entry under `flows_fill` after its commit and before
    /// it lets go of the flow's lock (see `catalog::flow_arc`).
    flows_cache: dashmap::DashMap<(uuid::Uuid, uuid::Uuid), Arc<crate::model::Flow>>,
    flows_fill: std::sync::Mutex<()>,
    /// Flow ids by `(project, handle)`: a flow's handle never changes and
    /// flows are archived, never deleted, so an entry never goes stale.
    flow_ids: dashmap::DashMap<(uuid::Uuid, String), uuid::Uuid>,
    /// The first page of users' feeds as last answered (see `feed::FeedPageCache`).
    feed_stamps: caches::FeedStamps,
    /// Each user's feed counts and latest `seq` as last committed (see
    /// `Store::feed_counts_locked`).
    feed_counts: dashmap::DashMap<(uuid::Uuid, uuid::Uuid), crate::model::FeedCounts>,
    /// The enabled event endpoints per project (see `events`).
    events: events::EventsState,
    /// Each project's usage counter as counted since open (see `usage`).
    usage: usage::Counters,
    path: PathBuf,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.health.close();
        self.flusher.shutdown();
    }
}

/// Cheap to clone handle to the store.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

/// A set of writes across key spaces, applied atomically by `Store::commit`.
#[derive(Default)]
pub(crate) struct Writes {
    ops: Vec<(T, Vec<u8>, Option<Vec<u8>>)>,
    /// Feed counts after the events staged here, per `(project, user)`, for the
    /// counts cache once the batch is applied (see `Store::commit`).
    counts: Vec<(uuid::Uuid, uuid::Uuid, crate::model::FeedCounts)>,
}

impl Writes {
    pub(crate) fn new() -> Self {
        Self::default()
    }
    pub(crate) fn put(&mut self, t: T, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) {
        self.ops
            .push((t, key.as_ref().to_vec(), Some(value.as_ref().to_vec())));
    }
    pub(crate) fn put_rec<V: serde::Serialize>(&mut self, t: T, key: impl AsRef<[u8]>, value: &V) {
        self.ops
            .push((t, key.as_ref().to_vec(), Some(codec::enc(value))));
    }
    pub(crate) fn del(&mut self, t: T, key: impl AsRef<[u8]>) {
        self.ops.push((t, key.as_ref().to_vec(), None));
    }
    /// About the bytes these writes put on disk (keys and values).
    fn bytes(&self) -> u64 {
        let n: usize = self
            .ops
            .iter()
            .map(|(_, k, v)| 1 + k.len() + v.as_ref().map_or(0, Vec::len))
            .sum();
        n as u64
    }
    pub(crate) fn append(&mut self, other: Writes) {
        self.ops.extend(other.ops);
        self.counts.extend(other.counts);
    }
    /// One batch of the data tree, in the order the ops were staged (a later
    /// op on the same key wins).
    fn into_batch(self) -> Batch {
        let mut b = Batch::default();
        debug_assert!(self.counts.is_empty(), "counts are taken by Store::commit");
        for (t, k, v) in self.ops {
            let k = space_key(t as u8, &k);
            match v {
                Some(v) => b.insert(k, v),
                None => b.remove(k),
            }
        }
        b
    }
}

/// The project a key of space `t` belongs to: every key starts with its
/// project's id except the active-runs index (`(run, project)`) and the
/// spaces keyed by something else (`meta`, names and public keys of projects).
pub(crate) fn owner(t: T, k: &[u8]) -> Option<uuid::Uuid> {
    let at = match t {
        T::meta | T::projects_by_name | T::api_keys => return None,
        T::runs_active => 16,
        _ => 0,
    };
    k.get(at..at + 16)
        .and_then(|b| uuid::Uuid::from_slice(b).ok())
}

/// Inserts into an in-memory cache of at most `cap` entries: past it the
/// cache starts over (crude but bounded; it refills with what is in use).
pub(crate) fn cache_insert<K: Eq + std::hash::Hash, V>(
    cache: &dashmap::DashMap<K, V>, cap: usize, k: K, v: V,
) {
    if cache.len() >= cap {
        cache.clear();
    }
    cache.insert(k, v);
}

fn space_key(tag: u8, k: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(k.len() + 1);
    v.push(tag);
    v.extend_from_slice(k);
    v
}

/// sled reports a held lock as an `Io` error whose text says so (its kind is
/// not always `WouldBlock`), so both are checked.
fn is_lock_error(e: &sled::Error) -> bool {
    matches!(e, sled::Error::Io(io)
        if io.kind() == std::io::ErrorKind::WouldBlock
            || io.to_string().contains("could not acquire lock"))
}

/// Opens sled, retrying for up to 2 s while the directory lock is held. A `Db`
/// that was just dropped in this process can keep the lock for a moment, until
/// sled's background threads let go of their handles; another live process
/// keeps it for good and is reported after the wait.
fn open_sled(path: &Path) -> std::result::Result<sled::Db, sled::Error> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    loop {
        let r = sled::Config::new()
            .path(path)
            // sled's own cache, the largest part of the memory a long run adds.
            // Measured on a 100,000-recipient run: 64 MiB was faster than 256 MiB,
            // and 32 MiB (format 3's smaller records) as fast as 64 MiB with
            // 27 MiB less growth.
            .cache_capacity(32 * 1024 * 1024)
            .flush_every_ms(Some(1000))
            .open();
        match r {
            Err(e) if is_lock_error(&e) && std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

impl Store {
    /// Opens (or creates) the store in `dir` with its secret key in the
    /// default place, `dir/secret.key` (created when absent; see `open_with`).
    pub fn open(dir: &Path) -> Result<Store> {
        Self::open_with(dir, Some(&dir.join(secrets::DEFAULT_KEY_FILE)))
    }

    /// Opens the store without its secret key: for work that copies records
    /// as they are (backups) or touches no secret (`project create`). Reading
    /// or writing a channel secret then fails.
    pub fn open_without_key(dir: &Path) -> Result<Store> {
        Self::open_with(dir, None)
    }

    /// Opens (or creates) the store in `dir`. The data lives in `dir/v3/`, so a
    /// future format can sit beside it; `dir/FORMAT` names the version in use.
    /// With `key_file`, channel secrets are sealed with the key in that file
    /// (created, mode 0600, when absent and nothing is sealed yet; a missing or
    /// wrong key for sealed secrets is an error), and secrets an earlier Herald
    /// stored in plaintext are sealed now. The directory and its files are made
    /// private to the owner (0700/0600).
    pub fn open_with(dir: &Path, key_file: Option<&Path>) -> Result<Store> {
        secrets::create_private_dir(dir)
            .map_err(|e| Error::internal(format!("cannot create {}: {e}", dir.display())))?;
        let fmt_file = dir.join("FORMAT");
        match std::fs::read_to_string(&fmt_file) {
            Ok(s) => {
                let v: u32 = s.trim().parse().map_err(|_| {
                    Error::internal(format!(
                        "{} is not a Herald data directory (bad FORMAT file)",
                        dir.display()
                    ))
                })?;
                if v > FORMAT_VERSION {
                    return Err(Error::internal(format!(
                        "data directory {} has format version {v}, newer than this Herald understands ({FORMAT_VERSION}); upgrade Herald",
                        dir.display()
                    )));
                }
                if v < FORMAT_VERSION {
                    return Err(Error::internal(format!(
                        "data directory {} has format version {v}, older than this Herald's ({FORMAT_VERSION}), and there is no upgrade from it (formats 1 and 2 were layouts of development builds before the first release); use a new data directory, or the Herald that wrote it",
                        dir.display()
                    )));
                }
            }
            Err(_) => {
                std::fs::write(&fmt_file, format!("{FORMAT_VERSION}\n")).map_err(|e| {
                    Error::internal(format!("cannot write {}: {e}", fmt_file.display()))
                })?;
            }
        }
        let path = dir.join(format!("v{FORMAT_VERSION}"));
        let db = open_sled(&path).map_err(|e| {
            if is_lock_error(&e) {
                dir_lock::in_use(dir)
            } else {
                Error::internal(format!("cannot open data directory {}: {e}", dir.display()))
            }
        })?;
        let data = db.open_tree("data")?;
        let meta = Space {
            tree: Some(data.clone()),
            tag: T::meta as u8,
            _store: std::marker::PhantomData,
        };
        let cursor_key = match meta.get(b"cursor_key")? {
            Some(v) if v.len() == 32 => {
                let mut k = [0u8; 32];
                k.copy_from_slice(&v);
                k
            }
            _ => {
                let k: [u8; 32] = rand::random();
                meta.insert(b"cursor_key", &k[..])?;
                k
            }
        };
        let slot: Slot = Arc::new(RwLock::new(Some(Arc::new(Handles { db, data }))));
        let health = Arc::new(health::Health::default());
        let flusher = {
            let h = health.clone();
            Flusher::start(
                Arc::new(health::flush_fn(slot.clone(), health.clone())),
                Arc::new(move |e: &Error| h.degrade(&e.message, true)),
            )
        };
        let store = Store {
            inner: Arc::new(Inner {
                slot,
                health,
                flusher,
                stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
                feed_stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
                run_stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
                batch_stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
                cursor_key,
                sealer: None,
                commit_gate: std::sync::RwLock::new(()),
                combiner: combine::Combiner::new(),
                removals: Mutex::new(()),
                purge_cursors: dashmap::DashMap::new(),
                purge_swept: dashmap::DashMap::new(),
                projects_cache: dashmap::DashMap::new(),
                deleted: Default::default(),
                any_deleted: Default::default(),
                users_cache: dashmap::DashMap::new(),
                flows_cache: dashmap::DashMap::new(),
                flows_fill: Default::default(),
                flow_ids: dashmap::DashMap::new(),
                feed_stamps: Default::default(),
                feed_counts: dashmap::DashMap::new(),
                events: Default::default(),
                usage: Default::default(),
                path: dir.to_path_buf(),
            }),
        };
        let store = match key_file {
            Some(k) => store.with_key(k)?,
            None => store,
        };
        store.load_event_endpoints()?;
        store.backfill_flow_index()?;
        store.flush()?;
        // sled's files were created with the process umask: make them private
        // too (and those of a data directory an earlier Herald wrote).
        secrets::tighten_modes(dir);
        store.delegate_commits();
        health::start_doctor(Arc::downgrade(&store.inner));
        Ok(store)
    }

    /// The open database, or 503 while a reopen is under way.
    pub(crate) fn handles(&self) -> Result<Arc<Handles>> {
        self.inner
            .slot
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| Error::storage_unavailable("the store is reopening"))
    }

    /// The store's health (degraded while it cannot write; see `health`).
    pub fn health(&self) -> &health::Health {
        &self.inner.health
    }

    /// The secret that signs pagination cursors (random per data dir, kept
    /// in its meta space): the engine's, given to it at start.
    pub fn cursor_key(&self) -> &[u8; 32] {
        &self.inner.cursor_key
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The key space `t`.
    pub(crate) fn tree(&self, t: T) -> Space<'_> {
        Space {
            tree: self
                .inner
                .slot
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .as_ref()
                .map(|h| h.data.clone()),
            tag: t as u8,
            _store: std::marker::PhantomData,
        }
    }

    /// Serialises read-modify-write sequences on one logical key.
    pub(crate) fn lock(&self, key: &[u8]) -> MutexGuard<'_, ()> {
        self.inner.stripes[self.stripe(key)]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// The stripe a logical key maps to.
    fn stripe(&self, key: &[u8]) -> usize {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        key.hash(&mut h);
        (h.finish() as usize) % STRIPES
    }

    /// Locks several logical keys at once, in stripe order, so two callers locking
    /// overlapping sets can never deadlock (and one caller never locks a stripe twice).
    pub(crate) fn lock_many<'a>(
        &self, keys: impl IntoIterator<Item = &'a [u8]>,
    ) -> Vec<MutexGuard<'_, ()>> {
        self.lock_in(&self.inner.stripes, keys)
    }

    /// Locks users' feeds (keys from `feed_lock_key`), in stripe order. Take them
    /// after any entity locks, never before.
    pub(crate) fn lock_feeds<'a>(
        &self, keys: impl IntoIterator<Item = &'a [u8]>,
    ) -> Vec<MutexGuard<'_, ()>> {
        self.lock_in(&self.inner.feed_stripes, keys)
    }

    /// Locks flow runs, in stripe order: after any entity locks, before feed locks.
    pub(crate) fn lock_runs<'a>(
        &self, keys: impl IntoIterator<Item = &'a [u8]>,
    ) -> Vec<MutexGuard<'_, ()>> {
        self.lock_in(&self.inner.run_stripes, keys)
    }

    /// Locks batches, in stripe order: after any entity locks, before run
    /// and feed locks.
    pub(crate) fn lock_batches<'a>(
        &self, keys: impl IntoIterator<Item = &'a [u8]>,
    ) -> Vec<MutexGuard<'_, ()>> {
        self.lock_in(&self.inner.batch_stripes, keys)
    }

    fn lock_in<'s, 'a>(
        &self, pool: &'s [Mutex<()>], keys: impl IntoIterator<Item = &'a [u8]>,
    ) -> Vec<MutexGuard<'s, ()>> {
        let mut idx: Vec<usize> = keys.into_iter().map(|k| self.stripe(k)).collect();
        idx.sort_unstable();
        idx.dedup();
        idx.into_iter()
            .map(|i| pool[i].lock().unwrap_or_else(|p| p.into_inner()))
            .collect()
    }

    /// Applies the writes atomically: one batch on the data tree. Feed counts
    /// staged with events go to the counts cache once the batch is applied (the
    /// writer still holds the users' feed locks); a failed batch forgets them.
    pub(crate) fn commit(&self, w: Writes) -> Result<()> {
        self.commit_as(w, false)
    }

    /// `commit`, applied by this thread as soon as no other group is being
    /// applied, not queued for the flusher's next cycle (`combine`'s
    /// `commit_now`): for the purge and erasure, whose batches hold
    /// recipients' feed locks that runs being accepted wait for, and which
    /// need no flush of their own.
    pub(crate) fn commit_now(&self, w: Writes) -> Result<()> {
        self.commit_as(w, true)
    }

    fn commit_as(&self, mut w: Writes, now: bool) -> Result<()> {
        if w.ops.is_empty() {
            return Ok(());
        }
        let counts = std::mem::take(&mut w.counts);
        // A degraded store refuses writes before sled sees them: sled answers a
        // poisoned database's writes with its stored error anyway, and a stuck
        // flush would make `apply_batch` wait forever (see `health`).
        // So does one that would take the disk below its free-space reserve
        // (see `health`), before sled can meet ENOSPC.
        let health = &self.inner.health;
        let refused = if health.is_degraded() {
            Err(Error::storage_unavailable(format!(
                "the store cannot write now ({}); try again later",
                health.reason()
            )))
        } else {
            health.check_space(&self.inner.path, w.bytes())
        };
        if let Err(e) = refused {
            for (p, u, _) in counts {
                self.inner.feed_counts.remove(&(p, u));
            }
            return Err(e);
        }
        // With the commits of other threads queued meanwhile, as one batch
        // (see `combine`: each sled batch costs a dozen thread wake-ups),
        // applied by the flusher right before its next flush.
        let apply = |group| self.apply_group(group);
        let (res, ticket) = if now {
            self.inner.combiner.commit_now(w, apply)
        } else {
            self.inner.combiner.commit(w, apply)
        };
        // Tickets grow, and a fresh one (None) covers everything applied.
        JOB_TICKET.with(|t| t.set(ticket));
        let cache = &self.inner.feed_counts;
        match res {
            Ok(()) => {
                if cache.len() + counts.len() > FEED_COUNTS_CACHED {
                    cache.clear();
                }
                for (p, u, c) in counts {
                    cache.insert((p, u), c);
                }
                Ok(())
            }
            Err(e) => {
                for (p, u, _) in counts {
                    cache.remove(&(p, u));
                }
                let e = Error::from(e);
                if e.code == crate::error::ErrorCode::ServiceUnavailable {
                    self.inner.health.degrade(&e.message, true);
                }
                Err(e)
            }
        }
    }

    /// Queued commits are applied by the flusher from now on (see `combine`).
    fn delegate_commits(&self) {
        let flusher = self.inner.flusher.clone();
        self.inner
            .combiner
            .delegate(Box::new(move || flusher.nudge()));
        let weak = Arc::downgrade(&self.inner);
        self.inner.flusher.set_prepare(Box::new(move || {
            if let Some(inner) = weak.upgrade() {
                let store = Store { inner };
                // Counters changed since the last cycle (see `usage`); a
                // failure leaves them to the next cycle.
                let _ = store.write_usage();
                store.inner.combiner.drain(
                    |group| store.apply_group(group),
                    || store.inner.flusher.ticket_in_cycle(),
                );
            }
        }));
    }

    /// Applies a group of commits as one sled batch.
    fn apply_group(&self, group: Vec<Writes>) -> sled::Result<()> {
        let _gate = self
            .inner
            .commit_gate
            .read()
            .unwrap_or_else(|p| p.into_inner());
        let mut all = Writes::new();
        for w in group {
            all.append(w);
        }
        // Under the gate: `delete_project` marks a project, then takes the
        // gate exclusively once, so every commit either finished before
        // its scan or sees the mark here.
        self.drop_deleted_projects(&mut all);
        let batch = all.into_batch();
        // Never while a flush runs, and never on a `Db` sled poisoned (see
        // `health`): a batch queued for sled's exclusive lock behind a flush
        // that does not return would block every read of the process.
        let health = &self.inner.health;
        let Some(_io) = health.enter_io(Some(health::STUCK_AFTER)) else {
            return Err(sled::Error::Io(std::io::Error::other(
                "the store's flush is not returning",
            )));
        };
        if health.needs_reopen() {
            return Err(reopening());
        }
        match self.handles() {
            Ok(h) => h.data.apply_batch(batch),
            Err(_) => Err(reopening()),
        }
    }

    /// The group commit's next ticket: everything written before this call
    /// is durable once `wait_durable(ticket)` returns.
    pub(crate) fn durable_ticket(&self) -> u64 {
        self.inner.flusher.request()
    }

    /// Blocks until `ticket` is flushed.
    pub(crate) fn wait_durable_blocking(&self, ticket: u64) -> Result<()> {
        self.inner.flusher.wait_blocking(ticket)
    }

    /// Waits, without blocking a thread, until `ticket` is flushed.
    pub async fn wait_durable(&self, ticket: u64) -> Result<()> {
        self.inner.flusher.wait(ticket).await
    }

    /// Commits and waits for durability in one call (blocking).
    pub(crate) fn commit_durable(&self, w: Writes) -> Result<()> {
        self.commit(w)?;
        let t = match JOB_TICKET.with(|t| t.get()) {
            Some(t) => t,
            None => self.durable_ticket(),
        };
        self.wait_durable_blocking(t)
    }

    /// Flushes everything now (shutdown, backups). Not on a `Db` sled
    /// poisoned, which would answer its error or never return (see `health`).
    pub fn flush(&self) -> Result<()> {
        // The usage counters first (see `usage`); one that cannot be
        // written now (a full disk) stays for a later cycle, and does not
        // keep the rest from being flushed.
        let _ = self.write_usage();
        let health = &self.inner.health;
        let _io = health
            .enter_io(Some(health::STUCK_AFTER))
            .ok_or_else(|| Error::storage_unavailable("the store's flush is not returning"))?;
        if health.needs_reopen() {
            return Err(Error::storage_unavailable(format!(
                "the store cannot write to disk ({})",
                health.reason()
            )));
        }
        self.handles()?.db.flush()?;
        Ok(())
    }

    /// Removes from `w` the writes (not the removals) of deleted projects.
    fn drop_deleted_projects(&self, w: &mut Writes) {
        use std::sync::atomic::Ordering;
        if !self.inner.any_deleted.load(Ordering::Acquire) {
            return;
        }
        let deleted = self.inner.deleted.read().unwrap_or_else(|p| p.into_inner());
        w.ops.retain(|(t, k, v)| {
            v.is_none() || !owner(*t, k).is_some_and(|id| deleted.contains(&id))
        });
    }

    /// True once `delete_project` has begun for `id`.
    pub(crate) fn is_deleted(&self, id: &uuid::Uuid) -> bool {
        use std::sync::atomic::Ordering;
        self.inner.any_deleted.load(Ordering::Acquire)
            && self
                .inner
                .deleted
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .contains(id)
    }

    pub(crate) fn get_rec<V: serde::de::DeserializeOwned>(
        &self, t: T, key: &[u8],
    ) -> Result<Option<V>> {
        match self.tree(t).get(key)? {
            Some(v) => Ok(Some(codec::dec(&v)?)),
            None => Ok(None),
        }
    }
}

impl Durability for Store {
    /// `Now`: the group commit's next ticket (everything written before
    /// this call is durable once `wait_durable(ticket)` returns).
    /// `JobStart` forgets this thread's last commit's ticket. `JobEnd`: a
    /// ticket covering what this thread's job committed since `JobStart`
    /// and everything applied before it: the ticket of the flush that
    /// follows the job's last commit when the flusher applied it (no wake-up
    /// of the flusher, which is already on its way to that flush), else a
    /// new one.
    fn ticket(&self, of: Ticket) -> u64 {
        match of {
            Ticket::Now => self.durable_ticket(),
            Ticket::JobStart => {
                JOB_TICKET.with(|t| t.set(None));
                0
            }
            Ticket::JobEnd => match JOB_TICKET.with(|t| t.take()) {
                Some(t) => t,
                None => self.durable_ticket(),
            },
        }
    }

    fn wait_durable(&self, ticket: u64) -> DurableWait<'_> {
        Box::pin(Store::wait_durable(self, ticket))
    }
    fn health_status(&self) -> HealthStatus {
        let h = self.health();
        HealthStatus {
            degraded: h.is_degraded(),
            reason: h.reason(),
            generation: h.generation(),
        }
    }
}

impl Storage for Store {
    /// Projects and users as last read, and feeds' change stamps.
    fn memory(&self, of: crate::storage::Memory<'_>) -> Option<crate::storage::Remembered> {
        self.remembered(of)
    }
}
