//! A feed entry's transitions (a PATCH, `seen_all`/`read_all`) and the events
//! a feed change or a delivery's new state emits.

use crate::delivery::feed_flags::{listed, ARCHIVED, READ, SEEN};
use crate::error::Error;
use crate::events::EventType;
use crate::model::{CategoryCounts, Delivery, DeliveryStatus, FeedCounts, Flow, Timestamp};
#[cfg(test)]
use crate::storage::FeedFilter;
use crate::storage::{FeedMark, FeedScope, FeedUpdate, FlowFeedCounts};
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
    NoSuchAction {
        actions: usize,
    },
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
                format!(
                    "must be an index of the entry's actions, 0 to {}",
                    actions - 1
                ),
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

/// A feed's unread and unseen entries per category: every category of
/// `declared` (zero when none of its flows has an entry), each counting
/// the entries of the flows (`flows`, the live ones) that name it now, so
/// an entry counts in the tabs its flow is in, as `?category=` lists it.
/// An entry of a flow with two categories counts in both.
pub fn by_category<'a>(
    declared: impl IntoIterator<Item = &'a String>, flows: &[Flow], counts: &[FlowFeedCounts],
) -> CategoryCounts {
    let mut out: CategoryCounts = declared
        .into_iter()
        .map(|c| (c.clone(), FeedCounts::default()))
        .collect();
    for c in counts {
        let Some(flow) = flows.iter().find(|f| f.id == c.flow_id) else {
            continue;
        };
        for cat in &flow.categories {
            if let Some(t) = out.get_mut(cat) {
                t.unread += c.unread;
                t.unseen += c.unseen;
            }
        }
    }
    out
}

