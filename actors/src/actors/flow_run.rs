//! `FlowRunActor`: one per run in progress. It hands the run's durable deliveries
//! to the supervisor, expands a topic run chunk by chunk on the blocking pool
//! (`delivery::expand::expand_topic`: the next chunk is staged while the
//! backend commits one, `RunRepo::commit_chunk`;
//! each chunk is durable before its deliveries and frames go out), and stops
//! once the run is processed.

use super::engine::Engine;
use crate::delivery::expand;
use crate::error::Result;
use crate::model::FlowRun;
use crate::storage::{QueueItem, RunClaim, UserFrames};
use actix::prelude::*;
use dashmap::DashMap;
use std::time::Duration;
use uuid::Uuid;

/// Topic subscribers expanded per commit.
const CHUNK: usize = 500;

pub struct FlowRunActor {
    engine: Engine,
    project: Uuid,
    run: Uuid,
    queued: Vec<QueueItem>,
    expanding: bool,
    expanded: bool,
    /// A `check_done` read in flight.
    checking: bool,
}

/// Committed chunks that may wait to be released (durable, then pushed and
/// dispatched) while the expansion goes on.
const AHEAD: usize = 4;

/// Sent by the delivery side when the run's last notification is processed.
#[derive(Message)]
#[rtype(result = "()")]
pub struct RunProcessed;

/// Expands the run if it is not expanded yet (shared work: if this node
/// holds, or can take, its lease).
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Expand;

impl FlowRunActor {
    pub fn new(engine: Engine, project: Uuid, run: Uuid, queued: Vec<QueueItem>) -> Self {
        FlowRunActor {
            engine,
            project,
            run,
            queued,
            expanding: false,
            expanded: false,
            checking: false,
        }
    }

    /// Reads the run on the blocking pool and hands the answer to `then`
    /// on the actor. Never on the actor's own thread: on PostgreSQL the read
    /// waits for a pooled connection, and an arbiter thread blocked on that
    /// would stall every actor the arbiter runs (the channel actors'
    /// dispatch, the users' frames) for as long as the pool is busy.
    fn with_run(
        &mut self, ctx: &mut Context<Self>,
        then: impl FnOnce(&mut Self, &mut Context<Self>, Result<Option<FlowRun>>) + 'static,
    ) {
        let (p, r) = (self.project, self.run);
        let engine = self.engine.clone();
        let read = async move { engine.run(move |s| s.flow_run(&p, &r)).await };
        ctx.spawn(
            read.into_actor(self)
                .map(move |res, act, ctx| then(act, ctx, res)),
        );
    }

    /// Stops the actor once its run is processed (the safety net of
    /// `RunProcessed`: on a cluster, another node may finish the run), one
    /// read at a time.
    fn check_done(&mut self, ctx: &mut Context<Self>) {
        if self.checking {
            return;
        }
        self.checking = true;
        self.with_run(ctx, |act, ctx, res| {
            act.checking = false;
            match res {
                Ok(Some(r)) if !r.processed => {}
                Ok(_) => ctx.stop(),
                Err(e) => {
                    tracing::warn!(flow_run_id = %act.run, error = %e, "cannot read flow run")
                }
            }
        });
    }
}

impl Actor for FlowRunActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        tracing::debug!(flow_run_id = %self.run, project_id = %self.project, queued = self.queued.len(), "flow run actor started");
        let queued = std::mem::take(&mut self.queued);
        self.engine.dispatch(queued);
        ctx.notify(Expand);
        ctx.run_interval(Duration::from_secs(1), |a, ctx| a.check_done(ctx));
    }

    fn stopped(&mut self, ctx: &mut Context<Self>) {
        super::engine::forget_actor(self.engine.run_actors(), &self.run, &ctx.address());
    }
}

