//! `ChannelActor`: the delivery actor of one channel type.
//!
//! It keeps a timer queue of the deliveries it knows (rebuilt from the sled queue
//! tree whenever it starts, so a restart after a crash loses nothing) and works
//! off the due ones:
//!
//! - external channels: one provider call per delivery under a concurrency
//!   limit, shared fairly between projects: due deliveries wait in a ready
//!   queue per project, the projects are served round-robin, and no project
//!   has more than `project_inflight` attempts in flight, so one project's
//!   slow endpoint or huge run cannot take the slots another project's
//!   deliveries need; outcomes are recorded in batches, one commit for every
//!   attempt that finished within a few milliseconds of each other;
//! - in_app: there is no provider to wait for, so due deliveries are settled in
//!   batches of up to `IN_APP_BATCH` across users, one commit each
//!   (`QueueRepo::deliver_in_app`); once durable, each user's frames go to the user's
//!   actor (if it runs) for its sockets.
//!
//! Store work runs on the blocking pool, never on the actor's thread.
//!
//! On a backend whose work several nodes share (PostgreSQL, see
//! `super::cluster`), the actor does not load the whole queue: it holds what
//! it leased. Deliveries of runs this node accepted come leased with their
//! commit and go to the timers as above; retries stay leased to it. Work it
//! does not hold (another node's after that node died, deliveries handed
//! back, a test clock's that came due) it claims: when woken
//! (`Engine::wake_queue`), and at least every poll interval, as many due
//! deliveries as it has room for. It renews its leases while it holds them,
//! and a test-clock project's delivery not due yet by this node's view of
//! the clock is handed back rather than parked, to be claimed by whichever
//! node sees it due by the clock stored with the project.

use super::engine::Engine;
use crate::model::{ChannelType, DeliveryErrorCode, Timestamp};
use crate::storage::{Leased, Outcome, QueueItem, Release};
use actix::prelude::*;
use futures_util::FutureExt;
use rand::Rng;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::panic::AssertUnwindSafe;
use std::time::Duration;
use uuid::Uuid;

mod attempt;
use attempt::{batch_due, external_attempt};

#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Due(i64, Uuid, Uuid); // due ms, delivery, project

/// Deliveries of one channel type that are durable and due now or later
/// (`Engine::dispatch`, through the supervisor).
#[derive(Message, Debug, Clone)]
#[rtype(result = "()")]
pub struct Dispatch(pub Vec<QueueItem>);

pub struct ChannelActor {
    engine: Engine,
    ct: ChannelType,
    /// Deliveries not yet due (all of them, for in_app).
    heap: BinaryHeap<Reverse<Due>>,
    /// External channels: due deliveries per project, each in due order.
    ready: HashMap<Uuid, VecDeque<QueueItem>>,
    /// The projects with ready deliveries, in the order they are served.
    turn: VecDeque<Uuid>,
    /// Deliveries in `ready`, all projects together.
    ready_len: usize,
    /// External attempts in flight per project (absent: none).
    project_inflight: HashMap<Uuid, usize>,
    /// Deliveries in the timer queue or in flight, with the due time they
    /// were queued at: a delivery queued again earlier (a batch closed early
    /// by `max`) supersedes its later entry, which is skipped when popped.
    known: HashMap<Uuid, i64>,
    inflight: usize,
    done: Vec<(QueueItem, Outcome)>,
    flush_scheduled: bool,
    /// Settles (`QueueRepo::settle`) in flight.
    flushing: usize,
    in_app_batches: usize,
    warned: HashSet<Uuid>,
    /// The store generation last seen (see `store::health`): a new one means
    /// the store reopened and the queue is reloaded.
    store_generation: u64,
    /// Shared work (see the module doc): whether deliveries are claimed.
    shared: bool,
    /// When to claim next (real ms).
    next_claim: i64,
    claiming: bool,
    /// When to renew the leases next (real ms).
    next_renew: i64,
    renewing: bool,
    /// Leases to give back (deliveries this node will not attempt).
    to_release: Vec<QueueItem>,
    releasing: bool,
}

