//! The workflow schemas of `/openapi.json` that the derives cannot spell: a
//! step's condition (`if`: an array of rules, or `{"all": [...]}` /
//! `{"any": [...]}`, each rule's `value` shaped by its `op`) and the test
//! clock's advance (exactly one of `by` and `to`), a channel step's send
//! window and a user's quiet hours (the same span), the event types an event
//! endpoint takes, and the patterns of the workflow bodies' strings
//! (durations, date-times, URLs).
//!
//! They are written as JSON because they are `oneOf`s keyed by what a
//! field holds, which `ToSchema` derives cannot express, and because a
//! derive's `pattern` takes only a literal, while each pattern here is a
//! constant kept beside the check it describes. They follow the checks of
//! `delivery::conditions::Conditions::parse`,
//! `bodies::workflow::ClockAdvance::validate`, `delivery::clock::Span::parse`,
//! `retention::Window::parse`, `validate::is_http_url`,
//! `delivery::window::SendWindow::parse`,
//! `rules::quiet_hours::QuietHours::parse` and `events::parse_event_types`.

use crate::bodies::workflow::{DATE_TIME_PATTERN, SPAN_PATTERN};
use crate::bodies::RETENTION_PATTERN;
use herald_engine::delivery::conditions::MAX_RULES;
use herald_engine::delivery::window::DAYS;
use herald_engine::events::EventType;
use herald_engine::validate::HTTP_URL;
use serde_json::{json, Map, Value};

/// A rule path of a delay or throttle step: `data`, `recipient` or `actor`,
/// then dot-separated non-empty segments.
const RUN_PATH: &str = r"^(data|recipient|actor)(\.[^.]+)*$";
/// A rule path of a channel step: also `steps.<index>.<field>`.
const STEP_PATH: &str =
    r"^((data|recipient|actor)(\.[^.]+)*|steps\.[0-9]+\.(status|read|seen|clicked|interacted))$";

/// One rule `{path, op, value}`: one alternative per kind of `op`, each
/// naming the `value` it takes (a whole object each, so that a client's
/// generated type keeps `path` too).
fn rule(path_pattern: &str) -> Value {
    let alt = |ops: &[&str], value: Value, value_required: bool| {
        let mut required = vec!["path", "op"];
        if value_required {
            required.push("value");
        }
        json!({
            "type": "object",
            "required": required,
            "properties": {
                "path": {"type": "string", "pattern": path_pattern},
                "op": {"type": "string", "enum": ops},
                "value": value
            }
        })
    };
    json!({
        "description": "A rule: `path` compared by `op` with `value`.",
        "oneOf": [
            alt(&["exists", "not_exists"], json!({"type": "null"}), false),
            alt(&["in", "not_in"], json!({"type": "array"}), true),
            alt(&["gt", "gte", "lt", "lte"], json!({"type": ["number", "string"]}), true),
            alt(
                &["eq", "neq", "contains"],
                json!({"type": ["string", "number", "boolean", "array", "object"]}),
                true,
            ),
        ]
    })
}

/// A condition over rules `rule_ref`: the array form (all must hold) or
/// `{"all": [...]}` / `{"any": [...]}`.
fn condition(rule_ref: &str, description: &str) -> Value {
    let rules = json!({
        "type": "array",
        "items": {"$ref": format!("#/components/schemas/{rule_ref}")},
        "minItems": 1,
        "maxItems": MAX_RULES,
    });
    json!({
        "description": description,
        "oneOf": [
            rules,
            {"type": "object", "required": ["all"], "additionalProperties": false,
             "properties": {"all": rules}},
            {"type": "object", "required": ["any"], "additionalProperties": false,
             "properties": {"any": rules}}
        ]
    })
}

/// `if` of a step schema: the condition, or null (none).
fn nullable(name: &str, description: Option<&Value>) -> Value {
    let mut v =
        json!({"oneOf": [{"$ref": format!("#/components/schemas/{name}")}, {"type": "null"}]});
    if let Some(d) = description {
        v["description"] = d.clone();
    }
    v
}

/// A time of day as `SendWindow::parse` reads it (`%H:%M`), written `HH:MM`.
const HH_MM: &str = "^([01][0-9]|2[0-3]):[0-5][0-9]$";

/// `SendWindow`: the weekdays (all when absent or null) and the hours.
fn send_window() -> Value {
    json!({
        "type": "object",
        "description": "When a channel step may deliver, in the recipient's timezone (UTC when none); a `to` not after `from` runs across midnight.",
        "required": ["from", "to"],
        "additionalProperties": false,
        "properties": {
            "days": {"type": ["array", "null"], "minItems": 1,
                     "items": {"type": "string", "enum": DAYS}},
            "from": {"type": "string", "pattern": HH_MM},
            "to": {"type": "string", "pattern": HH_MM, "description": "Not equal to `from`."}
        }
    })
}

/// `QuietHours`: a user's quiet hours, as `rules::quiet_hours::QuietHours::parse`
/// reads them (a response, `view`, has every field).
fn quiet_hours() -> Value {
    json!({
        "type": "object",
        "description": "When a user's deliveries other than in_app wait, in `timezone` (else the user's, then the project's, then UTC); a `to` not after `from` runs across midnight into the next day. A critical flow's deliveries are not held.",
        "required": ["from", "to"],
        "additionalProperties": false,
        "properties": {
            "days": {"type": ["array", "null"], "minItems": 1,
                     "items": {"type": "string", "enum": DAYS},
                     "description": "The weekdays they start on; all seven when absent or null."},
            "from": {"type": "string", "pattern": HH_MM},
            "to": {"type": "string", "pattern": HH_MM, "description": "Not equal to `from`."},
            "timezone": {"oneOf": [{"$ref": "#/components/schemas/TimeZone"}, {"type": "null"}]}
        }
    })
}

