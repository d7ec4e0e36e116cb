//! The engine's door to a project's audit log (`crate::audit`): the log
//! read newest first. Changes record themselves through
//! `rules::audit::record` in the job that makes them (a console member's
//! through `console::audit_member_change`).

use super::engine::Engine;
use crate::audit::AuditEntry;
use crate::error::Result;
use crate::storage::{AuditFilter, Page, PageReq};
use uuid::Uuid;

impl Engine {
    /// A page of the project's audit log, newest first.
    pub async fn audit_log(
        &self, project: Uuid, filter: AuditFilter, req: PageReq,
    ) -> Result<Page<AuditEntry>> {
        self.run(move |s| s.audit_page(&project, &filter, &req))
            .await
    }
}
