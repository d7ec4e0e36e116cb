//! Throttle steps (`{"type": "throttle", "limit": 1, "window": "1h", "key":
//! "…"}`): per flow, recipient and rendered key, at most `limit` runs pass the
//! step in any `window`; a run beyond the limit stops there for that
//! recipient: its notification records `throttled` and its later steps get
//! no deliveries.
//!
//! The counter holds the project-time instants at which runs passed (at most
//! `limit` of them, older ones drop out of the window). A run reaches the
//! step at its start plus the delays before it, which staging knows, so the
//! throttle is decided while the run is staged and its counter is written in
//! the same atomic change as the notification (`StagedNotification::throttle`);
//! a run with explicit recipients is staged again when another run changed
//! the counter meanwhile (the backend checks it under the recipients' locks).

use crate::storage::{Storage, ThrottleKey, ThrottleWrite};
use uuid::Uuid;

/// Whether a run reaching the step at `at_ms` passes a counter that holds
/// `hits`: the counter as it leaves it when it passes, `None` when
/// throttled.
pub fn pass(hits: &[i64], at_ms: i64, window_ms: i64, limit: u32) -> Option<Vec<i64>> {
    let mut kept: Vec<i64> = hits
        .iter()
        .copied()
        .filter(|t| *t > at_ms.saturating_sub(window_ms))
        .collect();
    if kept.len() >= limit as usize {
        return None;
    }
    kept.push(at_ms);
    Some(kept)
}

/// Reads the counter `key` and decides a run reaching it at `at_ms`:
/// `Some(write)` when it passes, `None` when throttled; with the runs the
/// counter holds within the window at `at_ms` (for the trace).
pub(crate) fn reach(
    s: &dyn Storage, project: &Uuid, key: ThrottleKey, at_ms: i64, window_ms: i64, limit: u32,
) -> crate::error::Result<(Option<ThrottleWrite>, usize)> {
    let before = s.throttle_hits(project, &key)?;
    let within = before
        .iter()
        .filter(|t| **t > at_ms.saturating_sub(window_ms))
        .count();
    let write =
        pass(&before, at_ms, window_ms, limit).map(|after| ThrottleWrite { key, before, after });
    Ok((write, within))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counter_lets_limit_runs_through_per_window() {
        let h = pass(&[], 1_000, 100, 2).unwrap();
        let h = pass(&h, 1_050, 100, 2).unwrap();
        assert_eq!(h, vec![1_000, 1_050]);
        assert!(
            pass(&h, 1_099, 100, 2).is_none(),
            "both still in the window"
        );
        // the first drops out of the window
        assert_eq!(pass(&h, 1_100, 100, 2).unwrap(), vec![1_050, 1_100]);
    }
}
