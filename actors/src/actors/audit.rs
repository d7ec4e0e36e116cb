//! The engine's door to a project's audit log (`crate::audit`): the log
//! read newest first, and `Engine::audit`, which records a change made
//! outside the engine's own methods (a console member added or removed).
//! The engine's own changes record themselves through
//! `rules::audit::record` in the job that makes them.

use super::engine::Engine;
use crate::audit::{Actor, AuditChange, AuditEntry};
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

    /// Records `change`, made by `actor`, in the project's log (its
    /// snapshots redacted, `audit::redact`): for changes the engine does
    /// not make itself, such as a console member's (`member.created`,
    /// `member.updated`, `member.deleted`).
    pub async fn audit(&self, project: Uuid, actor: &Actor, change: AuditChange) -> Result<()> {
        let actor = actor.clone();
        let change = change.redacted();
        self.run(move |s| crate::rules::audit::record(s, &project, &actor, change))
            .await
    }
}
