//! Request and response bodies of the HTTP API, one Rust type per JSON shape:
//! the routes parse requests into them and answer with them, and `openapi.rs`
//! derives the document's schemas from them (`ToSchema`), so a shape is written
//! once. Request fields are `extract::Given`, read without failing; each request
//! type's `validate` gives the checked values or every problem of the body.
//! Response fields are declared in name order: the JSON is byte for byte what
//! the `json!` views wrote (serde_json's maps are sorted by key).

pub mod audit_log;
pub mod bulk;
pub mod channels;
pub mod content;
pub mod flows;
pub mod hooks;
pub mod notifications;
pub mod ops;
pub mod preference_link;
pub mod preferences;
pub mod suppressions;
pub mod user_api;
pub mod users;
pub mod webhook_endpoints;
pub mod workflow;

use crate::extract::Given;
use herald_engine::model::{self, Timestamp};
use herald_engine::retention as model_retention;
use herald_engine::{validate, Validator};
use serde::{Deserialize, Serialize};
use serde_json::Value;
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
    /// `brand` in every template (null: none).
    pub branding: Option<Branding>,
    /// `real`, or `test`: the project's time moves only when advanced
    /// (`POST /admin/v1/project/clock/advance`).
    pub clock: ClockKind,
    /// The test clock's current time; null on the real clock.
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub clock_time: Option<Timestamp>,
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Timestamp,
    /// The layout of email steps that name none; null: no layout.
    pub default_layout: Option<String>,
    /// The locale `t()` falls back to last (`en` unless set).
    pub default_locale: String,
    pub id: Uuid,
    pub name: String,
    /// The project's own storage quota in bytes (0: none); null: the
    /// server's `--project-quota-bytes` applies (`usage.quota_bytes` is the
    /// quota in force).
    pub quota_bytes: Option<u64>,
    /// The retention windows in force (the project's, else the server's `--retention`).
    pub retention: Retention,
    /// Sandbox mode: no provider is called; deliveries are rendered,
    /// stored and `sent` with `sandbox: true` (in-app still delivers).
    pub sandbox: bool,
    pub security_mode: bool,
    pub signing_key_configured: bool,
    /// The timezone of recipients without one (send windows); null: UTC.
    pub timezone: Option<String>,
    #[schema(value_type = DateTime<Utc>)]
    pub updated_at: Timestamp,
    /// What the project stores, against its quota.
    pub usage: Usage,
}

/// A project's storage use: an estimate kept as records are stored and
/// removed, not a measure of the disk.
#[derive(Serialize, ToSchema)]
pub struct Usage {
    /// The estimated bytes of the project's live records: each
    /// delivery's rendered content (subject, body, html, url) plus 512
    /// bytes per delivery and 512 per notification.
    pub bytes: u64,
    /// The storage quota in force, in bytes (the project's, else the
    /// server's); 0: none. A run that would take `bytes` past it is
    /// refused with 409 `conflict`, reason `quota_exceeded`.
    pub quota_bytes: u64,
}

impl Project {
    /// The project with its usage (`bytes`, as its counter has it).
    pub fn with_usage(p: &model::Project, bytes: u64) -> Self {
        let r = p.retention.effective();
        Project {
            branding: p.branding.as_ref().map(Branding::from),
            clock: if p.test_clock.is_some() {
                ClockKind::Test
            } else {
                ClockKind::Real
            },
            clock_time: p.test_clock,
            created_at: p.created_at,
            default_layout: p.default_layout.clone(),
            default_locale: p
                .default_locale
                .clone()
                .unwrap_or_else(|| herald_engine::rules::content::DEFAULT_LOCALE.into()),
            id: p.id,
            name: p.name.clone(),
            quota_bytes: p.quota_bytes,
            retention: Retention {
                feed: r.feed.to_string(),
                notifications: r.notifications.to_string(),
            },
            sandbox: p.sandbox,
            security_mode: p.security_mode,
            signing_key_configured: p.signing_key.is_some(),
            timezone: p.timezone.clone(),
            updated_at: p.updated_at,
            usage: Usage {
                bytes,
                quota_bytes: herald_engine::quota::effective_quota(p.quota_bytes),
            },
        }
    }
}

