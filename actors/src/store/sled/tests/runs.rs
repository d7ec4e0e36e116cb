//! Unit tests of `runs.rs` (kept beside it so the module itself stays readable).

use super::*;
use std::ops::Bound;

fn rec(nid: Uuid, recipient: Uuid) -> NotifRec {
    let now = Timestamp::of_id(&nid);
    NotifRec {
        n: Notification {
            id: nid,
            flow_id: Uuid::nil(),
            flow_run_id: Uuid::nil(),
            topic: None,
            processed: true,
            actor_id: None,
            recipient_id: recipient,
            processed_at: Some(now),
            created_at: now,
            updated_at: now,
            stopped: None,
            batched_into: None,
            test_channel_id: None,
        },
        d: vec![],
    }
}

fn visit(store: &Store, p: &Uuid, bounds: Bounds, rev: bool) -> Vec<(Uuid, Uuid)> {
    let mut out = vec![];
    store
        .visit_records(p, bounds, rev, &mut |r| {
            out.push((r.n.id, r.n.recipient_id));
            true
        })
        .unwrap();
    out
}

/// Groups and records stored alone read and list as one id-ordered set, a
/// record stored alone replacing its group's copy, within any bounds.
#[test]
fn grouped_records_read_and_visit_with_singles_and_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let p = Uuid::now_v7();
    let (old, new) = (Uuid::now_v7(), Uuid::now_v7());
    let mut w = Writes::new();
    let mut g = Grouper::default();
    let mut next = crate::delivery::accept::NotificationIds::default();
    let mut ids = vec![];
    // 40 ids: groups of 16, 16 and 8; every fifth one stays alone
    for i in 0..40 {
        let nid = next.next_id();
        if i % 5 == 0 {
            w.put_rec(T::notifications, notif_key(&p, &nid), &rec(nid, old));
        } else {
            assert!(g.add(&nid, codec::enc(&rec(nid, old)), vec![]).is_none());
        }
        ids.push(nid);
    }
    for (tail, v) in g.take() {
        w.put(T::notifications, Key::new().id(&p).bytes(&tail), v);
    }
    // another project's records are not visited
    let other = Uuid::now_v7();
    w.put_rec(
        T::notifications,
        notif_key(&other, &ids[3]),
        &rec(ids[3], old),
    );
    store.commit(w).unwrap();
    assert_eq!(
        ids[..16]
            .iter()
            .map(|i| &i.as_bytes()[..14])
            .collect::<std::collections::HashSet<_>>()
            .len(),
        1
    );
    assert_ne!(ids[15].as_bytes()[..14], ids[16].as_bytes()[..14]);
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(sorted, ids, "ids grow");

    // a grouped member rewritten alone (as a settled delivery would be)
    let mut w = Writes::new();
    w.put_rec(T::notifications, notif_key(&p, &ids[7]), &rec(ids[7], new));
    store.commit(w).unwrap();

    for (i, id) in ids.iter().enumerate() {
        let r = store.notif_rec(&p, id).unwrap().unwrap();
        assert_eq!(r.n.id, *id);
        assert_eq!(r.n.recipient_id, if i == 7 { new } else { old });
    }
    let mut missing = *ids[3].as_bytes();
    missing[14] = 200;
    assert!(store
        .notif_rec(&p, &Uuid::from_bytes(missing))
        .unwrap()
        .is_none());

    let all = visit(&store, &p, (Bound::Unbounded, Bound::Unbounded), false);
    assert_eq!(all.iter().map(|x| x.0).collect::<Vec<_>>(), ids);
    assert_eq!(all[7].1, new);
    let mut back = visit(&store, &p, (Bound::Unbounded, Bound::Unbounded), true);
    back.reverse();
    assert_eq!(back, all);
    // bounds inside groups, both ways
    for (lo, hi) in [(3, 20), (16, 17), (0, 39), (9, 33)] {
        let (a, b) = (ids[lo].as_bytes().to_vec(), ids[hi].as_bytes().to_vec());
        let got = visit(
            &store,
            &p,
            (Bound::Excluded(&a), Bound::Included(&b)),
            false,
        );
        assert_eq!(
            got.iter().map(|x| x.0).collect::<Vec<_>>(),
            ids[lo + 1..=hi]
        );
        let mut got = visit(&store, &p, (Bound::Included(&a), Bound::Excluded(&b)), true);
        got.reverse();
        assert_eq!(got.iter().map(|x| x.0).collect::<Vec<_>>(), ids[lo..hi]);
    }
    // stopping early
    let mut n = 0;
    store
        .visit_records(&p, (Bound::Unbounded, Bound::Unbounded), true, &mut |_| {
            n += 1;
            n < 5
        })
        .unwrap();
    assert_eq!(n, 5);
}
