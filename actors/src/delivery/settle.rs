//! Settling attempts: what an attempt's outcome does to its delivery, when
//! a notification and a run become processed, and which queued in-app
//! deliveries go to which user's feed (`in_app_feeds`). A backend applies
//! these to the records it loaded under its locks (and assigns the feed
//! events' `seq` there) and stores the result as one change.

use crate::error::Result;
use crate::model::{
    ChannelType, Delivery, DeliveryError, DeliveryErrorCode, DeliveryStatus, FlowRun, Notification,
    Timestamp,
};
use crate::storage::{Outcome, QueueItem};
use std::collections::HashMap;
use uuid::Uuid;

/// Queued in-app deliveries being settled: per recipient's feed
/// `(project, user)`, in the order the deliveries came, their indexes in the
/// batch (each gets a feed entry and a `feed_entry.created` event, in that
/// order); and the indexes of those whose recipient was deleted, which are
/// skipped instead (`recipient_deleted`).
pub(crate) struct InAppFeeds {
    pub(crate) feeds: Vec<((Uuid, Uuid), Vec<usize>)>,
    pub(crate) skipped: Vec<usize>,
}

/// Groups a batch of in-app deliveries by recipient (see `InAppFeeds`);
/// `exists` says whether a recipient still exists, asked once each.
pub(crate) fn in_app_feeds<'a>(
    batch: impl Iterator<Item = (&'a QueueItem, &'a Delivery)>,
    mut exists: impl FnMut(&Uuid, &Uuid) -> Result<bool>,
) -> Result<InAppFeeds> {
    let mut feeds: Vec<((Uuid, Uuid), Vec<usize>)> = vec![];
    let mut at: HashMap<(Uuid, Uuid), usize> = HashMap::new();
    for (i, (q, d)) in batch.enumerate() {
        let k = (q.project, d.recipient_id);
        let f = *at.entry(k).or_insert_with(|| {
            feeds.push((k, vec![]));
            feeds.len() - 1
        });
        feeds[f].1.push(i);
    }
    let mut skipped = vec![];
    let mut kept = Vec::with_capacity(feeds.len());
    for ((p, u), idx) in feeds {
        if exists(&p, &u)? {
            kept.push(((p, u), idx));
        } else {
            skipped.extend(idx);
        }
    }
    Ok(InAppFeeds {
        feeds: kept,
        skipped,
    })
}

/// A queued in-app delivery as it enters its recipient's feed at `now`:
/// the entry takes that time and place (`Delivery::feed_at`), as `apply`
/// gives the stored record when the delivery settles as sent.
pub(crate) fn entering_feed(d: &Delivery, now: Timestamp) -> Delivery {
    let mut d = d.clone();
    d.feed_at = Some(now);
    d
}

/// The outcome of an in-app delivery whose recipient was deleted.
pub(crate) fn recipient_deleted() -> Outcome {
    Outcome::Skipped(DeliveryError::new(
        DeliveryErrorCode::MissingAddress,
        "the recipient was deleted",
    ))
}

/// Applies an attempt's outcome to a delivery that is not final yet. Returns
/// the queue item the delivery waits in next (a retry), or `None` when it
/// leaves the queue.
pub(crate) fn apply(
    d: &mut Delivery, q: &QueueItem, o: Outcome, now: Timestamp,
) -> Option<QueueItem> {
    let next = match o {
        Outcome::Sent { outcomes } => {
            d.status = DeliveryStatus::Sent;
            d.attempts += 1;
            d.error = None;
            d.sent_at = Some(now);
            d.next_attempt_at = None;
            if outcomes.is_some() {
                d.outcomes = outcomes;
            }
            if d.channel_type == ChannelType::InApp {
                d.feed_at = Some(now);
            }
            None
        }
        Outcome::Failed(e) => {
            d.status = DeliveryStatus::Failed;
            d.attempts += 1;
            d.error = Some(e);
            d.next_attempt_at = None;
            None
        }
        Outcome::Skipped(e) => {
            d.status = DeliveryStatus::Skipped;
            d.error = Some(e);
            d.next_attempt_at = None;
            None
        }
        Outcome::Canceled(e) => {
            d.status = DeliveryStatus::Canceled;
            d.error = Some(e);
            d.next_attempt_at = None;
            None
        }
        Outcome::Wait { at } => {
            d.next_attempt_at = Some(at);
            Some(QueueItem {
                due_ms: at.millis(),
                ..*q
            })
        }
        Outcome::Failover {
            error,
            attempted,
            to,
            at,
            ..
        } => {
            if attempted {
                d.attempts += 1;
            }
            // The attempts so far keep their channel before it changes.
            d.attempt_channels = d.attempt_channels();
            d.channel_id = to;
            d.fallback_channel_ids = super::failover::after(&d.fallback_channel_ids, &to);
            d.error = Some(error);
            d.next_attempt_at = Some(at);
            Some(QueueItem {
                due_ms: at.millis(),
                ..*q
            })
        }
        Outcome::Retry {
            error,
            at,
            outcomes,
        } => {
            d.attempts += 1;
            d.error = Some(error);
            d.next_attempt_at = Some(at);
            if outcomes.is_some() {
                d.outcomes = outcomes;
            }
            Some(QueueItem {
                due_ms: at.millis(),
                ..*q
            })
        }
    };
    d.updated_at = now;
    next
}

