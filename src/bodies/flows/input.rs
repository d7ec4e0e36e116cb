//! The create and update requests of a flow: the steps as given, checked
//! against the project's channels and the step rules (a channel step's
//! template, a delay's length, a throttle's or batch's window and key), and
//! what a create or update then changes.

use crate::extract::{Given, Obj};
use herald_engine::delivery::clock::Span;
use herald_engine::delivery::conditions::Conditions;
use herald_engine::model::{
    self, MAX_BATCH_MAX, MAX_DELAY, MAX_FALLBACKS, MAX_STEPS, MAX_THROTTLE_LIMIT,
};
use herald_engine::{validate, Validator};
use serde::Deserialize;
use serde_json::Value;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::openapi::{Ref, RefOr};
use utoipa::ToSchema;

use super::channel::{channel_step, layout_of};
use super::given::{StepInput, Steps};
use super::{ChannelStepType, Template};
use crate::bodies::preferences::flow_categories;

/// The project's declared preference categories, by handle.
pub type Declared = std::collections::BTreeMap<String, model::Category>;

/// `ChannelStepInput`: a channel step as a request gives it (the channel is required).
pub fn channel_step_input() -> RefOr<Schema> {
    ObjectBuilder::new()
        .description(Some(
            "A channel step as a request gives it: the channel is required.",
        ))
        .property("type", Ref::from_schema_name(ChannelStepType::name()))
        .required("type")
        .property(
            "channel_id",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::Uuid))),
        )
        .required("channel_id")
        .property("template", Ref::from_schema_name(Template::name()))
        .required("template")
        .property(
            "if",
            ObjectBuilder::new().description(Some(
                "The step's condition (see DelayStep.if); rules may also name earlier channel steps.",
            )),
        )
        .property(
            "send_window",
            ObjectBuilder::new().description(Some(
                "When the step may deliver (see ChannelStep.send_window).",
            )),
        )
        .property(
            "layout",
            ObjectBuilder::new()
                .schema_type(utoipa::openapi::schema::SchemaType::from_iter([
                    Type::String,
                    Type::Null,
                ]))
                .pattern(Some("^[a-z0-9][a-z0-9_-]{0,63}$"))
                .description(Some(
                    "An email step's layout (see ChannelStep.layout): a handle, or null for none.",
                )),
        )
        .property(
            "fallback_channel_ids",
            utoipa::openapi::schema::ArrayBuilder::new()
                .schema_type(utoipa::openapi::schema::SchemaType::from_iter([
                    Type::Array,
                    Type::Null,
                ]))
                .items(
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Uuid))),
                )
                .max_items(Some(MAX_FALLBACKS))
                .unique_items(true)
                .description(Some(
                    "Backup channels of the step's channel type, in order (see ChannelStep.fallback_channel_ids); not on an in_app step.",
                )),
        )
        .into()
}

type StepsGiven = Given<Vec<Given<Obj<StepInput>>>>;

#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"handle": "welcome", "name": "Welcome", "description": "Sent after sign-up", "steps": [{"type": "delay", "seconds": 0}]}))]
pub struct FlowInput {
    /// Unique in the project, not shaped like a UUID.
    #[serde(default)]
    #[schema(value_type = String, required = true, pattern = "^[a-z0-9][a-z0-9_-]{0,63}$")]
    pub handle: Given<String>,
    #[serde(default)]
    #[schema(value_type = String, required = true, min_length = 1, max_length = 200)]
    pub name: Given<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 1000)]
    pub description: Given<String>,
    #[serde(default)]
    #[schema(value_type = Option<Vec<StepInput>>)]
    pub steps: StepsGiven,
    /// Its deliveries ignore the recipient's preferences and quiet hours
    /// (and will ignore one-click unsubscribe); false when absent.
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub critical: Given<bool>,
    /// A commercial (marketing) flow: its email carries one-click
    /// unsubscribe (`List-Unsubscribe`, `List-Unsubscribe-Post`) and
    /// `{{ unsubscribe_url }}` is its link; false (transactional) when
    /// absent. Active only on a server with a public URL (409
    /// `public_url_required`); not with `critical` (422 `exclusion`).
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub commercial: Given<bool>,
    /// The preference categories it belongs to (declared handles, at most
    /// 10); none when absent.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>, max_items = 10)]
    pub categories: Given<Value>,
}

