//! Admin API: the project's audit log (who changed what in its
//! configuration, docs/API.md "Audit log"), newest first.

use super::endpoint::{Endpoint, Serve};
use super::list as list_page;
use crate::auth::Admin;
use crate::bodies::audit_log::AuditEntry;
use crate::errors::ApiResult;
use crate::extract::Query;
use crate::openapi::{query_param, str_schema, Content, Op};
use crate::pagination;
use crate::state::State;
use actix_web::{HttpRequest, HttpResponse};
use herald_engine::storage::AuditFilter;

/// `GET /admin/v1/audit_log`
pub fn list_endpoint() -> Endpoint {
    Op::get(
        "/admin/v1/audit_log",
        "listAuditLog",
        "List the audit log: changes of the project's configuration",
    )
    .param(query_param(
        "resource_type",
        str_schema().into(),
        "Only changes of this resource type (the part of `action` before its dot: \
         `flow`, `channel`, `topic`, `webhook_endpoint`, `partial`, `layout`, \
         `translation`, `project`, `clock`, `key`, `signing_key`, `link_secret`, `member`).",
    ))
    .param(query_param(
        "who",
        str_schema().into(),
        "Only changes made by this actor: a member's email, `api` or `operator`.",
    ))
    .paged()
    .ok(
        200,
        "A page of the audit log, newest first",
        Content::Json("AuditEntryList"),
    )
    .to(list)
}

pub async fn list(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let q = Query::of(&req);
    let given = |name: &str| q.get(name).map(str::trim).filter(|s| !s.is_empty());
    let filter = AuditFilter {
        resource_type: given("resource_type").map(str::to_string),
        who: given("who").map(str::to_string),
    };
    let filters = [
        ("resource_type", filter.resource_type.clone()),
        ("who", filter.who.clone()),
    ];
    let paging = pagination::parse(&q, st.cursor_key(), &a.project.id, "audit_log", &filters)?;
    let page = st
        .engine
        .audit_log(a.project.id, filter, paging.req.clone())
        .await?;
    Ok(list_page(&paging, &page, |e| AuditEntry::from(e)))
}
