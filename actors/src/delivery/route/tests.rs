//! The route rules over a notification's deliveries: what a hop does when
//! it comes due, and what a settled hop lets go.

use super::*;
use crate::model::{ChannelType, Rendered, RouteHop};
use uuid::Uuid;

fn t(ms: i64) -> Timestamp {
    Timestamp::from_millis(ms)
}

/// Hop `hop` of route step 1 on `ct`, pending, due at `due`.
fn hop(nid: &Uuid, hop: usize, ct: ChannelType, due: i64, success: RouteSuccess) -> Delivery {
    Delivery {
        id: crate::model::hop_delivery_id(nid, 1, hop),
        notification_id: *nid,
        flow_run_id: Uuid::nil(),
        flow_id: Uuid::nil(),
        channel_id: Uuid::nil(),
        channel_type: ct,
        topic: None,
        status: DeliveryStatus::Pending,
        data: Rendered::default(),
        outcomes: None,
        actor_id: None,
        recipient_id: Uuid::nil(),
        attempts: 0,
        error: None,
        due_at: t(due),
        next_attempt_at: Some(t(due)),
        sent_at: None,
        seen_at: None,
        read_at: None,
        clicked_at: None,
        archived_at: None,
        interacted_at: None,
        interacted_action: None,
        created_at: t(0),
        updated_at: t(0),
        gate: None,
        batch: false,
        feed_at: None,
        bounce: None,
        fallback_channel_ids: vec![],
        attempt_channels: vec![],
        route: Some(RouteHop {
            step: 1,
            hop: hop as u8,
            success,
            after_ms: if hop == 0 { 0 } else { 60_000 },
            gate: None,
        }),
        after_route: None,
    }
}

fn code(o: &Option<Outcome>) -> Option<String> {
    match o {
        Some(Outcome::Skipped(e)) => Some(e.code.clone()),
        Some(Outcome::Wait { at }) => Some(format!("wait {}", at.millis())),
        Some(_) => Some("other".into()),
        None => None,
    }
}

#[test]
fn ids_of_hops_keep_their_step_and_stay_below_the_tag() {
    let nid = Uuid::now_v7();
    for step in [0, 7, crate::model::MAX_STEPS - 1] {
        for h in 0..crate::model::MAX_ROUTE_CHANNELS {
            let id = crate::model::hop_delivery_id(&nid, step, h);
            assert_eq!(crate::model::step_and_hop(&id), (step, h));
            assert_ne!(id.as_bytes()[15], crate::model::NOTIFICATION_TAG);
            assert_eq!(
                crate::model::notification_of(&id),
                crate::model::notification_of(&nid)
            );
        }
    }
}

#[test]
fn a_hop_waits_for_the_previous_one_then_goes_unless_it_met_the_success() {
    let nid = Uuid::now_v7();
    let mut all = vec![
        hop(&nid, 0, ChannelType::InApp, 0, RouteSuccess::Read),
        hop(&nid, 1, ChannelType::Email, 60_000, RouteSuccess::Read),
    ];
    // the first still pending: the second waits
    assert_eq!(
        code(&at_due(&all[1], &all, t(60_000), None)),
        Some("wait 120000".into())
    );
    // the first went out at 0; `released` sets the second's time
    all[0].status = DeliveryStatus::Sent;
    all[0].sent_at = Some(t(0));
    let pulled = released(&all, 0, t(10));
    assert_eq!(pulled, vec![(1, t(60_010))]);
    all[1].next_attempt_at = Some(t(60_010));
    assert_eq!(
        code(&at_due(&all[1], &all, t(60_000), None)),
        Some("wait 60010".into())
    );
    assert_eq!(code(&at_due(&all[1], &all, t(60_010), None)), None);
    // read before then: not needed
    all[0].read_at = Some(t(30_000));
    assert_eq!(
        code(&at_due(&all[1], &all, t(60_010), None)),
        Some("route_satisfied".into())
    );
}

