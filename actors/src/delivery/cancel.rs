//! Cancellation: stopping the waiting deliveries of a flow's runs that carry
//! a cancellation key (`POST /admin/v1/flows/{id}/cancel`).
//!
//! Only runs not yet processed can have anything waiting, so the candidates
//! are the backend's active runs (`RunRepo::active_runs`), not every run the
//! flow ever had. Each pending delivery of theirs (of the named recipients,
//! when some are named) is settled `canceled` through the ordinary settling
//! path (`QueueRepo::settle`), as one atomic change: a delivery an attempt
//! settled meanwhile stays as that attempt left it, the notifications and
//! runs that have nothing left become processed, and the queue entries go.
//! The delivery actors may still hold a canceled delivery in memory; when it
//! comes due they find it final and drop it. A second cancellation finds
//! nothing pending and changes nothing.
//!
//! A run waiting in a batch it opened (`delivery::batch`) is canceled the
//! same way: its deliveries after the batch step end `canceled`, which
//! cancels the digest, and the batch is closed (`canceled`), so later runs
//! open a batch of their own. The runs that had joined it stay `batched`:
//! they ended at the step and had nothing of their own waiting.

use crate::error::Result;
use crate::model::{DeliveryError, DeliveryErrorCode, DeliveryStatus};
use crate::storage::{Finished, NotificationFilter, Outcome, PageReq, QueueItem, Storage};
use crate::trace::AttemptNotes;
use uuid::Uuid;

/// What to cancel: a flow's runs with `key`, optionally only the
/// notifications of some recipients (user ids).
pub struct CancelRequest {
    pub flow_id: Uuid,
    pub key: String,
    pub recipients: Option<Vec<Uuid>>,
}

/// Cancels the pending deliveries `req` names; how many it canceled and what
/// settling them finished.
pub(crate) fn cancel_runs(
    s: &dyn Storage, notes: &AttemptNotes, project: &Uuid, req: &CancelRequest,
) -> Result<(usize, Finished)> {
    let mut items: Vec<(QueueItem, Outcome)> = vec![];
    // Notifications waiting in a batch they opened.
    let mut batches: Vec<Uuid> = vec![];
    for (p, run_id) in s.active_runs()? {
        if p != *project {
            continue;
        }
        let Some(run) = s.flow_run(project, &run_id)? else {
            continue;
        };
        if run.flow_id != req.flow_id || run.cancellation_key.as_deref() != Some(&req.key) {
            continue;
        }
        let filter = NotificationFilter {
            flow_run_id: Some(run.id),
            status: Some(false),
            ..Default::default()
        };
        let mut page = PageReq {
            limit: 500,
            ..Default::default()
        };
        loop {
            let got = s.list_notifications(project, &filter, &page)?;
            for n in &got.items {
                if let Some(only) = &req.recipients {
                    if !only.contains(&n.recipient_id) {
                        continue;
                    }
                }
                for d in s.notification_deliveries(project, &n.id)? {
                    if d.status != DeliveryStatus::Pending {
                        continue;
                    }
                    if d.batch && !batches.contains(&d.notification_id) {
                        batches.push(d.notification_id);
                    }
                    let due = d.next_attempt_at.unwrap_or(d.due_at);
                    items.push((
                        QueueItem {
                            project: *project,
                            delivery_id: d.id,
                            channel_type: d.channel_type,
                            due_ms: due.millis(),
                        },
                        Outcome::Canceled(DeliveryError::new(
                            DeliveryErrorCode::Canceled,
                            "the run's cancellation key was canceled",
                        )),
                    ));
                }
            }
            if !got.has_more_after {
                break;
            }
            page.after = got.last_key;
        }
    }
    if items.is_empty() {
        return Ok((0, (vec![], vec![], vec![])));
    }
    let (written, runs, pulled) = s.settle(&items, notes)?;
    let now = crate::model::Timestamp::now().millis();
    for b in &batches {
        s.cancel_batch(project, b, now)?;
    }
    let n = written
        .iter()
        .filter(|d| d.status == DeliveryStatus::Canceled)
        .count();
    Ok((n, (written, runs, pulled)))
}
