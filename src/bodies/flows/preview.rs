//! The preview request (`POST /admin/v1/flows/{id}/preview`, and
//! `POST /admin/v1/flows/preview` with an unsaved flow's body beside it)
//! and its answer: each channel step as a run would render it.

use super::run::RecipientSpec;
use crate::extract::{Given, Obj};
use herald_engine::delivery::{Preview, PreviewInput};
use herald_engine::model::{self, ChannelType};
use herald_engine::storage::RunRecipient;
use herald_engine::views::{DeliveryData, UserView};
use herald_engine::{validate, Validator};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;
use uuid::Uuid;

/// The fields of a preview request; the unsaved flow's fields go beside
/// them (`UNSAVED_FLOW_KEYS` tells them apart).
pub const PREVIEW_KEYS: [&str; 4] = ["user", "actor", "data", "locale"];

/// For whom and with what a flow is previewed.
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"user": "ada", "data": {"n": 1}, "locale": "fr"}))]
pub struct PreviewBody {
    /// The recipient: a user's external_id, or a user object (its
    /// external_id and fields: over the stored user's, in memory only). An
    /// external_id no user has previews the user a run would create.
    #[serde(default)]
    #[schema(value_type = RecipientSpec, required = true)]
    pub user: Given<RecipientSpec>,
    /// As a run's `actor`.
    #[serde(default)]
    #[schema(value_type = Option<RecipientSpec>)]
    pub actor: Given<RecipientSpec>,
    /// As a run's `data`.
    #[serde(default)]
    #[schema(value_type = Option<Map<String, Value>>)]
    pub data: Given<Map<String, Value>>,
    /// Renders as if the recipient's locale were this (a BCP 47 tag).
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "fr", format = "bcp47", max_length = 64)]
    pub locale: Given<String>,
}

impl PreviewBody {
    /// The engine's input for a preview of `flow` (every problem at once).
    pub fn validate(&self, flow: model::Flow, v: &mut Validator) -> Option<PreviewInput> {
        let user = match &self.user {
            Given::Value(RecipientSpec::ExternalId(ext)) => validate::external_id(ext, "user", v)
                .then(|| RunRecipient {
                    external_id: ext.clone(),
                    patch: Default::default(),
                }),
            Given::Value(RecipientSpec::User(u)) => {
                let Obj(r) = u.as_ref();
                r.validate("user", v)
                    .map(|(external_id, patch)| RunRecipient { external_id, patch })
            }
            Given::Absent | Given::Null => {
                v.push("user", "required", "is required");
                None
            }
            Given::Wrong(_) => {
                v.push("user", "format", "must be an external_id or a user object");
                None
            }
        };
        let actor = super::run::actor_of(&self.actor, v);
        let data = super::run::data_of(&self.data, v);
        let locale = match &self.locale {
            Given::Absent | Given::Null => None,
            Given::Value(l) if validate::is_locale(l) => Some(l.clone()),
            _ => {
                v.push("locale", "format", "must be a BCP 47 language tag");
                None
            }
        };
        Some(PreviewInput {
            flow,
            user: user?,
            actor,
            data,
            locale,
            timezone: None,
        })
    }
}

/// A preview's answer: the recipient as rendered and each channel step.
#[derive(Serialize, ToSchema)]
pub struct FlowPreview {
    /// The flow previewed; null for an unsaved one.
    pub flow_id: Option<Uuid>,
    /// The recipient as the templates saw it (the body's fields and
    /// `locale` applied; a user a run would create has a fresh id).
    pub user: UserView,
    /// Every channel step, in order.
    pub steps: Vec<StepPreview>,
}

/// One channel step: its content as the delivery would hold it, or why it
/// does not render.
#[derive(Serialize, ToSchema)]
pub struct StepPreview {
    /// The step's index in the flow.
    pub step: usize,
    pub channel_id: Uuid,
    /// Null when the channel no longer exists (a run fails the delivery).
    pub channel_type: Option<ChannelType>,
    /// The rendered parts, as the delivery's `data` holds them (absent when
    /// the step does not render).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<DeliveryData>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<StepPreviewError>,
    /// The `t()` keys no catalog of the fallback chain had: they render as
    /// the key, and a run traces each as `translation_missing`.
    pub translation_missing: Vec<String>,
}

/// A step that does not render, as its delivery would fail.
#[derive(Serialize, ToSchema)]
pub struct StepPreviewError {
    /// Always `template_error`.
    pub code: &'static str,
    pub message: String,
    /// The template part at fault, as a flow body's path
    /// (`steps.0.template.body`), when the message names one.
    pub field: Option<String>,
}

impl FlowPreview {
    pub fn from_preview(flow_id: Option<Uuid>, p: &Preview) -> Self {
        FlowPreview {
            flow_id,
            user: UserView::from(&p.user),
            steps: p
                .steps
                .iter()
                .map(|s| match &s.content {
                    Ok(r) => StepPreview {
                        step: s.step,
                        channel_id: s.channel_id,
                        channel_type: s.channel_type,
                        content: Some(DeliveryData {
                            actions: r.actions.clone(),
                            body: r.body.clone(),
                            html: r.html.clone(),
                            outcomes: None,
                            subject: r.subject.clone(),
                            url: r.url.clone(),
                        }),
                        error: None,
                        translation_missing: s.missing.clone(),
                    },
                    Err(e) => StepPreview {
                        step: s.step,
                        channel_id: s.channel_id,
                        channel_type: s.channel_type,
                        content: None,
                        error: Some(StepPreviewError {
                            code: "template_error",
                            message: e.message.clone(),
                            field: e
                                .part
                                .as_ref()
                                .map(|p| format!("steps.{}.template.{p}", s.step)),
                        }),
                        translation_missing: vec![],
                    },
                })
                .collect(),
        }
    }
}

/// `POST /admin/v1/flows/preview`: an unsaved flow's body, as
/// `POST /admin/v1/flows` takes it but with `handle` and `name` optional,
/// and the preview's fields (`PreviewBody`) beside it. Only its schema is
/// used: the handler splits the body by `PREVIEW_KEYS`.
#[derive(ToSchema)]
#[schema(example = json!({"steps": [{"type": "channel", "channel_id": "0190c2a4-5b1e-7f3a-9c1d-2e4f6a8b0c1d", "template": {"subject": "Hi {{ recipient.first_name }}", "body": "n={{ data.n }}"}}], "user": "ada", "data": {"n": 1}}))]
#[allow(dead_code)]
pub struct UnsavedFlowPreview {
    #[schema(value_type = Option<Vec<super::StepInput>>)]
    steps: (),
    #[schema(value_type = Option<String>, pattern = "^[a-z0-9][a-z0-9_-]{0,63}$")]
    handle: (),
    #[schema(value_type = Option<String>, min_length = 1, max_length = 200)]
    name: (),
    #[schema(value_type = Option<String>, max_length = 1000)]
    description: (),
    #[schema(value_type = Option<bool>)]
    critical: (),
    #[schema(value_type = Option<bool>)]
    commercial: (),
    #[schema(value_type = Option<Vec<String>>, max_items = 10)]
    categories: (),
    /// See `PreviewBody.user`.
    #[schema(value_type = RecipientSpec)]
    user: (),
    #[schema(value_type = Option<RecipientSpec>)]
    actor: (),
    #[schema(value_type = Option<Map<String, Value>>)]
    data: (),
    #[schema(value_type = Option<String>, example = "fr", format = "bcp47", max_length = 64)]
    locale: (),
}
