//! The in-app feed: an index of a user's in_app deliveries with their state flags,
//! the user's unread/unseen counts and live-event sequence, and the event log.
//!
//! Three writers change a user's feed: a run's or a topic chunk's commit
//! (in-app deliveries settled at once, `runs.rs`), the in-app delivery actor,
//! which settles many users' queued deliveries in one commit
//! (`deliver_in_app`; which delivery goes to which feed is
//! `delivery::settle::in_app_feeds`), and the user's `UserActor` (PATCHes,
//! `seen_all`/`read_all`). All hold the user's feed lock (`feed_lock_key`)
//! from reading the counts until their commit, so each change gets the next
//! `seq` and counts are never lost: `seq` and counts are this backend's.

use super::keys::{tail_id, Key};
use super::page::{scan, Page, PageReq};
use super::{Store, Writes, T};
use crate::delivery::frames::{actor_json, feed_frame, feed_frame_with, FeedEvent};
use crate::error::{Error, Result};
use crate::model::{ChannelType, Delivery, DeliveryStatus, FeedCounts, Timestamp};
use crate::rules::feed;
use crate::storage::Refusal;
use crate::storage::*;
use crate::storage::{FeedChange, FeedFilter, FeedUpdate, FeedUpdateOutcome, Frame};
use serde_json::Value;
use std::collections::HashMap;
use uuid::Uuid;

impl Store {
    /// The user's feed changed (after the commit, under the feed lock).
    pub(crate) fn forget_feed_page(&self, project: &Uuid, user: &Uuid) {
        self.inner.feed_stamps.feed_changed(project, user);
    }

    /// A user of `project` changed (after its commit): pages showing it as
    /// an actor may be stale.
    pub(crate) fn bump_user_gen(&self, project: &Uuid) {
        self.inner.feed_stamps.project_changed(project);
    }
}

/// The logical lock of one user's feed.
pub fn feed_lock_key(project: &Uuid, user: &Uuid) -> Vec<u8> {
    Key::new().u8(b'f').id(project).id(user).0
}

pub(super) use crate::delivery::feed_flags::{count_delta, flags_of};

impl FeedFilter {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "all" => FeedFilter::All,
            "unread" => FeedFilter::Unread,
            "unseen" => FeedFilter::Unseen,
            "read" => FeedFilter::Read,
            "archived" => FeedFilter::Archived,
            _ => return None,
        })
    }
    fn matches(self, f: u8) -> bool {
        crate::delivery::feed_flags::listed(self, f)
    }
}

/// A feed entry's state as stored under its key in the feed tree: the flags
/// (what lists filter on), then the seen, read, clicked and archived times in
/// ms (0 for none), then, once the recipient pressed an action button, that
/// press's time in ms and the action's index (`INTERACTED_STATE` bytes in
/// all; entries never pressed keep the shorter `STATE` form, so entries
/// stored before actions existed read the same). The delivery record itself
/// is not rewritten by the user's changes, which keeps their writes small and
/// apart from the delivery actors'.
fn state_bytes(d: &Delivery) -> Vec<u8> {
    // room for the delivery id `entry_value` may add: one allocation
    let mut v = Vec::with_capacity(INTERACTED_STATE + 16);
    v.resize(STATE, 0);
    v[0] = flags_of(d);
    for (i, t) in [d.seen_at, d.read_at, d.clicked_at, d.archived_at]
        .iter()
        .enumerate()
    {
        let ms = t.map_or(0, |t| t.millis().max(1)) as u64;
        v[1 + i * 8..9 + i * 8].copy_from_slice(&ms.to_be_bytes());
    }
    if let Some(t) = d.interacted_at {
        v.extend_from_slice(&(t.millis().max(1) as u64).to_be_bytes());
        v.push(d.interacted_action.unwrap_or(0));
    }
    v
}

/// Bytes of a feed state without an interaction, and with one.
const STATE: usize = 33;
const INTERACTED_STATE: usize = STATE + 9;

/// The length of the state at the start of a feed value (see `entry_value`):
/// the value's length tells the four forms apart (33 and 42 bytes, plus 16
/// for the delivery id).
fn state_len(v: &[u8]) -> usize {
    match v.len() {
        INTERACTED_STATE => INTERACTED_STATE,
        n if n == INTERACTED_STATE + 16 => INTERACTED_STATE,
        _ => STATE,
    }
}