/// Deliveries claimed at most per claim.
const CLAIM_MAX: usize = 512;

/// Settles in flight at once per channel actor when nodes share the work.
const SHARED_SETTLES: usize = 2;

/// In-app deliveries settled per commit.
const IN_APP_BATCH: usize = 512;
/// In-app batches in progress at once: one committing while the previous one
/// waits for its flush.
const IN_APP_PARALLEL: usize = 2;

/// Retry policy of a channel (docs/API.md §9, `config.retry`).
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    pub max_attempts: u32,
    pub base_seconds: f64,
    pub max_seconds: f64,
}

impl RetryPolicy {
    pub fn from_config(cfg: &serde_json::Map<String, serde_json::Value>) -> Self {
        let r = cfg.get("retry").and_then(|r| r.as_object());
        let num = |k: &str| r.and_then(|r| r.get(k)).and_then(|v| v.as_f64());
        RetryPolicy {
            max_attempts: num("max_attempts").map(|n| n as u32).unwrap_or(8).max(1),
            base_seconds: num("base_seconds").unwrap_or(1.0),
            max_seconds: num("max_seconds").unwrap_or(300.0),
        }
    }

    /// Exponential backoff with full jitter after attempt number `attempt` (1-based),
    /// never shorter than a provider's Retry-After, never longer than the cap.
    pub fn delay(&self, attempt: u32, retry_after: Option<Duration>) -> Duration {
        let exp = self.base_seconds * 2f64.powi(attempt.saturating_sub(1).min(30) as i32);
        let cap = exp.min(self.max_seconds);
        let mut secs = rand::thread_rng().gen_range(0.0..=cap.max(0.0));
        if let Some(ra) = retry_after {
            secs = secs.max(ra.as_secs_f64().min(self.max_seconds));
        }
        Duration::from_secs_f64(secs)
    }
}

#[derive(Message)]
#[rtype(result = "()")]
struct Finished(QueueItem, Option<Outcome>);

impl ChannelActor {
    pub fn new(engine: Engine, ct: ChannelType) -> Self {
        ChannelActor {
            engine,
            ct,
            heap: BinaryHeap::new(),
            ready: HashMap::new(),
            turn: VecDeque::new(),
            ready_len: 0,
            project_inflight: HashMap::new(),
            known: HashMap::new(),
            inflight: 0,
            done: vec![],
            flush_scheduled: false,
            flushing: 0,
            in_app_batches: 0,
            warned: HashSet::new(),
            store_generation: 0,
            shared: false,
            next_claim: 0,
            claiming: false,
            next_renew: 0,
            renewing: false,
            to_release: vec![],
            releasing: false,
        }
    }

    /// A delivery this node holds (shared work): due now if it was claimed
    /// (due by the stored clock) or is due by the project's test clock as
    /// this node knows it; handed back if its test clock has not reached it.
    fn push_held(&mut self, q: QueueItem, claimed: bool) {
        let now = Timestamp::now().millis();
        let due = if claimed {
            now
        } else if let Some(t) = self.engine.inner.clocks.test_now(&q.project) {
            if q.due_ms > t.millis() {
                self.to_release.push(q);
                return;
            }
            now
        } else {
            q.due_ms
        };
        // as `push`: an earlier due time supersedes a later heap entry
        let earlier = match self.known.get(&q.delivery_id) {
            None => true,
            Some(&d) => due < d,
        };
        if earlier {
            self.known.insert(q.delivery_id, due);
            self.heap.push(Reverse(Due(due, q.delivery_id, q.project)));
        }
    }

