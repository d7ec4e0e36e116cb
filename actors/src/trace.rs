//! The decision trace of a notification: in order, every decision the engine
//! took for it and why (flow reached, recipient resolved, each step's
//! template and preference decision, each attempt, retries, subscriptions
//! removed, final statuses).
//!
//! Entries are stored compactly, a code and a few arguments each, never
//! prose: the readable `message` is made when the trace is read
//! (`TraceEntry::message`), so wording can improve without touching stored
//! data. Entries are written in the same commit as the decisions they
//! describe (the run's commit, each settle), so a trace never shows a
//! decision that did not happen and survives restarts.
//!
//! Size: accepting writes at most 3 entries plus 5 per step (with the
//! workflow decisions below); settling writes at most a condition and a
//! cancellation entry per delivery, two entries per attempt for the first
//! `MAX_TRACED_ATTEMPTS` attempts of a delivery (later ones only show in its
//! final entry's `attempts`) and the final entries, so a trace is bounded by
//! the flow's step count.
//!
//! Codes the workflow steps add when they decide (documented in docs/API.md
//! with their arguments): `run.scheduled` (a `send_at` start),
//! `condition.evaluated` (at staging, or when a condition over earlier steps
//! is decided as its delivery comes due), `throttle.passed` and
//! `throttle.limited`, `delay.waited`, `send_window.waited`,
//! `quiet_hours.waited` (a delivery held by the recipient's quiet hours),
//! `delivery.canceled`, `batch.opened` and `batch.joined` (at staging) and
//! `batch.closed` (on the batch's opener, with the change that closes it: a
//! close when due, a join that reaches `max`, a cancellation), and
//! `delivery.feedback` (a provider's report applied to a delivery, with the
//! change it made, `feedback`), and `delivery.failover` (a delivery moved
//! to its step's next backup channel: `from`, `to`, `reason`,
//! `delivery::failover`). Staging writes its decisions with
//! the accepted entries (`with_decisions`), in step order; the others go
//! with the settle or change that applies them.

use crate::model::{Delivery, DeliveryStatus, Flow, Timestamp, User};
use crate::rules::preferences::Layers;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use uuid::Uuid;

/// Attempts of one delivery that get their own trace entries.
pub const MAX_TRACED_ATTEMPTS: u32 = 8;

/// One decision: when, which (a code) and its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceEntry {
    /// When it was decided, wall time.
    pub at: Timestamp,
    pub code: String,
    pub args: Map<String, Value>,
    /// When it was decided in project time, for a project on a test clock
    /// (`delivery::clock`); `None` on the real clock, where it is `at`. Set
    /// per stored part, as the part is written (`store::trace_codec`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_at: Option<Timestamp>,
}

/// An entry: a code and its arguments (a JSON object). The steps that decide
/// beyond channels and preferences (conditions, batches, throttles, send
/// windows) add theirs with it, under the codes the module doc reserves.
pub fn entry(at: Timestamp, code: &str, args: Value) -> TraceEntry {
    TraceEntry {
        at,
        code: code.to_string(),
        args: match args {
            Value::Object(m) => m,
            _ => Map::new(),
        },
        project_at: None,
    }
}