/// Marks a notification processed once its deliveries have all settled;
/// true when it just became so.
pub(crate) fn notification_done(n: &mut Notification, ds: &[Delivery], now: Timestamp) -> bool {
    if n.processed || !ds.iter().all(|d| d.status.is_final()) {
        return false;
    }
    n.processed = true;
    n.processed_at = Some(now);
    n.updated_at = now;
    true
}

/// Marks a run processed once it is expanded and its last notification is
/// (the caller knows no notification of it is pending); true when it just
/// became so.
pub(crate) fn run_done(run: &mut FlowRun, now: Timestamp) -> bool {
    if !run.expanded || run.processed {
        return false;
    }
    run.processed = true;
    run.processed_at = Some(now);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ChannelType, DeliveryError, Rendered};
    use uuid::Uuid;

    fn pending() -> (Delivery, QueueItem) {
        let t = Timestamp::from_millis(1_000);
        let d = Delivery {
            id: Uuid::now_v7(),
            notification_id: Uuid::now_v7(),
            flow_run_id: Uuid::now_v7(),
            flow_id: Uuid::now_v7(),
            channel_id: Uuid::now_v7(),
            channel_type: ChannelType::Email,
            topic: None,
            status: DeliveryStatus::Pending,
            data: Rendered::default(),
            outcomes: None,
            actor_id: None,
            recipient_id: Uuid::now_v7(),
            attempts: 0,
            error: None,
            due_at: t,
            next_attempt_at: Some(t),
            sent_at: None,
            seen_at: None,
            read_at: None,
            clicked_at: None,
            archived_at: None,
            interacted_at: None,
            interacted_action: None,
            created_at: t,
            updated_at: t,
            gate: None,
            batch: false,
            feed_at: None,
            bounce: None,
            fallback_channel_ids: vec![],
            attempt_channels: vec![],
            route: None,
            after_route: None,
        };
        let q = QueueItem {
            project: Uuid::now_v7(),
            delivery_id: d.id,
            channel_type: d.channel_type,
            due_ms: 1_000,
        };
        (d, q)
    }

    fn err(code: &str) -> DeliveryError {
        DeliveryError {
            code: code.into(),
            message: code.into(),
        }
    }

    /// A retry keeps the delivery pending and queued at its new time; every
    /// other outcome takes it out of the queue, final.
    #[test]
    fn outcomes_set_status_attempts_and_the_next_queue_item() {
        let now = Timestamp::from_millis(2_000);
        let at = Timestamp::from_millis(9_000);
        let (mut d, q) = pending();
        let next = apply(
            &mut d,
            &q,
            Outcome::Retry {
                error: err("timeout"),
                at,
                outcomes: None,
            },
            now,
        );
        assert_eq!(next.map(|n| n.due_ms), Some(9_000));
        assert_eq!(d.status, DeliveryStatus::Pending);
        assert_eq!((d.attempts, d.next_attempt_at), (1, Some(at)));
        assert_eq!(d.updated_at, now);

        assert!(apply(&mut d, &q, Outcome::Sent { outcomes: None }, now).is_none());
        assert_eq!(d.status, DeliveryStatus::Sent);
        assert_eq!(
            (d.attempts, d.sent_at, d.error.is_none()),
            (2, Some(now), true)
        );

        let (mut d, q) = pending();
        assert!(apply(&mut d, &q, Outcome::Failed(err("rejected")), now).is_none());
        assert_eq!((d.status, d.attempts), (DeliveryStatus::Failed, 1));

        let (mut d, q) = pending();
        assert!(apply(&mut d, &q, Outcome::Skipped(err("preference")), now).is_none());
        assert_eq!((d.status, d.attempts), (DeliveryStatus::Skipped, 0));
        assert_eq!(d.next_attempt_at, None);
    }
}
