//! Admin API event endpoints (docs/API.md, "Event endpoints") and the
//! decision trace of a notification: CRUD, secret rotation, the attempt log
//! and replay. The engine does the work (`Engine::event_endpoints`); the event sender
//! (`herald_actors::actors::events`) picks up what is queued on its own.
//!
//! Creation takes no `Idempotency-Key`: its answer carries the signing
//! secret, which must not sit in the idempotency store in plaintext.

use super::{created, list as list_page, no_content, ok};
use crate::auth::Admin;
use crate::bodies::webhook_endpoints::{
    EventAttemptView, NotificationTrace, ReplayInput, ReplayResult, TraceEntryView,
    WebhookEndpoint, WebhookEndpointInput, WebhookEndpointUpdate, WebhookEndpointWithSecret,
};
use crate::errors::ApiResult;
use crate::extract::{path_uuid, typed, Body, Query};
use crate::pagination;
use crate::state::State;
use actix_web::{HttpRequest, HttpResponse};

pub async fn create(a: Admin, body: Body, st: State) -> ApiResult<HttpResponse> {
    let ep = typed::<WebhookEndpointInput>(&body.object()?)?.validate(st.engine.egress())?;
    let pid = a.project.id;
    let (ep, secret) = st.engine.event_endpoints(pid).create(ep).await?;
    Ok(created(WebhookEndpointWithSecret {
        endpoint: WebhookEndpoint::from(&ep),
        secret,
    }))
}

pub async fn list(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let q = Query::of(&req);
    let paging = pagination::parse(&q, st.cursor_key(), &a.project.id, "webhook_endpoints", &[])?;
    let pid = a.project.id;
    let pr = paging.req.clone();
    let page = st.engine.event_endpoints(pid).list(pr).await?;
    Ok(list_page(&paging, &page, |e| WebhookEndpoint::from(e)))
}

pub async fn get(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "id")?;
    let pid = a.project.id;
    let ep = st.engine.event_endpoints(pid).get(id).await?;
    Ok(ok(WebhookEndpoint::from(&ep)))
}

pub async fn update(a: Admin, req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "id")?;
    let change = typed::<WebhookEndpointUpdate>(&body.object()?)?.validate(st.engine.egress())?;
    let pid = a.project.id;
    let ep = st.engine.event_endpoints(pid).update(id, change).await?;
    Ok(ok(WebhookEndpoint::from(&ep)))
}

pub async fn delete(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "id")?;
    let pid = a.project.id;
    st.engine.event_endpoints(pid).delete(id).await?;
    Ok(no_content())
}

pub async fn rotate_secret(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "id")?;
    let pid = a.project.id;
    let (ep, secret) = st.engine.event_endpoints(pid).rotate(id).await?;
    Ok(ok(WebhookEndpointWithSecret {
        endpoint: WebhookEndpoint::from(&ep),
        secret,
    }))
}

pub async fn attempts(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "id")?;
    let q = Query::of(&req);
    let list = format!("webhook_attempts:{id}");
    let paging = pagination::parse(&q, st.cursor_key(), &a.project.id, &list, &[])?;
    let pid = a.project.id;
    let pr = paging.req.clone();
    let page = st.engine.event_endpoints(pid).attempts(id, pr).await?;
    Ok(list_page(&paging, &page, |a| EventAttemptView::from(a)))
}

pub async fn replay(a: Admin, req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "id")?;
    let since = typed::<ReplayInput>(&body.object()?)?.validate()?;
    let pid = a.project.id;
    let queued = st.engine.event_endpoints(pid).replay(id, since).await?;
    Ok(ok(ReplayResult { queued }))
}

pub async fn trace(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "id")?;
    let pid = a.project.id;
    let entries = st.engine.notification_trace(pid, id).await?;
    Ok(ok(NotificationTrace {
        entries: entries.iter().map(TraceEntryView::from).collect(),
        notification_id: id,
    }))
}
