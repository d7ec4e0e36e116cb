//! Unit tests of `events.rs` (kept beside it so the module itself stays readable).

use super::*;

fn endpoint(types: Option<Vec<EventType>>) -> WebhookEndpoint {
    let (id, now) = crate::model::new_id();
    WebhookEndpoint {
        id,
        url: "https://example.com/events".into(),
        event_types: types,
        enabled: true,
        disabled_reason: None,
        created_at: now,
        updated_at: now,
    }
}

/// Creates an endpoint as the engine does (a new secret, then
/// `EndpointWrite::Create`).
fn create(store: &Store, p: &Uuid, ep: WebhookEndpoint) -> Result<(WebhookEndpoint, String)> {
    (store as &dyn Storage).create_event_endpoint(p, ep)
}

/// Changes an endpoint through `EndpointWrite::Change`.
fn change(
    store: &Store, p: &Uuid, id: &Uuid, f: Change<'_, WebhookEndpoint>,
) -> Result<WebhookEndpoint> {
    store.put_event_endpoint(p, EndpointWrite::Change { id, f })
}

/// Makes `secret` the endpoint's through `EndpointWrite::Secret`.
fn replace(
    store: &Store, p: &Uuid, id: &Uuid, secret: &str, grace: Duration,
) -> Result<WebhookEndpoint> {
    store.put_event_endpoint(p, EndpointWrite::Secret { id, secret, grace })
}

fn stage(store: &Store, p: &Uuid, t: EventType, resource: &Uuid) {
    let mut w = Writes::new();
    store.stage_outbound(
        &mut w,
        p,
        t,
        resource,
        || serde_json::json!({"id": resource}),
    );
    store.commit(w).unwrap();
}

fn attempt(e: &OutboxEvent, ok: bool) -> EventAttempt {
    EventAttempt {
        id: Uuid::now_v7(),
        event_id: e.id,
        event_type: e.event_type,
        attempt: e.attempts + 1,
        status_code: Some(if ok { 200 } else { 500 }),
        latency_ms: 1,
        response: String::new(),
        error: (!ok).then(|| "the endpoint answered 500".to_string()),
        created_at: Timestamp::now(),
    }
}

/// Events are written only for an enabled endpoint that wants their type.
#[test]
fn the_outbox_is_written_only_for_enabled_endpoints_wanting_the_type() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let p = Uuid::now_v7();
    let r = Uuid::now_v7();
    stage(&store, &p, EventType::DeliverySent, &r);
    assert_eq!(store.tree(T::outbox).len(), 0);
    let (ep, _) = create(&store, &p, endpoint(Some(vec![EventType::DeliverySent]))).unwrap();
    stage(&store, &p, EventType::DeliverySent, &r);
    stage(&store, &p, EventType::FeedEntryRead, &r);
    assert_eq!(store.tree(T::outbox).len(), 1);
    assert_eq!(store.tree(T::event_log).len(), 1);
    change(
        &store,
        &p,
        &ep.id,
        Box::new(|e| {
            e.enabled = false;
            Ok(())
        }),
    )
    .unwrap();
    stage(&store, &p, EventType::DeliverySent, &r);
    assert_eq!(store.tree(T::outbox).len(), 1);
    // another project's endpoint does not see this project's events
    let other = Uuid::now_v7();
    create(&store, &other, endpoint(None)).unwrap();
    stage(&store, &p, EventType::DeliverySent, &r);
    assert_eq!(store.tree(T::outbox).len(), 1);
}