/// A feed entry's value: its state (`state_bytes`), then its delivery id
/// when the key's tail is not that id (an entry that entered the feed
/// after acceptance is keyed by `Delivery::feed_sort_id`).
fn entry_value(d: &Delivery) -> Vec<u8> {
    let mut v = state_bytes(d);
    let sort = d.feed_sort_id();
    if sort != d.id {
        v.extend_from_slice(d.id.as_bytes());
    }
    v
}

/// The delivery id of a feed entry stored as `(key, value)` (see
/// `entry_value`).
pub(super) fn entry_id(k: &[u8], v: &[u8]) -> Uuid {
    let at = state_len(v);
    match v.get(at..at + 16) {
        Some(id) => Uuid::from_slice(id).expect("16 bytes"),
        None => tail_id(k),
    }
}

/// Whether a feed value is of an entry keyed by a sort id other than its
/// delivery id (see `entry_value`).
pub(super) fn keyed_by_feed_time(v: &[u8]) -> bool {
    v.len() >= state_len(v) + 16
}

/// The key of `d`'s entry in its recipient's feed.
pub(super) fn feed_key(project: &Uuid, d: &Delivery) -> Key {
    Key::new()
        .id(project)
        .id(&d.recipient_id)
        .id(&d.feed_sort_id())
}

