//! Unit tests of `flow_index.rs`: notifications stored before the flow
//! index existed are listed by flow once the store has opened.

use super::super::keys::Key;
use super::super::records::{Grouper, NotifRec};
use super::super::runs::notif_key;
use super::super::{codec, Store, Writes, T};
use super::BUILT;
use crate::model::*;
use crate::storage::{NotificationFilter, PageReq};
use uuid::Uuid;

fn rec(nid: Uuid, flow: Uuid) -> NotifRec {
    let now = Timestamp::of_id(&nid);
    NotifRec {
        n: Notification {
            id: nid,
            flow_id: flow,
            flow_run_id: Uuid::nil(),
            topic: None,
            processed: true,
            actor_id: None,
            recipient_id: Uuid::nil(),
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

/// Grouped records, records stored alone, and records stored alone that
/// replace their group's copy: each listed once under its flow, newest
/// first, and the build marked done.
#[test]
fn notifications_stored_before_the_index_are_listed_by_flow() {
    let dir = tempfile::tempdir().unwrap();
    let p = Uuid::now_v7();
    let (a, b) = (Uuid::now_v7(), Uuid::now_v7());
    let mut of_a = vec![];
    {
        let store = Store::open(dir.path()).unwrap();
        let mut w = Writes::new();
        let mut g = Grouper::default();
        let mut next = crate::delivery::accept::NotificationIds::default();
        for i in 0..40 {
            let nid = next.next_id();
            let flow = if i % 3 == 0 { a } else { b };
            if flow == a {
                of_a.push(nid);
            }
            if i % 5 == 0 {
                w.put_rec(T::notifications, notif_key(&p, &nid), &rec(nid, flow));
            }
            if i % 10 != 0 {
                assert!(g.add(&nid, codec::enc(&rec(nid, flow)), vec![]).is_none());
            }
        }
        for (tail, v) in g.take() {
            w.put(T::notifications, Key::new().id(&p).bytes(&tail), v);
        }
        // As a build without the index left its data directory.
        w.del(T::meta, BUILT);
        store.commit(w).unwrap();
    }
    let store = Store::open(dir.path()).unwrap();
    let list = |flow: Uuid, limit: usize| {
        let f = NotificationFilter {
            flow_id: Some(flow),
            ..Default::default()
        };
        let req = PageReq {
            limit,
            after: None,
            before: None,
        };
        let page = store.list_notifications(&p, &f, &req).unwrap();
        (
            page.items.iter().map(|n| n.id).collect::<Vec<_>>(),
            page.has_more_after,
        )
    };
    of_a.reverse();
    assert_eq!(list(a, 100), (of_a.clone(), false));
    assert_eq!(list(a, 5), (of_a[..5].to_vec(), true));
    assert_eq!(list(b, 100).0.len(), 40 - of_a.len());
    assert!(store.tree(T::meta).get(BUILT).unwrap().is_some());
}