/// How long a project keeps its notifications and feeds: durations such as
/// `15m`, `2h`, `90d` (a whole number of minutes, hours or days, at least 1m).
#[derive(Serialize, ToSchema)]
pub struct Retention {
    /// Feed entries and live-feed events older than this are removed.
    #[schema(example = "90d")]
    pub feed: String,
    /// Settled notifications older than this are removed with their deliveries.
    #[schema(example = "90d")]
    pub notifications: String,
}

/// A retention window as the document gives it: a whole number and a unit
/// m, h or d (`retention::Window::parse`; at most four digits keeps it within
/// its 36500 days).
pub const RETENTION_PATTERN: &str = "^0*[1-9][0-9]{0,3}[mhd]$";

/// A change of the retention windows: a field absent keeps its window,
/// `null` returns it to the server default.
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"notifications": "30d", "feed": "7d"}))]
pub struct RetentionInput {
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "30d")]
    pub notifications: Given<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "7d")]
    pub feed: Given<String>,
}

/// A validated retention change: per window, `None` keeps it, `Some(None)`
/// returns it to the server default.
#[derive(Default)]
pub struct RetentionChange {
    pub notifications: Option<Option<model_retention::Window>>,
    pub feed: Option<Option<model_retention::Window>>,
}

impl RetentionChange {
    /// Applies the change to a project's windows.
    pub fn apply(&self, r: &mut model_retention::ProjectRetention) {
        if let Some(w) = self.notifications {
            r.notifications = w;
        }
        if let Some(w) = self.feed {
            r.feed = w;
        }
    }
}

