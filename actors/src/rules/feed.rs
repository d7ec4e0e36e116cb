//! A feed entry's transitions (a PATCH, `seen_all`/`read_all`) and the events
//! a feed change or a delivery's new state emits.

use crate::error::Error;
use crate::events::EventType;
use crate::model::{Delivery, DeliveryStatus, Timestamp};
use crate::storage::FeedUpdate;
use uuid::Uuid;

/// Live-feed events kept per user at least, by every backend: the last
/// `KEEP_EVENTS`, and all of the last `KEEP_MS`: enough for a reconnect to
/// catch up.
pub const KEEP_EVENTS: u64 = 1000;
pub const KEEP_MS: i64 = 24 * 3600 * 1000;

/// A PATCH that would take an entry back (`read: false` on a read entry,
/// `seen: false` on a seen one): entries only move forward.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoesBack {
    /// The entry's state: `unseen`, `seen` or `read`.
    pub state: &'static str,
}

impl GoesBack {
    /// The moves the entry's state still allows.
    pub fn allowed(&self) -> Vec<&'static str> {
        match self.state {
            "unseen" => vec!["seen", "read"],
            "seen" => vec!["read"],
            _ => vec![],
        }
    }

    /// The 409 `invalid_transition` a client sees.
    pub fn into_error(self, id: &Uuid) -> Error {
        let allowed = self.allowed();
        Error::conflict(
            "feed_entry",
            Some(id.to_string()),
            "invalid_transition",
            format!("a {} entry cannot go back", self.state),
        )
        .with("current_status", self.state)
        .with("allowed_transitions", allowed)
    }
}

/// Applies a PATCH to an entry at `now`: the entry after it and whether any
/// time changed. Repeating a true keeps the first time; `read` implies
/// `seen`; `archived: false` clears the archive time.
pub fn update_entry(
    d: &Delivery, u: &FeedUpdate, now: Timestamp,
) -> Result<(Delivery, bool), GoesBack> {
    if (u.read == Some(false) && d.read_at.is_some())
        || (u.seen == Some(false) && d.seen_at.is_some())
    {
        return Err(GoesBack {
            state: d.feed_state(),
        });
    }
    let mut n = d.clone();
    if u.read == Some(true) {
        n.read_at.get_or_insert(now);
        n.seen_at.get_or_insert(now);
    }
    if u.seen == Some(true) {
        n.seen_at.get_or_insert(now);
    }
    if u.clicked == Some(true) {
        n.clicked_at.get_or_insert(now);
    }
    match u.archived {
        Some(true) => {
            n.archived_at.get_or_insert(now);
        }
        Some(false) => n.archived_at = None,
        None => {}
    }
    let changed = n.seen_at != d.seen_at
        || n.read_at != d.read_at
        || n.clicked_at != d.clicked_at
        || n.archived_at != d.archived_at;
    Ok((n, changed))
}

/// Marks an entry seen (or read, which implies seen) at `now`, as
/// `seen_all`/`read_all` do for every entry not archived and not so yet.
pub fn mark_entry(d: &mut Delivery, read: bool, now: Timestamp) {
    d.seen_at.get_or_insert(now);
    if read {
        d.read_at.get_or_insert(now);
    }
}

/// The event of each entry `seen_all` (`read_all`) changed.
pub fn marked_event(read: bool) -> EventType {
    if read {
        EventType::FeedEntryRead
    } else {
        EventType::FeedEntrySeen
    }
}

/// Every `feed_entry.*` event type (a backend asks whether any endpoint
/// wants one before reading what a change needs for them).
pub const ENTRY_EVENTS: [EventType; 4] = [
    EventType::FeedEntrySeen,
    EventType::FeedEntryRead,
    EventType::FeedEntryClicked,
    EventType::FeedEntryArchived,
];

/// A `feed_entry.*` event for each flag an update set (seen, read, clicked,
/// archived); clearing a flag, as unarchiving does, has none.
pub fn entry_events(before: &Delivery, after: &Delivery) -> Vec<EventType> {
    [
        (before.seen_at, after.seen_at, EventType::FeedEntrySeen),
        (before.read_at, after.read_at, EventType::FeedEntryRead),
        (
            before.clicked_at,
            after.clicked_at,
            EventType::FeedEntryClicked,
        ),
        (
            before.archived_at,
            after.archived_at,
            EventType::FeedEntryArchived,
        ),
    ]
    .into_iter()
    .filter(|(b, a, _)| b.is_none() && a.is_some())
    .map(|(_, _, t)| t)
    .collect()
}

/// The event of a delivery's new state: `delivery.sent`, `.failed`,
/// `.skipped`, `.canceled`, or `.retrying` while pending after an attempt
/// (`None` for a delivery not attempted yet).
pub fn delivery_event(d: &Delivery) -> Option<EventType> {
    Some(match d.status {
        DeliveryStatus::Sent => EventType::DeliverySent,
        DeliveryStatus::Failed => EventType::DeliveryFailed,
        DeliveryStatus::Skipped => EventType::DeliverySkipped,
        DeliveryStatus::Canceled => EventType::DeliveryCanceled,
        DeliveryStatus::Pending if d.attempts > 0 => EventType::DeliveryRetrying,
        DeliveryStatus::Pending => return None,
    })
}