impl TraceEntry {
    /// A readable sentence made from the code and the arguments.
    pub fn message(&self) -> String {
        let a = |k: &str| match self.args.get(k) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => "-".to_string(),
            Some(v) => v.to_string(),
        };
        match self.code.as_str() {
            "flow.reached" => format!("flow {} reached by run {}", a("flow_handle"), a("run_id")),
            "recipient.resolved" => format!(
                "recipient {} resolved (user {})",
                a("external_id"),
                a("user_id")
            ),
            "step.reached" => format!(
                "step {} reached: {} channel {}",
                a("step"),
                a("channel_type"),
                a("channel_id")
            ),
            "template.rendered" => format!("step {}: template rendered", a("step")),
            "template.failed" => format!("step {}: template failed: {}", a("step"), a("error")),
            "translation_missing" => format!(
                "step {}: no catalog has the message {} (rendered as the key)",
                a("step"),
                a("key")
            ),
            "preference.allowed" => format!(
                "step {}: {} allowed by preference {}",
                a("step"),
                a("channel_type"),
                a("key")
            ),
            "preference.skipped" => format!(
                "step {}: {} skipped by preference {}",
                a("step"),
                a("channel_type"),
                a("key")
            ),
            "preference.ignored" => format!(
                "step {}: {} sent regardless of preferences: the flow is {}",
                a("step"),
                a("channel_type"),
                a("reason")
            ),
            "delivery.feedback" => format!(
                "step {}: {} reported {}{}: the delivery is {}{}",
                a("step"),
                a("provider"),
                a("report"),
                match self.args.get("bounce") {
                    Some(Value::String(b)) => format!(" ({b} bounce)"),
                    _ => String::new(),
                },
                a("status"),
                match self.args.get("detail") {
                    Some(Value::String(d)) => format!(" ({d})"),
                    _ => String::new(),
                },
            ),
            "channel.missing" => format!("step {}: its channel no longer exists", a("step")),
            "attempt" => format!(
                "step {} attempt {}{}: {}{}",
                a("step"),
                a("attempt"),
                // In-app: no provider, the recipient's feed; a provider's
                // call with its latency; neither known (an attempt whose
                // note was lost): nothing made up.
                match (self.args.get("channel_type"), self.args.get("provider")) {
                    (Some(Value::String(t)), _) if t == "in_app" => {
                        " to the recipient's in-app feed".to_string()
                    }
                    (_, Some(Value::String(p))) =>
                        format!(" via {p} ({} ms)", a("latency_ms")),
                    _ => String::new(),
                },
                a("result"),
                match self.args.get("error") {
                    Some(Value::String(e)) => format!(" ({e})"),
                    _ => String::new(),
                }
            ),
            "retry.scheduled" => format!("step {}: retry scheduled at {}", a("step"), a("at")),
            "subscription.removed" => format!(
                "step {}: {} expired push subscription(s) removed",
                a("step"),
                a("count")
            ),
            "delivery.final" => format!(
                "step {}: delivery {} after {} attempt(s)",
                a("step"),
                a("status"),
                a("attempts")
            ),
            "delivery.failover" => format!(
                "step {}: moved from channel {} to its backup {} ({})",
                a("step"),
                a("from"),
                a("to"),
                a("reason")
            ),
            "route.hop" => format!(
                "step {}: route channel {} ({}) {} ({})",
                a("step"),
                a("hop"),
                a("channel_type"),
                a("result"),
                a("reason")
            ),
            "route.satisfied" => format!(
                "step {}: route channel {} ({}) not needed: {}",
                a("step"),
                a("hop"),
                a("channel_type"),
                a("reason")
            ),
            "notification.processed" => "notification processed".to_string(),
            "run.scheduled" => format!("run scheduled to start at {}", a("send_at")),
            "condition.evaluated" => format!(
                "step {}: condition was {} ({}{})",
                a("step"),
                a("result"),
                match self.args.get("rule") {
                    Some(Value::Object(r)) => format!(
                        "decided by rule {} {} {}",
                        r.get("index").map_or("-".into(), |v| v.to_string()),
                        r.get("path").and_then(Value::as_str).unwrap_or("-"),
                        r.get("op").and_then(Value::as_str).unwrap_or("-"),
                    ),
                    _ => "decided by all its rules".to_string(),
                },
                match self.args.get("decided") {
                    Some(Value::String(d)) if d == "due" => " when the step came due",
                    _ => "",
                }
            ),
            "batch.joined" => format!(
                "step {}: joined the batch of notification {} (key {:?}, {} activities); later steps not run",
                a("step"),
                a("batched_into"),
                a("key"),
                a("count")
            ),
            "batch.opened" => format!(
                "step {}: opened a batch (key {:?}, {} window {}), closing at {}",
                a("step"),
                a("key"),
                a("window_type"),
                a("window"),
                a("closes_at")
            ),
            "batch.closed" => format!(
                "step {}: batch closed ({}) with {} activities",
                a("step"),
                a("reason"),
                a("count")
            ),
            "throttle.passed" => format!(
                "step {}: throttle passed ({} of {} in {}, key {:?})",
                a("step"),
                a("count"),
                a("limit"),
                a("window"),
                a("key")
            ),
            "throttle.limited" => format!(
                "step {}: throttled ({} of {} in {}, key {:?}); later steps not run",
                a("step"),
                a("count"),
                a("limit"),
                a("window"),
                a("key")
            ),
            "delay.waited" => format!(
                "step {}: delay of {} s, the steps after it wait until {}",
                a("step"),
                a("seconds"),
                a("until")
            ),
            "send_window.waited" => format!(
                "step {}: waits for its send window until {}",
                a("step"),
                a("until")
            ),
            "quiet_hours.waited" => format!(
                "step {}: waits for the recipient's quiet hours to end at {}",
                a("step"),
                a("until")
            ),
            "delivery.canceled" => format!(
                "step {}: canceled by cancellation key {:?}",
                a("step"),
                a("cancellation_key")
            ),
            other => other.to_string(),
        }
    }
}