/// Sets the feed state of `d` from its stored bytes (see `state_bytes`): a
/// feed value, or an event's state alone.
fn apply_state(d: &mut Delivery, v: &[u8]) {
    let ms_at = |from: usize| -> Option<Timestamp> {
        let b = v.get(from..from + 8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        let ms = u64::from_be_bytes(a) as i64;
        (ms != 0).then(|| Timestamp::from_millis(ms))
    };
    let at = |i: usize| ms_at(1 + i * 8);
    d.seen_at = at(0);
    d.read_at = at(1);
    d.clicked_at = at(2);
    d.archived_at = at(3);
    if state_len(v) == INTERACTED_STATE {
        d.interacted_at = ms_at(STATE);
        d.interacted_action = v.get(STATE + 8).copied();
    } else {
        d.interacted_at = None;
        d.interacted_action = None;
    }
    d.follow_feed_flags();
}

/// Bytes before the frame in an event record.
pub(super) const EVENT_HEADER: usize = 24;

/// First byte of an event payload that is a reference (a frame is JSON text,
/// which starts with `{`).
const EVENT_REF: u8 = 1;

pub use crate::rules::feed::KEEP_EVENTS;
use crate::rules::feed::KEEP_MS;

impl Store {
    /// Stages event `seq` of a user's live feed, with the user's counts after it.
    /// Trims the oldest events beyond the last 1,000 that are also older than 24 h.
    ///
    /// Every change of the counts comes with an event, so the latest event holds
    /// the current counts (`feed_counts`): no separate counts record to write.
    /// Value: written at (ms, 8 bytes), unread (8), unseen (8), then the frame.
    pub(crate) fn stage_event(
        &self, w: &mut Writes, project: &Uuid, user: &Uuid, seq: u64, frame: &[u8],
        counts: &FeedCounts,
    ) -> Result<()> {
        let now = Timestamp::now().millis();
        let mut v = Vec::with_capacity(EVENT_HEADER + frame.len());
        v.extend_from_slice(&(now as u64).to_be_bytes());
        v.extend_from_slice(&counts.unread.to_be_bytes());
        v.extend_from_slice(&counts.unseen.to_be_bytes());
        v.extend_from_slice(frame);
        w.put(T::events, Key::new().id(project).id(user).u64(seq), v);
        w.counts
            .push((*project, *user, FeedCounts { seq, ..*counts }));
        if seq > KEEP_EVENTS {
            let prefix = Key::new().id(project).id(user);
            for kv in self.tree(T::events).scan_prefix(&prefix).take(8) {
                let (k, val) = kv?;
                let mut b = [0u8; 8];
                b.copy_from_slice(&k[k.len() - 8..]);
                let old = u64::from_be_bytes(b);
                let mut t = [0u8; 8];
                t.copy_from_slice(&val[..8]);
                if seq - old < KEEP_EVENTS || now - (u64::from_be_bytes(t) as i64) < KEEP_MS {
                    break;
                }
                w.del(T::events, k);
            }
        }
        Ok(())
    }

    /// Stages the user's next live-feed event, `kind` for `entry` (with `actor`
    /// shown on it): the next `seq`, its frame and the counts, which the caller
    /// has already brought up to date for this change. Returns the frame to push
    /// once the commit is durable.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn stage_feed_event(
        &self, w: &mut Writes, project: &Uuid, user: &Uuid, kind: FeedEvent, entry: &Delivery,
        actor: &Value, counts: &mut FeedCounts,
    ) -> Result<Frame> {
        let json = serde_json::to_string(&entry.feed_entry(actor))
            .map_err(|e| Error::internal(e.to_string()))?;
        self.stage_feed_event_with(w, project, user, kind, entry, &json, counts)
    }

    /// `stage_feed_event` with the entry's JSON already made (see `feed_frame_with`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn stage_feed_event_with(
        &self, w: &mut Writes, project: &Uuid, user: &Uuid, kind: FeedEvent, entry: &Delivery,
        entry_json: &str, counts: &mut FeedCounts,
    ) -> Result<Frame> {
        counts.seq += 1;
        let (f, meta) = feed_frame_with(kind.as_str(), counts.seq, entry_json, counts);
        // The log keeps a reference, not the frame: the frame is rebuilt from
        // the delivery when replayed (`events_between`), which keeps the most
        // written record small. Payload: tag, kind, delivery id, feed state.
        let mut payload = Vec::with_capacity(2 + 16 + INTERACTED_STATE);
        payload.push(EVENT_REF);
        payload.push(kind.index());
        payload.extend_from_slice(entry.id.as_bytes());
        payload.extend_from_slice(&state_bytes(entry));
        self.stage_event(w, project, user, counts.seq, &payload, counts)?;
        Ok((counts.seq, f, meta))
    }

    /// The frame of a logged event: stored as is, or rebuilt from a reference
    /// (see `stage_feed_event`) with the delivery as stored, the entry's state
    /// at the time and the actor as they are now; `None` when that delivery
    /// is gone (past the project's retention, or erased).
    fn event_frame(&self, project: &Uuid, seq: u64, v: &[u8]) -> Result<Option<Vec<u8>>> {
        let payload = v.get(EVENT_HEADER..).unwrap_or_default();
        if payload.first() != Some(&EVENT_REF) || payload.len() < 2 + 16 + STATE {
            return Ok(Some(payload.to_vec()));
        }
        let be = |b: &[u8]| {
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            u64::from_be_bytes(a)
        };
        let counts = FeedCounts {
            unread: be(&v[8..16]),
            unseen: be(&v[16..24]),
            seq,
        };
        let kind = FeedEvent::from_index(payload[1]).as_str();
        let id = Uuid::from_slice(&payload[2..18]).map_err(|e| Error::internal(e.to_string()))?;
        let Some(mut d) = self.delivery_raw(project, &id)? else {
            return Ok(None);
        };
        apply_state(&mut d, &payload[18..]);
        let actor = match d.actor_id {
            Some(a) => actor_json(self.user(project, &a)?.as_ref()),
            None => Value::Null,
        };
        let (f, _) = feed_frame(kind, seq, &d.feed_entry(&actor), &counts);
        Ok(Some(f.as_bytes().to_vec()))
    }

    /// The user's counts and latest `seq`, for a writer of the user's feed, which
    /// holds the user's feed lock. Served from the counts cache, which every
    /// commit of events updates (`Store::commit`) under the same lock, or read
    /// from the latest event and cached.
    pub(crate) fn feed_counts_locked(&self, project: &Uuid, user: &Uuid) -> Result<FeedCounts> {
        if let Some(c) = self.inner.feed_counts.get(&(*project, *user)) {
            return Ok(*c);
        }
        let c = self.feed_counts_stored(project, user)?;
        self.inner.feed_counts.insert((*project, *user), c);
        Ok(c)
    }

    /// Caches the empty counts of a user being created: nobody can write to a
    /// feed whose user id has not been committed yet, so they are exact, and the
    /// user's first notification finds them without scanning the event log.
    /// Left out when the cache is full (the log is read then, as for any miss).
    pub(crate) fn cache_new_feed(&self, project: &Uuid, user: &Uuid) {
        let cache = &self.inner.feed_counts;
        if cache.len() < super::FEED_COUNTS_CACHED {
            cache.entry((*project, *user)).or_default();
        }
    }

    /// The user's counts and latest `seq`: those stored with the latest event.
    fn feed_counts_stored(&self, project: &Uuid, user: &Uuid) -> Result<FeedCounts> {
        let Some(kv) = self
            .tree(T::events)
            .scan_prefix(Key::new().id(project).id(user))
            .next_back()
        else {
            return Ok(FeedCounts::default());
        };
        let (k, v) = kv?;
        if v.len() < EVENT_HEADER || k.len() < 8 {
            return Err(Error::internal("corrupt event record"));
        }
        let be = |b: &[u8]| {
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            u64::from_be_bytes(a)
        };
        Ok(FeedCounts {
            unread: be(&v[8..16]),
            unseen: be(&v[16..24]),
            seq: be(&k[k.len() - 8..]),
        })
    }

    /// Stages a new feed entry for `d` (an in_app delivery being marked sent);
    /// the caller stores the counts.
    pub(crate) fn stage_feed_insert(
        &self, w: &mut Writes, project: &Uuid, d: &Delivery, counts: &mut FeedCounts,
    ) {
        w.put(T::feed, feed_key(project, d), entry_value(d));
        count_delta(counts, flags_of(d), 1);
    }

    /// `d` with its feed state, when it is an entry of its recipient's feed.
    pub(crate) fn with_feed_state(&self, project: &Uuid, mut d: Delivery) -> Result<Delivery> {
        if d.channel_type == ChannelType::InApp && d.status == DeliveryStatus::Sent {
            if let Some(v) = self.tree(T::feed).get(feed_key(project, &d))? {
                apply_state(&mut d, &v);
            }
        }
        Ok(d)
    }

    /// Applies a PATCH. `read: false` / `seen: false` on an entry that already is
    /// read / seen is an invalid transition; repeating a true keeps the first time.
    /// Stages the PATCH into `w` (the caller commits, with its event).
    pub(crate) fn feed_update(
        &self, w: &mut Writes, project: &Uuid, user: &Uuid, id: &Uuid, u: FeedUpdate,
    ) -> Result<FeedUpdateOutcome> {
        let old = self.feed_entry(project, user, id)?;
        let before = flags_of(&old);
        let (d, changed) = feed::update_entry(&old, &u, Timestamp::now()).map_err(|refusal| {
            Refusal::EntryRefused {
                entry: *id,
                refusal,
            }
            .err()
        })?;
        let mut counts = self.feed_counts_locked(project, user)?;
        if changed {
            let after = flags_of(&d);
            count_delta(&mut counts, before, -1);
            count_delta(&mut counts, after, 1);
            w.put(T::feed, feed_key(project, &d), entry_value(&d));
        }
        Ok(FeedUpdateOutcome {
            entry: d,
            counts,
            changed,
        })
    }

    /// Stages `seen_all`/`read_all`/`archive_all` into `w`: every entry of
    /// `scope` the mark changes (`rules::feed::marks`). Returns the entries
    /// changed and the counts after (the caller stores the counts with its
    /// events and commits).
    pub(crate) fn feed_mark_all(
        &self, w: &mut Writes, project: &Uuid, user: &Uuid, mark: FeedMark, scope: FeedScope,
    ) -> Result<(Vec<Delivery>, FeedCounts)> {
        let now = Timestamp::now();
        let mut counts = self.feed_counts_locked(project, user)?;
        let mut updated = vec![];
        for kv in self
            .tree(T::feed)
            .scan_prefix(Key::new().id(project).id(user))
        {
            let (k, v) = kv?;
            let Some(&f) = v.first() else { continue }; // a marker
            if !feed::marks(mark, &scope, f) {
                continue;
            }
            let id = entry_id(&k, &v);
            let Some(mut d) = self.delivery_raw(project, &id)? else {
                continue;
            };
            if !feed::in_scope(&scope, &d) {
                continue;
            }
            apply_state(&mut d, &v);
            feed::mark_entry(&mut d, mark, now);
            let nf = flags_of(&d);
            count_delta(&mut counts, f, -1);
            count_delta(&mut counts, nf, 1);
            w.put(T::feed, &k, entry_value(&d));
            updated.push(d);
        }
        Ok((updated, counts))
    }

    /// Stages a `feed_entry.updated` event per changed entry after `w`'s
    /// changes and commits them together (the caller holds the feed lock);
    /// returns the frames.
    fn commit_feed_events(
        &self, mut w: Writes, project: &Uuid, user: &Uuid, entries: &[Delivery],
        counts: &mut FeedCounts,
    ) -> Result<Vec<Frame>> {
        let mut frames = Vec::with_capacity(entries.len());
        for d in entries {
            let actor = actor_json(
                d.actor_id
                    .and_then(|a| self.user(project, &a).ok().flatten())
                    .as_ref(),
            );
            frames.push(self.stage_feed_event(
                &mut w,
                project,
                user,
                FeedEvent::Updated,
                d,
                &actor,
                counts,
            )?);
        }
        let res = self.commit(w);
        self.forget_feed_page(project, user);
        res.map(|()| frames)
    }
}

