//! Unit tests of `retention.rs` (kept beside it so the module itself stays readable).

use super::*;
use crate::storage::ErasureStatus;

/// Purges everything of `p` that is past its window at project time
/// `now` (no age cut-off), one record per batch; what it removed.
fn purge_at(store: &Store, p: &Uuid, now: i64) -> PurgeReport {
    let cut = PurgeCutoffs {
        notifications: Timestamp::from_millis(0),
        feed: Timestamp::from_millis(0),
        now: Timestamp::from_millis(now),
        test_clock: false,
    };
    let mut total = PurgeReport::default();
    loop {
        let r = store.purge(p, &cut, 1).unwrap();
        total.add(&r);
        if !r.more {
            return total;
        }
    }
}

/// An id made at `ms` (a UUIDv7 layout, the rest random).
fn id_at(ms: i64) -> Uuid {
    let mut b = *Uuid::now_v7().as_bytes();
    b[..6].copy_from_slice(&(ms as u64).to_be_bytes()[2..8]);
    Uuid::from_bytes(b)
}

/// Batches far smaller than the data still cover it all: each goes on
/// where the last stopped (its scan budget or its bound), every user's
/// old feed entries and events go, and each user's latest event stays.
#[test]
fn small_batches_cover_every_user_and_keep_each_latest_event() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let p = Uuid::now_v7();
    let now = Timestamp::now().millis();
    let old = now - 3_600_000;
    let users: Vec<Uuid> = (0..40).map(|_| Uuid::now_v7()).collect();
    let mut w = Writes::new();
    for (i, u) in users.iter().enumerate() {
        for seq in 1..=5u64 {
            // the first 3 events old, then (for even users) 2 recent ones
            let at = if seq <= 3 || i % 2 == 1 { old } else { now };
            let mut v = (at as u64).to_be_bytes().to_vec();
            v.extend_from_slice(&[0u8; 16]);
            w.put(T::events, Key::new().id(&p).id(u).u64(seq), v);
            w.put(
                T::feed,
                Key::new().id(&p).id(u).id(&id_at(old + seq as i64)),
                [0u8; 33],
            );
        }
        // a recent entry stays
        w.put(T::feed, Key::new().id(&p).id(u).id(&id_at(now)), [0u8; 33]);
    }
    store.commit(w).unwrap();
    let cut = PurgeCutoffs {
        notifications: Timestamp::from_millis(now - 60_000),
        feed: Timestamp::from_millis(now - 60_000),
        now: Timestamp::from_millis(now),
        test_clock: false,
    };
    let mut total = PurgeReport::default();
    for _ in 0..1000 {
        let r = store.purge(&p, &cut, 3).unwrap();
        total.add(&r);
        if !r.more {
            break;
        }
    }
    assert_eq!(total.feed_entries, 40 * 5);
    // odd users: 4 of 5 old events (the 5th is the latest); even: 3
    assert_eq!(total.events, 20 * 4 + 20 * 3);
    for (i, u) in users.iter().enumerate() {
        let ev: Vec<u64> = store
            .tree(T::events)
            .scan_prefix(Key::new().id(&p).id(u))
            .map(|kv| be_u64(&kv.unwrap().0[32..40]))
            .collect();
        assert_eq!(
            ev,
            if i % 2 == 1 { vec![5] } else { vec![4, 5] },
            "user {i}"
        );
        let feed = store
            .tree(T::feed)
            .scan_prefix(Key::new().id(&p).id(u))
            .count();
        assert_eq!(feed, 1, "user {i}");
    }
}

/// A flow of one delay step and one throttle step ("1h"): accepting it
/// stores a settled notification with a trace.
fn flow(id: Uuid) -> crate::model::Flow {
    serde_json::from_value(serde_json::json!({
        "id": id, "handle": "f", "name": "F", "description": null,
        "status": "active", "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
        "steps": [
            {"kind": "delay", "channel_id": null, "template": null, "seconds": 1},
            {"kind": "throttle", "channel_id": null, "template": null,
             "limit": 1, "window": "1h"}
        ],
    }))
    .unwrap()
}

