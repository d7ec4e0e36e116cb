//! Route steps: channels tried one after another until one reaches the
//! recipient (`Step::channels`, `Step::success`).
//!
//! Every hop is a delivery of the notification, staged with the run
//! (`delivery::accept`): the first due at the step's time, each later one at
//! the time it would go if every hop before it went out on time
//! (`after` after the previous one). A hop the recipient cannot receive
//! (preferences, its condition) is skipped at staging and the next is due at
//! once. What a hop does when it comes due is decided here, as one pure
//! function over the notification's deliveries as they are then (`at_due`),
//! which the external attempt and both backends' in-app settling call: skip
//! it (`route_satisfied`, or its condition is false), wait (the previous hop
//! is still pending, or went out less than `after` ago), or send it. When a
//! hop settles, the hops and steps it lets go sooner are due earlier
//! (`released`, applied in the same atomic change as the settle by
//! `rules::settle::settle_one`), so a hop that fails lets the next one go at
//! once. The waits are queue rows with due times in project time, so a
//! restart or a test clock moves them like any other wait, and a hop is
//! only ever sent by the attempt that settles it.
//!
//! Steps after a route wait for it to end: they are staged due at the
//! route's latest time and carry `Delivery::after_route`; they go once no
//! hop of the route is pending (`released` makes them due then).

use super::conditions::condition_false;
use crate::model::presence::DueFacts;
use crate::model::{
    Delivery, DeliveryError, DeliveryErrorCode, DeliveryStatus, RouteSuccess, Step, Timestamp,
    MAX_STEPS,
};
use crate::storage::Outcome;
use crate::trace::{self, TraceEntry};
use serde_json::json;
use std::borrow::Cow;

/// One delivery-making unit of a flow's steps: a step, or one hop of a
/// route step (as the channel step it is sent as).
pub(crate) struct Unit<'a> {
    /// The step's index in the flow.
    pub(crate) i: usize,
    pub(crate) step: Cow<'a, Step>,
    /// A route's hop: its place and the route step.
    pub(crate) hop: Option<(usize, &'a Step)>,
}

impl Unit<'_> {
    /// The slot the unit's templates are compiled under
    /// (`Flow::template_slots`).
    pub(crate) fn slot(&self) -> usize {
        self.i + MAX_STEPS * self.hop.map_or(0, |(h, _)| h)
    }

    /// Whether this is the last hop of its route.
    pub(crate) fn last_hop(&self) -> bool {
        self.hop
            .is_some_and(|(h, r)| h + 1 == r.channels.len().max(1))
    }
}

/// The units of `steps`, in order: a route step becomes its hops.
pub(crate) fn units(steps: &[Step]) -> Vec<Unit<'_>> {
    let mut out = Vec::with_capacity(steps.len());
    for (i, step) in steps.iter().enumerate() {
        if step.kind == "route" {
            for (h, c) in step.channels.iter().enumerate() {
                let mut s = c.as_step();
                s.cond = c.cond.clone();
                out.push(Unit {
                    i,
                    step: Cow::Owned(s),
                    hop: Some((h, step)),
                });
            }
        } else {
            out.push(Unit {
                i,
                step: Cow::Borrowed(step),
                hop: None,
            });
        }
    }
    out
}

/// How long past its earliest time a hop after a pending one is staged
/// (`Staging::due`): a backstop the previous hop's settle moves.
pub(crate) const BACKSTOP_MS: i64 = 60_000;

/// A route step being staged, hop by hop (`delivery::accept`).
pub(crate) struct Staging {
    pub(crate) step: usize,
    pub(crate) success: RouteSuccess,
    /// The route's own condition was false: every hop is skipped.
    pub(crate) cond_false: bool,
    /// The route's own condition over earlier steps (`RouteHop::gate`).
    pub(crate) gate: Option<crate::model::conditions::Conditions>,
    /// The previous hop's due time, and whether it is still pending (and
    /// whether it went out or is pending: the next one waits `after`).
    prev: Option<(Timestamp, bool, bool)>,
    /// Why later hops are not needed, once a staged hop met the success.
    pub(crate) satisfied: Option<String>,
    /// Whether some hop is pending, and the latest hop's due time.
    pub(crate) pending: bool,
    pub(crate) latest: Option<Timestamp>,
}

impl Staging {
    pub(crate) fn new(
        step: usize, route: &Step, decision: Option<super::conditions::Decision>,
    ) -> Self {
        use super::conditions::Decision;
        let (cond_false, gate) = match decision {
            Some(Decision::Fail) => (true, None),
            Some(Decision::Gate(g)) => (false, Some(g)),
            _ => (false, None),
        };
        Staging {
            step,
            success: route.success.unwrap_or(RouteSuccess::Sent),
            cond_false,
            gate,
            prev: None,
            satisfied: None,
            pending: false,
            latest: None,
        }
    }

