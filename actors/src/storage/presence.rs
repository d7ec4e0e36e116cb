//! `PresenceRepo`: what a backend keeps of users' presence, for the step
//! conditions over `recipient.online` and `recipient.last_seen_at`
//! (`model::presence`). The backend stores and returns facts; when a user
//! counts as online or seen, and which writes are worth making (the
//! once-a-minute throttle of `last_seen_at`), is the engine's
//! (`actors::presence`).

use crate::error::Result;
use crate::model::Timestamp;
use uuid::Uuid;

/// What `PresenceRepo::set_presence` records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PresenceWrite {
    /// Node `node` holds `sockets` live-feed sockets of the user now (0:
    /// none); `version` orders one node's writes for one user (a later
    /// version replaces an earlier one, never the other way round), and
    /// the user was seen at `at` (project time).
    Sockets {
        node: Uuid,
        sockets: u32,
        version: u64,
        at: Timestamp,
    },
    /// The user was seen at `at` (project time): `last_seen_at` moves
    /// forward to it (never back).
    Seen { at: Timestamp },
}

/// A user's presence as stored (`PresenceRepo::presence`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StoredPresence {
    /// Some node that is alive (its lease holds) has a socket of the user
    /// open; always false on a backend one process owns (the engine knows
    /// its own sockets).
    pub online: bool,
    pub last_seen_at: Option<Timestamp>,
}

/// Users' presence: durable `last_seen_at`, and on a backend several nodes
/// share, which node holds sockets of which user.
pub trait PresenceRepo {
    /// Records a change of a user's presence; a user who does not exist (any
    /// more) is left alone.
    fn set_presence(&self, project: &Uuid, user: &Uuid, w: PresenceWrite) -> Result<()>;
    /// `set_presence` of several users (`(project, user, write)`, one write
    /// per user), as one batch where the backend can. A write that fails
    /// fails alone.
    fn set_presences(&self, writes: &[(Uuid, Uuid, PresenceWrite)]) -> Result<()> {
        set_presence_each(self, writes)
    }
    /// The user's presence as stored.
    fn presence(&self, project: &Uuid, user: &Uuid) -> Result<StoredPresence>;
}

/// `set_presence` of each write in turn: every one is tried, and the first
/// failure is returned.
pub fn set_presence_each<'a, R: PresenceRepo + ?Sized>(
    repo: &R, writes: impl IntoIterator<Item = &'a (Uuid, Uuid, PresenceWrite)>,
) -> Result<()> {
    let mut first = Ok(());
    for (p, u, w) in writes {
        if let Err(e) = repo.set_presence(p, u, *w) {
            if first.is_ok() {
                first = Err(e);
            }
        }
    }
    first
}
