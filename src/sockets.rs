//! The registry of open live-feed sockets and each socket's inbox. Shutdown
//! closes them all, the per-user cap evicts a user's oldest, and a change of a
//! project's authentication rules closes that project's. It knows a socket only
//! by its `Inbox` (frames and close requests from other threads, and the waker
//! of the socket's task), so it depends on nothing of the socket itself
//! (routes/live.rs) nor of the app state that holds it.

use herald_actors::actors::LiveSink;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::task::{Context, Waker};

/// The close code for a socket that is not (or no longer) authenticated.
pub const CLOSE_UNAUTHENTICATED: u16 = 4401;

/// Asks a socket to close with a code: 1001 (server shutdown), 4408 (its user
/// opened too many), 4401 (the project's authentication rules changed under it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Close {
    pub code: u16,
    pub reason: &'static str,
}

/// The close code for a socket pushed out by its user's newer ones.
pub const CLOSE_TOO_MANY: u16 = 4408;

/// Frames queued in an inbox beyond which the socket is closed with 1013 even
/// before its task has taken them (a task that cannot keep up with its user's
/// actor must not let the queue grow without bound). The socket's own limit on
/// frames not yet written (routes/live.rs) is lower and usually acts first.
const INBOX_LIMIT: usize = 4 * crate::routes::live::MAX_UNSENT;

/// One socket's inbox: what other threads hand it. Empty, it holds no
/// allocation: the queue grows only while frames wait for the socket's task.
#[derive(Default)]
pub struct Inbox {
    inner: Mutex<InboxState>,
}

#[derive(Default)]
struct InboxState {
    frames: VecDeque<Arc<str>>,
    close: Option<Close>,
    waker: Option<Waker>,
    /// The socket has ended: nothing more is queued.
    gone: bool,
}

impl Inbox {
    fn lock(&self) -> std::sync::MutexGuard<'_, InboxState> {
        // A panic while holding this lock leaves plain data behind: keep going.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Asks the socket to close (the first request wins).
    pub fn close(&self, c: Close) {
        let mut s = self.lock();
        if s.gone {
            return;
        }
        s.close.get_or_insert(c);
        if let Some(w) = s.waker.take() {
            w.wake();
        }
    }

    /// Moves the queued frames into `into` and returns a close request, if
    /// any; registers the task to be woken by the next frame or request.
    pub fn take(&self, cx: &mut Context<'_>, into: &mut VecDeque<Arc<str>>) -> Option<Close> {
        let mut s = self.lock();
        if into.is_empty() {
            std::mem::swap(into, &mut s.frames);
        } else {
            into.extend(s.frames.drain(..));
            s.frames = VecDeque::new();
        }
        match &s.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => s.waker = Some(cx.waker().clone()),
        }
        s.close.take()
    }

    /// The socket has ended: frames sent from now on are dropped, and the
    /// queue's memory is released now rather than when the last sender lets go.
    pub fn end(&self) {
        let mut s = self.lock();
        s.gone = true;
        s.frames = VecDeque::new();
        s.waker = None;
    }
}

impl LiveSink for Inbox {
    fn send(&self, frame: Arc<str>) {
        let mut s = self.lock();
        if s.gone || s.close.is_some() {
            return;
        }
        if s.frames.len() >= INBOX_LIMIT {
            s.close = Some(Close {
                code: 1013,
                reason: "client too slow; resume with since_seq",
            });
        } else {
            s.frames.push_back(frame);
        }
        if let Some(w) = s.waker.take() {
            w.wake();
        }
    }

    fn connected(&self) -> bool {
        !self.lock().gone
    }
}

struct Entry {
    project: uuid::Uuid,
    close: Arc<Inbox>,
    /// How it authenticated: a user JWT (true) or a bare user id (false).
    jwt: Option<bool>,
}

/// Which of a project's sockets an authentication change concerns.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum AuthedBy {
    /// A bare user id (development mode): closed when security mode goes on.
    UserId,
    /// A user JWT: closed when the signing key changes.
    Jwt,
}

/// Open sockets: shutdown closes them with 1001, the per-user cap evicts the
/// oldest of a user's, and a change of a project's authentication rules closes
/// that project's. Also counts the sockets still authenticating.
#[derive(Default)]
pub struct Registry {
    sockets: dashmap::DashMap<u64, Entry>,
    /// A user's authenticated sockets, oldest first.
    by_user: dashmap::DashMap<(uuid::Uuid, uuid::Uuid), VecDeque<u64>>,
    pending: std::sync::atomic::AtomicUsize,
}

impl Registry {
    /// Records a socket that has just started (not yet tied to a user).
    pub fn insert(&self, id: u64, project: uuid::Uuid, close: Arc<Inbox>) {
        self.sockets.insert(
            id,
            Entry {
                project,
                close,
                jwt: None,
            },
        );
    }

    pub fn close_all(&self) {
        for s in self.sockets.iter() {
            s.value().close.close(Close {
                code: 1001,
                reason: "server shutting down",
            });
        }
    }
    pub fn len(&self) -> usize {
        self.sockets.len()
    }
    pub fn is_empty(&self) -> bool {
        self.sockets.is_empty()
    }

    /// Closes the sockets of `project` that authenticated `by`, with 4401.
    pub fn close_authenticated(&self, project: uuid::Uuid, by: AuthedBy, reason: &'static str) {
        let want = by == AuthedBy::Jwt;
        for s in self.sockets.iter() {
            if s.value().project == project && s.value().jwt == Some(want) {
                s.value().close.close(Close {
                    code: CLOSE_UNAUTHENTICATED,
                    reason,
                });
            }
        }
    }

    /// Closes every socket of `project`, authenticated or not, with 4401
    /// (the project was deleted: nothing it could receive exists any more).
    pub fn close_project(&self, project: uuid::Uuid, reason: &'static str) {
        for s in self.sockets.iter() {
            if s.value().project == project {
                s.value().close.close(Close {
                    code: CLOSE_UNAUTHENTICATED,
                    reason,
                });
            }
        }
    }

    /// The projects that have sockets open here.
    pub fn projects(&self) -> Vec<uuid::Uuid> {
        let mut v: Vec<uuid::Uuid> = self.sockets.iter().map(|s| s.value().project).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Takes a place among the sockets still authenticating, if one is free.
    pub fn reserve_pending(&self, max: usize) -> bool {
        self.pending
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .is_ok()
    }

    pub fn release_pending(&self) {
        self.pending.fetch_sub(1, Ordering::AcqRel);
    }

    /// Records an authenticated socket of a user; past `max`, the user's oldest
    /// sockets are closed with 4408 (a leaked tab is the likely one to go).
    pub fn join_user(&self, id: u64, project: uuid::Uuid, user: uuid::Uuid, jwt: bool, max: usize) {
        if let Some(mut e) = self.sockets.get_mut(&id) {
            e.jwt = Some(jwt);
        }
        let evicted: Vec<u64> = {
            let mut q = self.by_user.entry((project, user)).or_default();
            q.push_back(id);
            let over = q.len().saturating_sub(max);
            q.drain(..over).collect()
        };
        for old in evicted {
            if let Some(e) = self.sockets.get(&old) {
                e.close.close(Close {
                    code: CLOSE_TOO_MANY,
                    reason: "too many live sockets for this user; the oldest is closed",
                });
            }
        }
    }

    pub fn leave(&self, id: u64, user: Option<(uuid::Uuid, uuid::Uuid)>) {
        self.sockets.remove(&id);
        if let Some(k) = user {
            self.by_user.remove_if_mut(&k, |_, q| {
                q.retain(|x| *x != id);
                q.is_empty()
            });
        }
    }
}
