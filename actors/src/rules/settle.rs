//! What settling an attempt's outcome traces beyond the delivery's own
//! change (`delivery::settle::apply`): whether the outcome was an attempt,
//! the `condition.evaluated` entry of a step's gate, and the
//! `delivery.failover` entry of a move to a backup channel.

use crate::delivery::conditions;
use crate::model::presence::DueFacts;
use crate::model::{Delivery, DeliveryErrorCode, Timestamp};
use crate::storage::Outcome;
use crate::trace::TraceEntry;
use uuid::Uuid;

/// Whether the outcome came from a provider call: a skip, a cancellation or
/// a wait calls no provider, so it has no `attempt` entry.
pub fn was_attempt(o: &Outcome) -> bool {
    match o {
        Outcome::Skipped(_) | Outcome::Canceled(_) | Outcome::Wait { .. } => false,
        Outcome::Failover { attempted, .. } => *attempted,
        _ => true,
    }
}

/// The trace entry of a condition over earlier steps, decided as delivery
/// `d` (id `delivery_id`, one of `deliveries`, its notification's) came due,
/// by the attempt before this outcome: traced with the deliveries it was
/// decided on. Only its first settle is traced (a retry checks it again),
/// and not a cancellation or a skip for another reason (a deleted
/// recipient), decided before the gate was looked at.
///
/// A gate over the recipient's presence is traced with the facts it was
/// decided on (`facts`, noted by whoever read them): `recipient.online` and
/// `recipient.last_seen_at` beside the deciding rule.
pub fn gate_entry(
    o: &Outcome, d: &Delivery, deliveries: &[Delivery], delivery_id: &Uuid, now: Timestamp,
    facts: Option<&DueFacts>,
) -> Option<TraceEntry> {
    let result = match o {
        Outcome::Skipped(e) => {
            (e.code == DeliveryErrorCode::ConditionFalse.as_str()).then_some(false)
        }
        Outcome::Canceled(_) | Outcome::Wait { .. } => None,
        Outcome::Failover {
            attempted: false, ..
        } => None,
        _ => Some(true),
    }?;
    let g = d.gate.as_ref()?;
    if d.attempts != 0 {
        return None;
    }
    let ctx = conditions::due_context(deliveries, facts);
    let rule = g.decider(&ctx, result, true);
    let step = crate::trace::step_of(delivery_id) as usize;
    let mut args = g.trace_args(step, result, rule, "due");
    if let Some(f) = facts.filter(|_| g.needs_presence()) {
        args["recipient"] = f.trace_json();
    }
    Some(crate::trace::entry(now, "condition.evaluated", args))
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
    /// as next (`None`: it leaves the queue); `after`, an entry to write
    /// after the attempt's own (a failover's).
    Applied {
        was_attempt: bool,
        gate: Option<TraceEntry>,
        next: Option<crate::storage::QueueItem>,
        after: Option<TraceEntry>,
        /// A route hop's entry (`delivery::route::settled_entry`).
        route: Option<TraceEntry>,
        /// Other pending deliveries of the notification now due sooner
        /// (`delivery::route::released`): their index in `deliveries`
        /// (their `next_attempt_at` already moved) and their queue item as
        /// it is now, for the backend to write with the settle.
        pulled: Vec<(usize, crate::storage::QueueItem)>,
        /// Other pending deliveries of the notification to settle in the
        /// same write, each with its queue item and outcome: the hops of a
        /// route this settle satisfied (`delivery::route::satisfied_now`),
        /// which the backend settles next through `settle_one` like any
        /// outcome (their own entries, their queue rows removed).
        then: Vec<(usize, crate::storage::QueueItem, Outcome)>,
    },
}

/// The step both backends' settle loops take per outcome: applies `o` to
/// delivery `di` of its notification's `deliveries` (`delivery::settle::apply`)
/// unless it has settled already.
///
/// `facts`: the presence facts the delivery's gate was decided on, if it
/// names presence (`AttemptNotes::take_gate`).
pub fn settle_one(
    deliveries: &mut [Delivery], di: usize, q: &crate::storage::QueueItem, o: Outcome,
    now: Timestamp, facts: Option<&DueFacts>,
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
            let sooner = match crate::delivery::route::at_due(d, deliveries, project_now, facts) {
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
    let gate = gate_entry(&o, d, deliveries, &q.delivery_id, now, facts);
    let route = crate::delivery::route::settled_entry(&o, d, deliveries, now);
    let moved = match &o {
        Outcome::Failover { reason, .. } => Some((d.channel_id, *reason)),
        _ => None,
    };
    let next = crate::delivery::settle::apply(&mut deliveries[di], q, o, now);
    let after = moved.map(|(from, reason)| {
        crate::delivery::failover::trace_entry(&deliveries[di], from, reason, now)
    });
    let mut then = vec![];
    for (i, at) in crate::delivery::route::released(deliveries, di, project_now) {
        if let Some(o) = crate::delivery::route::satisfied_now(deliveries, i) {
            let p = &deliveries[i];
            let item = crate::storage::QueueItem {
                project: q.project,
                delivery_id: p.id,
                channel_type: p.channel_type,
                due_ms: p.next_attempt_at.unwrap_or(p.due_at).millis(),
            };
            then.push((i, item, o));
            continue;
        }
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
        after,
        route,
        pulled,
        then,
    }
}
