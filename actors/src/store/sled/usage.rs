//! Each project's usage counter on sled (`storage::UsageRepo`, see
//! `crate::quota`): one key per project in the `usage` space, its value the
//! count as 8 big-endian bytes. The key starts with the project's id, so
//! deleting the project deletes it with the rest.

use super::{Store, Writes, T};
use crate::error::Result;
use crate::storage::UsageRepo;
use uuid::Uuid;

/// The stripe lock of a project's counter: its own name, so it never
/// shares a critical section with an entity lock taken around it.
fn lock_key(project: &Uuid) -> Vec<u8> {
    let mut k = b"usage/".to_vec();
    k.extend_from_slice(project.as_bytes());
    k
}

fn decode(v: &[u8]) -> u64 {
    v.try_into().map(u64::from_be_bytes).unwrap_or(0)
}

impl UsageRepo for Store {
    fn usage_bytes(&self, project: &Uuid) -> Result<u64> {
        Ok(self
            .tree(T::usage)
            .get(project.as_bytes())?
            .map_or(0, |v| decode(&v)))
    }

    /// Read, changed and written under the counter's lock; applied at once
    /// (`commit_now`), not made durable by itself: a crash may lose the
    /// last changes of the counter with the flusher's last cycle, which the
    /// records they counted were in too.
    fn add_usage(&self, project: &Uuid, delta: i64) -> Result<()> {
        if delta == 0 || self.is_deleted(project) {
            return Ok(());
        }
        let _g = self.lock(&lock_key(project));
        let now = self.usage_bytes(project)?;
        let next = if delta < 0 {
            now.saturating_sub(delta.unsigned_abs())
        } else {
            now.saturating_add(delta as u64)
        };
        let mut w = Writes::new();
        w.put(T::usage, project.as_bytes(), next.to_be_bytes());
        self.commit_now(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[allow(unused_imports)]
    use crate::storage::*;

    #[test]
    fn the_counter_adds_takes_away_and_stops_at_zero() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let (p, q) = (Uuid::now_v7(), Uuid::now_v7());
        assert_eq!(store.usage_bytes(&p).unwrap(), 0);
        store.add_usage(&p, 1000).unwrap();
        store.add_usage(&p, -300).unwrap();
        store.add_usage(&q, 5).unwrap();
        assert_eq!(store.usage_bytes(&p).unwrap(), 700);
        assert_eq!(store.usage_bytes(&q).unwrap(), 5);
        store.add_usage(&p, -5000).unwrap();
        assert_eq!(store.usage_bytes(&p).unwrap(), 0);
    }
}
