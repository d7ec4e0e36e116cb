//! Sandbox mode (a project's `sandbox`, or one channel's): a delivery goes
//! through everything a real send does (rendering, storage, the queue, its
//! events and trace) except the provider call. It is then `sent`, and its
//! outcomes say `{"sandbox": true}`, which the views show as `sandbox: true`.
//! So a team can run staging traffic against a real server while nobody
//! receives anything. In-app entries are not sandboxed: the feed is inside
//! the product, not a provider.

use crate::model::{Channel, Delivery, Project};
use crate::storage::Outcome;

/// Whether a delivery through `channel` of `project` calls no provider.
pub fn applies(project: Option<&Project>, channel: &Channel) -> bool {
    channel.sandbox || project.is_some_and(|p| p.sandbox)
}

/// The outcome of a sandboxed attempt: sent, nothing called.
pub fn outcome() -> Outcome {
    Outcome::Sent {
        outcomes: Some(serde_json::json!({"sandbox": true})),
    }
}

impl Delivery {
    /// Whether it was sent in sandbox mode (nothing reached a provider).
    pub fn sandboxed(&self) -> bool {
        self.outcomes
            .as_ref()
            .and_then(|o| o.get("sandbox"))
            .and_then(|v| v.as_bool())
            .unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channel(sandbox: bool) -> Channel {
        let mut c = Channel::builtin_in_app(uuid::Uuid::nil(), crate::model::Timestamp::now());
        c.sandbox = sandbox;
        c
    }

    #[test]
    fn the_project_or_the_channel_puts_a_send_in_the_sandbox() {
        let now = crate::model::Timestamp::now();
        let mut p = Project::new(uuid::Uuid::nil(), "p", "pk", vec![], now);
        assert!(!applies(Some(&p), &channel(false)));
        assert!(applies(Some(&p), &channel(true)));
        p.sandbox = true;
        assert!(applies(Some(&p), &channel(false)));
        assert!(!applies(None, &channel(false)));
    }
}
