//! Flows (workflows): their steps, templates and status.

use super::{conditions, Timestamp};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The most steps a flow has: delivery ids carry the step index in one
/// byte (`model::delivery_id`).
pub const MAX_STEPS: usize = 50;
/// The most bytes of one template field.
pub const MAX_TEMPLATE: usize = 64 * 1024;
/// A delay step waits at most 30 days.
pub const MAX_DELAY: u64 = 30 * 86_400;
/// The most runs a throttle step lets through per window.
pub const MAX_THROTTLE_LIMIT: u32 = 1000;
/// The most activities a batch step's `max` may ask for.
pub const MAX_BATCH_MAX: u32 = 10_000;
/// The most backup channels a channel step names (`Step::fallback_channel_ids`).
pub const MAX_FALLBACKS: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlowStatus {
    Draft,
    Active,
    Archived,
}

impl FlowStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            FlowStatus::Draft => "draft",
            FlowStatus::Active => "active",
            FlowStatus::Archived => "archived",
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Template {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub html: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// An in_app step's action buttons (at most `MAX_ACTIONS`), each a label
    /// and a URL rendered like the other parts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<ActionTemplate>,
}

/// Action buttons an in_app step's template may have.
pub const MAX_ACTIONS: usize = 2;

/// One action button of a template: its label and URL, both templates.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ActionTemplate {
    pub label: String,
    pub url: String,
}

/// A template's parts in render order: subject, body, html, url, then each
/// action's label and URL (`MAX_ACTIONS` of them, `None` past the last).
pub const TEMPLATE_PARTS: usize = 4 + 2 * MAX_ACTIONS;

impl Template {
    /// The template's sources, in `TEMPLATE_PARTS` order.
    pub fn parts(&self) -> [Option<&String>; TEMPLATE_PARTS] {
        let a = |i: usize| self.actions.get(i);
        [
            self.subject.as_ref(),
            self.body.as_ref(),
            self.html.as_ref(),
            self.url.as_ref(),
            a(0).map(|a| &a.label),
            a(0).map(|a| &a.url),
            a(1).map(|a| &a.label),
            a(1).map(|a| &a.url),
        ]
    }
}

/// One step of a flow. Stored as a flat struct (not a tagged enum) so the record
/// format stays simple; the API shape is the service's response body.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Step {
    /// `channel` or `delay`.
    pub kind: String,
    pub channel_id: Option<Uuid>,
    pub template: Option<Template>,
    pub seconds: Option<u64>,
    /// The step's condition (`if`), see `model::conditions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cond: Option<conditions::Conditions>,
    /// A throttle step: at most `limit` runs per `window` (a duration as
    /// given), per flow, recipient and key; the key's template is the step's
    /// `template.body` (see `delivery::throttle`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<String>,
    /// A channel step's send window (see `delivery::window`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_window: Option<crate::delivery::window::SendWindow>,
    /// A batch step with a sliding window: the longest a batch stays open
    /// from its first activity (a duration as given). `None`: a fixed
    /// window (see `delivery::batch`; a batch step keeps its `window` in
    /// `window`, its `max` in `limit` and its key in `template.body`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_window: Option<String>,
    /// An email step's layout (`model::ContentKind::Layout`): absent, the
    /// project's default layout; `Some(None)` (`"layout": null`), none;
    /// `Some(Some(handle))`, that one (`render::content`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "given"
    )]
    pub layout: Option<Option<String>>,
    /// A channel step's backups, of its channel's type, in order: a
    /// delivery its channel cannot send (a permanent failure, retries used
    /// up, an open circuit) moves to the next one (`delivery::failover`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fallback_channel_ids: Vec<Uuid>,
}

/// A field that may be given as null (`Some(None)`), unlike an absent one.
fn given<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(d).map(Some)
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Flow {
    pub id: Uuid,
    pub handle: String,
    pub name: String,
    pub description: Option<String>,
    pub status: FlowStatus,
    pub steps: Vec<Step>,
    /// A critical flow's deliveries ignore the recipient's opt-outs
    /// (`rules::critical`). Flows stored before it existed read as `false`.
    #[serde(default)]
    pub critical: bool,
    /// A commercial (marketing) flow's email carries one-click unsubscribe
    /// (`rules::unsubscribe_link`); a transactional one's does not. Flows
    /// stored before it existed read as `false`.
    #[serde(default)]
    pub commercial: bool,
    /// The preference categories it belongs to (handles of
    /// `Project::categories`): a user who turns one off does not get it
    /// (`rules::preferences`). Flows stored before categories had none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}
