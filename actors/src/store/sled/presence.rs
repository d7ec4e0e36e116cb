//! Users' presence on sled (`storage::PresenceRepo`): `last_seen`, one key
//! per user (`project ‖ user` → big-endian milliseconds of project time).
//! One process owns a sled store, so which sockets are open is the engine's
//! to know (`actors::presence`): the store keeps only what must outlive the
//! process. The key starts with the project's id (deleted with the project)
//! and goes with its user (`users.rs::stage_user_delete`).

use super::feed::feed_lock_key;
use super::keys::Key;
use super::{Store, Writes, T};
use crate::error::Result;
use crate::model::Timestamp;
use crate::storage::{PresenceRepo, PresenceWrite, StoredPresence};
use uuid::Uuid;

fn read_ms(v: &[u8]) -> Option<i64> {
    Some(i64::from_be_bytes(v.try_into().ok()?))
}

impl PresenceRepo for Store {
    fn set_presence(&self, project: &Uuid, user: &Uuid, w: PresenceWrite) -> Result<()> {
        let at = match w {
            PresenceWrite::Sockets { at, .. } | PresenceWrite::Seen { at } => at,
        };
        let k = Key::new().id(project).id(user);
        // The feed's lock, which a user's deletion holds too: a user deleted
        // meanwhile gets no key back.
        let fk = feed_lock_key(project, user);
        let _g = self.lock_feeds([fk.as_slice()]);
        if self.user(project, user)?.is_none() {
            return Ok(());
        }
        let before = self.tree(T::last_seen).get(&k)?.and_then(|v| read_ms(&v));
        if before.is_some_and(|b| b >= at.millis()) {
            return Ok(());
        }
        let mut wr = Writes::new();
        wr.put(T::last_seen, &k, at.millis().to_be_bytes());
        self.commit(wr)
    }

    fn presence(&self, project: &Uuid, user: &Uuid) -> Result<StoredPresence> {
        let k = Key::new().id(project).id(user);
        let last = self.tree(T::last_seen).get(&k)?.and_then(|v| read_ms(&v));
        Ok(StoredPresence {
            online: false,
            last_seen_at: last.map(Timestamp::from_millis),
        })
    }
}
