//! Unit tests of `feedback.rs`: the index entry a settled send leaves, a
//! report's change with its trace entry, and the entry going with its
//! delivery when the recipient is erased.

use super::*;
use crate::feedback::{apply, trace_entry, Applied, Report, ReportKind};
use crate::model::{Channel, ChannelType, DeliveryStatus, Timestamp};
use crate::storage::{
    AcceptInput, ErasureStatus, EventRepo, Outcome, QueueRepo, RecordRepo, RunRecipient,
};
use crate::trace::AttemptNotes;
use serde_json::json;

#[test]
fn a_sent_delivery_is_indexed_reported_and_forgotten_with_its_recipient() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let p = Uuid::now_v7();
    let now = Timestamp::now();
    let mut ch = Channel::builtin_in_app(Uuid::now_v7(), now);
    ch.channel_type = ChannelType::Email;
    ch.provider = "postmark".into();
    ch.builtin = false;
    crate::storage::ChannelRepo::put_channel(&store, &p, &ch).unwrap();
    let flow: crate::model::Flow = serde_json::from_value(json!({
        "id": Uuid::now_v7(), "handle": "f", "name": "F", "description": null,
        "status": "active", "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
        "steps": [{"kind": "channel", "channel_id": ch.id, "template": {"subject": "S", "body": "B"}}],
    }))
    .unwrap();
    let input = AcceptInput {
        flow,
        recipients: vec![RunRecipient {
            external_id: "ada".into(),
            patch: crate::model::UserPatch {
                email: Some(Some("ada@example.com".into())),
                ..Default::default()
            },
        }],
        actor: None,
        topic: None,
        data: json!({}),
        idempotency: None,
        timing: Default::default(),
        test_channel_id: None,
    };
    crate::delivery::accept::accept_run(&store, crate::render::Limits::default(), &p, input)
        .unwrap();
    let q = store.queue_items(ChannelType::Email).unwrap();
    assert_eq!(q.len(), 1);
    let outcomes =
        json!([{"identifier": "ada@example.com", "status": "sent", "message_id": "<m-1@pm>"}]);
    store
        .settle(
            &[(
                q[0],
                Outcome::Sent {
                    outcomes: Some(outcomes),
                },
            )],
            &AttemptNotes::default(),
        )
        .unwrap();
    let did = q[0].delivery_id;
    assert_eq!(store.channel_project(&ch.id).unwrap(), Some(p));
    let m = store
        .sent_message(&p, &ch.id, "m-1@pm")
        .unwrap()
        .expect("indexed");
    assert_eq!(
        (m.delivery_id, m.address.as_str()),
        (did, "ada@example.com")
    );
    assert_eq!(
        store
            .sent_message(&Uuid::now_v7(), &ch.id, "m-1@pm")
            .unwrap(),
        None
    );

    let report = Report {
        message_id: "m-1@pm".into(),
        kind: ReportKind::Delivered,
        at: None,
        detail: None,
    };
    let mut what = Applied::Ignored;
    let (d, changed) = store
        .apply_report(
            &p,
            &did,
            Box::new(|d| {
                what = apply(d, &report, now);
                (what == Applied::Changed).then(|| trace_entry(d, "postmark", &report, now))
            }),
        )
        .unwrap()
        .unwrap();
    assert!(changed);
    assert_eq!(d.status, DeliveryStatus::Delivered);
    let stored = store.delivery(&p, &did).unwrap().unwrap();
    assert_eq!(stored.status, DeliveryStatus::Delivered);
    let trace = store.notification_trace(&p, &d.notification_id).unwrap();
    assert_eq!(
        trace.last().map(|e| e.code.as_str()),
        Some("delivery.feedback")
    );

    // the second time nothing is written
    let (_, changed) = store
        .apply_report(
            &p,
            &did,
            Box::new(|d| {
                (apply(d, &report, now) == Applied::Changed)
                    .then(|| trace_entry(d, "postmark", &report, now))
            }),
        )
        .unwrap()
        .unwrap();
    assert!(!changed);
    assert_eq!(
        store
            .notification_trace(&p, &d.notification_id)
            .unwrap()
            .len(),
        trace.len()
    );

    let e = store.start_erasure(&p, "ada").unwrap();
    while store.erase_step(&p, &e.id, 10).unwrap().status != ErasureStatus::Complete {}
    assert!(store
        .record(&p, crate::storage::RecordKey::Delivery(&did))
        .unwrap()
        .is_none());
    assert_eq!(store.sent_message(&p, &ch.id, "m-1@pm").unwrap(), None);
    assert_eq!(store.tree(T::sent_msgs_by_delivery).iter().count(), 0);
    assert_eq!(store.tree(T::sent_msgs).iter().count(), 0);
}