/// A resource's later event waits for the earlier one; a retry keeps it
/// in the outbox; giving up disables the endpoint and empties its
/// outbox; replay queues the logged events again with their ids.
#[test]
fn order_per_resource_retries_giving_up_and_replay() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let p = Uuid::now_v7();
    let (ep, _) = create(&store, &p, endpoint(None)).unwrap();
    let (r1, r2) = (Uuid::now_v7(), Uuid::now_v7());
    stage(&store, &p, EventType::DeliveryRetrying, &r1);
    stage(&store, &p, EventType::DeliverySent, &r1);
    stage(&store, &p, EventType::DeliverySent, &r2);
    let now = Timestamp::now().millis() + 1;
    let due = store.due_events(now, 10, &[]).unwrap();
    let kinds: Vec<(Uuid, EventType)> = due.iter().map(|e| (e.resource, e.event_type)).collect();
    assert_eq!(
        kinds,
        [
            (r1, EventType::DeliveryRetrying),
            (r2, EventType::DeliverySent)
        ]
    );
    let first_id = due[0].id;
    let later = now + 3_600_000;
    store
        .record_event_attempts(&[
            (
                due[0].clone(),
                attempt(&due[0], false),
                AttemptNext::Retry(later),
            ),
            (due[1].clone(), attempt(&due[1], true), AttemptNext::Done),
        ])
        .unwrap();
    // r1's first event waits for its retry, and its second waits for it
    assert!(store.due_events(now, 10, &[]).unwrap().is_empty());
    let again = store.due_events(later, 10, &[]).unwrap();
    assert_eq!(again.len(), 1);
    assert_eq!((again[0].id, again[0].attempts), (first_id, 1));
    assert!(again[0].first_attempt_ms.is_some());
    let attempts = store
        .list_event_attempts(
            &p,
            &ep.id,
            &PageReq {
                limit: 10,
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(attempts.items.len(), 2);

    store
        .record_event_attempts(&[(
            again[0].clone(),
            attempt(&again[0], false),
            AttemptNext::GiveUp("gone for good".into()),
        )])
        .unwrap();
    let ep2 = store.event_endpoint(&p, &ep.id).unwrap().unwrap();
    assert!(!ep2.enabled);
    assert_eq!(ep2.disabled_reason.as_deref(), Some("gone for good"));
    assert_eq!(store.tree(T::outbox).len(), 0);
    assert!(store.due_events(later, 10, &[]).unwrap().is_empty());

    change(
        &store,
        &p,
        &ep.id,
        Box::new(|e| {
            e.enabled = true;
            Ok(())
        }),
    )
    .unwrap();
    let n = store
        .replay_events(&p, &ep.id, Timestamp::from_millis(0))
        .unwrap();
    assert_eq!(n, 3);
    let due = store
        .due_events(Timestamp::now().millis() + 1, 10, &[])
        .unwrap();
    assert_eq!(due[0].id, first_id, "replay keeps the ids and the order");
}

/// After a restart, new events sort after those still waiting, even
/// when the clock went back meanwhile.
#[test]
fn the_sequence_starts_above_the_waiting_events() {
    let dir = tempfile::tempdir().unwrap();
    let p = Uuid::now_v7();
    let ahead = micros_of_millis(Timestamp::now().millis()) + 3_600_000_000;
    {
        let store = Store::open(dir.path()).unwrap();
        let (ep, _) = create(&store, &p, endpoint(None)).unwrap();
        let mut w = Writes::new();
        w.put(T::outbox, outbox_key(&p, &ep.id, ahead), b"");
        store.commit_durable(w).unwrap();
    }
    let store = Store::open(dir.path()).unwrap();
    assert!(store.next_event_seq() > ahead);
}

/// Both secrets sign after a rotation (the new one first) and neither is
/// stored in the clear; a deleted endpoint takes its outbox along.
#[test]
fn secrets_are_sealed_rotated_and_deleted_with_the_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let p = Uuid::now_v7();
    let (ep, old) = create(&store, &p, endpoint(None)).unwrap();
    let new = crate::events::new_secret();
    replace(&store, &p, &ep.id, &new, Duration::from_secs(60)).unwrap();
    assert_eq!(
        store.event_secrets(&p, &ep.id).unwrap(),
        [new.clone(), old.clone()]
    );
    let raw = store
        .tree(T::hooks)
        .get(hook_key(&p, &ep.id))
        .unwrap()
        .unwrap();
    for s in [&old, &new] {
        let plain = s.as_bytes();
        assert!(!raw.windows(plain.len()).any(|w| w == plain));
    }
    // a grace of zero: only the new secret signs
    let newest = crate::events::new_secret();
    replace(&store, &p, &ep.id, &newest, Duration::ZERO).unwrap();
    assert_eq!(store.event_secrets(&p, &ep.id).unwrap(), [newest]);

    stage(&store, &p, EventType::DeliverySent, &Uuid::now_v7());
    assert_eq!(store.tree(T::outbox).len(), 1);
    store.delete_event_endpoint(&p, &ep.id).unwrap();
    assert_eq!(store.tree(T::outbox).len(), 0);
    // an entry staged while the endpoint was being deleted is swept
    let mut w = Writes::new();
    w.put(T::outbox, outbox_key(&p, &ep.id, 1), b"");
    store.commit(w).unwrap();
    assert_eq!(
        store.sweep(Sweep::EventLogs { before_ms: 0 }, 100).unwrap(),
        1
    );
    assert_eq!(store.tree(T::outbox).len(), 0);
    assert!(store.delete_event_endpoint(&p, &ep.id).is_err());
}
