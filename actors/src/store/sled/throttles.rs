//! Throttle counters in sled: one record per `(project, flow, recipient,
//! step, key)` holding the times (project milliseconds) of the runs the
//! counter counts within its window. They are written in the commit of the
//! notifications that count in them (`Store::stage_throttles`), and a run
//! with explicit recipients checks them under the recipients' locks
//! (`Store::throttles_stale`), so two runs racing for one recipient's last
//! slot cannot both take it.

use super::keys::Key;
use super::{Store, Writes, T};
use crate::error::Result;
use crate::storage::{StagedNotification, ThrottleKey, ThrottleWrite};
use uuid::Uuid;

fn key(project: &Uuid, k: &ThrottleKey) -> Key {
    Key::new()
        .id(project)
        .id(&k.flow_id)
        .id(&k.recipient)
        .u8(k.step)
        .bytes(k.key.as_bytes())
}

impl Store {
    pub fn throttle_hits(&self, project: &Uuid, k: &ThrottleKey) -> Result<Vec<i64>> {
        Ok(self
            .get_rec::<Vec<i64>>(T::throttles, &key(project, k).0)?
            .unwrap_or_default())
    }

    /// Stages the counters the notifications passed.
    pub(super) fn stage_throttles(
        &self,
        w: &mut Writes,
        project: &Uuid,
        notifications: &[StagedNotification],
    ) {
        for t in notifications.iter().filter_map(|n| n.throttle.as_ref()) {
            w.put_rec(T::throttles, key(project, &t.key), &t.after);
        }
    }

    /// Whether a counter is no longer as staging read it.
    pub(super) fn throttles_stale(
        &self,
        project: &Uuid,
        throttles: &[ThrottleWrite],
    ) -> Result<bool> {
        for t in throttles {
            if self.throttle_hits(project, &t.key)? != t.before {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