    /// Shared work, every tick: hands back, renews and claims as due.
    fn share(&mut self, ctx: &mut Context<Self>) {
        let now = Timestamp::now().millis();
        // A hand-back and a claim never overlap: a release that reached
        // the database after a claim of the same delivery would free the
        // lease of an attempt in flight, whose outcome would then go
        // unrecorded and the delivery be claimed and made again.
        if !self.to_release.is_empty() && !self.releasing && !self.claiming {
            self.releasing = true;
            let items = std::mem::take(&mut self.to_release);
            let (store, ct) = (self.engine.storage().clone(), self.ct);
            let fut = async move {
                tokio::task::spawn_blocking(move || {
                    store.shared_work()?.release(Release::Queued(ct, &items))
                })
                .await
                .unwrap_or_else(|_| Err(crate::error::Error::internal("release panicked")))
            };
            ctx.spawn(fut.into_actor(self).map(move |res, act, _| {
                act.releasing = false;
                match res {
                    // Due by the stored clock, it is claimed by whichever
                    // node sees it so: tell them.
                    Ok(()) => act.engine.announce_work(act.ct, Timestamp::now().millis()),
                    Err(e) => tracing::warn!(error = %e, "cannot hand deliveries back; their leases expire instead"),
                }
            }));
        }
        if now >= self.next_renew && !self.renewing {
            self.renewing = true;
            let lease = self.engine.storage().lease();
            self.next_renew = now + (lease.as_millis() as i64 / 3).max(200);
            let (store, ct) = (self.engine.storage().clone(), self.ct);
            let fut = async move {
                tokio::task::spawn_blocking(move || {
                    store.shared_work()?.renew(Leased::Queue(ct), now)
                })
                .await
                .unwrap_or_else(|_| Err(crate::error::Error::internal("renewal panicked")))
            };
            ctx.spawn(fut.into_actor(self).map(|res, act, _| {
                act.renewing = false;
                if let Err(e) = res {
                    tracing::warn!(channel_type = act.ct.as_str(), error = %e, "cannot renew delivery leases");
                }
            }));
        }
        if now < self.next_claim || self.claiming || self.releasing {
            return;
        }
        // Its own due work first: a node claims what it has room for.
        if matches!(self.heap.peek(), Some(Reverse(Due(due, _, _))) if *due <= now) {
            return;
        }
        let room = if self.ct == ChannelType::InApp {
            (IN_APP_BATCH * IN_APP_PARALLEL).saturating_sub(self.inflight)
        } else {
            self.engine
                .inner
                .config
                .concurrency
                .max(1)
                .saturating_sub(self.inflight + self.ready_len)
        };
        let limit = room.min(CLAIM_MAX);
        let poll = self.engine.inner.config.claim_poll.as_millis() as i64;
        if limit == 0 {
            self.next_claim = now + poll.min(100);
            return;
        }
        self.claiming = true;
        let (store, ct) = (self.engine.storage().clone(), self.ct);
        let fut = async move {
            tokio::task::spawn_blocking(move || store.shared_work()?.claim_queue(ct, now, limit))
                .await
                .unwrap_or_else(|_| Err(crate::error::Error::internal("claim panicked")))
        };
        ctx.spawn(fut.into_actor(self).map(move |res, act, ctx| {
            act.claiming = false;
            let now = Timestamp::now().millis();
            match res {
                Ok(items) => {
                    // a full claim: more may be waiting, claim again soon
                    act.next_claim = act.next_claim.min(if items.len() >= limit {
                        now
                    } else {
                        now + poll
                    });
                    if !items.is_empty() {
                        tracing::debug!(channel_type = act.ct.as_str(), n = items.len(), "claimed deliveries");
                    }
                    // Claimed again before a hand-back went out: the
                    // lease is this claim's now, not to be handed back.
                    if !act.to_release.is_empty() {
                        let ids: HashSet<Uuid> = items.iter().map(|q| q.delivery_id).collect();
                        act.to_release.retain(|r| !ids.contains(&r.delivery_id));
                    }
                    for q in items {
                        act.push_held(q, true);
                    }
                    act.pump(ctx);
                }
                Err(e) => {
                    act.next_claim = act.next_claim.min(now + poll);
                    tracing::warn!(channel_type = act.ct.as_str(), error = %e, "cannot claim deliveries");
                }
            }
        }));
        // Until the claim answers; a wake meanwhile claims again after it.
        self.next_claim = i64::MAX;
    }

