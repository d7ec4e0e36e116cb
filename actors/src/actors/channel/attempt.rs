//! One attempt of a delivery outside the feed: the reads it needs (the
//! delivery, its channel and recipient, loaded together), the provider
//! call, and what its answer makes of the delivery (`Outcome`); the
//! in-app deliveries that wait for their batch; and the in-app settling
//! with the presence facts of the gates that name it.

use super::RetryPolicy;
use crate::actors::engine::Engine;
use crate::delivery::failover;
use crate::health::{Admit, Signal};
use crate::model::{ChannelStatus, ChannelType, DeliveryError, DeliveryErrorCode, Timestamp};
use crate::providers::{SendError, SendRequest};
use crate::storage::{Outcome, PushKey, QueueItem};
use rand::Rng;

/// In-app deliveries that wait for their batch (`delivery::batch::due`):
/// each is rendered with its batch and comes back due now, or waits until
/// the batch closes, or fails; what is not ready now is settled here. The
/// items to queue again.
pub(super) fn batch_due(
    engine: &Engine, store: &dyn crate::storage::Storage, items: Vec<QueueItem>,
) -> crate::error::Result<Vec<QueueItem>> {
    let mut again = vec![];
    let mut settle = vec![];
    for q in items {
        let now = engine.project_now(&q.project);
        match crate::delivery::batch::due(store, engine.template_limits(), &q, now)? {
            None => again.push(QueueItem {
                due_ms: now.millis(),
                ..q
            }),
            Some(o) => {
                if let Outcome::Wait { at } = &o {
                    again.push(QueueItem {
                        due_ms: at.millis(),
                        ..q
                    });
                }
                settle.push((q, o));
            }
        }
    }
    if !settle.is_empty() {
        let (_, runs, pulled) = store.settle(&settle, engine.attempt_notes())?;
        engine.runs_processed(runs);
        engine.pulled(pulled);
    }
    Ok(again)
}

/// Settles due in-app deliveries (`QueueRepo::deliver_in_app`). Those whose
/// gate names the recipient's presence come back from the first pass
/// unsettled: their facts are read here (`Engine::due_facts`, the one
/// reading of presence, which the store's settling cannot make inside its
/// own transaction), noted, and the deliveries handed over again. The
/// batch, and the items to queue again (facts that could not be read).
pub(super) fn deliver_in_app(
    engine: &Engine, store: &dyn crate::storage::Storage, items: &[QueueItem],
) -> crate::error::Result<(crate::storage::InAppBatch, Vec<QueueItem>)> {
    let notes = engine.attempt_notes();
    let mut out = store.deliver_in_app(items, notes)?;
    let need = std::mem::take(&mut out.need_facts);
    if need.is_empty() {
        return Ok((out, vec![]));
    }
    let mut again = vec![];
    let mut noted = vec![];
    for (q, user) in need {
        match engine.due_facts(&q.project, &user) {
            Ok(f) => {
                notes.note_gate(&q.delivery_id, f);
                noted.push(q);
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot read a recipient's presence; retrying in 1 s");
                again.push(QueueItem {
                    due_ms: engine.project_now(&q.project).millis() + 1000,
                    ..q
                });
            }
        }
    }
    let more = store.deliver_in_app(&noted, notes)?;
    out.frames.extend(more.frames);
    out.runs.extend(more.runs);
    out.settled += more.settled;
    out.batched.extend(more.batched);
    again.extend(more.need_facts.into_iter().map(|(q, _)| q));
    Ok((out, again))
}

fn err(code: DeliveryErrorCode, message: impl Into<String>) -> DeliveryError {
    DeliveryError::new(code, message)
}

