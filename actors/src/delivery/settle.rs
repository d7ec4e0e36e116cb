//! Settling attempts: what an attempt's outcome does to its delivery, and when
//! a notification and a run become processed. A backend applies these to the
//! records it loaded under its locks and stores the result as one change.

use crate::model::{Delivery, DeliveryStatus, FlowRun, Notification, Timestamp};
use crate::storage::{Outcome, QueueItem};

/// Applies an attempt's outcome to a delivery that is not final yet. Returns
/// the queue item the delivery waits in next (a retry), or `None` when it
/// leaves the queue.
pub(crate) fn apply(
    d: &mut Delivery,
    q: &QueueItem,
    o: Outcome,
    now: Timestamp,
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
