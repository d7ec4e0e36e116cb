//! What the sled store keeps in memory beside its trees, answered through
//! `Storage::memory`: projects by key and users by external id as last
//! read, each forgotten by the writes that change them, and the change
//! stamps of feeds (`FeedStamps`), which the engine's cache of first feed
//! pages checks its pages against.

use super::users::{user_lock_key, USERS_CACHED};
use super::Store;
use crate::error::Result;
use crate::model::User;
use crate::storage::{Memory, Remembered};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use uuid::Uuid;

/// Change stamps of users' feeds. A stamp is a value of one clock shared
/// by every slot, so a stamp taken later is larger than any taken before:
/// a feed's stamp is the largest of its slot's (bumped after each commit
/// that changes the feed), its project's (bumped after each commit that
/// changes a user, an actor its entries show, or deletes the project) and
/// the store's (bumped when it reopens). Feeds share a slot by hash, which
/// bounds the memory: a write to one feed of a slot makes its neighbours'
/// pages read again, never shows a stale one.
pub(crate) struct FeedStamps {
    clock: AtomicU64,
    slots: Box<[AtomicU64]>,
    projects: dashmap::DashMap<Uuid, u64>,
    epoch: AtomicU64,
}

const FEED_SLOTS: usize = 16_384;

impl Default for FeedStamps {
    fn default() -> Self {
        FeedStamps {
            clock: AtomicU64::new(1),
            slots: (0..FEED_SLOTS).map(|_| AtomicU64::new(0)).collect(),
            projects: Default::default(),
            epoch: AtomicU64::new(0),
        }
    }
}

impl FeedStamps {
    fn tick(&self) -> u64 {
        self.clock.fetch_add(1, Ordering::AcqRel) + 1
    }

    fn slot(&self, project: &Uuid, user: &Uuid) -> &AtomicU64 {
        use std::hash::BuildHasher;
        // A fixed hasher: slots need spreading, not resistance to chosen keys
        // (a collision only costs a page read).
        let h =
            std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
                .hash_one((project, user));
        &self.slots[(h as usize) % FEED_SLOTS]
    }

    /// The feed changed (called after its commit).
    pub(crate) fn feed_changed(&self, project: &Uuid, user: &Uuid) {
        let t = self.tick();
        self.slot(project, user).fetch_max(t, Ordering::AcqRel);
    }

    /// A user of the project changed, or the project is gone.
    pub(crate) fn project_changed(&self, project: &Uuid) {
        let t = self.tick();
        let mut e = self.projects.entry(*project).or_insert(0);
        *e = (*e).max(t);
    }

    /// Every feed may have changed (the store reopened).
    pub(crate) fn all_changed(&self) {
        let t = self.tick();
        self.epoch.fetch_max(t, Ordering::AcqRel);
    }

    fn stamp(&self, project: &Uuid, user: &Uuid) -> u64 {
        let of_project = self.projects.get(project).map_or(0, |s| *s);
        self.slot(project, user)
            .load(Ordering::Acquire)
            .max(of_project)
            .max(self.epoch.load(Ordering::Acquire))
    }
}

impl Store {
    /// `Storage::memory` on sled (no tree is read).
    pub(super) fn remembered(&self, of: Memory<'_>) -> Option<Remembered> {
        match of {
            Memory::Project(key) => self
                .inner
                .projects_cache
                .get(key)
                .map(|p| Remembered::Project(p.clone())),
            Memory::User(project, ext) => self
                .inner
                .users_cache
                .get(&(*project, ext.to_string()))
                .map(|u| Remembered::User(u.clone())),
            Memory::FeedStamp(project, user) => Some(Remembered::Stamp(
                self.inner.feed_stamps.stamp(project, user),
            )),
        }
    }

    /// A user by external id from the cache only (no sled access).
    pub fn user_cached(&self, project: &Uuid, ext: &str) -> Option<Arc<User>> {
        self.inner
            .users_cache
            .get(&(*project, ext.to_string()))
            .map(|u| u.clone())
    }

    /// `user_by_ext` through the cache. The cache is filled here and emptied by
    /// every writer of the user, both under the user's lock and the latter after
    /// its commit, so a fill can never put back what a write replaced.
    pub fn user_by_ext_cached(&self, project: &Uuid, ext: &str) -> Result<Option<Arc<User>>> {
        if let Some(u) = self.user_cached(project, ext) {
            return Ok(Some(u));
        }
        let _g = self.lock(&user_lock_key(project, ext));
        let Some(u) = self.user_by_ext(project, ext)? else {
            return Ok(None);
        };
        let u = Arc::new(u);
        let key = (*project, ext.to_string());
        super::cache_insert(&self.inner.users_cache, USERS_CACHED, key, u.clone());
        Ok(Some(u))
    }
}

#[cfg(test)]
mod tests {
    use super::FeedStamps;
    use uuid::Uuid;

    /// Every change a cached first page can show moves its feed's stamp,
    /// and nothing else's.
    #[test]
    fn a_feed_stamp_moves_with_its_feed_its_project_and_the_store() {
        let s = FeedStamps::default();
        let (p, q) = (Uuid::now_v7(), Uuid::now_v7());
        let (u, v) = (Uuid::now_v7(), Uuid::now_v7());
        let first = s.stamp(&p, &u);
        assert_eq!(s.stamp(&p, &u), first, "a read moves nothing");
        s.feed_changed(&p, &u);
        let after_feed = s.stamp(&p, &u);
        assert!(after_feed > first, "the feed's own change");
        s.project_changed(&p);
        let after_user = s.stamp(&p, &u);
        assert!(after_user > after_feed, "a user of the project changed");
        assert!(s.stamp(&p, &v) > 0, "every feed of the project");
        let other = s.stamp(&q, &u);
        s.feed_changed(&p, &u);
        assert_eq!(s.stamp(&q, &u), other, "another project's feed stays");
        s.all_changed();
        assert!(s.stamp(&q, &u) > other, "the store reopened");
    }
}
