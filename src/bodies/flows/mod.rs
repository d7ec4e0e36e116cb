//! Flow bodies: the Flow response with its steps (here), the create and
//! update requests (`input`) and the run request (`run`). Steps are checked
//! against the project's channels when a request is read; whether a template
//! stays within its render limits is probed by the handler afterwards, on the
//! blocking pool (`Steps::probes`).

mod channel;
mod fallbacks;
mod given;
mod input;
mod preview;
mod route;
mod run;

pub use given::{StepInput, Steps, TemplateInput};
pub use input::*;
pub use preview::*;
pub use route::*;
pub use run::*;

use herald_engine::model::{self, Timestamp};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

// ---------------------------------------------------------------- responses

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FlowStatus {
    Draft,
    Active,
    Archived,
}

impl From<model::FlowStatus> for FlowStatus {
    fn from(s: model::FlowStatus) -> Self {
        match s {
            model::FlowStatus::Draft => FlowStatus::Draft,
            model::FlowStatus::Active => FlowStatus::Active,
            model::FlowStatus::Archived => FlowStatus::Archived,
        }
    }
}

/// MiniJinja templates over `recipient`, `actor`, `data` and `flow`.
#[derive(Serialize, ToSchema)]
pub struct Template {
    /// Required in every channel step.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = String, required = true, max_length = 65536)]
    pub body: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 65536)]
    pub html: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 65536)]
    pub subject: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 65536)]
    pub url: Option<String>,
    /// An in_app step's action buttons (at most 2), rendered into each feed
    /// entry's `data.actions`; absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schema(max_items = 2)]
    pub actions: Vec<TemplateAction>,
}

/// An action button of an in_app template: both fields are templates.
#[derive(Serialize, ToSchema)]
pub struct TemplateAction {
    #[schema(min_length = 1, max_length = 65536)]
    pub label: String,
    #[schema(min_length = 1, max_length = 65536)]
    pub url: String,
}

