//! Project time: the real clock, or a project's test clock, and durations.
//!
//! A project on a test clock (`Project::test_clock`) has a time of its own,
//! frozen at a stored instant that moves only when advanced
//! (`POST /admin/v1/project/clock/advance`). Every due time of the project's
//! runs is in project time: a run's steps count from the clock's time at
//! acceptance (`FlowRun::clock_at`) or from its `send_at`, and a retry's wait
//! starts at the clock's time too.
//!
//! The delivery actors keep one timer queue in real time for every project.
//! A delivery of a test-clock project that is due in project time goes into
//! it as due now; one that is not yet due is *parked* here, in memory, by
//! project, and handed back to the actors when an advance makes it due (or
//! when the project goes back to the real clock). Parking is only a wake-up
//! list: the queued delivery stays stored with its due time, so a restart
//! rebuilds the list from the recovered queue (`Clocks::load`,
//! `QueueRepo::queue_items`) and nothing is lost or sent twice.
//!
//! The check and the park happen under the project's entry lock, as does an
//! advance's drain, so a delivery parked while the clock advances is either
//! seen as due or drained: never left behind.

use crate::error::{Result, Validator};
use crate::model::{Project, Timestamp};
use crate::storage::QueueItem;
use dashmap::DashMap;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use uuid::Uuid;

/// A positive length of time as the API writes it: `"90s"`, `"15m"`,
/// `"1h"`, `"2d"`, `"1h 30m"` (humantime's units). Valid by construction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span(std::time::Duration);

/// The longest span accepted: far beyond any useful delay or window, short
/// enough that adding it to a timestamp in milliseconds cannot overflow.
const MAX_SPAN_DAYS: u64 = 3650;

impl Span {
    /// Parses `text`; a message saying what is wrong otherwise.
    pub fn parse(text: &str) -> std::result::Result<Span, String> {
        let d = humantime::parse_duration(text.trim()).map_err(|e| {
            format!("must be a duration such as \"90s\", \"15m\", \"1h\" or \"2d\" ({e})")
        })?;
        if d.is_zero() {
            return Err("must be longer than zero".into());
        }
        if d.as_secs() > MAX_SPAN_DAYS * 86_400 {
            return Err(format!("must be at most {MAX_SPAN_DAYS} days"));
        }
        Ok(Span(d))
    }

    /// Parses `text` given at `field`, reporting a 422 there.
    /// Whether `text` is a duration of zero (`"0s"`, `"0m"`): what a route
    /// channel's `after` may say (at once), unlike the other durations.
    pub fn is_zero(text: &str) -> bool {
        humantime::parse_duration(text.trim()).is_ok_and(|d| d.is_zero())
    }

    pub fn field(text: &str, field: &str, v: &mut Validator) -> Option<Span> {
        match Span::parse(text) {
            Ok(s) => Some(s),
            Err(m) => {
                v.push(field, "format", m);
                None
            }
        }
    }

    pub fn millis(self) -> i64 {
        self.0.as_millis() as i64
    }
}

/// Deliveries of one test-clock project waiting for its time to move.
struct TestClock {
    now_ms: i64,
    /// Keyed by `(due, delivery)`: a delivery pushed twice (a reload) parks once.
    parked: BTreeMap<(i64, Uuid), QueueItem>,
}

/// Every test clock of this process by project, as `Clocks` last set it:
/// what a backend stamps a trace part with (`test_now`), where no engine is
/// at hand. A project id names one project whichever engine holds it.
static TEST_NOW: std::sync::LazyLock<DashMap<Uuid, i64>> = std::sync::LazyLock::new(DashMap::new);

/// Whether `TEST_NOW` may hold any clock: one atomic load per trace part
/// written when no project has a test clock.
static ANY_TEST: AtomicBool = AtomicBool::new(false);

/// The test-clock time of `project`, `None` on the real clock (the decision
/// trace's `project_at`, `crate::trace`).
pub fn test_now(project: &Uuid) -> Option<Timestamp> {
    if !ANY_TEST.load(Ordering::Acquire) {
        return None;
    }
    TEST_NOW.get(project).map(|t| Timestamp::from_millis(*t))
}

/// Mirrors a clock change into `TEST_NOW`.
fn mirror(project: Uuid, now_ms: Option<i64>) {
    match now_ms {
        Some(ms) => {
            ANY_TEST.store(true, Ordering::Release);
            TEST_NOW.insert(project, ms);
        }
        None => {
            TEST_NOW.remove(&project);
            if TEST_NOW.is_empty() {
                ANY_TEST.store(false, Ordering::Release);
            }
        }
    }
}

/// The test clocks of the projects that have one (absent: real clock).
#[derive(Default)]
pub struct Clocks {
    clocks: DashMap<Uuid, TestClock>,
    /// Whether any project has a test clock: one atomic load on the hot
    /// path (every accepted run, every queued delivery) when none has.
    any: AtomicBool,
}

impl Clocks {
    /// The test clocks of `projects` (at engine start).
    pub fn load(&self, projects: &[Project]) {
        for p in projects {
            self.set(p.id, p.test_clock);
        }
    }

