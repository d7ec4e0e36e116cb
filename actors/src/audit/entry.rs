//! An audit log entry (`AuditEntry`, as stored and listed) and the change it
//! is made from (`AuditChange`, what an engine method says it did). Its
//! snapshots are made without secrets (`redact`), so none reaches storage.

use super::redact::redact;
use super::Actor;
use crate::model::{new_id, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

/// One change of a project's configuration, as the log keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// UUIDv7: the log's order.
    pub id: Uuid,
    pub at: Timestamp,
    pub actor: Actor,
    /// `<resource type>.<verb>`: `flow.created`, `channel.revoked`,
    /// `key.rotated`, ….
    pub action: String,
    /// The part of `action` before its dot: `flow`, `channel`, `topic`,
    /// `webhook_endpoint`, `project`, `clock`, `key`, `signing_key`,
    /// `link_secret`, `member`.
    pub resource_type: String,
    /// The resource's id (the project's for settings, clock and keys).
    pub resource_id: String,
    /// Its handle, key or name, when it has one.
    pub resource_key: Option<String>,
    /// The resource before the change (`None`: it did not exist).
    pub before: Option<Value>,
    /// The resource after the change (`None`: it no longer exists).
    pub after: Option<Value>,
}

impl AuditEntry {
    /// How the log names who made the change (`Actor::who`).
    pub fn who(&self) -> &str {
        self.actor.who()
    }
}

/// What a change says about itself; `entry` makes the log's record of it.
#[derive(Clone, Debug, PartialEq)]
pub struct AuditChange {
    pub action: String,
    pub resource_id: String,
    pub resource_key: Option<String>,
    pub before: Option<Value>,
    pub after: Option<Value>,
}

impl AuditChange {
    /// A change `action` (`flow.created`) of the resource `id`.
    pub fn new(action: &str, id: impl ToString) -> Self {
        AuditChange {
            action: action.to_string(),
            resource_id: id.to_string(),
            resource_key: None,
            before: None,
            after: None,
        }
    }

    pub fn key(mut self, key: impl ToString) -> Self {
        self.resource_key = Some(key.to_string());
        self
    }

    pub fn before(mut self, v: Value) -> Self {
        self.before = Some(v);
        self
    }

    pub fn after(mut self, v: Value) -> Self {
        self.after = Some(v);
        self
    }

    /// The resource type: the action up to its first dot.
    pub fn resource_type(&self) -> &str {
        self.action.split('.').next().unwrap_or_default()
    }

    /// The change with its snapshots passed through `redact::redact`: for a
    /// change whose snapshots the engine did not make itself (a console
    /// member's, `console::audit_member_change`). The engine's own snapshots
    /// (`redact::channel`, `redact::project`, …) hold no secret by
    /// construction, and are stored as made: a name-based pass over them
    /// would mask a translation whose key says `password`.
    pub fn redacted(mut self) -> Self {
        self.before = self.before.map(redact);
        self.after = self.after.map(redact);
        self
    }

    /// The entry `actor` made at `at`; `None` when the change changed
    /// nothing (before and after alike, both present): a settings update
    /// that set what was already set leaves no entry.
    pub fn entry(self, actor: &Actor, at: Timestamp) -> Option<AuditEntry> {
        let resource_type = self.resource_type().to_string();
        let (before, after) = (self.before, self.after);
        if before.is_some() && before == after {
            return None;
        }
        let (id, _) = new_id();
        Some(AuditEntry {
            id,
            at,
            actor: actor.clone(),
            resource_type,
            action: self.action,
            resource_id: self.resource_id,
            resource_key: self.resource_key,
            before,
            after,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_entry_names_its_resource_type_and_actor() {
        let e = AuditChange::new("webhook_endpoint.secret_rotated", "x")
            .before(json!({"url": "a"}))
            .after(json!({"url": "b"}))
            .entry(&Actor::Api, Timestamp::now())
            .expect("a change");
        assert_eq!(e.resource_type, "webhook_endpoint");
        assert_eq!(e.who(), "api");
        assert_eq!(e.id.get_version_num(), 7);
    }

    #[test]
    fn a_change_that_changed_nothing_leaves_no_entry() {
        let same = json!({"name": "n"});
        let c = AuditChange::new("project.updated", "p")
            .before(same.clone())
            .after(same);
        assert!(c.entry(&Actor::Operator, Timestamp::now()).is_none());
        let deleted = AuditChange::new("topic.deleted", "t").before(json!({}));
        assert!(deleted.entry(&Actor::Api, Timestamp::now()).is_some());
    }

    #[test]
    fn a_redacted_change_holds_no_secret() {
        let e = AuditChange::new("member.created", "m")
            .after(json!({"email": "a@b.c", "password_hash": "xyz"}))
            .redacted()
            .entry(&Actor::Operator, Timestamp::now())
            .expect("a change");
        assert_eq!(e.after, Some(json!({"email": "a@b.c"})));
    }
}
