//! Route steps in flow bodies: the step as a response shows it and a
//! request gives it (`RouteStep`), and its checks (`route_step`): at most
//! `MAX_ROUTE_CHANNELS` channels, each checked as a channel step is, a
//! success from the list, and an `after` that is a duration.

use super::channel::{channel_step, layout_of};
use super::given::{StepInput, Steps};
use super::Template;
use crate::extract::Given;
use herald_engine::delivery::clock::Span;
use herald_engine::delivery::conditions::Conditions;
use herald_engine::model::{self, RouteSuccess, MAX_ROUTE_CHANNELS};
use herald_engine::Validator;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;
use uuid::Uuid;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RouteStepType {
    Route,
}

/// When a route has reached its recipient: `sent` (the provider accepted
/// a hop), `delivered` (the provider reported it delivered), or an in-app
/// hop of the route `seen`, `read`, `clicked`, or any of these three
/// (`interacted`).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RouteSuccessType {
    Sent,
    Delivered,
    Seen,
    Read,
    Clicked,
    Interacted,
}

impl From<RouteSuccess> for RouteSuccessType {
    fn from(s: RouteSuccess) -> Self {
        match s {
            RouteSuccess::Sent => Self::Sent,
            RouteSuccess::Delivered => Self::Delivered,
            RouteSuccess::Seen => Self::Seen,
            RouteSuccess::Read => Self::Read,
            RouteSuccess::Clicked => Self::Clicked,
            RouteSuccess::Interacted => Self::Interacted,
        }
    }
}

/// One channel of a route step. Also a route channel of a request.
#[derive(Serialize, ToSchema)]
pub struct RouteChannel {
    /// How long after the previous channel went out this one is tried, if
    /// the route's success has not been met by then (a duration:
    /// `"90s"`, `"15m"`, `"1h"`); absent: at once. Ignored on the first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    pub channel_id: Uuid,
    /// The channel's condition (see `ChannelStep.if`); false: the channel
    /// is skipped and the next one tried at once.
    #[serde(rename = "if", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub cond: Option<Value>,
    /// An email channel's layout (see `ChannelStep.layout`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, pattern = "^[a-z0-9][a-z0-9_-]{0,63}$")]
    pub layout: Option<Option<String>>,
    pub template: Template,
    /// Backup channels of the channel's type, in order (see
    /// `ChannelStep.fallback_channel_ids`). Absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schema(required = false, max_items = 3)]
    pub fallback_channel_ids: Vec<Uuid>,
}

/// Channels tried one after another until one reaches the recipient: the
/// first it can receive goes at once, each next one `after` the previous
/// one went out unless `success` is met by then; a channel it cannot
/// receive, or that fails for good, lets the next go at once. Each
/// channel tried is a delivery of the notification; the ones not needed
/// end `skipped` (`route_satisfied`). Later steps wait for the route to
/// end. Also the route step of a request.
#[derive(Serialize, ToSchema)]
pub struct RouteStep {
    /// From 1 to 5 channels, tried in order.
    #[schema(min_items = 1, max_items = 5)]
    pub channels: Vec<RouteChannel>,
    /// The route's condition (see `ChannelStep.if`).
    #[serde(rename = "if", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub cond: Option<Value>,
    pub success: RouteSuccessType,
    #[serde(rename = "type")]
    pub kind: RouteStepType,
}

impl From<&model::Step> for RouteStep {
    fn from(s: &model::Step) -> Self {
        RouteStep {
            channels: s
                .channels
                .iter()
                .map(|c| RouteChannel {
                    after: c.after.clone(),
                    channel_id: c.channel_id,
                    cond: c.cond.as_ref().map(|c| c.view()),
                    layout: c.layout.clone(),
                    template: Template::from(&c.template),
                    fallback_channel_ids: c.fallback_channel_ids.clone(),
                })
                .collect(),
            cond: s.cond.as_ref().map(|c| c.view()),
            success: s.success.unwrap_or(RouteSuccess::Sent).into(),
            kind: RouteStepType::Route,
        }
    }
}