    fn push(&mut self, q: QueueItem) {
        if self.shared {
            return self.push_held(q, false);
        }
        // A test-clock project's delivery not yet due in project time waits
        // parked until an advance hands it back (see `delivery::clock`).
        let Some(q) = self.engine.inner.clocks.admit(q) else {
            return;
        };
        let earlier = match self.known.get(&q.delivery_id) {
            None => true,
            Some(&due) => q.due_ms < due,
        };
        if earlier {
            self.known.insert(q.delivery_id, q.due_ms);
            self.heap
                .push(Reverse(Due(q.due_ms, q.delivery_id, q.project)));
        }
    }

    fn reload(&mut self) {
        match self.engine.storage().queue_items(self.ct) {
            Ok(items) => {
                for q in items {
                    self.push(q);
                }
            }
            Err(e) => {
                tracing::error!(channel_type = self.ct.as_str(), error = %e, "cannot reload delivery queue")
            }
        }
    }

    /// Warns once per channel that its provider refused the credentials.
    /// The delivery (for its channel) is read on the blocking pool: on
    /// PostgreSQL a read can wait for a pooled connection, and this thread
    /// runs the node's other channel actors and users' frames meanwhile.
    fn warn_unauthorized(&mut self, q: &QueueItem, ctx: &mut Context<Self>) {
        let (store, project, id) = (self.engine.storage().clone(), q.project, q.delivery_id);
        let read = tokio::task::spawn_blocking(move || store.delivery(&project, &id));
        ctx.spawn(read.into_actor(self).map(|read, act, _| {
            if let Ok(Ok(Some(d))) = read {
                if act.warned.insert(d.channel_id) {
                    tracing::warn!(channel_id = %d.channel_id, "provider answered 401/403: check the channel's credentials");
                }
            }
        }));
    }

    fn pump(&mut self, ctx: &mut Context<Self>) {
        metrics::gauge!("herald_delivery_queue_depth", "channel_type" => self.ct.as_str())
            .set((self.heap.len() + self.ready_len + self.inflight) as f64);
        let now = Timestamp::now().millis();
        if self.ct == ChannelType::InApp {
            return self.pump_in_app(now, ctx);
        }
        // Due deliveries move to their project's ready queue.
        while let Some(Reverse(Due(due, _, _))) = self.heap.peek() {
            if *due > now {
                break;
            }
            let Reverse(Due(due, id, project)) = self.heap.pop().expect("peeked");
            if self.known.get(&id) != Some(&due) {
                continue; // superseded by an earlier entry
            }
            let q = QueueItem {
                project,
                delivery_id: id,
                channel_type: self.ct,
                due_ms: due,
            };
            let queue = self.ready.entry(project).or_default();
            if queue.is_empty() {
                self.turn.push_back(project);
            }
            queue.push_back(q);
            self.ready_len += 1;
        }
        let limit = self.engine.inner.config.concurrency.max(1);
        let per_project = self.engine.inner.config.project_inflight.max(1);
        // Round-robin: one attempt per project per turn; a project at its cap
        // keeps its place and is passed over until one of its attempts ends.
        let mut passed = 0;
        while self.inflight < limit && passed < self.turn.len() {
            let project = self.turn.pop_front().expect("non-empty");
            let busy = self.project_inflight.get(&project).copied().unwrap_or(0);
            if busy >= per_project {
                self.turn.push_back(project);
                passed += 1;
                continue;
            }
            passed = 0;
            let Some(queue) = self.ready.get_mut(&project) else {
                continue;
            };
            let Some(q) = queue.pop_front() else {
                self.ready.remove(&project);
                continue;
            };
            if queue.is_empty() {
                self.ready.remove(&project);
            } else {
                self.turn.push_back(project);
            }
            self.ready_len -= 1;
            self.inflight += 1;
            *self.project_inflight.entry(project).or_default() += 1;
            self.attempt(q, ctx);
        }
    }

