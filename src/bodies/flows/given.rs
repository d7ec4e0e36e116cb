//! The shapes of a flow's steps as a create or update gives them
//! (`StepInput`, `TemplateInput`, read field by field with `Given`), and
//! the checked steps they make (`Steps`), shared by the checks of every
//! step type (`input`, `channel`, `route`).

use crate::extract::{Given, Obj};
use herald_engine::model;
use serde::Deserialize;
use serde_json::Value;
use utoipa::openapi::schema::{OneOfBuilder, Schema};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

use super::{BatchStep, DelayStep, ThrottleStep};

/// A template as a request gives it.
#[derive(Deserialize, Default)]
pub struct TemplateInput {
    #[serde(default)]
    pub subject: Given<String>,
    #[serde(default)]
    pub body: Given<String>,
    #[serde(default)]
    pub html: Given<String>,
    #[serde(default)]
    pub url: Given<String>,
    /// An in_app step's action buttons, each `{label, url}`; read item by
    /// item so each wrong one gets its own error path.
    #[serde(default)]
    pub actions: Given<Vec<Value>>,
}

/// A step of a create or update as given; which fields count depends on its
/// `type`. Its schema is one object per step type (`StepInput` below).
#[derive(Deserialize, Default)]
pub struct StepInput {
    #[serde(default, rename = "type")]
    pub kind: Given<String>,
    #[serde(default)]
    pub channel_id: Given<String>,
    #[serde(default)]
    pub template: Given<Obj<TemplateInput>>,
    #[serde(default)]
    pub seconds: Given<u64>,
    #[serde(default, rename = "if")]
    pub cond: Given<Value>,
    #[serde(default)]
    pub limit: Given<u32>,
    #[serde(default)]
    pub window: Given<String>,
    #[serde(default)]
    pub key: Given<String>,
    #[serde(default)]
    pub send_window: Option<Value>,
    #[serde(default)]
    pub max: Given<u32>,
    #[serde(default)]
    pub window_type: Given<String>,
    #[serde(default)]
    pub max_window: Given<String>,
    #[serde(default)]
    pub layout: Given<String>,
    #[serde(default)]
    pub fallback_channel_ids: Given<Vec<Value>>,
    /// A route step's success and channels; a route channel's `after`
    /// (`route`).
    #[serde(default)]
    pub success: Given<String>,
    #[serde(default)]
    pub channels: Given<Vec<Value>>,
    #[serde(default)]
    pub after: Given<String>,
}

impl PartialSchema for StepInput {
    fn schema() -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(Ref::from_schema_name("ChannelStepInput"))
            .item(Ref::from_schema_name(DelayStep::name()))
            .item(Ref::from_schema_name(ThrottleStep::name()))
            .item(Ref::from_schema_name(BatchStep::name()))
            .item(Ref::from_schema_name(super::RouteStep::name()))
            .description(Some(
                "A step of a create or update: a channel, delay, throttle, batch or route step.",
            ))
            .into()
    }
}

impl ToSchema for StepInput {}

/// Checked steps, and the template sources still to probe: (field path, source).
#[derive(Default)]
pub struct Steps {
    pub steps: Vec<model::Step>,
    pub probes: Vec<(String, String)>,
    /// The layouts steps name, to check they exist: (field path, handle).
    pub layouts: Vec<(String, String)>,
}
