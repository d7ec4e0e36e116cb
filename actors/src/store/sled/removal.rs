//! What removing a notification from the sled store takes (`Removal`):
//! every key that points at it, found without decoding whole records
//! (`skim`), staged in one bounded batch. Retention and erasure (both in
//! `retention.rs`) remove through it, so a notification leaves the same way
//! whoever removes it.

use super::feed::count_delta;
use super::keys::Key;
use super::records::{group_members, group_value, NotifRec};
use super::runs::{
    flow_index, notif_key, recipient_marker, run_index, status_indexed, topic_index,
};
use super::{Store, Writes, T};
use crate::error::{Error, Result};
use crate::model::{ChannelType, DeliveryStatus, FeedCounts, Timestamp};
use crate::storage::PurgeReport;
use serde::Deserialize;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::ops::Bound;
use uuid::Uuid;

/// Records a pass may look at per record it may remove: what it cannot remove
/// yet (pending notifications, markers) is skipped, within this budget.
pub(super) const SCAN_FACTOR: usize = 8;

/// How far past the newest id being removed a packed index chunk is still
/// looked at: a chunk holds the ids of one commit, all made within moments
/// of its key (its largest id).
pub(super) const CHUNK_SPAN_MS: i64 = 60_000;

/// The lowest UUIDv7 of instant `t`: every id below it was made before `t`.
pub(super) fn id_floor(t: Timestamp) -> [u8; 16] {
    let ms = (t.millis().max(0) as u64).to_be_bytes();
    let mut id = [0u8; 16];
    id[..6].copy_from_slice(&ms[2..8]);
    id
}

pub(super) fn be_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_be_bytes(a)
}

/// Whether a throttle counter (`v`, its runs' project-time instants) holds
/// nothing within `window` (ms; `None`: its step is gone) at `now`.
pub(super) fn counter_expired(v: &[u8], window: Option<i64>, now: i64) -> Result<bool> {
    let Some(window) = window else {
        return Ok(true);
    };
    let hits: Vec<i64> = super::codec::dec(v)?;
    Ok(hits.iter().all(|t| *t <= now.saturating_sub(window)))
}

/// What the purge reads of a stored notification: the fields of
/// `records::NotifRec`'s stored form it needs, by name. The rest (rendered
/// content, outcomes, errors, gates) is skipped, not decoded: decoding whole
/// records was most of the purge's CPU.
#[derive(Deserialize)]
pub(super) struct SkimN<'a> {
    pub(super) i: Uuid,
    pub(super) f: Uuid,
    pub(super) r: Uuid,
    #[serde(borrow)]
    pub(super) t: Option<Cow<'a, str>>,
    pub(super) p: bool,
    pub(super) u: Uuid,
    pub(super) c: Timestamp,
}

#[derive(Deserialize)]
pub(super) struct SkimD<'a> {
    pub(super) i: Uuid,
    pub(super) ct: ChannelType,
    pub(super) s: DeliveryStatus,
    /// `Delivery::feed_at`: where its feed entry is (`feed_key`).
    #[serde(default)]
    pub(super) fa: Option<Timestamp>,
    /// Its rendered content, borrowed, for what it counted in the
    /// project's usage (`quota`).
    #[serde(borrow)]
    pub(super) d: SkimR<'a>,
}

/// A delivery's `Rendered` as stored, its strings borrowed, not copied.
#[derive(Deserialize)]
pub(super) struct SkimR<'a> {
    #[serde(borrow)]
    pub(super) subject: Cow<'a, str>,
    #[serde(borrow)]
    pub(super) body: Cow<'a, str>,
    #[serde(default, borrow)]
    pub(super) html: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub(super) url: Option<Cow<'a, str>>,
    /// Action buttons count as `quota::content_bytes` counts them.
    #[serde(default)]
    pub(super) actions: Vec<crate::model::RenderedAction>,
}

impl SkimR<'_> {
    pub(super) fn len(&self) -> u64 {
        (self.subject.len()
            + self.body.len()
            + self.html.as_deref().map_or(0, str::len)
            + self.url.as_deref().map_or(0, str::len)
            + self
                .actions
                .iter()
                .map(|a| a.label.len() + a.url.len())
                .sum::<usize>()) as u64
    }
}

#[derive(Deserialize)]
pub(super) struct Skim<'a> {
    #[serde(borrow)]
    pub(super) n: SkimN<'a>,
    #[serde(borrow)]
    pub(super) d: Vec<SkimD<'a>>,
}

pub(super) fn skim(v: &[u8]) -> Result<Skim<'_>> {
    match v.split_first() {
        Some((1, b)) => {
            rmp_serde::from_slice(b).map_err(|e| Error::internal(format!("corrupt record: {e}")))
        }
        _ => Err(Error::internal("corrupt record: unknown version byte")),
    }
}