/// Partial update; `handle` cannot change.
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"name": "Welcome (v2)"}))]
pub struct FlowUpdate {
    /// Only the flow's own handle.
    #[serde(default)]
    #[schema(value_type = String, pattern = "^[a-z0-9][a-z0-9_-]{0,63}$")]
    pub handle: Given<String>,
    #[serde(default)]
    #[schema(value_type = String, min_length = 1, max_length = 200)]
    pub name: Given<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 1000)]
    pub description: Given<String>,
    #[serde(default)]
    #[schema(value_type = Vec<StepInput>)]
    pub steps: StepsGiven,
    /// See `FlowInput.critical`; absent keeps it.
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub critical: Given<bool>,
    /// See `FlowInput.commercial`; absent keeps it.
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub commercial: Given<bool>,
    /// See `FlowInput.categories`; absent keeps them, null or `[]` clears.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>, max_items = 10)]
    pub categories: Given<Value>,
}

/// What a flow create gives.
pub struct NewFlow {
    pub handle: String,
    pub name: String,
    pub description: Option<String>,
    pub steps: Steps,
    pub critical: bool,
    pub commercial: bool,
    pub categories: Vec<String>,
}

impl NewFlow {
    /// The flow record it makes: a draft with a new id.
    pub fn into_draft(self) -> model::Flow {
        let (id, now) = model::new_id();
        model::Flow {
            id,
            handle: self.handle,
            name: self.name,
            description: self.description,
            status: model::FlowStatus::Draft,
            steps: self.steps.steps,
            critical: self.critical,
            commercial: self.commercial,
            categories: self.categories,
            created_at: now,
            updated_at: now,
        }
    }
}

/// What a flow update changes: `None` keeps, `Some(None)` clears.
pub struct FlowChange {
    pub name: Option<String>,
    pub description: Option<Option<String>>,
    pub steps: Option<Steps>,
    pub critical: Option<bool>,
    pub commercial: Option<bool>,
    pub categories: Option<Vec<String>>,
}

impl FlowInput {
    /// Whether the steps name channels (the handler loads them only then).
    pub fn has_steps(&self) -> bool {
        matches!(self.steps, Given::Value(_))
    }

    /// The checked flow, problems left in `v` (the handler still probes the
    /// templates before `v.finish()`; a field left empty here has its problem
    /// in `v`).
    /// Whether it names categories (the handler loads them only then).
    pub fn has_categories(&self) -> bool {
        !matches!(self.categories, Given::Absent)
    }

    pub fn validate(
        &self, channels: &[model::Channel], declared: &Declared, v: &mut Validator,
    ) -> NewFlow {
        let handle = self.handle.required_text("handle", 64, v);
        if let Some(h) = &handle {
            if !validate::is_handle(h) {
                v.push(
                    "handle",
                    "format",
                    "lowercase letters, digits, _ and -, at most 64, not a UUID",
                );
            }
        }
        let name = self.name.required_text("name", 200, v);
        let description = self.description.text("description", 1000, v).flatten();
        let steps = match &self.steps {
            Given::Absent | Given::Null => Steps::default(),
            given => steps(given, channels, v),
        };
        let critical = self.critical.flag("critical", v).unwrap_or(false);
        let commercial = self.commercial.flag("commercial", v).unwrap_or(false);
        not_critical_and_commercial(critical, commercial, v);
        let categories = flow_categories(&self.categories, declared, v).unwrap_or_default();
        NewFlow {
            categories,
            handle: handle.unwrap_or_default(),
            name: name.unwrap_or_default(),
            description,
            steps,
            critical,
            commercial,
        }
    }
}

/// A critical flow ignores opt-outs, and a commercial one offers one: a
/// flow is not both.
fn not_critical_and_commercial(critical: bool, commercial: bool, v: &mut Validator) {
    if critical && commercial {
        v.push(
            "commercial",
            "exclusion",
            "a critical flow cannot be commercial: its deliveries ignore opt-outs",
        );
    }
}

impl FlowUpdate {
    pub fn has_steps(&self) -> bool {
        matches!(self.steps, Given::Value(_))
    }

    pub fn has_categories(&self) -> bool {
        !matches!(self.categories, Given::Absent)
    }

