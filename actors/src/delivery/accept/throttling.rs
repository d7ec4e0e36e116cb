//! A run's throttle steps at staging: each step's key for the recipient
//! and the decision with its counter (`delivery::throttle`), for
//! `Stager::stage`.

use super::Stager;
use crate::error::Result;
use crate::model::{Step, Timestamp, User};
use crate::storage::Storage;
use crate::trace::{self, TraceEntry};
use serde_json::json;

impl Stager<'_> {
    /// The key of a throttle or batch step `i` for `user`: its template
    /// rendered (a key that does not render counts under the empty key).
    pub(super) fn step_key(
        &self, i: usize, step: &Step, user: &User, ctx: &minijinja::Value,
    ) -> crate::storage::ThrottleKey {
        let key = match &step.template {
            Some(t) => self
                .renderer
                .render(i, t, ctx)
                .map(|r| r.body)
                .unwrap_or_default(),
            None => String::new(),
        };
        crate::storage::ThrottleKey {
            flow_id: self.run.flow_id,
            recipient: user.id,
            step: i.min(255) as u8,
            key,
        }
    }

    /// Decides throttle step `i` for `user`, reached at `at_ms` (project
    /// time): the counter's write when the run passes, `None` when throttled;
    /// and the decision's trace entry (made `now`). A key that does not
    /// render counts under the empty key.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn throttle(
        &self, s: &dyn Storage, i: usize, step: &Step, user: &User, ctx: &minijinja::Value,
        at_ms: i64, now: Timestamp,
    ) -> Result<(Option<crate::storage::ThrottleWrite>, TraceEntry)> {
        let window_ms = step
            .window
            .as_deref()
            .and_then(|w| crate::delivery::clock::Span::parse(w).ok())
            .map_or(0, |w| w.millis());
        let key = self.step_key(i, step, user, ctx);
        let limit = step.limit.unwrap_or(1);
        let shown = key.key.clone();
        let (passed, within) =
            crate::delivery::throttle::reach(s, &self.project, key, at_ms, window_ms, limit)?;
        // Passed: the runs in the window with this one; throttled: those
        // already there.
        let (code, count) = match &passed {
            Some(w) => ("throttle.passed", w.after.len()),
            None => ("throttle.limited", within),
        };
        let args = json!({"step": i, "key": shown, "count": count, "limit": limit,
            "window": step.window});
        Ok((passed, trace::entry(now, code, args)))
    }
}
