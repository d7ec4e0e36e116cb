//! Notifications and their deliveries read back from the sled store
//! (`storage::NotificationRepo`): by id, and listed by filters over the
//! packed indexes (`page`), newest first.

use super::feed;
use super::keys::{tail_id, Key};
use super::page::{
    paginate, within, Bounds, Clamped, PackedSource, Page, PageReq, Source, TreeSource,
};
use super::records::NotifRec;
use super::runs::*;
use super::{Store, T};
use crate::error::Result;
use crate::model::*;
use crate::storage::{DeliveryFilter, NotificationFilter};
use uuid::Uuid;

impl Store {
    /// A delivery as stored in its notification, without the feed state.
    pub(crate) fn delivery_raw(&self, project: &Uuid, id: &Uuid) -> Result<Option<Delivery>> {
        if notification_of(id) == *id {
            return Ok(None);
        }
        Ok(self
            .notif_rec(project, &notification_of(id))?
            .and_then(|r| r.d.into_iter().find(|d| d.id == *id)))
    }
}

pub(super) fn in_range(id: &Uuid, after: &Option<Timestamp>, before: &Option<Timestamp>) -> bool {
    let t = Timestamp::of_id(id);
    after.is_none_or(|a| t > a) && before.is_none_or(|b| t < b)
}

/// The smallest id of millisecond `ms` (a UUIDv7's time is its first six
/// bytes): ids at or above it were made at `ms` or later.
fn id_floor(ms: i64) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..6].copy_from_slice(&(ms.max(0) as u64).to_be_bytes()[2..]);
    b
}

/// A page of a list sorted by notification or delivery id (they share
/// their time), walked only between the ids of the time range: ids of the
/// millisecond of `after` on, below the millisecond after `before`
/// (`in_range` decides the edges exactly).
fn paginate_in<V>(
    src: &mut impl Source<V>, req: &PageReq, after: &Option<Timestamp>, before: &Option<Timestamp>,
) -> Result<Page<V>> {
    paginate(
        &mut Clamped {
            src,
            lo: after.map(|a| id_floor(a.millis())),
            hi: before.map(|b| id_floor(b.millis() + 1)),
        },
        req,
    )
}

/// Deliveries in id order from the notification records of a project (or of
/// one notification, `only`): each record gives its deliveries, whose ids share
/// the notification id's first 15 bytes and sort just below it.
pub(super) struct DeliverySource<'a, K> {
    store: &'a Store,
    project: &'a Uuid,
    only: Option<Uuid>,
    keep: &'a K,
}

impl<K: Fn(&Delivery) -> bool> Source<Delivery> for DeliverySource<'_, K> {
    fn visit(
        &mut self, bounds: Bounds, rev: bool, f: &mut dyn FnMut(Vec<u8>, Delivery) -> bool,
    ) -> Result<()> {
        use std::ops::Bound;
        let mut emit = |rec: NotifRec| -> bool {
            let mut ds: Vec<Delivery> = rec
                .d
                .into_iter()
                .filter(|d| within(d.id.as_bytes(), bounds) && (self.keep)(d))
                .collect();
            ds.sort_by_key(|d| d.id);
            if rev {
                ds.reverse();
            }
            ds.into_iter().all(|d| f(d.id.as_bytes().to_vec(), d))
        };
        if let Some(nid) = self.only {
            if let Some(rec) = self.store.notif_rec(self.project, &nid)? {
                emit(rec);
            }
            return Ok(());
        }
        // Records whose notification id could hold a delivery id within bounds.
        let rec = |b: Bound<&[u8]>| match b {
            Bound::Included(k) | Bound::Excluded(k) if k.len() == 16 => {
                let mut v = k.to_vec();
                v[15] = NOTIFICATION_TAG;
                Some(v)
            }
            _ => None,
        };
        let (lo, hi) = (rec(bounds.0), rec(bounds.1));
        self.store.visit_records(
            self.project,
            (
                lo.as_deref().map_or(Bound::Unbounded, Bound::Included),
                hi.as_deref().map_or(Bound::Unbounded, Bound::Included),
            ),
            rev,
            &mut emit,
        )
    }
}

/// Every notification of a project, in id order (their records).
pub(super) struct NotificationSource<'a, K> {
    store: &'a Store,
    project: &'a Uuid,
    keep: &'a K,
}

impl<K: Fn(&Notification) -> bool> Source<Notification> for NotificationSource<'_, K> {
    fn visit(
        &mut self, bounds: Bounds, rev: bool, f: &mut dyn FnMut(Vec<u8>, Notification) -> bool,
    ) -> Result<()> {
        self.store
            .visit_records(self.project, bounds, rev, &mut |r| {
                !(self.keep)(&r.n) || f(r.n.id.as_bytes().to_vec(), r.n)
            })
    }
}

/// Reads of the trait `RecordRepo` answers (`lookups.rs`).
impl Store {
    pub fn notification(&self, project: &Uuid, id: &Uuid) -> Result<Option<Notification>> {
        if notification_of(id) != *id {
            return Ok(None);
        }
        Ok(self.notif_rec(project, id)?.map(|r| r.n))
    }

    /// A delivery as the API shows it: an in_app one carries its feed state.
    pub fn delivery(&self, project: &Uuid, id: &Uuid) -> Result<Option<Delivery>> {
        match self.delivery_raw(project, id)? {
            Some(d) => self.with_feed_state(project, d).map(Some),
            None => Ok(None),
        }
    }