    fn pump_in_app(&mut self, now: i64, ctx: &mut Context<Self>) {
        while self.in_app_batches < IN_APP_PARALLEL {
            let mut batch = Vec::new();
            while batch.len() < IN_APP_BATCH {
                match self.heap.peek() {
                    Some(Reverse(Due(due, _, _))) if *due <= now => {}
                    _ => break,
                }
                let Reverse(Due(due, id, project)) = self.heap.pop().expect("peeked");
                if self.known.get(&id) != Some(&due) {
                    continue; // superseded by an earlier entry
                }
                batch.push(QueueItem {
                    project,
                    delivery_id: id,
                    channel_type: self.ct,
                    due_ms: due,
                });
            }
            if batch.is_empty() {
                return;
            }
            self.in_app_batches += 1;
            self.inflight += batch.len();
            self.settle_in_app(batch, ctx);
        }
    }

    fn settle_in_app(&mut self, batch: Vec<QueueItem>, ctx: &mut Context<Self>) {
        let engine = self.engine.clone();
        let ct = self.ct;
        let (poisoned, items): (Vec<QueueItem>, Vec<QueueItem>) =
            batch.iter().cloned().partition(|q| engine.poisoned(q));
        engine.journal_begin(&items);
        let fut = async move {
            if engine.inner.config.panic_once.contains(&ct)
                && engine.inner.panicked.insert(ct, ()).is_none()
            {
                panic!("injected fault: {} delivery actor panics once", ct.as_str());
            }
            if !poisoned.is_empty() {
                let e = engine.clone();
                let failed: Vec<_> = poisoned
                    .into_iter()
                    .map(|q| (q, super::poison::crashed()))
                    .collect();
                let (_, runs, pulled) = tokio::task::spawn_blocking(move || {
                    e.storage().settle(&failed, e.attempt_notes())
                })
                .await
                .map_err(|_| {
                    crate::error::Error::internal("settling crashed deliveries panicked")
                })??;
                engine.runs_processed(runs);
                engine.pulled(pulled);
            }
            let store = engine.storage().clone();
            let e = engine.clone();
            let res = match tokio::task::spawn_blocking(move || {
                attempt::deliver_in_app(&e, &*store, &items)
            })
            .await
            {
                Ok(r) => r,
                // a panic in the store: surface it as this actor's crash
                Err(e) => std::panic::resume_unwind(e.into_panic()),
            };
            // `again`: deliveries whose presence could not be read, queued again.
            let (out, mut again) = res?;
            let runs = out.runs;
            let pulled = out.pulled;
            engine
                .release(out.frames, |e| {
                    e.runs_processed(runs);
                    e.pulled(pulled);
                })
                .await?;
            // Deliveries that wait for their batch: rendered with it (or
            // waiting longer), then queued again; and those their route
            // holds (`delivery::route::at_due`).
            again.extend(out.requeued);
            if !out.batched.is_empty() {
                let store = engine.storage().clone();
                let e = engine.clone();
                let batched = out.batched;
                let res =
                    tokio::task::spawn_blocking(move || batch_due(&e, &*store, batched)).await;
                match res {
                    Ok(r) => again.extend(r?),
                    Err(e) => std::panic::resume_unwind(e.into_panic()),
                }
            }
            Ok::<Vec<QueueItem>, crate::error::Error>(again)
        };
        let span = tracing::info_span!("in_app_batch", deliveries = batch.len());
        let fut = tracing::Instrument::instrument(fut, span);
        ctx.spawn(AssertUnwindSafe(fut).catch_unwind().into_actor(self).map(
            move |res, act, ctx| {
                act.engine.journal_end(&batch);
                act.in_app_batches -= 1;
                act.inflight = act.inflight.saturating_sub(batch.len());
                match res {
                    Ok(Ok(again)) => {
                        for q in &batch {
                            act.known.remove(&q.delivery_id);
                        }
                        for q in again {
                            act.push(q);
                        }
                        act.pump(ctx);
                    }
                    Ok(Err(e)) => {
                        tracing::error!(error = %e, "cannot settle in_app deliveries; retrying in 1 s");
                        let at = Timestamp::now().millis() + 1000;
                        for q in batch {
                            act.known.remove(&q.delivery_id);
                            act.push(QueueItem { due_ms: at, ..q });
                        }
                    }
                    Err(_) => {
                        tracing::error!(
                            channel_type = act.ct.as_str(),
                            "delivery actor crashed; supervisor restarts it"
                        );
                        ctx.stop();
                    }
                }
            },
        ));
    }

