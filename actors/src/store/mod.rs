//! The sled store: the only module that touches sled.
//!
//! Layout (pict-rs style): one tree per key space plus explicit index trees. Keys
//! are big-endian byte tuples that start with the project id, so a prefix scan stays
//! inside one tenant, and ids are UUIDv7, so by-id order is creation order — which
//! is what keyset pagination needs. Records are MessagePack (see `codec`), JSON only
//! exists at the HTTP edge.
//!
//! Every multi-tree change is one `Writes` set applied in one sled transaction, so
//! an index never points at a missing record. Durability comes from group commit
//! (`flusher`): writers that need it wait for one shared flush.
//!
//! All methods are blocking: callers on async threads run them through
//! `spawn_blocking` (the HTTP layer's `State::run`), never inline.

pub mod backup;
pub mod codec;
mod feed;
mod flusher;
pub mod keys;
mod misc;
mod page;
mod projects;
mod records;
mod runs;
mod users;

pub use feed::{
    feed_frame, feed_lock_key, FeedFilter, FeedUpdate, FeedUpdateOutcome, Frame, InAppBatch,
};
pub use flusher::Flusher;
pub use misc::{IdempotentResponse, PushSubscription};
pub use page::{Page, PageReq};
pub use projects::{hash_secret, NewProjectKeys};
pub use runs::{
    AcceptInput, AcceptedRun, ActorSpec, DeliveryFilter, Finished, NotificationFilter, Outcome,
    QueueItem, RunRecipient, UserFrames,
};
pub use users::UserFilter;

use crate::error::{Error, Result};
use sled::transaction::{ConflictableTransactionError, TransactionalTree};
use sled::{Batch, Transactional, Tree};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// Striped locks per class (entity, feed).
const STRIPES: usize = 4096;

/// Version of the on-disk format; a data dir with another one is refused.
/// Format 3 (deliveries stored inside their notification's record, packed
/// run and topic indexes, feed state in the feed tree) replaced formats 1 and 2,
/// layouts of development builds before the first release, for which there is
/// no upgrade.
pub const FORMAT_VERSION: u32 = 3;

macro_rules! trees {
    ($($name:ident),* $(,)?) => {
        /// Every key space, by name.
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum T { $($name),* }
        const TREE_NAMES: &[&str] = &[$(stringify!($name)),*];
    };
}

trees!(
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
);

struct Inner {
    db: sled::Db,
    trees: Vec<Tree>,
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
    cursor_key: [u8; 32],
    /// Shared by every commit, exclusive while a backup exports the trees.
    commit_gate: std::sync::RwLock<()>,
    projects_cache: dashmap::DashMap<String, Arc<crate::model::Project>>,
    /// Users by `(project, external_id)` for authentication, so a User API
    /// request need not reach sled to know who is asking. Filled and emptied
    /// only under the user's lock (see `users::user_by_ext_cached`).
    users_cache: dashmap::DashMap<(uuid::Uuid, String), Arc<crate::model::User>>,
    /// The first page of users' feeds as last answered (see `feed::FeedPageCache`).
    feed_pages: feed::FeedPageCache,
    path: PathBuf,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.flusher.shutdown();
    }
}

/// Cheap to clone handle to the store.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

/// A set of writes across trees, applied atomically by `Store::commit`.
#[derive(Default)]
pub struct Writes {
    ops: Vec<(T, Vec<u8>, Option<Vec<u8>>)>,
}

