//! A project's audit log on sled (`storage::AuditRepo`): `audit_log` holds
//! each entry under `project ‖ id` (UUIDv7, so key order is the log's
//! order). The key starts with the project's id, so deleting the project
//! deletes its log with the rest; nothing else removes an entry.

use super::keys::Key;
use super::page::{scan, Page, PageReq};
use super::{codec, Store, Writes, T};
use crate::audit::AuditEntry;
use crate::error::Result;
use crate::storage::{AuditFilter, AuditRepo};
use uuid::Uuid;

impl AuditRepo for Store {
    fn append_audit(&self, project: &Uuid, e: &AuditEntry) -> Result<()> {
        let mut w = Writes::new();
        w.put_rec(T::audit_log, Key::new().id(project).id(&e.id), e);
        self.commit_durable(w)
    }

    fn audit_page(
        &self, project: &Uuid, filter: &AuditFilter, req: &PageReq,
    ) -> Result<Page<AuditEntry>> {
        let prefix = Key::new().id(project);
        scan(self.tree(T::audit_log), &prefix, req, |_, v| {
            let e: AuditEntry = codec::dec(v)?;
            Ok(filter.admits(&e).then_some(e))
        })
    }
}
