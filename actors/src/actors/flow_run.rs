//! `FlowRunActor`: one per run in progress. It hands the run's durable deliveries
//! to the supervisor, expands a topic run chunk by chunk (each chunk durable before
//! its deliveries go out), and stops once the run is processed.

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
}

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
        let store = self.engine.store().clone();
        match store.expand_topic_chunk(&self.project, &self.run, CHUNK) {
            Ok((queued, done)) => {
                if queued.is_empty() && done {
                    self.check_done(ctx);
                    return;
                }
                let ticket = store.durable_ticket();
                let engine = self.engine.clone();
                ctx.wait(
                    async move {
                        let ok = store.wait_durable(ticket).await.is_ok();
                        if ok {
                            engine.dispatch(queued);
                        }
                        ok
                    }
                    .into_actor(self)
                    .map(move |ok, act, ctx| {
                        if !done || !ok {
                            ctx.notify(Expand);
                        } else {
                            act.check_done(ctx);
                        }
                    }),
                );
            }
            Err(e) => {
                tracing::error!(flow_run_id = %self.run, error = %e, "topic expansion failed; retrying in 1 s");
                ctx.notify_later(Expand, Duration::from_secs(1));
            }
        }
    }
}

impl Handler<RunProcessed> for FlowRunActor {
    type Result = ();
    fn handle(&mut self, _: RunProcessed, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}
