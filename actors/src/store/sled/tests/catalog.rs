//! Unit tests of `catalog.rs` (kept beside it so the module itself stays readable).

use super::*;
use crate::model::User;

fn twilio(token: &str) -> Channel {
    let (id, now) = new_id();
    let config =
        serde_json::json!({"account_sid": "AC1", "auth_token": token, "from": "+15005550006"});
    Channel {
        id,
        channel_type: ChannelType::Sms,
        name: "sms".into(),
        provider: "twilio".into(),
        config: config.as_object().unwrap().clone(),
        revoked: false,
        builtin: false,
        sandbox: false,
        created_at: now,
        updated_at: now,
    }
}

fn raw_holds(store: &Store, needle: &[u8]) -> bool {
    store
        .tree(T::channels)
        .iter()
        .any(|kv| kv.unwrap().1.windows(needle.len()).any(|w| w == needle))
}

#[test]
fn deleting_a_user_whose_topic_shares_its_lock_stripe_does_not_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let p = Uuid::now_v7();
    let ext = "striped-user";
    let stripe = store.stripe(&crate::store::sled::users::user_lock_key(&p, ext));
    // a topic key whose lock falls on the user's stripe (1 in 4,096 keys)
    let key = (0..1_000_000)
        .map(|i| format!("t{i}"))
        .find(|k| store.stripe(&Store::topic_lock(&p, k)) == stripe)
        .expect("a colliding topic key");
    let (user, _) = store
        .upsert_user(&p, ext, &crate::model::UserPatch::default())
        .unwrap();
    store.put_topic(&p, &key, Default::default()).unwrap();
    (&store as &dyn crate::storage::Storage)
        .subscribe(&p, &key, &user)
        .unwrap();
    // the deletion unsubscribes under the topic's lock: it used to hold the
    // user's (the same stripe) meanwhile and wait for itself forever
    let (tx, rx) = std::sync::mpsc::channel();
    let s2 = store.clone();
    std::thread::spawn(move || {
        tx.send(s2.delete_users(&p, &[ext.to_string()]).map(|_| ()))
            .unwrap()
    });
    rx.recv_timeout(std::time::Duration::from_secs(10))
        .expect("delete_user deadlocked")
        .unwrap();
    assert_eq!(store.topic(&p, &key).unwrap().unwrap().subscribers_count, 0);
}

/// Rewrites a subscription into the layout of builds before the compact
/// one: the record under `subscriptions`, a bare user id in `topic_subs`,
/// an empty value in `user_subs`.
fn to_earlier_layout(store: &Store, p: &Uuid, s: &Subscription) {
    store
        .tree(T::subscriptions)
        .insert(Key::new().id(p).id(&s.id), codec::enc(s))
        .unwrap();
    store
        .tree(T::topic_subs)
        .insert(
            Key::new().id(p).str(&s.topic).id(&s.id),
            s.user_id.as_bytes().to_vec(),
        )
        .unwrap();
    store
        .tree(T::user_subs)
        .insert(Key::new().id(p).id(&s.user_id).id(&s.id), Vec::new())
        .unwrap();
}

fn ids(page: Page<Subscription>) -> Vec<Uuid> {
    page.items.iter().map(|s| s.id).collect()
}

