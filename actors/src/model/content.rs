//! A project's content: partials, email layouts and translation
//! catalogs, stored one record per `(project, kind, key)` (the key is a
//! partial's or a layout's handle, or a catalog's locale) by both backends
//! (`storage::ContentRepo`). The rules over them (names, bounds, include
//! graphs, locale fallback) are `crate::rules::content`; how they are applied
//! to a render is `crate::render::content`.

use super::Timestamp;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a content record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContentKind {
    Partial,
    Layout,
    Translation,
}

impl ContentKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ContentKind::Partial => "partial",
            ContentKind::Layout => "layout",
            ContentKind::Translation => "translation",
        }
    }

    /// Its tag in a backend's key or column (stable: stored).
    pub fn tag(self) -> u8 {
        match self {
            ContentKind::Partial => 1,
            ContentKind::Layout => 2,
            ContentKind::Translation => 3,
        }
    }

    pub fn from_tag(t: u8) -> Option<ContentKind> {
        match t {
            1 => Some(ContentKind::Partial),
            2 => Some(ContentKind::Layout),
            3 => Some(ContentKind::Translation),
            _ => None,
        }
    }
}

/// What a content record holds, by kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContentBody {
    /// A snippet included as `{% include "partials/<handle>" %}`.
    Partial { content: String },
    /// An email layout: `html` (and `text`) wrap a step's parts as
    /// `{{ content }}`.
    Layout {
        name: String,
        html: String,
        text: Option<String>,
    },
    /// A locale's messages, flattened: `welcome.subject` → its template.
    Translation { messages: BTreeMap<String, String> },
}

impl ContentBody {
    pub fn kind(&self) -> ContentKind {
        match self {
            ContentBody::Partial { .. } => ContentKind::Partial,
            ContentBody::Layout { .. } => ContentKind::Layout,
            ContentBody::Translation { .. } => ContentKind::Translation,
        }
    }

    /// Every template source it holds, with its field path in the API's
    /// body (`content`, `html`, `messages.welcome.subject`).
    pub fn sources(&self) -> Vec<(String, &str)> {
        match self {
            ContentBody::Partial { content } => vec![("content".into(), content.as_str())],
            ContentBody::Layout { html, text, .. } => {
                let mut v = vec![("html".to_string(), html.as_str())];
                if let Some(t) = text {
                    v.push(("text".into(), t.as_str()));
                }
                v
            }
            ContentBody::Translation { messages } => messages
                .iter()
                .map(|(k, v)| (format!("messages.{k}"), v.as_str()))
                .collect(),
        }
    }

    /// Bytes of its sources (the bound of a record).
    pub fn size(&self) -> usize {
        self.sources().iter().map(|(k, s)| k.len() + s.len()).sum()
    }
}

/// One content record of a project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContentRecord {
    /// A handle (partials, layouts) or a BCP 47 tag (translations).
    pub key: String,
    pub body: ContentBody,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl ContentRecord {
    pub fn kind(&self) -> ContentKind {
        self.body.kind()
    }
}
