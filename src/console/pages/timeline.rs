//! A notification's decision trace as a timeline: each entry's code said in
//! words (why it was sent, skipped, retried, throttled, batched, a route's
//! hops, a failover), with the kind of decision it is, so the page can mark
//! it. The codes are an enum matched exhaustively, and a test holds the
//! enum to every code the API documents and the store knows, so a new code
//! cannot go without words.

use herald_engine::trace::TraceEntry;
use serde::Serialize;
use serde_json::{Map, Value};

/// What kind of decision an entry is (the timeline's marker).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The run and its recipient: how the notification came to be.
    Start,
    /// A step went ahead (rendered, allowed, passed).
    Went,
    /// Something went out.
    Sent,
    /// A step was not sent, on purpose.
    Skipped,
    /// Something waits (a delay, a window, a schedule).
    Waited,
    Retried,
    Throttled,
    Batched,
    /// A route step's channels.
    Route,
    Failover,
    Failed,
    /// A note (a provider's report, a missing translation).
    Note,
}

impl Kind {
    /// The marker's word on the page.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Start => "start",
            Kind::Went => "ahead",
            Kind::Sent => "sent",
            Kind::Skipped => "skipped",
            Kind::Waited => "waits",
            Kind::Retried => "retry",
            Kind::Throttled => "throttled",
            Kind::Batched => "batched",
            Kind::Route => "route",
            Kind::Failover => "failover",
            Kind::Failed => "failed",
            Kind::Note => "note",
        }
    }
}

macro_rules! codes {
    ($($variant:ident => $name:literal,)*) => {
        /// Every trace code Herald writes (docs/API.md, the decision trace).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Code { $($variant,)* }

        impl Code {
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $name,)* }
            }

            pub fn parse(s: &str) -> Option<Code> {
                match s { $($name => Some(Code::$variant),)* _ => None }
            }
        }
    };
}

codes! {
    FlowReached => "flow.reached",
    RecipientResolved => "recipient.resolved",
    StepReached => "step.reached",
    TemplateRendered => "template.rendered",
    TemplateFailed => "template.failed",
    ChannelMissing => "channel.missing",
    PreferenceAllowed => "preference.allowed",
    PreferenceSkipped => "preference.skipped",
    PreferenceIgnored => "preference.ignored",
    Attempt => "attempt",
    RetryScheduled => "retry.scheduled",
    SubscriptionRemoved => "subscription.removed",
    DeliveryFinal => "delivery.final",
    DeliveryFailover => "delivery.failover",
    NotificationProcessed => "notification.processed",
    RunScheduled => "run.scheduled",
    ConditionEvaluated => "condition.evaluated",
    ThrottlePassed => "throttle.passed",
    ThrottleLimited => "throttle.limited",
    DelayWaited => "delay.waited",
    SendWindowWaited => "send_window.waited",
    QuietHoursWaited => "quiet_hours.waited",
    DeliveryCanceled => "delivery.canceled",
    BatchOpened => "batch.opened",
    BatchJoined => "batch.joined",
    BatchClosed => "batch.closed",
    RouteHop => "route.hop",
    RouteSatisfied => "route.satisfied",
    TranslationMissing => "translation_missing",
    DeliveryFeedback => "delivery.feedback",
}

/// An argument as text (`-` when absent).
fn arg(args: &Map<String, Value>, k: &str) -> String {
    match args.get(k) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => "-".to_string(),
        Some(v) => v.to_string(),
    }
}

