//! `FlowRunActor`: one per run in progress. It hands the run's durable deliveries
//! to the supervisor, expands a topic run chunk by chunk on the blocking pool
//! (each chunk durable before its deliveries go out; the next chunk is staged
//! while one waits for its flush), and stops once the run is processed.

use super::engine::Engine;
use crate::store::QueueItem;
use actix::prelude::*;
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
    /// Chunks committed whose deliveries wait for their flush.
    undispatched: usize,
}

/// Chunks that may wait for their flush while the next one is staged.
const AHEAD: usize = 4;

/// Sent by the delivery side when the run's last notification is processed.
#[derive(Message)]
#[rtype(result = "()")]
pub struct RunProcessed;

#[derive(Message)]
#[rtype(result = "()")]
struct Expand;

impl FlowRunActor {
    pub fn new(engine: Engine, project: Uuid, run: Uuid, queued: Vec<QueueItem>) -> Self {
        FlowRunActor {
            engine,
            project,
            run,
            queued,
            expanding: false,
            expanded: false,
            undispatched: 0,
        }
    }

    fn check_done(&mut self, ctx: &mut Context<Self>) {
        match self.engine.store().flow_run(&self.project, &self.run) {
            Ok(Some(r)) if !r.processed => {}
            Ok(_) => ctx.stop(),
            Err(e) => tracing::warn!(flow_run_id = %self.run, error = %e, "cannot read flow run"),
        }
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

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.engine
            .inner
            .runs
            .remove_if(&self.run, |_, a| !a.connected());
    }
}

impl Handler<Expand> for FlowRunActor {
    type Result = ();
    fn handle(&mut self, _: Expand, ctx: &mut Context<Self>) {
        if self.expanding || self.expanded || self.undispatched >= AHEAD {
            return; // re-sent when the chunk in progress or a flush completes
        }
        self.expanding = true;
        let store = self.engine.store().clone();
        let (p, r) = (self.project, self.run);
        let work = async move {
            tokio::task::spawn_blocking(move || store.expand_topic_chunk(&p, &r, CHUNK))
                .await
                .unwrap_or_else(|_| Err(crate::error::Error::internal("topic expansion panicked")))
        };
        ctx.spawn(work.into_actor(self).map(|res, act, ctx| {
            act.expanding = false;
            match res {
                Ok((queued, frames, done)) => {
                    act.expanded = done;
                    if queued.is_empty() && frames.is_empty() {
                        if done {
                            act.check_done(ctx);
                        } else {
                            ctx.notify(Expand);
                        }
                        return;
                    }
                    // The next chunk is staged while this one waits for its flush;
                    // its deliveries go out only once it is durable.
                    act.undispatched += 1;
                    let store = act.engine.store().clone();
                    let engine = act.engine.clone();
                    let ticket = store.durable_ticket();
                    ctx.spawn(
                        async move {
                            match store.wait_durable(ticket).await {
                                Ok(()) => {
                                    engine.push_frames(frames);
                                    engine.dispatch(queued);
                                }
                                // Stays queued in sled and goes out after a restart.
                                Err(e) => tracing::error!(error = %e, "flush failed; deliveries wait for a restart"),
                            }
                        }
                        .into_actor(act)
                        .map(|_, act, ctx| {
                            act.undispatched -= 1;
                            if act.expanded {
                                act.check_done(ctx);
                            } else {
                                ctx.notify(Expand);
                            }
                        }),
                    );
                    if !done {
                        ctx.notify(Expand);
                    }
                }
                Err(e) => {
                    tracing::error!(flow_run_id = %act.run, error = %e, "topic expansion failed; retrying in 1 s");
                    ctx.notify_later(Expand, Duration::from_secs(1));
                }
            }
        }));
    }
}

impl Handler<RunProcessed> for FlowRunActor {
    type Result = ();
    fn handle(&mut self, _: RunProcessed, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}