impl FeedRepo for Store {
    fn feed_page(
        &self, project: &Uuid, user: &Uuid, scope: FeedScope, req: &PageReq,
    ) -> Result<Page<Delivery>> {
        scan(
            self.tree(T::feed),
            &Key::new().id(project).id(user),
            req,
            |k, v| {
                // Markers (empty values) list notifications, not feed entries.
                if v.is_empty() || !scope.status.matches(v[0]) {
                    return Ok(None);
                }
                Ok(self
                    .delivery_raw(project, &entry_id(k, v))?
                    .filter(|d| feed::in_scope(&scope, d))
                    .map(|mut d| {
                        apply_state(&mut d, v);
                        d
                    }))
            },
        )
    }

    /// The entry if it is in this user's feed (anything else is "not found").
    fn feed_entry(&self, project: &Uuid, user: &Uuid, id: &Uuid) -> Result<Delivery> {
        let missing = || Refusal::missing("feed_entry", id);
        let mut d = self
            .delivery_raw(project, id)?
            .filter(|d| d.recipient_id == *user && d.channel_type == ChannelType::InApp)
            .ok_or_else(missing)?;
        let state = self
            .tree(T::feed)
            .get(feed_key(project, &d))?
            .filter(|v| !v.is_empty())
            .ok_or_else(missing)?;
        apply_state(&mut d, &state);
        Ok(d)
    }

