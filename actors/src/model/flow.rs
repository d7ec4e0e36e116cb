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
/// The most channels one route step tries (`Step::channels`): a hop's
/// delivery id carries `step + MAX_STEPS * hop` in one byte
/// (`model::hop_delivery_id`), below the notification tag.
pub const MAX_ROUTE_CHANNELS: usize = 5;

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
    /// A route step: when the route has reached its recipient
    /// (`delivery::route`). `None` on every other step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success: Option<RouteSuccess>,
    /// A route step's channels, tried one after another (at most
    /// `MAX_ROUTE_CHANNELS`). Empty on every other step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub channels: Vec<RouteChannel>,
}

/// One channel of a route step: what a channel step has, and how long
/// after the previous channel went out it is tried.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RouteChannel {
    pub channel_id: Uuid,
    pub template: Template,
    /// A duration as given (`delivery::clock::Span`); `None`: at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// The channel's own condition (`if`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cond: Option<conditions::Conditions>,
    /// An email channel's layout, as a channel step's `layout`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "given"
    )]
    pub layout: Option<Option<String>>,
    /// The channel's backups, as a channel step's `fallback_channel_ids`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fallback_channel_ids: Vec<Uuid>,
}

impl RouteChannel {
    /// `after` in milliseconds (0 when absent or unreadable).
    pub fn after_ms(&self) -> i64 {
        self.after
            .as_deref()
            .and_then(|a| crate::delivery::clock::Span::parse(a).ok())
            .map_or(0, |s| s.millis())
    }

    /// The channel step this channel is sent as: its channel, template and
    /// layout (what staging and previews render).
    pub fn as_step(&self) -> Step {
        Step {
            kind: "channel".into(),
            channel_id: Some(self.channel_id),
            template: Some(self.template.clone()),
            seconds: None,
            cond: None,
            limit: None,
            window: None,
            send_window: None,
            max_window: None,
            layout: self.layout.clone(),
            fallback_channel_ids: self.fallback_channel_ids.clone(),
            success: None,
            channels: vec![],
        }
    }
}

/// When a route has reached its recipient: its hop's delivery was `sent`
/// (accepted by the provider) or `delivered` (the provider's feedback), or
/// an in-app hop of the route was `seen`, `read`, `clicked`, or any of
/// these three (`interacted`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RouteSuccess {
    Sent,
    Delivered,
    Seen,
    Read,
    Clicked,
    Interacted,
}

impl RouteSuccess {
    pub const ALL: [RouteSuccess; 6] = [
        Self::Sent,
        Self::Delivered,
        Self::Seen,
        Self::Read,
        Self::Clicked,
        Self::Interacted,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sent => "sent",
            Self::Delivered => "delivered",
            Self::Seen => "seen",
            Self::Read => "read",
            Self::Clicked => "clicked",
            Self::Interacted => "interacted",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|x| x.as_str() == s)
    }
}

impl Flow {
    /// Every template of the flow with the slot it is compiled under
    /// (`render`): a step's own at its index, a route channel's at its
    /// hop's delivery id byte (`step + MAX_STEPS * hop`).
    pub fn template_slots(&self) -> Vec<(usize, &Template)> {
        let mut out = vec![];
        for (i, step) in self.steps.iter().enumerate() {
            if let Some(t) = &step.template {
                out.push((i, t));
            }
            for (h, c) in step.channels.iter().enumerate() {
                out.push((i + MAX_STEPS * h, &c.template));
            }
        }
        out
    }
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
