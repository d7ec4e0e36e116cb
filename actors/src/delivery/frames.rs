//! The text of live-feed frames: a `feed_entry.*` event as every socket of
//! the user gets it and as the event log keeps it.

use crate::model::FeedCounts;
use std::sync::Arc;

/// Builds the JSON text of a `feed_entry.*` frame, once for every socket.
pub fn feed_frame(
    kind: &str, seq: u64, entry: &impl serde::Serialize, counts: &FeedCounts,
) -> (Arc<str>, FeedCounts) {
    let entry = serde_json::to_string(entry).unwrap_or_else(|_| "{}".into());
    feed_frame_with(kind, seq, &entry, counts)
}

/// `feed_frame` around an entry already serialised: the entry does not depend
/// on the counts or `seq`, so it can be serialised before the feed lock is
/// taken. Keys come in the order a JSON object would print them.
pub fn feed_frame_with(
    kind: &str, seq: u64, entry_json: &str, counts: &FeedCounts,
) -> (Arc<str>, FeedCounts) {
    use std::fmt::Write;
    let mut text = String::with_capacity(entry_json.len() + 96);
    let kind = serde_json::to_string(kind).unwrap_or_else(|_| "\"\"".into());
    let _ = write!(
        text,
        r#"{{"entry":{entry_json},"meta":{{"unread_count":{},"unseen_count":{}}},"seq":{seq},"type":{kind}}}"#,
        counts.unread, counts.unseen
    );
    (Arc::from(text), *counts)
}

/// The kinds of live-feed events: a new entry in the feed, or an entry's
/// flags changed. A logged event keeps the kind's `index`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedEvent {
    Created,
    Updated,
}

impl FeedEvent {
    const ALL: [FeedEvent; 2] = [FeedEvent::Created, FeedEvent::Updated];

    /// The frame's `type`.
    pub fn as_str(self) -> &'static str {
        match self {
            FeedEvent::Created => "feed_entry.created",
            FeedEvent::Updated => "feed_entry.updated",
        }
    }

    pub fn index(self) -> u8 {
        self as u8
    }

    /// The kind of a logged index (an unknown one reads as `Created`).
    pub fn from_index(i: u8) -> FeedEvent {
        Self::ALL
            .get(i as usize)
            .copied()
            .unwrap_or(FeedEvent::Created)
    }
}

/// A run's actor as feed entries and frames show it (`null` for none).
pub fn actor_json(actor: Option<&crate::model::User>) -> serde_json::Value {
    crate::views::UserView::json(actor)
}
