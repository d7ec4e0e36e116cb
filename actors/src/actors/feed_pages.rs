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
