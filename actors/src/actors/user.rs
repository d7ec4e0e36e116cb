//! `UserActor`: one per active user. Every change to a user's feed goes through
//! it — new in-app entries, PATCHes, `seen_all`/`read_all` — so the feed counts
//! are updated without races and every change gets the next event `seq`. Each
//! change, its event and the new counts are one commit; only once that commit is
//! durable are the frames pushed to the user's sockets (in `seq` order) and the
//! caller answered. It stops after a few idle minutes without sockets; its state is
//! in sled.

use super::engine::Engine;
use crate::error::{Error, Result};
use crate::model::{Delivery, DeliveryError, FeedCounts};
use crate::store::{FeedUpdate, Outcome, QueueItem, Writes};
use actix::prelude::*;
use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};
use uuid::Uuid;

const IDLE: Duration = Duration::from_secs(300);

/// One server → client text frame of the live feed (JSON).
#[derive(Message, Clone, Debug)]
#[rtype(result = "()")]
pub struct LiveFrame(pub Arc<str>);

/// A socket joins: `hello`, then the events after `since` (or `reset`), are sent
/// to it before any live event.
#[derive(Message, Clone)]
#[rtype(result = "Result<()>")]
pub struct Connect {
    pub id: u64,
    pub socket: Recipient<LiveFrame>,
    pub since: Option<u64>,
}

#[derive(Message, Clone, Copy)]
#[rtype(result = "()")]
pub struct Disconnect {
    pub id: u64,
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

pub struct UserActor {
    engine: Engine,
    project: Uuid,
    user: Uuid,
    last_used: Instant,
    sockets: HashMap<u64, Recipient<LiveFrame>>,
    /// Highest seq pushed to sockets (every event up to it is durable).
    pushed_seq: u64,
    /// Counts as of `pushed_seq`, for `hello`.
    pushed_meta: Value,
    /// Committed, not yet durable: (flush ticket, frames in seq order).
    pending: VecDeque<(u64, Vec<(u64, Arc<str>, Value)>)>,
}

fn frame(kind: &str, seq: u64, entry: Value, counts: &FeedCounts) -> (Arc<str>, Value) {
    let meta = counts.view();
    let f = json!({"type": kind, "seq": seq, "entry": entry, "meta": meta});
    (Arc::from(f.to_string()), meta)
}

impl UserActor {
    pub fn new(engine: Engine, project: Uuid, user: Uuid) -> Self {
        UserActor {
            engine,
            project,
            user,
            last_used: Instant::now(),
            sockets: HashMap::new(),
            pushed_seq: 0,
            pushed_meta: FeedCounts::default().view(),
            pending: VecDeque::new(),
        }
    }

    fn actor_json(&self, d: &Delivery) -> Value {
        d.actor_id
            .and_then(|a| self.engine.store().user(&self.project, &a).ok().flatten())
            .map(|u| serde_json::to_value(u).unwrap_or(Value::Null))
            .unwrap_or(Value::Null)
    }

    /// Stages one event per changed entry and the counts; returns the frames.
    fn stage_events(
        &self,
        w: &mut Writes,
        kind: &str,
        entries: &[Delivery],
        counts: &mut FeedCounts,
    ) -> Result<Vec<(u64, Arc<str>, Value)>> {
        let store = self.engine.store();
        let mut frames = Vec::with_capacity(entries.len());
        for d in entries {
            counts.seq += 1;
            let (f, meta) = frame(kind, counts.seq, d.feed_view(self.actor_json(d)), counts);
            store.stage_event(w, &self.project, &self.user, counts.seq, f.as_bytes())?;
            frames.push((counts.seq, f, meta));
        }
        store.stage_feed_counts(w, &self.project, &self.user, counts);
        Ok(frames)
    }

    /// Pushes every pending frame whose commit is durable (`ticket` and before).
    fn release(&mut self, ticket: u64) {
        while self.pending.front().is_some_and(|(t, _)| *t <= ticket) {
            let (_, frames) = self.pending.pop_front().expect("checked");
            for (seq, f, meta) in frames {
                self.pushed_seq = seq;
                self.pushed_meta = meta;
                self.sockets.retain(|_, s| s.connected());
                for s in self.sockets.values() {
                    s.do_send(LiveFrame(f.clone()));
                }
            }
        }
    }

    /// Waits for `ticket`, releases pending frames, then resolves with `value`.
    fn after_durable<T: 'static>(
        &self,
        ticket: u64,
        value: T,
    ) -> ResponseActFuture<Self, Result<T>> {
        let store = self.engine.store().clone();
        Box::pin(
            async move { store.wait_durable(ticket).await }
                .into_actor(self)
                .map(move |r, act, _| {
                    r?;
                    act.release(ticket);
                    Ok(value)
                }),
        )
    }

    fn fail<T: 'static>(&self, e: Error) -> ResponseActFuture<Self, Result<T>> {
        Box::pin(async move { Err(e) }.into_actor(self))
    }
}

impl Actor for UserActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        if let Ok(c) = self.engine.store().feed_counts(&self.project, &self.user) {
            self.pushed_seq = c.seq;
            self.pushed_meta = c.view();
        }
        ctx.run_interval(Duration::from_secs(30), |a, ctx| {
            a.sockets.retain(|_, s| s.connected());
            if a.sockets.is_empty() && a.pending.is_empty() && a.last_used.elapsed() > IDLE {
                ctx.stop();
            }
        });
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.engine
            .inner
            .users
            .remove_if(&(self.project, self.user), |_, a| !a.connected());
    }
}

impl Handler<Connect> for UserActor {
    type Result = Result<()>;