/// The preference "key" of a delivery of a critical flow
/// (`rules::preferences::CRITICAL`).
pub use crate::rules::preferences::CRITICAL;

/// The step a delivery belongs to (its id's last byte, see
/// `model::delivery_id`; a route hop's, `model::hop_delivery_id`).
pub fn step_of(delivery: &Uuid) -> u8 {
    crate::model::step_and_hop(delivery).0 as u8
}

/// An argument of an entry as the engine makes it, before it is a JSON
/// value: a `Sink` that stores a compact form never makes the value.
#[derive(Debug, Clone, Copy)]
pub enum Arg<'a> {
    Null,
    U64(u64),
    Str(&'a str),
    /// Written as its canonical text (lowercase, hyphenated).
    Id(Uuid),
    /// Any value (a provider's message id, a time).
    Json(&'a Value),
}

impl Arg<'_> {
    /// The JSON value the argument stands for.
    pub fn to_value(self) -> Value {
        match self {
            Arg::Null => Value::Null,
            Arg::U64(n) => n.into(),
            Arg::Str(s) => s.into(),
            Arg::Id(u) => Value::String(u.hyphenated().to_string()),
            Arg::Json(v) => v.clone(),
        }
    }
}

fn opt_str(s: Option<&str>) -> Arg<'_> {
    s.map_or(Arg::Null, Arg::Str)
}

/// Receives entries in order, each a code and its arguments. The entries as
/// values (`Vec<TraceEntry>`) are one sink; a store's compact encoding can
/// be another, so that a fan-out's traces cost no JSON values (they were a
/// sixth of a live recipient's CPU).
pub trait Sink {
    fn put(&mut self, at: Timestamp, code: &'static str, args: &[(&'static str, Arg<'_>)]);
}

impl Sink for Vec<TraceEntry> {
    fn put(&mut self, at: Timestamp, code: &'static str, args: &[(&'static str, Arg<'_>)]) {
        let mut m = Map::new();
        for (k, v) in args {
            m.insert((*k).to_string(), v.to_value());
        }
        self.push(TraceEntry {
            at,
            code: code.to_string(),
            args: m,
            project_at: None,
        });
    }
}

/// A notification's trace as accepted, in the small form staging leaves it
/// in: what the entries are made of besides the staged deliveries (flow
/// reached, recipient resolved, and per step the template and preference
/// decisions, derived from the deliveries so the rules stay in
/// `delivery::accept`), and the decisions of the workflow steps. The store
/// writes it through a `Sink` (`write`) or as entries (`entries`).
#[derive(Debug, Clone)]
pub struct Accepted {
    pub at: Timestamp,
    /// The project time staging decided at, on a test clock (the run's
    /// `clock_at`): its entries' `project_at`.
    pub project_at: Option<Timestamp>,
    pub flow_id: Uuid,
    pub flow_handle: String,
    pub run_id: Uuid,
    pub user_id: Uuid,
    pub external_id: String,
    /// Per delivery, the preference that decided it
    /// (`rules::preferences::decide`).
    pub prefs: Vec<(&'static str, bool)>,
    /// The decisions staging took, each with its step (`with_decisions`).
    pub decided: Vec<(Option<usize>, TraceEntry)>,
}

impl Accepted {
    pub fn new(
        flow: &Flow, run_id: &Uuid, user: &User, prefs: &Layers<'_>, deliveries: &[Delivery],
        now: Timestamp, decided: Vec<(Option<usize>, TraceEntry)>,
    ) -> Self {
        Accepted {
            at: now,
            project_at: None,
            flow_id: flow.id,
            flow_handle: flow.handle.clone(),
            run_id: *run_id,
            user_id: user.id,
            external_id: user.external_id.clone(),
            prefs: deliveries
                .iter()
                .map(|d| crate::rules::preferences::decide(prefs, flow, d.channel_type))
                .collect(),
            decided,
        }
    }

