//! Accepting a run: its explicit recipients without repeats and, per
//! recipient, which deliveries a notification gets
//! (delay steps offset the ones after them), their templates rendered, the
//! recipient's preferences applied, and which in-app deliveries are settled at
//! once rather than queued. A backend stores what this decides, in the same
//! atomic change as the run or the topic chunk.

use super::tally::Tally;
use crate::error::{Error, Result};
use crate::model::{
    delivery_id, Channel, ChannelType, Delivery, DeliveryError, DeliveryErrorCode, DeliveryStatus,
    FlowRun, Notification, Preferences, Rendered, Timestamp, User, UserPatch,
};
use crate::render::RunRenderer;
use crate::storage::{QueueItem, RunRecipient};
use serde_json::Value;
use std::collections::HashMap;
use uuid::Uuid;

/// Per-run state used while staging notifications.
pub(crate) struct Stager<'a> {
    pub(crate) project: Uuid,
    pub(crate) run: &'a FlowRun,
    pub(crate) renderer: RunRenderer,
    /// The flow's channels by id (`None`: deleted since the flow was saved).
    pub(crate) channels: HashMap<Uuid, Option<Channel>>,
    pub(crate) actor: Value,
    /// The template context's parts shared by every recipient of the run,
    /// converted to template values once.
    pub(crate) shared: crate::render::Shared,
}

/// A run's explicit recipients without repeats, in the order each first
/// appears, with every patch given for each (applied in order).
pub(crate) fn dedupe(
    recipients: Vec<RunRecipient>,
) -> (Vec<String>, HashMap<String, Vec<UserPatch>>) {
    let mut order: Vec<String> = vec![];
    let mut patches: HashMap<String, Vec<UserPatch>> = HashMap::new();
    for r in recipients {
        if !patches.contains_key(&r.external_id) {
            order.push(r.external_id.clone());
        }
        patches.entry(r.external_id).or_default().push(r.patch);
    }
    (order, patches)
}

/// One recipient's notification as staged.
pub(crate) struct Recipient {
    pub(crate) n: Notification,
    pub(crate) deliveries: Vec<Delivery>,
    /// In-app deliveries settled at once: their index in `deliveries` and
    /// their feed entry's JSON.
    pub(crate) to_feed: Vec<(usize, String)>,
    /// Some delivery waits in the queue.
    pub(crate) pending: bool,
}

impl Stager<'_> {
    /// Stages the notification `nid` of `user` and its deliveries; the ones to
    /// attempt later are added to `queued`.
    ///
    /// An in_app delivery that is due at once has nothing to wait for, so it is
    /// settled with the run: it is `sent` and listed in `to_feed`, for the
    /// backend to write its feed entry and event in the same change. That saves
    /// the queue entry, a second write of the delivery and, for a flow with
    /// only in_app steps, a second write of the notification.
    pub(crate) fn stage(
        &self,
        user: &User,
        prefs: &Preferences,
        nid: Uuid,
        now: Timestamp,
        queued: &mut Vec<QueueItem>,
        metrics: &mut Tally,
    ) -> Result<Recipient> {
        let run = self.run;
        let ctx = self.shared.context(user);
        let mut pending = false;
        let mut offset_ms: i64 = 0;
        // In-app deliveries sent at once: (index in `deliveries`, entry JSON).
        let mut to_feed: Vec<(usize, String)> = vec![];
        let mut external_pending = false;
        let mut deliveries = Vec::with_capacity(run.flow.steps.len());
        for (i, step) in run.flow.steps.iter().enumerate() {
            if step.kind == "delay" {
                offset_ms += (step.seconds.unwrap_or(0) as i64).saturating_mul(1000);
                continue;
            }
            let Some(cid) = step.channel_id else { continue };
            let channel_type = match self.channels.get(&cid) {
                Some(Some(c)) => c.channel_type,
                _ => ChannelType::InApp,
            };
            let did = delivery_id(&nid, i);
            let dnow = now;
            let template = step.template.clone().unwrap_or_default();
            let mut status = DeliveryStatus::Pending;
            let mut error = None;
            let data = match self.renderer.render(i, &template, &ctx) {
                Ok(r) => r,
                Err(msg) => {
                    status = DeliveryStatus::Failed;
                    error = Some(DeliveryError::new(DeliveryErrorCode::TemplateError, msg));
                    Rendered::default()
                }
            };
            if status == DeliveryStatus::Pending {
                match self.channels.get(&cid) {
                    Some(Some(_)) => {
                        if !prefs.allows(&run.flow.handle, channel_type) {
                            status = DeliveryStatus::Skipped;
                            error = Some(DeliveryError::new(
                                DeliveryErrorCode::Preference,
                                format!("the recipient opted out of {}", channel_type.as_str()),
                            ));
                        }
                    }
                    _ => {
                        status = DeliveryStatus::Failed;
                        error = Some(DeliveryError::new(
                            DeliveryErrorCode::ProviderNotConfigured,
                            "the step's channel no longer exists",
                        ));
                    }
                }
            }
            let due = run.created_at.plus_millis(offset_ms);
            let mut d = Delivery {
                id: did,
                notification_id: nid,
                flow_run_id: run.id,
                flow_id: run.flow_id,
                channel_id: cid,
                channel_type,
                topic: run.topic.clone(),
                status,
                data,
                outcomes: None,
                actor_id: run.actor_id,
                recipient_id: user.id,
                attempts: 0,
                error,
                due_at: due,
                next_attempt_at: if status == DeliveryStatus::Pending {
                    Some(due)
                } else {
                    None
                },
                sent_at: None,
                seen_at: None,
                read_at: None,
                clicked_at: None,
                archived_at: None,
                created_at: dnow,
                updated_at: dnow,
            };
            // Steps go out in order: an in_app step after an external step that
            // is still to be attempted waits in the queue like any other.
            if channel_type == ChannelType::InApp
                && status == DeliveryStatus::Pending
                && due.millis() <= now.millis()
                && !external_pending
            {
                d.status = DeliveryStatus::Sent;
                d.attempts = 1;
                d.sent_at = Some(now);
                d.next_attempt_at = None;
                let json = serde_json::to_string(&d.feed_entry(&self.actor))
                    .map_err(|e| Error::internal(e.to_string()))?;
                to_feed.push((deliveries.len(), json));
            }
            let status = d.status;
            metrics.add(&d, now);
            deliveries.push(d);
            if status == DeliveryStatus::Pending {
                pending = true;
                external_pending |= channel_type != ChannelType::InApp;
                queued.push(QueueItem {
                    project: self.project,
                    delivery_id: did,
                    channel_type,
                    due_ms: due.millis(),
                });
            }
        }
        let n = Notification {
            id: nid,
            flow_id: run.flow_id,
            flow_run_id: run.id,
            topic: run.topic.clone(),
            processed: !pending,
            actor_id: run.actor_id,
            recipient_id: user.id,
            processed_at: if pending { None } else { Some(now) },
            created_at: now,
            updated_at: now,
        };
        Ok(Recipient {
            n,
            deliveries,
            to_feed,
            pending,
        })
    }
}