    /// The due time of the next hop, `after_ms` after the previous one if
    /// that one is pending or went out at staging (at once after one
    /// skipped or failed at staging), or `first` for the first hop.
    ///
    /// After a hop that is still pending, the time staged is only a
    /// backstop, `BACKSTOP_MS` past the earliest the hop could go: the
    /// previous hop's settle sets the real time in the same write
    /// (`released`). Staged at the earliest time, every hop after a pending
    /// one came due with it, found it pending and was put back to wait (a
    /// settle each), only to be released again: half the route's cost.
    pub(crate) fn due(&self, first: Timestamp, after_ms: i64) -> Timestamp {
        match self.prev {
            None => first,
            Some((t, true, _)) => t.plus_millis(after_ms + BACKSTOP_MS),
            Some((t, false, true)) => t.plus_millis(after_ms),
            Some((t, false, false)) => t,
        }
    }

    /// Whether the previous hop is still pending.
    pub(crate) fn prev_pending(&self) -> bool {
        self.prev.is_some_and(|(_, p, _)| p)
    }

    /// The marker of hop `hop` (`Delivery::route`).
    pub(crate) fn marker(&self, hop: usize, after_ms: i64) -> crate::model::RouteHop {
        crate::model::RouteHop {
            step: self.step as u8,
            hop: hop as u8,
            success: self.success,
            after_ms,
            gate: self.gate.clone(),
        }
    }

    /// Notes hop `d` as staged.
    pub(crate) fn staged(&mut self, d: &Delivery) {
        let pending = d.status == DeliveryStatus::Pending;
        let due = d.next_attempt_at.unwrap_or(d.due_at);
        self.prev = Some((due, pending, pending || went_out(d.status)));
        self.pending |= pending;
        if pending {
            self.latest = Some(self.latest.map_or(due, |l| l.max(due)));
        }
        if self.satisfied.is_none() {
            if let Some(at) = success_at(d, self.success) {
                let hop = d.route.as_ref().map_or(0, |r| r.hop);
                self.satisfied = Some(format!(
                    "hop {hop} ({}) was {} at {}",
                    d.channel_type.as_str(),
                    self.success.as_str(),
                    at.to_rfc3339()
                ));
            }
        }
    }
}

/// Whether a delivery with this status went out to its provider (or the
/// feed).
pub fn went_out(s: DeliveryStatus) -> bool {
    matches!(
        s,
        DeliveryStatus::Sent | DeliveryStatus::Delivered | DeliveryStatus::Complained
    )
}

/// The hops of route `step` among `all`, in hop order.
fn hops(all: &[Delivery], step: u8) -> impl Iterator<Item = &Delivery> {
    let mut v: Vec<&Delivery> = all
        .iter()
        .filter(|d| d.route.as_ref().is_some_and(|r| r.step == step))
        .collect();
    v.sort_by_key(|d| d.route.as_ref().map_or(0, |r| r.hop));
    v.into_iter()
}

/// When `d` met `success` (`None`: it has not).
pub fn success_at(d: &Delivery, success: RouteSuccess) -> Option<Timestamp> {
    let in_app = d.channel_type == crate::model::ChannelType::InApp;
    match success {
        RouteSuccess::Sent => went_out(d.status).then(|| d.sent_at.unwrap_or(d.updated_at)),
        RouteSuccess::Delivered => (d.status == DeliveryStatus::Delivered).then_some(d.updated_at),
        RouteSuccess::Seen => d.seen_at.filter(|_| in_app),
        RouteSuccess::Read => d.read_at.filter(|_| in_app),
        RouteSuccess::Clicked => d.clicked_at.filter(|_| in_app),
        RouteSuccess::Interacted => [d.seen_at, d.read_at, d.clicked_at]
            .into_iter()
            .flatten()
            .min()
            .filter(|_| in_app),
    }
}

/// The first hop of route `step` before hop `before` that met `success`,
/// with why, for the skipped hop's error message.
pub fn satisfied(
    all: &[Delivery], step: u8, success: RouteSuccess, before: u8,
) -> Option<(u8, String)> {
    hops(all, step)
        .filter(|d| d.route.as_ref().is_some_and(|r| r.hop < before))
        .find_map(|d| {
            let at = success_at(d, success)?;
            let hop = d.route.as_ref().map_or(0, |r| r.hop);
            Some((
                hop,
                format!(
                    "hop {hop} ({}) was {} at {}",
                    d.channel_type.as_str(),
                    success.as_str(),
                    at.to_rfc3339()
                ),
            ))
        })
}

/// The skip of a hop an earlier hop made unneeded.
pub fn route_satisfied(why: String) -> Outcome {
    Outcome::Skipped(DeliveryError::new(DeliveryErrorCode::RouteSatisfied, why))
}

