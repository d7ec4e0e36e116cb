//! Projects (tenants) and their keys: creation, secret rotation (the previous
//! secret stays valid for a grace period) and deletion of a project with every
//! key it owns.

use super::keys::Key;
use super::{codec, Store, Writes, T};
use crate::error::{Error, Result};
use crate::model::{new_id, Channel, Project, Timestamp};
use crate::rules::projects::{check_project_name, hash_secret, random_key};
use crate::storage::NewProjectKeys;
use crate::storage::Refusal;
use crate::storage::*;
use std::sync::Arc;
use uuid::Uuid;

/// The `meta` key naming the project `serve` created as `default`.
const DEFAULT_MARKER: &[u8] = b"default_project";

/// Keys removed per commit while a project is deleted: bounded batches keep
/// memory flat and let other commits through between them.
const DELETE_BATCH: usize = 4096;

impl Store {
    pub fn project_by_name(&self, name: &str) -> Result<Option<Project>> {
        match self.tree(T::projects_by_name).get(name.as_bytes())? {
            Some(id) => self.get_rec(T::projects, &id),
            None => Ok(None),
        }
    }

    pub fn project(&self, id: &Uuid) -> Result<Option<Project>> {
        self.get_rec(T::projects, id.as_bytes())
    }

    /// Makes sure the project `serve` calls `default` exists: created (with
    /// `keys`, or fresh ones, returned) when there is none. The one created is
    /// remembered in `meta`, so renaming it does not make the next start create
    /// another; deleting it does.
    pub fn ensure_default_project(
        &self, keys: Option<(String, String)>,
    ) -> Result<Option<NewProjectKeys>> {
        let marked = match self.tree(T::meta).get(DEFAULT_MARKER)? {
            Some(id) => self.get_rec::<Project>(T::projects, &id)?,
            None => None,
        };
        if marked.is_some() {
            return Ok(None);
        }
        let (existing, created) = match self.project_by_name("default")? {
            Some(p) => (p, None),
            None => {
                let k = self.create_project("default", keys)?;
                let p = self
                    .project_by_name("default")?
                    .ok_or_else(|| Error::internal("project default created but not found"))?;
                (p, Some(k))
            }
        };
        let mut w = Writes::new();
        w.put(T::meta, DEFAULT_MARKER, existing.id.as_bytes());
        self.commit_durable(w)?;
        Ok(created)
    }

    /// Empties the caches of a deleted project: its key, its users, its
    /// flows, its users' feed pages and counts.
    fn forget_project(&self, p: &Project) {
        self.inner.projects_cache.remove(&p.public_key);
        self.inner.users_cache.retain(|(pid, _), _| *pid != p.id);
        self.inner.flows_cache.retain(|(pid, _), _| *pid != p.id);
        self.inner.flow_ids.retain(|(pid, _), _| *pid != p.id);
        self.inner.feed_stamps.project_changed(&p.id);
        self.inner.feed_counts.retain(|(pid, _), _| *pid != p.id);
    }
}

impl ProjectRepo for Store {
    /// Every project (but those being deleted), in creation order.
    fn projects(&self) -> Result<Vec<Project>> {
        let mut out = vec![];
        for kv in self.tree(T::projects).iter() {
            let (_, v) = kv?;
            let p: Project = codec::dec(&v)?;
            if !self.is_deleted(&p.id) {
                out.push(p);
            }
        }
        Ok(out)
    }

    /// Creates a project with the given keys (or fresh random ones) and its
    /// built-in in_app channel. Fails with a conflict when the name is taken.
    fn create_project(&self, name: &str, keys: Option<(String, String)>) -> Result<NewProjectKeys> {
        check_project_name(name)?;
        let _g = self.lock(b"projects");
        if self
            .tree(T::projects_by_name)
            .get(name.as_bytes())?
            .is_some()
        {
            return Err(Refusal::ProjectNameTaken(name.to_string()).err());
        }
        let (public_key, secret_key) =
            keys.unwrap_or_else(|| (random_key("pk_"), random_key("sk_")));
        if self.tree(T::api_keys).get(public_key.as_bytes())?.is_some() {
            return Err(Refusal::PublicKeyTaken.err());
        }
        let (id, now) = new_id();
        let p = Project::new(id, name, &public_key, hash_secret(&secret_key), now);
        let (cid, cnow) = new_id();
        let in_app = Channel::builtin_in_app(cid, cnow);
        let mut w = Writes::new();
        w.put_rec(T::projects, id.as_bytes(), &p);
        w.put(T::projects_by_name, name.as_bytes(), id.as_bytes());
        w.put(T::api_keys, public_key.as_bytes(), id.as_bytes());
        w.put(
            T::channels,
            Key::new().id(&id).id(&cid),
            self.channel_record(&id, &in_app)?,
        );
        self.commit_durable(w)?;
        Ok(NewProjectKeys {
            public_key,
            secret_key,
        })
    }

