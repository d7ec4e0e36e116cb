//! A project's content on sled (`storage::ContentRepo`): one key per record
//! in the `content` space, `project id ‖ kind tag ‖ key`, so a project's
//! records are one prefix scan (by kind, then key) and deleting the project
//! deletes them with the rest.

use super::keys::Key;
use super::{Store, Writes, T};
use crate::error::Result;
use crate::model::{ContentKind, ContentRecord};
use crate::storage::ContentRepo;
use uuid::Uuid;

fn key(project: &Uuid, kind: ContentKind, k: &str) -> Key {
    Key::new().id(project).u8(kind.tag()).str(k)
}

impl ContentRepo for Store {
    fn content(&self, project: &Uuid, kind: ContentKind, k: &str) -> Result<Option<ContentRecord>> {
        self.get_rec(T::content, key(project, kind, k).as_ref())
    }

    fn contents(&self, project: &Uuid, kind: Option<ContentKind>) -> Result<Vec<ContentRecord>> {
        let prefix = match kind {
            Some(k) => Key::new().id(project).u8(k.tag()),
            None => Key::new().id(project),
        };
        let mut out = vec![];
        for kv in self.tree(T::content).scan_prefix(prefix) {
            let (_, v) = kv?;
            out.push(super::codec::dec(&v)?);
        }
        Ok(out)
    }

    fn put_content(&self, project: &Uuid, r: &ContentRecord) -> Result<bool> {
        let k = key(project, r.kind(), &r.key);
        let _g = self.lock(k.as_ref());
        let created = self.tree(T::content).get(k.as_ref())?.is_none();
        let mut w = Writes::new();
        w.put_rec(T::content, &k, r);
        self.commit_durable(w)?;
        Ok(created)
    }

    fn remove_content(&self, project: &Uuid, kind: ContentKind, k: &str) -> Result<bool> {
        let k = key(project, kind, k);
        let _g = self.lock(k.as_ref());
        if self.tree(T::content).get(k.as_ref())?.is_none() {
            return Ok(false);
        }
        let mut w = Writes::new();
        w.del(T::content, &k);
        self.commit_durable(w)?;
        Ok(true)
    }
}
