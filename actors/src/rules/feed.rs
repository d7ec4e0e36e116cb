//! A feed entry's transitions (a PATCH, `seen_all`/`read_all`) and the events
//! a feed change or a delivery's new state emits.

use crate::error::Error;
use crate::events::EventType;
use crate::model::{Delivery, DeliveryStatus, Timestamp};
use crate::delivery::feed_flags::{listed, ARCHIVED, READ, SEEN};
use crate::storage::{FeedMark, FeedScope, FeedUpdate};
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

/// Why a change of an entry is refused: it would take the entry back, or it
/// names an action button the entry does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryRefusal {
    GoesBack(GoesBack),
    /// `interact` with an index past the entry's `actions` (of this many).
    NoSuchAction { actions: usize },
}

impl EntryRefusal {
    /// The error a client sees: 409 `invalid_transition`, or 422
    /// `inclusion` at `action`.
    pub fn into_error(self, id: &Uuid) -> Error {
        match self {
            EntryRefusal::GoesBack(g) => g.into_error(id),
            EntryRefusal::NoSuchAction { actions: 0 } => {
                Error::field("action", "inclusion", "the entry has no actions")
            }
            EntryRefusal::NoSuchAction { actions } => Error::field(
                "action",
                "inclusion",
                format!("must be an index of the entry's actions, 0 to {}", actions - 1),
            ),
        }
    }
}

/// Applies a PATCH (or an action press) to an entry at `now`: the entry
/// after it and whether anything changed. Repeating a true keeps the first
/// time; `read` implies `seen`; `archived: false` clears the archive time.
/// Pressing an action records that press (its time and index, the latest
/// press kept) and reads the entry, as `read` does (docs/API.md §11): a
/// press is the recipient acting on what they read. It does not set
/// `clicked`, which is about the entry's own `url`.
pub fn update_entry(
    d: &Delivery, u: &FeedUpdate, now: Timestamp,
) -> Result<(Delivery, bool), EntryRefusal> {
    if (u.read == Some(false) && d.read_at.is_some())
        || (u.seen == Some(false) && d.seen_at.is_some())
    {
        return Err(EntryRefusal::GoesBack(GoesBack {
            state: d.feed_state(),
        }));
    }
    if let Some(i) = u.interact {
        if usize::from(i) >= d.data.actions.len() {
            return Err(EntryRefusal::NoSuchAction {
                actions: d.data.actions.len(),
            });
        }
    }
    let mut n = d.clone();
    if let Some(i) = u.interact {
        n.interacted_at = Some(now);
        n.interacted_action = Some(i);
    }
    if u.read == Some(true) || u.interact.is_some() {
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
        || n.archived_at != d.archived_at
        || n.interacted_at != d.interacted_at
        || n.interacted_action != d.interacted_action;
    Ok((n, changed))
}

/// The flag a change of many sets (`feed_flags`).
pub fn mark_flag(mark: FeedMark) -> u8 {
    match mark {
        FeedMark::Seen => SEEN,
        FeedMark::Read => READ,
        FeedMark::Archived => ARCHIVED,
    }
}

/// Whether `seen_all`/`read_all`/`archive_all` changes an entry of flags
/// `f`: the entry is in the list of the scope's status and does not have
/// the flag yet (the flow is `in_scope`'s, on the record).
pub fn marks(mark: FeedMark, scope: &FeedScope, f: u8) -> bool {
    listed(scope.status, f) && f & mark_flag(mark) == 0
}

/// Whether an entry is of the scope's flow (any, when it names none).
pub fn in_scope(scope: &FeedScope, d: &Delivery) -> bool {
    scope.flow.is_none_or(|f| f == d.flow_id)
}

/// Marks an entry seen, read (which implies seen) or archived at `now`, as
/// `seen_all`/`read_all`/`archive_all` do for every entry they select.
pub fn mark_entry(d: &mut Delivery, mark: FeedMark, now: Timestamp) {
    match mark {
        FeedMark::Seen => {
            d.seen_at.get_or_insert(now);
        }
        FeedMark::Read => {
            d.seen_at.get_or_insert(now);
            d.read_at.get_or_insert(now);
        }
        FeedMark::Archived => {
            d.archived_at.get_or_insert(now);
        }
    }
}

/// The event of each entry `seen_all` (`read_all`, `archive_all`) changed.
/// `read_all` sends only `feed_entry.read` for an entry it also made seen.
pub fn marked_event(mark: FeedMark) -> EventType {
    match mark {
        FeedMark::Seen => EventType::FeedEntrySeen,
        FeedMark::Read => EventType::FeedEntryRead,
        FeedMark::Archived => EventType::FeedEntryArchived,
    }
}

/// Every `feed_entry.*` event type (a backend asks whether any endpoint
/// wants one before reading what a change needs for them).
pub const ENTRY_EVENTS: [EventType; 5] = [
    EventType::FeedEntrySeen,
    EventType::FeedEntryRead,
    EventType::FeedEntryClicked,
    EventType::FeedEntryArchived,
    EventType::FeedEntryInteracted,
];

/// A `feed_entry.*` event for each flag an update set (seen, read, clicked,
/// archived), and `feed_entry.interacted` for each action press (every press
/// is one, the same action again included); clearing a flag, as unarchiving
/// does, has none.
pub fn entry_events(before: &Delivery, after: &Delivery) -> Vec<EventType> {
    let pressed = after.interacted_at.is_some()
        && (before.interacted_at != after.interacted_at
            || before.interacted_action != after.interacted_action);
    let mut out: Vec<EventType> = [
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
    .collect();
    if pressed {
        out.push(EventType::FeedEntryInteracted);
    }
    out
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