/// The kind of an entry and its headline in words.
pub fn words(code: Code, args: &Map<String, Value>) -> (Kind, String) {
    let a = |k: &str| arg(args, k);
    // Counted from 1, as the flow editor numbers its steps (the `step`
    // argument, shown as is among the arguments, counts from 0).
    let step = || match args.get("step").and_then(Value::as_u64) {
        Some(n) => format!("Step {}", n + 1),
        None => format!("Step {}", a("step")),
    };
    match code {
        Code::FlowReached => (
            Kind::Start,
            format!("The run reached flow “{}”", a("flow_handle")),
        ),
        Code::RecipientResolved => (
            Kind::Start,
            format!("Recipient {} was resolved", a("external_id")),
        ),
        Code::StepReached => (
            Kind::Went,
            format!("{}: its {} channel was reached", step(), a("channel_type")),
        ),
        Code::TemplateRendered => (Kind::Went, format!("{}: the template rendered", step())),
        Code::TemplateFailed => (
            Kind::Failed,
            format!("{}: not sent, the template failed: {}", step(), a("error")),
        ),
        Code::ChannelMissing => (
            Kind::Failed,
            format!("{}: not sent, its channel no longer exists", step()),
        ),
        Code::PreferenceAllowed => (
            Kind::Went,
            format!(
                "{}: sent because the recipient's preferences allow {} (setting “{}”)",
                step(),
                a("channel_type"),
                a("key")
            ),
        ),
        Code::PreferenceSkipped => (
            Kind::Skipped,
            format!(
                "{}: skipped because the recipient turned {} off (setting “{}”)",
                step(),
                a("channel_type"),
                a("key")
            ),
        ),
        Code::PreferenceIgnored => (
            Kind::Went,
            format!(
                "{}: sent whatever the preferences say: the flow is {}",
                step(),
                a("reason")
            ),
        ),
        Code::Attempt => {
            let via = match args.get("provider") {
                Some(Value::String(p)) => format!(" via {p}"),
                _ => String::new(),
            };
            let n = a("attempt");
            match a("result").as_str() {
                "sent" => (Kind::Sent, format!("{}: attempt {n} sent{via}", step())),
                "retry" => (
                    Kind::Retried,
                    format!("{}: attempt {n} failed{via} and will be retried", step()),
                ),
                "failover" => (
                    Kind::Failover,
                    format!(
                        "{}: attempt {n} failed{via}; moving to a backup channel",
                        step()
                    ),
                ),
                "skipped" => (
                    Kind::Skipped,
                    format!("{}: attempt {n} skipped{via}", step()),
                ),
                _ => (Kind::Failed, format!("{}: attempt {n} failed{via}", step())),
            }
        }
        Code::RetryScheduled => (Kind::Retried, format!("{}: retried at {}", step(), a("at"))),
        Code::SubscriptionRemoved => (
            Kind::Note,
            format!(
                "{}: {} expired push subscription(s) removed",
                step(),
                a("count")
            ),
        ),
        Code::DeliveryFinal => {
            let status = a("status");
            let kind = match status.as_str() {
                "sent" | "delivered" => Kind::Sent,
                "skipped" | "canceled" => Kind::Skipped,
                _ => Kind::Failed,
            };
            (
                kind,
                format!(
                    "{}: the delivery ended {} after {} attempt(s)",
                    step(),
                    status,
                    a("attempts")
                ),
            )
        }
        Code::DeliveryFailover => (
            Kind::Failover,
            format!(
                "{}: failed over from channel {} to its backup {} ({})",
                step(),
                a("from"),
                a("to"),
                a("reason")
            ),
        ),
        Code::NotificationProcessed => (
            Kind::Note,
            "Every delivery is final: the notification is processed".to_string(),
        ),
        Code::RunScheduled => (
            Kind::Waited,
            format!("The run was scheduled to start at {}", a("send_at")),
        ),
        Code::ConditionEvaluated => match args.get("result") {
            Some(Value::Bool(true)) => (
                Kind::Went,
                format!("{}: its condition was true, so the step runs", step()),
            ),
            _ => (
                Kind::Skipped,
                format!("{}: skipped because its condition was false", step()),
            ),
        },
        Code::ThrottlePassed => (
            Kind::Went,
            format!(
                "{}: passed the throttle ({} of {} in {})",
                step(),
                a("count"),
                a("limit"),
                a("window")
            ),
        ),
        Code::ThrottleLimited => (
            Kind::Throttled,
            format!(
                "{}: throttled ({} of {} in {} already); later steps not run",
                step(),
                a("count"),
                a("limit"),
                a("window")
            ),
        ),
        Code::DelayWaited => (
            Kind::Waited,
            format!(
                "{}: a delay of {} s; later steps wait until {}",
                step(),
                a("seconds"),
                a("until")
            ),
        ),
        Code::SendWindowWaited => (
            Kind::Waited,
            format!(
                "{}: outside its send window, waits until {}",
                step(),
                a("until")
            ),
        ),
        Code::QuietHoursWaited => (
            Kind::Waited,
            format!(
                "{}: held by the recipient's quiet hours until {}",
                step(),
                a("until")
            ),
        ),
        Code::DeliveryCanceled => (
            Kind::Skipped,
            format!(
                "{}: canceled by cancellation key “{}”",
                step(),
                a("cancellation_key")
            ),
        ),
        Code::BatchOpened => (
            Kind::Batched,
            format!("{}: opened a batch, closing at {}", step(), a("closes_at")),
        ),
        Code::BatchJoined => (
            Kind::Batched,
            format!(
                "{}: joined the batch of notification {} ({} activities); ends here",
                step(),
                a("batched_into"),
                a("count")
            ),
        ),
        Code::BatchClosed => (
            Kind::Batched,
            format!(
                "{}: the batch closed ({}) with {} activities",
                step(),
                a("reason"),
                a("count")
            ),
        ),
        Code::RouteHop => (
            Kind::Route,
            format!(
                "{}: route hop {} to {} {} ({}, because {})",
                step(),
                a("hop"),
                a("channel_type"),
                a("channel_id"),
                a("result"),
                a("reason")
            ),
        ),
        Code::RouteSatisfied => (
            Kind::Skipped,
            format!(
                "{}: route hop {} not needed: {}",
                step(),
                a("hop"),
                a("reason")
            ),
        ),
        Code::TranslationMissing => (
            Kind::Note,
            format!(
                "{}: no catalog has the message “{}” (the key was used)",
                step(),
                a("key")
            ),
        ),
        Code::DeliveryFeedback => {
            let kind = match a("report").as_str() {
                "delivered" => Kind::Sent,
                _ => Kind::Failed,
            };
            (
                kind,
                format!(
                    "{}: {} reported the message {}; the delivery is {}",
                    step(),
                    a("provider"),
                    a("report"),
                    a("status")
                ),
            )
        }
    }
}