/// Route step `i` (at path `steps.<i>`, its own `if` already read as
/// `cond`): its channels' templates join `out.probes`, their layouts
/// `out.layouts`. `steps_before` are the earlier steps a condition may name.
pub(super) fn route_step(
    s: &StepInput, i: usize, cond: Option<Conditions>, channels: &[model::Channel],
    steps_before: &[usize], out: &mut Steps, v: &mut Validator,
) -> model::Step {
    let p = &format!("steps.{i}");
    let success = match &s.success {
        Given::Value(x) => match RouteSuccess::parse(x) {
            Some(x) => Some(x),
            None => {
                v.push(
                    format!("{p}.success"),
                    "inclusion",
                    "one of sent, delivered, seen, read, clicked, interacted",
                );
                None
            }
        },
        Given::Absent | Given::Null => {
            v.push(format!("{p}.success"), "required", "is required");
            None
        }
        Given::Wrong(_) => {
            v.push(
                format!("{p}.success"),
                "format",
                "must be a string: one of sent, delivered, seen, read, clicked, interacted",
            );
            None
        }
    };
    if out.steps.iter().any(|st| st.kind == "batch") {
        v.push(
            format!("{p}.type"),
            "inclusion",
            "a route step cannot follow a batch step",
        );
    }
    let cp = format!("{p}.channels");
    let items = match &s.channels {
        Given::Value(items) if (1..=MAX_ROUTE_CHANNELS).contains(&items.len()) => items,
        Given::Value(_) => {
            v.push(
                &cp,
                "length",
                format!("from 1 to {MAX_ROUTE_CHANNELS} channels"),
            );
            return route(success, cond, vec![]);
        }
        Given::Absent | Given::Null => {
            v.push(&cp, "required", "is required");
            return route(success, cond, vec![]);
        }
        Given::Wrong(_) => {
            v.push(&cp, "format", "must be an array of channels");
            return route(success, cond, vec![]);
        }
    };
    let mut hops = vec![];
    for (h, item) in items.iter().enumerate() {
        let hp = format!("{cp}.{h}");
        let c: StepInput = match item {
            Value::Object(_) => serde_json::from_value(item.clone()).unwrap_or_default(),
            _ => {
                v.push(&hp, "format", "must be an object");
                continue;
            }
        };
        let step = channel_step(&c, &hp, channels, &mut out.probes, v);
        let layout = layout_of(&c, &hp, channels, v);
        if let Some(Some(h)) = &layout {
            out.layouts.push((format!("{hp}.layout"), h.clone()));
        }
        let after = match &c.after {
            Given::Absent | Given::Null => None,
            // `0s`, the default, said outright
            Given::Value(a) if Span::is_zero(a) => Some(a.clone()),
            Given::Value(a) => Span::field(a, &format!("{hp}.after"), v).map(|_| a.clone()),
            Given::Wrong(_) => {
                v.push(format!("{hp}.after"), "format", "must be a duration string");
                None
            }
        };
        let hop_cond = match &c.cond {
            Given::Value(x) => Conditions::parse(x, &hp, i, steps_before, true, v),
            _ => None,
        };
        if c.send_window.is_some() {
            v.push(
                format!("{hp}.send_window"),
                "exclusion",
                "a route's channel has no send window",
            );
        }
        if let (Some(channel_id), Some(template)) = (step.channel_id, step.template) {
            hops.push(model::RouteChannel {
                channel_id,
                template,
                after,
                cond: hop_cond,
                layout,
                fallback_channel_ids: step.fallback_channel_ids,
            });
        }
    }
    route(success, cond, hops)
}

fn route(
    success: Option<RouteSuccess>, cond: Option<Conditions>, channels: Vec<model::RouteChannel>,
) -> model::Step {
    model::Step {
        kind: "route".into(),
        channel_id: None,
        template: None,
        seconds: None,
        cond,
        limit: None,
        window: None,
        send_window: None,
        max_window: None,
        layout: None,
        fallback_channel_ids: vec![],
        success,
        channels,
    }
}