    fn feed_positions(&self, users: &[(Uuid, Uuid)]) -> Result<Vec<u64>> {
        users
            .iter()
            .map(|(p, u)| Ok(self.feed_counts_stored(p, u)?.seq))
            .collect()
    }

    /// The entries' flags are in the feed index; their flow is in the
    /// delivery, read only for entries that count (unread or unseen).
    fn feed_counts_by_flow(&self, project: &Uuid, user: &Uuid) -> Result<Vec<FlowFeedCounts>> {
        use crate::delivery::feed_flags::{count_delta, ARCHIVED, READ, SEEN};
        let mut by_flow: HashMap<Uuid, FeedCounts> = HashMap::new();
        for kv in self
            .tree(T::feed)
            .scan_prefix(Key::new().id(project).id(user))
        {
            let (k, v) = kv?;
            let Some(&f) = v.first() else { continue }; // a marker
            if f & ARCHIVED != 0 || f & (READ | SEEN) == READ | SEEN {
                continue;
            }
            if let Some(d) = self.delivery_raw(project, &entry_id(&k, &v))? {
                count_delta(by_flow.entry(d.flow_id).or_default(), f, 1);
            }
        }
        Ok(by_flow
            .into_iter()
            .map(|(flow_id, c)| FlowFeedCounts {
                flow_id,
                unread: c.unread,
                unseen: c.unseen,
            })
            .collect())
    }

    /// The frames of events `after < seq <= upto`, or `None` when the log no longer
    /// reaches back to `after + 1`.
    fn frames_between(&self, feed: FeedOf<'_>, after: u64, upto: u64) -> Result<LoggedFrames> {
        let FeedOf { project, user } = feed;
        let prefix = Key::new().id(project).id(user);
        let start = prefix.clone().u64(after + 1);
        let end = prefix.clone().u64(upto);
        let mut out = Vec::with_capacity((upto - after).min(1024) as usize);
        let mut expect = after + 1;
        for kv in self.tree(T::events).range(start.0..=end.0) {
            let (k, v) = kv?;
            let mut b = [0u8; 8];
            b.copy_from_slice(&k[k.len() - 8..]);
            if u64::from_be_bytes(b) != expect {
                return Ok(None);
            }
            // An event of a delivery that is gone cannot be replayed: the
            // client reloads, as for a log that no longer reaches back.
            let Some(frame) = self.event_frame(project, expect, &v)? else {
                return Ok(None);
            };
            out.push(frame);
            expect += 1;
        }
        if expect != upto + 1 {
            return Ok(None);
        }
        Ok(Some(out))
    }