    /// Writes the entries of `deliveries` (the ones it was made with) into
    /// `sink`, without the staged decisions (`decided`).
    pub fn write(&self, deliveries: &[Delivery], sink: &mut impl Sink) {
        let now = self.at;
        sink.put(
            now,
            "flow.reached",
            &[
                ("flow_id", Arg::Id(self.flow_id)),
                ("flow_handle", Arg::Str(&self.flow_handle)),
                ("run_id", Arg::Id(self.run_id)),
            ],
        );
        sink.put(
            now,
            "recipient.resolved",
            &[
                ("user_id", Arg::Id(self.user_id)),
                ("external_id", Arg::Str(&self.external_id)),
            ],
        );
        for (i, d) in deliveries.iter().enumerate() {
            let step = Arg::U64(step_of(&d.id).into());
            sink.put(
                now,
                "step.reached",
                &[
                    ("step", step),
                    ("delivery_id", Arg::Id(d.id)),
                    ("channel_type", Arg::Str(d.channel_type.as_str())),
                    ("channel_id", Arg::Id(d.channel_id)),
                ],
            );
            let code = d.error.as_ref().map(|e| e.code.as_str());
            if code == Some("template_error") {
                let e = d.error.as_ref().map(|e| e.message.as_str());
                sink.put(
                    now,
                    "template.failed",
                    &[("step", step), ("error", opt_str(e))],
                );
                final_into(d, now, sink);
                continue;
            }
            // A step after a batch is rendered at the close, and traced
            // then (`delivery::batch::close`).
            if !d.batch {
                sink.put(now, "template.rendered", &[("step", step)]);
            }
            if code == Some("provider_not_configured") {
                sink.put(now, "channel.missing", &[("step", step)]);
                final_into(d, now, sink);
                continue;
            }
            let (key, allowed) = self.prefs.get(i).copied().unwrap_or(("default", true));
            // Whatever else skips it (a condition), no preference decided.
            if key == CRITICAL {
                sink.put(
                    now,
                    "preference.ignored",
                    &[
                        ("step", step),
                        ("channel_type", Arg::Str(d.channel_type.as_str())),
                        ("reason", Arg::Str(CRITICAL)),
                    ],
                );
                if d.status.is_final() {
                    final_into(d, now, sink);
                }
                continue;
            }
            let code = if allowed && d.status != DeliveryStatus::Skipped {
                "preference.allowed"
            } else {
                "preference.skipped"
            };
            sink.put(
                now,
                code,
                &[
                    ("step", step),
                    ("channel_type", Arg::Str(d.channel_type.as_str())),
                    ("key", Arg::Str(key)),
                ],
            );
            if d.status.is_final() {
                final_into(d, now, sink);
            }
        }
    }