/// The skip of pending hop `i` of `all` when an earlier hop of its route
/// has met the success already (`None`: it is still needed). The settle
/// that releases such a hop settles it too, in the same write
/// (`rules::settle::settle_one`), rather than sending it through the queue
/// only to be found unneeded there: a route that succeeds at its first hop
/// costs one pass of the queue, not one per hop.
pub fn satisfied_now(all: &[Delivery], i: usize) -> Option<Outcome> {
    let d = &all[i];
    let r = d.route.as_ref()?;
    if d.status != DeliveryStatus::Pending {
        return None;
    }
    satisfied(all, r.step, r.success, r.hop).map(|(_, why)| route_satisfied(why))
}

/// The latest time a pending hop of route `step` waits for (`None`: no hop
/// is pending, the route has ended).
fn pending_until(all: &[Delivery], step: u8) -> Option<Timestamp> {
    hops(all, step)
        .filter(|d| d.status == DeliveryStatus::Pending)
        .map(|d| d.next_attempt_at.unwrap_or(d.due_at))
        .max()
}

/// What becomes of delivery `d`, one of its notification's deliveries
/// `all` as they are now, that came due at `now` (project time), before it
/// goes out: `None` to send it; otherwise the outcome to settle instead
/// (skipped as its route is satisfied or its condition is false, or a wait).
/// The one check of the external attempt (`load_attempt`) and both
/// backends' in-app settling; a delivery with no gate, route or route
/// before it is sent without looking.
pub fn at_due(
    d: &Delivery, all: &[Delivery], now: Timestamp, facts: Option<&DueFacts>,
) -> Option<Outcome> {
    if let Some(a) = &d.after_route {
        if let Some(until) = pending_until(all, *a) {
            // Released at once when the route ends (`released`); the wait
            // is only the latest it can take.
            return Some(Outcome::Wait {
                at: until.max(now.plus_millis(1000)),
            });
        }
    }
    if let Some(r) = &d.route {
        if let Some((_, why)) = satisfied(all, r.step, r.success, r.hop) {
            return Some(route_satisfied(why));
        }
        let prev = (r.hop > 0)
            .then(|| {
                hops(all, r.step).find(|x| x.route.as_ref().is_some_and(|p| p.hop + 1 == r.hop))
            })
            .flatten();
        if let Some(prev) = prev {
            if prev.status == DeliveryStatus::Pending {
                let from = prev.next_attempt_at.unwrap_or(now).max(now);
                return Some(Outcome::Wait {
                    at: from.plus_millis(r.after_ms.max(1000)),
                });
            }
            if went_out(prev.status) {
                // `released` set this hop's time to `after` after the
                // previous one went out.
                let at = d.next_attempt_at.unwrap_or(d.due_at);
                if at > now {
                    return Some(Outcome::Wait { at });
                }
            }
        }
        if r.gate
            .as_ref()
            .is_some_and(|g| !g.holds_when_due(all, facts))
        {
            return Some(condition_false());
        }
    }
    if d.gate
        .as_ref()
        .is_some_and(|g| !g.holds_when_due(all, facts))
    {
        return Some(condition_false());
    }
    None
}

/// `at_due` as a backend's in-app settling asks it for queue item `q`
/// (delivery `d` of `all`) at `now`: in the project's time (its test
/// clock's, when it has one) and with the presence facts the engine noted
/// for the delivery, so both backends decide alike.
pub fn at_due_settling(
    q: &crate::storage::QueueItem, d: &Delivery, all: &[Delivery], now: Timestamp,
    notes: &crate::trace::AttemptNotes,
) -> Option<Outcome> {
    let at = super::clock::test_now(&q.project).unwrap_or(now);
    at_due(d, all, at, notes.gate_facts(&q.delivery_id).as_ref())
}

/// Whether `at_due` has anything to look at for `d` (else it is sent
/// without reading the notification's other deliveries).
pub fn needs_check(d: &Delivery) -> bool {
    d.gate.is_some() || d.route.is_some() || d.after_route.is_some()
}

/// Whether deciding `d` when it comes due takes its recipient's presence
/// (`recipient.online`, `recipient.last_seen_at`): its own condition's or
/// its route's.
pub fn needs_presence(d: &Delivery) -> bool {
    let route_gate = d.route.as_ref().and_then(|r| r.gate.as_ref());
    d.gate.iter().chain(route_gate).any(|g| g.needs_presence())
}