    /// The change to `flow` (problems left in `v`, as for a create).
    pub fn validate(
        &self, flow: &model::Flow, channels: &[model::Channel], declared: &Declared,
        v: &mut Validator,
    ) -> FlowChange {
        if !matches!(&self.handle, Given::Absent)
            && !matches!(&self.handle, Given::Value(h) if *h == flow.handle)
        {
            v.push("handle", "exclusion", "a flow's handle cannot change");
        }
        let name = self.name.text("name", 200, v);
        if matches!(&name, Some(None)) || matches!(&name, Some(Some(n)) if n.is_empty()) {
            v.push("name", "required", "a flow needs a name");
        }
        let description = self.description.text("description", 1000, v);
        let steps = match &self.steps {
            Given::Absent => None,
            given => Some(steps(given, channels, v)),
        };
        let critical = self.critical.flag("critical", v);
        let commercial = self.commercial.flag("commercial", v);
        not_critical_and_commercial(
            critical.unwrap_or(flow.critical),
            commercial.unwrap_or(flow.commercial),
            v,
        );
        FlowChange {
            name: name.flatten(),
            description,
            steps,
            critical,
            commercial,
            categories: flow_categories(&self.categories, declared, v),
        }
    }
}

/// Checks `steps`: channel ids of this project, templates that compile.
fn steps(given: &StepsGiven, channels: &[model::Channel], v: &mut Validator) -> Steps {
    let mut out = Steps::default();
    let Given::Value(items) = given else {
        v.push("steps", "format", "must be an array");
        return out;
    };
    if items.len() > MAX_STEPS {
        v.push(
            "steps",
            "length",
            format!("a flow has at most {MAX_STEPS} steps"),
        );
        return out;
    }
    // The channel steps, which a later step's condition may name.
    let channel_steps: Vec<usize> = items
        .iter()
        .enumerate()
        .filter(|(_, it)| matches!(it, Given::Value(Obj(s)) if matches!(&s.kind, Given::Value(k) if k == "channel" || k == "route")))
        .map(|(i, _)| i)
        .collect();
    for (i, item) in items.iter().enumerate() {
        let p = format!("steps.{i}");
        let Given::Value(Obj(s)) = item else {
            v.push(p, "format", "must be an object");
            continue;
        };
        let is_channel = matches!(&s.kind, Given::Value(k) if k == "channel" || k == "route");
        let cond = match &s.cond {
            Given::Absent | Given::Null => None,
            Given::Value(c) => Conditions::parse(c, &p, i, &channel_steps, is_channel, v),
            Given::Wrong(_) => None,
        };
        match &s.kind {
            Given::Value(k) if k == "channel" => {
                let mut step = channel_step(s, &p, channels, &mut out.probes, v);
                step.cond = cond;
                step.layout = layout_of(s, &p, channels, v);
                if let Some(Some(h)) = &step.layout {
                    out.layouts.push((format!("{p}.layout"), h.clone()));
                }
                out.steps.push(step);
            }
            Given::Value(k) if k == "route" => {
                let before: Vec<usize> = channel_steps.iter().copied().filter(|&j| j < i).collect();
                let step = super::route::route_step(s, i, cond, channels, &before, &mut out, v);
                out.steps.push(step);
            }
            Given::Value(k) if k == "delay" => {
                let seconds = match &s.seconds {
                    Given::Absent => {
                        v.push(format!("{p}.seconds"), "required", "is required");
                        None
                    }
                    Given::Value(n) if *n <= MAX_DELAY => Some(*n),
                    _ => {
                        v.push(
                            format!("{p}.seconds"),
                            "number",
                            "whole seconds from 0 to 2592000",
                        );
                        None
                    }
                };
                out.steps.push(model::Step {
                    kind: "delay".into(),
                    channel_id: None,
                    template: None,
                    seconds,
                    cond,
                    limit: None,
                    window: None,
                    send_window: None,
                    max_window: None,
                    layout: None,
                    fallback_channel_ids: vec![],
                    success: None,
                    channels: vec![],
                });
            }
            Given::Value(k) if k == "throttle" => {
                out.steps
                    .push(throttle_step(s, &p, cond, &mut out.probes, v));
            }
            Given::Value(k) if k == "batch" => {
                if out.steps.iter().any(|st| st.kind == "batch") {
                    v.push(
                        format!("{p}.type"),
                        "inclusion",
                        "a flow has at most one batch step",
                    );
                }
                out.steps.push(batch_step(s, &p, cond, &mut out.probes, v));
            }
            Given::Value(_) => v.push(
                format!("{p}.type"),
                "inclusion",
                "one of channel, delay, throttle, batch, route",
            ),
            _ => v.push(format!("{p}.type"), "required", "is required"),
        }
    }
    out
}