    /// Applies a PATCH of one feed entry with its `feed_entry.updated` event,
    /// in one commit under the user's feed lock.
    fn update_feed_entry(
        &self, project: &Uuid, user: &Uuid, id: &Uuid, u: FeedUpdate,
    ) -> Result<FeedChange<Delivery>> {
        let key = feed_lock_key(project, user);
        let _feed = self.lock_feeds([key.as_slice()]);
        let mut w = Writes::new();
        let before = if self.wants_feed_events(project) {
            Some(self.feed_entry(project, user, id)?)
        } else {
            None
        };
        let out = self.feed_update(&mut w, project, user, id, u)?;
        if let (Some(b), true) = (&before, out.changed) {
            self.stage_feed_entry_events(&mut w, project, b, &out.entry);
        }
        let mut counts = out.counts;
        let frames = if out.changed {
            let entries = std::slice::from_ref(&out.entry);
            self.commit_feed_events(w, project, user, entries, &mut counts)?
        } else {
            vec![]
        };
        Ok(FeedChange {
            value: out.entry,
            counts,
            frames,
        })
    }

    /// Applies `seen_all`, `read_all` or `archive_all` with one event per
    /// entry changed, in one commit under the user's feed lock.
    fn mark_feed(
        &self, project: &Uuid, user: &Uuid, mark: FeedMark, scope: FeedScope,
    ) -> Result<FeedChange<usize>> {
        let key = feed_lock_key(project, user);
        let _feed = self.lock_feeds([key.as_slice()]);
        let mut w = Writes::new();
        let (updated, mut counts) = self.feed_mark_all(&mut w, project, user, mark, scope)?;
        self.stage_feed_marked_events(&mut w, project, &updated, mark);
        let frames = if updated.is_empty() {
            vec![]
        } else {
            self.commit_feed_events(w, project, user, &updated, &mut counts)?
        };
        Ok(FeedChange {
            value: updated.len(),
            counts,
            frames,
        })
    }
}

