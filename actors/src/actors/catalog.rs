//! The engine's operations on a project's catalog that carry a rule
//! (`crate::catalog`): a flow's status changes and edits, a channel's
//! deletion and revocation. Each reads what the rule needs and applies it
//! under the record's lock in one storage job.

use super::engine::Engine;
use crate::catalog::{self, FlowEdit};
use crate::error::Result;
use crate::model::{Channel, Flow, FlowStatus, Timestamp};
use uuid::Uuid;

impl Engine {
    /// Moves a flow to `to` (`catalog::set_status`), checking its channels
    /// as they are in the same job.
    pub async fn set_flow_status(&self, project: Uuid, id: Uuid, to: FlowStatus) -> Result<Flow> {
        self.run(move |s| {
            let channels = s.all_channels(&project)?;
            s.update_flow(
                &project,
                &id,
                Box::new(move |f| Ok(catalog::set_status(f, to, &channels, Timestamp::now())?)),
            )
        })
        .await
    }

    /// Edits a flow (`catalog::edit`): an archived flow no longer changes.
    pub async fn edit_flow(&self, project: Uuid, id: Uuid, edit: FlowEdit) -> Result<Flow> {
        self.run(move |s| {
            s.update_flow(
                &project,
                &id,
                Box::new(move |f| Ok(catalog::edit(f, edit, Timestamp::now())?)),
            )
        })
        .await
    }

    /// Deletes a channel unless it is the built-in one or an active flow
    /// sends through it (`catalog::may_delete`); 404 when there is none.
    pub async fn delete_channel(&self, project: Uuid, id: Uuid) -> Result<()> {
        self.run(move |s| {
            let c = s
                .channel(&project, &id)?
                .ok_or_else(|| crate::error::Error::not_found("channel", id))?;
            catalog::may_delete(&c, &s.live_flows(&project)?)?;
            s.delete_channel(&project, &id)
        })
        .await
    }

    /// Revokes a channel's provider access (`catalog::revoke`).
    pub async fn revoke_channel(&self, project: Uuid, id: Uuid) -> Result<Channel> {
        self.run(move |s| s.update_channel(&project, &id, Box::new(|c| Ok(catalog::revoke(c)?))))
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
