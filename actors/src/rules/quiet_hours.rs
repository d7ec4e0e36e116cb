//! Quiet hours: a recipient's do-not-disturb times, a preference
//! (`quiet_hours: {"from": "22:00", "to": "07:30", "days": [...]?,
//! "timezone"?: ...}`, docs/API.md §6). A channel delivery other than in_app
//! whose due instant falls inside them waits until they end; a critical
//! flow's does not (which deliveries they hold is
//! `rules::critical::quiet_hours_end`, beside `opt_outs_apply`). Staging
//! decides it (`delivery::accept`), as it decides send windows, so the wait
//! is an ordinary due time in the queue; unlike a send window it moves only
//! the one delivery, not the run's later steps.
//!
//! The span is a send window's (`delivery::window::SendWindow`: weekdays,
//! local `from` and `to`, across midnight when `to` is not after `from`, DST
//! gaps and repeats as it treats them), so both read and place local times
//! the same way. The timezone is the quiet hours' own, else the recipient's,
//! else the project's, else UTC.

use crate::delivery::window::{self, SendWindow, DAYS};
use crate::error::Validator;
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// A recipient's quiet hours as stored in their preferences.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuietHours {
    /// When they start and end, on which weekdays (their start's).
    pub span: SendWindow,
    /// An IANA time zone; `None`: the recipient's (then the project's, then UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
}

/// The keys a quiet hours object may have.
const FIELDS: [&str; 4] = ["days", "from", "to", "timezone"];