/// Reads of the trait `RecordRepo` answers (`lookups.rs`).
impl Store {
    /// The user's counts and latest `seq` as last committed (any thread).
    pub fn feed_counts(&self, project: &Uuid, user: &Uuid) -> Result<FeedCounts> {
        if let Some(c) = self.inner.feed_counts.get(&(*project, *user)) {
            return Ok(*c);
        }
        self.feed_counts_stored(project, user)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[allow(unused_imports)]
    use crate::storage::*;

    /// The four forms of a feed value (with or without a press, keyed by
    /// the delivery id or not) read back as written; an old 33-byte value
    /// reads with no press.
    #[test]
    fn feed_values_keep_the_press_and_the_delivery_id_apart() {
        let t = Timestamp::from_millis(1_700_000_000_000);
        let base: Delivery = serde_json::from_value(serde_json::json!({
            "id": Uuid::now_v7(), "notification_id": Uuid::now_v7(),
            "flow_run_id": Uuid::now_v7(), "flow_id": Uuid::now_v7(),
            "channel_id": Uuid::now_v7(), "channel_type": "in_app", "topic": null,
            "status": "sent", "data": {"subject": "", "body": "b"},
            "actor_id": null, "recipient_id": Uuid::now_v7(), "attempts": 1,
            "error": null, "due_at": t, "next_attempt_at": null, "sent_at": t,
            "seen_at": null, "read_at": null, "clicked_at": null, "archived_at": null,
            "created_at": t, "updated_at": t
        }))
        .unwrap();
        let key = feed_key(&Uuid::nil(), &base).0;
        for pressed in [false, true] {
            for later in [false, true] {
                let mut d = base.clone();
                d.read_at = Some(t);
                if pressed {
                    d.interacted_at = Some(Timestamp::from_millis(t.millis() + 5));
                    d.interacted_action = Some(1);
                }
                if later {
                    d.feed_at = Some(Timestamp::from_millis(t.millis() + 60_000));
                }
                let v = entry_value(&d);
                let k = feed_key(&Uuid::nil(), &d).0;
                assert_eq!(entry_id(&k, &v), d.id, "{pressed} {later}");
                assert_eq!(keyed_by_feed_time(&v), later, "{pressed} {later}");
                let mut back = base.clone();
                apply_state(&mut back, &v);
                assert_eq!(back.read_at, d.read_at);
                assert_eq!(back.interacted_at, d.interacted_at, "{pressed} {later}");
                assert_eq!(back.interacted_action, d.interacted_action);
                // an event keeps the state alone
                let mut ev = base.clone();
                apply_state(&mut ev, &state_bytes(&d));
                assert_eq!(ev.interacted_action, d.interacted_action);
            }
        }
        let old = [0u8; 33];
        let mut d = base.clone();
        apply_state(&mut d, &old);
        assert_eq!((d.interacted_at, d.interacted_action), (None, None));
        assert_eq!(entry_id(&key, &old), base.id);
    }

    #[test]
    fn event_log_replays_exact_ranges_and_reports_gaps() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let (p, u) = (Uuid::now_v7(), Uuid::now_v7());
        let mut w = Writes::new();
        for seq in 1..=5u64 {
            store
                .stage_event(
                    &mut w,
                    &p,
                    &u,
                    seq,
                    format!("e{seq}").as_bytes(),
                    &FeedCounts::default(),
                )
                .unwrap();
        }
        store.commit(w).unwrap();
        let got = (&store as &dyn Storage)
            .events_between(&p, &u, 2, 5)
            .unwrap()
            .unwrap();
        assert_eq!(got, vec![b"e3".to_vec(), b"e4".to_vec(), b"e5".to_vec()]);
        assert_eq!(
            (&store as &dyn Storage)
                .events_between(&p, &u, 5, 5)
                .unwrap()
                .unwrap()
                .len(),
            0
        );
        // A gap at the start (trimmed log) is "cannot serve".
        let mut w = Writes::new();
        w.del(T::events, Key::new().id(&p).id(&u).u64(1));
        store.commit(w).unwrap();
        assert!((&store as &dyn Storage)
            .events_between(&p, &u, 0, 5)
            .unwrap()
            .is_none());
        assert!((&store as &dyn Storage)
            .events_between(&p, &u, 1, 5)
            .unwrap()
            .is_some());
    }

    #[test]
    fn recent_events_are_kept_beyond_the_count() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let (p, u) = (Uuid::now_v7(), Uuid::now_v7());
        for seq in 1..=(KEEP_EVENTS + 50) {
            let mut w = Writes::new();
            store
                .stage_event(&mut w, &p, &u, seq, b"x", &FeedCounts::default())
                .unwrap();
            store.commit(w).unwrap();
        }
        // All younger than 24 h: nothing trimmed, the whole log replays.
        assert_eq!(
            store
                .frames_between(
                    FeedOf {
                        project: &p,
                        user: &u
                    },
                    0,
                    KEEP_EVENTS + 50
                )
                .unwrap()
                .unwrap()
                .len() as u64,
            KEEP_EVENTS + 50
        );
    }

    /// The counts cache follows every commit of events, and a reader that
    /// fills it from disk gets what the latest event holds.
    #[test]
    fn cached_counts_follow_committed_events() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let (p, u) = (Uuid::now_v7(), Uuid::now_v7());
        assert_eq!(
            store.feed_counts_locked(&p, &u).unwrap(),
            FeedCounts::default()
        );
        for seq in 1..=3u64 {
            let mut counts = store.feed_counts_locked(&p, &u).unwrap();
            assert_eq!(counts.seq, seq - 1);
            counts.unread += 1;
            counts.unseen += 2;
            let mut w = Writes::new();
            store
                .stage_event(&mut w, &p, &u, seq, b"x", &counts)
                .unwrap();
            store.commit(w).unwrap();
            let cached = store.feed_counts(&p, &u).unwrap();
            assert_eq!(cached, store.feed_counts_stored(&p, &u).unwrap());
            assert_eq!(
                (cached.seq, cached.unread, cached.unseen),
                (seq, seq, 2 * seq)
            );
        }
        // A fresh store (a restart) reads the same from disk.
        drop(store);
        let store = Store::open(dir.path()).unwrap();
        let c = store.feed_counts_locked(&p, &u).unwrap();
        assert_eq!((c.seq, c.unread, c.unseen), (3, 3, 6));
    }
}