    /// The entries, the staged decisions in their places, each with the
    /// project time (`project_at`).
    pub fn entries(&self, deliveries: &[Delivery]) -> Vec<TraceEntry> {
        let mut out = Vec::with_capacity(2 + 4 * deliveries.len());
        self.write(deliveries, &mut out);
        let mut out = with_decisions(out, self.decided.clone());
        for e in &mut out {
            e.project_at = self.project_at;
        }
        out
    }
}

/// `trace` (as `Accepted::write` made it) with the decisions staging took per step
/// (`decided`, in step order, each with its step index): each goes before the
/// `step.reached` of the first later step, so the trace reads in step order;
/// a run-wide entry (`step` `None`) goes right after `recipient.resolved`.
pub fn with_decisions(
    trace: Vec<TraceEntry>, decided: Vec<(Option<usize>, TraceEntry)>,
) -> Vec<TraceEntry> {
    if decided.is_empty() {
        return trace;
    }
    let mut out = Vec::with_capacity(trace.len() + decided.len());
    let mut decided = decided.into_iter().peekable();
    for e in trace {
        let reached = match (e.code.as_str(), e.args.get("step")) {
            ("step.reached", Some(s)) => s.as_u64().map(|s| s as usize),
            _ => None,
        };
        if let Some(s) = reached {
            while let Some((_, d)) = decided.next_if(|(at, _)| at.is_none_or(|at| at <= s)) {
                out.push(d);
            }
        }
        let resolved = e.code == "recipient.resolved";
        out.push(e);
        if resolved {
            while let Some((_, d)) = decided.next_if(|(at, _)| at.is_none()) {
                out.push(d);
            }
        }
    }
    out.extend(decided.map(|(_, d)| d));
    out
}

/// A delivery stopped by its run's cancellation key.
pub fn canceled(d: &Delivery, key: Option<&str>, now: Timestamp) -> TraceEntry {
    entry(
        now,
        "delivery.canceled",
        serde_json::json!({"step": step_of(&d.id), "delivery_id": d.id,
            "cancellation_key": key}),
    )
}

/// A delivery's final status.
pub fn final_entry(d: &Delivery, now: Timestamp) -> TraceEntry {
    let mut out = Vec::with_capacity(1);
    final_into(d, now, &mut out);
    out.remove(0)
}

fn final_into(d: &Delivery, now: Timestamp, sink: &mut impl Sink) {
    sink.put(
        now,
        "delivery.final",
        &[
            ("step", Arg::U64(step_of(&d.id).into())),
            ("delivery_id", Arg::Id(d.id)),
            ("status", Arg::Str(d.status.as_str())),
            ("attempts", Arg::U64(d.attempts.into())),
            (
                "error_code",
                opt_str(d.error.as_ref().map(|e| e.code.as_str())),
            ),
        ],
    );
}

/// What the delivery actor saw of one provider call, beyond its outcome:
/// kept in memory (`AttemptNotes`) until the attempt is settled, when it
/// goes into the `attempt` entry.
#[derive(Debug, Clone, Default)]
pub struct AttemptNote {
    /// The channel's provider (`webhook`, `smtp`…).
    pub provider: String,
    pub latency_ms: u64,
    /// The status the provider answered with (HTTP status, SMTP reply code);
    /// `None` when it did not answer (timeout, refused connection).
    pub status_code: Option<u16>,
    /// Push subscriptions the provider reported gone (and Herald removed).
    pub subscriptions_removed: usize,
}

/// The engine's notes of attempts made but not settled yet, by delivery: in
/// memory, as an attempt is seen only by this process and settled by it
/// (`QueueRepo::settle` takes each note as it writes the `attempt` entry).
/// Beside them, the presence facts a delivery's gate was decided on
/// (`Conditions::needs_presence`), until its settle traces the decision.
#[derive(Debug, Default)]
pub struct AttemptNotes {
    notes: dashmap::DashMap<Uuid, AttemptNote>,
    gates: dashmap::DashMap<Uuid, crate::model::presence::DueFacts>,
}

/// Attempt notes kept at most: a note is taken when its attempt settles, so
/// only notes of attempts whose settle failed linger; past this many, all go
/// (a trace then lacks a provider and latency, nothing else).
const MAX_NOTES: usize = 100_000;

impl AttemptNotes {
    /// Remembers what the delivery actor saw of an attempt, for its trace
    /// entry.
    pub fn note(&self, delivery: &Uuid, note: AttemptNote) {
        if self.notes.len() >= MAX_NOTES {
            self.notes.clear();
        }
        self.notes.insert(*delivery, note);
    }