/// Where a notification's own key stands, as far as the caller knows.
#[derive(Clone, Copy)]
pub(super) enum Alone {
    /// Not known: looked up.
    Unknown,
    /// Not stored alone (only in its group).
    No,
    /// Stored alone, its value this many bytes.
    Yes(usize),
}

/// A notification to remove: what the removal needs of it.
pub(super) struct Doomed {
    pub(super) id: Uuid,
    pub(super) flow: Uuid,
    pub(super) run: Uuid,
    pub(super) topic: Option<String>,
    pub(super) user: Uuid,
    /// Its deliveries: (id, channel type, status, `feed_sort_id`).
    pub(super) d: Vec<(Uuid, ChannelType, DeliveryStatus, Uuid)>,
    pub(super) alone: Alone,
    /// What it counts in the project's usage (`quota::cost_of`).
    pub(super) usage: u64,
}

impl Doomed {
    pub(super) fn of(r: &NotifRec) -> Doomed {
        Doomed {
            id: r.n.id,
            flow: r.n.flow_id,
            run: r.n.flow_run_id,
            topic: r.n.topic.clone(),
            user: r.n.recipient_id,
            d: r.d
                .iter()
                .map(|d| (d.id, d.channel_type, d.status, d.feed_sort_id()))
                .collect(),
            alone: Alone::Unknown,
            usage: crate::quota::notification_cost(r.d.iter().map(|d| &d.data)),
        }
    }
}

/// Notifications being removed in one batch, with everything pointing at them.
pub(super) struct Removal<'s> {
    pub(super) store: &'s Store,
    pub(super) p: Uuid,
    pub(super) w: Writes,
    /// Groups touched: key → (value as read, `None`: no group; indexes of
    /// the members removed).
    pub(super) groups: HashMap<Vec<u8>, (Option<sled::IVec>, Vec<u8>)>,
    pub(super) runs: HashMap<Uuid, HashSet<[u8; 16]>>,
    pub(super) flows: HashMap<Uuid, HashSet<[u8; 16]>>,
    pub(super) topics: HashMap<String, HashSet<[u8; 16]>>,
    /// Per recipient: what the feed entries removed counted (unread, unseen).
    pub(super) feeds: HashMap<Uuid, FeedCounts>,
    /// Notifications whose traces go, in the order removed; with `dense`,
    /// they are one stretch of ids and their traces go by one range scan
    /// (the purge), else by a prefix scan each (an erasure: one user's
    /// notifications, spread over time).
    pub(super) traced: Vec<[u8; 16]>,
    pub(super) dense: bool,
    pub(super) report: PurgeReport,
}

impl<'s> Removal<'s> {
    pub(super) fn new(store: &'s Store, p: Uuid, dense: bool) -> Self {
        Removal {
            store,
            p,
            w: Writes::new(),
            groups: HashMap::new(),
            runs: HashMap::new(),
            flows: HashMap::new(),
            topics: HashMap::new(),
            feeds: HashMap::new(),
            traced: vec![],
            dense,
            report: PurgeReport::default(),
        }
    }

    /// Stages the removal of a notification and everything pointing at it.
    /// The caller holds the recipient's feed lock.
    pub(super) fn remove(&mut self, rec: &Doomed) -> Result<()> {
        let (p, nid) = (self.p, rec.id);
        let notifications = self.store.tree(T::notifications);
        let nk = notif_key(&p, &nid);
        match rec.alone {
            Alone::Yes(len) => {
                self.report.bytes += (nk.0.len() + len) as u64;
                self.w.del(T::notifications, &nk);
            }
            Alone::No => {}
            Alone::Unknown => {
                if let Some(v) = notifications.get(&nk)? {
                    self.report.bytes += (nk.0.len() + v.len()) as u64;
                    self.w.del(T::notifications, &nk);
                }
            }
        }
        // Its copy in a group, if it has one (the group's other members stay).
        let gk = Key::new().id(&p).bytes(&nid.as_bytes()[..14]).0;
        if !self.groups.contains_key(&gk) {
            let v = notifications.get(&gk)?;
            self.groups.insert(gk.clone(), (v, vec![]));
        }
        if let Some((Some(v), removed)) = self.groups.get_mut(&gk) {
            let i = nid.as_bytes()[14];
            if let Some(m) = group_members(v)?.iter().find(|m| m.i == i) {
                if !removed.contains(&i) {
                    self.report.bytes += m.stored_len() as u64;
                    removed.push(i);
                }
            }
        }
        let u = rec.user;
        let feed = self.store.tree(T::feed);
        for (did, ct, status, sort_id) in &rec.d {
            if status_indexed(*status) {
                let k = Key::new().id(&p).u8(status.index()).id(did);
                self.report.bytes += k.0.len() as u64;
                self.w.del(T::deliv_by_status, k);
            }
            // Its provider message index entry (a delivery that was sent).
            if *ct != ChannelType::InApp
                && !matches!(
                    status,
                    DeliveryStatus::Pending | DeliveryStatus::Skipped | DeliveryStatus::Canceled
                )
            {
                self.report.bytes += self
                    .store
                    .stage_sent_message_removal(&mut self.w, &p, did)?;
            }
            // A settled delivery has no queue entry; this makes sure of it.
            self.w.del(T::queue, Key::new().id(&p).id(did));
            if *ct == ChannelType::InApp {
                let fk = Key::new().id(&p).id(&u).id(sort_id);
                if let Some(v) = feed.get(&fk)? {
                    if let Some(&flags) = v.first() {
                        count_delta(self.feeds.entry(u).or_default(), flags, 1);
                        self.report.feed_entries += 1;
                    }
                    self.report.bytes += (fk.0.len() + v.len()) as u64;
                    self.w.del(T::feed, fk);
                }
            }
            self.report.deliveries += 1;
        }
        self.w.del(T::feed, recipient_marker(&p, &u, &nid));
        self.traced.push(*nid.as_bytes());
        self.runs
            .entry(rec.run)
            .or_default()
            .insert(*nid.as_bytes());
        self.flows
            .entry(rec.flow)
            .or_default()
            .insert(*nid.as_bytes());
        if let Some(t) = &rec.topic {
            self.topics
                .entry(t.clone())
                .or_default()
                .insert(*nid.as_bytes());
        }
        self.report.notifications += 1;
        self.report.usage_bytes += rec.usage;
        Ok(())
    }

