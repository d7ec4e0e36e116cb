//! The engine's operations on a project's catalog that carry a rule
//! (`crate::catalog`): a flow's status changes and edits, a channel's
//! deletion and revocation; preference categories and the project's
//! preference defaults. Each reads what the rule needs and applies it
//! under the record's lock in one storage job.

use super::engine::Engine;
use super::ops::{update_channel_audited, update_project_audited};
use crate::audit::{redact, Actor, AuditChange};
use crate::catalog::{self, FlowEdit};
use crate::error::Error;
use crate::error::Result;
use crate::model::{Category, Channel, Flow, FlowStatus, Preferences, Timestamp};
use crate::rules::audit::record;
use crate::storage::ProjectRef;
use crate::storage::Storage;
use std::collections::BTreeMap;
use uuid::Uuid;

impl Engine {
    /// Moves a flow to `to` (`catalog::set_status`), checking its channels
    /// as they are in the same job; an active commercial flow needs the
    /// server's public URL (`catalog::commercial_sendable`).
    /// `flow.activated`, `flow.archived` or `flow.deactivated` (back to
    /// draft) in the audit log.
    pub async fn set_flow_status(
        &self, project: Uuid, actor: Actor, id: Uuid, to: FlowStatus,
    ) -> Result<Flow> {
        let public_url = self.public_url_given();
        let action = match to {
            FlowStatus::Active => "flow.activated",
            FlowStatus::Archived => "flow.archived",
            FlowStatus::Draft => "flow.deactivated",
        };
        self.run(move |s| {
            let channels = s.all_channels(&project)?;
            update_flow_audited(s, &project, &actor, action, &id, move |f| {
                catalog::set_status(f, to, &channels, Timestamp::now())?;
                Ok(catalog::commercial_sendable(f, public_url)?)
            })
        })
        .await
    }

    /// Edits a flow (`catalog::edit`): an archived flow no longer changes,
    /// and an active one becomes commercial only with the server's public
    /// URL (`catalog::commercial_sendable`).
    /// `flow.updated` in the audit log.
    pub async fn edit_flow(
        &self, project: Uuid, actor: Actor, id: Uuid, edit: FlowEdit,
    ) -> Result<Flow> {
        let public_url = self.public_url_given();
        self.run(move |s| {
            update_flow_audited(s, &project, &actor, "flow.updated", &id, move |f| {
                catalog::edit(f, edit, Timestamp::now())?;
                Ok(catalog::commercial_sendable(f, public_url)?)
            })
        })
        .await
    }

    /// Deletes a channel unless it is the built-in one or an active flow
    /// sends through it (`catalog::may_delete`); 404 when there is none.
    /// `channel.deleted` in the audit log.
    pub async fn delete_channel(&self, project: Uuid, actor: Actor, id: Uuid) -> Result<()> {
        self.run(move |s| {
            let c = s
                .channel(&project, &id)?
                .ok_or_else(|| crate::error::Error::not_found("channel", id))?;
            catalog::may_delete(&c, &s.live_flows(&project)?)?;
            s.delete_channel(&project, &id)?;
            let change = AuditChange::new("channel.deleted", id)
                .key(&c.name)
                .before(redact::channel(&c));
            record(s, &project, &actor, change)
        })
        .await
    }

    /// Revokes a channel's provider access (`catalog::revoke`);
    /// `channel.revoked` in the audit log.
    pub async fn revoke_channel(&self, project: Uuid, actor: Actor, id: Uuid) -> Result<Channel> {
        self.run(move |s| {
            update_channel_audited(s, &project, &actor, "channel.revoked", &id, |c| {
                Ok(catalog::revoke(c)?)
            })
        })
        .await
    }
}

/// `FlowRepo::update_flow` with its audit entry `action` (the flow before,
/// as `f` found it under the lock, and after).
fn update_flow_audited(
    s: &dyn Storage, project: &Uuid, actor: &Actor, action: &'static str, id: &Uuid,
    f: impl FnOnce(&mut Flow) -> Result<()> + Send,
) -> Result<Flow> {
    let mut before = None;
    let flow = s.update_flow(
        project,
        id,
        Box::new(|fl| {
            before = Some(redact::flow(fl));
            f(fl)
        }),
    )?;
    let mut change = AuditChange::new(action, id)
        .key(&flow.handle)
        .after(redact::flow(&flow));
    if let Some(b) = before {
        change = change.before(b);
    }
    record(s, project, actor, change)?;
    Ok(flow)
}

