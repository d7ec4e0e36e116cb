use super::*;
use crate::model::{ChannelType, Rendered};

fn delivery(status: DeliveryStatus, sent: bool) -> Delivery {
    let t = Timestamp::from_millis(1_000);
    Delivery {
        id: Uuid::now_v7(),
        notification_id: Uuid::now_v7(),
        flow_run_id: Uuid::now_v7(),
        flow_id: Uuid::now_v7(),
        channel_id: Uuid::now_v7(),
        channel_type: ChannelType::Email,
        topic: None,
        status,
        data: Rendered::default(),
        outcomes: Some(json!([{"identifier": "a@example.com", "status": "sent",
                                "message_id": "<abc@mg.example.com>"}])),
        actor_id: None,
        recipient_id: Uuid::now_v7(),
        attempts: 1,
        error: None,
        due_at: t,
        next_attempt_at: None,
        sent_at: sent.then_some(t),
        seen_at: None,
        read_at: None,
        clicked_at: None,
        archived_at: None,
        interacted_at: None,
        interacted_action: None,
        created_at: t,
        updated_at: t,
        gate: None,
        batch: false,
        feed_at: None,
        bounce: None,
        fallback_channel_ids: vec![],
        attempt_channels: vec![],
        route: None,
        after_route: None,
    }
}

fn report(kind: ReportKind) -> Report {
    Report {
        message_id: "abc@mg.example.com".into(),
        kind,
        at: None,
        detail: Some("550 no such user".into()),
    }
}

const HARD: ReportKind = ReportKind::Bounced(BounceKind::Hard);
const SOFT: ReportKind = ReportKind::Bounced(BounceKind::Soft);

#[test]
fn every_report_applies_to_a_sent_delivery() {
    let now = Timestamp::from_millis(5_000);
    for (kind, status) in [
        (ReportKind::Delivered, DeliveryStatus::Delivered),
        (HARD, DeliveryStatus::Bounced),
        (ReportKind::Complained, DeliveryStatus::Complained),
        (ReportKind::Failed, DeliveryStatus::Failed),
    ] {
        let mut d = delivery(DeliveryStatus::Sent, true);
        assert_eq!(apply(&mut d, &report(kind), now), Applied::Changed);
        assert_eq!((d.status, d.updated_at), (status, now));
        assert_eq!(d.bounce, bounce_of(kind));
        assert_eq!(
            d.error.as_ref().map(|e| e.code.as_str()),
            (kind == ReportKind::Failed).then_some("provider_rejected")
        );
    }
}

#[test]
fn delivered_takes_late_bounces_and_complaints_only() {
    let now = Timestamp::from_millis(5_000);
    let mut d = delivery(DeliveryStatus::Delivered, true);
    assert_eq!(
        apply(&mut d, &report(ReportKind::Delivered), now),
        Applied::Duplicate
    );
    assert_eq!(
        apply(&mut d, &report(ReportKind::Failed), now),
        Applied::Ignored
    );
    assert_eq!(d.status, DeliveryStatus::Delivered);
    assert_eq!(apply(&mut d, &report(SOFT), now), Applied::Changed);
    assert_eq!(
        (d.status, d.bounce),
        (DeliveryStatus::Bounced, Some(BounceKind::Soft))
    );
    // the same report twice changes nothing; another kind is ignored
    assert_eq!(apply(&mut d, &report(SOFT), now), Applied::Duplicate);
    assert_eq!(apply(&mut d, &report(HARD), now), Applied::Ignored);
    assert_eq!(
        apply(&mut d, &report(ReportKind::Delivered), now),
        Applied::Ignored
    );
    assert_eq!(
        apply(&mut d, &report(ReportKind::Complained), now),
        Applied::Ignored
    );
    assert_eq!(d.bounce, Some(BounceKind::Soft));
}

#[test]
fn reports_for_deliveries_never_sent_are_ignored() {
    let now = Timestamp::from_millis(5_000);
    for status in [
        DeliveryStatus::Pending,
        DeliveryStatus::Skipped,
        DeliveryStatus::Canceled,
        DeliveryStatus::Failed,
    ] {
        for kind in [
            ReportKind::Delivered,
            HARD,
            ReportKind::Complained,
            ReportKind::Failed,
        ] {
            let mut d = delivery(status, false);
            assert_eq!(apply(&mut d, &report(kind), now), Applied::Ignored);
            assert_eq!(
                (d.status, d.updated_at),
                (status, Timestamp::from_millis(1_000))
            );
        }
    }
    // a failure reported after the send is a duplicate of itself
    let mut d = delivery(DeliveryStatus::Sent, true);
    assert_eq!(
        apply(&mut d, &report(ReportKind::Failed), now),
        Applied::Changed
    );
    assert_eq!(
        apply(&mut d, &report(ReportKind::Failed), now),
        Applied::Duplicate
    );
}

#[test]
fn the_index_entry_reads_the_outcome_and_drops_angle_brackets() {
    let d = delivery(DeliveryStatus::Sent, true);
    let e = sent_message(&d).unwrap();
    assert_eq!(e.message_id, "abc@mg.example.com");
    assert_eq!(e.address, "a@example.com");
    assert_eq!((e.channel_id, e.delivery_id), (d.channel_id, d.id));
    assert_eq!(normalize_message_id(" <x> "), "x");
    assert_eq!(normalize_message_id("SM123"), "SM123");
    let mut d = delivery(DeliveryStatus::Sent, true);
    d.outcomes = Some(json!([{"identifier": "a@example.com", "status": "sent"}]));
    assert_eq!(sent_message(&d), None);
    let d = delivery(DeliveryStatus::Failed, true);
    assert_eq!(sent_message(&d), None);
}