/// Accepts `f` for `ext`; the notification's id.
fn notify(store: &Store, p: &Uuid, f: &crate::model::Flow, ext: &str) -> Uuid {
    let input = crate::storage::AcceptInput {
        flow: f.clone(),
        recipients: vec![crate::storage::RunRecipient {
            external_id: ext.into(),
            patch: crate::model::UserPatch {
                first_name: Some(Some("Ada".into())),
                ..Default::default()
            },
        }],
        actor: None,
        topic: None,
        data: serde_json::json!({}),
        idempotency: None,
        timing: Default::default(),
        test_channel_id: None,
    };
    let run =
        crate::delivery::accept::accept_run(store, crate::render::Limits::default(), p, input)
            .unwrap();
    let page = store
        .list_notifications(
            p,
            &crate::storage::NotificationFilter {
                flow_run_id: Some(run.run.id),
                ..Default::default()
            },
            &crate::storage::PageReq {
                limit: 10,
                ..Default::default()
            },
        )
        .unwrap();
    page.items[0].id
}

/// A notification's trace leaves with it, by the purge and by an erasure;
/// another's stays.
#[test]
fn purge_and_erasure_remove_traces() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let p = Uuid::now_v7();
    let f = flow(Uuid::now_v7());
    let (old, erased) = (
        notify(&store, &p, &f, "old"),
        notify(&store, &p, &f, "erased"),
    );
    std::thread::sleep(std::time::Duration::from_millis(20));
    let cut_at = Timestamp::now();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let kept = notify(&store, &p, &f, "kept");
    for n in [old, erased, kept] {
        assert!(!store.notification_trace(&p, &n).unwrap().is_empty());
    }
    let e = store.start_erasure(&p, "erased").unwrap();
    while store.erase_step(&p, &e.id, 10).unwrap().status != ErasureStatus::Complete {}
    assert!(store.notification_trace(&p, &erased).unwrap().is_empty());
    assert!(!store.notification_trace(&p, &old).unwrap().is_empty());
    let cut = PurgeCutoffs {
        notifications: cut_at,
        feed: Timestamp::from_millis(0),
        now: Timestamp::now(),
        test_clock: false,
    };
    while store.purge(&p, &cut, 10).unwrap().more {}
    assert!(store.notification(&p, &old).unwrap().is_none());
    assert!(store.notification_trace(&p, &old).unwrap().is_empty());
    assert!(!store.notification_trace(&p, &kept).unwrap().is_empty());
}

/// Settled notifications stored in groups (16 to a key) go member by
/// member, with their traces, also when a batch stops inside a group;
/// a younger notification stays.
#[test]
fn the_purge_takes_grouped_notifications_member_by_member() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let p = Uuid::now_v7();
    let f = flow(Uuid::now_v7());
    let input = crate::storage::AcceptInput {
        flow: f.clone(),
        recipients: (0..20)
            .map(|i| crate::storage::RunRecipient {
                external_id: format!("u{i}"),
                patch: Default::default(),
            })
            .collect(),
        actor: None,
        topic: None,
        data: serde_json::json!({}),
        idempotency: None,
        timing: Default::default(),
        test_channel_id: None,
    };
    let run =
        crate::delivery::accept::accept_run(&store, crate::render::Limits::default(), &p, input)
            .unwrap();
    let ids: Vec<Uuid> = store
        .list_notifications(
            &p,
            &crate::storage::NotificationFilter {
                flow_run_id: Some(run.run.id),
                ..Default::default()
            },
            &crate::storage::PageReq {
                limit: 50,
                ..Default::default()
            },
        )
        .unwrap()
        .items
        .iter()
        .map(|n| n.id)
        .collect();
    assert_eq!(ids.len(), 20);
    let groups = store
        .tree(T::notifications)
        .scan_prefix(Key::new().id(&p))
        .filter(|kv| kv.as_ref().unwrap().0.len() == 30)
        .count();
    assert!(groups >= 2, "stored in groups: {groups}");
    std::thread::sleep(std::time::Duration::from_millis(20));
    let cut_at = Timestamp::now();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let kept = notify(&store, &p, &f, "kept");
    let cut = PurgeCutoffs {
        notifications: cut_at,
        feed: Timestamp::from_millis(0),
        now: Timestamp::now(),
        test_clock: false,
    };
    let mut total = PurgeReport::default();
    for _ in 0..100 {
        let r = store.purge(&p, &cut, 3).unwrap();
        total.add(&r);
        if !r.more {
            break;
        }
    }
    assert_eq!(total.notifications, 20);
    for id in &ids {
        assert!(store.notification(&p, id).unwrap().is_none());
        assert!(store.notification_trace(&p, id).unwrap().is_empty());
    }
    assert!(store.notification(&p, &kept).unwrap().is_some());
    assert!(!store.notification_trace(&p, &kept).unwrap().is_empty());
}

