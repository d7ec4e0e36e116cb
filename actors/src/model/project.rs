//! Projects: a tenant's record, its credentials and settings, and the operator's view of it.

use super::{Preferences, Timestamp};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use uuid::Uuid;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Project {
    pub id: Uuid,
    pub name: String,
    pub public_key: String,
    /// SHA-256 of the secret key. Secret keys are 256-bit random strings, so a fast
    /// hash is enough: there is nothing to brute-force that a slow KDF would protect.
    pub secret_hash: Vec<u8>,
    pub security_mode: bool,
    /// PEM of the RSA public key that verifies user JWTs.
    pub signing_key: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// SHA-256 of the secret key the last rotation replaced: still accepted
    /// until `previous_secret_expires_at`, so clients can switch over.
    #[serde(default)]
    pub previous_secret_hash: Option<Vec<u8>>,
    #[serde(default)]
    pub previous_secret_expires_at: Option<Timestamp>,
    /// When the secret key was last rotated.
    #[serde(default)]
    pub secret_rotated_at: Option<Timestamp>,
    /// The project's test clock: `Some(instant)` while the project is on a
    /// test clock frozen at that instant (it moves only when advanced, see
    /// `delivery::clock`); `None` on the real clock.
    #[serde(default)]
    pub test_clock: Option<Timestamp>,
    /// The IANA timezone of recipients that have none (send windows); UTC
    /// when unset.
    #[serde(default)]
    pub timezone: Option<String>,
    /// How long its notifications and feeds are kept (unset: the server default).
    #[serde(default)]
    pub retention: crate::retention::ProjectRetention,
    /// Its storage quota in bytes (`quota`), 0 for none; `None` is the
    /// server default (`--project-quota-bytes`).
    #[serde(default)]
    pub quota_bytes: Option<u64>,
    /// The preference categories flows may name, by handle
    /// (`rules::preferences`). Kept on the project: there are few, and
    /// every staging reads them with the defaults.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub categories: BTreeMap<String, Category>,
    /// The project's preference defaults: what a user who set nothing gets
    /// (`rules::preferences`; everything on where these say nothing).
    #[serde(default, skip_serializing_if = "Preferences::is_empty")]
    pub preference_defaults: Preferences,
    /// Sandbox mode: no provider is called for the project; deliveries are
    /// rendered, stored and `sent` with `sandbox: true` (in-app still
    /// delivers).
    #[serde(default)]
    pub sandbox: bool,
    /// The generation of the key that signs its preference-page links
    /// (derived from the server's key, the project's id and this number):
    /// raising it invalidates every link issued before.
    #[serde(default)]
    pub link_epoch: u64,
    /// What every template sees as `brand` (`None`: `brand` is undefined).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branding: Option<Branding>,
    /// Bumped by every change of the project's content (partials, layouts,
    /// translations) and of `default_locale` / `default_layout`: the
    /// engine's compiled content is keyed by it, so a node sees another's
    /// change at its next staging (`render::content`).
    #[serde(default)]
    pub content_version: u64,
    /// The locale `t()` falls back to last (`None`: `en`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_locale: Option<String>,
    /// The layout of email steps that name none (`None`: no layout).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_layout: Option<String>,
}

/// A project's branding, `brand.*` in every template: its parts checked
/// when set (`PUT /admin/v1/project`), each optional.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Branding {
    pub name: Option<String>,
    pub logo_url: Option<String>,
    /// `#rrggbb`.
    pub primary_color: Option<String>,
    /// HTML for an email's footer, inserted as written.
    pub footer_html: Option<String>,
    pub support_url: Option<String>,
}

/// A preference category (`PUT /admin/v1/categories/{handle}`): a name to
/// show users for a group of flows they can turn off together.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Category {
    pub name: String,
    pub description: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Project {
    /// A new project with its keys (the secret already hashed), on the real
    /// clock, with the server's retention and no signing key.
    pub fn new(
        id: Uuid, name: &str, public_key: &str, secret_hash: Vec<u8>, now: Timestamp,
    ) -> Project {
        Project {
            id,
            name: name.to_string(),
            public_key: public_key.to_string(),
            secret_hash,
            security_mode: false,
            signing_key: None,
            created_at: now,
            updated_at: now,
            previous_secret_hash: None,
            previous_secret_expires_at: None,
            secret_rotated_at: None,
            test_clock: None,
            timezone: None,
            retention: Default::default(),
            quota_bytes: None,
            categories: BTreeMap::new(),
            preference_defaults: Preferences::default(),
            sandbox: false,
            link_epoch: 0,
            branding: None,
            content_version: 0,
            default_locale: None,
            default_layout: None,
        }
    }
}

impl Project {
    /// The previous secret's hash while it is still accepted at `now`.
    pub fn previous_secret_live(&self, now: Timestamp) -> Option<&[u8]> {
        match (&self.previous_secret_hash, self.previous_secret_expires_at) {
            (Some(h), Some(until)) if until.millis() > now.millis() => Some(h.as_slice()),
            _ => None,
        }
    }
}

/// What the operator API and `herald project …` tell about a project: never
/// a secret, nor its hash, except a secret key just made (`secret_key`).
// Fields in name order: the bytes the `json!` form of the object wrote.
#[derive(Debug, Clone, Serialize)]
pub struct OperatorProject {
    pub created_at: Timestamp,
    pub id: Uuid,
    pub name: String,
    /// While the secret key a rotation replaced is still accepted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_secret_expires_at: Option<Timestamp>,
    pub public_key: String,
    /// A secret key just created or rotated: shown this once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_rotated_at: Option<Timestamp>,
    pub security_mode: bool,
}

impl From<&Project> for OperatorProject {
    fn from(p: &Project) -> Self {
        OperatorProject {
            created_at: p.created_at,
            id: p.id,
            name: p.name.clone(),
            previous_secret_expires_at: p
                .previous_secret_live(Timestamp::now())
                .and(p.previous_secret_expires_at),
            public_key: p.public_key.clone(),
            secret_key: None,
            secret_rotated_at: p.secret_rotated_at,
            security_mode: p.security_mode,
        }
    }
}

impl OperatorProject {
    /// With the secret key just made.
    pub fn with_secret(mut self, secret_key: String) -> Self {
        self.secret_key = Some(secret_key);
        self
    }
}
