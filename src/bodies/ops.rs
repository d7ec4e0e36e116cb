//! Request bodies of the operator API (`/ops/v1/projects…`, `routes/ops.rs`).
//! Its project response is the engine's `model::OperatorProject` (what
//! `herald project …` prints as well). Not in the OpenAPI document: the
//! operator API is not part of the tenants' contract.

use crate::extract::Given;
use herald_engine::Validator;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// `POST /ops/v1/projects`.
#[derive(Deserialize, Default)]
pub struct NewProject {
    #[serde(default)]
    pub name: Given<String>,
}

impl NewProject {
    /// The name: 1 to 100 characters.
    pub fn validate(&self) -> herald_engine::Result<String> {
        self.name.only_required_text("name", 100)
    }
}

/// `POST /ops/v1/projects/{name}/rotate_secret` and `POST
/// /admin/v1/project/rotate_secret`.
#[derive(Deserialize, Default, utoipa::ToSchema)]
#[schema(example = json!({"grace_seconds": 3600}))]
pub struct RotateSecret {
    /// How long the replaced secret key keeps working, in seconds, so
    /// clients can switch over: 0 refuses it at once; default 86,400 (a
    /// day); at most 2,592,000 (30 days).
    #[serde(default)]
    #[schema(value_type = Option<u64>)]
    pub grace_seconds: Given<u64>,
}

/// The project's new secret key, shown this once (only its hash is kept).
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct RotatedSecret {
    pub secret_key: String,
    /// Until when the replaced key still works (absent: refused already).
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub previous_secret_expires_at: Option<herald_engine::model::Timestamp>,
}

impl RotateSecret {
    /// The grace period of the replaced secret (`default` when absent or null).
    pub fn validate(&self, default: Duration) -> herald_engine::Result<Duration> {
        let mut v = Validator::new();
        let grace = match &self.grace_seconds {
            Given::Absent | Given::Null => Some(default),
            Given::Value(n) => Some(Duration::from_secs(*n)),
            Given::Wrong(_) => {
                v.push(
                    "grace_seconds",
                    "number",
                    "must be a whole number of seconds, 0 or more",
                );
                None
            }
        };
        v.finish()?;
        Ok(grace.unwrap_or(default))
    }
}

/// The operator's project list: no `page` (a server holds few projects).
#[derive(Serialize)]
pub struct Items<T> {
    pub items: Vec<T>,
}

/// `POST /ops/v1/projects/{name}/console_members`.
#[derive(Deserialize, Default)]
pub struct NewConsoleMember {
    #[serde(default)]
    pub email: Given<String>,
    #[serde(default)]
    pub role: Given<String>,
    #[serde(default)]
    pub valid_for_seconds: Given<u64>,
}

impl NewConsoleMember {
    /// The email, the role and how long the link works (24 h by default,
    /// at most that).
    pub fn validate(
        &self,
    ) -> herald_engine::Result<(String, herald_engine::console::Role, Duration)> {
        use herald_engine::console;
        let email = self.email.only_required_text("email", 254)?;
        let role = self.role.only_required_text("role", 16)?;
        let role = console::Role::parse(&role, "role")?;
        let ttl = match &self.valid_for_seconds {
            Given::Value(n) if (1..=console::LINK_TTL.as_secs()).contains(n) => {
                Duration::from_secs(*n)
            }
            Given::Absent | Given::Null => console::LINK_TTL,
            _ => {
                return Err(herald_engine::Error::field(
                    "valid_for_seconds",
                    "number",
                    "must be a whole number of seconds from 1 to 86400",
                ))
            }
        };
        Ok((email, role, ttl))
    }
}
