//! Send windows on channel steps (`"send_window": {"days": ["mon", …],
//! "from": "09:00", "to": "18:00"}`), in the recipient's timezone (the
//! project's default timezone when the recipient has none, else UTC). A window whose `to` is not after its `from`
//! runs across midnight: it opens on a listed day at `from` and closes the
//! next day at `to`.
//!
//! A delivery that the run reaches outside its step's window is due when the
//! window next opens; the run's later steps count on from there. This is
//! decided while the run is staged (the instant it reaches the step is known
//! then), so the wait is an ordinary due time in the queue: durable, resumed
//! after a restart, and on a test clock moved by advancing it.
//!
//! Local times go through chrono-tz: a `from` that falls in a DST gap opens
//! at the first local time after the gap, and one that occurs twice opens at
//! the earlier.
//!
//! Quiet hours (`rules::quiet_hours`) are a span of the same shape, read by
//! `SendWindow::parse_fields` and placed by `SendWindow::closes_after`.

use crate::error::Validator;
use chrono::{Datelike, Duration, LocalResult, NaiveDate, NaiveDateTime, NaiveTime, TimeZone};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A step's send window: the weekdays it opens on (0 = Monday) and its
/// local opening and closing times, in minutes after midnight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SendWindow {
    pub days: Vec<u8>,
    pub from: u16,
    pub to: u16,
}

/// The weekdays as the API writes them, Monday first.
pub const DAYS: [&str; 7] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

pub(crate) fn hhmm(s: &str) -> Option<u16> {
    use chrono::Timelike;
    let t = NaiveTime::parse_from_str(s, "%H:%M").ok()?;
    Some((t.hour() * 60 + t.minute()) as u16)
}

pub(crate) fn show(minutes: u16) -> String {
    format!("{:02}:{:02}", minutes / 60, minutes % 60)
}

impl SendWindow {
    /// Reads `send_window` at path `p` (`p.send_window`).
    pub fn parse(given: &Value, p: &str, v: &mut Validator) -> Option<SendWindow> {
        let at = format!("{p}.send_window");
        let Some(m) = given.as_object() else {
            v.push(at, "format", "must be an object with days, from and to");
            return None;
        };
        let before = v.fields.len();
        let w = SendWindow::parse_fields(m, &at, v);
        for k in m.keys() {
            if !["days", "from", "to"].contains(&k.as_str()) {
                v.push(format!("{at}.{k}"), "exclusion", "not a send window field");
            }
        }
        w.filter(|_| v.fields.len() == before)
    }

    /// Reads the `days`, `from` and `to` of object `m` at path `at` (other
    /// keys are the caller's): the span, when they have no problem. Quiet
    /// hours (`rules::quiet_hours`) share it.
    pub fn parse_fields(m: &Map<String, Value>, at: &str, v: &mut Validator) -> Option<SendWindow> {
        let before = v.fields.len();
        let days: Vec<u8> = match m.get("days") {
            None | Some(Value::Null) => (0..7).collect(),
            Some(Value::Array(a)) if !a.is_empty() => {
                let mut out = vec![];
                for (i, d) in a.iter().enumerate() {
                    match d.as_str().and_then(|d| DAYS.iter().position(|x| *x == d)) {
                        Some(n) if !out.contains(&(n as u8)) => out.push(n as u8),
                        Some(_) => {}
                        None => v.push(
                            format!("{at}.days.{i}"),
                            "inclusion",
                            "one of mon, tue, wed, thu, fri, sat, sun",
                        ),
                    }
                }
                out
            }
            Some(_) => {
                v.push(
                    format!("{at}.days"),
                    "format",
                    "must be a non-empty array of weekdays",
                );
                vec![]
            }
        };
        let mut time = |k: &str| match m.get(k) {
            Some(Value::String(s)) => hhmm(s).or_else(|| {
                v.push(format!("{at}.{k}"), "format", "must be a time HH:MM");
                None
            }),
            None | Some(Value::Null) => {
                v.push(format!("{at}.{k}"), "required", "is required");
                None
            }
            Some(_) => {
                v.push(format!("{at}.{k}"), "format", "must be a time HH:MM");
                None
            }
        };
        let from = time("from");
        let to = time("to");
        if let (Some(f), Some(t)) = (from, to) {
            if f == t {
                v.push(format!("{at}.to"), "exclusion", "must differ from from");
            }
        }
        (v.fields.len() == before).then(|| SendWindow {
            days,
            from: from.unwrap_or(0),
            to: to.unwrap_or(0),
        })
    }

    /// The window as the API shows it.
    pub fn view(&self) -> Value {
        serde_json::json!({
            "days": self.days.iter().map(|d| DAYS[*d as usize]).collect::<Vec<_>>(),
            "from": show(self.from),
            "to": show(self.to),
        })
    }