impl Writes {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn put(&mut self, t: T, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) {
        self.ops
            .push((t, key.as_ref().to_vec(), Some(value.as_ref().to_vec())));
    }
    pub fn put_rec<V: serde::Serialize>(&mut self, t: T, key: impl AsRef<[u8]>, value: &V) {
        self.ops
            .push((t, key.as_ref().to_vec(), Some(codec::enc(value))));
    }
    pub fn del(&mut self, t: T, key: impl AsRef<[u8]>) {
        self.ops.push((t, key.as_ref().to_vec(), None));
    }
    pub fn append(&mut self, other: Writes) {
        self.ops.extend(other.ops);
    }
    /// One batch per tree, in the order the ops were staged.
    fn into_batches(self) -> Vec<(T, Batch)> {
        let mut out: Vec<(T, Batch)> = vec![];
        for (t, k, v) in self.ops {
            let i = match out.iter().position(|(x, _)| *x == t) {
                Some(i) => i,
                None => {
                    out.push((t, Batch::default()));
                    out.len() - 1
                }
            };
            match v {
                Some(v) => out[i].1.insert(k, v),
                None => out[i].1.remove(k),
            }
        }
        out
    }
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
            // sled's own cache; measured: 64 MiB ran a 100,000-recipient run
            // faster than 256 MiB and with less memory (less eviction work).
            .cache_capacity(64 * 1024 * 1024)
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
    /// Opens (or creates) the store in `dir`. The data lives in `dir/v1/`, so a
    /// future format can sit beside it; `dir/FORMAT` names the version in use.
    pub fn open(dir: &Path) -> Result<Store> {
        std::fs::create_dir_all(dir)
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
                Error::internal(format!(
                    "data directory {} is in use by another Herald process",
                    dir.display()
                ))
            } else {
                Error::internal(format!("cannot open data directory {}: {e}", dir.display()))
            }
        })?;
        let mut trees = Vec::with_capacity(TREE_NAMES.len());
        for name in TREE_NAMES {
            trees.push(db.open_tree(name)?);
        }
        let meta = &trees[T::meta as usize];
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
        let flusher = Flusher::start(db.clone());
        let store = Store {
            inner: Arc::new(Inner {
                db,
                trees,
                flusher,
                stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
                feed_stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
                run_stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
                cursor_key,
                commit_gate: std::sync::RwLock::new(()),
                projects_cache: dashmap::DashMap::new(),
                users_cache: dashmap::DashMap::new(),
                feed_pages: Default::default(),
                path: dir.to_path_buf(),
            }),
        };
        store.inner.db.flush()?;
        Ok(store)
    }

    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    pub(crate) fn tree(&self, t: T) -> &Tree {
        &self.inner.trees[t as usize]
    }

    /// The secret that signs pagination cursors (random per data dir).
    pub fn cursor_key(&self) -> &[u8; 32] {
        &self.inner.cursor_key
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
        &self,
        keys: impl IntoIterator<Item = &'a [u8]>,
    ) -> Vec<MutexGuard<'_, ()>> {
        self.lock_in(&self.inner.stripes, keys)
    }

    /// Locks users' feeds (keys from `feed_lock_key`), in stripe order. Take them
    /// after any entity locks, never before.
    pub(crate) fn lock_feeds<'a>(
        &self,
        keys: impl IntoIterator<Item = &'a [u8]>,
    ) -> Vec<MutexGuard<'_, ()>> {
        self.lock_in(&self.inner.feed_stripes, keys)
    }

    /// Locks flow runs, in stripe order: after any entity locks, before feed locks.
    pub(crate) fn lock_runs<'a>(
        &self,
        keys: impl IntoIterator<Item = &'a [u8]>,
    ) -> Vec<MutexGuard<'_, ()>> {
        self.lock_in(&self.inner.run_stripes, keys)
    }

    fn lock_in<'s, 'a>(
        &self,
        pool: &'s [Mutex<()>],
        keys: impl IntoIterator<Item = &'a [u8]>,
    ) -> Vec<MutexGuard<'s, ()>> {
        let mut idx: Vec<usize> = keys.into_iter().map(|k| self.stripe(k)).collect();
        idx.sort_unstable();
        idx.dedup();
        idx.into_iter()
            .map(|i| pool[i].lock().unwrap_or_else(|p| p.into_inner()))
            .collect()
    }

    /// Applies every batch in one transaction across the trees it touches.
    pub fn commit(&self, w: Writes) -> Result<()> {
        let batches = w.into_batches();
        let _gate = self
            .inner
            .commit_gate
            .read()
            .unwrap_or_else(|p| p.into_inner());
        match batches.len() {
            0 => Ok(()),
            1 => {
                let (t, b) = batches.into_iter().next().expect("one batch");
                self.tree(t).apply_batch(b)?;
                Ok(())
            }
            _ => {
                let trees: Vec<Tree> = batches.iter().map(|(t, _)| self.tree(*t).clone()).collect();
                trees
                    .as_slice()
                    .transaction(|txs: &Vec<TransactionalTree>| {
                        for (tx, (_, b)) in txs.iter().zip(batches.iter()) {
                            tx.apply_batch(b)?;
                        }
                        Ok::<(), ConflictableTransactionError<Error>>(())
                    })
                    .map_err(Error::from)
            }
        }
    }

    /// Ticket for the group commit: everything written before this call is durable
    /// once `wait_durable(ticket)` returns.
    pub fn durable_ticket(&self) -> u64 {
        self.inner.flusher.request()
    }

    /// Blocks until `ticket` is flushed.
    pub fn wait_durable_blocking(&self, ticket: u64) -> Result<()> {
        self.inner.flusher.wait_blocking(ticket)
    }

    /// Waits, without blocking a thread, until `ticket` is flushed.
    pub async fn wait_durable(&self, ticket: u64) -> Result<()> {
        self.inner.flusher.wait(ticket).await
    }

    /// Commits and waits for durability in one call (blocking).
    pub fn commit_durable(&self, w: Writes) -> Result<()> {
        self.commit(w)?;
        let t = self.durable_ticket();
        self.wait_durable_blocking(t)
    }

    /// Flushes everything now (shutdown, backups).
    pub fn flush(&self) -> Result<()> {
        self.inner.db.flush()?;
        Ok(())
    }

    pub(crate) fn get_rec<V: serde::de::DeserializeOwned>(
        &self,
        t: T,
        key: &[u8],
    ) -> Result<Option<V>> {
        match self.tree(t).get(key)? {
            Some(v) => Ok(Some(codec::dec(&v)?)),
            None => Ok(None),
        }
    }
}
