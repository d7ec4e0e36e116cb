//! A project's audit log on PostgreSQL (`storage::AuditRepo`): rows of
//! `audit_log` (migration 0013) keyed by `(project, id)`, deleted with the
//! project by its foreign key; each call one statement.

use super::{db_err, doc_of, to_doc, PgStore};
use crate::audit::AuditEntry;
use crate::error::Result;
use crate::storage::{AuditFilter, AuditRepo, Page, PageReq};
use sqlx::Row;
use uuid::Uuid;

impl AuditRepo for PgStore {
    fn append_audit(&self, project: &Uuid, e: &AuditEntry) -> Result<()> {
        self.block(
            sqlx::query(
                "INSERT INTO audit_log (project, id, resource_type, who, doc)
                 VALUES ($1, $2, $3, $4, $5)",
            )
            .bind(project)
            .bind(e.id)
            .bind(&e.resource_type)
            .bind(e.who())
            .bind(to_doc(e))
            .execute(self.pool()),
        )
        .map_err(db_err)?;
        Ok(())
    }

    fn audit_page(
        &self, project: &Uuid, filter: &AuditFilter, req: &PageReq,
    ) -> Result<Page<AuditEntry>> {
        let p = *project;
        let f = filter.clone();
        self.page(
            &|q| {
                q.push("SELECT id, doc FROM audit_log WHERE project = ");
                q.push_bind(p);
                if let Some(t) = &f.resource_type {
                    q.push(" AND resource_type = ");
                    q.push_bind(t.clone());
                }
                if let Some(w) = &f.who {
                    q.push(" AND who = ");
                    q.push_bind(w.clone());
                }
            },
            "id",
            req,
            &|r| Ok((r.get("id"), doc_of(&r, "doc")?)),
        )
    }
}