/// One window of a retention change, checked (a bad one is reported at `path`).
fn window(
    g: &Given<String>, path: &str, v: &mut Validator,
) -> Option<Option<model_retention::Window>> {
    match g {
        Given::Absent => None,
        Given::Null => Some(None),
        Given::Value(s) => match model_retention::Window::parse(s) {
            Ok(w) => Some(Some(w)),
            Err(m) => {
                v.push(path, "format", m);
                None
            }
        },
        Given::Wrong(_) => {
            v.push(path, "format", "must be a duration such as \"90d\"");
            None
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
    /// `test` puts the project on a test clock (refused with 409 while
    /// security mode is on), `real` back on the real clock.
    #[serde(default)]
    #[schema(value_type = Option<ClockKind>)]
    pub clock: Given<ClockKind>,
    /// An IANA timezone for recipients without one (send windows); null
    /// unsets it (UTC).
    #[serde(default)]
    #[schema(value_type = Option<users::TimeZone>)]
    pub timezone: Given<String>,
    /// Retention windows; `null` returns both to the server default.
    #[serde(default)]
    #[schema(value_type = Option<RetentionInput>)]
    pub retention: Given<crate::extract::Obj<RetentionInput>>,
    /// The project's storage quota in bytes, 0 for none, at most 2^53 − 1;
    /// null returns it to the server's `--project-quota-bytes`.
    #[serde(default)]
    #[schema(value_type = Option<u64>, maximum = 9007199254740991_u64)]
    pub quota_bytes: Given<u64>,
    /// Sandbox mode: no provider is called for the project's deliveries,
    /// which are rendered, stored and `sent` with `sandbox: true`.
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub sandbox: Given<bool>,
    /// `brand` in every template: replaced whole; null removes it.
    #[serde(default)]
    #[schema(value_type = Option<Branding>)]
    pub branding: Given<Value>,
    /// The locale `t()` falls back to last (a BCP 47 tag); null: `en`.
    #[serde(default)]
    #[schema(value_type = Option<String>, format = "bcp47", max_length = 64)]
    pub default_locale: Given<String>,
    /// The handle of the layout of email steps that name none; null: none.
    #[serde(default)]
    #[schema(value_type = Option<String>, pattern = "^[a-z0-9][a-z0-9_-]{0,63}$")]
    pub default_layout: Given<String>,
}

/// A project's branding: `brand.name`, `brand.logo_url`… in every
/// template and layout. Each part optional; a PUT replaces the whole.
#[derive(Serialize, ToSchema, Default)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"name": "Acme", "logo_url": "https://acme.test/logo.png", "primary_color": "#4f46e5", "footer_html": "<p>Acme Inc.</p>", "support_url": "https://acme.test/help"}))]
pub struct Branding {
    /// At most 200 characters.
    #[schema(max_length = 200)]
    pub name: Option<String>,
    #[schema(schema_with = users::avatar_schema)]
    pub logo_url: Option<String>,
    /// `#rrggbb`.
    #[schema(pattern = "^#[0-9a-fA-F]{6}$")]
    pub primary_color: Option<String>,
    /// HTML for an email's footer, inserted as written; at most 10,000 characters.
    #[schema(max_length = 10000)]
    pub footer_html: Option<String>,
    #[schema(schema_with = users::avatar_schema)]
    pub support_url: Option<String>,
}

impl From<&model::Branding> for Branding {
    fn from(b: &model::Branding) -> Self {
        Branding {
            name: b.name.clone(),
            logo_url: b.logo_url.clone(),
            primary_color: b.primary_color.clone(),
            footer_html: b.footer_html.clone(),
            support_url: b.support_url.clone(),
        }
    }
}

/// `branding` of a project update: `Some(None)` removes it.
fn branding_of(given: &Given<Value>, v: &mut Validator) -> Option<Option<model::Branding>> {
    let m = match given {
        Given::Absent => return None,
        Given::Null => return Some(None),
        Given::Value(Value::Object(m)) => m,
        _ => {
            v.push("branding", "format", "must be an object or null");
            return None;
        }
    };
    let before = v.fields.len();
    let text = |k: &str, max: usize, v: &mut Validator| -> Option<String> {
        match m.get(k) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.chars().count() > max => {
                v.push(
                    format!("branding.{k}"),
                    "length",
                    format!("at most {max} characters"),
                );
                None
            }
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                v.push(format!("branding.{k}"), "format", "must be a string");
                None
            }
        }
    };
    let url = |k: &str, v: &mut Validator| {
        let u = text(k, 1000, v);
        if u.as_deref().is_some_and(|u| !validate::is_http_url(u)) {
            v.push(
                format!("branding.{k}"),
                "format",
                "must be an absolute http(s) URL",
            );
        }
        u
    };
    let b = model::Branding {
        name: text("name", 200, v),
        logo_url: url("logo_url", v),
        primary_color: text("primary_color", 7, v),
        footer_html: text("footer_html", 10_000, v),
        support_url: url("support_url", v),
    };
    let hex = |c: &str| {
        c.len() == 7 && c.starts_with('#') && c[1..].chars().all(|x| x.is_ascii_hexdigit())
    };
    if b.primary_color.as_deref().is_some_and(|c| !hex(c)) {
        v.push("branding.primary_color", "format", "a color as #rrggbb");
    }
    for k in m.keys() {
        if ![
            "name",
            "logo_url",
            "primary_color",
            "footer_html",
            "support_url",
        ]
        .contains(&k.as_str())
        {
            v.push(format!("branding.{k}"), "exclusion", "not a branding field");
        }
    }
    (v.fields.len() == before).then_some(Some(b))
}

/// Which clock a project's time follows.
#[derive(Serialize, Deserialize, ToSchema, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub enum ClockKind {
    Real,
    Test,
}

