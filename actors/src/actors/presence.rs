//! Users' presence, as the step conditions over `recipient.online` and
//! `recipient.last_seen_at` read it (`model::presence`).
//!
//! This node's live-feed sockets are counted here (`Registry`, one of the
//! engine's parts), told by the `UserActor` as a socket joins and leaves.
//! What other nodes must see goes through the store (`PresenceRepo`): on a
//! store the nodes share (PostgreSQL), each change of this node's count of a
//! user's sockets; on every store, `last_seen_at`, which is durable but
//! written at most once a minute per user (`SEEN_EVERY`), whether the user
//! was seen through a socket or a User API call (`Engine::user_seen`).
//!
//! `Engine::due_facts` is the one place a gate's presence facts are read,
//! for the external attempts and the in-app settling alike.

use super::engine::Engine;
use crate::error::Result;
use crate::model::presence::{DueFacts, Presence};
use crate::storage::PresenceWrite;
use dashmap::DashMap;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use tokio::sync::watch;
use uuid::Uuid;

/// How often, at most, a user's `last_seen_at` is written for being seen:
/// a minute is far finer than any relative duration a condition names
/// (`-30m` at the least sensible), and a busy user's requests cost no write.
pub const SEEN_EVERY_MS: i64 = 60_000;

/// Users whose last write the throttle remembers; past this many, it
/// forgets them all (each then costs one more write).
const MAX_REMEMBERED: usize = 100_000;

/// This node's sockets per user, and when each user's `last_seen_at` was
/// last written.
#[derive(Default)]
pub(crate) struct Registry {
    /// `(project, user)` → the user's sockets open on this node.
    sockets: DashMap<(Uuid, Uuid), u32>,
    /// `(project, user)` → when (real milliseconds) `last_seen_at` was last
    /// written from this node.
    written: DashMap<(Uuid, Uuid), i64>,
    /// Orders this node's socket writes (`PresenceWrite::Sockets::version`).
    version: AtomicU64,
    /// Socket counts waiting for the node's next batch write.
    batch: Batch,
}

/// Group commit of the presence writes (the socket counts on a store the
/// nodes share, and every store's `last_seen_at` of a user seen): a change
/// joins the batch being gathered, and one writer on the blocking pool
/// writes the gathered batch (`PresenceRepo::set_presences`) while the next
/// gathers, until none is left. A connection storm or a mass disconnect is
/// then a few statements, not one per socket, which saturated the pool; and
/// a greeting waits for its batch asynchronously (`presence_written`), so
/// the storm holds no thread of the blocking pool while it waits.
struct Batch {
    state: Mutex<BatchState>,
    /// How many batches are written (or given up on): batch `k` is when
    /// the value is over `k`.
    done: watch::Sender<u64>,
}

impl Default for Batch {
    fn default() -> Self {
        Batch {
            state: Mutex::default(),
            done: watch::Sender::new(0),
        }
    }
}

#[derive(Default)]
struct BatchState {
    /// The latest write per user, not yet taken.
    pending: HashMap<(Uuid, Uuid), PresenceWrite>,
    /// The number the pending writes will be written as (from 0).
    next: u64,
    /// A writer is running: it takes every batch gathered until none is
    /// left, so at most one batch is written at a time, in order.
    writing: bool,
}

fn version_of(w: &PresenceWrite) -> u64 {
    match w {
        PresenceWrite::Sockets { version, .. } => *version,
        PresenceWrite::Seen { .. } => 0,
    }
}

impl Engine {
    fn presence_registry(&self) -> &Registry {
        self.inner.parts.get::<Registry>()
    }

    /// A live-feed socket of the user joined on this node. On a store the
    /// nodes share, returns the batch its count is written in: the caller,
    /// the user's actor, awaits it (`presence_written`) before it greets the
    /// socket, so a client that got its `hello` counts as online on every
    /// node.
    pub(crate) fn socket_opened(&self, project: Uuid, user: Uuid) -> Option<u64> {
        self.sockets_changed(project, user, 1, true)
    }

    /// Returns once socket-count batch `ticket` is written (or given up on).
    pub(crate) async fn presence_written(&self, ticket: u64) {
        let mut rx = self.presence_registry().batch.done.subscribe();
        // The sender lives as long as the engine, so this only ends early
        // if it is gone, when nobody is left to greet.
        let _ = rx.wait_for(|done| *done > ticket).await;
    }

    /// The users with sockets on this node now (`(project, user)`).
    pub(crate) fn socketed_users(&self) -> Vec<(Uuid, Uuid)> {
        let reg = self.presence_registry();
        reg.sockets.iter().map(|e| *e.key()).collect()
    }

    /// A live-feed socket of the user left this node (recorded without
    /// waiting: nobody waits on a closed socket).
    pub(crate) fn socket_closed(&self, project: Uuid, user: Uuid) {
        self.sockets_changed(project, user, -1, false);
    }