    fn attempt(&mut self, q: QueueItem, ctx: &mut Context<Self>) {
        let engine = self.engine.clone();
        let ct = self.ct;
        let poisoned = engine.poisoned(&q);
        if !poisoned {
            engine.journal_begin(std::slice::from_ref(&q));
        }
        let fut = async move {
            if engine.inner.config.panic_once.contains(&ct)
                && engine.inner.panicked.insert(ct, ()).is_none()
            {
                panic!("injected fault: {} delivery actor panics once", ct.as_str());
            }
            if poisoned {
                return Some(super::poison::crashed());
            }
            external_attempt(engine, q).await
        };
        let span = tracing::info_span!("delivery", delivery_id = %q.delivery_id, project_id = %q.project, channel_type = ct.as_str());
        let fut = tracing::Instrument::instrument(fut, span);
        ctx.spawn(AssertUnwindSafe(fut).catch_unwind().into_actor(self).map(
            move |res, act, ctx| {
                act.engine.journal_end(std::slice::from_ref(&q));
                act.inflight = act.inflight.saturating_sub(1);
                if let std::collections::hash_map::Entry::Occupied(mut e) =
                    act.project_inflight.entry(q.project)
                {
                    *e.get_mut() -= 1;
                    if *e.get() == 0 {
                        e.remove();
                    }
                }
                match res {
                    Ok(outcome) => ctx.notify(Finished(q, outcome)),
                    Err(_) => {
                        tracing::error!(
                            channel_type = act.ct.as_str(),
                            "delivery actor crashed; supervisor restarts it"
                        );
                        ctx.stop();
                    }
                }
            },
        ));
    }

    fn flush(&mut self, ctx: &mut Context<Self>) {
        self.flush_scheduled = false;
        // Shared work: a second settle may start while one is in flight
        // (each its own transaction on the database; they take their rows
        // in one order, so neither waits on the other in a cycle), not one
        // batch waiting for the round trips and commit of the one before.
        let most = if self.shared { SHARED_SETTLES } else { 1 };
        if self.done.is_empty() || self.flushing >= most {
            return;
        }
        self.flushing += 1;
        let batch = std::mem::take(&mut self.done);
        let engine = self.engine.clone();
        let fut = async move {
            let kept = batch.clone();
            // A delivery moved to a backup channel is tried there only once
            // the move is durable: a crash before then must not leave the
            // backup's send behind a settle the store forgot.
            let moved = batch
                .iter()
                .any(|(_, o)| matches!(o, Outcome::Failover { .. }));
            let e = engine.clone();
            let settled = tokio::task::spawn_blocking(move || {
                engine.storage().settle(&batch, engine.attempt_notes())
            });
            match settled.await {
                Ok(Ok(r)) if moved => (e.durable().await.map(|()| r), kept),
                Ok(r) => (r, kept),
                Err(_) => (
                    Err(crate::error::Error::internal("recording outcomes panicked")),
                    kept,
                ),
            }
        };
        ctx.spawn(fut.into_actor(self).map(|(res, batch), act, ctx| {
            act.flushing = act.flushing.saturating_sub(1);
            act.flushed(res, batch, ctx);
            if !act.done.is_empty() && !act.flush_scheduled {
                act.flush(ctx);
            }
        }));
    }

