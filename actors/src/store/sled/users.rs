//! Users, their preferences, and user deletion.

use super::keys::{tail_id, Key};
use super::page::{scan, Page, PageReq};
use super::{codec, Store, Writes, T};
use crate::error::{Error, Result};
use crate::model::{new_id, Preferences, Timestamp, User, UserPatch};
use std::collections::HashMap;
use std::sync::Arc;
use uuid::Uuid;

#[derive(Debug, Clone, Default)]
pub struct UserFilter {}

/// Users kept in the authentication cache at most.
const USERS_CACHED: usize = 50_000;

pub(crate) fn user_lock_key(project: &Uuid, ext: &str) -> Vec<u8> {
    Key::new().u8(b'u').id(project).str(ext).0
}

impl Store {
    pub fn user_by_ext(&self, project: &Uuid, ext: &str) -> Result<Option<User>> {
        match self
            .tree(T::users_by_ext)
            .get(Key::new().id(project).str(ext))?
        {
            Some(id) => self.get_rec(T::users, Key::new().id(project).bytes(&id).as_ref()),
            None => Ok(None),
        }
    }

    /// The user if it is cached (no sled access).
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
        let cache = &self.inner.users_cache;
        if cache.len() >= USERS_CACHED {
            cache.clear(); // crude but bounded; refills with the active users
        }
        cache.insert((*project, ext.to_string()), u.clone());
        Ok(Some(u))
    }

    /// Drops cached users after a write (the caller holds their locks).
    pub(crate) fn forget_users<'a>(&self, project: &Uuid, exts: impl IntoIterator<Item = &'a str>) {
        let mut any = false;
        for e in exts {
            self.inner.users_cache.remove(&(*project, e.to_string()));
            any = true;
        }
        if any {
            self.bump_user_gen(project);
        }
    }

    pub fn user(&self, project: &Uuid, id: &Uuid) -> Result<Option<User>> {
        self.get_rec(T::users, Key::new().id(project).id(id).as_ref())
    }

    pub fn user_required(&self, project: &Uuid, ext: &str) -> Result<User> {
        self.user_by_ext(project, ext)?
            .ok_or_else(|| Error::not_found("user", ext))
    }

    /// Stages a create-or-update of one user into `w`. `staged` holds users already
    /// staged in the same write set (a run may name a user twice). Caller holds the
    /// user's lock. Returns the user and whether it is new.
    pub(crate) fn stage_user_upsert(
        &self,
        w: &mut Writes,
        project: &Uuid,
        ext: &str,
        patch: &UserPatch,
        staged: &mut HashMap<String, User>,
    ) -> Result<(User, bool)> {
        self.stage_user_upsert_at(Some(w), project, ext, patch, staged, new_id())
    }

    /// `stage_user_upsert` with the id and moment a new user gets, and the
    /// moment an updated one gets, given (`fresh`). Without `w` nothing is
    /// staged and no cache is touched: a dry run that computes the user as
    /// the same call with `w` would write it, if nothing changes in between
    /// (`accept_run` renders from the dry run, outside the users' locks, and
    /// compares it with the real one under them).
    pub(crate) fn stage_user_upsert_at(
        &self,
        w: Option<&mut Writes>,
        project: &Uuid,
        ext: &str,
        patch: &UserPatch,
        staged: &mut HashMap<String, User>,
        fresh: (Uuid, Timestamp),
    ) -> Result<(User, bool)> {
        let existing = match staged.get(ext) {
            Some(u) => Some(u.clone()),
            None => self.user_by_ext(project, ext)?,
        };
        let (mut user, created) = match existing {
            Some(u) => (u, false),
            None => {
                let (id, now) = fresh;
                if w.is_some() {
                    self.cache_new_feed(project, &id);
                }
                (
                    User {
                        id,
                        external_id: ext.to_string(),
                        first_name: None,
                        last_name: None,
                        email: None,
                        phone: None,
                        avatar: None,
                        locale: None,
                        timezone: None,
                        custom_fields: Default::default(),
                        created_at: now,
                        updated_at: now,
                    },
                    true,
                )
            }
        };
        let changed = patch.apply(&mut user);
        if changed || created {
            if !created {
                user.updated_at = fresh.1;
            }
            if let Some(w) = w {
                w.put_rec(T::users, Key::new().id(project).id(&user.id), &user);
                if created {
                    w.put(
                        T::users_by_ext,
                        Key::new().id(project).str(ext),
                        user.id.as_bytes(),
                    );
                }
            }
        }
        staged.insert(ext.to_string(), user.clone());
        Ok((user, created))
    }

    /// `PUT /users/{external_id}`: returns the user and whether it was created.
    pub fn upsert_user(
        &self,
        project: &Uuid,
        ext: &str,
        patch: &UserPatch,
    ) -> Result<(User, bool)> {
        let _g = self.lock(&user_lock_key(project, ext));
        let mut w = Writes::new();
        let r = self.stage_user_upsert(&mut w, project, ext, patch, &mut HashMap::new())?;
        let res = self.commit_durable(w);
        self.forget_users(project, [ext]);
        res?;
        Ok(r)
    }

    pub fn list_users(&self, project: &Uuid, req: &PageReq) -> Result<Page<User>> {
        scan(self.tree(T::users), &Key::new().id(project), req, |_, v| {
            Ok(Some(codec::dec(v)?))
        })
    }

    /// Removes a user with its preferences, feed, event log and subscriptions; its
    /// notifications and deliveries stay (they keep the recipient id).
    pub fn delete_user(&self, project: &Uuid, ext: &str) -> Result<()> {
        let lk = user_lock_key(project, ext);
        let user_guard = self.lock(&lk);
        let user = self.user_required(project, ext)?;
        // The feed lock too: the event log and the feed go with the user.
        let fk = super::feed::feed_lock_key(project, &user.id);
        let feed_guard = self.lock_feeds([fk.as_slice()]);
        let up = Key::new().id(project).id(&user.id);
        let mut w = Writes::new();
        w.del(T::users, &up);
        w.del(T::users_by_ext, Key::new().id(project).str(ext));
        w.del(T::preferences, &up);
        for t in [T::feed, T::events, T::push_subs] {
            for kv in self.tree(t).scan_prefix(&up) {
                let (k, _) = kv?;
                w.del(t, k);
            }
        }
        let res = self.commit_durable(w);
        self.forget_users(project, [ext]);
        self.forget_feed_page(project, &user.id);
        self.inner.feed_counts.remove(&(*project, user.id));
        drop(feed_guard);
        // The user's lock goes too before the topics' locks are taken one by one:
        // holding it while taking another entity lock with `lock` (not
        // `lock_many`, which orders stripes) deadlocks when the two keys share a
        // stripe, or against a `subscribe` holding the topic's stripe and
        // waiting for this user's. The user is gone and durable by now; a new
        // user of the same external id has another id and other subscriptions.
        drop(user_guard);
        res?;
        // Topic subscriptions, each under its topic's lock (counts change).
        let mut subs = vec![];
        for kv in self.tree(T::user_subs).scan_prefix(&up) {
            let (k, _) = kv?;
            subs.push(tail_id(&k));
        }
        for sid in subs {
            if let Some(s) = self.subscription(project, &sid)? {
                let _ = self.unsubscribe(project, &s.topic, &user);
            }
        }
        Ok(())
    }

    pub fn preferences(&self, project: &Uuid, user: &Uuid) -> Result<Preferences> {
        Ok(self
            .get_rec(T::preferences, Key::new().id(project).id(user).as_ref())?
            .unwrap_or_default())
    }

    pub fn update_preferences(
        &self,
        project: &Uuid,
        user: &User,
        patch: &Preferences,
    ) -> Result<Preferences> {
        let _g = self.lock(&user_lock_key(project, &user.external_id));
        let mut p = self.preferences(project, &user.id)?;
        p.merge(patch);
        let mut w = Writes::new();
        w.put_rec(T::preferences, Key::new().id(project).id(&user.id), &p);
        self.commit_durable(w)?;
        Ok(p)
    }
}