/// What a preferences answer is made of: the user's settings (none for the
/// project's defaults themselves), the project's defaults and categories,
/// and its flows that are not archived.
pub struct PreferenceSetting {
    pub user: Preferences,
    pub defaults: Preferences,
    pub categories: BTreeMap<String, Category>,
    pub flows: Vec<Flow>,
}

impl Engine {
    /// Declares or renames a preference category (`catalog::put_category`):
    /// the category, and whether it is new.
    /// `project.updated` in the audit log (categories are settings).
    pub async fn put_category(
        &self, project: Uuid, actor: Actor, handle: String, name: String,
        description: Option<String>,
    ) -> Result<(Category, bool)> {
        self.run(move |s| {
            let mut outcome = Ok(false);
            let p = update_project_audited(
                s,
                &project,
                &actor,
                "project.updated",
                Box::new(|p| {
                    outcome = catalog::put_category(p, &handle, name, description, Timestamp::now())
                }),
            )?;
            let created = outcome?;
            let c = p.categories.get(&handle).cloned();
            Ok((
                c.ok_or_else(|| Error::internal("a category put was lost"))?,
                created,
            ))
        })
        .await
    }

    /// Deletes a category no live flow names (`catalog::may_delete_category`);
    /// 404 when there is none.
    /// `project.updated` in the audit log.
    pub async fn delete_category(&self, project: Uuid, actor: Actor, handle: String) -> Result<()> {
        self.run(move |s| {
            catalog::may_delete_category(&handle, &s.live_flows(&project)?)?;
            let mut found = false;
            update_project_audited(
                s,
                &project,
                &actor,
                "project.updated",
                Box::new(|p| found = catalog::delete_category(p, &handle)),
            )?;
            if !found {
                return Err(Error::not_found("category", &handle));
            }
            Ok(())
        })
        .await
    }

    /// The project's categories, by handle.
    pub async fn categories(&self, project: Uuid) -> Result<BTreeMap<String, Category>> {
        self.run(move |s| {
            let p = s.find_project(ProjectRef::Id(&project))?;
            Ok(p.map(|p| p.categories).unwrap_or_default())
        })
        .await
    }

    /// Merges `patch` into the project's preference defaults; the defaults
    /// after it.
    /// `project.updated` in the audit log.
    pub async fn update_preference_defaults(
        &self, project: Uuid, actor: Actor, patch: Preferences,
    ) -> Result<Preferences> {
        self.run(move |s| {
            update_project_audited(
                s,
                &project,
                &actor,
                "project.updated",
                Box::new(move |p| p.preference_defaults.merge(&patch)),
            )
            .map(|p| p.preference_defaults)
        })
        .await
    }

    /// What a preferences answer shows: of `user`, or of the project's
    /// defaults alone when `None`.
    pub async fn preference_setting(
        &self, project: Uuid, user: Option<Uuid>,
    ) -> Result<PreferenceSetting> {
        self.run(move |s| {
            let p = s
                .find_project(ProjectRef::Id(&project))?
                .ok_or_else(|| Error::not_found("project", project))?;
            Ok(PreferenceSetting {
                user: match user {
                    Some(u) => s.preferences(&project, &u)?,
                    None => Preferences::default(),
                },
                defaults: p.preference_defaults,
                categories: p.categories,
                flows: s.live_flows(&project)?,
            })
        })
        .await
    }
}

impl Engine {
    /// Renders each template source once against its limits, on the
    /// blocking pool (a template that is over them is CPU work the HTTP
    /// workers must not do): the fields whose template failed, with why.
    pub async fn probe_templates(
        &self, probes: Vec<(String, String)>,
    ) -> Result<Vec<(String, String)>> {
        let limits = self.template_limits();
        self.run(move |_| {
            Ok(probes
                .into_iter()
                .filter_map(|(field, src)| {
                    crate::render::probe(&src, &limits)
                        .err()
                        .map(|e| (field, e))
                })
                .collect())
        })
        .await
    }
}