    fn handle(&mut self, m: Connect, _: &mut Context<Self>) -> Result<()> {
        self.last_used = Instant::now();
        let latest = self.pushed_seq;
        let hello = json!({"type": "hello", "seq": latest, "meta": self.pushed_meta});
        m.socket.do_send(LiveFrame(Arc::from(hello.to_string())));
        let reset = || {
            LiveFrame(Arc::from(
                json!({"type": "reset", "seq": latest}).to_string(),
            ))
        };
        match m.since {
            None => {}
            Some(s) if s == latest => {}
            Some(s) if s > latest => m.socket.do_send(reset()),
            Some(s) => {
                match self
                    .engine
                    .store()
                    .events_between(&self.project, &self.user, s, latest)?
                {
                    Some(frames) => {
                        for f in frames {
                            let text = String::from_utf8(f)
                                .map_err(|_| Error::internal("corrupt event"))?;
                            m.socket.do_send(LiveFrame(Arc::from(text)));
                        }
                    }
                    None => m.socket.do_send(reset()),
                }
            }
        }
        self.sockets.insert(m.id, m.socket);
        Ok(())
    }
}

impl Handler<Disconnect> for UserActor {
    type Result = ();
    fn handle(&mut self, m: Disconnect, _: &mut Context<Self>) {
        self.sockets.remove(&m.id);
        self.last_used = Instant::now();
    }
}

impl Handler<DeliverInApp> for UserActor {
    type Result = ResponseActFuture<Self, Result<()>>;

    fn handle(&mut self, DeliverInApp(q): DeliverInApp, _: &mut Context<Self>) -> Self::Result {
        self.last_used = Instant::now();
        let store = self.engine.store().clone();
        let work =
            |act: &mut Self| -> Result<Option<(Vec<(Uuid, Uuid)>, Vec<(u64, Arc<str>, Value)>)>> {
                let Some(d) = store.delivery(&q.project, &q.delivery_id)? else {
                    return Ok(None);
                };
                if d.status.is_final() {
                    return Ok(None);
                }
                let mut w = Writes::new();
                let mut frames = vec![];
                let outcome = if store.user(&q.project, &d.recipient_id)?.is_some() {
                    let mut counts = store.feed_counts(&q.project, &d.recipient_id)?;
                    store.stage_feed_insert(&mut w, &q.project, &d, &mut counts);
                    let mut sent = d.clone();
                    sent.sent_at = Some(crate::model::Timestamp::now());
                    frames =
                        act.stage_events(&mut w, "feed_entry.created", &[sent], &mut counts)?;
                    Outcome::Sent { outcomes: None }
                } else {
                    Outcome::Skipped(DeliveryError {
                        code: "missing_address".into(),
                        message: "the recipient was deleted".into(),
                    })
                };
                let (_, runs) = store.finish_deliveries(&[(q, outcome)], w)?;
                Ok(Some((runs, frames)))
            };
        match work(self) {
            Ok(None) => Box::pin(async { Ok(()) }.into_actor(self)),
            Ok(Some((runs, frames))) => {
                let ticket = store.durable_ticket();
                if !frames.is_empty() {
                    self.pending.push_back((ticket, frames));
                }
                let engine = self.engine.clone();
                Box::pin(self.after_durable(ticket, ()).map(move |r, _, _| {
                    if r.is_ok() {
                        engine.runs_processed(runs);
                    }
                    r
                }))
            }
            Err(e) => self.fail(e),
        }
    }
}

impl Handler<UpdateEntry> for UserActor {
    type Result = ResponseActFuture<Self, Result<(Delivery, FeedCounts)>>;

    fn handle(&mut self, m: UpdateEntry, _: &mut Context<Self>) -> Self::Result {
        self.last_used = Instant::now();
        let store = self.engine.store().clone();
        let mut w = Writes::new();
        let out = match store.feed_update(&mut w, &self.project, &self.user, &m.entry, m.update) {
            Ok(o) => o,
            Err(e) => return self.fail(e),
        };
        if !out.changed {
            return Box::pin(async move { Ok((out.entry, out.counts)) }.into_actor(self));
        }
        let mut counts = out.counts;
        let frames = match self.stage_events(
            &mut w,
            "feed_entry.updated",
            std::slice::from_ref(&out.entry),
            &mut counts,
        ) {
            Ok(f) => f,
            Err(e) => return self.fail(e),
        };
        if let Err(e) = store.commit(w) {
            return self.fail(e);
        }
        let ticket = store.durable_ticket();
        self.pending.push_back((ticket, frames));
        self.after_durable(ticket, (out.entry, counts))
    }
}

impl Handler<MarkAll> for UserActor {
    type Result = ResponseActFuture<Self, Result<(usize, FeedCounts)>>;

    fn handle(&mut self, m: MarkAll, _: &mut Context<Self>) -> Self::Result {
        self.last_used = Instant::now();
        let store = self.engine.store().clone();
        let mut w = Writes::new();
        let (updated, mut counts) =
            match store.feed_mark_all(&mut w, &self.project, &self.user, m.read) {
                Ok(x) => x,
                Err(e) => return self.fail(e),
            };
        if updated.is_empty() {
            return Box::pin(async move { Ok((0, counts)) }.into_actor(self));
        }
        let frames = match self.stage_events(&mut w, "feed_entry.updated", &updated, &mut counts) {
            Ok(f) => f,
            Err(e) => return self.fail(e),
        };
        if let Err(e) = store.commit(w) {
            return self.fail(e);
        }
        let ticket = store.durable_ticket();
        self.pending.push_back((ticket, frames));
        self.after_durable(ticket, (updated.len(), counts))
    }
}
