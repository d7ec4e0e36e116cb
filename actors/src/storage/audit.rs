//! `AuditRepo`: a project's audit log (`crate::audit`), appended to by the
//! engine after each change of its configuration and read newest first. The
//! backend stores the entries it is given (already redacted) and filters a
//! page by resource type and actor; it keeps them for the life of the
//! project, outside notification retention, and drops them with it.

use super::{Page, PageReq};
use crate::audit::AuditEntry;
use crate::error::Result;
use uuid::Uuid;

/// Which entries a page of the log holds (`None`: any).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditFilter {
    /// Only entries of this resource type (`AuditEntry::resource_type`).
    pub resource_type: Option<String>,
    /// Only entries of this actor, as `Actor::who` names it.
    pub who: Option<String>,
}

impl AuditFilter {
    /// Whether `e` belongs in a page of this filter.
    pub fn admits(&self, e: &AuditEntry) -> bool {
        self.resource_type
            .as_ref()
            .is_none_or(|t| *t == e.resource_type)
            && self.who.as_ref().is_none_or(|w| w == e.who())
    }
}

/// A project's audit log.
pub trait AuditRepo {
    /// Appends an entry.
    fn append_audit(&self, project: &Uuid, e: &AuditEntry) -> Result<()>;
    /// A page of the log, newest first, paged by the entries' ids.
    fn audit_page(
        &self, project: &Uuid, filter: &AuditFilter, req: &PageReq,
    ) -> Result<Page<AuditEntry>>;
}
