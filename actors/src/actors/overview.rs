//! A project at a glance, for the console's overview: its notifications and
//! deliveries of a recent window counted by status (and deliveries by
//! channel type), and its health (deliveries waiting, the oldest of them).
//!
//! No backend keeps these counts, so they are made by reading the lists the
//! Admin API pages through, newest first, and stopping at `OVERVIEW_CAP`
//! records per list: a project that sent more in the window is shown as
//! "at least" (`capped`) instead of being scanned to the end on every view.
//! The counting is a pure function over the records read (`tally`).

use super::engine::Engine;
use crate::error::Result;
use crate::model::{ChannelType, Delivery, DeliveryStatus, Notification, StopReason, Timestamp};
use crate::storage::{DeliveryFilter, NotificationFilter, PageReq, Storage};
use serde::Serialize;
use std::collections::BTreeMap;
use uuid::Uuid;

/// The most records of one list an overview reads.
pub const OVERVIEW_CAP: usize = 5_000;

/// How many records a page of the overview's reads holds.
const PAGE: usize = 500;

/// A count of records with one key, as the overview lists them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Count {
    pub key: String,
    pub count: u64,
}

/// Deliveries of one channel type, by status, failures first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChannelCounts {
    pub channel_type: &'static str,
    pub total: u64,
    pub by_status: Vec<Count>,
}

/// A project at a glance (see the module doc).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Overview {
    /// The window's start (wall time).
    pub since: Timestamp,
    pub notifications: u64,
    /// Notifications by processing status.
    pub notifications_by_status: Vec<Count>,
    pub deliveries: u64,
    /// Deliveries by status, failures first.
    pub deliveries_by_status: Vec<Count>,
    pub by_channel: Vec<ChannelCounts>,
    /// A list stopped at `OVERVIEW_CAP`: the counts are lower bounds.
    pub capped: bool,
    /// Deliveries waiting (any age), up to `OVERVIEW_CAP`.
    pub pending: u64,
    pub pending_capped: bool,
    /// When the oldest waiting delivery read was made (`None`: none waits).
    pub oldest_pending: Option<Timestamp>,
}

/// Where a delivery status sorts: failures first, then what waits, then
/// what went out, then what was not sent on purpose.
fn status_rank(s: &str) -> u8 {
    match s {
        "failed" => 0,
        "bounced" => 1,
        "complained" => 2,
        "pending" => 3,
        "sent" => 4,
        "delivered" => 5,
        "skipped" => 6,
        "canceled" => 7,
        _ => 8,
    }
}

fn counts(m: BTreeMap<&'static str, u64>, rank: impl Fn(&str) -> u8) -> Vec<Count> {
    let mut v: Vec<Count> = m
        .into_iter()
        .map(|(k, count)| Count {
            key: k.to_string(),
            count,
        })
        .collect();
    v.sort_by(|a, b| (rank(&a.key), &a.key).cmp(&(rank(&b.key), &b.key)));
    v
}

/// A notification's processing status in words, as the API names it.
fn notification_status(n: &Notification) -> &'static str {
    match n.stopped {
        Some(StopReason::Throttled) => "throttled",
        Some(StopReason::Batched) => "batched",
        None if n.processed => "processed",
        None => "pending",
    }
}

/// The window's counts from the records read (`pending` and
/// `oldest_pending` are left for the caller).
pub fn tally(since: Timestamp, ns: &[Notification], ds: &[Delivery]) -> Overview {
    let mut n_by: BTreeMap<&'static str, u64> = BTreeMap::new();
    for n in ns {
        *n_by.entry(notification_status(n)).or_default() += 1;
    }
    let mut d_by: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut per: BTreeMap<&'static str, BTreeMap<&'static str, u64>> = BTreeMap::new();
    for d in ds {
        *d_by.entry(d.status.as_str()).or_default() += 1;
        *per.entry(d.channel_type.as_str())
            .or_default()
            .entry(d.status.as_str())
            .or_default() += 1;
    }
    let mut by_channel: Vec<ChannelCounts> = ChannelType::ALL
        .iter()
        .filter_map(|ct| {
            let m = per.remove(ct.as_str())?;
            Some(ChannelCounts {
                channel_type: ct.as_str(),
                total: m.values().sum(),
                by_status: counts(m, status_rank),
            })
        })
        .collect();
    // failures first: the channel types with the most failed deliveries
    let failed = |c: &ChannelCounts| -> u64 {
        c.by_status
            .iter()
            .filter(|x| status_rank(&x.key) < 3)
            .map(|x| x.count)
            .sum()
    };
    by_channel.sort_by_key(|c| std::cmp::Reverse(failed(c)));
    Overview {
        since,
        notifications: ns.len() as u64,
        notifications_by_status: counts(n_by, |s| match s {
            "pending" => 0,
            "throttled" => 1,
            _ => 2,
        }),
        deliveries: ds.len() as u64,
        deliveries_by_status: counts(d_by, status_rank),
        by_channel,
        capped: false,
        pending: 0,
        pending_capped: false,
        oldest_pending: None,
    }
}

