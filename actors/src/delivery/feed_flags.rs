//! A feed entry's flags (seen, read, archived) as one byte, and how an entry
//! counts in its feed's `unread_count` and `unseen_count`: the rule every
//! backend stores and applies, so the counts mean the same on each.

use crate::model::{Delivery, FeedCounts};
use crate::storage::FeedFilter;

pub const SEEN: u8 = 1;
pub const READ: u8 = 2;
pub const ARCHIVED: u8 = 4;

/// The flags of an in-app delivery's feed entry.
pub fn flags_of(d: &Delivery) -> u8 {
    let mut f = 0;
    if d.seen_at.is_some() {
        f |= SEEN;
    }
    if d.read_at.is_some() {
        f |= READ;
    }
    if d.archived_at.is_some() {
        f |= ARCHIVED;
    }
    f
}

/// Unread and unseen counts with an entry of flags `f` added (`sign` 1) or
/// taken away (-1); archived entries do not count.
pub fn count_delta(c: &mut FeedCounts, f: u8, sign: i64) {
    if f & ARCHIVED != 0 {
        return;
    }
    let add = |x: &mut u64, on: bool| {
        if on {
            *x = (*x as i64 + sign).max(0) as u64;
        }
    };
    add(&mut c.unread, f & READ == 0);
    add(&mut c.unseen, f & SEEN == 0);
}

/// Whether an entry of flags `f` is in a feed list of `filter`: `all`
/// (everything not archived), `unread`, `unseen`, `read` (not archived
/// either) or `archived`.
pub fn listed(filter: FeedFilter, f: u8) -> bool {
    let archived = f & ARCHIVED != 0;
    match filter {
        FeedFilter::All => !archived,
        FeedFilter::Unread => !archived && f & READ == 0,
        FeedFilter::Unseen => !archived && f & SEEN == 0,
        FeedFilter::Read => !archived && f & READ != 0,
        FeedFilter::Archived => archived,
    }
}
