//! The registry of open live-feed sockets and each socket's inbox. Shutdown
//! closes them all, the per-user cap evicts a user's oldest, and a change of a
//! project's authentication rules closes that project's. It knows a socket only
//! by its `Inbox` (frames and close requests from other threads, and the waker
//! of the socket's task), so it depends on nothing of the socket itself
//! (`live/feed.rs`) nor of the app state that holds it.
//!
//! It also keeps the budget of sockets still authenticating (`Pending`): a
//! total, and shares of it per source address and per project, so that one
//! client holding many silent sockets cannot take every tenant's places.

use herald_engine::actors::LiveSink;
use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
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

/// Frames a socket has taken from its inbox but not yet written, beyond which
/// it is closed with 1013 (`feed.rs`). It lives here, with the inbox limit
/// derived from it, so the registry depends on nothing of the socket.
pub const MAX_UNSENT: usize = 1000;

/// Frames queued in an inbox beyond which the socket is closed with 1013 even
/// before its task has taken them (a task that cannot keep up with its user's
/// actor must not let the queue grow without bound). The socket's own limit on
/// frames not yet written (`MAX_UNSENT`) is lower and usually acts first.
const INBOX_LIMIT: usize = 4 * MAX_UNSENT;

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

/// How many sockets still authenticating one node takes: in all, from one
/// source address, and for one project (settings `max_pending_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingCaps {
    pub total: usize,
    pub per_address: usize,
    pub per_project: usize,
}

/// Why a socket still authenticating got no place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PendingRefused {
    /// Every place is taken (by many clients): 503, the server is busy.
    Full,
    /// The socket's source address holds its whole share: 429, this client.
    Address(usize),
    /// The project's public key holds its whole share: 429, this project.
    Project(usize),
}

/// What one place among the sockets still authenticating is counted against;
/// given back to `release_pending` when the socket authenticates or ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingPlace {
    source: Option<IpAddr>,
    project: uuid::Uuid,
}

/// The source a socket's address is counted as: an IPv4 address (a mapped
/// one too) as it is, an IPv6 address by its /64, since one client (a home,
/// a host) usually holds a whole /64 and could otherwise take a share per
/// address of it.
fn source_of(ip: Option<IpAddr>) -> Option<IpAddr> {
    Some(match ip? {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6((u128::from(v6) & !u128::from(u64::MAX)).into()),
        },
    })
}

/// The sockets still authenticating, counted in all, per source and per
/// project. One lock for the three counts, so a place is taken against all
/// of them or none (it is held for a few map operations, once per socket).
#[derive(Default)]
struct Pending {
    total: usize,
    by_source: HashMap<Option<IpAddr>, usize>,
    by_project: HashMap<uuid::Uuid, usize>,
}

/// Open sockets: shutdown closes them with 1001, the per-user cap evicts the
/// oldest of a user's, and a change of a project's authentication rules closes
/// that project's. Also counts the sockets still authenticating.
#[derive(Default)]
pub struct Registry {
    sockets: dashmap::DashMap<u64, Entry>,
    /// A user's authenticated sockets, oldest first.
    by_user: dashmap::DashMap<(uuid::Uuid, uuid::Uuid), VecDeque<u64>>,
    pending: Mutex<Pending>,
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

    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        // Plain counts: a panic while holding the lock leaves them usable.
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a place among the sockets still authenticating for a socket from
    /// `peer` to `project`, if the total and both shares have one free. The
    /// total is judged first: when every place is taken, the server is busy
    /// for everyone (503), whoever holds them; below it, a source or project
    /// at its share is the one asked to slow down (429).
    pub fn reserve_pending(
        &self, peer: Option<IpAddr>, project: uuid::Uuid, caps: PendingCaps,
    ) -> Result<PendingPlace, PendingRefused> {
        let place = PendingPlace {
            source: source_of(peer),
            project,
        };
        let mut p = self.pending();
        if p.total >= caps.total {
            return Err(PendingRefused::Full);
        }
        if p.by_source.get(&place.source).copied().unwrap_or(0) >= caps.per_address {
            return Err(PendingRefused::Address(caps.per_address));
        }
        if p.by_project.get(&project).copied().unwrap_or(0) >= caps.per_project {
            return Err(PendingRefused::Project(caps.per_project));
        }
        p.total += 1;
        *p.by_source.entry(place.source).or_default() += 1;
        *p.by_project.entry(project).or_default() += 1;
        Ok(place)
    }

