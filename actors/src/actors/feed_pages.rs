//! The engine's cache of first feed pages: the most frequent User API read
//! (an inbox polling its feed) answered from memory, without a hop to the
//! blocking pool. A page is kept with the feed's change stamp read before
//! the page was (`Memory::FeedStamp`), and served only while the backend
//! answers the same stamp: every commit that changes the feed, or a user
//! its entries show as an actor, changes it. A backend that keeps no stamps
//! (PostgreSQL, whose feeds other nodes change) has no pages cached.

use dashmap::DashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// Entries expire after this (their cursors are signed with a time).
const PAGE_TTL: Duration = Duration::from_secs(60);
/// Pages kept at most; the cache starts over past that.
const PAGES_CACHED: usize = 2048;
/// A larger page is not kept (with `PAGES_CACHED`: 64 MiB at most).
const PAGE_BYTES_CACHED: usize = 32 * 1024;

struct CachedPage {
    limit: usize,
    stamp: u64,
    at: Instant,
    body: Arc<[u8]>,
}

/// First feed pages by `(project, user)` (an engine part).
#[derive(Default)]
pub(crate) struct FeedPages(DashMap<(Uuid, Uuid), CachedPage>);

impl FeedPages {
    /// The cached first page with `limit` entries, if the feed's stamp is
    /// still `stamp`.
    pub(crate) fn get(
        &self, project: &Uuid, user: &Uuid, limit: usize, stamp: u64,
    ) -> Option<Arc<[u8]>> {
        let e = self.0.get(&(*project, *user))?;
        (e.limit == limit && e.stamp == stamp && e.at.elapsed() < PAGE_TTL).then(|| e.body.clone())
    }

    /// Keeps a page read after the feed's stamp was `stamp`.
    pub(crate) fn put(
        &self, project: &Uuid, user: &Uuid, limit: usize, stamp: u64, body: &Arc<[u8]>,
    ) {
        if body.len() > PAGE_BYTES_CACHED {
            return;
        }
        if self.0.len() >= PAGES_CACHED {
            self.0.clear();
        }
        self.0.insert(
            (*project, *user),
            CachedPage {
                limit,
                stamp,
                at: Instant::now(),
                body: body.clone(),
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::FeedPages;
    use std::sync::Arc;
    use uuid::Uuid;

    #[test]
    fn a_page_is_served_only_for_its_stamp_and_limit() {
        let pages = FeedPages::default();
        let (p, u) = (Uuid::now_v7(), Uuid::now_v7());
        let body: Arc<[u8]> = Arc::from(&b"{\"entries\":[]}"[..]);
        pages.put(&p, &u, 20, 7, &body);
        assert_eq!(pages.get(&p, &u, 20, 7).as_deref(), Some(&body[..]));
        assert!(pages.get(&p, &u, 20, 8).is_none(), "the feed changed since");
        assert!(pages.get(&p, &u, 10, 7).is_none(), "another page size");
        assert!(pages.get(&p, &Uuid::now_v7(), 20, 7).is_none());
        let big: Arc<[u8]> = vec![b' '; 40 * 1024].into();
        pages.put(&p, &u, 20, 9, &big);
        assert!(
            pages.get(&p, &u, 20, 9).is_none(),
            "a page over 32 KiB is not kept"
        );
    }
}
