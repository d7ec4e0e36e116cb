//! One-click unsubscribe (RFC 8058): what a link of a commercial flow's
//! email names (`Engine::unsubscribe_target`) and the change using it makes
//! (`Engine::unsubscribe_by_link`): that flow's email off in the user's own
//! preferences, through the same update as a preferences PUT, so the
//! change's events and the cluster's caches follow as they do for it.

use super::engine::Engine;
use crate::error::Result;
use crate::model::{Flow, Project, Timestamp, User};
use crate::rules::unsubscribe_link as link;

/// What a good unsubscribe token names, as stored now.
#[derive(Debug, Clone)]
pub struct UnsubscribeTarget {
    pub project: Project,
    pub user: User,
    pub flow: Flow,
}

impl Engine {
    /// What `token` names: `None` for a token that is forged, altered,
    /// expired or of another server, and for one whose project, user or
    /// flow is gone (a caller answers all alike). The signature is checked
    /// before anything is looked up; links expire on the real clock.
    pub async fn unsubscribe_target(&self, token: String) -> Result<Option<UnsubscribeTarget>> {
        let now = Timestamp::now().millis().div_euclid(1000);
        let Ok(l) = link::verify(self.cursor_key(), &token, now) else {
            return Ok(None);
        };
        self.run(move |s| {
            let Some(project) = s.project(&l.project)? else {
                return Ok(None);
            };
            let Some(user) = s.user(&l.project, &l.user)? else {
                return Ok(None);
            };
            let Some(flow) = s.flow(&l.project, &l.flow)? else {
                return Ok(None);
            };
            Ok(Some(UnsubscribeTarget {
                project,
                user,
                flow,
            }))
        })
        .await
    }

    /// Turns the target flow's email off for its user
    /// (`rules::unsubscribe_link::patch`); idempotent: a second use sets
    /// what is set.
    pub async fn unsubscribe_by_link(&self, t: &UnsubscribeTarget) -> Result<()> {
        let patch = link::patch(&t.flow.handle);
        self.update_preferences(t.project.id, t.user.clone(), patch)
            .await?;
        Ok(())
    }
}