impl Handler<Expand> for FlowRunActor {
    type Result = ();
    fn handle(&mut self, _: Expand, ctx: &mut Context<Self>) {
        let shared = self.engine.shares_work();
        // Shared work: a run another node expanded (or held) may come back
        // to this node when that node dies; the lease decides, not `expanded`.
        if self.expanding || (self.expanded && !shared) {
            return;
        }
        self.expanding = true;
        // The expansion runs on the blocking pool and hands each committed chunk
        // over a bounded channel; this side releases the chunks in order, each
        // once it is durable. At most `AHEAD` chunks wait to be released.
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Chunk>(AHEAD);
        let store = self.engine.storage().clone();
        let (p, r) = (self.project, self.run);
        let engine = self.engine.clone();
        let release = async move {
            // The project's share of staging (see `PROJECT_STAGING_UNITS`),
            // a chunk's worth, held until the expansion ends: one project's
            // expansions cannot take every thread that renders.
            let permit = engine.staging_permit(p, CHUNK).await;
            let limits = engine.template_limits();
            let job = tokio::task::spawn_blocking(move || {
                let _permit = permit;
                // Shared work: only the node holding the run's lease expands
                // it, from the cursor of the last chunk committed (by
                // whichever node); each chunk commits under the lease.
                if shared {
                    match store.flow_run(&p, &r)? {
                        Some(run) if !run.expanded && !run.processed => {}
                        _ => return Ok(()),
                    }
                    let held = store.shared_work()?.claim_runs(
                        RunClaim::One {
                            project: &p,
                            run: &r,
                        },
                        crate::model::Timestamp::now().millis(),
                    )?;
                    if held.is_empty() {
                        tracing::debug!(flow_run_id = %r, "another node expands this run");
                        return Ok(());
                    }
                }
                expand::expand_topic(&*store, limits, &p, &r, CHUNK, &mut |queued, frames| {
                    tx.blocking_send((queued, frames)).is_ok()
                })
            });
            while let Some((queued, frames)) = rx.recv().await {
                if queued.is_empty() && frames.is_empty() {
                    continue;
                }
                // Stays queued in storage and goes out after a restart.
                if let Err(e) = engine.release(frames, |e| e.dispatch(queued)).await {
                    tracing::error!(error = %e, "flush failed; deliveries wait for a restart")
                }
            }
            job.await
                .unwrap_or_else(|_| Err(crate::error::Error::internal("topic expansion panicked")))
        };
        ctx.spawn(release.into_actor(self).map(|res, act, ctx| {
            act.expanding = false;
            match res {
                Ok(()) => {
                    act.expanded = true;
                    act.check_done(ctx);
                }
                Err(e) => act.with_run(ctx, move |act, ctx, run| {
                    // The run is gone (its project was deleted): nothing to do.
                    if matches!(run, Ok(None)) {
                        return ctx.stop();
                    }
                    tracing::error!(flow_run_id = %act.run, error = %e, "topic expansion failed; retrying in 1 s");
                    ctx.notify_later(Expand, Duration::from_secs(1));
                }),
            }
        }));
    }
}

/// One committed chunk of an expansion: deliveries queued, frames to push.
type Chunk = (Vec<QueueItem>, UserFrames);

impl Handler<RunProcessed> for FlowRunActor {
    type Result = ();
    fn handle(&mut self, _: RunProcessed, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}

/// The actors of runs in progress on this node, by run: an engine part
/// (`engine::Parts`), registered at start.
#[derive(Default)]
pub(crate) struct RunActors(DashMap<Uuid, Addr<FlowRunActor>>);

impl Engine {
    /// The actors of runs in progress here.
    pub(crate) fn run_actors(&self) -> &DashMap<Uuid, Addr<FlowRunActor>> {
        &self.inner.parts.get::<RunActors>().0
    }

    /// Starts the actor of an accepted (durable) run; it dispatches `queued`.
    /// Its address is in `runs` before it starts, so it is there before the
    /// actor can stop and take it out (a run processed at acceptance stops
    /// within its first round trip to the store).
    pub fn start_run(
        &self, project: Uuid, run: Uuid, queued: Vec<QueueItem>,
    ) -> Addr<FlowRunActor> {
        let engine = self.clone();
        FlowRunActor::start_in_arbiter(self.arbiter_for(&run), move |ctx| {
            engine.run_actors().insert(run, ctx.address());
            FlowRunActor::new(engine, project, run, queued)
        })
    }

    /// Tells the actors of runs that just became processed to stop.
    pub(crate) fn runs_processed(&self, runs: Vec<(Uuid, Uuid)>) {
        for (_, run) in runs {
            if let Some(a) = self.run_actors().get(&run) {
                a.do_send(RunProcessed);
            }
        }
    }
}
