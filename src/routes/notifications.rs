//! Admin API notifications, deliveries and flow runs (read side).

use super::endpoint::{Endpoint, Serve};
use super::ok;
use crate::auth::Admin;
use crate::bodies::notifications::{FlowRun, Notification};
use crate::errors::ApiResult;
use crate::extract::{path_uuid, Query};
use crate::openapi::{delivery_filters, notification_filters, uuid_param, Content, Op};
use crate::pagination;
use crate::state::State;
use actix_web::{HttpRequest, HttpResponse};
use herald_actors::model::{self, ChannelType, DeliveryStatus, User};
use herald_actors::storage::{DeliveryFilter, NotificationFilter};
use herald_actors::Storage;
use herald_actors::{Error, Result};
use serde_json::Value;
use std::collections::HashMap;
use uuid::Uuid;

/// A whole Notification: run data, actor and recipient users, deliveries
/// (`users` and `runs` keep what a page has looked up already).
fn notification_view(
    s: &dyn Storage,
    project: &Uuid,
    n: &model::Notification,
    users: &mut HashMap<Uuid, Option<User>>,
    runs: &mut HashMap<Uuid, Value>,
) -> Result<Notification> {
    let mut user = |id: Option<Uuid>| -> Result<Option<User>> {
        let Some(id) = id else { return Ok(None) };
        if let Some(u) = users.get(&id) {
            return Ok(u.clone());
        }
        let u = s.user(project, &id)?;
        users.insert(id, u.clone());
        Ok(u)
    };
    let actor = user(n.actor_id)?;
    let recipient = user(Some(n.recipient_id))?;
    let data = match runs.get(&n.flow_run_id) {
        Some(d) => d.clone(),
        None => {
            let d = s
                .flow_run(project, &n.flow_run_id)?
                .map(|r| r.data)
                .unwrap_or(Value::Null);
            runs.insert(n.flow_run_id, d.clone());
            d
        }
    };
    let deliveries = s
        .notification_deliveries(project, &n.id)?
        .iter()
        .map(|d| d.view())
        .collect();
    Ok(Notification::new(n, actor, recipient, data, deliveries))
}

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
    let topic = q.get("topic").map(str::to_string);
    let pid = a.project.id;
    let pr = paging.req.clone();
    let (page, items) = st
        .run(move |s| {
            let recipient = match &recipient_ext {
                Some(ext) => match s.user_by_ext(&pid, ext)? {
                    Some(u) => Some(u.id),
                    None => Some(Uuid::nil()), // unknown user: an empty list
                },
                None => None,
            };
            let flow_id = match &flow_key {
                Some(key) => Some(match Uuid::parse_str(key) {
                    Ok(id) => id,
                    // unknown handle: an empty list, as an unknown id gives
                    Err(_) => s
                        .flow_by_handle(&pid, key)?
                        .map(|f| f.id)
                        .unwrap_or(Uuid::nil()),
                }),
                None => None,
            };
            let f = NotificationFilter {
                status,
                topic,
                created_after,
                created_before,
                flow_id,
                flow_run_id,
                recipient,
            };
            let page = s.list_notifications(&pid, &f, &pr)?;
            let (mut users, mut runs) = (HashMap::new(), HashMap::new());
            let mut items = Vec::with_capacity(page.items.len());
            for n in &page.items {
                let v = notification_view(s, &pid, n, &mut users, &mut runs)?;
                // Its deliveries are read after the page: a notification the
                // retention purge (or an erasure) removed in between is left
                // out rather than shown without them.
                if v.deliveries.is_empty() && s.notification(&pid, &n.id)?.is_none() {
                    continue;
                }
                items.push(v);
            }
            Ok((page, items))
        })
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
    let v = st
        .run(move |s| {
            let n = s
                .notification(&pid, &id)?
                .ok_or_else(|| Error::not_found("notification", id))?;
            let v = notification_view(s, &pid, &n, &mut HashMap::new(), &mut HashMap::new())?;
            // Removed (retention, erasure) between the two reads: gone.
            if v.deliveries.is_empty() && s.notification(&pid, &id)?.is_none() {
                return Err(Error::not_found("notification", id));
            }
            Ok(v)
        })
        .await?;
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
    let pid = a.project.id;
    let pr = paging.req.clone();
    let page = st
        .run(move |s| {
            let recipient = match &recipient_ext {
                Some(ext) => Some(
                    s.user_by_ext(&pid, ext)?
                        .map(|u| u.id)
                        .unwrap_or(Uuid::nil()),
                ),
                None => None,
            };
            let f = DeliveryFilter {
                status,
                channel_type,
                channel_id,
                notification_id,
                recipient,
                created_after,
                created_before,
            };
            s.list_deliveries(&pid, &f, &pr)
        })
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
    let d = st
        .run(move |s| {
            s.delivery(&pid, &id)?
                .ok_or_else(|| Error::not_found("delivery", id))
        })
        .await?;
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
    let r = st
        .run(move |s| {
            s.flow_run(&pid, &id)?
                .ok_or_else(|| Error::not_found("flow_run", id))
        })
        .await?;
    Ok(ok(FlowRun::at(&r, st.engine.project_now(&pid))))
}