impl From<&model::Template> for Template {
    fn from(t: &model::Template) -> Self {
        Template {
            body: t.body.clone(),
            html: t.html.clone(),
            subject: t.subject.clone(),
            url: t.url.clone(),
            actions: t
                .actions
                .iter()
                .map(|a| TemplateAction {
                    label: a.label.clone(),
                    url: a.url.clone(),
                })
                .collect(),
        }
    }
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChannelStepType {
    Channel,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DelayStepType {
    Delay,
}

#[derive(Serialize, ToSchema)]
pub struct ChannelStep {
    pub channel_id: Option<Uuid>,
    /// Backup channels of the step's channel type, in order (at most 3; not
    /// on an in_app step): a delivery its channel fails for good, whose
    /// retries run out, or whose channel is degraded, moves to the next one
    /// (the same delivery id). Absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schema(required = false, max_items = 3)]
    pub fallback_channel_ids: Vec<Uuid>,
    /// When the step may deliver, in the recipient's timezone (UTC when
    /// none): `{"days": ["mon", …], "from": "09:00", "to": "18:00"}`; a `to`
    /// not after `from` runs across midnight. Reached outside it, the step
    /// and the run after it wait until it opens. Absent when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub send_window: Option<Value>,
    /// The step's condition (see `DelayStep.if`); absent when it has none.
    #[serde(rename = "if", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub cond: Option<Value>,
    /// An email step's layout: a handle, or null for none; absent, the
    /// project's `default_layout` applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, pattern = "^[a-z0-9][a-z0-9_-]{0,63}$")]
    pub layout: Option<Option<String>>,
    pub template: Template,
    #[serde(rename = "type")]
    pub kind: ChannelStepType,
}

// Also the delay step of a request.
#[derive(Serialize, ToSchema)]
pub struct DelayStep {
    /// A condition: an array of rules `{path, op, value}` that must all
    /// hold, or `{"all": [...]}` / `{"any": [...]}`. `op`: eq, neq, gt, gte,
    /// lt, lte, in, not_in, contains, exists, not_exists; `path`:
    /// `data.…`, `recipient.…`, `actor.…`, or (channel steps)
    /// `steps.<index>.status|read|seen|clicked|interacted` of an earlier channel step,
    /// evaluated when the step is reached. False: the step is skipped
    /// (`condition_false`). Absent when the step has none.
    #[serde(rename = "if", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub cond: Option<Value>,
    #[schema(minimum = 0, maximum = 2592000)]
    pub seconds: u64,
    #[serde(rename = "type")]
    pub kind: DelayStepType,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ThrottleStepType {
    Throttle,
}

/// At most `limit` runs per `window` pass, per flow, recipient and `key`;
/// a run beyond stops here for that recipient (its notification is
/// `throttled`). Also the throttle step of a request.
#[derive(Serialize, ToSchema)]
pub struct ThrottleStep {
    /// A condition, as on any step (see `DelayStep.if`).
    #[serde(rename = "if", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub cond: Option<Value>,
    /// A template over the run (e.g. `{{ data.thread_id }}`): separate
    /// counters per rendered key. Absent: one counter per recipient.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 1000)]
    pub key: Option<String>,
    #[schema(minimum = 1, maximum = 1000)]
    pub limit: u32,
    #[serde(rename = "type")]
    pub kind: ThrottleStepType,
    /// A duration: `"90s"`, `"15m"`, `"1h"`, `"2d"`, `"1h 30m"`.
    pub window: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BatchStepType {
    Batch,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BatchWindowType {
    Fixed,
    Sliding,
}

/// Gathers runs into one digest, per flow, recipient and `key`: the first
/// run to reach the step opens a batch and waits until it closes (its
/// `window` ends, or `max` activities are in); runs reaching it meanwhile
/// join it and end there (their notifications are `batched`, with
/// `batched_into`). The opener's later steps then render with
/// `batch.activities` (each run's `data` and `actor`), `batch.count` and
/// `batch.actors`. Also the batch step of a request. A flow has at most one.
#[derive(Serialize, ToSchema)]
pub struct BatchStep {
    /// A condition, as on any step (see `DelayStep.if`); false: the run
    /// does not batch and goes on.
    #[serde(rename = "if", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub cond: Option<Value>,
    /// A template over the run (e.g. `{{ data.thread_id }}`): separate
    /// batches per rendered key. Absent: one batch per recipient.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 1000)]
    pub key: Option<String>,
    /// Closes the batch as soon as it holds this many activities (the
    /// opener's included). Absent: no limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 10000)]
    pub max: Option<u32>,
    /// Sliding windows only: the longest a batch stays open from its first
    /// activity (a duration). Defaults to ten times the window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_window: Option<String>,
    #[serde(rename = "type")]
    pub kind: BatchStepType,
    /// A duration: `"90s"`, `"15m"`, `"1h"`, `"2d"`, `"1h 30m"`.
    pub window: String,
    /// `fixed` (the default): the batch closes `window` after its first
    /// activity. `sliding`: each activity moves the close to its own time
    /// plus `window`, never beyond the first activity plus `max_window`.
    #[schema(required = false)]
    pub window_type: BatchWindowType,
}

/// A channel step (deliver through a channel), a delay step (wait durably),
/// a throttle step, a batch step or a route step (channels tried one after
/// another).
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum Step {
    Channel(ChannelStep),
    Delay(DelayStep),
    Throttle(ThrottleStep),
    Batch(BatchStep),
    Route(RouteStep),
}

impl From<&model::Step> for Step {
    fn from(s: &model::Step) -> Self {
        match s.kind.as_str() {
            "throttle" => Step::Throttle(ThrottleStep {
                cond: s.cond.as_ref().map(|c| c.view()),
                key: s.template.as_ref().and_then(|t| t.body.clone()),
                limit: s.limit.unwrap_or(1),
                kind: ThrottleStepType::Throttle,
                window: s.window.clone().unwrap_or_default(),
            }),
            "batch" => Step::Batch(BatchStep {
                cond: s.cond.as_ref().map(|c| c.view()),
                key: s.template.as_ref().and_then(|t| t.body.clone()),
                max: s.limit,
                max_window: s.max_window.clone(),
                kind: BatchStepType::Batch,
                window: s.window.clone().unwrap_or_default(),
                window_type: if s.max_window.is_some() {
                    BatchWindowType::Sliding
                } else {
                    BatchWindowType::Fixed
                },
            }),
            "route" => Step::Route(RouteStep::from(s)),
            "delay" => Step::Delay(DelayStep {
                cond: s.cond.as_ref().map(|c| c.view()),
                seconds: s.seconds.unwrap_or(0),
                kind: DelayStepType::Delay,
            }),
            _ => Step::Channel(ChannelStep {
                channel_id: s.channel_id,
                fallback_channel_ids: s.fallback_channel_ids.clone(),
                send_window: s.send_window.as_ref().map(|w| w.view()),
                cond: s.cond.as_ref().map(|c| c.view()),
                layout: s.layout.clone(),
                template: Template::from(&s.template.clone().unwrap_or_default()),
                kind: ChannelStepType::Channel,
            }),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct Flow {
    /// The preference categories it belongs to: a user who turns one off
    /// does not get it.
    pub categories: Vec<String>,
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Timestamp,
    /// Its deliveries ignore the recipient's preferences and quiet hours
    /// (and will ignore one-click unsubscribe).
    pub critical: bool,
    /// A commercial (marketing) flow: its email carries one-click
    /// unsubscribe; false: transactional.
    pub commercial: bool,
    pub description: Option<String>,
    pub handle: String,
    pub id: Uuid,
    pub name: String,
    pub status: FlowStatus,
    pub steps: Vec<Step>,
    #[schema(value_type = DateTime<Utc>)]
    pub updated_at: Timestamp,
}

impl From<&model::Flow> for Flow {
    fn from(f: &model::Flow) -> Self {
        Flow {
            categories: f.categories.clone(),
            created_at: f.created_at,
            critical: f.critical,
            commercial: f.commercial,
            description: f.description.clone(),
            handle: f.handle.clone(),
            id: f.id,
            name: f.name.clone(),
            status: f.status.into(),
            steps: f.steps.iter().map(Step::from).collect(),
            updated_at: f.updated_at,
        }
    }
}
