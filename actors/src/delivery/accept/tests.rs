//! Unit tests of run acceptance on a real sled store in a temp dir.

use super::*;
use crate::model::Flow;
use crate::storage::*;
use crate::store::Store;

fn input(ext: &str) -> AcceptInput {
    // One delay step: a notification with no delivery, settled at once.
    let flow: Flow = serde_json::from_value(json!({
        "id": Uuid::now_v7(), "handle": "f", "name": "F", "description": null,
        "status": "active", "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
        "steps": [{"kind": "delay", "channel_id": null, "template": null, "seconds": 1}],
    }))
    .unwrap();
    AcceptInput {
        flow,
        recipients: vec![RunRecipient {
            external_id: ext.into(),
            patch: UserPatch {
                first_name: Some(Some("Ada".into())),
                ..Default::default()
            },
        }],
        actor: None,
        topic: None,
        data: json!({}),
        idempotency: None,
        timing: Default::default(),
        test_channel_id: None,
    }
}

/// A run reads its recipients through the store's cache of users. One
/// that leaves a user as it was keeps the entry (a blanket forget emptied
/// the cache of every recipient on every run); one that patches the
/// user empties it, so the next reader gets the user as stored.
#[test]
fn runs_keep_unchanged_users_cached_and_forget_the_ones_they_patch() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let p = Uuid::now_v7();
    let ada = UserPatch {
        first_name: Some(Some("Ada".into())),
        ..Default::default()
    };
    store.upsert_user(&p, "u1", &ada).unwrap();
    assert!(store.user_cached(&p, "u1").is_none());
    let cached = store.user_by_ext_cached(&p, "u1").unwrap().unwrap();

    // `input` patches first_name to what it is: nothing is written.
    accept_run(&store, crate::render::Limits::default(), &p, input("u1")).unwrap();
    let still = store
        .user_cached(&p, "u1")
        .expect("an unchanged user stays cached");
    assert!(Arc::ptr_eq(&cached, &still));

    let mut changing = input("u1");
    changing.recipients[0].patch.last_name = Some(Some("Lovelace".into()));
    accept_run(&store, crate::render::Limits::default(), &p, changing).unwrap();
    assert!(
        store.user_cached(&p, "u1").is_none(),
        "a patched user is forgotten"
    );
    let u = store.user_by_ext_cached(&p, "u1").unwrap().unwrap();
    assert_eq!(u.last_name.as_deref(), Some("Lovelace"));
    assert_eq!(Some(&*u), store.user_by_ext(&p, "u1").unwrap().as_ref());

    // A run over the cached user after another writer changed it (the
    // writer empties the entry): the run sees the change.
    let patch = UserPatch {
        last_name: Some(Some("Byron".into())),
        ..Default::default()
    };
    store.upsert_user(&p, "u1", &patch).unwrap();
    accept_run(&store, crate::render::Limits::default(), &p, input("u1")).unwrap();
    let u = store.user_by_ext(&p, "u1").unwrap().unwrap();
    assert_eq!(
        (u.first_name.as_deref(), u.last_name.as_deref()),
        (Some("Ada"), Some("Byron"))
    );
    assert_eq!(
        Some(&u),
        store.user_by_ext_cached(&p, "u1").unwrap().as_deref()
    );
}

/// A recipient changed by another writer between staging and the
/// backend's commit: nothing is stored and the run is staged again from
/// the user as it now is; after 4 stagings that all went stale, 409
/// `recipients_changed`.
#[test]
fn a_run_is_staged_again_while_its_users_change_then_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let p = Uuid::now_v7();
    store.upsert_user(&p, "u1", &UserPatch::default()).unwrap();
    let change = |n: usize| {
        let patch = UserPatch {
            last_name: Some(Some(format!("v{n}"))),
            ..Default::default()
        };
        store.upsert_user(&p, "u1", &patch).map(|_| ())
    };

    // Changed once: the second staging is stored, over the change.
    let mut n = 0;
    let run = accept_run_with(
        &store,
        crate::render::Limits::default(),
        &p,
        input("u1"),
        &mut || {
            n += 1;
            if n == 1 {
                change(n)?;
            }
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(n, 2);
    let stored = store.flow_run(&p, &run.run.id).unwrap().unwrap();
    assert_eq!(stored.notifications_count, 1);
    let u = store.user_by_ext(&p, "u1").unwrap().unwrap();
    assert_eq!(
        (u.first_name.as_deref(), u.last_name.as_deref()),
        (Some("Ada"), Some("v1"))
    );

    // Changed before every commit: refused after 4 stagings, nothing stored.
    let mut n = 0;
    let e = accept_run_with(
        &store,
        crate::render::Limits::default(),
        &p,
        input("u1"),
        &mut || {
            n += 1;
            change(n + 1)
        },
    )
    .err()
    .unwrap();
    assert_eq!(n, ATTEMPTS);
    assert_eq!(e.code.status(), 409);
    assert_eq!(e.details["reason"], "recipients_changed");
    let req = crate::storage::PageReq {
        limit: 10,
        ..Default::default()
    };
    let all = store
        .list_notifications(&p, &Default::default(), &req)
        .unwrap();
    assert_eq!(all.items.len(), 1, "only the first run's notification");
    assert_eq!(all.items[0].flow_run_id, run.run.id);
}