    fn flushed(
        &mut self, res: crate::error::Result<crate::storage::Finished>,
        batch: Vec<(QueueItem, Outcome)>, ctx: &mut Context<Self>,
    ) {
        match res {
            Ok((written, runs, pulled)) => {
                // Shared work: an attempt whose lease was taken over is not
                // recorded (`QueueRepo::settle`), nor retried here.
                let recorded: Option<HashSet<Uuid>> =
                    self.shared.then(|| written.iter().map(|d| d.id).collect());
                // A wait the settle decided again and made sooner (a route
                // hop settled meanwhile) comes back among `pulled`, its lease
                // kept (`QueueRepo::settle`): it waits here until then, not
                // until the time its attempt first decided.
                let mut sooner: HashMap<Uuid, i64> = HashMap::new();
                for p in &pulled {
                    let e = sooner.entry(p.delivery_id).or_insert(p.due_ms);
                    *e = (*e).min(p.due_ms);
                }
                for (q, o) in &batch {
                    match o {
                        Outcome::Retry { .. } | Outcome::Wait { .. } | Outcome::Failover { .. }
                            if recorded
                                .as_ref()
                                .is_some_and(|r| !r.contains(&q.delivery_id)) =>
                        {
                            self.known.remove(&q.delivery_id);
                        }
                        Outcome::Retry { at, .. }
                        | Outcome::Wait { at }
                        | Outcome::Failover { at, .. } => {
                            self.known.remove(&q.delivery_id);
                            let due = sooner.get(&q.delivery_id).copied().unwrap_or(i64::MAX);
                            self.push(QueueItem {
                                due_ms: at.millis().min(due),
                                ..*q
                            });
                        }
                        _ => {
                            self.known.remove(&q.delivery_id);
                        }
                    }
                }
                self.engine.runs_processed(runs);
                self.engine.pulled(pulled);
            }
            Err(e) => {
                // The attempts were made: keep their outcomes and record them
                // again in 1 s (attempting them again would send each twice
                // once the database is back).
                tracing::error!(error = %e, "cannot record delivery outcomes; retrying in 1 s");
                let later = std::mem::replace(&mut self.done, batch);
                self.done.extend(later);
                self.flush_scheduled = true;
                ctx.run_later(Duration::from_secs(1), |a, ctx| a.flush(ctx));
            }
        }
        self.pump(ctx);
    }
}

impl Actor for ChannelActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.set_mailbox_capacity(usize::MAX >> 2);
        self.shared = self.engine.storage().shares_work();
        if self.shared {
            // Leases this node took before a restart of this actor are
            // forgotten with its memory: given back, then claimed anew.
            let released = self
                .engine
                .storage()
                .shared_work()
                .and_then(|w| w.release(Release::Queue(self.ct)));
            if let Err(e) = released {
                tracing::warn!(channel_type = self.ct.as_str(), error = %e, "cannot hand leases back; they expire instead");
            }
            self.next_claim = 0;
        } else {
            self.reload();
        }
        self.store_generation = self.engine.storage().health_status().generation;
        ctx.run_interval(Duration::from_millis(20), |a, ctx| {
            // The store reopened after a disk error: outcomes applied but never
            // flushed are gone from it, so their deliveries are queued there
            // again; reload picks them up (deliveries still known are skipped).
            // Shared work: the database answers again; claim what is due.
            let g = a.engine.storage().health_status().generation;
            if g != a.store_generation {
                a.store_generation = g;
                if a.shared {
                    a.next_claim = 0;
                } else {
                    a.reload();
                }
            }
            if a.shared {
                a.share(ctx);
            }
            a.pump(ctx)
        });
        self.pump(ctx);
    }
}