/// Throttle counters go once their newest run is past the step's window
/// (in the purge's project time), or when their flow is gone; a counter
/// with a run inside its window stays.
#[test]
fn the_purge_drops_throttle_counters_past_their_window() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let p = Uuid::now_v7();
    let f = flow(Uuid::now_v7());
    store.create_flow(&p, &f).unwrap();
    let hour = 3_600_000;
    let now = 100 * hour;
    let key = |flow: &Uuid, k: &str| {
        Key::new()
            .id(&p)
            .id(flow)
            .id(&Uuid::now_v7())
            .u8(1)
            .bytes(k.as_bytes())
    };
    let (old, fresh, orphan) = (
        key(&f.id, "old"),
        key(&f.id, "fresh"),
        key(&Uuid::now_v7(), "x"),
    );
    let mut w = Writes::new();
    w.put_rec(T::throttles, old.clone(), &vec![now - 3 * hour, now - hour]);
    w.put_rec(
        T::throttles,
        fresh.clone(),
        &vec![now - 2 * hour, now - hour + 1],
    );
    w.put_rec(T::throttles, orphan.clone(), &vec![now]);
    store.commit(w).unwrap();
    let total = purge_at(&store, &p, now);
    assert_eq!(total.throttle_counters, 2);
    let t = store.tree(T::throttles);
    assert!(!t.contains_key(&old).unwrap());
    assert!(!t.contains_key(&orphan).unwrap());
    assert!(t.contains_key(&fresh).unwrap());
}

/// Batches go once closed (or past their close) with their opener's
/// notification gone; an open one stays, and so does its slot.
#[test]
fn the_purge_drops_batches_nothing_reads_again() {
    use crate::storage::{Batch, BatchCloseReason, BatchKey};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let p = Uuid::now_v7();
    let now = 1_000_000;
    let b = |closes: i64, closed: bool| {
        let key = BatchKey {
            flow_id: Uuid::now_v7(),
            recipient: Uuid::now_v7(),
            step: 0,
            key: String::new(),
        };
        Batch {
            id: Uuid::now_v7(),
            key,
            opened_at_ms: 0,
            closes_at_ms: closes,
            window_ms: closes,
            max_window_ms: None,
            max: None,
            activities: vec![],
            waiting: vec![],
            closed: closed.then_some((closes, BatchCloseReason::Window)),
        }
    };
    let (closed, past, open) = (b(10, true), b(20, false), b(now + 1, false));
    let mut w = Writes::new();
    for x in [&closed, &past, &open] {
        w.put_rec(T::batches, super::super::batches::batch_key(&p, &x.id), x);
        w.put(
            T::batch_keys,
            super::super::batches::batch_lock_key(&p, &x.key),
            x.id.as_bytes(),
        );
    }
    store.commit(w).unwrap();
    let total = purge_at(&store, &p, now);
    assert_eq!(total.batches, 2);
    assert!(store.batch(&p, &closed.id).unwrap().is_none());
    assert!(store.latest_batch(&p, &past.key).unwrap().is_none());
    assert_eq!(store.latest_batch(&p, &open.key).unwrap(), Some(open));
}

#[test]
fn the_id_floor_sorts_below_every_later_id_and_above_every_earlier_one() {
    let before = Uuid::now_v7();
    std::thread::sleep(std::time::Duration::from_millis(3));
    let t = Timestamp::now();
    std::thread::sleep(std::time::Duration::from_millis(3));
    let after = Uuid::now_v7();
    let f = id_floor(t);
    assert!(before.as_bytes()[..] < f[..]);
    assert!(after.as_bytes()[..] > f[..]);
}