    /// Counts the change and has it written: on a shared store in the next
    /// socket-count batch (whose number it returns), else as `last_seen_at`,
    /// before it returns with `wait` (blocking) or in the background.
    fn sockets_changed(&self, project: Uuid, user: Uuid, by: i32, wait: bool) -> Option<u64> {
        let reg = self.presence_registry();
        let key = (project, user);
        // The count and its version are taken under the entry's lock, so
        // the later change has the higher version whichever write lands last.
        let (sockets, version) = {
            let mut e = reg.sockets.entry(key).or_insert(0);
            *e = e.saturating_add_signed(by);
            (*e, reg.version.fetch_add(1, Ordering::Relaxed) + 1)
        };
        if sockets == 0 {
            reg.sockets.remove_if(&key, |_, n| *n == 0);
        }
        let at = self.project_now(&project);
        remember_write(reg, key);
        if self.shares_work() {
            let w = PresenceWrite::Sockets {
                node: self.node_id(),
                sockets,
                version,
                at,
            };
            return Some(self.batch_presence(key, w));
        }
        let w = PresenceWrite::Seen { at };
        if wait {
            if let Err(e) = self.storage().set_presence(&project, &user, w) {
                tracing::warn!(error = %e, "cannot record a user's presence");
            }
        } else {
            self.write_presence(project, user, w);
        }
        None
    }

    /// Adds a presence write to the batch being gathered and returns its
    /// number; starts a writer if none is running. A user's socket count
    /// stays over a `Seen` (it records the time seen too).
    fn batch_presence(&self, key: (Uuid, Uuid), w: PresenceWrite) -> u64 {
        let b = &self.presence_registry().batch;
        let (mine, start) = {
            let mut s = b.state.lock().unwrap_or_else(|e| e.into_inner());
            // Changes may arrive out of order: the later version stays.
            let e = s.pending.entry(key).or_insert(w);
            if version_of(&w) > version_of(e) {
                *e = w;
            }
            let start = !s.writing;
            s.writing = true;
            (s.next, start)
        };
        if start {
            let engine = self.clone();
            match tokio::runtime::Handle::try_current() {
                Ok(rt) => {
                    rt.spawn_blocking(move || engine.write_batches());
                }
                Err(_) => self.write_batches(),
            }
        }
        mine
    }

    /// The writer: writes the gathered batch, then any gathered meanwhile,
    /// until none is left. Blocking: store writes.
    fn write_batches(&self) {
        let b = &self.presence_registry().batch;
        // Should a write panic, the batches' waiters are let go and the next
        // change starts a writer again, rather than waiting forever.
        let _guard = ReleaseOnUnwind(b);
        loop {
            let (id, batch) = {
                let mut s = b.state.lock().unwrap_or_else(|e| e.into_inner());
                if s.pending.is_empty() {
                    // under the lock: a change added after this starts a writer
                    s.writing = false;
                    return;
                }
                let batch: Vec<_> = std::mem::take(&mut s.pending)
                    .into_iter()
                    .map(|((p, u), w)| (p, u, w))
                    .collect();
                let id = s.next;
                s.next += 1;
                (id, batch)
            };
            if let Err(e) = self.storage().set_presences(&batch) {
                tracing::warn!(error = %e, users = batch.len(), "cannot record users' presence");
            }
            b.done.send_replace(id + 1);
        }
    }

    /// The user was seen (a User API call, a socket's authentication):
    /// `last_seen_at` moves to now, unless it was written for this user
    /// less than a minute ago. The write joins the node's presence batch,
    /// and nobody waits for it: a connection storm authenticates thousands
    /// of users at once, and as a statement and a commit each they were
    /// most of the database's work during the storm.
    pub fn user_seen(&self, project: Uuid, user: Uuid) {
        let reg = self.presence_registry();
        let now = crate::model::Timestamp::now().millis();
        let key = (project, user);
        if reg
            .written
            .get(&key)
            .is_some_and(|at| now - *at < SEEN_EVERY_MS)
        {
            return;
        }
        remember_write(reg, key);
        let at = self.project_now(&project);
        self.batch_presence(key, PresenceWrite::Seen { at });
    }

    /// Writes a presence change on the blocking pool, without waiting: a
    /// socket or a request never waits for it, and a failed write is only
    /// logged (the next change writes again).
    fn write_presence(&self, project: Uuid, user: Uuid, w: PresenceWrite) {
        let store = self.storage().clone();
        let job = move || {
            if let Err(e) = store.set_presence(&project, &user, w) {
                tracing::warn!(error = %e, "cannot record a user's presence");
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn_blocking(job);
            }
            Err(_) => job(),
        }
    }

    /// The facts a gate over presence is decided on, for the recipient of a
    /// delivery of `project` whose step is reached now: online when a socket
    /// is open on this node or (on a shared store) on any node alive; seen
    /// now when online, else when last recorded. Blocking: a store read.
    pub fn due_facts(&self, project: &Uuid, user: &Uuid) -> Result<DueFacts> {
        let now = self.project_now(project);
        let here = self
            .presence_registry()
            .sockets
            .get(&(*project, *user))
            .is_some_and(|n| *n > 0);
        let stored = self.storage().presence(project, user)?;
        let online = here || stored.online;
        Ok(DueFacts {
            presence: Presence {
                online,
                last_seen_at: if online {
                    Some(now)
                } else {
                    stored.last_seen_at
                },
            },
            now,
        })
    }
}

/// Lets a writer's waiters go if the writer unwinds (a normal return has
/// already let the writer's place go, under the lock).
struct ReleaseOnUnwind<'a>(&'a Batch);

impl Drop for ReleaseOnUnwind<'_> {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        let mut s = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
        s.writing = false;
        self.0.done.send_replace(s.next);
    }
}

fn remember_write(reg: &Registry, key: (Uuid, Uuid)) {
    if reg.written.len() >= MAX_REMEMBERED {
        reg.written.clear();
    }
    reg.written
        .insert(key, crate::model::Timestamp::now().millis());
}
