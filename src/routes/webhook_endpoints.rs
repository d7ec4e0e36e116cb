//! Admin API event endpoints (docs/API.md, "Event endpoints") and the
//! decision trace of a notification: CRUD, secret rotation, the attempt log
//! and replay. The engine does the work (`Engine::event_endpoints`); the event sender
//! (`herald_engine::actors::events`) picks up what is queued on its own.
//!
//! Creation takes no `Idempotency-Key`: its answer carries the signing
//! secret, which must not sit in the idempotency store in plaintext.

use super::endpoint::{Endpoint, Serve};
use super::{created, list as list_page, no_content, ok};
use crate::auth::Admin;
use crate::bodies::webhook_endpoints::{
    EventAttemptView, NotificationTrace, ReplayInput, ReplayResult, TraceEntryView,
    WebhookEndpoint, WebhookEndpointInput, WebhookEndpointUpdate, WebhookEndpointWithSecret,
};
use crate::errors::ApiResult;
use crate::extract::{path_uuid, typed, Body, Query};
use crate::openapi::{uuid_param, Content, Op};
use crate::pagination;
use crate::state::State;
use actix_web::{HttpRequest, HttpResponse};

/// `POST /admin/v1/webhook_endpoints`
pub fn create_endpoint() -> Endpoint {
    Op::post(
        "/admin/v1/webhook_endpoints",
        "createWebhookEndpoint",
        "Create an event endpoint (its signing secret is shown this once)",
    )
    .body("WebhookEndpointInput", true)
    .ok(
        201,
        "Created, with its secret",
        Content::Json("WebhookEndpointWithSecret"),
    )
    .to(create)
}

pub async fn create(a: Admin, body: Body, st: State) -> ApiResult<HttpResponse> {
    let ep = typed::<WebhookEndpointInput>(&body.object()?)?.validate(st.engine.egress())?;
    let pid = a.project.id;
    let (ep, secret) = st
        .engine
        .event_endpoints(pid)
        .create(a.actor.clone(), ep)
        .await?;
    Ok(created(WebhookEndpointWithSecret {
        endpoint: WebhookEndpoint::from(&ep),
        secret,
    }))
}

/// `GET /admin/v1/webhook_endpoints`
pub fn list_endpoint() -> Endpoint {
    Op::get(
        "/admin/v1/webhook_endpoints",
        "listWebhookEndpoints",
        "List event endpoints",
    )
    .paged()
    .ok(
        200,
        "A page of event endpoints",
        Content::Json("WebhookEndpointList"),
    )
    .to(list)
}

pub async fn list(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let q = Query::of(&req);
    let paging = pagination::parse(&q, st.cursor_key(), &a.project.id, "webhook_endpoints", &[])?;
    let pid = a.project.id;
    let pr = paging.req.clone();
    let page = st.engine.event_endpoints(pid).list(pr).await?;
    Ok(list_page(&paging, &page, |e| WebhookEndpoint::from(e)))
}

/// `GET /admin/v1/webhook_endpoints/{id}`
pub fn get_endpoint() -> Endpoint {
    Op::get(
        "/admin/v1/webhook_endpoints/{id}",
        "getWebhookEndpoint",
        "An event endpoint",
    )
    .param(uuid_param("id", "The endpoint's id."))
    .ok(200, "The endpoint", Content::Json("WebhookEndpoint"))
    .errors(&[400, 404])
    .to(get)
}

pub async fn get(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "id")?;
    let pid = a.project.id;
    let ep = st.engine.event_endpoints(pid).get(id).await?;
    Ok(ok(WebhookEndpoint::from(&ep)))
}

/// `PUT /admin/v1/webhook_endpoints/{id}`
pub fn update_endpoint() -> Endpoint {
    Op::put(
        "/admin/v1/webhook_endpoints/{id}",
        "updateWebhookEndpoint",
        "Change an event endpoint (enabling it clears disabled_reason)",
    )
    .param(uuid_param("id", "The endpoint's id."))
    .body("WebhookEndpointUpdate", true)
    .ok(200, "The endpoint", Content::Json("WebhookEndpoint"))
    .errors(&[404])
    .to(update)
}