/// sled 0.34 alone under a retention window (a measurement, not a check:
/// `HERALD_WINDOW_SECS=240 cargo test --release -p herald-engine --lib --
/// --ignored sled_alone_under_a_window --nocapture`): 4,000 values of 500
/// bytes a second under time-ordered keys, kept 30 s. `HERALD_WINDOW_MODES`
/// (comma-separated, default `removed,dropped`) picks how:
/// - `removed`: removed key by key in batches with a per-user index entry
///   each (what the purge does);
/// - `dropped`: written to a tree per 10 s and dropped a tree at a time;
/// - `updated`: as `removed`, and every value is rewritten in place (20
///   bytes longer) a second after it was written, as a notification is
///   when its webhook settles it;
/// - `logs`: as `updated`, and every value also appends a 150-byte event
///   under its user (of 2,000) and rewrites that user's 40-byte counts
///   record, as the live feed's per-user event log does; the events go
///   with the window.
///
/// Prints RSS and the data dir's size every 10 s.
#[test]
#[ignore]
fn sled_alone_under_a_window() {
    fn rss_mib() -> f64 {
        let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
        let pages: f64 = statm
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0.0);
        pages * 4096.0 / 1048576.0
    }
    fn dir_bytes(p: &std::path::Path) -> u64 {
        let mut bytes = 0u64;
        for e in std::fs::read_dir(p).unwrap().flatten() {
            let m = e.metadata().unwrap();
            bytes += if m.is_dir() {
                dir_bytes(&e.path())
            } else {
                m.len()
            };
        }
        bytes
    }
    // a per-user key: a one-byte space, the user (of 2,000), then the value's key
    fn user_key(space: u8, n: u64) -> Vec<u8> {
        [&[space][..], &(n % 2000).to_be_bytes(), &n.to_be_bytes()].concat()
    }
    fn counts_key(n: u64) -> Vec<u8> {
        [&[b'c'][..], &(n % 2000).to_be_bytes()].concat()
    }
    let secs: u64 = std::env::var("HERALD_WINDOW_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(120);
    let modes = std::env::var("HERALD_WINDOW_MODES").unwrap_or("removed,dropped".into());
    const RATE: u64 = 4_000;
    const KEEP: u64 = RATE * 30;
    let (val, settled, event) = (vec![7u8; 500], vec![8u8; 520], vec![9u8; 150]);
    for mode in modes.split(',') {
        let dropped = mode == "dropped";
        let updated = mode == "updated" || mode == "logs";
        let logs = mode == "logs";
        let dir = tempfile::tempdir().unwrap();
        let db = sled::Config::new()
            .path(dir.path())
            .cache_capacity(32 << 20)
            .open()
            .unwrap();
        let (main, idx) = (db.open_tree("n").unwrap(), db.open_tree("i").unwrap());
        let mut epochs: std::collections::VecDeque<(u64, sled::Tree)> = Default::default();
        let start = std::time::Instant::now();
        let (mut next, mut low, mut settled_to, mut shown) = (0u64, 0u64, 0u64, 0u64);
        while start.elapsed().as_secs() < secs {
            let due = start.elapsed().as_millis() as u64 * RATE / 1000;
            while next < due {
                let (mut b, mut bi) = (sled::Batch::default(), sled::Batch::default());
                let epoch = next / (RATE * 10);
                if dropped && epochs.back().map(|(e, _)| *e) != Some(epoch) {
                    epochs.push_back((epoch, db.open_tree(format!("n{epoch}")).unwrap()));
                }
                for _ in 0..20 {
                    b.insert(&next.to_be_bytes(), val.as_slice());
                    if !dropped {
                        bi.insert(user_key(b'i', next), &[1u8][..]);
                    }
                    if logs {
                        bi.insert(user_key(b'e', next), event.as_slice());
                        bi.insert(counts_key(next), &next.to_be_bytes().repeat(5)[..]);
                    }
                    next += 1;
                }
                match epochs.back() {
                    Some((_, t)) if dropped => t.apply_batch(b).unwrap(),
                    _ => {
                        main.apply_batch(b).unwrap();
                        idx.apply_batch(bi).unwrap();
                    }
                }
            }
            if updated {
                // settle what was written a second ago, in place
                while settled_to + RATE < next {
                    let mut b = sled::Batch::default();
                    for _ in 0..20 {
                        b.insert(&settled_to.to_be_bytes(), settled.as_slice());
                        settled_to += 1;
                    }
                    main.apply_batch(b).unwrap();
                }
            }
            if dropped {
                while epochs.len() > 4 {
                    let (e, t) = epochs.pop_front().unwrap();
                    drop(t);
                    db.drop_tree(format!("n{e}")).unwrap();
                }
            } else {
                while next > KEEP && low < next - KEEP {
                    let (mut b, mut bi) = (sled::Batch::default(), sled::Batch::default());
                    for _ in 0..64 {
                        b.remove(&low.to_be_bytes());
                        bi.remove(user_key(b'i', low));
                        if logs {
                            bi.remove(user_key(b'e', low));
                        }
                        low += 1;
                    }
                    main.apply_batch(b).unwrap();
                    idx.apply_batch(bi).unwrap();
                }
            }
            db.flush().unwrap();
            let t = start.elapsed().as_secs();
            if t >= shown + 10 {
                shown = t;
                println!(
                    "{mode}: t={t}s rss={:.1}MiB dir={:.1}MiB",
                    rss_mib(),
                    dir_bytes(dir.path()) as f64 / 1048576.0
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}
