//! What settling an attempt's outcome traces beyond the delivery's own
//! change (`delivery::settle::apply`): whether the outcome was an attempt,
//! and the `condition.evaluated` entry of a step's gate.

use crate::delivery::conditions;
use crate::model::{Delivery, DeliveryErrorCode, Timestamp};
use crate::storage::Outcome;
use crate::trace::TraceEntry;
use uuid::Uuid;

/// Whether the outcome came from a provider call: a skip, a cancellation or
/// a wait calls no provider, so it has no `attempt` entry.
pub fn was_attempt(o: &Outcome) -> bool {
    !matches!(
        o,
        Outcome::Skipped(_) | Outcome::Canceled(_) | Outcome::Wait { .. }
    )
}

/// The trace entry of a condition over earlier steps, decided as delivery
/// `d` (id `delivery_id`, one of `deliveries`, its notification's) came due,
/// by the attempt before this outcome: traced with the deliveries it was
/// decided on. Only its first settle is traced (a retry checks it again),
/// and not a cancellation or a skip for another reason (a deleted
/// recipient), decided before the gate was looked at.
pub fn gate_entry(
    o: &Outcome, d: &Delivery, deliveries: &[Delivery], delivery_id: &Uuid, now: Timestamp,
) -> Option<TraceEntry> {
    let result = match o {
        Outcome::Skipped(e) => {
            (e.code == DeliveryErrorCode::ConditionFalse.as_str()).then_some(false)
        }
        Outcome::Canceled(_) | Outcome::Wait { .. } => None,
        _ => Some(true),
    }?;
    let g = d.gate.as_ref()?;
    if d.attempts != 0 {
        return None;
    }
    let ctx = conditions::steps_context(deliveries);
    let rule = g.decider(&ctx, result, true);
    let step = crate::trace::step_of(delivery_id) as usize;
    Some(crate::trace::entry(
        now,
        "condition.evaluated",
        g.trace_args(step, result, rule, "due"),
    ))
}

/// What settling one outcome did (`settle_one`).
// Made and taken apart once per outcome settled, never stored or moved in
// bulk: boxing the applied case would cost an allocation each.
#[allow(clippy::large_enum_variant)]
pub enum SettledOne {
    /// The delivery had settled already: nothing changed, its queue row goes.
    AlreadyFinal,
    /// The outcome was applied: whether it was an attempt, the gate's trace
    /// entry to write (`gate_entry`), and the queue item the delivery waits
    /// as next (`None`: it leaves the queue).
    Applied {
        was_attempt: bool,
        gate: Option<TraceEntry>,
        next: Option<crate::storage::QueueItem>,
        /// A route hop's entry (`delivery::route::settled_entry`).
        route: Option<TraceEntry>,
        /// Other pending deliveries of the notification now due sooner
        /// (`delivery::route::released`): their index in `deliveries`
        /// (their `next_attempt_at` already moved) and their queue item as
        /// it is now, for the backend to write with the settle.
        pulled: Vec<(usize, crate::storage::QueueItem)>,
    },
}

/// The step both backends' settle loops take per outcome: applies `o` to
/// delivery `di` of its notification's `deliveries` (`delivery::settle::apply`)
/// unless it has settled already.
pub fn settle_one(
    deliveries: &mut [Delivery], di: usize, q: &crate::storage::QueueItem, o: Outcome,
    now: Timestamp,
) -> SettledOne {
    let d = &deliveries[di];
    if d.status.is_final() {
        return SettledOne::AlreadyFinal;
    }
    // Project time: a test clock's when the project has one.
    let project_now = crate::delivery::clock::test_now(&q.project).unwrap_or(now);
    let mut pulled = vec![];
    // A route's wait decided before the hop it waited for settled (that
    // settle's release came first): decided again under the lock, so it
    // is not left waiting for a release that already happened.
    let mut o = o;
    if let Outcome::Wait { at } = &o {
        let waits_on_route = d.route.is_some() || d.after_route.is_some();
        if waits_on_route && !d.batch {
            let sooner = match crate::delivery::route::at_due(d, deliveries, project_now) {
                Some(Outcome::Wait { at }) => at,
                _ => project_now,
            };
            if sooner < *at {
                o = Outcome::Wait { at: sooner };
                pulled.push((
                    di,
                    crate::storage::QueueItem {
                        due_ms: sooner.millis(),
                        ..*q
                    },
                ));
            }
        }
    }
    let was_attempt = was_attempt(&o);
    let gate = gate_entry(&o, d, deliveries, &q.delivery_id, now);
    let route = crate::delivery::route::settled_entry(&o, d, deliveries, now);
    let next = crate::delivery::settle::apply(&mut deliveries[di], q, o, now);
    for (i, at) in crate::delivery::route::released(deliveries, di, project_now) {
        let p = &mut deliveries[i];
        p.next_attempt_at = Some(at);
        p.updated_at = now;
        pulled.push((
            i,
            crate::storage::QueueItem {
                project: q.project,
                delivery_id: p.id,
                channel_type: p.channel_type,
                due_ms: at.millis(),
            },
        ));
    }
    SettledOne::Applied {
        was_attempt,
        gate,
        next,
        route,
        pulled,
    }
}