    pub fn notification_deliveries(&self, project: &Uuid, nid: &Uuid) -> Result<Vec<Delivery>> {
        let Some(rec) = self.notif_rec(project, nid)? else {
            return Ok(vec![]);
        };
        rec.d
            .into_iter()
            .map(|d| self.with_feed_state(project, d))
            .collect()
    }

    pub fn list_notifications(
        &self, project: &Uuid, f: &NotificationFilter, req: &PageReq,
    ) -> Result<Page<Notification>> {
        let keep = |n: &Notification| {
            in_range(&n.id, &f.created_after, &f.created_before)
                && f.status.is_none_or(|s| n.processed == s)
                && f.topic.as_ref().is_none_or(|t| n.topic.as_ref() == Some(t))
                && f.flow_id.is_none_or(|x| n.flow_id == x)
                && f.flow_run_id.is_none_or(|x| n.flow_run_id == x)
                && f.recipient.is_none_or(|x| n.recipient_id == x)
        };
        // By id, from an index: the record, if the filters keep it.
        let by_id = |id: Uuid| -> Result<Option<Notification>> {
            if !in_range(&id, &f.created_after, &f.created_before) {
                return Ok(None);
            }
            Ok(self.notification(project, &id)?.filter(|n| keep(n)))
        };
        let p = Key::new().id(project);
        let (after, before) = (&f.created_after, &f.created_before);
        // A packed index (by run, flow or topic): its notifications in id order.
        let packed = |t: T, prefix: Key| {
            paginate_in(
                &mut PackedSource {
                    tree: self.tree(t),
                    prefix: &prefix.0,
                    pick: by_id,
                },
                req,
                after,
                before,
            )
        };
        if let Some(r) = &f.flow_run_id {
            return packed(T::run_index, run_index(project, r));
        }
        // A space keyed by `(prefix, delivery or notification id)` lists the
        // notifications of its keys, each once, at its group's lowest key.
        let once_per_notification = |t: T, prefix: Key| {
            let tree = self.tree(t);
            let at = prefix.0.len();
            paginate_in(
                &mut TreeSource {
                    tree: tree.clone(),
                    prefix: &prefix.0,
                    pick: |k: &sled::IVec, v: &sled::IVec| {
                        if k.len() != at + 16 || !first_of_group(&tree, k, at)? {
                            return Ok(None);
                        }
                        // An entry that entered the feed after acceptance
                        // sits at its feed time; its notification is listed
                        // at its marker or its other entries' keys.
                        if t == T::feed && feed::keyed_by_feed_time(v) {
                            return Ok(None);
                        }
                        by_id(notification_of(&tail_id(k)))
                    },
                },
                req,
                after,
                before,
            )
        };
        if let Some(u) = &f.recipient {
            // A user's feed space lists each of their notifications: feed
            // entries (delivery ids) and markers (notification ids).
            return once_per_notification(T::feed, p.id(u));
        }
        if let Some(t) = &f.topic {
            return packed(T::topic_index, topic_index(project, t));
        }
        if f.status == Some(false) {
            // Pending notifications are those with a delivery in the queue.
            return once_per_notification(T::queue, p);
        }
        if let Some(flow) = &f.flow_id {
            return packed(T::flow_index, flow_index(project, flow));
        }
        paginate_in(
            &mut NotificationSource {
                store: self,
                project,
                keep: &keep,
            },
            req,
            after,
            before,
        )
    }

    pub fn list_deliveries(
        &self, project: &Uuid, f: &DeliveryFilter, req: &PageReq,
    ) -> Result<Page<Delivery>> {
        let keep = |d: &Delivery| {
            in_range(&d.id, &f.created_after, &f.created_before)
                && f.status.is_none_or(|s| d.status == s)
                && f.channel_type.is_none_or(|x| d.channel_type == x)
                && f.channel_id.is_none_or(|x| d.channel_id == x)
                && f.notification_id.is_none_or(|x| d.notification_id == x)
                && f.recipient.is_none_or(|x| d.recipient_id == x)
        };
        let p = Key::new().id(project);
        let index = if f.status == Some(DeliveryStatus::Pending) {
            Some((T::queue, p.clone()))
        } else {
            f.status
                .filter(|s| status_indexed(*s))
                .map(|s| (T::deliv_by_status, p.clone().u8(s.index())))
        };
        let page = match (&f.notification_id, index) {
            (None, Some((tree, prefix))) => paginate(
                &mut TreeSource {
                    tree: self.tree(tree),
                    prefix: &prefix.0,
                    pick: |k: &sled::IVec, _: &sled::IVec| {
                        let id = tail_id(k);
                        if !in_range(&id, &f.created_after, &f.created_before) {
                            return Ok(None);
                        }
                        Ok(self.delivery_raw(project, &id)?.filter(|d| keep(d)))
                    },
                },
                req,
            )?,
            // A notification's deliveries, or all: the notifications' records.
            (nid, _) => paginate(
                &mut DeliverySource {
                    store: self,
                    project,
                    only: nid.map(|n| notification_of(&n)),
                    keep: &keep,
                },
                req,
            )?,
        };
        page.try_map(|d| self.with_feed_state(project, d))
    }
}
