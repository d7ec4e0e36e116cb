//! Audit log: who changed what in the project's configuration and when,
//! newest first, keyset-paginated, filtered by resource type and by who;
//! each entry with its record before and after (secrets already masked by
//! the engine when the entry was written). Read only.

use super::super::render::member_page;
use super::super::Member;
use super::common::failed;
use crate::bodies::audit_log::AuditEntry;
use crate::extract::Query;
use crate::pagination;
use crate::state::State;
use actix_web::{HttpRequest, HttpResponse};
use herald_engine::storage::AuditFilter;
use minijinja::context;

const NAV: &str = "/console/audit_log";

/// `value` as the page shows it: indented JSON, or nothing.
fn pretty(value: &Option<serde_json::Value>) -> Option<String> {
    value
        .as_ref()
        .map(|v| serde_json::to_string_pretty(v).unwrap_or_default())
}

pub async fn page(m: Member, req: HttpRequest, st: State) -> HttpResponse {
    let q = Query::of(&req);
    let given = |name: &str| {
        q.get(name)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let filter = AuditFilter {
        resource_type: given("resource_type"),
        who: given("who"),
    };
    let filters = [
        ("resource_type", filter.resource_type.clone()),
        ("who", filter.who.clone()),
    ];
    let paging = match pagination::parse(
        &q,
        st.cursor_key(),
        &m.project_id,
        "console.audit_log",
        &filters,
    ) {
        Ok(p) => p,
        Err(e) => return failed(&m, NAV, e.0),
    };
    let page = match st
        .engine
        .audit_log(m.project_id, filter.clone(), paging.req.clone())
        .await
    {
        Ok(p) => p,
        Err(e) => return failed(&m, NAV, e),
    };
    let next = super::common::next_link(NAV, &filters, paging.page_object(&page).after);
    let items: Vec<serde_json::Value> = page
        .items
        .iter()
        .map(|e| {
            let v = AuditEntry::from(e);
            serde_json::json!({
                "at": v.at.to_rfc3339(),
                "who": v.who,
                "action": v.action,
                "resource_type": v.resource_type,
                "resource": v.resource_key.clone().unwrap_or_else(|| v.resource_id.clone()),
                "before": pretty(&v.before),
                "after": pretty(&v.after),
            })
        })
        .collect();
    member_page(
        &m,
        NAV,
        "pages/audit_log.html",
        context! {
            items => items,
            next => next,
            resource_type => filter.resource_type,
            who => filter.who,
        },
    )
}