    /// The project's time: its test clock's, else real time.
    pub fn now(&self, project: &Uuid) -> Timestamp {
        self.test_now(project).unwrap_or_else(Timestamp::now)
    }

    /// The project's test-clock time, `None` on the real clock.
    pub fn test_now(&self, project: &Uuid) -> Option<Timestamp> {
        if !self.any.load(Ordering::Acquire) {
            return None;
        }
        self.clocks
            .get(project)
            .map(|c| Timestamp::from_millis(c.now_ms))
    }

    /// Where a queued delivery goes: `Some` (due now in real time, or not a
    /// test-clock project's) to the actor's timer queue; `None` when parked
    /// until its project's clock reaches it.
    pub fn admit(&self, q: QueueItem) -> Option<QueueItem> {
        if !self.any.load(Ordering::Acquire) {
            return Some(q);
        }
        let Some(mut c) = self.clocks.get_mut(&q.project) else {
            return Some(q);
        };
        if q.due_ms <= c.now_ms {
            // Due in project time: due now in real time.
            return Some(QueueItem {
                due_ms: Timestamp::now().millis(),
                ..q
            });
        }
        c.parked.insert((q.due_ms, q.delivery_id), q);
        None
    }

    /// Puts the project on a test clock at `at` (moving an existing one) or,
    /// with `None`, back on the real clock. Returns the parked deliveries
    /// that are due now, for the delivery actors.
    pub fn set(&self, project: Uuid, at: Option<Timestamp>) -> Vec<QueueItem> {
        if at.is_some() {
            // Before the clock exists, so a delivery admitted after it does
            // is checked against it.
            self.any.store(true, Ordering::Release);
        }
        let woken = self.change(project, at);
        if at.is_none() && self.clocks.is_empty() {
            self.any.store(false, Ordering::Release);
        }
        woken
    }

    fn change(&self, project: Uuid, at: Option<Timestamp>) -> Vec<QueueItem> {
        match at {
            None => {
                mirror(project, None);
                self.clocks
                    .remove(&project)
                    .map(|(_, c)| c.parked.into_values().collect())
                    .unwrap_or_default()
            }
            Some(at) => {
                let mut c = self.clocks.entry(project).or_insert_with(|| TestClock {
                    now_ms: at.millis(),
                    parked: BTreeMap::new(),
                });
                // Two advances may report back in either order; the stored
                // clock only moves forward, so neither may this one.
                c.now_ms = c.now_ms.max(at.millis());
                let now = c.now_ms;
                mirror(project, Some(now));
                let later = c.parked.split_off(&(now.saturating_add(1), Uuid::nil()));
                std::mem::replace(&mut c.parked, later)
                    .into_values()
                    .collect()
            }
        }
    }
}

/// The instant an advance moves a clock at `now` to: `by` a span or `to`
/// an instant, never backwards.
pub fn advanced(now: Timestamp, by: Option<Span>, to: Option<Timestamp>) -> Result<Timestamp> {
    let next = match (by, to) {
        (Some(by), None) => now.plus_millis(by.millis()),
        (None, Some(to)) => to,
        _ => {
            return Err(crate::error::Error::field(
                "by",
                "required",
                "give either by (a duration) or to (an RFC 3339 instant)",
            ))
        }
    };
    if next.millis() < now.millis() {
        return Err(crate::error::Error::field(
            "to",
            "inclusion",
            "a test clock never moves backwards: give an instant not before its time",
        ));
    }
    Ok(next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ChannelType;

    #[test]
    fn spans_parse_units_and_refuse_nonsense() {
        assert_eq!(Span::parse("15m").unwrap().millis(), 900_000);
        assert_eq!(Span::parse("1h").unwrap().millis(), 3_600_000);
        assert_eq!(Span::parse("2d").unwrap().millis(), 172_800_000);
        assert_eq!(Span::parse("1h 30m").unwrap().millis(), 5_400_000);
        for bad in ["", "0s", "soon", "-1h", "100000d"] {
            assert!(Span::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_test_clock_parks_until_advanced_and_releases_on_return() {
        let clocks = Clocks::default();
        let p = Uuid::now_v7();
        let item = |due_ms| QueueItem {
            project: p,
            delivery_id: Uuid::now_v7(),
            channel_type: ChannelType::InApp,
            due_ms,
        };
        assert!(clocks
            .set(p, Some(Timestamp::from_millis(1_000)))
            .is_empty());
        assert!(clocks.admit(item(1_000)).is_some(), "due in project time");
        let later = item(5_000);
        assert!(clocks.admit(later).is_none(), "parked");
        assert!(clocks.admit(later).is_none(), "parked once");
        assert!(clocks.admit(item(9_000)).is_none());
        let woke = clocks.set(p, Some(Timestamp::from_millis(5_000)));
        assert_eq!(woke, vec![later]);
        // an advance reported late does not move the clock back
        assert!(clocks
            .set(p, Some(Timestamp::from_millis(2_000)))
            .is_empty());
        assert_eq!(clocks.now(&p).millis(), 5_000);
        assert_eq!(
            clocks.set(p, None).len(),
            1,
            "the real clock wakes the rest"
        );
        assert!(
            clocks.admit(item(i64::MAX)).is_some(),
            "real clock: never parked"
        );
    }
}
