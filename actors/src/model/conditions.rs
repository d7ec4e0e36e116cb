//! Step conditions (`"if"` on a flow step): rules over the run's `data`, the
//! `recipient` (user fields and `custom_fields`), the `actor`, and the
//! outcome of the run's earlier steps for the same recipient
//! (`steps.<index>.status|read|seen|clicked|interacted`), joined by `all` (the default,
//! the array form) or `any`. A false condition skips the step: its delivery
//! ends `skipped` with error code `condition_false` (a delay step is not
//! waited).
//!
//! When a condition is evaluated: the rules over data, recipient and actor
//! cannot change after the run is accepted (the run keeps its data and the
//! recipient as patched then), so they are decided while the run is staged.
//! The rules over earlier steps can, until the step is reached: a delay
//! before an email gives the in-app entry time to be read. What is left of a
//! condition after its fixed part (`Conditions::at_accept`) travels with the
//! delivery (`Delivery::gate`) and is evaluated when the delivery comes due,
//! against its notification's other deliveries as they are then
//! (`Conditions::holds_when_due`): by the external attempt before it calls a
//! provider, by the backend's in-app settling before it writes the entry.
//! A delivery without a gate costs nothing more than before.
//!
//! The recipient's presence (`recipient.online`, `recipient.last_seen_at`,
//! `super::presence`) is a fact of the moment too: a rule over it joins the
//! gate, and the gate is then decided with the presence read as the step is
//! reached (`DueFacts`, which the engine reads through one function).

use super::presence::{self, DueFacts};
use super::{Delivery, DeliveryError, DeliveryErrorCode};
use crate::error::Validator;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A step's condition: its rules, all of which (or, with `any`, one of
/// which) must hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conditions {
    pub any: bool,
    pub rules: Vec<Rule>,
}

/// One comparison of the value at `path` with `value`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    pub path: String,
    pub op: Op,
    #[serde(default)]
    pub value: Option<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    Eq,
    Neq,
    Gt,
    Gte,
    Lt,
    Lte,
    In,
    NotIn,
    Contains,
    Exists,
    NotExists,
}

impl Op {
    pub const ALL: [Op; 11] = [
        Op::Eq,
        Op::Neq,
        Op::Gt,
        Op::Gte,
        Op::Lt,
        Op::Lte,
        Op::In,
        Op::NotIn,
        Op::Contains,
        Op::Exists,
        Op::NotExists,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Op::Eq => "eq",
            Op::Neq => "neq",
            Op::Gt => "gt",
            Op::Gte => "gte",
            Op::Lt => "lt",
            Op::Lte => "lte",
            Op::In => "in",
            Op::NotIn => "not_in",
            Op::Contains => "contains",
            Op::Exists => "exists",
            Op::NotExists => "not_exists",
        }
    }

    pub fn parse(s: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|o| o.as_str() == s)
    }
}

/// The fields of an earlier step a condition may name.
const STEP_FIELDS: [&str; 5] = ["status", "read", "seen", "clicked", "interacted"];

/// The most rules one condition may have.
pub const MAX_RULES: usize = 20;

/// What staging decided of a condition.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    Pass,
    Fail,
    /// Decided when the step is reached, by these rules over earlier steps
    /// and the recipient's presence.
    Gate(Conditions),
}

impl Rule {
    /// Whether the rule is decided when the step is reached: a rule over
    /// earlier steps or over the recipient's presence.
    fn decided_when_due(&self) -> bool {
        self.path.starts_with("steps.") || presence::is_presence_path(&self.path)
    }