/// The reads of an attempt (`external_attempt`); `Err` with the outcome to
/// record instead (`None`: nothing, the delivery is final or gone).
fn load_attempt(engine: &Engine, q: &QueueItem) -> Result<Loaded, Option<Outcome>> {
    let store = engine.storage();
    // The channel and the recipient are read with the delivery (one round
    // trip on a networked store); a delivery read again below (after its
    // batch) reads them again if its channel is another.
    let (mut d, read_channel, read_recipient) =
        match store.delivery_for_attempt(&q.project, &q.delivery_id) {
            Ok(Some((d, c, u))) if !d.status.is_final() => (d, c, u),
            Ok(_) => return Err(None),
            Err(e) => {
                return Err(Some(Outcome::Retry {
                    error: err(DeliveryErrorCode::ProviderUnavailable, e.message),
                    at: engine.project_now(&q.project).plus_millis(1000),
                    outcomes: None,
                }))
            }
        };
    // A step after a batch: rendered with the batch once it is closed.
    if d.batch {
        let now = engine.project_now(&q.project);
        let ready = crate::delivery::batch::due(store.as_ref(), engine.template_limits(), q, now)
            .and_then(|o| Ok((o, store.delivery(&q.project, &q.delivery_id)?)));
        match ready {
            Ok((Some(o), _)) => return Err(Some(o)),
            Ok((None, Some(fresh))) if !fresh.status.is_final() => d = fresh,
            Ok((None, _)) => return Err(None),
            Err(_) => {
                return Err(Some(Outcome::Wait {
                    at: now.plus_millis(1000),
                }))
            }
        }
    }
    // A condition over earlier steps and the recipient's presence is
    // decided now that the step is reached (the presence facts it was
    // decided on are noted for its trace entry), and so is a route hop's
    // turn (`delivery::route::at_due`).
    if crate::delivery::route::needs_check(&d) {
        let facts = if crate::delivery::route::needs_presence(&d) {
            match engine.due_facts(&q.project, &d.recipient_id) {
                Ok(f) => {
                    engine.attempt_notes().note_gate(&d.id, f);
                    Some(f)
                }
                Err(e) => {
                    return Err(Some(Outcome::Retry {
                        error: err(DeliveryErrorCode::ProviderUnavailable, e.message),
                        at: engine.project_now(&q.project).plus_millis(1000),
                        outcomes: None,
                    }))
                }
            }
        } else {
            None
        };
        match store.notification_deliveries(&q.project, &d.notification_id) {
            Ok(all) => {
                let now = engine.project_now(&q.project);
                if let Some(o) = crate::delivery::route::at_due(&d, &all, now, facts.as_ref()) {
                    return Err(Some(o));
                }
            }
            Err(e) => {
                return Err(Some(Outcome::Retry {
                    error: err(DeliveryErrorCode::ProviderUnavailable, e.message),
                    at: engine.project_now(&q.project).plus_millis(1000),
                    outcomes: None,
                }))
            }
        }
    }
    let first_read = read_channel.as_ref().is_none_or(|c| c.id == d.channel_id);
    let channel = if first_read {
        Ok(read_channel)
    } else {
        store.channel(&q.project, &d.channel_id)
    };
    // A channel that cannot send at all: the delivery moves to its backup
    // when it has one (`delivery::failover`), without a call.
    let now = engine.project_now(&q.project);
    let moved = |e: DeliveryError| {
        Err(Some(failover::reroute(
            &d.fallback_channel_ids,
            Outcome::Failed(e),
            false,
            now,
        )))
    };
    let channel = match channel {
        Ok(Some(c)) => c,
        Ok(None) => {
            return moved(err(
                DeliveryErrorCode::ProviderNotConfigured,
                "the channel was deleted",
            ))
        }
        Err(e) => {
            return Err(Some(Outcome::Retry {
                error: err(DeliveryErrorCode::ProviderUnavailable, e.message),
                at: engine.project_now(&q.project).plus_millis(1000),
                outcomes: None,
            }))
        }
    };
    match channel.status() {
        ChannelStatus::Revoked => {
            return moved(err(
                DeliveryErrorCode::ProviderRevoked,
                "the channel's provider access is revoked",
            ))
        }
        ChannelStatus::Unconfigured => {
            return moved(err(
                DeliveryErrorCode::ProviderNotConfigured,
                "the channel's provider is not configured",
            ))
        }
        ChannelStatus::Active => {}
    }
    // An open circuit (`crate::health`): to the backup at once, or wait
    // for the channel's probe without counting an attempt.
    if let Admit::Wait { until } = engine.health_admit(&q.project, &channel) {
        if let Some(o) = failover::unhealthy(&d.fallback_channel_ids, now) {
            return Err(Some(o));
        }
        let jitter = rand::thread_rng().gen_range(0..250);
        let wait = (until - Timestamp::now().millis()).max(100) + jitter;
        return Err(Some(Outcome::Wait {
            at: now.plus_millis(wait),
        }));
    }
    let recipient = if first_read {
        read_recipient.filter(|u| u.id == d.recipient_id)
    } else {
        store.user(&q.project, &d.recipient_id).ok().flatten()
    };
    // An address on the project's suppression list is not sent to, whoever
    // the user holding it (one keyed read, email and SMS only).
    match crate::suppression::skip_if_suppressed(
        store.as_ref(),
        &q.project,
        channel.channel_type,
        recipient.as_ref(),
    ) {
        Ok(None) => {}
        Ok(Some(e)) => return Err(Some(Outcome::Skipped(e))),
        Err(e) => {
            return Err(Some(Outcome::Retry {
                error: err(DeliveryErrorCode::ProviderUnavailable, e.message),
                at: engine.project_now(&q.project).plus_millis(1000),
                outcomes: None,
            }))
        }
    }
    let subscriptions = if matches!(
        channel.channel_type,
        ChannelType::WebPush | ChannelType::MobilePush
    ) {
        store
            .push_subscriptions(&q.project, &d.recipient_id, &channel.id)
            .unwrap_or_default()
    } else {
        vec![]
    };
    Ok(Loaded {
        d,
        channel,
        recipient,
        subscriptions,
    })
}