/// The `key` of a throttle or batch step at path `p`: a template (checked
/// here and probed with the flow's others), kept as the body of the step's
/// template, which is rendered like a channel step's body.
fn key_template(
    s: &StepInput, p: &str, probes: &mut Vec<(String, String)>, v: &mut Validator,
) -> Option<model::Template> {
    let path = format!("{p}.key");
    let src = match s.key.text(&path, 1000, v) {
        Some(Some(src)) => src,
        _ => return None,
    };
    if let Err(e) = herald_engine::render::check(&src) {
        v.push(&path, "format", format!("template does not compile: {e}"));
    } else {
        probes.push((path, src.clone()));
    }
    Some(model::Template {
        body: Some(src),
        ..Default::default()
    })
}

/// The required `window` of a throttle or batch step at path `p`: as given,
/// and as the span it says.
fn step_window(s: &StepInput, p: &str, v: &mut Validator) -> Option<(String, Span)> {
    match &s.window {
        Given::Value(w) => Span::field(w, &format!("{p}.window"), v).map(|sp| (w.clone(), sp)),
        Given::Absent | Given::Null => {
            v.push(format!("{p}.window"), "required", "is required");
            None
        }
        Given::Wrong(_) => {
            v.push(format!("{p}.window"), "format", "must be a duration string");
            None
        }
    }
}

/// One throttle step at path `p`; its key template joins `probes`.
fn throttle_step(
    s: &StepInput, p: &str, cond: Option<herald_engine::delivery::conditions::Conditions>,
    probes: &mut Vec<(String, String)>, v: &mut Validator,
) -> model::Step {
    let limit = match &s.limit {
        Given::Value(n) if (1..=MAX_THROTTLE_LIMIT).contains(n) => Some(*n),
        Given::Absent | Given::Null => {
            v.push(format!("{p}.limit"), "required", "is required");
            None
        }
        _ => {
            v.push(
                format!("{p}.limit"),
                "number",
                format!("a whole number from 1 to {MAX_THROTTLE_LIMIT}"),
            );
            None
        }
    };
    let window = step_window(s, p, v).map(|(w, _)| w);
    let key = key_template(s, p, probes, v);
    model::Step {
        kind: "throttle".into(),
        channel_id: None,
        template: key,
        seconds: None,
        cond,
        limit,
        window,
        send_window: None,
        max_window: None,
        layout: None,
        fallback_channel_ids: vec![],
        success: None,
        channels: vec![],
    }
}

/// One batch step at path `p`; its key template joins `probes`.
fn batch_step(
    s: &StepInput, p: &str, cond: Option<herald_engine::delivery::conditions::Conditions>,
    probes: &mut Vec<(String, String)>, v: &mut Validator,
) -> model::Step {
    let window = step_window(s, p, v);
    let max = match &s.max {
        Given::Absent | Given::Null => None,
        Given::Value(n) if (1..=MAX_BATCH_MAX).contains(n) => Some(*n),
        _ => {
            v.push(
                format!("{p}.max"),
                "number",
                format!("a whole number from 1 to {MAX_BATCH_MAX}"),
            );
            None
        }
    };
    let sliding = match &s.window_type {
        Given::Absent | Given::Null => false,
        Given::Value(t) if t == "fixed" => false,
        Given::Value(t) if t == "sliding" => true,
        _ => {
            v.push(
                format!("{p}.window_type"),
                "inclusion",
                "one of fixed, sliding",
            );
            false
        }
    };
    let mw_path = format!("{p}.max_window");
    let max_window = match (&s.max_window, sliding) {
        (Given::Absent | Given::Null, false) => None,
        (Given::Absent | Given::Null, true) => window.as_ref().map(|(_, sp)| {
            // Ten times the window by default, within the longest span.
            let secs = (sp.millis() / 1000).saturating_mul(10).min(3650 * 86_400);
            format!("{secs}s")
        }),
        (_, false) => {
            v.push(
                &mw_path,
                "inclusion",
                "only a sliding window (window_type sliding) has a max_window",
            );
            None
        }
        (Given::Value(m), true) => match Span::field(m, &mw_path, v) {
            Some(sp) => {
                if window
                    .as_ref()
                    .is_some_and(|(_, w)| sp.millis() < w.millis())
                {
                    v.push(&mw_path, "number", "must be at least the window");
                }
                Some(m.clone())
            }
            None => None,
        },
        (Given::Wrong(_), true) => {
            v.push(&mw_path, "format", "must be a duration string");
            None
        }
    };
    let key = key_template(s, p, probes, v);
    model::Step {
        kind: "batch".into(),
        channel_id: None,
        template: key,
        seconds: None,
        cond,
        limit: max,
        window: window.map(|(w, _)| w),
        send_window: None,
        max_window,
        layout: None,
        fallback_channel_ids: vec![],
        success: None,
        channels: vec![],
    }
}