    /// Whether the rule holds in `ctx` (an object with the paths' roots; a
    /// gate's context also has `now`, the project's time in milliseconds,
    /// which a relative duration is counted from).
    pub fn holds(&self, ctx: &Value) -> bool {
        let found = lookup(ctx, &self.path);
        let v = self.value.as_ref().unwrap_or(&Value::Null);
        if self.path == presence::LAST_SEEN_AT {
            if let (Some(offset), Some(now)) = (
                v.as_str().and_then(presence::parse_relative),
                ctx.get("now").and_then(Value::as_i64),
            ) {
                return seen_holds(self.op, found.and_then(Value::as_i64), offset, now);
            }
        }
        match self.op {
            Op::Exists => found.is_some(),
            Op::NotExists => found.is_none(),
            Op::Eq => found.is_some_and(|f| same(f, v)),
            Op::Neq => !found.is_some_and(|f| same(f, v)),
            Op::Gt | Op::Gte | Op::Lt | Op::Lte => {
                let Some(ord) = found.and_then(|f| order(f, v)) else {
                    return false;
                };
                match self.op {
                    Op::Gt => ord.is_gt(),
                    Op::Gte => ord.is_ge(),
                    Op::Lt => ord.is_lt(),
                    _ => ord.is_le(),
                }
            }
            Op::In => found.is_some_and(|f| member(f, v)),
            Op::NotIn => !found.is_some_and(|f| member(f, v)),
            Op::Contains => match found {
                Some(Value::String(s)) => v.as_str().is_some_and(|n| s.contains(n)),
                Some(Value::Array(items)) => items.iter().any(|i| same(i, v)),
                _ => false,
            },
        }
    }
}

