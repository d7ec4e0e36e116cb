//! Projects (tenants) and their keys.

use super::keys::Key;
use super::{codec, Store, Writes, T};
use crate::error::{Error, Result};
use crate::model::{new_id, Channel, ChannelType, Project, Timestamp};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use uuid::Uuid;

/// The keys of a newly created project; the secret is shown once and then only its
/// hash is kept.
pub struct NewProjectKeys {
    pub public_key: String,
    pub secret_key: String,
}

pub fn hash_secret(secret: &str) -> Vec<u8> {
    Sha256::digest(secret.as_bytes()).to_vec()
}

fn random_key(prefix: &str) -> String {
    let b: [u8; 24] = rand::random();
    let mut s = String::with_capacity(prefix.len() + 48);
    s.push_str(prefix);
    for x in b {
        s.push_str(&format!("{x:02x}"));
    }
    s
}

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

    pub fn projects(&self) -> Result<Vec<Project>> {
        let mut out = vec![];
        for kv in self.tree(T::projects).iter() {
            let (_, v) = kv?;
            out.push(codec::dec(&v)?);
        }
        Ok(out)
    }

    /// Creates a project with the given keys (or fresh random ones) and its
    /// built-in in_app channel. Fails with a conflict when the name is taken.
    pub fn create_project(
        &self,
        name: &str,
        keys: Option<(String, String)>,
    ) -> Result<NewProjectKeys> {
        let _g = self.lock(b"projects");
        if self
            .tree(T::projects_by_name)
            .get(name.as_bytes())?
            .is_some()
        {
            return Err(Error::conflict(
                "project",
                Some(name.into()),
                "unique",
                "project name taken",
            ));
        }
        let (public_key, secret_key) =
            keys.unwrap_or_else(|| (random_key("pk_"), random_key("sk_")));
        if self.tree(T::api_keys).get(public_key.as_bytes())?.is_some() {
            return Err(Error::conflict(
                "project",
                None,
                "unique",
                "public key already in use",
            ));
        }
        let (id, now) = new_id();
        let p = Project {
            id,
            name: name.to_string(),
            public_key: public_key.clone(),
            secret_hash: hash_secret(&secret_key),
            security_mode: false,
            signing_key: None,
            created_at: now,
            updated_at: now,
        };
        let (cid, cnow) = new_id();
        let in_app = Channel {
            id: cid,
            channel_type: ChannelType::InApp,
            name: "In-app feed".into(),
            provider: "in_app".into(),
            config: Default::default(),
            revoked: false,
            builtin: true,
            created_at: cnow,
            updated_at: cnow,
        };
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

    /// The project owning a public key, from memory after the first lookup.
    /// The project of a public key if it is cached (no sled access).
    pub fn project_cached(&self, public_key: &str) -> Option<Arc<Project>> {
        self.inner.projects_cache.get(public_key).map(|p| p.clone())
    }

    pub fn project_by_api_key(&self, public_key: &str) -> Result<Option<Arc<Project>>> {
        if let Some(p) = self.inner.projects_cache.get(public_key) {
            return Ok(Some(p.clone()));
        }
        let id = match self.tree(T::api_keys).get(public_key.as_bytes())? {
            Some(id) => id,
            None => return Ok(None),
        };
        let p: Option<Project> = self.get_rec(T::projects, &id)?;
        Ok(p.map(|p| {
            let p = Arc::new(p);
            self.inner
                .projects_cache
                .insert(public_key.to_string(), p.clone());
            p
        }))
    }

    /// Read-modify-write of a project; refreshes the key cache.
    pub fn update_project(&self, id: &Uuid, f: impl FnOnce(&mut Project)) -> Result<Project> {
        let _g = self.lock(id.as_bytes());
        let mut p: Project = self
            .get_rec(T::projects, id.as_bytes())?
            .ok_or_else(|| Error::not_found("project", id))?;
        f(&mut p);
        p.updated_at = Timestamp::now();
        let mut w = Writes::new();
        w.put_rec(T::projects, id.as_bytes(), &p);
        self.commit_durable(w)?;
        self.inner
            .projects_cache
            .insert(p.public_key.clone(), Arc::new(p.clone()));
        Ok(p)
    }
}
