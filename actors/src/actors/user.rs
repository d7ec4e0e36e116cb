//! `UserActor`: one per active user. Every change to a user's feed goes through
//! it — new in-app entries, PATCHes, `seen_all`/`read_all` — so the feed counts
//! are updated without races and changes happen in one order. It answers only after
//! the change is durable. It stops after a few idle minutes; its state is in sled.

use super::engine::Engine;
use crate::error::{Error, Result};
use crate::model::{Delivery, DeliveryError, FeedCounts};
use crate::store::{FeedUpdate, Outcome, QueueItem, Writes};
use actix::prelude::*;
use std::time::{Duration, Instant};
use uuid::Uuid;

const IDLE: Duration = Duration::from_secs(300);

pub struct UserActor {
    engine: Engine,
    project: Uuid,
    user: Uuid,
    last_used: Instant,
}

/// Deliver one in_app delivery: store the feed entry and mark the delivery sent.
#[derive(Message, Clone, Copy)]
#[rtype(result = "Result<()>")]
pub struct DeliverInApp(pub QueueItem);

/// PATCH of one feed entry.
#[derive(Message, Clone, Copy)]
#[rtype(result = "Result<(Delivery, FeedCounts)>")]
pub struct UpdateEntry {
    pub entry: Uuid,
    pub update: FeedUpdate,
}

/// `seen_all` (read = false) or `read_all` (read = true).
#[derive(Message, Clone, Copy)]
#[rtype(result = "Result<(usize, FeedCounts)>")]
pub struct MarkAll {
    pub read: bool,
}

/// A change to one feed entry, as pushed to live subscribers.
#[derive(Debug, Clone)]
pub enum FeedChange {
    Created(Delivery),
    Updated(Delivery),
}

/// The changes of one durable commit with the counts after it.
#[derive(Message, Debug, Clone)]
#[rtype(result = "()")]
pub struct FeedChanged {
    pub changes: Vec<FeedChange>,
    pub counts: FeedCounts,
}

impl UserActor {
    pub fn new(engine: Engine, project: Uuid, user: Uuid) -> Self {
        UserActor { engine, project, user, last_used: Instant::now() }
    }

    /// Waits for `ticket` to be durable, then resolves with `value`.
    fn after_durable<T: 'static>(&self, ticket: u64, value: T) -> ResponseActFuture<Self, Result<T>> {
        let store = self.engine.store().clone();
        Box::pin(async move { store.wait_durable(ticket).await.map(|_| value) }.into_actor(self))
    }
}

impl Actor for UserActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.run_interval(Duration::from_secs(30), |a, ctx| {
            if a.last_used.elapsed() > IDLE {
                ctx.stop();
            }
        });
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.engine.inner.users.remove_if(&(self.project, self.user), |_, a| !a.connected());
    }
}

impl Handler<DeliverInApp> for UserActor {
    type Result = ResponseActFuture<Self, Result<()>>;

    fn handle(&mut self, DeliverInApp(q): DeliverInApp, _: &mut Context<Self>) -> Self::Result {
        self.last_used = Instant::now();
        let store = self.engine.store().clone();
        let work = || -> Result<Vec<(Uuid, Uuid)>> {
            let Some(d) = store.delivery(&q.project, &q.delivery_id)? else { return Ok(vec![]) };
            if d.status.is_final() {
                return Ok(vec![]);
            }
            let mut w = Writes::new();
            let outcome = if store.user(&q.project, &d.recipient_id)?.is_some() {
                let mut counts = store.feed_counts(&q.project, &d.recipient_id)?;
                store.stage_feed_insert(&mut w, &q.project, &d, &mut counts);
                Outcome::Sent { outcomes: None }
            } else {
                Outcome::Skipped(DeliveryError {
                    code: "missing_address".into(),
                    message: "the recipient was deleted".into(),
                })
            };
            let (_, runs) = store.finish_deliveries(&[(q, outcome)], w)?;
            Ok(runs)
        };
        match work() {
            Ok(runs) => {
                let ticket = store.durable_ticket();
                let engine = self.engine.clone();
                Box::pin(
                    async move {
                        store.wait_durable(ticket).await?;
                        engine.runs_processed(runs);
                        Ok(())
                    }
                    .into_actor(self),
                )
            }
            Err(e) => Box::pin(async move { Err(e) }.into_actor(self)),
        }
    }
}

impl Handler<UpdateEntry> for UserActor {
    type Result = ResponseActFuture<Self, Result<(Delivery, FeedCounts)>>;

    fn handle(&mut self, m: UpdateEntry, _: &mut Context<Self>) -> Self::Result {
        self.last_used = Instant::now();
        let store = self.engine.store();
        match store.feed_update(&self.project, &self.user, &m.entry, m.update) {
            Ok(out) => {
                let ticket = store.durable_ticket();
                self.after_durable(ticket, (out.entry, out.counts))
            }
            Err(e) => Box::pin(async move { Err::<(Delivery, FeedCounts), Error>(e) }.into_actor(self)),
        }
    }
}

impl Handler<MarkAll> for UserActor {
    type Result = ResponseActFuture<Self, Result<(usize, FeedCounts)>>;

    fn handle(&mut self, m: MarkAll, _: &mut Context<Self>) -> Self::Result {
        self.last_used = Instant::now();
        let store = self.engine.store();
        match store.feed_mark_all(&self.project, &self.user, m.read) {
            Ok((updated, counts)) => {
                let ticket = store.durable_ticket();
                self.after_durable(ticket, (updated.len(), counts))
            }
            Err(e) => Box::pin(async move { Err::<(usize, FeedCounts), Error>(e) }.into_actor(self)),
        }
    }
}
