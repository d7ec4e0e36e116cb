//! What the sled store keeps in memory beside its trees (`storage::Caches`):
//! projects by key, users by external id and feeds' first pages, each
//! forgotten by the writes that change them.

use super::users::{user_lock_key, USERS_CACHED};
use super::Store;
use crate::error::Result;
use crate::model::{Project, User};
use crate::storage::*;
use std::sync::Arc;
use uuid::Uuid;

impl Caches for Store {
    /// The project of a public key if it is cached (no sled access).
    fn project_cached(&self, public_key: &str) -> Option<Arc<Project>> {
        self.inner.projects_cache.get(public_key).map(|p| p.clone())
    }

    /// The user if it is cached (no sled access).
    fn user_cached(&self, project: &Uuid, ext: &str) -> Option<Arc<User>> {
        self.inner
            .users_cache
            .get(&(*project, ext.to_string()))
            .map(|u| u.clone())
    }

    /// `user_by_ext` through the cache. The cache is filled here and emptied by
    /// every writer of the user, both under the user's lock and the latter after
    /// its commit, so a fill can never put back what a write replaced.
    fn user_by_ext_cached(&self, project: &Uuid, ext: &str) -> Result<Option<Arc<User>>> {
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

    /// The cached first page of a user's feed with `limit` entries, if current.
    fn feed_page_cached(&self, project: &Uuid, user: &Uuid, limit: usize) -> Option<Arc<[u8]>> {
        self.feed_page_current(project, user, limit)
    }

    fn feed_page_fill(
        &self,
        project: &Uuid,
        user: &Uuid,
        limit: usize,
        build: &mut dyn FnMut(&dyn Storage) -> Result<Vec<u8>>,
    ) -> Result<Arc<[u8]>> {
        Store::feed_page_fill(self, project, user, limit, |s| build(s))
    }
}
