//! How long a project keeps what it sent: the retention window (`Window`), a
//! project's own windows (`ProjectRetention`) and the server default they
//! fall back to (`--retention`, 90 days).
//!
//! The background purge (`actors::lifecycle`) removes, per project, the
//! notifications (with their deliveries) older than the notifications window
//! and the feed entries and live-feed events older than the feed window.

use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

const MINUTE_MS: i64 = 60_000;
const DAY_MS: i64 = 24 * 3600 * 1000;

/// The longest window accepted: 100 years, far beyond any use, and far from
/// any overflow of millisecond arithmetic.
const MAX_MS: i64 = 36_500 * DAY_MS;

/// The default window of every project: 90 days.
pub const DEFAULT_WINDOW_MS: i64 = 90 * DAY_MS;

/// Test-only: with `HERALD_RETENTION_TEST_SECONDS=1` in the environment,
/// windows may be given in seconds (`"5s"`) and be as short as one second, so
/// black-box tests of the purge need not wait minutes. Never set it in
/// production: a window shorter than a delivery's retries is pointless.
pub const TEST_SECONDS_ENV: &str = "HERALD_RETENTION_TEST_SECONDS";

fn seconds_allowed() -> bool {
    static ALLOWED: OnceLock<bool> = OnceLock::new();
    *ALLOWED.get_or_init(|| std::env::var(TEST_SECONDS_ENV).is_ok_and(|v| v == "1"))
}

/// A retention window: a whole number of minutes, hours or days, at least one
/// minute. Written `"15m"`, `"2h"`, `"90d"` (and `"30s"` only under
/// `TEST_SECONDS_ENV`); shown in the largest unit that divides it.
///
/// Parsed by hand rather than with `humantime`: that crate also accepts forms
/// such as `"1h 30m"` or `"1month"` that the API would then have to document
/// and keep accepting; four suffixes are all there is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Window(i64);

impl Window {
    /// Parses a window; the error says what is wrong, for a 422.
    pub fn parse(s: &str) -> Result<Window, String> {
        let t = s.trim();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let bad = || {
            format!(
                "{s:?} is not a duration: a number and a unit m, h or d (\"15m\", \"2h\", \"90d\")"
            )
        };
        let n: i64 = num.parse().map_err(|_| bad())?;
        let unit_ms = match unit {
            "m" => MINUTE_MS,
            "h" => 60 * MINUTE_MS,
            "d" => DAY_MS,
            "s" if seconds_allowed() => 1000,
            _ => return Err(bad()),
        };
        let ms = n
            .checked_mul(unit_ms)
            .filter(|ms| *ms <= MAX_MS)
            .ok_or_else(|| format!("{s:?} is too long: at most 36500d"))?;
        let min = if seconds_allowed() { 1000 } else { MINUTE_MS };
        if ms < min {
            return Err(format!("{s:?} is too short: at least 1m"));
        }
        Ok(Window(ms))
    }

    /// A window of `ms` milliseconds (clamped to the accepted range).
    pub fn from_millis(ms: i64) -> Window {
        Window(ms.clamp(1000, MAX_MS))
    }

    pub fn millis(&self) -> i64 {
        self.0
    }
}

impl Default for Window {
    fn default() -> Self {
        Window(DEFAULT_WINDOW_MS)
    }
}

impl std::fmt::Display for Window {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = self.0;
        for (unit, size) in [("d", DAY_MS), ("h", 60 * MINUTE_MS), ("m", MINUTE_MS)] {
            if ms % size == 0 {
                return write!(f, "{}{unit}", ms / size);
            }
        }
        write!(f, "{}s", ms / 1000)
    }
}

impl std::str::FromStr for Window {
    type Err = String;
    fn from_str(s: &str) -> Result<Window, String> {
        Window::parse(s)
    }
}

impl Serialize for Window {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Window {
    /// Stored windows were valid when stored: read back without the minimum
    /// (a window stored under the test knob still reads without it).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        let t = s.trim();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let n: i64 = num.parse().map_err(serde::de::Error::custom)?;
        let unit_ms = match unit {
            "s" => 1000,
            "m" => MINUTE_MS,
            "h" => 60 * MINUTE_MS,
            "d" => DAY_MS,
            _ => return Err(serde::de::Error::custom("bad retention window")),
        };
        Ok(Window::from_millis(n.saturating_mul(unit_ms)))
    }
}

/// A project's own windows; `None` is the server default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProjectRetention {
    #[serde(default)]
    pub notifications: Option<Window>,
    #[serde(default)]
    pub feed: Option<Window>,
}

/// The windows in force for a project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Notifications with their deliveries, and runs once all theirs are gone.
    pub notifications: Window,
    /// Feed entries and live-feed events.
    pub feed: Window,
}

static DEFAULT: OnceLock<Window> = OnceLock::new();

/// Sets the server's default window (`--retention`), once at startup. A
/// server setting every project view needs, so it lives here rather than
/// threaded through every caller.
pub fn set_default(w: Window) {
    let _ = DEFAULT.set(w);
}

/// The server's default window.
pub fn default_window() -> Window {
    DEFAULT.get().copied().unwrap_or_default()
}

impl ProjectRetention {
    /// The windows in force: the project's, else the server default.
    pub fn effective(&self) -> Retention {
        Retention {
            notifications: self.notifications.unwrap_or_else(default_window),
            feed: self.feed.unwrap_or_else(default_window),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_parse_in_four_units_and_show_in_the_largest() {
        assert_eq!(Window::parse("1m").unwrap().millis(), 60_000);
        assert_eq!(Window::parse("90d").unwrap().to_string(), "90d");
        assert_eq!(Window::parse("120m").unwrap().to_string(), "2h");
        assert_eq!(Window::parse("36h").unwrap().to_string(), "36h");
        for bad in [
            "",
            "m",
            "0m",
            "5",
            "1w",
            "1h30m",
            "-1d",
            "1.5h",
            "99999999999999d",
        ] {
            assert!(Window::parse(bad).is_err(), "{bad:?}");
        }
        let w: Window = serde_json::from_str("\"15m\"").unwrap();
        assert_eq!(serde_json::to_string(&w).unwrap(), "\"15m\"");
    }
}