/// The value at a dotted path; a missing key or `null` is absent.
fn lookup<'a>(ctx: &'a Value, path: &str) -> Option<&'a Value> {
    let mut at = ctx;
    for seg in path.split('.') {
        at = match at {
            Value::Object(m) => m.get(seg)?,
            Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    (!at.is_null()).then_some(at)
}

/// Equality where 1 and 1.0 are the same number.
fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// Numbers compare as numbers, strings (RFC 3339 times among them) as text.
fn order(a: &Value, b: &Value) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64()?.partial_cmp(&y.as_f64()?),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

fn member(found: &Value, list: &Value) -> bool {
    list.as_array()
        .is_some_and(|items| items.iter().any(|i| same(i, found)))
}

impl Conditions {
    fn join(&self, results: impl Iterator<Item = bool>) -> bool {
        let mut results = results;
        if self.any {
            results.any(|b| b)
        } else {
            results.all(|b| b)
        }
    }

    /// Decides what can be decided while staging, from `ctx` (`data`,
    /// `recipient`, `actor`); rules over earlier steps and presence are left
    /// as a gate.
    pub fn at_accept(&self, ctx: &Value) -> Decision {
        let (steps, fixed): (Vec<&Rule>, Vec<&Rule>) =
            self.rules.iter().partition(|r| r.decided_when_due());
        let fixed_holds = |any: bool| {
            let mut it = fixed.iter().map(|r| r.holds(ctx));
            if any {
                it.any(|b| b)
            } else {
                it.all(|b| b)
            }
        };
        if steps.is_empty() {
            return if self.join(self.rules.iter().map(|r| r.holds(ctx))) {
                Decision::Pass
            } else {
                Decision::Fail
            };
        }
        let gate = Conditions {
            any: self.any,
            rules: steps.into_iter().cloned().collect(),
        };
        match (self.any, fixed.is_empty()) {
            (_, true) => Decision::Gate(gate),
            (true, false) if fixed_holds(true) => Decision::Pass,
            (false, false) if !fixed_holds(false) => Decision::Fail,
            _ => Decision::Gate(gate),
        }
    }

    /// Whether a gate holds against the notification's deliveries as they
    /// are now (`steps.<index>`: the delivery of that step, when it has one)
    /// and the recipient's presence (`facts`; `None` only for a gate that
    /// names none, see `needs_presence`: a user then counts as offline and
    /// never seen).
    pub fn holds_when_due(&self, deliveries: &[Delivery], facts: Option<&DueFacts>) -> bool {
        let ctx = due_context(deliveries, facts);
        self.join(self.rules.iter().map(|r| r.holds(&ctx)))
    }

    /// Whether deciding this gate takes the recipient's presence.
    pub fn needs_presence(&self) -> bool {
        self.rules
            .iter()
            .any(|r| presence::is_presence_path(&r.path))
    }

    /// Which rule decided `result` over `ctx`, for the decision trace: its
    /// index in `rules`. With `all`, the first rule that fails decides false;
    /// with `any`, the first that holds decides true; any other result took
    /// every rule (`None`). Only the rules over earlier steps are looked at
    /// when `due` (with the recipient's presence), only the others otherwise
    /// (the part decided then).
    pub fn decider(&self, ctx: &Value, result: bool, due: bool) -> Option<usize> {
        if self.any != result {
            return None;
        }
        self.rules
            .iter()
            .position(|r| r.decided_when_due() == due && r.holds(ctx) == result)
    }

    /// The trace entry of this condition on step `step` having been `result`
    /// (`decided`: `accept` or `due`), naming the deciding rule compactly:
    /// its index, path and operator (not its value, which may be a long list).
    pub fn trace_args(
        &self, step: usize, result: bool, rule: Option<usize>, decided: &str,
    ) -> Value {
        let rule = rule.and_then(|i| self.rules.get(i).map(|r| (i, r)));
        serde_json::json!({
            "step": step,
            "result": result,
            "decided": decided,
            "rule": rule.map(|(i, r)| serde_json::json!({
                "index": i, "path": r.path, "op": r.op.as_str(),
            })),
        })
    }
}

/// The context of the rules over earlier steps: `steps.<index>` of each of
/// the notification's deliveries as they are now. A route step's hops
/// (`delivery::route`) make one entry: the flags of any hop, and the
/// status of its latest hop that was not skipped as unneeded.
pub fn steps_context(deliveries: &[Delivery]) -> Value {
    let mut steps = Map::new();
    let mut hops: Vec<&Delivery> = deliveries.iter().collect();
    hops.sort_by_key(|d| super::step_and_hop(&d.id).1);
    for d in hops {
        let (i, _) = super::step_and_hop(&d.id);
        let unneeded = d
            .error
            .as_ref()
            .is_some_and(|e| e.code == DeliveryErrorCode::RouteSatisfied.as_str());
        let flag = |k: &str, own: bool, steps: &Map<String, Value>| {
            own || steps
                .get(&i.to_string())
                .and_then(|s| s.get(k))
                .and_then(Value::as_bool)
                .unwrap_or(false)
        };
        let status = match steps.get(&i.to_string()) {
            Some(s) if unneeded => s["status"].as_str().unwrap_or("skipped").to_string(),
            _ => d.status.as_str().to_string(),
        };
        let entry = serde_json::json!({
            "status": status,
            "read": flag("read", d.read_at.is_some(), &steps),
            "seen": flag("seen", d.seen_at.is_some(), &steps),
            "clicked": flag("clicked", d.clicked_at.is_some(), &steps),
            "interacted": flag("interacted", d.interacted_at.is_some(), &steps),
        });
        steps.insert(i.to_string(), entry);
    }
    serde_json::json!({ "steps": steps })
}

/// The context of a gate when its step is reached: the earlier steps
/// (`steps_context`), and with `facts` the recipient's presence
/// (`recipient.online`, `recipient.last_seen_at` in milliseconds) and the
/// project's time (`now`), which no path can name.
pub fn due_context(deliveries: &[Delivery], facts: Option<&DueFacts>) -> Value {
    let mut ctx = steps_context(deliveries);
    let facts = facts.copied().unwrap_or(DueFacts {
        presence: presence::Presence::default(),
        now: super::Timestamp::now(),
    });
    ctx["recipient"] = facts.recipient_json();
    ctx["now"] = Value::from(facts.now.millis());
    ctx
}

impl Conditions {
    /// Reads the `"if"` of step `index` at path `p` (`p.if`): an array of
    /// rules (all must hold) or `{"all": [...]}` / `{"any": [...]}`. Rules
    /// over steps may name only earlier channel steps (`channel_steps`), and
    /// only when `steps_allowed`.
    pub fn parse(
        given: &Value, p: &str, index: usize, channel_steps: &[usize], steps_allowed: bool,
        v: &mut Validator,
    ) -> Option<Conditions> {
        let at = format!("{p}.if");
        let (any, list, list_at) = match given {
            Value::Array(a) => (false, a, at.clone()),
            Value::Object(m)
                if m.len() == 1 && (m.contains_key("all") || m.contains_key("any")) =>
            {
                let any = m.contains_key("any");
                let key = if any { "any" } else { "all" };
                let lp = format!("{at}.{key}");
                match &m[key] {
                    Value::Array(a) => (any, a, lp),
                    _ => {
                        v.push(lp, "format", "must be an array of rules");
                        return None;
                    }
                }
            }
            _ => {
                v.push(
                    at,
                    "format",
                    "must be an array of rules, or {\"all\": [...]} or {\"any\": [...]}",
                );
                return None;
            }
        };
        if list.is_empty() || list.len() > MAX_RULES {
            v.push(list_at, "length", format!("from 1 to {MAX_RULES} rules"));
            return None;
        }
        let before = v.fields.len();
        let mut rules = vec![];
        for (i, r) in list.iter().enumerate() {
            let rp = format!("{list_at}.{i}");
            let Some(m) = r.as_object() else {
                v.push(rp, "format", "must be an object with path, op and value");
                continue;
            };
            let op = match m.get("op") {
                Some(Value::String(s)) => match Op::parse(s) {
                    Some(o) => Some(o),
                    None => {
                        v.push(
                            format!("{rp}.op"),
                            "inclusion",
                            "one of eq, neq, gt, gte, lt, lte, in, not_in, contains, exists, not_exists",
                        );
                        None
                    }
                },
                None | Some(Value::Null) => {
                    v.push(format!("{rp}.op"), "required", "is required");
                    None
                }
                Some(_) => {
                    v.push(format!("{rp}.op"), "format", "must be a string");
                    None
                }
            };
            let path = match m.get("path") {
                Some(Value::String(s)) => check_path(
                    s,
                    &format!("{rp}.path"),
                    index,
                    channel_steps,
                    steps_allowed,
                    v,
                )
                .then(|| s.clone()),
                None | Some(Value::Null) => {
                    v.push(format!("{rp}.path"), "required", "is required");
                    None
                }
                Some(_) => {
                    v.push(format!("{rp}.path"), "format", "must be a string");
                    None
                }
            };
            let value = m.get("value").filter(|x| !x.is_null()).cloned();
            let of_presence = path.as_deref().is_some_and(presence::is_presence_path);
            if let (Some(op), true) = (op, of_presence) {
                let p = path.as_deref().unwrap_or_default();
                check_presence_rule(p, op, value.as_ref(), &rp, v);
            } else if let Some(op) = op {
                let vp = format!("{rp}.value");
                match op {
                    Op::Exists | Op::NotExists => {
                        if value.is_some() {
                            v.push(vp, "exclusion", "exists and not_exists take no value");
                        }
                    }
                    Op::In | Op::NotIn => {
                        if !value.as_ref().is_some_and(Value::is_array) {
                            v.push(vp, "format", "in and not_in compare with an array");
                        }
                    }
                    Op::Gt | Op::Gte | Op::Lt | Op::Lte => {
                        if !value
                            .as_ref()
                            .is_some_and(|x| x.is_number() || x.is_string())
                        {
                            v.push(
                                vp,
                                "format",
                                "gt, gte, lt and lte compare with a number or a string",
                            );
                        }
                    }
                    Op::Eq | Op::Neq | Op::Contains => {
                        if value.is_none() {
                            v.push(vp, "required", "is required");
                        }
                    }
                }
            }
            if let (Some(path), Some(op)) = (path, op) {
                rules.push(Rule { path, op, value });
            }
        }
        (v.fields.len() == before).then_some(Conditions { any, rules })
    }

    /// The `"if"` as the API shows it: the array form for `all`.
    pub fn view(&self) -> Value {
        let rules: Vec<Value> = self
            .rules
            .iter()
            .map(|r| {
                let mut m = Map::new();
                m.insert("op".into(), Value::from(r.op.as_str()));
                m.insert("path".into(), Value::from(r.path.clone()));
                if let Some(x) = &r.value {
                    m.insert("value".into(), x.clone());
                }
                Value::Object(m)
            })
            .collect();
        if self.any {
            serde_json::json!({ "any": rules })
        } else {
            Value::Array(rules)
        }
    }
}

/// Whether `path` is one a condition may name at step `index`.
fn check_path(
    path: &str, at: &str, index: usize, channel_steps: &[usize], steps_allowed: bool,
    v: &mut Validator,
) -> bool {
    let segs: Vec<&str> = path.split('.').collect();
    if presence::is_presence_path(path) && !steps_allowed {
        v.push(
            at,
            "inclusion",
            "a delay step's condition cannot name recipient.online or recipient.last_seen_at",
        );
        return false;
    }
    match segs[0] {
        "data" | "recipient" | "actor" if segs.iter().all(|s| !s.is_empty()) => true,
        "steps" => {
            if !steps_allowed {
                v.push(
                    at,
                    "inclusion",
                    "a delay step's condition names only data, recipient and actor",
                );
                return false;
            }
            let ok = segs.len() == 3
                && STEP_FIELDS.contains(&segs[2])
                && segs[1]
                    .parse::<usize>()
                    .is_ok_and(|i| i < index && channel_steps.contains(&i));
            if !ok {
                v.push(
                    at,
                    "inclusion",
                    "steps.<index>.status|read|seen|clicked|interacted of an earlier channel step",
                );
            }
            ok
        }
        _ => {
            v.push(
                at,
                "inclusion",
                "starts with data., recipient., actor. or steps.",
            );
            false
        }
    }
}

/// Whether an ordering rule on `last_seen_at` holds: `found` the time seen
/// (milliseconds; `None`: never), `offset` the rule's relative duration,
/// `now` the project's time. A user never seen counts as seen infinitely
/// long ago: before any instant (`lt`, `lte` hold), after none.
fn seen_holds(op: Op, found: Option<i64>, offset: i64, now: i64) -> bool {
    let at = now.saturating_add(offset);
    match (op, found) {
        (Op::Lt | Op::Lte, None) => true,
        (_, None) => false,
        (Op::Lt, Some(f)) => f < at,
        (Op::Lte, Some(f)) => f <= at,
        (Op::Gt, Some(f)) => f > at,
        (Op::Gte, Some(f)) => f >= at,
        _ => false,
    }
}

/// Checks a rule over a presence path (`op` parsed, `value` as given, both
/// at rule path `rp`): `online` takes `eq`/`neq` with a boolean;
/// `last_seen_at` takes `lt`/`lte`/`gt`/`gte` with a relative duration, or
/// `exists`/`not_exists`. Whether it is valid.
fn check_presence_rule(
    path: &str, op: Op, value: Option<&Value>, rp: &str, v: &mut Validator,
) -> bool {
    let vp = format!("{rp}.value");
    if path == presence::ONLINE {
        if !matches!(op, Op::Eq | Op::Neq) {
            v.push(
                format!("{rp}.op"),
                "inclusion",
                "recipient.online is compared with eq or neq",
            );
            return false;
        }
        if !value.is_some_and(Value::is_boolean) {
            v.push(vp, "format", "recipient.online compares with true or false");
            return false;
        }
        return true;
    }
    match op {
        Op::Exists | Op::NotExists => {
            value.is_none() || {
                v.push(vp, "exclusion", "exists and not_exists take no value");
                false
            }
        }
        Op::Lt | Op::Lte | Op::Gt | Op::Gte => {
            let ok = value
                .and_then(Value::as_str)
                .and_then(presence::parse_relative)
                .is_some();
            if !ok {
                v.push(
                    vp,
                    "format",
                    "a relative duration in the past: -<n>m, -<n>h, -<n>d or -<n>w (e.g. -7d), at most ten years",
                );
            }
            ok
        }
        _ => {
            v.push(
                format!("{rp}.op"),
                "inclusion",
                "recipient.last_seen_at is compared with lt, lte, gt, gte, exists or not_exists",
            );
            false
        }
    }
}

pub fn condition_false_error() -> DeliveryError {
    DeliveryError::new(
        DeliveryErrorCode::ConditionFalse,
        "the step's condition was false",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(path: &str, op: &str, value: Value) -> Rule {
        Rule {
            path: path.into(),
            op: Op::parse(op).unwrap(),
            value: (!value.is_null()).then_some(value),
        }
    }

    /// `steps.<i>.interacted`: whether the recipient pressed one of that
    /// step's in-app action buttons (issue 41).
    #[test]
    fn a_step_rule_sees_an_action_press() {
        let t = crate::model::Timestamp::from_millis(1_000);
        let nid = uuid::Uuid::now_v7();
        let mut d: Delivery = serde_json::from_value(json!({
            "id": crate::model::delivery_id(&nid, 0), "notification_id": nid,
            "flow_run_id": nid, "flow_id": nid, "channel_id": nid,
            "channel_type": "in_app", "topic": null, "status": "sent",
            "data": {"subject": "", "body": "b"}, "actor_id": null,
            "recipient_id": nid, "attempts": 1, "error": null, "due_at": t,
            "next_attempt_at": null, "sent_at": t, "seen_at": null, "read_at": null,
            "clicked_at": null, "archived_at": null, "created_at": t, "updated_at": t
        }))
        .unwrap();
        let pressed = rule("steps.0.interacted", "eq", json!(true));
        let ctx = steps_context(std::slice::from_ref(&d));
        assert_eq!(ctx["steps"]["0"]["interacted"], json!(false));
        assert!(!pressed.holds(&ctx));
        d.interacted_at = Some(t);
        d.interacted_action = Some(0);
        let ctx = steps_context(std::slice::from_ref(&d));
        assert!(pressed.holds(&ctx));
        assert!(STEP_FIELDS.contains(&"interacted"));
    }

    #[test]
    fn every_op_compares_as_documented() {
        let ctx = json!({"data": {"n": 5, "s": "high", "tags": ["a", "b"], "none": null}});
        let cases = [
            ("data.n", "eq", json!(5.0), true),
            ("data.n", "neq", json!(5), false),
            ("data.missing", "neq", json!(5), true),
            ("data.n", "gt", json!(4), true),
            ("data.n", "gte", json!(5), true),
            ("data.n", "lt", json!(5), false),
            ("data.n", "lte", json!(5), true),
            ("data.s", "gt", json!("a"), true),
            ("data.s", "gt", json!(1), false),
            ("data.s", "in", json!(["low", "high"]), true),
            ("data.s", "not_in", json!(["low", "high"]), false),
            ("data.missing", "not_in", json!(["x"]), true),
            ("data.s", "contains", json!("ig"), true),
            ("data.tags", "contains", json!("b"), true),
            ("data.tags", "contains", json!("c"), false),
            ("data.n", "exists", Value::Null, true),
            ("data.none", "exists", Value::Null, false),
            ("data.none", "not_exists", Value::Null, true),
            ("data.tags.1", "eq", json!("b"), true),
        ];
        for (path, op, value, want) in cases {
            assert_eq!(
                rule(path, op, value.clone()).holds(&ctx),
                want,
                "{path} {op} {value}"
            );
        }
    }

    #[test]
    fn staging_decides_the_fixed_part_and_leaves_a_gate() {
        let ctx = json!({"data": {"p": "high"}});
        let fixed_true = rule("data.p", "eq", json!("high"));
        let fixed_false = rule("data.p", "eq", json!("low"));
        let step = rule("steps.0.read", "eq", json!(false));
        let all = |rules: Vec<Rule>| Conditions { any: false, rules };
        let any = |rules: Vec<Rule>| Conditions { any: true, rules };
        let gate = Decision::Gate(all(vec![step.clone()]));
        assert_eq!(
            all(vec![fixed_true.clone()]).at_accept(&ctx),
            Decision::Pass
        );
        assert_eq!(
            all(vec![fixed_false.clone(), step.clone()]).at_accept(&ctx),
            Decision::Fail
        );
        assert_eq!(
            all(vec![fixed_true.clone(), step.clone()]).at_accept(&ctx),
            gate
        );
        assert_eq!(
            any(vec![fixed_true, step.clone()]).at_accept(&ctx),
            Decision::Pass
        );
        assert_eq!(
            any(vec![fixed_false, step.clone()]).at_accept(&ctx),
            Decision::Gate(any(vec![step]))
        );
    }

    #[test]
    fn presence_is_decided_when_due_with_its_facts() {
        use crate::model::presence::{DueFacts, Presence};
        use crate::model::Timestamp;
        let day = 86_400_000;
        let now = Timestamp::from_millis(100 * day);
        let offline = rule("recipient.online", "eq", json!(false));
        let stale = rule("recipient.last_seen_at", "lt", json!("-7d"));
        let fixed = rule("data.p", "eq", json!("high"));
        let all = |rules: Vec<Rule>| Conditions { any: false, rules };
        // Presence never decides at staging, even with a recipient field of
        // that name: it joins the gate.
        let ctx = json!({"data": {"p": "high"}, "recipient": {"online": false}});
        let c = all(vec![fixed, offline.clone()]);
        assert_eq!(
            c.at_accept(&ctx),
            Decision::Gate(all(vec![offline.clone()]))
        );
        let gate = all(vec![offline, stale]);
        assert!(gate.needs_presence());
        let facts = |online: bool, seen: Option<i64>| DueFacts {
            presence: Presence {
                online,
                last_seen_at: seen.map(Timestamp::from_millis),
            },
            now,
        };
        assert!(gate.holds_when_due(&[], Some(&facts(false, None))));
        assert!(gate.holds_when_due(&[], Some(&facts(false, Some(90 * day)))));
        assert!(!gate.holds_when_due(&[], Some(&facts(false, Some(95 * day)))));
        assert!(!gate.holds_when_due(&[], Some(&facts(true, Some(100 * day)))));
        // The trace names the rule that decided, over the same facts.
        let ctx = due_context(&[], Some(&facts(true, Some(100 * day))));
        assert_eq!(gate.decider(&ctx, false, true), Some(0));
        let ctx = due_context(&[], Some(&facts(false, Some(95 * day))));
        assert_eq!(gate.decider(&ctx, false, true), Some(1));
        let steps_only = all(vec![rule("steps.0.read", "eq", json!(false))]);
        assert!(!steps_only.needs_presence());
    }

    #[test]
    fn never_seen_is_infinitely_long_ago() {
        let now = 100 * 86_400_000;
        let week = -7 * 86_400_000;
        assert!(seen_holds(Op::Lt, None, week, now));
        assert!(seen_holds(Op::Lte, None, week, now));
        assert!(!seen_holds(Op::Gt, None, week, now));
        assert!(!seen_holds(Op::Gte, None, week, now));
        let eight_days_ago = Some(now - 8 * 86_400_000);
        let yesterday = Some(now - 86_400_000);
        assert!(seen_holds(Op::Lt, eight_days_ago, week, now));
        assert!(!seen_holds(Op::Lt, yesterday, week, now));
        assert!(seen_holds(Op::Gt, yesterday, week, now));
        assert!(seen_holds(Op::Gte, Some(now + week), week, now));
        assert!(!seen_holds(Op::Gt, Some(now + week), week, now));
    }
}