/// Up to `OVERVIEW_CAP` records of a list, newest first, stopping at the
/// first one `old` says is before the window (lists are newest first, so
/// the rest are too); `true` when the cap cut it short. The window is not
/// given to the list as a filter: a store applies that record by record and
/// would look through every older one to find that none is left.
fn read_capped<T>(
    mut page: impl FnMut(&PageReq) -> Result<crate::storage::Page<T>>, old: impl Fn(&T) -> bool,
) -> Result<(Vec<T>, bool)> {
    let mut out = Vec::new();
    let mut req = PageReq {
        limit: PAGE,
        after: None,
        before: None,
    };
    loop {
        let p = page(&req)?;
        let more = p.has_more_after;
        let last = p.last_key;
        for item in p.items {
            if old(&item) {
                return Ok((out, false));
            }
            out.push(item);
        }
        if !more {
            return Ok((out, false));
        }
        if out.len() >= OVERVIEW_CAP {
            return Ok((out, true));
        }
        req.after = last;
    }
}

impl Engine {
    /// The project's overview of the last `window_ms` (wall time).
    pub async fn overview(&self, project: Uuid, window_ms: i64) -> Result<Overview> {
        // records' `created_at` is wall time, a test clock's project or not
        let since = Timestamp::from_millis(Timestamp::now().millis() - window_ms);
        self.run(move |s: &dyn Storage| {
            let nf = NotificationFilter::default();
            let (ns, n_capped) = read_capped(
                |r| s.list_notifications(&project, &nf, r),
                |n: &Notification| n.created_at < since,
            )?;
            let df = DeliveryFilter::default();
            let (ds, d_capped) = read_capped(
                |r| s.list_deliveries(&project, &df, r),
                |d: &Delivery| d.created_at < since,
            )?;
            // what waits, of any age (the stores index waiting deliveries)
            let pf = DeliveryFilter {
                status: Some(DeliveryStatus::Pending),
                ..Default::default()
            };
            let (pending, p_capped) =
                read_capped(|r| s.list_deliveries(&project, &pf, r), |_| false)?;
            let mut o = tally(since, &ns, &ds);
            o.capped = n_capped || d_capped;
            o.pending = pending.len() as u64;
            o.pending_capped = p_capped;
            o.oldest_pending = pending.iter().map(|d| d.created_at).min();
            Ok(o)
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_sort_first() {
        let mut m = BTreeMap::new();
        m.insert("sent", 5);
        m.insert("failed", 1);
        m.insert("pending", 2);
        let v = counts(m, status_rank);
        let keys: Vec<&str> = v.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(keys, ["failed", "pending", "sent"]);
    }

    #[test]
    fn a_read_stops_at_the_window() {
        let pages = |items: Vec<i64>| {
            move |r: &PageReq| {
                let from = r.after.as_ref().map_or(0, |k| k[0] as usize);
                let chunk: Vec<i64> = items.iter().skip(from).take(PAGE).copied().collect();
                Ok(crate::storage::Page {
                    has_more_after: from + chunk.len() < items.len(),
                    last_key: Some(vec![(from + chunk.len()) as u8]),
                    first_key: None,
                    has_more_before: false,
                    items: chunk,
                })
            }
        };
        // newest first: 10, 9, … stop before 4
        let (v, capped) = read_capped(pages((0..10).rev().collect()), |x| *x < 4).unwrap();
        assert_eq!(v, vec![9, 8, 7, 6, 5, 4]);
        assert!(!capped);
    }

    #[test]
    fn empty_window() {
        let o = tally(Timestamp::from_millis(0), &[], &[]);
        assert_eq!(o.notifications, 0);
        assert!(o.by_channel.is_empty());
        assert!(o.deliveries_by_status.is_empty());
    }
}