    /// Takes the note of a delivery's attempt being settled.
    pub fn take(&self, delivery: &Uuid) -> Option<AttemptNote> {
        self.notes.remove(delivery).map(|(_, n)| n)
    }

    /// Remembers the presence facts a delivery's gate is decided on (read by
    /// `Engine::due_facts` as its step was reached), for its settle.
    pub fn note_gate(&self, delivery: &Uuid, facts: crate::model::presence::DueFacts) {
        if self.gates.len() >= MAX_NOTES {
            self.gates.clear();
        }
        self.gates.insert(*delivery, facts);
    }

    /// The presence facts noted for a delivery's gate, if any.
    pub fn gate_facts(&self, delivery: &Uuid) -> Option<crate::model::presence::DueFacts> {
        self.gates.get(delivery).map(|f| *f)
    }

    /// Takes the presence facts of a delivery's gate being settled.
    pub fn take_gate(&self, delivery: &Uuid) -> Option<crate::model::presence::DueFacts> {
        self.gates.remove(delivery).map(|(_, f)| f)
    }
}

/// Writes into `sink` the entries of one settled attempt: the attempt
/// (unless past `MAX_TRACED_ATTEMPTS`), the retry it scheduled or the final
/// status. `was_attempt` is false for a skip that made no attempt.
pub fn settled_into(
    d: &Delivery, was_attempt: bool, note: Option<AttemptNote>, now: Timestamp,
    sink: &mut impl Sink,
) {
    let step = Arg::U64(step_of(&d.id).into());
    if was_attempt && d.attempts <= MAX_TRACED_ATTEMPTS {
        // an attempt whose settle moved the delivery to a backup channel
        // (`delivery::failover`): its `delivery.failover` entry follows
        let moved = d.attempt_channel(d.attempts) != d.channel_id;
        let result = match (d.status, d.next_attempt_at) {
            (DeliveryStatus::Pending, _) if moved => "failover",
            (DeliveryStatus::Pending, _) => "retry",
            (s, _) => match s {
                DeliveryStatus::Sent => "sent",
                DeliveryStatus::Failed => "failed",
                _ => "skipped",
            },
        };
        let provider_message_id = d
            .outcomes
            .as_ref()
            .and_then(|o| o.get(0).unwrap_or(o).get("message_id"));
        let empty = AttemptNote::default();
        let n = note.as_ref().unwrap_or(&empty);
        sink.put(
            now,
            "attempt",
            &[
                ("step", step),
                ("delivery_id", Arg::Id(d.id)),
                ("channel_type", Arg::Str(d.channel_type.as_str())),
                // the attempt's own channel: a failover settled with it
                // has moved the delivery on already
                ("channel_id", Arg::Id(d.attempt_channel(d.attempts))),
                ("attempt", Arg::U64(d.attempts.into())),
                ("result", Arg::Str(result)),
                (
                    "provider",
                    opt_str((!n.provider.is_empty()).then_some(n.provider.as_str())),
                ),
                ("latency_ms", Arg::U64(n.latency_ms)),
                (
                    "status_code",
                    n.status_code.map_or(Arg::Null, |c| Arg::U64(c.into())),
                ),
                (
                    "error_code",
                    opt_str(d.error.as_ref().map(|e| e.code.as_str())),
                ),
                (
                    "error",
                    opt_str(d.error.as_ref().map(|e| e.message.as_str())),
                ),
                (
                    "provider_message_id",
                    provider_message_id.map_or(Arg::Null, Arg::Json),
                ),
            ],
        );
        if d.status == DeliveryStatus::Pending && !moved {
            let at = serde_json::to_value(d.next_attempt_at).unwrap_or(Value::Null);
            sink.put(
                now,
                "retry.scheduled",
                &[
                    ("step", step),
                    ("delivery_id", Arg::Id(d.id)),
                    ("at", Arg::Json(&at)),
                ],
            );
        }
    }
    let removed = note.as_ref().map_or(0, |n| n.subscriptions_removed);
    if removed > 0 {
        sink.put(
            now,
            "subscription.removed",
            &[
                ("step", step),
                ("delivery_id", Arg::Id(d.id)),
                ("count", Arg::U64(removed as u64)),
            ],
        );
    }
    if d.status.is_final() {
        final_into(d, now, sink);
    }
}

/// Writes into `sink` that the notification became processed.
pub fn processed_into(now: Timestamp, sink: &mut impl Sink) {
    sink.put(now, "notification.processed", &[]);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Staging's decisions land in step order: a run-wide one after the
    /// recipient, a step's before its `step.reached`, one of a step with no
    /// delivery after it (a throttle that stopped the run) at the end.
    #[test]
    fn decisions_are_placed_in_step_order() {
        let t = Timestamp::from_millis(0);
        let e = |code: &str, step: Option<u64>| {
            entry(
                t,
                code,
                step.map_or(serde_json::json!({}), |s| serde_json::json!({"step": s})),
            )
        };
        let trace = vec![
            e("flow.reached", None),
            e("recipient.resolved", None),
            e("step.reached", Some(0)),
            e("template.rendered", Some(0)),
            e("step.reached", Some(2)),
        ];
        let decided = vec![
            (None, e("run.scheduled", None)),
            (Some(0), e("condition.evaluated", Some(0))),
            (Some(1), e("throttle.passed", Some(1))),
            (Some(2), e("send_window.waited", Some(2))),
            (Some(3), e("throttle.limited", Some(3))),
        ];
        let codes: Vec<String> = with_decisions(trace, decided)
            .into_iter()
            .map(|e| e.code)
            .collect();
        assert_eq!(
            codes,
            [
                "flow.reached",
                "recipient.resolved",
                "run.scheduled",
                "condition.evaluated",
                "step.reached",
                "template.rendered",
                "throttle.passed",
                "send_window.waited",
                "step.reached",
                "throttle.limited"
            ]
        );
    }

    /// Messages are made from the code and arguments; unknown codes read as
    /// themselves.
    #[test]
    fn messages_are_made_at_read_time() {
        let e = entry(
            Timestamp::from_millis(0),
            "preference.skipped",
            serde_json::json!({"step": 1, "channel_type": "chat", "key": "flow"}),
        );
        assert_eq!(e.message(), "step 1: chat skipped by preference flow");
        let e = entry(
            Timestamp::from_millis(0),
            "later.code",
            serde_json::json!({}),
        );
        assert_eq!(e.message(), "later.code");
        let e = entry(
            Timestamp::from_millis(0),
            "route.satisfied",
            serde_json::json!({"step": 0, "hop": 2, "channel_type": "email",
                "reason": "hop 0 (in_app) was read at x"}),
        );
        assert_eq!(
            e.message(),
            "step 0: route channel 2 (email) not needed: hop 0 (in_app) was read at x"
        );
        // an attempt: through a provider, into a feed, or with neither known
        let attempt = |channel_type: &str, provider: Value| {
            entry(
                Timestamp::from_millis(0),
                "attempt",
                serde_json::json!({"step": 2, "attempt": 1, "channel_type": channel_type,
                    "provider": provider, "latency_ms": 12, "result": "sent", "error": null}),
            )
            .message()
        };
        assert_eq!(
            attempt("chat", "webhook".into()),
            "step 2 attempt 1 via webhook (12 ms): sent"
        );
        assert_eq!(
            attempt("in_app", Value::Null),
            "step 2 attempt 1 to the recipient's in-app feed: sent"
        );
        assert_eq!(attempt("chat", Value::Null), "step 2 attempt 1: sent");
    }
}