/// One entry of the timeline as the page shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Item {
    pub at: String,
    /// Project time, on a test clock.
    pub project_at: Option<String>,
    pub code: String,
    pub kind: Kind,
    /// The kind's word (`Kind::label`).
    pub label: &'static str,
    pub headline: String,
    /// The engine's sentence (`TraceEntry::message`).
    pub message: String,
    /// The arguments, each as text.
    pub args: Vec<(String, String)>,
}

/// The timeline of a trace, in order. A code this console does not know
/// (a newer server's) is shown as a note with the engine's sentence.
pub fn timeline(entries: &[TraceEntry]) -> Vec<Item> {
    entries
        .iter()
        .map(|e| {
            let (kind, headline) = match Code::parse(&e.code) {
                Some(c) => words(c, &e.args),
                None => (Kind::Note, e.message()),
            };
            Item {
                at: e.at.to_rfc3339(),
                project_at: e.project_at.map(|t| t.to_rfc3339()),
                code: e.code.clone(),
                kind,
                label: kind.label(),
                headline,
                message: e.message(),
                args: e
                    .args
                    .keys()
                    .map(|k| (k.clone(), arg(&e.args, k)))
                    .collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The codes of docs/API.md's trace table (rows "| `code` | args |").
    fn documented() -> Vec<String> {
        let doc = include_str!("../../../docs/API.md");
        let table = doc
            .split("| code | args | meaning |")
            .nth(1)
            .expect("the trace table");
        table
            .lines()
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .filter_map(|l| l.strip_prefix("| `")?.split('`').next().map(String::from))
            .collect()
    }

    /// The codes the store's compact encoding knows.
    fn stored() -> Vec<String> {
        let src = include_str!("../../../actors/src/store/trace_codec.rs");
        let list = src
            .split("const CODES: &[&str] = &[")
            .nth(1)
            .expect("CODES");
        let list = list.split("];").next().expect("its end");
        list.lines()
            .filter_map(|l| {
                l.trim()
                    .strip_prefix('"')?
                    .split('"')
                    .next()
                    .map(String::from)
            })
            .collect()
    }

    #[test]
    fn every_code_has_words() {
        let doc = documented();
        assert!(doc.len() >= 25, "the table was found: {doc:?}");
        for c in doc.iter().chain(&stored()) {
            let code = Code::parse(c).unwrap_or_else(|| panic!("no words for {c}"));
            assert_eq!(code.as_str(), c);
        }
        for c in Code::ALL {
            assert!(
                doc.iter().any(|d| d == c.as_str()),
                "{} is not documented",
                c.as_str()
            );
            let (_, w) = words(*c, &Map::new());
            assert!(!w.is_empty());
        }
    }

    #[test]
    fn why_in_words() {
        let args = |v: Value| v.as_object().cloned().unwrap();
        let (k, w) = words(
            Code::PreferenceSkipped,
            &args(serde_json::json!({"step": 1, "channel_type": "email", "key": "flow"})),
        );
        assert_eq!(k, Kind::Skipped);
        assert!(w.contains("turned email off"), "{w}");
        assert!(w.starts_with("Step 2:"), "{w}");
        let (k, _) = words(Code::Attempt, &args(serde_json::json!({"result": "retry"})));
        assert_eq!(k, Kind::Retried);
        let (k, _) = words(
            Code::ConditionEvaluated,
            &args(serde_json::json!({"result": true})),
        );
        assert_eq!(k, Kind::Went);
        let (k, _) = words(Code::ThrottleLimited, &Map::new());
        assert_eq!(k, Kind::Throttled);
    }

    #[test]
    fn an_unknown_code_is_a_note() {
        let e = herald_engine::trace::entry(
            herald_engine::model::Timestamp::from_millis(0),
            "some.future_code",
            serde_json::json!({}),
        );
        let t = timeline(&[e]);
        assert_eq!(t[0].kind, Kind::Note);
        assert_eq!(t[0].headline, "some.future_code");
    }
}