    /// Stages the removal of the traces of the notifications removed.
    pub(super) fn stage_traces(&mut self) -> Result<()> {
        let ids = std::mem::take(&mut self.traced);
        if !self.dense {
            for id in &ids {
                self.report.bytes +=
                    self.store
                        .stage_trace_removal(&mut self.w, &self.p, &Uuid::from_bytes(*id))?;
            }
            return Ok(());
        }
        let (Some(lo), Some(hi)) = (ids.iter().min(), ids.iter().max()) else {
            return Ok(());
        };
        let set: HashSet<&[u8; 16]> = ids.iter().collect();
        let p = Key::new().id(&self.p);
        let lo = p.clone().bytes(lo).0;
        let mut hi = p.clone().bytes(hi).0;
        hi.extend_from_slice(&[0xff; 8]);
        for kv in self
            .store
            .tree(T::trace)
            .range::<Vec<u8>, _>((Bound::Included(lo), Bound::Included(hi)))
        {
            let (k, v) = kv?;
            if k.len() < 32 || !set.contains(&<[u8; 16]>::try_from(&k[16..32]).unwrap_or_default())
            {
                continue;
            }
            self.report.bytes += (k.len() + v.len()) as u64;
            self.w.del(T::trace, k);
        }
        Ok(())
    }

    /// The writes of the batch (groups and indexes rewritten, the feeds'
    /// counts brought down when `counts`), its report, and the users whose
    /// feeds changed.
    pub(super) fn finish(mut self, counts: bool) -> Result<(Writes, PurgeReport, Vec<Uuid>)> {
        self.stage_traces()?;
        for (gk, (v, removed)) in std::mem::take(&mut self.groups) {
            let Some(v) = v.filter(|_| !removed.is_empty()) else {
                continue;
            };
            let kept: Vec<_> = group_members(&v)?
                .into_iter()
                .filter(|m| !removed.contains(&m.i))
                .collect();
            if kept.is_empty() {
                self.w.del(T::notifications, gk);
            } else {
                self.w.put(T::notifications, gk, group_value(&kept));
            }
        }
        for (run, ids) in std::mem::take(&mut self.runs) {
            let prefix = run_index(&self.p, &run);
            self.report.bytes +=
                self.store
                    .strip_packed(&mut self.w, T::run_index, &prefix, &ids)?;
        }
        for (flow, ids) in std::mem::take(&mut self.flows) {
            let prefix = flow_index(&self.p, &flow);
            self.report.bytes +=
                self.store
                    .strip_packed(&mut self.w, T::flow_index, &prefix, &ids)?;
        }
        for (topic, ids) in std::mem::take(&mut self.topics) {
            let prefix = topic_index(&self.p, &topic);
            self.report.bytes +=
                self.store
                    .strip_packed(&mut self.w, T::topic_index, &prefix, &ids)?;
        }
        let users: Vec<Uuid> = self.feeds.keys().copied().collect();
        if counts {
            for (u, removed) in std::mem::take(&mut self.feeds) {
                self.store
                    .stage_counts_down(&mut self.w, &self.p, &u, removed)?;
            }
        }
        Ok((self.w, self.report, users))
    }
}