#[test]
fn subscriptions_are_three_index_entries_and_the_earlier_layout_still_reads() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let p = Uuid::now_v7();
    let users: Vec<User> = ["ann", "bob", "cy"]
        .iter()
        .map(|e| {
            store
                .upsert_user(&p, e, &crate::model::UserPatch::default())
                .unwrap()
                .0
        })
        .collect();
    store.put_topic(&p, "old", Default::default()).unwrap();
    store.put_topic(&p, "new", Default::default()).unwrap();
    let a = (&store as &dyn crate::storage::Storage)
        .subscribe(&p, "old", &users[0])
        .unwrap();
    let b = (&store as &dyn crate::storage::Storage)
        .subscribe(&p, "old", &users[1])
        .unwrap();
    to_earlier_layout(&store, &p, &a);
    to_earlier_layout(&store, &p, &b);
    // a new subscription beside them: no record, the user in the entry
    let refs: Vec<UserRef> = users[1..].iter().map(UserRef::from).collect();
    let (t, made) = store.subscribe_many(&p, "old", &refs).unwrap();
    assert_eq!(
        (made.len(), t.subscribers_count),
        (1, 3),
        "bob was subscribed already"
    );
    let c = (&store as &dyn crate::storage::Storage)
        .subscribe(&p, "new", &users[2])
        .unwrap();
    assert_eq!(
        store.tree(T::subscriptions).len(),
        2,
        "only the two earlier records"
    );

    let req = PageReq {
        limit: 50,
        ..PageReq::default()
    };
    let listed = store.topic_subscriptions(&p, "old", &req).unwrap();
    assert_eq!(listed.items.len(), 3);
    let cy_old = listed.items[0].clone();
    assert_eq!(ids(listed)[1..], [b.id, a.id], "newest first, both forms");
    assert_eq!(
        (
            cy_old.topic.as_str(),
            cy_old.user_id,
            cy_old.user_external_id.as_str()
        ),
        ("old", users[2].id, "cy")
    );
    assert_eq!(cy_old.created_at, Timestamp::of_id(&cy_old.id));
    let of_a = store.topic_subscriptions(&p, "old", &req).unwrap().items[2].clone();
    assert_eq!(
        (of_a.user_external_id, of_a.created_at, of_a.topic),
        (a.user_external_id.clone(), a.created_at, a.topic.clone())
    );
    assert_eq!(
        ids(store.user_subscriptions(&p, &users[2].id, &req).unwrap()),
        [c.id, cy_old.id]
    );
    assert_eq!(
        ids(store.user_subscriptions(&p, &users[0].id, &req).unwrap()),
        [a.id]
    );
    let chunk = store
        .topic_subscribers_chunk(
            &p,
            SubscriberChunk {
                topic: "old",
                after: None,
                n: 10,
            },
        )
        .unwrap();
    assert_eq!(
        chunk,
        [
            (a.id, users[0].id),
            (b.id, users[1].id),
            (cy_old.id, users[2].id)
        ]
    );
    assert!(store.subscribed(&p, &users[0].id, "old").unwrap());

    // an earlier-layout subscription unsubscribed, and one of a deleted user
    store.unsubscribe(&p, "old", &users[0]).unwrap();
    store.delete_users(&p, &["bob".into()]).unwrap();
    assert_eq!(
        store.topic(&p, "old").unwrap().unwrap().subscribers_count,
        1
    );
    assert_eq!(
        store.tree(T::subscriptions).len(),
        0,
        "their records went with them"
    );
    assert_eq!(
        ids(store.topic_subscriptions(&p, "old", &req).unwrap()),
        [cy_old.id]
    );
    // the deleted user's topics were found from both forms of `user_subs`
    store.delete_users(&p, &["cy".into()]).unwrap();
    assert_eq!(
        store.topic(&p, "new").unwrap().unwrap().subscribers_count,
        0
    );
    assert_eq!(
        store.topic(&p, "old").unwrap().unwrap().subscribers_count,
        0
    );
    for t in [T::topic_subs, T::user_subs, T::sub_index] {
        assert_eq!(store.tree(t).len(), 0, "{t:?} emptied");
    }
    // a topic deleted with an earlier-layout subscription in it
    let d = (&store as &dyn crate::storage::Storage)
        .subscribe(&p, "new", &users[0])
        .unwrap();
    to_earlier_layout(&store, &p, &d);
    store.delete_topic(&p, "new").unwrap();
    for t in [T::subscriptions, T::topic_subs, T::user_subs, T::sub_index] {
        assert_eq!(store.tree(t).len(), 0, "{t:?} emptied with the topic");
    }
}

#[test]
fn channel_secrets_are_sealed_and_legacy_plaintext_is_sealed_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let p = Uuid::now_v7();
    let c = twilio("tok-sealed-0123");
    {
        let store = Store::open(dir.path()).unwrap();
        store.put_channel(&p, &c).unwrap();
        assert!(!raw_holds(&store, b"tok-sealed-0123"));
        assert!(raw_holds(&store, b"AC1"), "other fields stay readable");
        let back = store.channel(&p, &c.id).unwrap().unwrap();
        assert_eq!(back.config["auth_token"], "tok-sealed-0123");
        // a ciphertext moved to another channel does not open
        let other = twilio("x");
        let v = store
            .tree(T::channels)
            .get(Key::new().id(&p).id(&c.id))
            .unwrap()
            .unwrap();
        let mut moved: StoredChannel = codec::dec(&v).unwrap();
        moved.id = other.id;
        store
            .tree(T::channels)
            .insert(Key::new().id(&p).id(&other.id), codec::enc(&moved))
            .unwrap();
        let e = store.channel(&p, &other.id).unwrap_err();
        assert!(e.message.contains("does not open"), "{}", e.message);
        store.delete_channel(&p, &other.id).unwrap();
        // a record as an earlier Herald wrote it: secrets in plaintext
        let legacy = twilio("tok-legacy-4567");
        let mut w = Writes::new();
        w.put_rec(T::channels, Key::new().id(&p).id(&legacy.id), &legacy);
        store.commit_durable(w).unwrap();
        assert!(raw_holds(&store, b"tok-legacy-4567"));
        assert_eq!(
            store.channel(&p, &legacy.id).unwrap().unwrap().config["auth_token"],
            "tok-legacy-4567",
            "read either way until sealed"
        );
    }
    let store = Store::open(dir.path()).unwrap();
    assert!(!raw_holds(&store, b"tok-legacy-4567"), "sealed at start");
    assert_eq!((&store as &dyn Storage).all_channels(&p).unwrap().len(), 2);
    drop(store);
    // without the key: no secret is read or written
    let bare = Store::open_without_key(dir.path()).unwrap();
    assert!(bare.channel(&p, &c.id).is_err());
    assert!(bare.put_channel(&p, &twilio("y")).is_err());
    drop(bare);
    // with another key: refused at open
    let other = dir.path().join("other.key");
    std::fs::write(&other, "cd".repeat(32)).unwrap();
    let e = Store::open_with(dir.path(), Some(&other)).err().unwrap();
    assert!(e.message.contains("not the key"), "{}", e.message);
}