impl QuietHours {
    /// Reads a quiet hours object at path `at` (`quiet_hours`), every
    /// problem in `v` at its path: `format` for a value of the wrong kind,
    /// `required` for a missing `from` or `to`, `inclusion` for an unknown
    /// weekday or time zone, `exclusion` for `to` equal to `from` or a key
    /// that is no field. `None` when there is any.
    pub fn parse(given: &Value, at: &str, v: &mut Validator) -> Option<QuietHours> {
        let Some(m) = given.as_object() else {
            v.push(at, "format", "must be an object with from and to, or null");
            return None;
        };
        let before = v.fields.len();
        let span = SendWindow::parse_fields(m, at, v);
        let timezone = match m.get("timezone") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.parse::<Tz>().is_ok() => Some(s.clone()),
            Some(Value::String(_)) => {
                v.push(format!("{at}.timezone"), "inclusion", "an IANA time zone");
                None
            }
            Some(_) => {
                v.push(format!("{at}.timezone"), "format", "must be a string");
                None
            }
        };
        for k in m.keys() {
            if !FIELDS.contains(&k.as_str()) {
                v.push(format!("{at}.{k}"), "exclusion", "not a quiet hours field");
            }
        }
        let span = span.filter(|_| v.fields.len() == before)?;
        Some(QuietHours { span, timezone })
    }

    /// The quiet hours as the API shows them (every field; `timezone` null
    /// when they follow the recipient's).
    pub fn view(&self) -> Value {
        json!({
            "days": self.span.days.iter().map(|d| DAYS[*d as usize]).collect::<Vec<_>>(),
            "from": window::show(self.span.from),
            "to": window::show(self.span.to),
            "timezone": self.timezone,
        })
    }

    /// The timezone they are kept in: their own, else `fallback` (the
    /// recipient's, else the project's), else UTC.
    pub fn timezone(&self, fallback: Option<&str>) -> Tz {
        window::timezone(self.timezone.as_deref().or(fallback))
    }

    /// When a delivery due at `at_ms` may go out: `None` when `at_ms` is
    /// outside the quiet hours (in `tz`), else the instant they end.
    pub fn release_at(&self, at_ms: i64, tz: Tz) -> Option<i64> {
        let mut end = at_ms;
        // One occurrence ends before the next starts (`to` differs from
        // `from`), but a DST change can make two touch: follow them, a few
        // at most.
        for _ in 0..4 {
            match self.span.closes_after(end, tz) {
                Some(close) if close > end => end = close,
                _ => break,
            }
        }
        (end > at_ms).then_some(end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(s: &str) -> i64 {
        chrono::DateTime::parse_from_rfc3339(s)
            .unwrap()
            .timestamp_millis()
    }

    fn quiet(v: Value) -> QuietHours {
        let mut val = Validator::new();
        let q = QuietHours::parse(&v, "quiet_hours", &mut val);
        assert!(val.fields.is_empty(), "{:?}", val.fields);
        q.unwrap()
    }

    fn problems(v: Value) -> Vec<(String, &'static str)> {
        let mut val = Validator::new();
        assert!(QuietHours::parse(&v, "quiet_hours", &mut val).is_none());
        val.fields
            .into_iter()
            .map(|f| (f.field, f.reason))
            .collect()
    }

    #[test]
    fn quiet_hours_across_midnight_hold_until_the_next_morning() {
        let q = quiet(json!({"from": "22:00", "to": "07:30"}));
        let utc = q.timezone(None);
        // 23:00: until 07:30 the next day
        assert_eq!(
            q.release_at(ms("2027-01-05T23:00:00Z"), utc),
            Some(ms("2027-01-06T07:30:00Z"))
        );
        // 03:00: the night that began yesterday, until 07:30 today
        assert_eq!(
            q.release_at(ms("2027-01-06T03:00:00Z"), utc),
            Some(ms("2027-01-06T07:30:00Z"))
        );
        // the edges: 22:00 is inside, 07:30 and noon outside
        assert_eq!(
            q.release_at(ms("2027-01-05T22:00:00Z"), utc),
            Some(ms("2027-01-06T07:30:00Z"))
        );
        assert_eq!(q.release_at(ms("2027-01-06T07:30:00Z"), utc), None);
        assert_eq!(q.release_at(ms("2027-01-06T12:00:00Z"), utc), None);
    }

    #[test]
    fn quiet_hours_within_a_day_and_only_on_their_days() {
        // 2027-01-04 is a Monday
        let q = quiet(json!({"from": "12:00", "to": "14:00", "days": ["mon", "wed"]}));
        let utc = q.timezone(None);
        assert_eq!(
            q.release_at(ms("2027-01-04T13:00:00Z"), utc),
            Some(ms("2027-01-04T14:00:00Z"))
        );
        assert_eq!(q.release_at(ms("2027-01-05T13:00:00Z"), utc), None, "tue");
        // a night listed on Friday goes on into Saturday morning, not a
        // Saturday night
        let fri = quiet(json!({"from": "22:00", "to": "08:00", "days": ["fri"]}));
        assert_eq!(
            fri.release_at(ms("2027-01-09T06:00:00Z"), utc),
            Some(ms("2027-01-09T08:00:00Z"))
        );
        assert_eq!(fri.release_at(ms("2027-01-09T23:00:00Z"), utc), None);
    }

    #[test]
    fn quiet_hours_keep_their_timezone_then_the_fallback() {
        let own = quiet(json!({"from": "22:00", "to": "07:00", "timezone": "Asia/Tokyo"}));
        let tz = own.timezone(Some("Europe/Paris"));
        assert_eq!(tz, chrono_tz::Asia::Tokyo);
        // 23:00 in Tokyo is 14:00 UTC: held until 07:00 Tokyo (22:00 UTC)
        assert_eq!(
            own.release_at(ms("2027-01-05T14:00:00Z"), tz),
            Some(ms("2027-01-05T22:00:00Z"))
        );
        let theirs = quiet(json!({"from": "22:00", "to": "07:00"}));
        assert_eq!(
            theirs.timezone(Some("Europe/Paris")),
            chrono_tz::Europe::Paris
        );
        assert_eq!(theirs.timezone(Some("Nowhere/City")), Tz::UTC);
        assert_eq!(theirs.timezone(None), Tz::UTC);
    }

    #[test]
    fn quiet_hours_across_a_dst_change() {
        let ny: Tz = "America/New_York".parse().unwrap();
        // ends at 02:30, which does not exist on 2027-03-14: the first local
        // time after the gap, 03:00 EDT
        let q = quiet(json!({"from": "23:00", "to": "02:30"}));
        assert_eq!(
            q.release_at(ms("2027-03-14T01:00:00-05:00"), ny),
            Some(ms("2027-03-14T03:00:00-04:00"))
        );
        // a night across the change: 22:00 EST to 07:30 EDT
        let night = quiet(json!({"from": "22:00", "to": "07:30"}));
        assert_eq!(
            night.release_at(ms("2027-03-13T23:00:00-05:00"), ny),
            Some(ms("2027-03-14T07:30:00-04:00"))
        );
    }

    #[test]
    fn every_problem_is_at_its_path() {
        assert_eq!(
            problems(json!({"from": "10pm", "days": ["mon", "someday"],
                "timezone": "Nowhere/City", "tz": "UTC"})),
            vec![
                ("quiet_hours.days.1".to_string(), "inclusion"),
                ("quiet_hours.from".to_string(), "format"),
                ("quiet_hours.to".to_string(), "required"),
                ("quiet_hours.timezone".to_string(), "inclusion"),
                ("quiet_hours.tz".to_string(), "exclusion"),
            ]
        );
        assert_eq!(
            problems(json!({"from": "22:00", "to": "22:00", "days": [], "timezone": 1})),
            vec![
                ("quiet_hours.days".to_string(), "format"),
                ("quiet_hours.to".to_string(), "exclusion"),
                ("quiet_hours.timezone".to_string(), "format"),
            ]
        );
        assert_eq!(
            problems(json!("22:00-07:00")),
            vec![("quiet_hours".to_string(), "format")]
        );
    }

    #[test]
    fn they_show_every_field_and_round_trip_through_storage() {
        let q = quiet(json!({"from": "22:00", "to": "07:30", "days": ["sun", "mon"]}));
        assert_eq!(
            q.view(),
            json!({"days": ["sun", "mon"], "from": "22:00", "to": "07:30", "timezone": null})
        );
        let tz = quiet(json!({"from": "22:00", "to": "07:30", "timezone": "Europe/Paris"}));
        assert_eq!(tz.view()["days"].as_array().unwrap().len(), 7);
        for q in [q, tz] {
            let stored = serde_json::to_vec(&q).unwrap();
            assert_eq!(serde_json::from_slice::<QuietHours>(&stored).unwrap(), q);
            let packed = rmp_serde::to_vec_named(&q).unwrap();
            assert_eq!(rmp_serde::from_slice::<QuietHours>(&packed).unwrap(), q);
        }
    }
}
