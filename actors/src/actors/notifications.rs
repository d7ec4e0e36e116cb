//! The engine's door to what a project sent: notifications (each as a whole,
//! with its run's data, its actor and recipient and its deliveries),
//! deliveries and runs (`engine.notifications(project)`). The rules of the
//! read side live here: a recipient or flow filter that names nothing gives
//! an empty list (as an unknown id does), and a notification removed between
//! the page and its deliveries (retention, erasure) is gone rather than shown
//! without them.

use super::engine::Engine;
use crate::error::{Error, Result};
use crate::model::{Delivery, FlowRun, Notification, Timestamp, User};
use crate::storage::{DeliveryFilter, NotificationFilter, Page, PageReq, Storage};
use crate::views::NotificationView;
use serde_json::Value;
use std::collections::HashMap;
use uuid::Uuid;

/// What a notification list is filtered by; the recipient by external id
/// and the flow by id or handle, as the paths name them.
#[derive(Debug, Clone, Default)]
pub struct NotificationQuery {
    pub processed: Option<bool>,
    pub topic: Option<String>,
    pub created_after: Option<Timestamp>,
    pub created_before: Option<Timestamp>,
    pub flow: Option<String>,
    pub flow_run_id: Option<Uuid>,
    pub recipient: Option<String>,
}

/// What a delivery list is filtered by; the recipient by external id.
#[derive(Debug, Clone, Default)]
pub struct DeliveryQuery {
    pub filter: DeliveryFilter,
    pub recipient: Option<String>,
}

/// One project's notifications, deliveries and runs
/// (`Engine::notifications`).
pub struct Notifications<'a> {
    engine: &'a Engine,
    project: Uuid,
}

impl Engine {
    pub fn notifications(&self, project: Uuid) -> Notifications<'_> {
        Notifications {
            engine: self,
            project,
        }
    }
}

/// The id of a user named by external id: nil (matching nothing) for none.
fn user_id(s: &dyn Storage, project: &Uuid, ext: &str) -> Result<Uuid> {
    Ok(s.user_by_ext(project, ext)?.map_or(Uuid::nil(), |u| u.id))
}

impl Notifications<'_> {
    /// A page of notifications, each as a whole (`NotificationView`).
    pub async fn list(
        &self, q: NotificationQuery, req: PageReq,
    ) -> Result<(Page<Notification>, Vec<NotificationView>)> {
        let pid = self.project;
        self.engine
            .run(move |s| {
                let recipient = match &q.recipient {
                    Some(ext) => Some(user_id(s, &pid, ext)?),
                    None => None,
                };
                let flow_id = match &q.flow {
                    Some(key) => Some(s.flow_filter_id(&pid, key)?),
                    None => None,
                };
                let f = NotificationFilter {
                    status: q.processed,
                    topic: q.topic,
                    created_after: q.created_after,
                    created_before: q.created_before,
                    flow_id,
                    flow_run_id: q.flow_run_id,
                    recipient,
                };
                let page = s.list_notifications(&pid, &f, &req)?;
                let mut seen = Seen::default();
                let mut items = Vec::with_capacity(page.items.len());
                for n in &page.items {
                    let v = view(s, &pid, n, &mut seen)?;
                    if v.deliveries.is_empty() && s.notification(&pid, &n.id)?.is_none() {
                        continue;
                    }
                    items.push(v);
                }
                Ok((page, items))
            })
            .await
    }

    /// One notification as a whole; 404 when there is none (or it went
    /// while it was read).
    pub async fn get(&self, id: Uuid) -> Result<NotificationView> {
        let pid = self.project;
        self.engine
            .run(move |s| {
                let n = s
                    .notification(&pid, &id)?
                    .ok_or_else(|| Error::not_found("notification", id))?;
                let v = view(s, &pid, &n, &mut Seen::default())?;
                if v.deliveries.is_empty() && s.notification(&pid, &id)?.is_none() {
                    return Err(Error::not_found("notification", id));
                }
                Ok(v)
            })
            .await
    }

    /// A page of deliveries.
    pub async fn deliveries(&self, q: DeliveryQuery, req: PageReq) -> Result<Page<Delivery>> {
        let pid = self.project;
        self.engine
            .run(move |s| {
                let mut f = q.filter;
                if let Some(ext) = &q.recipient {
                    f.recipient = Some(user_id(s, &pid, ext)?);
                }
                s.list_deliveries(&pid, &f, &req)
            })
            .await
    }

    /// One delivery; 404 when there is none.
    pub async fn delivery(&self, id: Uuid) -> Result<Delivery> {
        let pid = self.project;
        self.engine
            .run(move |s| s.delivery(&pid, &id))
            .await?
            .ok_or_else(|| Error::not_found("delivery", id))
    }

    /// One run; 404 when there is none.
    pub async fn flow_run(&self, id: Uuid) -> Result<FlowRun> {
        let pid = self.project;
        self.engine
            .run(move |s| s.flow_run(&pid, &id))
            .await?
            .ok_or_else(|| Error::not_found("flow_run", id))
    }
}

/// The users and run data a page has read already.
#[derive(Default)]
struct Seen {
    users: HashMap<Uuid, Option<User>>,
    runs: HashMap<Uuid, Value>,
}

/// A whole notification: run data, actor and recipient users, deliveries.
fn view(
    s: &dyn Storage, project: &Uuid, n: &Notification, seen: &mut Seen,
) -> Result<NotificationView> {
    let mut user = |id: Option<Uuid>| -> Result<Option<User>> {
        let Some(id) = id else { return Ok(None) };
        if let Some(u) = seen.users.get(&id) {
            return Ok(u.clone());
        }
        let u = s.user(project, &id)?;
        seen.users.insert(id, u.clone());
        Ok(u)
    };
    let actor = user(n.actor_id)?;
    let recipient = user(Some(n.recipient_id))?;
    let data = match seen.runs.get(&n.flow_run_id) {
        Some(d) => d.clone(),
        None => {
            let d = s
                .flow_run(project, &n.flow_run_id)?
                .map(|r| r.data)
                .unwrap_or(Value::Null);
            seen.runs.insert(n.flow_run_id, d.clone());
            d
        }
    };
    let deliveries = s
        .notification_deliveries(project, &n.id)?
        .iter()
        .map(|d| d.view())
        .collect();
    Ok(NotificationView::new(n, actor, recipient, data, deliveries))
}