/// Whether an entry is of one of the scope's flows (any, when it names none).
pub fn in_scope(scope: &FeedScope, d: &Delivery) -> bool {
    scope
        .flows
        .as_ref()
        .is_none_or(|fs| fs.contains(&d.flow_id))
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
/// `.skipped`, `.canceled`, `.delivered`, `.bounced`, `.complained`, or `.retrying` while pending after an attempt
/// (`None` for a delivery not attempted yet).
pub fn delivery_event(d: &Delivery) -> Option<EventType> {
    Some(match d.status {
        DeliveryStatus::Sent => EventType::DeliverySent,
        DeliveryStatus::Failed => EventType::DeliveryFailed,
        DeliveryStatus::Skipped => EventType::DeliverySkipped,
        DeliveryStatus::Canceled => EventType::DeliveryCanceled,
        DeliveryStatus::Delivered => EventType::DeliveryDelivered,
        DeliveryStatus::Bounced => EventType::DeliveryBounced,
        DeliveryStatus::Complained => EventType::DeliveryComplained,
        DeliveryStatus::Pending if d.attempts > 0 => EventType::DeliveryRetrying,
        DeliveryStatus::Pending => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::delivery::feed_flags::flags_of;
    use crate::model::{ChannelType, Rendered, RenderedAction};

    fn entry(actions: usize) -> Delivery {
        let t = Timestamp::from_millis(1_000);
        Delivery {
            id: Uuid::now_v7(),
            notification_id: Uuid::now_v7(),
            flow_run_id: Uuid::now_v7(),
            flow_id: Uuid::now_v7(),
            channel_id: Uuid::now_v7(),
            channel_type: ChannelType::InApp,
            topic: None,
            status: DeliveryStatus::Sent,
            data: Rendered {
                actions: (0..actions)
                    .map(|i| RenderedAction {
                        label: format!("a{i}"),
                        url: format!("https://x/{i}"),
                    })
                    .collect(),
                ..Rendered::default()
            },
            outcomes: None,
            actor_id: None,
            recipient_id: Uuid::now_v7(),
            attempts: 1,
            error: None,
            due_at: t,
            next_attempt_at: None,
            sent_at: Some(t),
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
        }
    }

    fn press(i: u8) -> FeedUpdate {
        FeedUpdate {
            interact: Some(i),
            ..FeedUpdate::default()
        }
    }

    #[test]
    fn a_press_records_the_action_and_reads_the_entry() {
        let d = entry(2);
        let t1 = Timestamp::from_millis(5_000);
        let (n, changed) = update_entry(&d, &press(1), t1).unwrap();
        assert!(changed);
        assert_eq!((n.interacted_at, n.interacted_action), (Some(t1), Some(1)));
        assert_eq!(
            (n.read_at, n.seen_at, n.clicked_at),
            (Some(t1), Some(t1), None)
        );
        assert_eq!(
            entry_events(&d, &n),
            [
                EventType::FeedEntrySeen,
                EventType::FeedEntryRead,
                EventType::FeedEntryInteracted
            ]
        );
        // a later press: the latest is kept, the first read stays, one event
        let t2 = Timestamp::from_millis(9_000);
        let (m, changed) = update_entry(&n, &press(0), t2).unwrap();
        assert!(changed);
        assert_eq!((m.interacted_at, m.interacted_action), (Some(t2), Some(0)));
        assert_eq!(m.read_at, Some(t1));
        assert_eq!(entry_events(&n, &m), [EventType::FeedEntryInteracted]);
    }

    #[test]
    fn a_press_past_the_actions_is_refused() {
        for (actions, i) in [(0, 0), (2, 2), (1, 255)] {
            let err = update_entry(&entry(actions), &press(i), Timestamp::now()).unwrap_err();
            assert_eq!(err, EntryRefusal::NoSuchAction { actions });
            let e = err.into_error(&Uuid::nil());
            assert_eq!(e.code.status(), 422, "{e:?}");
        }
    }

    #[test]
    fn archive_all_selects_by_status_and_flow() {
        let d = entry(0);
        let all = FeedScope::default();
        let read = FeedScope {
            status: FeedFilter::Read,
            flows: None,
        };
        let of_flow = FeedScope {
            status: FeedFilter::All,
            flows: Some(vec![Uuid::nil(), d.flow_id]),
        };
        let other_flow = FeedScope {
            status: FeedFilter::All,
            flows: Some(vec![Uuid::nil()]),
        };
        let no_flow = FeedScope {
            status: FeedFilter::All,
            flows: Some(vec![]),
        };
        assert!(!in_scope(&no_flow, &d), "an empty category selects nothing");
        let f = flags_of(&d);
        assert!(marks(FeedMark::Archived, &all, f));
        assert!(!marks(FeedMark::Archived, &read, f), "an unread entry");
        assert!(in_scope(&of_flow, &d) && in_scope(&all, &d));
        assert!(!in_scope(&other_flow, &d));
        let mut a = d.clone();
        mark_entry(&mut a, FeedMark::Archived, Timestamp::from_millis(7));
        assert_eq!(a.archived_at, Some(Timestamp::from_millis(7)));
        assert_eq!((a.read_at, a.seen_at), (None, None));
        assert!(
            !marks(FeedMark::Archived, &all, flags_of(&a)),
            "archived already"
        );
        assert_eq!(
            marked_event(FeedMark::Archived),
            EventType::FeedEntryArchived
        );
        // read_all still reads (and sees) what it selects
        let mut r = d.clone();
        mark_entry(&mut r, FeedMark::Read, Timestamp::from_millis(8));
        assert!(r.read_at.is_some() && r.seen_at.is_some());
        assert!(marks(FeedMark::Archived, &read, flags_of(&r)));
    }
}

#[cfg(test)]
mod category_tests {
    use super::*;
    use crate::model::{new_id, FlowStatus};

    fn flow(categories: &[&str], status: FlowStatus) -> Flow {
        let (id, now) = new_id();
        Flow {
            id,
            handle: format!("f{id}"),
            name: "F".into(),
            description: None,
            status,
            steps: vec![],
            critical: false,
            commercial: false,
            categories: categories.iter().map(|c| c.to_string()).collect(),
            created_at: now,
            updated_at: now,
        }
    }

    fn n(flow: &Flow, unread: u64, unseen: u64) -> FlowFeedCounts {
        FlowFeedCounts {
            flow_id: flow.id,
            unread,
            unseen,
        }
    }

    #[test]
    fn every_declared_category_counts_the_entries_of_the_flows_naming_it() {
        let declared: Vec<String> = ["billing", "comments", "news"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let comments = flow(&["comments"], FlowStatus::Active);
        let both = flow(&["comments", "billing"], FlowStatus::Active);
        let none = flow(&[], FlowStatus::Active);
        let gone = flow(&["news"], FlowStatus::Active);
        let flows = vec![comments.clone(), both.clone(), none.clone()];
        let counts = [
            n(&comments, 2, 1),
            n(&both, 1, 1),
            n(&none, 5, 5),
            // a flow no longer live counts nowhere, like `?category=`
            n(&gone, 7, 7),
        ];
        let got = by_category(&declared, &flows, &counts);
        let pair = |c: &str| (got[c].unread, got[c].unseen);
        assert_eq!(got.len(), 3);
        assert_eq!(pair("comments"), (3, 2));
        assert_eq!(pair("billing"), (1, 1));
        assert_eq!(pair("news"), (0, 0));
    }

    #[test]
    fn a_handle_not_declared_is_not_listed() {
        let f = flow(&["old"], FlowStatus::Active);
        let got = by_category(&[], std::slice::from_ref(&f), &[n(&f, 1, 1)]);
        assert!(got.is_empty());
    }
}