/// The pending deliveries that delivery `di` of `all` lets go sooner now
/// that it settled (final) at `now` (project time), each with its new due
/// time: its route's next hop (`after` after it went out, at once after a
/// failure or a skip, or when it met a `sent` success), and, once no hop of
/// the route is pending, the steps after the route (their own delay after
/// the route's end kept). Nothing for a cancellation.
pub fn released(all: &[Delivery], di: usize, now: Timestamp) -> Vec<(usize, Timestamp)> {
    let d = &all[di];
    let Some(r) = &d.route else {
        return vec![];
    };
    if !d.status.is_final() || d.status == DeliveryStatus::Canceled {
        return vec![];
    }
    let mut out = vec![];
    let next = all.iter().position(|x| {
        x.status == DeliveryStatus::Pending
            && x.route
                .as_ref()
                .is_some_and(|n| n.step == r.step && n.hop == r.hop + 1)
    });
    if let Some(ni) = next {
        let after = all[ni].route.as_ref().map_or(0, |n| n.after_ms);
        let at = if went_out(d.status) && r.success != RouteSuccess::Sent {
            now.plus_millis(after)
        } else {
            now
        };
        out.push((ni, at));
    }
    if pending_until(all, r.step).is_none() {
        // The route's latest end as staged: the steps after it kept their
        // distance from it (a delay step between them).
        let end = hops(all, r.step).map(|h| h.due_at).max();
        for (i, x) in all.iter().enumerate() {
            if x.status == DeliveryStatus::Pending && x.after_route == Some(r.step) {
                let wait = end.map_or(0, |e| (x.due_at.millis() - e.millis()).max(0));
                out.push((i, now.plus_millis(wait)));
            }
        }
    }
    out
}

/// The decision trace entry of route hop `d` (one of `all`) having settled
/// at `now` with `o`: `route.satisfied` for a hop an earlier one made
/// unneeded, else `route.hop` with what became of it and why it was tried
/// then (`reason`: the first hop, the previous one failed or was skipped, or
/// went out `after` ago without meeting the success). Nothing for a wait,
/// a retry or a cancellation.
pub fn settled_entry(
    o: &Outcome, d: &Delivery, all: &[Delivery], now: Timestamp,
) -> Option<TraceEntry> {
    let r = d.route.as_ref()?;
    let base = json!({"step": r.step, "hop": r.hop, "channel_id": d.channel_id,
        "channel_type": d.channel_type.as_str(), "success": r.success.as_str()});
    let mut args = base.as_object().cloned().unwrap_or_default();
    let code = match o {
        // a failover keeps the hop pending on its backup channel: its own
        // entry (`delivery.failover`) says so
        Outcome::Wait { .. }
        | Outcome::Retry { .. }
        | Outcome::Canceled(_)
        | Outcome::Failover { .. } => return None,
        Outcome::Skipped(e) if e.code == DeliveryErrorCode::RouteSatisfied.as_str() => {
            args.insert("reason".into(), json!(e.message));
            "route.satisfied"
        }
        Outcome::Skipped(e) => {
            args.insert("result".into(), json!("skipped"));
            args.insert("reason".into(), json!(e.code));
            "route.hop"
        }
        Outcome::Sent { .. } | Outcome::Failed(_) => {
            let result = if matches!(o, Outcome::Sent { .. }) {
                "sent"
            } else {
                "failed"
            };
            args.insert("result".into(), json!(result));
            args.insert("reason".into(), json!(why_tried(r.hop, r.step, all)));
            "route.hop"
        }
    };
    Some(trace::entry(now, code, serde_json::Value::Object(args)))
}

/// Why hop `hop` of route `step` was tried (see `settled_entry`).
fn why_tried(hop: u8, step: u8, all: &[Delivery]) -> String {
    if hop == 0 {
        return "first_channel".into();
    }
    let prev = hops(all, step).find(|x| x.route.as_ref().is_some_and(|p| p.hop + 1 == hop));
    match prev.map(|p| p.status) {
        Some(s) if went_out(s) => "after_elapsed".into(),
        Some(s) => format!("previous_{}", s.as_str()),
        None => "first_channel".into(),
    }
}

/// A trace entry for hop `hop` of route `step` decided at staging: skipped
/// for `reason` (an error code), or `route.satisfied` when `satisfied`.
pub(crate) fn staged_entry(
    now: Timestamp, d: &Delivery, step: usize, hop: usize, success: RouteSuccess,
) -> Option<TraceEntry> {
    let e = d.error.as_ref()?;
    let satisfied = e.code == DeliveryErrorCode::RouteSatisfied.as_str();
    let code = if satisfied {
        "route.satisfied"
    } else {
        "route.hop"
    };
    let reason = if satisfied { &e.message } else { &e.code };
    Some(trace::entry(
        now,
        code,
        json!({"step": step, "hop": hop, "channel_id": d.channel_id,
            "channel_type": d.channel_type.as_str(), "success": success.as_str(),
            "result": d.status.as_str(), "reason": reason}),
    ))
}

#[cfg(test)]
mod tests;