/// What an attempt reads from the store before calling its provider.
struct Loaded {
    d: crate::model::Delivery,
    channel: crate::model::Channel,
    recipient: Option<crate::model::User>,
    subscriptions: Vec<crate::model::PushSubscription>,
}

/// One attempt at an external provider.
///
/// Its reads (the delivery, the channel, the recipient) are blocking calls:
/// on a store behind a network (one whose work nodes share) they run on the
/// blocking pool, as a task's own, so the attempts of one channel actor wait
/// for the database side by side, not one after another on its thread.
pub(super) async fn external_attempt(engine: Engine, q: QueueItem) -> Option<Outcome> {
    let store = engine.storage().clone();
    let loaded = if store.shares_work() {
        let e = engine.clone();
        match tokio::task::spawn_blocking(move || load_attempt(&e, &q)).await {
            Ok(l) => l,
            Err(_) => Err(Some(Outcome::Retry {
                error: err(
                    DeliveryErrorCode::ProviderUnavailable,
                    "reading the delivery failed",
                ),
                at: engine.project_now(&q.project).plus_millis(1000),
                outcomes: None,
            })),
        }
    } else {
        load_attempt(&engine, &q)
    };
    let Loaded {
        d,
        channel,
        recipient,
        subscriptions,
    } = match loaded {
        Ok(l) => l,
        Err(o) => return o,
    };
    let Some(transport) = engine
        .inner
        .transports
        .get(channel.provider.as_str())
        .cloned()
    else {
        let e = err(
            DeliveryErrorCode::ProviderNotConfigured,
            format!(
                "provider {} has no transport in this build",
                channel.provider
            ),
        );
        let now = engine.project_now(&q.project);
        return Some(failover::reroute(
            &d.fallback_channel_ids,
            Outcome::Failed(e),
            false,
            now,
        ));
    };
    let mut d = d;
    // The project: its sandbox mode and the link of `{{ preferences_url }}`.
    let project = store
        .find_project(crate::storage::ProjectRef::Id(&q.project))
        .ok()
        .flatten();
    if crate::delivery::sandbox::applies(project.as_ref(), &channel) {
        engine.attempt_notes().note(
            &q.delivery_id,
            crate::trace::AttemptNote {
                provider: "sandbox".into(),
                latency_ms: 0,
                status_code: None,
                subscriptions_removed: 0,
            },
        );
        return Some(crate::delivery::sandbox::outcome());
    }
    // `{{ preferences_url }}`: a fresh link for this send, never stored
    if crate::rules::preference_link::has_mark(&d.data) {
        let url = project
            .as_ref()
            .and_then(|p| engine.preferences_link(p, d.recipient_id));
        crate::rules::preference_link::fill(&mut d.data, url.as_deref().unwrap_or(""));
    }
    // One-click unsubscribe (RFC 8058): an email of a commercial flow
    // carries a fresh link in its headers and `{{ unsubscribe_url }}`;
    // any other delivery has neither. A flow that cannot be read now is a
    // retry: sending the mail without its link is not an option.
    let unsubscribe_url = if channel.channel_type == ChannelType::Email {
        match store.flow(&q.project, &d.flow_id) {
            Ok(Some(f)) if f.commercial => {
                engine.unsubscribe_link(q.project, d.recipient_id, d.flow_id)
            }
            Ok(_) => None,
            Err(e) => {
                return Some(Outcome::Retry {
                    error: err(DeliveryErrorCode::ProviderUnavailable, e.message),
                    at: engine.project_now(&q.project).plus_millis(1000),
                    outcomes: None,
                })
            }
        }
    } else {
        None
    };
    crate::rules::unsubscribe_link::fill(&mut d.data, unsubscribe_url.as_deref().unwrap_or(""));
    let policy = RetryPolicy::from_config(&channel.config);
    // The retry policy is the channel's: it counts the attempts made
    // through it, not those of the channels the delivery came from.
    let attempt = d.attempts_on_channel() + 1;
    let recipient_id = d.recipient_id;
    let fallbacks = std::mem::take(&mut d.fallback_channel_ids);
    let req = SendRequest {
        delivery: d,
        recipient,
        channel_id: channel.id,
        config: channel.config.clone(),
        subscriptions,
        unsubscribe_url,
        callback_url: engine.callback_url(channel.id),
    };
    let started = std::time::Instant::now();
    let mut res = transport.send(req).await;
    let latency_ms = started.elapsed().as_millis() as u64;
    // Subscriptions the provider reported gone are removed, whatever the outcome.
    let mut gone: Vec<String> = vec![];
    if let Err(SendError::AlsoExpired { error, expired }) = res {
        gone = expired;
        res = Err(*error);
    }
    let expired: &[String] = match &res {
        Ok(s) => &s.expired,
        Err(SendError::Expired { expired, .. }) => expired,
        Err(_) => &gone,
    };
    for identifier in expired {
        let key = PushKey {
            user: &recipient_id,
            channel: &channel.id,
            identifier,
        };
        let _ = store.remove_push_subscription(&q.project, key);
    }
    engine.attempt_notes().note(
        &q.delivery_id,
        crate::trace::AttemptNote {
            provider: channel.provider.clone(),
            latency_ms,
            status_code: match &res {
                Ok(sent) => sent.status_code,
                Err(e) => e.status_code(),
            },
            subscriptions_removed: expired.len(),
        },
    );
    // What the answer says of the channel (`crate::health`): only an
    // unavailable provider counts against it.
    let signal = match &res {
        Err(SendError::Transient { message, .. }) => Some(Signal::Failure(message.clone())),
        Err(SendError::NoAddress { .. }) => None,
        _ => Some(Signal::Answered),
    };
    if let Some(s) = signal {
        engine.health_record(q.project, &channel, s);
    }
    let now = engine.project_now(&q.project);
    // This failure opened the circuit: a delivery with a backup moves now
    // rather than waiting for a retry the circuit would hold.
    if matches!(res, Err(SendError::Transient { .. })) && engine.health_is_open(&channel.id) {
        if let Some(Outcome::Failover {
            error,
            to,
            reason,
            at,
            ..
        }) = failover::unhealthy(&fallbacks, now)
        {
            let message = match &res {
                Err(SendError::Transient { message, .. }) => message.clone(),
                _ => error.message,
            };
            return Some(Outcome::Failover {
                error: err(DeliveryErrorCode::ProviderUnavailable, message),
                attempted: true,
                to,
                reason,
                at,
            });
        }
    }
    let outcome = match res {
        Ok(sent) => Outcome::Sent {
            outcomes: sent.outcomes,
        },
        Err(SendError::Transient {
            message,
            retry_after,
        }) => {
            if attempt >= policy.max_attempts {
                Outcome::Failed(err(
                    DeliveryErrorCode::ProviderUnavailable,
                    format!("{message} (after {attempt} attempts)"),
                ))
            } else {
                let wait = policy.delay(attempt, retry_after);
                Outcome::Retry {
                    error: err(DeliveryErrorCode::ProviderUnavailable, message),
                    at: engine
                        .project_now(&q.project)
                        .plus_millis(wait.as_millis() as i64),
                    outcomes: None,
                }
            }
        }
        Err(SendError::Unauthorized { message }) => {
            Outcome::Failed(err(DeliveryErrorCode::ProviderUnauthorized, message))
        }
        Err(SendError::Rejected { code, message }) => Outcome::Failed(err(code, message)),
        Err(SendError::NoAddress { message }) => {
            Outcome::Skipped(err(DeliveryErrorCode::MissingAddress, message))
        }
        Err(SendError::Expired { message, .. }) => {
            Outcome::Failed(err(DeliveryErrorCode::SubscriptionExpired, message))
        }
        // Unwrapped above; kept for exhaustiveness.
        Err(SendError::AlsoExpired { error, .. }) => Outcome::Failed(err(
            DeliveryErrorCode::ProviderRejected,
            format!("{error:?}"),
        )),
    };
    Some(failover::reroute(&fallbacks, outcome, true, now))
}