    /// Read-modify-write of a project; refreshes the key cache. A new name
    /// moves the name index (409 `conflict` when another project has it).
    fn update_project(&self, id: &Uuid, f: Edit<'_, Project>) -> Result<Project> {
        let _g = self.lock_many([b"projects".as_slice(), id.as_bytes().as_slice()]);
        if self.is_deleted(id) {
            return Err(Refusal::missing("project", id));
        }
        let mut p: Project = self
            .get_rec(T::projects, id.as_bytes())?
            .ok_or_else(|| Refusal::missing("project", id))?;
        let old_name = p.name.clone();
        f(&mut p);
        p.updated_at = Timestamp::now();
        let mut w = Writes::new();
        if p.name != old_name {
            if self
                .tree(T::projects_by_name)
                .get(p.name.as_bytes())?
                .is_some()
            {
                return Err(Refusal::ProjectNameTaken(p.name.clone()).err());
            }
            w.del(T::projects_by_name, old_name.as_bytes());
            w.put(T::projects_by_name, p.name.as_bytes(), id.as_bytes());
        }
        w.put_rec(T::projects, id.as_bytes(), &p);
        self.commit_durable(w)?;
        self.inner
            .projects_cache
            .insert(p.public_key.clone(), Arc::new(p.clone()));
        Ok(p)
    }

    /// Deletes the project `name` and every key it owns, in every key space,
    /// and forgets it in every cache; nothing of another project is touched.
    ///
    /// The project is first marked deleted (in memory, under its lock): its
    /// keys stop authenticating, and every later commit drops writes of its
    /// keys, so deliveries, expansions or requests that were under way cannot
    /// put one back (they find nothing and stop). The keys are then removed in
    /// batches, the project's own record, name and public key last: if the
    /// process dies half-way, the project is still listed and deleting it
    /// again finishes the job.
    fn delete_project(&self, name: &str) -> Result<Project> {
        use std::sync::atomic::Ordering;
        let found = self
            .project_by_name(name)?
            .ok_or_else(|| Refusal::missing("project", name))?;
        let id = found.id;
        let p = {
            let _g = self.lock_many([b"projects".as_slice(), id.as_bytes().as_slice()]);
            // Read again under the lock: a rename may have come in between.
            let p: Project = self
                .get_rec(T::projects, id.as_bytes())?
                .ok_or_else(|| Refusal::missing("project", name))?;
            self.inner
                .deleted
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .insert(id);
            self.inner.any_deleted.store(true, Ordering::Release);
            self.inner.projects_cache.remove(&p.public_key);
            self.forget_event_endpoints(&id);
            p
        };
        // Commits that started before the mark hold the gate shared: once we
        // had it exclusively, every one of them has applied its batch.
        drop(
            self.inner
                .commit_gate
                .write()
                .unwrap_or_else(|e| e.into_inner()),
        );
        let mut removed = 0usize;
        for &t in T::ALL {
            if matches!(t, T::meta | T::projects | T::projects_by_name | T::api_keys) {
                continue;
            }
            loop {
                let mut w = Writes::new();
                let mut n = 0;
                let keys = if t == T::runs_active {
                    self.tree(t).iter()
                } else {
                    self.tree(t).scan_prefix(id.as_bytes())
                };
                for kv in keys {
                    let (k, _) = kv?;
                    if super::owner(t, &k) == Some(id) {
                        w.del(t, &k);
                        n += 1;
                        if n == DELETE_BATCH {
                            break;
                        }
                    }
                }
                self.commit(w)?;
                removed += n;
                if n < DELETE_BATCH {
                    break;
                }
            }
        }
        let mut w = Writes::new();
        w.del(T::projects, id.as_bytes());
        // The entries that point at it: its name and public key (scanned, not
        // looked up: a data directory of an earlier Herald may still hold a
        // name a rename left behind), and the `default` marker.
        for t in [T::projects_by_name, T::api_keys] {
            for kv in self.tree(t).iter() {
                let (k, v) = kv?;
                if v[..] == id.as_bytes()[..] {
                    w.del(t, &k);
                }
            }
        }
        if self.tree(T::meta).get(DEFAULT_MARKER)?.as_deref() == Some(id.as_bytes().as_slice()) {
            w.del(T::meta, DEFAULT_MARKER);
        }
        self.commit_durable(w)?;
        self.forget_project(&p);
        tracing::info!(project_id = %id, keys = removed, "project deleted");
        Ok(p)
    }

