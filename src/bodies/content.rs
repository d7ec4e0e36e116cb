//! The bodies of a project's content (docs/CONTENT.md): partials
//! (`/admin/v1/partials`), layouts (`/admin/v1/layouts`) and translation
//! catalogs (`/admin/v1/translations`), their inputs checked here for shape
//! and size; what content may hold (compiling, includes, bounds) is the
//! engine's (`actors::content`, `rules::content`).

use crate::extract::Given;
use herald_engine::model::{self, ContentBody, Timestamp};
use herald_engine::rules::content as rules;
use herald_engine::Validator;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// A partial: a snippet any template includes as
/// `{% include "partials/<handle>" %}`.
#[derive(Serialize, ToSchema)]
pub struct Partial {
    pub content: String,
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Timestamp,
    pub handle: String,
    #[schema(value_type = DateTime<Utc>)]
    pub updated_at: Timestamp,
}

/// An email layout: `html` (and `text`) around an email step's parts,
/// which it shows as `{{ content }}`.
#[derive(Serialize, ToSchema)]
pub struct Layout {
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Timestamp,
    pub handle: String,
    pub html: String,
    pub name: String,
    /// The text part's layout; null: the step's body alone.
    pub text: Option<String>,
    #[schema(value_type = DateTime<Utc>)]
    pub updated_at: Timestamp,
}

/// A locale's translation catalog.
#[derive(Serialize, ToSchema)]
pub struct Translation {
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Timestamp,
    /// A BCP 47 tag.
    pub locale: String,
    /// Nested objects whose leaves are message templates.
    #[schema(value_type = Object)]
    pub messages: Value,
    #[schema(value_type = DateTime<Utc>)]
    pub updated_at: Timestamp,
}

/// A catalog as the list of locales shows it.
#[derive(Serialize, ToSchema)]
pub struct TranslationSummary {
    pub locale: String,
    pub message_count: usize,
    #[schema(value_type = DateTime<Utc>)]
    pub updated_at: Timestamp,
}

/// Every partial of the project, by handle (at most 100: not paged).
#[derive(Serialize, ToSchema)]
pub struct PartialList {
    pub data: Vec<Partial>,
}

/// Every layout of the project, by handle (at most 20: not paged).
#[derive(Serialize, ToSchema)]
pub struct LayoutList {
    pub data: Vec<Layout>,
}

/// Every catalog of the project, by locale (at most 50: not paged).
#[derive(Serialize, ToSchema)]
pub struct TranslationList {
    pub data: Vec<TranslationSummary>,
}

/// What a content record shows: a partial, a layout or a catalog.
pub enum ContentView {
    Partial(Partial),
    Layout(Layout),
    Translation(Translation),
}

impl Serialize for ContentView {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ContentView::Partial(p) => p.serialize(s),
            ContentView::Layout(l) => l.serialize(s),
            ContentView::Translation(t) => t.serialize(s),
        }
    }
}

impl From<&model::ContentRecord> for ContentView {
    fn from(r: &model::ContentRecord) -> Self {
        let (created_at, updated_at) = (r.created_at, r.updated_at);
        match &r.body {
            ContentBody::Partial { content } => ContentView::Partial(Partial {
                content: content.clone(),
                created_at,
                handle: r.key.clone(),
                updated_at,
            }),
            ContentBody::Layout { name, html, text } => ContentView::Layout(Layout {
                created_at,
                handle: r.key.clone(),
                html: html.clone(),
                name: name.clone(),
                text: text.clone(),
                updated_at,
            }),
            ContentBody::Translation { messages } => ContentView::Translation(Translation {
                created_at,
                locale: r.key.clone(),
                messages: rules::nest_messages(messages),
                updated_at,
            }),
        }
    }
}

impl TranslationSummary {
    pub fn new(r: &model::ContentRecord) -> Self {
        let message_count = match &r.body {
            ContentBody::Translation { messages } => messages.len(),
            _ => 0,
        };
        TranslationSummary {
            locale: r.key.clone(),
            message_count,
            updated_at: r.updated_at,
        }
    }
}

/// Declares a partial or replaces its content.
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"content": "<p>Acme Inc. · <a href=\"{{ preferences_url }}\">Preferences</a></p>"}))]
pub struct PartialInput {
    /// A MiniJinja template; at most 32768 characters.
    #[serde(default)]
    #[schema(value_type = String, required = true, max_length = 32768)]
    pub content: Given<String>,
}

impl PartialInput {
    pub fn validate(&self) -> herald_engine::Result<ContentBody> {
        let mut v = Validator::new();
        let content = match self
            .content
            .text("content", rules::MAX_PARTIAL_BYTES, &mut v)
        {
            Some(Some(c)) => Some(c),
            Some(None) | None => {
                if matches!(self.content, Given::Absent | Given::Null) {
                    v.push("content", "required", "is required");
                }
                None
            }
        };
        v.finish()?;
        Ok(ContentBody::Partial {
            content: content.unwrap_or_default(),
        })
    }
}

/// Declares a layout or replaces it.
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"name": "Default", "html": "<html><head><style>p { color: #333 }</style></head><body>{{ content }}</body></html>", "text": "{{ content }}\n-- Acme"}))]
pub struct LayoutInput {
    #[serde(default)]
    #[schema(value_type = String, required = true, min_length = 1, max_length = 200)]
    pub name: Given<String>,
    /// A MiniJinja template showing the step's HTML as `{{ content }}`.
    #[serde(default)]
    #[schema(value_type = String, required = true, min_length = 1, max_length = 131072)]
    pub html: Given<String>,
    /// The text part's template, the step's body as `{{ content }}`.
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 131072)]
    pub text: Given<String>,
}

impl LayoutInput {
    pub fn validate(&self) -> herald_engine::Result<ContentBody> {
        let mut v = Validator::new();
        let name = self.name.required_text("name", 200, &mut v);
        let html = self
            .html
            .required_text("html", rules::MAX_LAYOUT_BYTES, &mut v);
        let text = self
            .text
            .text("text", rules::MAX_LAYOUT_BYTES, &mut v)
            .flatten();
        v.finish()?;
        Ok(ContentBody::Layout {
            name: name.unwrap_or_default(),
            html: html.unwrap_or_default(),
            text,
        })
    }
}

/// A locale's catalog, replaced whole.
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"messages": {"welcome": {"subject": "Bienvenue, {{ name }} !"}}}))]
pub struct TranslationInput {
    /// Nested objects (keys `^[A-Za-z0-9_-]{1,64}$`, at most 6 levels)
    /// whose leaves are MiniJinja templates; `t("welcome.subject")`.
    #[serde(default)]
    #[schema(value_type = Object, required = true)]
    pub messages: Given<Value>,
}

impl TranslationInput {
    pub fn validate(&self) -> herald_engine::Result<ContentBody> {
        let mut v = Validator::new();
        let messages = match &self.messages {
            Given::Value(m) => {
                let mut bad = vec![];
                let flat = rules::flatten_messages(m, &mut bad);
                for (path, reason, msg) in bad {
                    v.push(path, reason, msg);
                }
                flat
            }
            Given::Absent | Given::Null => {
                v.push("messages", "required", "is required");
                Default::default()
            }
            Given::Wrong(_) => {
                v.push("messages", "format", "must be an object");
                Default::default()
            }
        };
        v.finish()?;
        Ok(ContentBody::Translation { messages })
    }
}