    /// The first instant (ms) at or after `at_ms` inside the window, in `tz`.
    pub fn next_open(&self, at_ms: i64, tz: Tz) -> i64 {
        let mut best: Option<i64> = None;
        for (open, close) in self.occurrences(at_ms, tz) {
            if open <= at_ms && at_ms < close {
                return at_ms;
            }
            if open > at_ms && best.is_none_or(|b| open < b) {
                best = Some(open);
            }
        }
        best.unwrap_or(at_ms)
    }

    /// When the occurrence of the window that `at_ms` falls in closes, in
    /// `tz`; `None` when `at_ms` is outside the window.
    pub fn closes_after(&self, at_ms: i64, tz: Tz) -> Option<i64> {
        self.occurrences(at_ms, tz)
            .find(|(open, close)| *open <= at_ms && at_ms < *close)
            .map(|(_, close)| close)
    }

    /// The window's occurrences (opening and closing instants) from the day
    /// before `at_ms` to eight days after it, in `tz`: yesterday's may still
    /// be open, and a week ahead always holds one.
    fn occurrences(&self, at_ms: i64, tz: Tz) -> impl Iterator<Item = (i64, i64)> + '_ {
        let today = chrono::DateTime::from_timestamp_millis(at_ms)
            .map(|at| at.with_timezone(&tz).date_naive());
        (-1..=8).filter_map(move |offset| {
            let day = today? + Duration::days(offset);
            if !self
                .days
                .contains(&(day.weekday().num_days_from_monday() as u8))
            {
                return None;
            }
            let open = local_ms(tz, day, self.from);
            let close_day = if self.to > self.from {
                day
            } else {
                day + Duration::days(1)
            };
            Some((open, local_ms(tz, close_day, self.to)))
        })
    }
}

/// The instant of local time `minutes` after midnight on `day` in `tz`: the
/// earlier of two, or the first after a gap.
fn local_ms(tz: Tz, day: NaiveDate, minutes: u16) -> i64 {
    let mut local = NaiveDateTime::new(
        day,
        NaiveTime::from_hms_opt((minutes / 60) as u32, (minutes % 60) as u32, 0)
            .unwrap_or_default(),
    );
    // A DST gap is at most a few hours: step forward until a local time exists.
    for _ in 0..(24 * 4) {
        match tz.from_local_datetime(&local) {
            LocalResult::Single(t) => return t.timestamp_millis(),
            LocalResult::Ambiguous(a, _) => return a.timestamp_millis(),
            LocalResult::None => local += Duration::minutes(15),
        }
    }
    local.and_utc().timestamp_millis()
}

/// A recipient's timezone (or the project's default), UTC when none or
/// not known.
pub fn timezone(name: Option<&str>) -> Tz {
    name.and_then(|n| n.parse::<Tz>().ok()).unwrap_or(Tz::UTC)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(s: &str) -> i64 {
        chrono::DateTime::parse_from_rfc3339(s)
            .unwrap()
            .timestamp_millis()
    }

    #[test]
    fn opens_next_across_midnight_and_a_dst_change() {
        let ny: Tz = "America/New_York".parse().unwrap();
        let night = SendWindow {
            days: (0..7).collect(),
            from: 22 * 60,
            to: 6 * 60,
        };
        // Saturday noon EST: opens at 22:00 EST
        assert_eq!(
            night.next_open(ms("2027-03-13T12:00:00-05:00"), ny),
            ms("2027-03-13T22:00:00-05:00")
        );
        // Sunday 04:30 EDT (after the change at 02:00): inside Saturday's window
        let inside = ms("2027-03-14T04:30:00-04:00");
        assert_eq!(night.next_open(inside, ny), inside);
        // Sunday 07:00 EDT: Sunday 22:00 EDT
        assert_eq!(
            night.next_open(ms("2027-03-14T07:00:00-04:00"), ny),
            ms("2027-03-14T22:00:00-04:00")
        );
        // weekdays only, from Saturday: Monday 09:00 (now EDT)
        let office = SendWindow {
            days: (0..5).collect(),
            from: 9 * 60,
            to: 18 * 60,
        };
        assert_eq!(
            office.next_open(ms("2027-03-13T10:00:00-05:00"), ny),
            ms("2027-03-15T09:00:00-04:00")
        );
        // 02:30 does not exist on the change day: the first time after it
        let gap = SendWindow {
            days: vec![6],
            from: 2 * 60 + 30,
            to: 4 * 60,
        };
        assert_eq!(
            gap.next_open(ms("2027-03-14T00:00:00-05:00"), ny),
            ms("2027-03-14T03:00:00-04:00")
        );
    }
}
