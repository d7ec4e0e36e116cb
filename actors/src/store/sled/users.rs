//! Users, their preferences, and user deletion (one or many at once). A user as a change leaves
//! it is decided by the rules (`delivery::accept::patch_user`); this writes
//! it (`stage_user_write`), for `PUT /users` and for a run's recipients.

use super::keys::{tail_id, Key};
use super::page::{scan, Page, PageReq};
use super::{codec, Store, Writes, T};
use crate::error::{Error, Result};
use crate::model::{Preferences, User, UserPatch, UserRef};
use crate::rules::users;
use crate::storage::Refusal;
use crate::storage::UserWrite;
use crate::storage::*;
use std::collections::{BTreeSet, HashMap, HashSet};
use uuid::Uuid;

#[derive(Debug, Clone, Default)]
pub struct UserFilter {}

/// Users kept in the authentication cache at most.
pub(super) const USERS_CACHED: usize = 50_000;

pub(crate) fn user_lock_key(project: &Uuid, ext: &str) -> Vec<u8> {
    Key::new().u8(b'u').id(project).str(ext).0
}

impl Store {
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

    pub fn user_required(&self, project: &Uuid, ext: &str) -> Result<User> {
        self.user_by_ext(project, ext)?
            .ok_or_else(|| Refusal::missing("user", ext))
    }

    /// Stages a user as a change leaves it (see `UserWrite`): written when
    /// it differs from the user as read, with its external id when it is new
    /// (its feed's counts are cached empty: nobody can write to it before
    /// this commit). The caller holds the user's lock and has checked that
    /// the user is still `before`.
    pub(crate) fn stage_user_write(&self, w: &mut Writes, project: &Uuid, u: &UserWrite) {
        if u.before.as_ref() == Some(&u.after) {
            return;
        }
        let user = &u.after;
        w.put_rec(T::users, Key::new().id(project).id(&user.id), user);
        if u.before.is_none() {
            self.cache_new_feed(project, &user.id);
            w.put(
                T::users_by_ext,
                Key::new().id(project).str(&u.external_id),
                user.id.as_bytes(),
            );
        }
    }

    /// `PUT /users/{external_id}`: returns the user and whether it was created.
    pub fn upsert_user(
        &self, project: &Uuid, ext: &str, patch: &UserPatch,
    ) -> Result<(User, bool)> {
        let mut done = self.upsert_many(project, &[(ext, patch)])?;
        done.pop()
            .ok_or_else(|| Error::internal("an upsert returned no user"))
    }

    /// `POST /users/bulk`: every user with its patch, applied in order (a later
    /// item of the same external id patches what the earlier one left), in one
    /// commit (durable once the caller's wait returns); each user as stored
    /// and whether it was created.
    pub fn upsert_users(
        &self, project: &Uuid, items: &[(String, UserPatch)],
    ) -> Result<Vec<(User, bool)>> {
        let refs: Vec<(&str, &UserPatch)> = items.iter().map(|(e, p)| (e.as_str(), p)).collect();
        self.upsert_many(project, &refs)
    }

    /// The one upsert path, for one user or many: their locks at once (stripe
    /// order), each patched from what is stored or what an earlier item left,
    /// one batch, then their cache entries dropped. Applied, not yet durable:
    /// the caller waits for durability (`Engine::upsert_user` does, without
    /// holding a thread), so concurrent PUTs neither park a blocking thread
    /// each on the flush nor hold their users' locks through it.
    pub(crate) fn upsert_many(
        &self, project: &Uuid, items: &[(&str, &UserPatch)],
    ) -> Result<Vec<(User, bool)>> {
        let keys: Vec<Vec<u8>> = items
            .iter()
            .map(|(ext, _)| user_lock_key(project, ext))
            .collect();
        let _g = self.lock_many(keys.iter().map(Vec::as_slice));
        let mut stored = std::collections::HashMap::new();
        for (ext, _) in items {
            if !stored.contains_key(ext) {
                stored.insert(*ext, self.user_by_ext(project, ext)?);
            }
        }
        let writes: Vec<(UserWrite, bool)> = users::upsert_all(items, stored)
            .into_iter()
            .zip(items)
            .map(|(u, (ext, _))| {
                let w = UserWrite {
                    external_id: ext.to_string(),
                    before: u.before,
                    after: u.after,
                };
                (w, u.created)
            })
            .collect();
        let mut w = Writes::new();
        for (u, _) in &writes {
            self.stage_user_write(&mut w, project, u);
        }
        let res = self.commit(w);
        self.forget_users(project, items.iter().map(|(ext, _)| *ext));
        res?;
        Ok(writes.into_iter().map(|(u, c)| (u.after, c)).collect())
    }

