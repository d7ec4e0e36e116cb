//! Request and response bodies of the HTTP API, one Rust type per JSON shape:
//! the routes parse requests into them and answer with them, and `openapi.rs`
//! derives the document's schemas from them (`ToSchema`), so a shape is written
//! once. Request fields are `extract::Given`, read without failing; each request
//! type's `validate` gives the checked values or every problem of the body.
//! Response fields are declared in name order: the JSON is byte for byte what
//! the `json!` views wrote (serde_json's maps are sorted by key).

pub mod bulk;
pub mod channels;
pub mod flows;
pub mod notifications;
pub mod ops;
pub mod user_api;
pub mod users;
pub mod webhook_endpoints;

use crate::extract::Given;
use herald_actors::model::{self, Timestamp};
use herald_actors::Validator;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

// ================================================================ lists

/// The `page` object of every list.
#[derive(Serialize, ToSchema)]
pub struct Page {
    /// Cursor for the next (older) page; null when nothing follows.
    pub after: Option<String>,
    /// Cursor for the previous (newer) page; null when nothing precedes.
    pub before: Option<String>,
    pub has_more_after: bool,
    pub has_more_before: bool,
    #[schema(value_type = u32)]
    pub limit: usize,
}

/// `{items, page}`: every list (its schema is one per item type, `openapi::LISTS`).
#[derive(Serialize)]
pub struct List<T> {
    pub items: Vec<T>,
    pub page: Page,
}

// ================================================================ service

#[derive(Serialize, ToSchema)]
pub struct Health {
    /// `ok` (healthz) or `ready` (readyz).
    pub status: &'static str,
}

// ================================================================ project

#[derive(Serialize, ToSchema)]
pub struct Project {
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Timestamp,
    pub id: Uuid,
    pub name: String,
    pub security_mode: bool,
    pub signing_key_configured: bool,
    #[schema(value_type = DateTime<Utc>)]
    pub updated_at: Timestamp,
}

impl From<&model::Project> for Project {
    fn from(p: &model::Project) -> Self {
        Project {
            created_at: p.created_at,
            id: p.id,
            name: p.name.clone(),
            security_mode: p.security_mode,
            signing_key_configured: p.signing_key.is_some(),
            updated_at: p.updated_at,
        }
    }
}

/// Project settings (partial).
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"name": "default"}))]
pub struct ProjectUpdate {
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub security_mode: Given<bool>,
    /// Not blank.
    #[serde(default)]
    #[schema(value_type = String, min_length = 1, max_length = 200, pattern = "\\S")]
    pub name: Given<String>,
}

/// What a project update changes (`None` keeps).
pub struct ProjectChange {
    pub security_mode: Option<bool>,
    pub name: Option<String>,
}

impl ProjectUpdate {
    pub fn validate(&self) -> herald_actors::Result<ProjectChange> {
        let mut v = Validator::new();
        let security_mode = self.security_mode.flag("security_mode", &mut v);
        let name = self.name.text("name", 200, &mut v);
        if matches!(name, Some(None)) || matches!(&name, Some(Some(n)) if n.trim().is_empty()) {
            v.push("name", "required", "a project needs a name");
        }
        v.finish()?;
        Ok(ProjectChange {
            security_mode,
            name: name.flatten(),
        })
    }
}

#[derive(Deserialize, ToSchema, Default)]
pub struct SigningKeyInput {
    /// PEM `PUBLIC KEY` (SPKI) or `RSA PUBLIC KEY` (PKCS#1), RSA of at least 2048 bits.
    #[serde(default)]
    #[schema(value_type = String, required = true, format = "pem-rsa-public-key")]
    pub public_key: Given<String>,
}

impl SigningKeyInput {
    /// The PEM as given (its key is parsed by the handler).
    pub fn validate(&self) -> herald_actors::Result<String> {
        self.public_key.only_required_text("public_key", 16 * 1024)
    }
}

#[derive(Serialize, ToSchema)]
pub struct SigningKeyPair {
    /// PKCS#8 PEM; returned once, never stored.
    pub private_key: String,
    /// SPKI PEM, now stored as the project's signing key.
    pub public_key: String,
}

// ================================================================ topics

#[derive(Serialize, ToSchema)]
pub struct Topic {
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Timestamp,
    pub description: Option<String>,
    pub key: String,
    pub name: Option<String>,
    pub subscribers_count: u64,
    #[schema(value_type = DateTime<Utc>)]
    pub updated_at: Timestamp,
}

impl From<&model::Topic> for Topic {
    fn from(t: &model::Topic) -> Self {
        Topic {
            created_at: t.created_at,
            description: t.description.clone(),
            key: t.key.clone(),
            name: t.name.clone(),
            subscribers_count: t.subscribers_count,
            updated_at: t.updated_at,
        }
    }
}

/// A topic's name and description (partial: `null` clears).
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"name": "Releases", "description": "Product releases"}))]
pub struct TopicInput {
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 200)]
    pub name: Given<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 1000)]
    pub description: Given<String>,
}

/// What a topic update changes: `None` keeps, `Some(None)` clears.
pub struct TopicChange {
    pub name: Option<Option<String>>,
    pub description: Option<Option<String>>,
}

impl TopicInput {
    pub fn validate(&self) -> herald_actors::Result<TopicChange> {
        let mut v = Validator::new();
        let name = self.name.text("name", 200, &mut v);
        let description = self.description.text("description", 1000, &mut v);
        v.finish()?;
        Ok(TopicChange { name, description })
    }
}

#[derive(Serialize, ToSchema)]
pub struct Subscription {
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Timestamp,
    pub id: Uuid,
    /// The topic key.
    pub topic: String,
    pub user_external_id: String,
}

impl From<&model::Subscription> for Subscription {
    fn from(s: &model::Subscription) -> Self {
        Subscription {
            created_at: s.created_at,
            id: s.id,
            topic: s.topic.clone(),
            user_external_id: s.user_external_id.clone(),
        }
    }
}

/// Subscribes a user, by external id.
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"external_id": "st-user"}))]
pub struct SubscriptionInput {
    #[serde(default)]
    #[schema(value_type = String, required = true, min_length = 1, max_length = 255)]
    pub external_id: Given<String>,
}

impl SubscriptionInput {
    /// The external id.
    pub fn validate(&self) -> herald_actors::Result<String> {
        self.external_id.only_required_text("external_id", 255)
    }
}
