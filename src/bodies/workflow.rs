//! Bodies of the workflow controls: advancing a project's test clock and
//! cancelling a flow's runs by cancellation key.

use crate::extract::Given;
use herald_engine::delivery::clock::Span;
use herald_engine::model::Timestamp;
use herald_engine::Validator;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A `Span` as the document gives it: one to three terms of a whole number
/// (no leading zero) and a unit s, m, h or d, space-separated (`"90s"`,
/// `"1h 30m"`). The parser takes more spellings (humantime's units); this
/// is the part of them that is never zero nor beyond its 3650 days.
pub const SPAN_PATTERN: &str =
    "^([1-9][0-9]{0,3}[smh]|[1-9][0-9]{0,2}d)( ([1-9][0-9]{0,3}[smh]|[1-9][0-9]{0,2}d)){0,2}$";

/// An RFC 3339 date-time as `chrono::DateTime::parse_from_rfc3339` reads it,
/// beside `format: date-time` (generators do not keep to the format alone
/// for a nullable string).
pub const DATE_TIME_PATTERN: &str =
    "^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$";

/// Moves a test clock forward: exactly one of `by` and `to`.
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"by": "1h"}))]
pub struct ClockAdvance {
    /// A duration: `"90s"`, `"15m"`, `"1h"`, `"2d"`, `"1h 30m"`.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub by: Given<String>,
    /// An RFC 3339 instant, not before the clock's current time.
    #[serde(default)]
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub to: Given<String>,
}

impl ClockAdvance {
    /// The span or instant to advance by or to.
    pub fn validate(&self) -> herald_engine::Result<(Option<Span>, Option<Timestamp>)> {
        let mut v = Validator::new();
        let by = match &self.by {
            Given::Absent | Given::Null => None,
            Given::Value(s) => Span::field(s, "by", &mut v),
            Given::Wrong(_) => {
                v.push("by", "format", "must be a duration string");
                None
            }
        };
        let to = match &self.to {
            Given::Absent | Given::Null => None,
            Given::Value(s) => rfc3339(s, "to", &mut v),
            Given::Wrong(_) => {
                v.push("to", "format", "must be an RFC 3339 date-time");
                None
            }
        };
        let given = |g: &Given<String>| matches!(g, Given::Value(_) | Given::Wrong(_));
        match (given(&self.by), given(&self.to)) {
            (false, false) => v.push("by", "required", "give by (a duration) or to (an instant)"),
            (true, true) => v.push("to", "exclusion", "give by or to, not both"),
            _ => {}
        }
        v.finish()?;
        Ok((by, to))
    }
}

/// An RFC 3339 instant given at `field`.
pub fn rfc3339(s: &str, field: &str, v: &mut Validator) -> Option<Timestamp> {
    match chrono::DateTime::parse_from_rfc3339(s) {
        Ok(t) => Some(Timestamp::from_millis(t.timestamp_millis())),
        Err(_) => {
            v.push(field, "format", "must be an RFC 3339 date-time");
            None
        }
    }
}

/// Which runs of the flow to stop.
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"cancellation_key": "invoice-42", "recipients": ["ada"]}))]
pub struct CancelInput {
    /// The `cancellation_key` the runs were given.
    #[serde(default)]
    #[schema(value_type = String, required = true, min_length = 1, max_length = 255)]
    pub cancellation_key: Given<String>,
    /// Only these recipients' notifications (external ids); all when absent.
    #[serde(default)]
    #[schema(value_type = Option<Vec<String>>)]
    pub recipients: Given<Vec<String>>,
}

impl CancelInput {
    /// The key and the recipients named (`None`: every recipient).
    pub fn validate(&self) -> herald_engine::Result<(String, Option<Vec<String>>)> {
        let mut v = Validator::new();
        let key = self
            .cancellation_key
            .required_text("cancellation_key", 255, &mut v);
        let recipients = match &self.recipients {
            Given::Absent | Given::Null => None,
            Given::Value(r) => Some(r.clone()),
            Given::Wrong(_) => {
                v.push("recipients", "format", "must be an array of external ids");
                None
            }
        };
        v.finish()?;
        Ok((key.unwrap_or_default(), recipients))
    }
}

/// What a cancellation stopped.
#[derive(Serialize, ToSchema)]
pub struct CancelResult {
    /// Deliveries this call canceled (a repeat finds none left: 0).
    pub canceled: u64,
}
