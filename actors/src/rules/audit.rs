//! Recording a change in the audit log (`crate::audit`), the one function
//! every change of a project's configuration calls, whichever backend and
//! whichever door (Admin API, console, operator) it came through.
//!
//! The entry is appended right after the change succeeded, in the same
//! storage job, not in the change's own atomic write: the changes go
//! through storage calls of their own (a flow's lock, a channel's sealed
//! secrets, an endpoint's outbox) that take no extra record. A failure to
//! append is the job's failure, so a change is never answered as done
//! without its entry being attempted; a crash between the two loses the
//! entry of a change that was made.

use crate::audit::{Actor, AuditChange};
use crate::error::Result;
use crate::model::Timestamp;
use crate::storage::AuditRepo;
use uuid::Uuid;

/// Appends the entry of `change` by `actor` (none when it changed nothing,
/// `AuditChange::entry`). Its snapshots are stored as given: the engine's
/// own (`audit::redact::*`) hold no secret; others are `redacted` first.
pub fn record<S: AuditRepo + ?Sized>(
    s: &S, project: &Uuid, actor: &Actor, change: AuditChange,
) -> Result<()> {
    match change.entry(actor, Timestamp::now()) {
        Some(e) => s.append_audit(project, &e),
        None => Ok(()),
    }
}
