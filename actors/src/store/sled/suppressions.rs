//! A project's suppression list on sled (`storage::SuppressionRepo`):
//! `suppressions` holds each record under `project ‖ channel type ‖ address`
//! (the send-time lookup is one read), `suppressions_by_id` the list's order
//! (`project ‖ id` → `channel type ‖ address`), and `soft_bounces` the
//! recent soft bounces of an address (`project ‖ channel type ‖ address` →
//! big-endian milliseconds, 8 bytes each). Every key starts with the
//! project's id, so deleting the project deletes them with the rest.

use super::keys::Key;
use super::page::{scan, Page, PageReq};
use super::{Store, Writes, T};
use crate::error::{Error, Result};
use crate::model::{ChannelType, Suppression};
use crate::storage::{AddressKey, SuppressionRepo};
use uuid::Uuid;

fn key(project: &Uuid, (ct, address): AddressKey<'_>) -> Key {
    Key::new().id(project).u8(ct.index()).str(address)
}

/// The value of an id's entry: the address part of its record's key.
fn address_part((ct, address): AddressKey<'_>) -> Vec<u8> {
    Key::new().u8(ct.index()).str(address).0
}

fn lock_key(k: &Key) -> Vec<u8> {
    let mut l = b"suppression".to_vec();
    l.extend_from_slice(k.as_ref());
    l
}

fn times(v: &[u8]) -> Vec<i64> {
    v.chunks_exact(8)
        .map(|c| i64::from_be_bytes(c.try_into().unwrap_or([0; 8])))
        .collect()
}

impl SuppressionRepo for Store {
    fn put_suppression(&self, project: &Uuid, s: Suppression) -> Result<(Suppression, bool)> {
        let at = (s.channel_type, s.address.as_str());
        let k = key(project, at);
        let _g = self.lock(&lock_key(&k));
        if let Some(found) = self.get_rec::<Suppression>(T::suppressions, k.as_ref())? {
            return Ok((found, false));
        }
        let mut w = Writes::new();
        w.put_rec(T::suppressions, &k, &s);
        w.put(
            T::suppressions_by_id,
            Key::new().id(project).id(&s.id),
            address_part(at),
        );
        self.commit_durable(w)?;
        Ok((s, true))
    }

    fn suppressions_of(
        &self, project: &Uuid, keys: &[AddressKey<'_>],
    ) -> Result<Vec<Option<Suppression>>> {
        keys.iter()
            .map(|k| self.get_rec(T::suppressions, key(project, *k).as_ref()))
            .collect()
    }

    fn suppressions_page(
        &self, project: &Uuid, ct: Option<ChannelType>, req: &PageReq,
    ) -> Result<Page<Suppression>> {
        let prefix = Key::new().id(project);
        scan(self.tree(T::suppressions_by_id), &prefix, req, |_, v| {
            let Some(&tag) = v.first() else {
                return Err(Error::internal("corrupt suppression index"));
            };
            if ct.is_some_and(|ct| ct.index() != tag) {
                return Ok(None);
            }
            let mut k = prefix.clone().0;
            k.extend_from_slice(v);
            self.get_rec(T::suppressions, &k)
        })
    }

    fn remove_suppression(&self, project: &Uuid, at: AddressKey<'_>) -> Result<bool> {
        let k = key(project, at);
        let _g = self.lock(&lock_key(&k));
        let Some(found) = self.get_rec::<Suppression>(T::suppressions, k.as_ref())? else {
            return Ok(false);
        };
        let mut w = Writes::new();
        w.del(T::suppressions, &k);
        w.del(T::suppressions_by_id, Key::new().id(project).id(&found.id));
        w.del(T::soft_bounces, &k);
        self.commit_durable(w)?;
        Ok(true)
    }

    fn add_soft_bounce(
        &self, project: &Uuid, at: AddressKey<'_>, at_ms: i64, keep_since_ms: i64,
    ) -> Result<Vec<i64>> {
        let k = key(project, at);
        let _g = self.lock(&lock_key(&k));
        let mut kept: Vec<i64> = match self.tree(T::soft_bounces).get(k.as_ref())? {
            Some(v) => times(&v),
            None => vec![],
        };
        kept.retain(|t| *t >= keep_since_ms);
        kept.push(at_ms);
        kept.sort_unstable();
        let mut v = Vec::with_capacity(kept.len() * 8);
        for t in &kept {
            v.extend_from_slice(&t.to_be_bytes());
        }
        let mut w = Writes::new();
        w.put(T::soft_bounces, &k, v);
        self.commit_durable(w)?;
        Ok(kept)
    }
}
