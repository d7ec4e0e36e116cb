//! Admin API notifications, deliveries and flow runs (read side).

use super::endpoint::{Endpoint, Serve};
use super::ok;
use crate::auth::Admin;
use crate::bodies::notifications::FlowRun;
use crate::errors::ApiResult;
use crate::extract::{path_uuid, Query};
use crate::openapi::{delivery_filters, notification_filters, uuid_param, Content, Op};
use crate::pagination;
use crate::state::State;
use actix_web::{HttpRequest, HttpResponse};
use herald_engine::actors::{DeliveryQuery, NotificationQuery};
use herald_engine::model::{ChannelType, DeliveryStatus};
use herald_engine::storage::DeliveryFilter;

/// `GET /admin/v1/notifications`
pub fn list_endpoint() -> Endpoint {
    Op::get(
        "/admin/v1/notifications",
        "listNotifications",
        "List notifications",
    )
    .params(notification_filters())
    .paged()
    .ok(
        200,
        "A page of notifications",
        Content::Json("NotificationList"),
    )
    .to(list)
}

/// `GET /admin/notifications`
pub fn list_alias_endpoint() -> Endpoint {
    Op::get(
        "/admin/notifications",
        "listNotificationsAlias",
        "List notifications (alias of /admin/v1/notifications)",
    )
    .params(notification_filters())
    .paged()
    .ok(
        200,
        "A page of notifications",
        Content::Json("NotificationList"),
    )
    .to(list)
}

pub async fn list(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let q = Query::of(&req);
    let status = q.choice("status", |s| match s {
        "pending" => Some(false),
        "processed" => Some(true),
        _ => None,
    })?;
    let created_after = q.timestamp("created_after")?;
    let created_before = q.timestamp("created_before")?;
    // a flow id or handle, as in the paths
    let flow_key = q.get("flow_id").map(str::to_string);
    let flow_run_id = q.uuid("flow_run_id")?;
    let recipient_ext = q.get("recipient").map(str::to_string);
    let names = [
        "status",
        "topic",
        "created_after",
        "created_before",
        "flow_id",
        "flow_run_id",
        "recipient",
    ];
    let filters: Vec<(&str, Option<String>)> = names
        .iter()
        .map(|n| (*n, q.get(n).map(str::to_string)))
        .collect();
    let paging = pagination::parse(
        &q,
        st.cursor_key(),
        &a.project.id,
        "notifications",
        &filters,
    )?;
    let query = NotificationQuery {
        processed: status,
        topic: q.get("topic").map(str::to_string),
        created_after,
        created_before,
        flow: flow_key,
        flow_run_id,
        recipient: recipient_ext,
    };
    let (page, items) = st
        .engine
        .notifications(a.project.id)
        .list(query, paging.req.clone())
        .await?;
    Ok(ok(paging.respond(&page, items)))
}

/// `GET /admin/v1/notifications/{id}`
pub fn get_endpoint() -> Endpoint {
    Op::get(
        "/admin/v1/notifications/{id}",
        "getNotification",
        "A notification",
    )
    .param(uuid_param("id", "The notification's id."))
    .ok(200, "The notification", Content::Json("Notification"))
    .errors(&[400, 404])
    .to(get)
}

pub async fn get(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "id")?;
    let pid = a.project.id;
    let v = st.engine.notifications(pid).get(id).await?;
    Ok(ok(v))
}

/// `GET /admin/v1/deliveries`
pub fn deliveries_endpoint() -> Endpoint {
    Op::get("/admin/v1/deliveries", "listDeliveries", "List deliveries")
        .params(delivery_filters())
        .paged()
        .ok(200, "A page of deliveries", Content::Json("DeliveryList"))
        .to(deliveries)
}

pub async fn deliveries(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let q = Query::of(&req);
    let status = q.choice("status", DeliveryStatus::parse)?;
    let channel_type = q.choice("channel_type", ChannelType::parse)?;
    let channel_id = q.uuid("channel_id")?;
    let notification_id = q.uuid("notification_id")?;
    let created_after = q.timestamp("created_after")?;
    let created_before = q.timestamp("created_before")?;
    let recipient_ext = q.get("recipient").map(str::to_string);
    let names = [
        "status",
        "channel_type",
        "channel_id",
        "notification_id",
        "recipient",
        "created_after",
        "created_before",
    ];
    let filters: Vec<(&str, Option<String>)> = names
        .iter()
        .map(|n| (*n, q.get(n).map(str::to_string)))
        .collect();
    let paging = pagination::parse(&q, st.cursor_key(), &a.project.id, "deliveries", &filters)?;
    let query = DeliveryQuery {
        filter: DeliveryFilter {
            status,
            channel_type,
            channel_id,
            notification_id,
            recipient: None,
            created_after,
            created_before,
        },
        recipient: recipient_ext,
    };
    let page = st
        .engine
        .notifications(a.project.id)
        .deliveries(query, paging.req.clone())
        .await?;
    Ok(ok(paging.respond(
        &page,
        page.items.iter().map(|d| d.view()).collect(),
    )))
}

/// `GET /admin/v1/deliveries/{id}`
pub fn delivery_endpoint() -> Endpoint {
    Op::get("/admin/v1/deliveries/{id}", "getDelivery", "A delivery")
        .param(uuid_param("id", "The delivery's id."))
        .ok(200, "The delivery", Content::Json("Delivery"))
        .errors(&[400, 404])
        .to(delivery)
}

pub async fn delivery(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "id")?;
    let pid = a.project.id;
    let d = st.engine.notifications(pid).delivery(id).await?;
    Ok(ok(d.view()))
}

/// `GET /admin/v1/flow_runs/{id}`
pub fn flow_run_endpoint() -> Endpoint {
    Op::get("/admin/v1/flow_runs/{id}", "getFlowRun", "A flow run")
        .param(uuid_param("id", "The flow run's id."))
        .ok(200, "The flow run", Content::Json("FlowRun"))
        .errors(&[400, 404])
        .to(flow_run)
}

pub async fn flow_run(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let id = path_uuid(&req, "id")?;
    let pid = a.project.id;
    let r = st.engine.notifications(pid).flow_run(id).await?;
    Ok(ok(FlowRun::at(&r, st.engine.project_now(&pid))))
}