    /// Deletes a user as `delete_user` does, with the writes `more` stages
    /// in the same durable commit (it may take back staged removals: an
    /// erasure keeps the user's feed keys as its list of work); returns the
    /// user deleted.
    pub(super) fn delete_user_with(
        &self, project: &Uuid, ext: &str, more: impl FnOnce(&mut Writes, &User) -> Result<()>,
    ) -> Result<User> {
        let lk = user_lock_key(project, ext);
        let user_guard = self.lock(&lk);
        let user = self.user_required(project, ext)?;
        // The feed lock too: the event log and the feed go with the user.
        let fk = super::feed::feed_lock_key(project, &user.id);
        let feed_guard = self.lock_feeds([fk.as_slice()]);
        let mut w = Writes::new();
        self.stage_user_delete(&mut w, project, ext, &user)?;
        more(&mut w, &user)?;
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
        for (_, topic) in self.subscriptions_of(project, &user.id)? {
            let _ = self.unsubscribe(project, &topic, &user);
        }
        Ok(user)
    }

    /// Stages the removal of a user with its preferences, last seen time,
    /// feed, event log and push subscriptions (the caller holds the user's and its feed's locks).
    fn stage_user_delete(
        &self, w: &mut Writes, project: &Uuid, ext: &str, user: &User,
    ) -> Result<()> {
        let up = Key::new().id(project).id(&user.id);
        w.del(T::users, &up);
        w.del(T::users_by_ext, Key::new().id(project).str(ext));
        w.del(T::preferences, &up);
        w.del(T::last_seen, &up);
        for t in [T::feed, T::events, T::push_subs] {
            for kv in self.tree(t).scan_prefix(&up) {
                let (k, _) = kv?;
                w.del(t, k);
            }
        }
        Ok(())
    }

    /// The user's topic subscriptions: `(subscription id, topic key)`.
    fn subscriptions_of(&self, project: &Uuid, user: &Uuid) -> Result<Vec<(Uuid, String)>> {
        let mut out = vec![];
        for kv in self
            .tree(T::user_subs)
            .scan_prefix(Key::new().id(project).id(user))
        {
            let (k, v) = kv?;
            let sid = tail_id(&k);
            if let Some(topic) = self.topic_of_user_sub(project, &sid, &v)? {
                out.push((sid, topic));
            }
        }
        Ok(out)
    }

    /// The topics the users of `exts` are subscribed to.
    fn topics_of(&self, project: &Uuid, exts: &[String]) -> Result<BTreeSet<String>> {
        let mut out = BTreeSet::new();
        for ext in exts {
            if let Some(u) = self.user_by_ext(project, ext)? {
                out.extend(
                    self.subscriptions_of(project, &u.id)?
                        .into_iter()
                        .map(|(_, t)| t),
                );
            }
        }
        Ok(out)
    }
}

impl UserRepo for Store {
    /// Each external id's user as a subscription names it: one index read
    /// each, no record read or decoded.
    fn user_refs_by_ext(&self, project: &Uuid, exts: &[String]) -> Result<Vec<Option<UserRef>>> {
        let by_ext = self.tree(T::users_by_ext);
        exts.iter()
            .map(|ext| {
                let Some(id) = by_ext.get(Key::new().id(project).str(ext))? else {
                    return Ok(None);
                };
                let id =
                    Uuid::from_slice(&id).map_err(|_| Error::internal("corrupt user index"))?;
                Ok(Some(UserRef {
                    id,
                    external_id: ext.clone(),
                }))
            })
            .collect()
    }

