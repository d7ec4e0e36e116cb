//! Presence in step conditions: the two recipient paths a condition may name
//! that are facts of the moment, not of the user's record —
//! `recipient.online` (a live-feed socket is open on some node) and
//! `recipient.last_seen_at` (the last time the user had a socket open or
//! called the User API) — the relative durations `last_seen_at` is compared
//! with (`-7d`: before now minus seven days), and the facts a gate over them
//! is decided on (`DueFacts`).
//!
//! Both are decided when the step is reached, never at staging: a user opens
//! and closes the app between a run's acceptance and its later steps, and
//! the point of such a rule ("no email while the user is in the app") is the
//! moment of sending.

use super::Timestamp;
use serde_json::Value;

/// `recipient.online`: whether the user has a live-feed socket open now.
pub const ONLINE: &str = "recipient.online";
/// `recipient.last_seen_at`: when the user was last seen.
pub const LAST_SEEN_AT: &str = "recipient.last_seen_at";

/// The longest relative duration (ten years): past it a comparison means
/// nothing a project could want, and the arithmetic stays far from overflow.
pub const MAX_RELATIVE_MS: i64 = 3650 * DAY_MS;

const MINUTE_MS: i64 = 60_000;
const HOUR_MS: i64 = 60 * MINUTE_MS;
const DAY_MS: i64 = 24 * HOUR_MS;

/// Whether `path` is one of the presence paths.
pub fn is_presence_path(path: &str) -> bool {
    path == ONLINE || path == LAST_SEEN_AT
}

/// What is known of a user's presence when a step is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Presence {
    /// A live-feed socket of the user is open on a node that is alive.
    pub online: bool,
    /// When the user was last seen, in project time; `None`: never.
    pub last_seen_at: Option<Timestamp>,
}

/// The facts a gate over presence is decided on: the recipient's presence
/// and the project's time then (a test clock's, when it has one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DueFacts {
    pub presence: Presence,
    pub now: Timestamp,
}

impl DueFacts {
    /// The facts as the rules see them (`recipient` in the gate's context)
    /// and as the decision trace shows them.
    pub fn recipient_json(&self) -> Value {
        serde_json::json!({
            "online": self.presence.online,
            "last_seen_at": self.presence.last_seen_at.map(|t| t.millis()),
        })
    }

    /// The facts for the trace: `last_seen_at` as an RFC 3339 time.
    pub fn trace_json(&self) -> Value {
        serde_json::json!({
            "online": self.presence.online,
            "last_seen_at": self.presence.last_seen_at.map(|t| t.to_rfc3339()),
        })
    }
}

/// Reads a relative duration into milliseconds (negative: in the past).
///
/// The grammar: a minus sign, a whole number from 1 without sign or
/// leading zero, and a unit, `m` (minutes), `h` (hours), `d` (days) or `w`
/// (weeks): `-30m`, `-12h`, `-7d`, `-2w`; at most ten years. Only the past
/// can be named: a user is never seen in the future.
pub fn parse_relative(s: &str) -> Option<i64> {
    let rest = s.strip_prefix('-')?;
    let unit = rest.chars().last()?;
    let digits = &rest[..rest.len() - unit.len_utf8()];
    if digits.is_empty()
        || digits.len() > 7
        || digits.starts_with('0')
        || !digits.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let n: i64 = digits.parse().ok()?;
    let unit_ms = match unit {
        'm' => MINUTE_MS,
        'h' => HOUR_MS,
        'd' => DAY_MS,
        'w' => 7 * DAY_MS,
        _ => return None,
    };
    let ms = n.checked_mul(unit_ms)?;
    (ms <= MAX_RELATIVE_MS).then_some(-ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_durations_follow_the_grammar() {
        assert_eq!(parse_relative("-30m"), Some(-30 * MINUTE_MS));
        assert_eq!(parse_relative("-12h"), Some(-12 * HOUR_MS));
        assert_eq!(parse_relative("-7d"), Some(-7 * DAY_MS));
        assert_eq!(parse_relative("-2w"), Some(-14 * DAY_MS));
        assert_eq!(parse_relative("-3650d"), Some(-MAX_RELATIVE_MS));
        for bad in [
            "",
            "-",
            "7d",
            "+7d",
            "-7",
            "-d",
            "-0d",
            "-07d",
            "-7s",
            "-7D",
            "-1.5d",
            "- 7d",
            "-7dd",
            "-3651d",
            "-99999999d",
            "-7é",
        ] {
            assert_eq!(parse_relative(bad), None, "{bad:?}");
        }
    }
}