pub async fn update(a: Admin, req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "id")?;
    let change = typed::<WebhookEndpointUpdate>(&body.object()?)?.validate(st.engine.egress())?;
    let pid = a.project.id;
    let ep = st
        .engine
        .event_endpoints(pid)
        .update(a.actor.clone(), id, change)
        .await?;
    Ok(ok(WebhookEndpoint::from(&ep)))
}

/// `DELETE /admin/v1/webhook_endpoints/{id}`
pub fn delete_endpoint() -> Endpoint {
    Op::delete(
        "/admin/v1/webhook_endpoints/{id}",
        "deleteWebhookEndpoint",
        "Delete an event endpoint with its pending events and attempts",
    )
    .param(uuid_param("id", "The endpoint's id."))
    .ok(204, "Deleted", Content::Empty)
    .errors(&[400, 404])
    .to(delete)
}

pub async fn delete(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "id")?;
    let pid = a.project.id;
    st.engine
        .event_endpoints(pid)
        .delete(a.actor.clone(), id)
        .await?;
    Ok(no_content())
}

/// `POST /admin/v1/webhook_endpoints/{id}/rotate_secret`
pub fn rotate_secret_endpoint() -> Endpoint {
    Op::post(
        "/admin/v1/webhook_endpoints/{id}/rotate_secret",
        "rotateWebhookEndpointSecret",
        "A new signing secret (shown this once); the old one signs too for 24 h",
    )
    .param(uuid_param("id", "The endpoint's id."))
    .ok(
        200,
        "The endpoint with its new secret",
        Content::Json("WebhookEndpointWithSecret"),
    )
    .errors(&[400, 404])
    .to(rotate_secret)
}

pub async fn rotate_secret(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "id")?;
    let pid = a.project.id;
    let (ep, secret) = st
        .engine
        .event_endpoints(pid)
        .rotate(a.actor.clone(), id)
        .await?;
    Ok(ok(WebhookEndpointWithSecret {
        endpoint: WebhookEndpoint::from(&ep),
        secret,
    }))
}

/// `GET /admin/v1/webhook_endpoints/{id}/attempts`
pub fn attempts_endpoint() -> Endpoint {
    Op::get(
        "/admin/v1/webhook_endpoints/{id}/attempts",
        "listWebhookEndpointAttempts",
        "An event endpoint's delivery attempts, newest first",
    )
    .param(uuid_param("id", "The endpoint's id."))
    .paged()
    .ok(200, "A page of attempts", Content::Json("EventAttemptList"))
    .errors(&[404])
    .to(attempts)
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

/// `POST /admin/v1/webhook_endpoints/{id}/replay`
pub fn replay_endpoint() -> Endpoint {
    Op::post(
        "/admin/v1/webhook_endpoints/{id}/replay",
        "replayWebhookEndpoint",
        "Send again the events written since a time",
    )
    .param(uuid_param("id", "The endpoint's id."))
    .body("ReplayInput", true)
    .ok(
        200,
        "How many events were queued",
        Content::Json("ReplayResult"),
    )
    .errors(&[404])
    .to(replay)
}

pub async fn replay(a: Admin, req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "id")?;
    let since = typed::<ReplayInput>(&body.object()?)?.validate()?;
    let pid = a.project.id;
    let queued = st.engine.event_endpoints(pid).replay(id, since).await?;
    Ok(ok(ReplayResult { queued }))
}

/// `GET /admin/v1/notifications/{id}/trace`
pub fn trace_endpoint() -> Endpoint {
    Op::get(
        "/admin/v1/notifications/{id}/trace",
        "getNotificationTrace",
        "Every decision the engine took for a notification, in order",
    )
    .param(uuid_param("id", "The notification's id."))
    .ok(200, "The trace", Content::Json("NotificationTrace"))
    .errors(&[400, 404])
    .to(trace)
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