impl Supervised for ChannelActor {
    fn restarting(&mut self, _: &mut Context<Self>) {
        // Everything in memory may be inconsistent after a crash: forget it; the
        // queue tree in sled is the truth and `started` reloads it.
        self.heap.clear();
        self.ready.clear();
        self.turn.clear();
        self.ready_len = 0;
        self.project_inflight.clear();
        self.known.clear();
        self.inflight = 0;
        self.done.clear();
        self.flush_scheduled = false;
        self.flushing = 0;
        self.in_app_batches = 0;
        self.claiming = false;
        self.renewing = false;
        self.releasing = false;
        self.to_release.clear();
        tracing::warn!(
            channel_type = self.ct.as_str(),
            "delivery actor restarted; queue reloaded from store"
        );
    }
}

impl Handler<Dispatch> for ChannelActor {
    type Result = ();
    fn handle(&mut self, msg: Dispatch, ctx: &mut Context<Self>) {
        for q in msg.0 {
            self.push(q);
        }
        self.pump(ctx);
    }
}

/// Work of this channel type is due at `.0` (real ms): claim then at the
/// latest (`Engine::wake_queue`).
#[derive(Message, Debug, Clone, Copy)]
#[rtype(result = "()")]
pub struct Wake(pub i64);

impl Handler<Wake> for ChannelActor {
    type Result = ();
    fn handle(&mut self, Wake(at): Wake, _: &mut Context<Self>) {
        // During a claim too: it may have missed the work, so once more.
        if self.shared {
            self.next_claim = self.next_claim.min(at);
        }
    }
}

impl Handler<Finished> for ChannelActor {
    type Result = ();
    fn handle(&mut self, Finished(q, o): Finished, ctx: &mut Context<Self>) {
        match o {
            None => {
                // Settled elsewhere (in-app: by the user actor) or gone.
                self.known.remove(&q.delivery_id);
                if self.shared {
                    self.to_release.push(q);
                }
                self.pump(ctx);
            }
            Some(Outcome::Retry { at, .. } | Outcome::Wait { at })
                if self.ct == ChannelType::InApp =>
            {
                self.known.remove(&q.delivery_id);
                self.push(QueueItem {
                    due_ms: at.millis(),
                    ..q
                });
            }
            Some(o) => {
                if let Outcome::Failed(e) = &o {
                    if e.code == DeliveryErrorCode::ProviderUnauthorized.as_str() {
                        self.warn_unauthorized(&q, ctx);
                    }
                }
                self.done.push((q, o));
                if self.done.len() >= 512 {
                    self.flush(ctx);
                } else if !self.flush_scheduled {
                    self.flush_scheduled = true;
                    ctx.run_later(Duration::from_millis(2), |a, ctx| a.flush(ctx));
                }
            }
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_is_jittered_capped_and_honours_retry_after() {
        let p = RetryPolicy {
            max_attempts: 8,
            base_seconds: 1.0,
            max_seconds: 10.0,
        };
        for attempt in 1..=8 {
            let cap = (2f64.powi(attempt as i32 - 1)).min(10.0);
            for _ in 0..50 {
                let d = p.delay(attempt, None).as_secs_f64();
                assert!(
                    (0.0..=cap).contains(&d),
                    "attempt {attempt}: {d} not in [0, {cap}]"
                );
            }
        }
        let d = p.delay(1, Some(Duration::from_secs(5))).as_secs_f64();
        assert!(d >= 5.0, "Retry-After is a floor");
        let d = p.delay(1, Some(Duration::from_secs(500))).as_secs_f64();
        assert!(d <= 10.0, "but never above max_seconds");
    }
}
