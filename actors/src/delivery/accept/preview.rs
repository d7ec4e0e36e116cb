//! Previews (`POST /admin/v1/flows/{id}/preview`): a flow's channel steps
//! rendered for one recipient by the code a run stages them with (`Stager`,
//! `Stager::render_step`), so what a preview shows is what a run with the
//! same inputs stores and sends. Nothing is stored: the recipient and the
//! actor are patched in memory (`patched_users`, as a run patches them
//! before its commit), the run record is never written, no delivery,
//! counter, quota or event moves.
//!
//! Every channel step is rendered, whatever its condition, throttle or the
//! recipient's preferences would decide for a run: a preview is about the
//! content. A step after a batch step renders as a batch of this run alone
//! closes it (`batch.count` 1). A step that does not render gives its error
//! and the template part it came from.

use super::{dedupe, new_id, new_run, patched_users, Stager};
use crate::delivery::batch::context_of as batch_context;
use crate::error::Result;
use crate::model::{ChannelType, Flow, Rendered, User};
use crate::render::Limits;
use crate::storage::{ActorSpec, BatchActivity, RunRecipient, RunTiming, Storage};
use serde_json::Value;
use std::collections::HashMap;
use uuid::Uuid;

/// What to preview: a flow (stored or not) for one recipient.
pub struct PreviewInput {
    pub flow: Flow,
    /// The recipient: an existing user, patched in memory by the fields
    /// given, or one the run would create.
    pub user: RunRecipient,
    pub actor: Option<ActorSpec>,
    pub data: Value,
    /// Renders as if the recipient's `locale` were this.
    pub locale: Option<String>,
    /// The project's timezone (a run's `RunTiming::timezone`).
    pub timezone: Option<String>,
}

/// One channel step's content for the recipient, or why it does not render.
pub struct StepPreview {
    pub step: usize,
    pub channel_id: Uuid,
    /// `None` when the channel is gone (a run fails such a delivery).
    pub channel_type: Option<ChannelType>,
    pub content: std::result::Result<Rendered, PreviewError>,
    /// The translation keys no catalog had (a run traces each as
    /// `translation_missing`; they render as the key).
    pub missing: Vec<String>,
}

/// A step that does not render: the render's message and the template
/// part it names (`subject`, `body`, `html`, `url`, `actions.0.label`, …).
pub struct PreviewError {
    pub part: Option<String>,
    pub message: String,
}

impl PreviewError {
    fn of(message: String) -> Self {
        // The renderer's messages start with "template {part}: ".
        let part = message
            .strip_prefix("template ")
            .and_then(|m| m.split_once(':'))
            .map(|(p, _)| p.to_string())
            .filter(|p| !p.contains(' '));
        PreviewError { part, message }
    }
}

/// The recipient as previewed and each channel step's content.
pub struct Preview {
    pub user: User,
    /// Whether the recipient is a stored user (a run to a new one creates it).
    pub stored: bool,
    pub steps: Vec<StepPreview>,
}

/// Renders `input.flow`'s channel steps for its recipient (see the module
/// doc). A named actor that does not exist is 422 `inclusion` at `actor`,
/// as for a run.
pub(crate) fn preview(
    s: &dyn Storage, limits: Limits, project: &Uuid, input: PreviewInput,
) -> Result<Preview> {
    let PreviewInput {
        flow,
        user,
        actor,
        data,
        locale,
        timezone,
    } = input;
    if let Some(ActorSpec::Existing(e)) = &actor {
        if s.user_by_ext(project, e)?.is_none() {
            return Err(crate::error::Error::field(
                "actor",
                "inclusion",
                super::NO_SUCH_ACTOR,
            ));
        }
    }
    let (order, patches) = dedupe(vec![user]);
    let mut fresh: HashMap<String, _> = HashMap::new();
    let actor_ext = match &actor {
        Some(ActorSpec::Existing(e)) | Some(ActorSpec::Inline(e, _)) => Some(e),
        None => None,
    };
    for e in order.iter().chain(actor_ext) {
        fresh.entry(e.clone()).or_insert_with(new_id);
    }
    let (actor, users, writes) = patched_users(s, project, &actor, &order, &patches, &fresh)?;
    let Some(mut user) = users.into_iter().next() else {
        return Err(crate::error::Error::internal(
            "a preview without its recipient",
        ));
    };
    let stored = writes
        .iter()
        .any(|w| w.external_id == user.external_id && w.before.is_some());
    if let Some(l) = locale {
        user.locale = Some(l);
    }
    let timing = RunTiming {
        timezone,
        ..RunTiming::default()
    };
    let mut run = new_run(flow, None, data, timing);
    run.actor_id = actor.as_ref().map(|a| a.id);
    let stager = Stager::new(s, limits, *project, &run, actor.as_ref())?;
    let ctx = stager.shared.context(&user);
    // After a batch step, the content a batch of this run alone closes with.
    let alone = BatchActivity {
        notification_id: run.id,
        data: run.data.clone(),
        actor: stager.actor.clone(),
        at_ms: run.created_at.millis(),
    };
    let batched = minijinja::context! {
        batch => minijinja::Value::from_serialize(batch_context(&[alone])),
        ..ctx.clone()
    };
    let mut after_batch = false;
    let mut steps = vec![];
    // A route step shows each of its channels, in order (same `step`).
    for u in crate::delivery::route::units(&run.flow.steps) {
        let (i, step) = (u.i, &*u.step);
        if step.kind == "batch" {
            after_batch = true;
        }
        let Some(channel_id) = step.channel_id else {
            continue;
        };
        let channel_type = match stager.channels.get(&channel_id) {
            Some(Some(c)) => Some(c.channel_type),
            _ => None,
        };
        let ctx = if after_batch { &batched } else { &ctx };
        let (content, missing) = match stager.render_step(
            u.slot(),
            step,
            channel_type.unwrap_or(ChannelType::InApp),
            ctx,
        ) {
            Ok(a) => (Ok(a.rendered), a.missing),
            Err(e) => (Err(PreviewError::of(e)), vec![]),
        };
        steps.push(StepPreview {
            step: i,
            channel_id,
            channel_type,
            content,
            missing,
        });
    }
    Ok(Preview {
        user,
        stored,
        steps,
    })
}