#[test]
fn expired_idempotency_records_are_swept() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let p = Uuid::now_v7();
    let old = IdempotentResponse {
        payload_hash: vec![1],
        status: 202,
        body: b"{}".to_vec(),
        created_at: Timestamp::from_millis(Timestamp::now().millis() - 25 * 3600 * 1000),
    };
    let fresh = IdempotentResponse {
        created_at: Timestamp::now(),
        ..old.clone()
    };
    store.put_idempotent_response(&p, b"old", &old).unwrap();
    store.put_idempotent_response(&p, b"new", &fresh).unwrap();
    assert!(
        store.idempotent_response(&p, b"old").unwrap().is_none(),
        "expired: not replayed"
    );
    assert_eq!(store.sweep(Sweep::Idempotency, 100).unwrap(), 1);
    assert_eq!(store.tree(T::idempotency).len(), 1);
    assert!(store.idempotent_response(&p, b"new").unwrap().is_some());
}

/// Flows are read through a cache. Whatever readers do meanwhile, once
/// `update_flow` has returned every read, by id or by handle, gives the
/// flow as it stored it.
#[test]
fn cached_flows_are_never_older_than_the_last_update() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let p = Uuid::now_v7();
    let id = Uuid::now_v7();
    let flow: Flow = serde_json::from_value(serde_json::json!({
        "id": id, "handle": "welcome", "name": "v0", "description": null,
        "status": "active", "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
        "steps": [{"kind": "delay", "channel_id": null, "template": null, "seconds": 1}],
    }))
    .unwrap();
    assert!(store.flow_by_handle(&p, "welcome").unwrap().is_none());
    store.create_flow(&p, &flow).unwrap();
    assert_eq!(
        store.flow_by_handle(&p, "welcome").unwrap().unwrap().name,
        "v0"
    );

    // Readers fill and hit the cache while the flow changes under them.
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..3)
        .map(|i| {
            let (store, done) = (store.clone(), done.clone());
            std::thread::spawn(move || {
                let mut reads = 0u32;
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    let f = if i == 0 {
                        store.flow(&p, &id).unwrap()
                    } else {
                        store.flow_by_handle(&p, "welcome").unwrap()
                    };
                    assert_eq!(f.unwrap().id, id);
                    reads += 1;
                }
                reads
            })
        })
        .collect();
    for n in 1..=200 {
        let (f, ()) = store
            .update_flow(&p, &id, |f| {
                f.name = format!("v{n}");
                Ok(())
            })
            .unwrap();
        assert_eq!(f.name, format!("v{n}"));
        // the writer's own next reads see what it stored
        assert_eq!(store.flow(&p, &id).unwrap().unwrap().name, format!("v{n}"));
        let by_handle = store.flow_by_handle(&p, "welcome").unwrap().unwrap();
        assert_eq!(by_handle.name, format!("v{n}"));
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    for r in readers {
        assert!(r.join().unwrap() > 0);
    }
    let stored = store.flow_stored(&p, &id).unwrap().unwrap();
    assert_eq!(stored.name, "v200");
    let read = store.flow(&p, &id).unwrap().unwrap();
    assert_eq!(codec::enc(&read), codec::enc(&stored));
    assert!(
        store.inner.flows_cache.contains_key(&(p, id)),
        "reads fill the cache"
    );
}