/// What a project update changes (`None` keeps).
pub struct ProjectChange {
    pub security_mode: Option<bool>,
    pub name: Option<String>,
    pub clock: Option<ClockKind>,
    /// `Some(None)`: unset.
    pub timezone: Option<Option<String>>,
    pub retention: RetentionChange,
    /// `Some(None)`: back to the server default.
    pub quota_bytes: Option<Option<u64>>,
    pub sandbox: Option<bool>,
    /// `Some(None)`: removed.
    pub branding: Option<Option<model::Branding>>,
    /// `Some(None)`: back to `en`.
    pub default_locale: Option<Option<String>>,
    /// `Some(None)`: none.
    pub default_layout: Option<Option<String>>,
}

/// The largest quota accepted: the largest integer a JSON number carries
/// exactly in every client (2^53 − 1), far beyond any disk.
pub const MAX_QUOTA_BYTES: u64 = (1 << 53) - 1;

impl ProjectUpdate {
    pub fn validate(&self) -> herald_engine::Result<ProjectChange> {
        let mut v = Validator::new();
        let security_mode = self.security_mode.flag("security_mode", &mut v);
        let sandbox = self.sandbox.flag("sandbox", &mut v);
        let branding = branding_of(&self.branding, &mut v);
        let default_locale = self.default_locale.text("default_locale", 64, &mut v);
        if let Some(Some(l)) = &default_locale {
            if !validate::is_locale(l) {
                v.push(
                    "default_locale",
                    "format",
                    "must be a BCP 47 tag such as fr-CA",
                );
            }
        }
        let default_locale =
            default_locale.map(|l| l.map(|l| herald_engine::rules::content::canonical_locale(&l)));
        let default_layout = self.default_layout.text("default_layout", 64, &mut v);
        if let Some(Some(h)) = &default_layout {
            if !herald_engine::rules::content::is_content_handle(h) {
                v.push("default_layout", "format", "a layout's handle");
            }
        }
        let name = self.name.text("name", 200, &mut v);
        let timezone = self.timezone.text("timezone", 100, &mut v);
        if let Some(Some(tz)) = &timezone {
            if !herald_engine::validate::is_timezone(tz) {
                v.push(
                    "timezone",
                    "inclusion",
                    "must be an IANA timezone such as Europe/Paris",
                );
            }
        }
        let clock = match &self.clock {
            Given::Absent | Given::Null => None,
            Given::Value(c) => Some(*c),
            Given::Wrong(_) => {
                v.push("clock", "inclusion", "must be real or test");
                None
            }
        };
        if matches!(name, Some(None)) || matches!(&name, Some(Some(n)) if n.trim().is_empty()) {
            v.push("name", "required", "a project needs a name");
        }
        let retention = match &self.retention {
            Given::Absent => RetentionChange::default(),
            Given::Null => RetentionChange {
                notifications: Some(None),
                feed: Some(None),
            },
            Given::Value(crate::extract::Obj(r)) => RetentionChange {
                notifications: window(&r.notifications, "retention.notifications", &mut v),
                feed: window(&r.feed, "retention.feed", &mut v),
            },
            Given::Wrong(_) => {
                v.push("retention", "format", "must be an object");
                RetentionChange::default()
            }
        };
        let quota_bytes = match &self.quota_bytes {
            Given::Absent => None,
            Given::Null => Some(None),
            Given::Value(n) if *n > MAX_QUOTA_BYTES => {
                v.push(
                    "quota_bytes",
                    "number",
                    format!("must be at most {MAX_QUOTA_BYTES}"),
                );
                None
            }
            Given::Value(n) => Some(Some(*n)),
            Given::Wrong(_) => {
                v.push(
                    "quota_bytes",
                    "format",
                    "must be a whole number of bytes (0 for no quota) or null",
                );
                None
            }
        };
        v.finish()?;
        Ok(ProjectChange {
            security_mode,
            name: name.flatten(),
            clock,
            timezone,
            retention,
            quota_bytes,
            sandbox,
            branding,
            default_locale,
            default_layout,
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
    pub fn validate(&self) -> herald_engine::Result<String> {
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
    pub fn validate(&self) -> herald_engine::Result<TopicChange> {
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
    pub fn validate(&self) -> herald_engine::Result<String> {
        self.external_id.only_required_text("external_id", 255)
    }
}