/// `EventTypes`: the named types, or `["*"]` for every type.
fn event_types() -> Value {
    let names: Vec<&str> = EventType::ALL.iter().map(|t| t.as_str()).collect();
    json!({
        "description": "The event types to receive, or `[\"*\"]` for every type; null: every type.",
        "oneOf": [
            {"type": "array", "minItems": 1, "items": {"type": "string", "enum": names}},
            {"type": "array", "minItems": 1, "maxItems": 1, "items": {"const": "*"}},
            {"type": "null"}
        ]
    })
}

/// (schema, property, pattern) of the strings whose shape a pattern gives.
const PATTERNS: &[(&str, &str, &str)] = &[
    ("ThrottleStep", "window", SPAN_PATTERN),
    ("BatchStep", "window", SPAN_PATTERN),
    ("BatchStep", "max_window", SPAN_PATTERN),
    ("RouteChannel", "after", SPAN_PATTERN),
    ("ClockAdvance", "by", SPAN_PATTERN),
    ("PreferenceLinkInput", "expires_in", SPAN_PATTERN),
    ("ClockAdvance", "to", DATE_TIME_PATTERN),
    ("RunInput", "send_at", DATE_TIME_PATTERN),
    ("ReplayInput", "since", DATE_TIME_PATTERN),
    ("RetentionInput", "notifications", RETENTION_PATTERN),
    ("RetentionInput", "feed", RETENTION_PATTERN),
    ("WebhookEndpointInput", "url", HTTP_URL),
    ("WebhookEndpointUpdate", "url", HTTP_URL),
];

/// Inserts `ConditionRule`, `StepConditionRule`, `Condition` and
/// `StepCondition`, `SendWindow` and `QuietHours`, points the steps' `if`
/// and `send_window` and the preferences' `quiet_hours` at them, gives the
/// endpoints' `event_types` and the `PATTERNS`, and makes `ClockAdvance`
/// take exactly one of `by` and `to`.
pub fn insert(schemas: &mut Map<String, Value>) {
    schemas.insert("ConditionRule".into(), rule(RUN_PATH));
    schemas.insert("StepConditionRule".into(), rule(STEP_PATH));
    schemas.insert(
        "Condition".into(),
        condition(
            "ConditionRule",
            "A condition of a delay, throttle or batch step: rules over `data.…`, `recipient.…` and `actor.…`.",
        ),
    );
    schemas.insert(
        "StepCondition".into(),
        condition(
            "StepConditionRule",
            "A condition of a channel step: rules may also name `steps.<index>.status|read|seen|clicked|interacted` of an earlier channel step, and the recipient's presence, decided when the step is reached: `recipient.online` (`eq`/`neq` with a boolean) and `recipient.last_seen_at` (`lt`/`lte`/`gt`/`gte` with a relative duration such as `-7d`, or `exists`/`not_exists`).",
        ),
    );
    for (schema, cond) in [
        ("DelayStep", "Condition"),
        ("ThrottleStep", "Condition"),
        ("BatchStep", "Condition"),
        ("ChannelStep", "StepCondition"),
        ("ChannelStepInput", "StepCondition"),
        ("RouteStep", "StepCondition"),
        ("RouteChannel", "StepCondition"),
    ] {
        if let Some(Value::Object(props)) = schemas
            .get_mut(schema)
            .and_then(|s| s.get_mut("properties"))
        {
            let description = props.get("if").and_then(|p| p.get("description")).cloned();
            props.insert("if".into(), nullable(cond, description.as_ref()));
        }
    }
    schemas.insert("SendWindow".into(), send_window());
    for schema in ["ChannelStep", "ChannelStepInput"] {
        if let Some(Value::Object(props)) = schemas
            .get_mut(schema)
            .and_then(|s| s.get_mut("properties"))
        {
            let description = props
                .get("send_window")
                .and_then(|p| p.get("description"))
                .cloned();
            props.insert(
                "send_window".into(),
                nullable("SendWindow", description.as_ref()),
            );
        }
    }
    schemas.insert("QuietHours".into(), quiet_hours());
    for schema in ["Preferences", "PreferencesInput"] {
        if let Some(Value::Object(props)) = schemas
            .get_mut(schema)
            .and_then(|s| s.get_mut("properties"))
        {
            let description = props
                .get("quiet_hours")
                .and_then(|p| p.get("description"))
                .cloned();
            props.insert(
                "quiet_hours".into(),
                nullable("QuietHours", description.as_ref()),
            );
        }
    }
    for schema in ["WebhookEndpointInput", "WebhookEndpointUpdate"] {
        if let Some(props) = schemas
            .get_mut(schema)
            .and_then(|s| s.get_mut("properties"))
            .and_then(Value::as_object_mut)
        {
            props.insert("event_types".into(), event_types());
        }
    }
    for (schema, prop, pattern) in PATTERNS {
        if let Some(Value::Object(p)) = schemas
            .get_mut(*schema)
            .and_then(|s| s.pointer_mut(&format!("/properties/{prop}")))
        {
            p.insert("pattern".into(), Value::String((*pattern).into()));
        }
    }
    if let Some(Value::Object(clock)) = schemas.get_mut("ClockAdvance") {
        // null counts as absent: one of the two is a string, the other absent or null
        clock.insert(
            "oneOf".into(),
            json!([
                {"required": ["by"], "properties": {"by": {"type": "string"}, "to": {"type": "null"}}},
                {"required": ["to"], "properties": {"to": {"type": "string"}, "by": {"type": "null"}}}
            ]),
        );
    }
}
