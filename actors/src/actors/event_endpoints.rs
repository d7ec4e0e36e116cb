//! The engine's door to a project's event endpoints (outbound webhooks of
//! Herald's own events) and to a notification's decision trace:
//! `engine.event_endpoints(project)` gives the operations of one project's
//! endpoints, each one storage job on the blocking pool. The rules live
//! here: an endpoint enabled again forgets why it was disabled; a rotated
//! secret keeps signing for `events::SECRET_GRACE`.

use super::engine::Engine;
use crate::audit::{redact, Actor, AuditChange};
use crate::error::{Error, Result};
use crate::events::{EventAttempt, EventType, WebhookEndpoint, SECRET_GRACE};
use crate::model::Timestamp;
use crate::rules::audit::record;
use crate::storage::{EndpointWrite, Page, PageReq};
use crate::trace::TraceEntry;
use uuid::Uuid;

/// A checked change of an endpoint: `None` keeps a field.
#[derive(Debug, Clone, Default)]
pub struct EndpointChange {
    pub url: Option<String>,
    /// `Some(None)`: every event type.
    pub event_types: Option<Option<Vec<EventType>>>,
    pub enabled: Option<bool>,
}

impl EndpointChange {
    /// Applies the change; enabling an endpoint clears the reason it was
    /// disabled for (the event sender disables one that keeps failing).
    pub fn apply(self, e: &mut WebhookEndpoint) {
        if let Some(u) = self.url {
            e.url = u;
        }
        if let Some(t) = self.event_types {
            e.event_types = t;
        }
        if let Some(en) = self.enabled {
            if en {
                e.disabled_reason = None;
            }
            e.enabled = en;
        }
    }
}

/// One project's event endpoints (`Engine::event_endpoints`).
pub struct EventEndpoints<'a> {
    engine: &'a Engine,
    project: Uuid,
}

impl Engine {
    /// The event endpoints of `project`.
    pub fn event_endpoints(&self, project: Uuid) -> EventEndpoints<'_> {
        EventEndpoints {
            engine: self,
            project,
        }
    }

    /// The decision trace of a notification, in order; 404 when the
    /// project has no such notification.
    pub async fn notification_trace(&self, project: Uuid, id: Uuid) -> Result<Vec<TraceEntry>> {
        self.run(move |s| {
            if s.notification(&project, &id)?.is_none() {
                return Err(Error::not_found("notification", id));
            }
            s.notification_trace(&project, &id)
        })
        .await
    }
}

fn not_found(id: Uuid) -> Error {
    Error::not_found("webhook_endpoint", id)
}

impl EventEndpoints<'_> {
    /// Stores a new endpoint with a new signing secret, returned this once
    /// (`webhook_endpoint.created` in the audit log, without the secret).
    pub async fn create(
        &self, actor: Actor, ep: WebhookEndpoint,
    ) -> Result<(WebhookEndpoint, String)> {
        let p = self.project;
        self.engine
            .run(move |s| {
                let (ep, secret) = s.create_event_endpoint(&p, ep)?;
                let change = AuditChange::new("webhook_endpoint.created", ep.id)
                    .key(&ep.url)
                    .after(redact::endpoint(&ep));
                record(s, &p, &actor, change)?;
                Ok((ep, secret))
            })
            .await
    }

    pub async fn list(&self, req: PageReq) -> Result<Page<WebhookEndpoint>> {
        let p = self.project;
        self.engine
            .run(move |s| s.list_event_endpoints(&p, &req))
            .await
    }

    pub async fn get(&self, id: Uuid) -> Result<WebhookEndpoint> {
        let p = self.project;
        self.engine
            .run(move |s| s.event_endpoint(&p, &id))
            .await?
            .ok_or_else(|| not_found(id))
    }

    /// `webhook_endpoint.updated` in the audit log.
    pub async fn update(
        &self, actor: Actor, id: Uuid, change: EndpointChange,
    ) -> Result<WebhookEndpoint> {
        let p = self.project;
        self.engine
            .run(move |s| {
                let mut before = None;
                let ep = s.put_event_endpoint(
                    &p,
                    EndpointWrite::Change {
                        id: &id,
                        f: Box::new(|e| {
                            before = Some(redact::endpoint(e));
                            change.apply(e);
                            Ok(())
                        }),
                    },
                )?;
                let mut entry = AuditChange::new("webhook_endpoint.updated", id)
                    .key(&ep.url)
                    .after(redact::endpoint(&ep));
                if let Some(b) = before {
                    entry = entry.before(b);
                }
                record(s, &p, &actor, entry)?;
                Ok(ep)
            })
            .await
    }

    /// Deletes an endpoint with its outbox and attempts
    /// (`webhook_endpoint.deleted` in the audit log).
    pub async fn delete(&self, actor: Actor, id: Uuid) -> Result<()> {
        let p = self.project;
        self.engine
            .run(move |s| {
                let before = s.event_endpoint(&p, &id)?;
                s.delete_event_endpoint(&p, &id)?;
                if let Some(ep) = before {
                    let change = AuditChange::new("webhook_endpoint.deleted", id)
                        .key(&ep.url)
                        .before(redact::endpoint(&ep));
                    record(s, &p, &actor, change)?;
                }
                Ok(())
            })
            .await
    }

    /// A new signing secret (returned once); the previous one keeps
    /// signing for `SECRET_GRACE`, so receivers can switch without a gap.
    /// `webhook_endpoint.secret_rotated` in the audit log (the endpoint
    /// as it is, no secret).
    pub async fn rotate(&self, actor: Actor, id: Uuid) -> Result<(WebhookEndpoint, String)> {
        let p = self.project;
        self.engine
            .run(move |s| {
                let (ep, secret) = s.rotate_event_secret(&p, &id, SECRET_GRACE)?;
                let shown = redact::endpoint(&ep);
                let change = AuditChange::new("webhook_endpoint.secret_rotated", id)
                    .key(&ep.url)
                    .after(shown);
                record(s, &p, &actor, change)?;
                Ok((ep, secret))
            })
            .await
    }

    /// The endpoint's attempt log, newest first.
    pub async fn attempts(&self, id: Uuid, req: PageReq) -> Result<Page<EventAttempt>> {
        let p = self.project;
        self.engine
            .run(move |s| {
                if s.event_endpoint(&p, &id)?.is_none() {
                    return Err(not_found(id));
                }
                s.list_event_attempts(&p, &id, &req)
            })
            .await
    }

    /// Queues again the events since `since` for the endpoint; how many.
    pub async fn replay(&self, id: Uuid, since: Timestamp) -> Result<usize> {
        let p = self.project;
        self.engine
            .run(move |s| s.replay_events(&p, &id, since))
            .await
    }
}