    /// Gives a place back (entries at zero go, so the maps hold only sources
    /// and projects with sockets still authenticating).
    pub fn release_pending(&self, place: PendingPlace) {
        let mut p = self.pending();
        p.total = p.total.saturating_sub(1);
        if let Some(n) = p.by_source.get_mut(&place.source) {
            *n -= 1;
            if *n == 0 {
                p.by_source.remove(&place.source);
            }
        }
        if let Some(n) = p.by_project.get_mut(&place.project) {
            *n -= 1;
            if *n == 0 {
                p.by_project.remove(&place.project);
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    const CAPS: PendingCaps = PendingCaps {
        total: 6,
        per_address: 2,
        per_project: 3,
    };

    fn ip(s: &str) -> Option<IpAddr> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn pending_places_are_shared_per_address_per_project_and_in_all() {
        let r = Registry::default();
        let (p1, p2, p3) = (
            uuid::Uuid::from_u128(1),
            uuid::Uuid::from_u128(2),
            uuid::Uuid::from_u128(3),
        );
        let a = r.reserve_pending(ip("10.0.0.1"), p1, CAPS).unwrap();
        r.reserve_pending(ip("10.0.0.1"), p1, CAPS).unwrap();
        // the address holds its share, whichever project it asks for
        assert_eq!(
            r.reserve_pending(ip("10.0.0.1"), p2, CAPS),
            Err(PendingRefused::Address(2))
        );
        // another address may take the project's last place, then no more
        r.reserve_pending(ip("10.0.0.2"), p1, CAPS).unwrap();
        assert_eq!(
            r.reserve_pending(ip("10.0.0.3"), p1, CAPS),
            Err(PendingRefused::Project(3))
        );
        // other projects fill the rest; then the server is full for everyone
        r.reserve_pending(ip("10.0.0.3"), p2, CAPS).unwrap();
        r.reserve_pending(ip("10.0.0.4"), p2, CAPS).unwrap();
        r.reserve_pending(ip("10.0.0.5"), p3, CAPS).unwrap();
        assert_eq!(
            r.reserve_pending(ip("10.0.0.6"), p3, CAPS),
            Err(PendingRefused::Full)
        );
        // a place given back is free again, for its address and its project
        r.release_pending(a);
        r.reserve_pending(ip("10.0.0.1"), p1, CAPS).unwrap();
    }

    #[test]
    fn released_counts_leave_no_entries_behind() {
        let r = Registry::default();
        let p = uuid::Uuid::from_u128(7);
        let places: Vec<_> = (0..2)
            .map(|_| r.reserve_pending(ip("10.0.0.1"), p, CAPS).unwrap())
            .collect();
        for pl in places {
            r.release_pending(pl);
        }
        let s = r.pending();
        assert_eq!(s.total, 0);
        assert!(s.by_source.is_empty() && s.by_project.is_empty());
    }

    #[test]
    fn an_ipv6_client_counts_by_its_64() {
        assert_eq!(source_of(ip("2001:db8:1:2:aaaa::1")), ip("2001:db8:1:2::"));
        assert_eq!(source_of(ip("2001:db8:1:2:ffff::9")), ip("2001:db8:1:2::"));
        assert_ne!(source_of(ip("2001:db8:1:3::1")), ip("2001:db8:1:2::"));
        assert_eq!(source_of(ip("::ffff:10.1.2.3")), ip("10.1.2.3"));
        assert_eq!(source_of(ip("10.1.2.3")), ip("10.1.2.3"));
        assert_eq!(source_of(None), None);
    }
}