#[test]
fn a_failed_hop_lets_the_next_go_at_once_and_the_route_end_releases_later_steps() {
    let nid = Uuid::now_v7();
    let mut later = hop(&nid, 0, ChannelType::Sms, 200_000, RouteSuccess::Sent);
    later.id = crate::model::delivery_id(&nid, 2);
    later.route = None;
    later.after_route = Some(1);
    let mut all = vec![
        hop(&nid, 0, ChannelType::Email, 0, RouteSuccess::Sent),
        hop(&nid, 1, ChannelType::Sms, 60_000, RouteSuccess::Sent),
        later,
    ];
    all[0].status = DeliveryStatus::Failed;
    assert_eq!(released(&all, 0, t(5)), vec![(1, t(5))]);
    assert_eq!(code(&at_due(&all[1], &all, t(5), None)), None);
    // the step after the route waits while a hop is pending
    assert!(matches!(
        at_due(&all[2], &all, t(5), None),
        Some(Outcome::Wait { .. })
    ));
    all[1].status = DeliveryStatus::Sent;
    all[1].sent_at = Some(t(6));
    // the route ended: the later step keeps its distance from the route's end
    assert_eq!(released(&all, 1, t(7)), vec![(2, t(140_007))]);
    assert_eq!(code(&at_due(&all[2], &all, t(7), None)), None);
}

#[test]
fn a_sent_success_makes_the_next_hop_due_now_and_skipped() {
    let nid = Uuid::now_v7();
    let mut all = vec![
        hop(&nid, 0, ChannelType::Email, 0, RouteSuccess::Sent),
        hop(&nid, 1, ChannelType::Sms, 60_000, RouteSuccess::Sent),
    ];
    all[0].status = DeliveryStatus::Sent;
    all[0].sent_at = Some(t(1));
    assert_eq!(released(&all, 0, t(2)), vec![(1, t(2))]);
    assert_eq!(
        code(&at_due(&all[1], &all, t(2), None)),
        Some("route_satisfied".into())
    );
    // the steps context shows the route as the hop that went
    all[1].status = DeliveryStatus::Skipped;
    all[1].error = Some(DeliveryError::new(DeliveryErrorCode::RouteSatisfied, "x"));
    let ctx = crate::model::conditions::steps_context(&all);
    assert_eq!(ctx["steps"]["1"]["status"], "sent");
}

#[test]
fn a_settle_that_meets_the_success_settles_the_rest_of_the_route_with_it() {
    use crate::rules::settle::{settle_one, SettledOne};
    use crate::storage::QueueItem;
    let nid = Uuid::now_v7();
    let mut later = hop(&nid, 0, ChannelType::Sms, 200_000, RouteSuccess::Sent);
    later.id = crate::model::delivery_id(&nid, 2);
    later.route = None;
    later.after_route = Some(1);
    let mut all = vec![
        hop(&nid, 0, ChannelType::Email, 0, RouteSuccess::Sent),
        hop(&nid, 1, ChannelType::Sms, 60_000, RouteSuccess::Sent),
        hop(&nid, 2, ChannelType::Chat, 120_000, RouteSuccess::Sent),
        later,
    ];
    assert!(satisfied_now(&all, 1).is_none(), "nothing went out yet");
    let item = |d: &Delivery| QueueItem {
        project: Uuid::nil(),
        delivery_id: d.id,
        channel_type: d.channel_type,
        due_ms: d.due_at.millis(),
    };
    let sent = Outcome::Sent { outcomes: None };
    // the first hop went out: the second comes back to be settled now, as
    // satisfied, with its queue item as it stands
    let q0 = item(&all[0]);
    let SettledOne::Applied { then, pulled, .. } = settle_one(&mut all, 0, &q0, sent, t(5), None)
    else {
        panic!("applied");
    };
    assert!(pulled.is_empty());
    assert_eq!(then.len(), 1);
    let (i, q1, o) = then.into_iter().next().unwrap();
    assert_eq!((i, q1.due_ms), (1, 60_000));
    assert_eq!(code(&Some(o.clone())), Some("route_satisfied".into()));
    // settling it hands on the third, and settling that ends the route,
    // which releases the step after it
    let SettledOne::Applied { then, route, .. } = settle_one(&mut all, 1, &q1, o, t(5), None)
    else {
        panic!("applied");
    };
    assert_eq!(route.map(|e| e.code), Some("route.satisfied".into()));
    let (i, q2, o) = then.into_iter().next().expect("the third hop");
    assert_eq!(i, 2);
    let SettledOne::Applied { then, pulled, .. } = settle_one(&mut all, 2, &q2, o, t(5), None)
    else {
        panic!("applied");
    };
    assert!(then.is_empty());
    assert_eq!(pulled.iter().map(|(i, _)| *i).collect::<Vec<_>>(), vec![3]);
    assert_eq!(all[1].status, DeliveryStatus::Skipped);
    assert_eq!(all[2].status, DeliveryStatus::Skipped);
}