    /// `POST /users/bulk_delete`: removes every listed user as `delete_user`
    /// does, their topic subscriptions included (the topics' counts follow), in
    /// one durable commit; for each external id whether there was such a user.
    fn delete_users(&self, project: &Uuid, exts: &[String]) -> Result<Vec<bool>> {
        loop {
            // The users' and their topics' locks are taken at once, in stripe
            // order (`lock_many`), so the topics are read before: when a
            // subscription to another topic came meanwhile, the pass starts over.
            let topics = self.topics_of(project, exts)?;
            let mut keys: Vec<Vec<u8>> = exts.iter().map(|e| user_lock_key(project, e)).collect();
            keys.extend(topics.iter().map(|t| Store::topic_lock(project, t)));
            let _g = self.lock_many(keys.iter().map(Vec::as_slice));
            if self.topics_of(project, exts)? != topics {
                continue;
            }
            let users = exts
                .iter()
                .map(|e| self.user_by_ext(project, e))
                .collect::<Result<Vec<_>>>()?;
            let fks: Vec<Vec<u8>> = users
                .iter()
                .flatten()
                .map(|u| super::feed::feed_lock_key(project, &u.id))
                .collect();
            let _fg = self.lock_feeds(fks.iter().map(Vec::as_slice));
            let mut w = Writes::new();
            let mut removed: HashMap<String, u64> = HashMap::new();
            let mut seen = HashSet::new();
            for (ext, u) in exts.iter().zip(&users) {
                let Some(u) = u.as_ref().filter(|u| seen.insert(u.id)) else {
                    continue;
                };
                self.stage_user_delete(&mut w, project, ext, u)?;
                for (sid, topic) in self.subscriptions_of(project, &u.id)? {
                    Store::stage_unsubscribe(&mut w, project, &topic, &u.id, &sid);
                    *removed.entry(topic).or_default() += 1;
                }
            }
            for (key, n) in removed {
                if let Some(mut t) = self.topic(project, &key)? {
                    t.subscribers_count = t.subscribers_count.saturating_sub(n);
                    w.put_rec(T::topics, Key::new().id(project).str(&key), &t);
                }
            }
            let res = self.commit_durable(w);
            self.forget_users(project, exts.iter().map(String::as_str));
            for u in users.iter().flatten() {
                self.forget_feed_page(project, &u.id);
                self.inner.feed_counts.remove(&(*project, u.id));
            }
            res?;
            return Ok(users.iter().map(Option::is_some).collect());
        }
    }

    fn preferences(&self, project: &Uuid, user: &Uuid) -> Result<Preferences> {
        Ok(self
            .get_rec(T::preferences, Key::new().id(project).id(user).as_ref())?
            .unwrap_or_default())
    }

    fn update_preferences(
        &self, project: &Uuid, user: &User, patch: &Preferences,
    ) -> Result<Preferences> {
        let _g = self.lock(&user_lock_key(project, &user.external_id));
        let mut p = self.preferences(project, &user.id)?;
        p.merge(patch);
        let mut w = Writes::new();
        w.put_rec(T::preferences, Key::new().id(project).id(&user.id), &p);
        self.commit_durable(w)?;
        Ok(p)
    }

    fn upsert_users(&self, project: &Uuid, items: &[(&str, &UserPatch)]) -> Result<Upserted> {
        self.upsert_many(project, items)
    }
}

/// Reads of the trait `RecordRepo` answers (`lookups.rs`).
impl Store {
    pub fn user(&self, project: &Uuid, id: &Uuid) -> Result<Option<User>> {
        self.get_rec(T::users, Key::new().id(project).id(id).as_ref())
    }

    pub fn user_by_ext(&self, project: &Uuid, ext: &str) -> Result<Option<User>> {
        match self
            .tree(T::users_by_ext)
            .get(Key::new().id(project).str(ext))?
        {
            Some(id) => self.get_rec(T::users, Key::new().id(project).bytes(&id).as_ref()),
            None => Ok(None),
        }
    }

    pub fn list_users(&self, project: &Uuid, req: &PageReq) -> Result<Page<User>> {
        scan(self.tree(T::users), &Key::new().id(project), req, |_, v| {
            Ok(Some(codec::dec(v)?))
        })
    }
}
