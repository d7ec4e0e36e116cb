//! The engine's workflow operations: a project's clock (test or real, and
//! advancing a test clock) and cancelling runs by cancellation key. Each
//! persists first, then wakes the delivery actors (see `delivery::clock`,
//! `delivery::cancel`).

use super::engine::Engine;
use crate::audit::{redact, Actor, AuditChange};
use crate::delivery::cancel::{self, CancelRequest};
use crate::delivery::clock::{self, Span};
use crate::error::{Error, Result};
use crate::model::{Project, Timestamp};
use crate::rules::audit::record;
use uuid::Uuid;

impl Engine {
    /// Puts the project on a test clock (`true`; frozen at the current time,
    /// or left where it is when it already has one) or back on the real
    /// clock (`false`: what was parked on the test clock is due by real time
    /// again). 409 `production_project` for a test clock while security mode
    /// is on (`security_on`: as the same request leaves it).
    /// The change is `project.updated` in the audit log.
    pub async fn set_test_clock(
        &self, project: Uuid, actor: Actor, test: bool, security_on: bool,
    ) -> Result<Project> {
        if test && security_on {
            return Err(production());
        }
        let p = self
            .update_project(project, actor, "project.updated", move |p| {
                p.test_clock = match (test, p.test_clock) {
                    (true, Some(at)) => Some(at),
                    (true, None) => Some(Timestamp::now()),
                    (false, _) => None,
                };
            })
            .await?;
        let woken = self.inner.clocks.set(project, p.test_clock);
        self.release(vec![], |e| e.dispatch(woken)).await?;
        // shared work: what came due is claimed (by the stored clock)
        self.work_due_now();
        self.announce_project(project, crate::bus::ProjectNotice::Clock);
        Ok(p)
    }

    /// Moves the project's test clock `by` a span or `to` an instant (never
    /// backwards), durably, then hands the deliveries that became due to the
    /// delivery actors. 409 `clock_not_test` on the real clock.
    /// `clock.advanced` in the audit log.
    pub async fn advance_clock(
        &self, project: Uuid, actor: Actor, by: Option<Span>, to: Option<Timestamp>,
    ) -> Result<Project> {
        let p = self
            .run(move |s| {
                let mut refused: Option<Error> = None;
                let mut before = None;
                let p = s.update_project(
                    &project,
                    Box::new(|p| match p.test_clock {
                        None => refused = Some(not_test()),
                        Some(now) => match clock::advanced(now, by, to) {
                            Ok(next) => {
                                before = Some(redact::clock(p));
                                p.test_clock = Some(next)
                            }
                            Err(e) => refused = Some(e),
                        },
                    }),
                )?;
                if let Some(e) = refused {
                    return Err(e);
                }
                let mut change = AuditChange::new("clock.advanced", project)
                    .key(&p.name)
                    .after(redact::clock(&p));
                if let Some(b) = before {
                    change = change.before(b);
                }
                record(s, &project, &actor, change)?;
                Ok(p)
            })
            .await?;
        let woken = self.inner.clocks.set(project, p.test_clock);
        self.release(vec![], |e| e.dispatch(woken)).await?;
        // shared work: what came due is claimed (by the stored clock)
        self.work_due_now();
        self.announce_project(project, crate::bus::ProjectNotice::Clock);
        Ok(p)
    }

    /// Cancels the waiting deliveries of a flow's runs with a cancellation
    /// key (see `delivery::cancel`), durably; how many it canceled.
    pub async fn cancel_runs(&self, project: Uuid, req: CancelRequest) -> Result<usize> {
        let e = self.clone();
        let (n, (_, runs, pulled)) = self
            .run(move |s| cancel::cancel_runs(s, e.attempt_notes(), &project, &req))
            .await?;
        self.release(vec![], |e| {
            e.runs_processed(runs);
            e.pulled(pulled);
        })
        .await?;
        Ok(n)
    }
}

fn production() -> Error {
    Error::conflict(
        "project",
        None,
        "production_project",
        "a project with security mode on is in production use and cannot take a test clock",
    )
}

fn not_test() -> Error {
    Error::conflict(
        "project",
        None,
        "clock_not_test",
        "the project is on the real clock: put it on a test clock first",
    )
}
