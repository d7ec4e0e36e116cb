//! The body of a project's audit log (`GET /admin/v1/audit_log`): one entry
//! as the API shows it, made from the engine's record
//! (`herald_engine::audit::AuditEntry`), whose snapshots are redacted when
//! recorded.

use herald_engine::audit;
use herald_engine::model::Timestamp;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

/// One change of the project's configuration.
#[derive(Serialize, ToSchema)]
#[schema(example = json!({
    "action": "channel.updated",
    "after": {"name": "SMS", "config": {"auth_token": "********", "from": "+15550001"}},
    "at": "2026-01-01T00:00:00.000Z",
    "before": {"name": "Twilio", "config": {"auth_token": "********", "from": "+15550001"}},
    "id": "0190a8b8-0000-7000-8000-000000000000",
    "resource_id": "0190a8b8-0000-7000-8000-000000000001",
    "resource_key": "SMS",
    "resource_type": "channel",
    "who": "api"
}))]
pub struct AuditEntry {
    /// `<resource type>.<verb>`: `flow.created`, `flow.updated`,
    /// `flow.activated`, `flow.deactivated`, `flow.archived`,
    /// `channel.created|updated|revoked|deleted`,
    /// `topic.created|updated|deleted`,
    /// `webhook_endpoint.created|updated|deleted|secret_rotated`,
    /// `partial.*`, `layout.*`, `translation.*` (`created|updated|deleted`),
    /// `project.updated`, `clock.advanced`, `key.rotated`,
    /// `signing_key.put|generated|deleted`, `link_secret.rotated`,
    /// `member.*`.
    pub action: String,
    /// The resource after the change; null when it was deleted. Secrets
    /// read `********` or are left out.
    #[schema(value_type = Option<Object>)]
    pub after: Option<Value>,
    /// When the change was made.
    #[schema(value_type = DateTime<Utc>)]
    pub at: Timestamp,
    /// The resource before the change; null when it was created.
    #[schema(value_type = Option<Object>)]
    pub before: Option<Value>,
    pub id: Uuid,
    /// The resource's id (the project's for settings, the clock and keys).
    pub resource_id: String,
    /// Its handle, key, name or URL, when it has one.
    pub resource_key: Option<String>,
    /// The part of `action` before its dot.
    pub resource_type: String,
    /// Who made the change: a console member's email, `api` (the Admin
    /// API's secret key) or `operator`.
    pub who: String,
}

impl From<&audit::AuditEntry> for AuditEntry {
    fn from(e: &audit::AuditEntry) -> Self {
        AuditEntry {
            action: e.action.clone(),
            after: e.after.clone(),
            at: e.at,
            before: e.before.clone(),
            id: e.id,
            resource_id: e.resource_id.clone(),
            resource_key: e.resource_key.clone(),
            resource_type: e.resource_type.clone(),
            who: e.who().to_string(),
        }
    }
}