    fn find_project(&self, by: ProjectRef<'_>) -> Result<Option<Project>> {
        match by {
            ProjectRef::Id(id) => Store::project(self, id),
            ProjectRef::Name(name) => Store::project_by_name(self, name),
            ProjectRef::ApiKey(key) => Ok(self.project_by_api_key(key)?.map(Arc::unwrap_or_clone)),
        }
    }
}

/// Reads of the trait `RecordRepo` answers (`lookups.rs`).
impl Store {
    /// The project owning a public key, from memory after the first lookup.
    /// The cache is filled under the project's lock, which every change of
    /// the project (an update, a rotation, a deletion) holds while it
    /// replaces or removes the cached copy, so a fill that read the record
    /// before the change cannot put it back afterwards.
    pub fn project_by_api_key(&self, public_key: &str) -> Result<Option<Arc<Project>>> {
        if let Some(p) = self.inner.projects_cache.get(public_key) {
            return Ok(Some(p.clone()));
        }
        let id = match self.tree(T::api_keys).get(public_key.as_bytes())? {
            Some(id) => id,
            None => return Ok(None),
        };
        let _g = self.lock(&id);
        let Ok(uid) = Uuid::from_slice(&id) else {
            return Ok(None);
        };
        if self.is_deleted(&uid) {
            return Ok(None);
        }
        let p: Option<Project> = self.get_rec(T::projects, &id)?;
        Ok(p.map(|p| {
            let p = Arc::new(p);
            self.inner
                .projects_cache
                .insert(public_key.to_string(), p.clone());
            p
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::UserPatch;
    #[allow(unused_imports)]
    use crate::storage::*;

    /// Keys of every space owned by `id`, plus its name and public key entries.
    fn keys_of(store: &Store, p: &Project) -> usize {
        let mut n = 0;
        for &t in T::ALL {
            for kv in store.tree(t).iter() {
                let (k, v) = kv.unwrap();
                let owned = match t {
                    T::projects_by_name | T::api_keys => v[..] == p.id.as_bytes()[..],
                    _ => super::super::owner(t, &k) == Some(p.id),
                };
                n += usize::from(owned);
            }
        }
        n
    }

    fn populate(store: &Store, p: &Project) {
        for i in 0..5 {
            store
                .upsert_user(&p.id, &format!("user-{i}"), &UserPatch::default())
                .unwrap();
        }
        store.put_topic(&p.id, "news", Default::default()).unwrap();
        let u = store.user_by_ext(&p.id, "user-1").unwrap().unwrap();
        (store as &dyn crate::storage::Storage)
            .subscribe(&p.id, "news", &u)
            .unwrap();
    }

    #[test]
    fn deleting_a_project_removes_every_key_of_it_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store.create_project("gone", None).unwrap();
        store.create_project("kept", None).unwrap();
        let gone = store.project_by_name("gone").unwrap().unwrap();
        let kept = store.project_by_name("kept").unwrap().unwrap();
        populate(&store, &gone);
        populate(&store, &kept);
        assert!(store
            .project_by_api_key(&gone.public_key)
            .unwrap()
            .is_some());
        let kept_before = keys_of(&store, &kept);
        // project, name, key, in_app channel, 5 users and their indexes, topic, subscription
        assert!(keys_of(&store, &gone) >= 15, "{}", keys_of(&store, &gone));

        let deleted = store.delete_project("gone").unwrap();
        assert_eq!(deleted.id, gone.id);
        assert_eq!(
            keys_of(&store, &gone),
            0,
            "keys of the deleted project remain"
        );
        assert_eq!(
            keys_of(&store, &kept),
            kept_before,
            "the other project changed"
        );
        assert!(store
            .project_by_api_key(&gone.public_key)
            .unwrap()
            .is_none());
        assert!(store.project_by_name("gone").unwrap().is_none());
        assert_eq!(store.projects().unwrap().len(), 1);
        assert!(store.user_by_ext(&kept.id, "user-3").unwrap().is_some());

        // work that was under way cannot put a key of it back
        let mut w = Writes::new();
        w.put(T::users, Key::new().id(&gone.id).id(&new_id().0), b"late");
        w.put(T::users, Key::new().id(&kept.id).id(&new_id().0), b"fine");
        store.commit(w).unwrap();
        assert_eq!(keys_of(&store, &gone), 0, "a late write came back");
        assert_eq!(keys_of(&store, &kept), kept_before + 1);

        // a second delete is a 404; the name can be used again
        let e = store.delete_project("gone").err().unwrap();
        assert_eq!(e.code, crate::error::ErrorCode::NotFound);
        store.create_project("gone", None).unwrap();
        drop(store);

        // and on disk, after a reopen
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(keys_of(&store, &gone), 0);
        assert_eq!(keys_of(&store, &kept), kept_before + 1);
    }

    #[test]
    fn rotation_keeps_the_previous_secret_for_the_grace_period_only() {
        let dir = tempfile::tempdir().unwrap();
        use crate::rules::projects::{rotate_secret, MAX_SECRET_GRACE};
        use std::time::Duration;
        let store = Store::open(dir.path()).unwrap();
        let keys = store.create_project("p", None).unwrap();
        let (p, secret) = rotate_secret(
            &store,
            "p",
            Duration::from_secs(3600),
            &crate::audit::Actor::Operator,
        )
        .unwrap();
        assert_ne!(secret, keys.secret_key);
        assert_eq!(p.secret_hash, hash_secret(&secret));
        let now = Timestamp::now();
        assert_eq!(
            p.previous_secret_live(now),
            Some(hash_secret(&keys.secret_key).as_slice())
        );
        assert_eq!(p.previous_secret_live(now.plus_millis(3_601_000)), None);
        // the cache serves the rotated project at once
        let cached = store.project_by_api_key(&keys.public_key).unwrap().unwrap();
        assert_eq!(cached.secret_hash, hash_secret(&secret));
        // no grace: the old one is forgotten
        let (p, _) =
            rotate_secret(&store, "p", Duration::ZERO, &crate::audit::Actor::Operator).unwrap();
        assert!(p.previous_secret_hash.is_none() && p.previous_secret_expires_at.is_none());
        let view = serde_json::to_value(crate::model::OperatorProject::from(&p)).unwrap();
        assert!(view.get("previous_secret_expires_at").is_none());
        assert!(view.get("secret_rotated_at").is_some());
        let e = rotate_secret(
            &store,
            "p",
            MAX_SECRET_GRACE + Duration::from_secs(1),
            &crate::audit::Actor::Operator,
        )
        .err()
        .unwrap();
        assert_eq!(e.code, crate::error::ErrorCode::ValidationFailed);
        let e = rotate_secret(
            &store,
            "nope",
            Duration::ZERO,
            &crate::audit::Actor::Operator,
        )
        .err()
        .unwrap();
        assert_eq!(e.code, crate::error::ErrorCode::NotFound);
    }

    #[test]
    fn the_default_project_survives_a_rename_and_is_recreated_after_a_deletion() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let first = store.ensure_default_project(None).unwrap().unwrap();
        assert!(store.ensure_default_project(None).unwrap().is_none());
        let p = store.project_by_name("default").unwrap().unwrap();
        store
            .update_project(&p.id, Box::new(|p| p.name = "renamed".into()))
            .unwrap();
        assert!(store.project_by_name("default").unwrap().is_none());
        assert_eq!(store.project_by_name("renamed").unwrap().unwrap().id, p.id);
        assert!(
            store.ensure_default_project(None).unwrap().is_none(),
            "renamed, still the default"
        );
        // a name taken by another project is refused
        store.create_project("other", None).unwrap();
        let e = store
            .update_project(&p.id, Box::new(|p| p.name = "other".into()))
            .err()
            .unwrap();
        assert_eq!(e.code, crate::error::ErrorCode::Conflict);
        store.delete_project("renamed").unwrap();
        assert_eq!(keys_of(&store, &p), 0);
        assert!(store.tree(T::meta).get(DEFAULT_MARKER).unwrap().is_none());
        let second = store.ensure_default_project(None).unwrap().unwrap();
        assert_ne!(first.public_key, second.public_key);
    }

    #[test]
    fn project_names_are_checked() {
        for bad in ["", "-x", "a b", "a/b", "é", &"x".repeat(101)] {
            assert!(check_project_name(bad).is_err(), "{bad:?}");
        }
        for good in ["default", "acme", "a.b-c_d", "9lives"] {
            assert!(check_project_name(good).is_ok(), "{good:?}");
        }
    }
}
