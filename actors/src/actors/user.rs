//! `UserActor`: one per active user. It holds the user's live sockets and
//! applies the user's own feed changes (PATCHes, `seen_all`/`read_all`); new
//! entries are written by the in-app delivery actor in batches across users
//! (`QueueRepo::deliver_in_app`), which hands the resulting frames over
//! (`PushFrames`). Both writers hold the user's feed lock while they assign
//! `seq`s, and every frame reaches the sockets only once its commit is durable,
//! strictly in `seq` order: frames that arrive ahead of a predecessor wait in a
//! small reorder buffer, and a gap that does not close is filled from the event
//! log. It stops after a few idle minutes without sockets; its state is in the
//! store.
//!
//! In a cluster (`crate::bus`) frames committed on other nodes arrive the same
//! way, over the bus, and the actor publishes its own changes' frames there.
//! Since the bus may lose frames with no later one to reveal the gap, the
//! node compares the positions of all its socketed users with the log when
//! the bus comes back and periodically (`Engine::check_positions`, a thousand
//! users per read), and tells each actor its latest `seq` (`Position`); an
//! actor still behind a moment later reads what it missed.

use super::engine::Engine;
use crate::error::{Error, Result};
use crate::model::{Delivery, FeedCounts};
use crate::storage::{FeedFilter, FeedMark, FeedScope, FeedUpdate, Frame, Storage, UserFrames};
use actix::prelude::*;
use dashmap::DashMap;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};
use uuid::Uuid;

const IDLE: Duration = Duration::from_secs(300);

/// One server → client text frame of the live feed (JSON).
#[derive(Message, Clone, Debug)]
#[rtype(result = "()")]
pub struct LiveFrame(pub Arc<str>);

/// Where one live socket's frames go. A socket need not be an actor: the
/// service's sockets are plain tasks with a small shared inbox (an actor and its
/// mailbox per socket cost more memory than the socket's own state), and
/// `send` must not block, since the user's actor serves every socket of the user.
pub trait LiveSink: Send + Sync {
    /// Queues a text frame for the socket (dropped if it is gone).
    fn send(&self, frame: Arc<str>);
    /// False once the socket has gone: it is then forgotten.
    fn connected(&self) -> bool;
}

impl LiveSink for Recipient<LiveFrame> {
    fn send(&self, frame: Arc<str>) {
        self.do_send(LiveFrame(frame));
    }
    fn connected(&self) -> bool {
        Recipient::connected(self)
    }
}

/// A socket joins: `hello`, then the events after `since` (or `reset`), are sent
/// to it before any live event.
#[derive(Message, Clone)]
#[rtype(result = "Result<()>")]
pub struct Connect {
    pub id: u64,
    pub socket: Arc<dyn LiveSink>,
    pub since: Option<u64>,
}

#[derive(Message, Clone, Copy)]
#[rtype(result = "()")]
pub struct Disconnect {
    pub id: u64,
}

/// Durable frames written by another writer (the in-app delivery actor), in
/// `seq` order, to push to the sockets.
#[derive(Message)]
#[rtype(result = "()")]
pub struct PushFrames(pub Vec<Frame>);

/// The latest `seq` of the user's feed in the store, as the node's position
/// check read it (in a cluster, where the bus may have lost frames; see
/// `crate::bus`).
#[derive(Message, Clone, Copy)]
#[rtype(result = "()")]
pub struct Position(pub u64);

/// Users whose positions one read of the position check covers.
const POSITIONS_PER_READ: usize = 1_000;

/// How long a gap in the frames may stay open before it is read from the log.
const GAP_WAIT: Duration = Duration::from_millis(500);

/// How long after a frame the counts per category follow (`feed.counts`):
/// a burst of frames (a `read_all`, a topic run) costs one count.
const COUNTS_WAIT: Duration = Duration::from_millis(100);

/// PATCH of one feed entry.
#[derive(Message, Clone, Copy)]
#[rtype(result = "Result<(Delivery, FeedCounts)>")]
pub struct UpdateEntry {
    pub entry: Uuid,
    pub update: FeedUpdate,
}

/// The filters of a feed list (`GET /user/v1/feed`), which `archive_all`
/// takes too: a status, a flow by id or handle and a preference category by
/// handle (one that names nothing matches no entry).
#[derive(Debug, Clone, Default)]
pub struct FeedFilters {
    pub status: FeedFilter,
    pub flow: Option<String>,
    pub category: Option<String>,
}

impl FeedFilters {
    /// The entries these filters select, the flow and the category
    /// resolved in `s`: a category is the flows (not archived) that name
    /// it now, so an entry moves tabs with its flow.
    pub(crate) fn scope(&self, s: &dyn Storage, project: &Uuid) -> Result<FeedScope> {
        let flow = match &self.flow {
            Some(key) => Some(s.flow_filter_id(project, key)?),
            None => None,
        };
        let flows = match &self.category {
            None => flow.map(|f| vec![f]),
            Some(c) => Some(
                s.live_flows(project)?
                    .into_iter()
                    .filter(|f| f.categories.contains(c))
                    .map(|f| f.id)
                    .filter(|id| flow.is_none_or(|only| only == *id))
                    .collect(),
            ),
        };
        Ok(FeedScope {
            status: self.status,
            flows,
        })
    }
}

/// `seen_all`, `read_all` or `archive_all` over the entries `filters` list.
#[derive(Message, Clone)]
#[rtype(result = "Result<(usize, FeedCounts)>")]
pub struct MarkAll {
    pub mark: FeedMark,
    pub filters: FeedFilters,
}

pub struct UserActor {
    engine: Engine,
    project: Uuid,
    user: Uuid,
    last_used: Instant,
    sockets: HashMap<u64, Arc<dyn LiveSink>>,
    /// Highest seq pushed to sockets (every event up to it is durable).
    pushed_seq: u64,
    /// Counts as of `pushed_seq`, for `hello`.
    pushed_meta: FeedCounts,
    /// Durable frames after a gap, waiting for their predecessors.
    ready: BTreeMap<u64, (Arc<str>, FeedCounts)>,
    /// Own changes committed and not yet durable.
    in_flight: usize,
    gap_check: Option<SpawnHandle>,
    /// A catch-up read of the event log is under way.
    catching_up: bool,
    /// The project declared categories when a socket last joined: the
    /// sockets then get the counts per category after frames.
    categories: bool,
    /// A `feed.counts` frame is due.
    counts_due: Option<SpawnHandle>,
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
            pushed_meta: FeedCounts::default(),
            ready: BTreeMap::new(),
            in_flight: 0,
            gap_check: None,
            catching_up: false,
            categories: false,
            counts_due: None,
        }
    }

    fn send_all(&mut self, f: &Arc<str>) {
        self.sockets.retain(|_, s| s.connected());
        for s in self.sockets.values() {
            s.send(f.clone());
        }
    }

    /// Takes durable frames and pushes every one that is next in `seq` order.
    fn accept(&mut self, frames: Vec<Frame>, ctx: &mut Context<Self>) {
        for (seq, f, meta) in frames {
            if seq > self.pushed_seq {
                self.ready.insert(seq, (f, meta));
            }
        }
        while let Some(e) = self.ready.first_entry() {
            if *e.key() != self.pushed_seq + 1 {
                break;
            }
            let (seq, (f, meta)) = e.remove_entry();
            self.pushed_seq = seq;
            self.pushed_meta = meta;
            self.send_all(&f);
            self.counts_after_frames(ctx);
        }
        if self.ready.is_empty() {
            if let Some(h) = self.gap_check.take() {
                ctx.cancel_future(h);
            }
        } else if self.gap_check.is_none() {
            // Not re-armed by later frames: a gap that stays open while frames
            // keep arriving is filled GAP_WAIT after it was first seen.
            self.gap_check = Some(ctx.run_later(GAP_WAIT, |a, ctx| {
                a.gap_check = None;
                a.fill_gap(ctx);
            }));
        }
    }

    /// Frames were pushed: unless one is due already, a `feed.counts` frame
    /// follows `COUNTS_WAIT` later, read then, when the project has
    /// categories and the user sockets. The counts per category are read
    /// from the entries (`FeedRepo::feed_counts_by_flow`), not kept with the
    /// frames' totals, so they are sent after a burst, not in each frame.
    fn counts_after_frames(&mut self, ctx: &mut Context<Self>) {
        if !self.categories || self.sockets.is_empty() || self.counts_due.is_some() {
            return;
        }
        self.counts_due = Some(ctx.run_later(COUNTS_WAIT, |a, ctx| {
            let (engine, p, u, at) = (a.engine.clone(), a.project, a.user, a.pushed_seq);
            ctx.spawn(
                async move { engine.feed_category_counts(p, u).await }
                    .into_actor(a)
                    .map(move |r, act, ctx| {
                        act.counts_due = None;
                        // Frames pushed while reading: read once more after.
                        if act.pushed_seq != at {
                            act.counts_after_frames(ctx);
                        }
                        match r {
                            Ok(Some(by)) => {
                                let meta = act.pushed_meta.view_with(Some(&by));
                                let f = json!({"type": "feed.counts", "seq": act.pushed_seq, "meta": meta});
                                act.send_all(&Arc::from(f.to_string()));
                            }
                            Ok(None) => act.categories = false,
                            Err(e) => tracing::warn!(error = %e, "feed counts per category"),
                        }
                    }),
            );
        }));
    }

    /// A frame's predecessor never arrived (its writer found no running actor
    /// when this one was starting): read the missing events from the durable log.
    fn fill_gap(&mut self, ctx: &mut Context<Self>) {
        let Some(&next) = self.ready.keys().next() else {
            return;
        };
        let (engine, p, u, after) = (
            self.engine.clone(),
            self.project,
            self.user,
            self.pushed_seq,
        );
        ctx.spawn(
            async move {
                engine.durable().await?;
                engine.storage().events_between(&p, &u, after, next - 1)
            }
            .into_actor(self)
            .map(move |r, act, ctx| {
                if act.pushed_seq != after {
                    return act.accept(vec![], ctx);
                }
                match r {
                    Ok(Some(texts)) => {
                        if act.engine.bus().is_some() {
                            metrics::counter!("herald_bus_recoveries_total").increment(1);
                            metrics::counter!("herald_bus_recovered_frames_total")
                                .increment(texts.len() as u64);
                        }
                        let frames = frames_from_log(after, texts);
                        act.accept(frames, ctx);
                    }
                    // The log no longer reaches back: the sockets resync.
                    _ => {
                        act.pushed_seq = next - 1;
                        let reset = json!({"type": "reset", "seq": next - 1}).to_string();
                        act.send_all(&Arc::from(reset));
                        act.accept(vec![], ctx);
                    }
                }
            }),
        );
    }

    /// Pushes the logged events up to `latest` (the store's position, as the
    /// node's check read it) that this actor has not (a cluster's bus may
    /// have lost their frames).
    fn catch_up(&mut self, latest: u64, ctx: &mut Context<Self>) {
        self.sockets.retain(|_, s| s.connected());
        if self.sockets.is_empty() || self.catching_up {
            return;
        }
        self.catching_up = true;
        let (engine, p, u, after) = (
            self.engine.clone(),
            self.project,
            self.user,
            self.pushed_seq,
        );
        ctx.spawn(
            async move {
                if latest <= after {
                    return Ok((latest, Some(vec![])));
                }
                let texts = engine
                    .run_live(move |s| s.events_between(&p, &u, after, latest))
                    .await?;
                Ok::<_, Error>((latest, texts))
            }
            .into_actor(self)
            .map(move |r, act, ctx| {
                act.catching_up = false;
                match r {
                    Ok((_, Some(texts))) if texts.is_empty() => {}
                    Ok((latest, Some(texts))) => {
                        let frames = frames_from_log(after, texts);
                        let missed = frames.iter().filter(|f| f.0 > act.pushed_seq).count();
                        if missed > 0 {
                            metrics::counter!("herald_bus_recoveries_total").increment(1);
                            metrics::counter!("herald_bus_recovered_frames_total")
                                .increment(missed as u64);
                            tracing::debug!(user = %act.user, missed, latest, "live feed caught up from the event log");
                        }
                        act.accept(frames, ctx);
                    }
                    // The log no longer reaches back: the sockets resync.
                    Ok((latest, None)) => {
                        if act.pushed_seq == after {
                            act.pushed_seq = latest;
                            act.ready.retain(|s, _| *s > latest);
                            let reset = json!({"type": "reset", "seq": latest}).to_string();
                            act.send_all(&Arc::from(reset));
                            act.accept(vec![], ctx);
                        }
                    }
                    Err(e) => {
                        tracing::debug!(error = %e.message, "live feed: catch-up read failed; the next check retries")
                    }
                }
            }),
        );
    }

    /// After an own change: resolves with `value` at once when nothing
    /// changed, else once the change is durable and its frames are pushed.
    fn after_change<T: 'static>(
        &mut self, frames: Vec<Frame>, value: T,
    ) -> ResponseActFuture<Self, Result<T>> {
        if frames.is_empty() {
            return Box::pin(async move { Ok(value) }.into_actor(self));
        }
        let engine = self.engine.clone();
        self.in_flight += 1;
        Box::pin(
            async move { engine.durable().await }
                .into_actor(self)
                .map(move |r, act, ctx| {
                    act.in_flight -= 1;
                    r?;
                    if let Some(bus) = act.engine.bus() {
                        bus.publish_user_frames(&act.project, &act.user, &frames);
                    }
                    act.accept(frames, ctx);
                    Ok(value)
                }),
        )
    }

    /// A change of the user's feed: written on the blocking pool like every
    /// other write (on PostgreSQL it is a round trip, which would hold this
    /// arbiter's other actors), then its frames are pushed once durable. The
    /// actor counts it in flight meanwhile, so it does not stop idle under
    /// it. Two changes may be written at once: the store orders them under
    /// the feed's lock, and `accept` pushes their frames in `seq` order.
    fn write<T, F>(&mut self, change: F) -> ResponseActFuture<Self, Result<T>>
    where
        T: Send + 'static,
        F: FnOnce(&dyn crate::storage::Storage) -> Result<(Vec<Frame>, T)> + Send + 'static,
    {
        self.last_used = Instant::now();
        self.in_flight += 1;
        let engine = self.engine.clone();
        Box::pin(
            async move { engine.run(change).await }
                .into_actor(self)
                .then(|r, act, _| {
                    act.in_flight -= 1;
                    match r {
                        Ok((frames, value)) => act.after_change(frames, value),
                        Err(e) => Box::pin(async move { Err(e) }.into_actor(act)),
                    }
                }),
        )
    }
}

impl Actor for UserActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        // Read off the arbiter's thread (on PostgreSQL it is a round trip,
        // which would hold the arbiter's other actors); no message is
        // handled before it.
        let (engine, p, u) = (self.engine.clone(), self.project, self.user);
        ctx.wait(
            async move { engine.run_live(move |s| s.feed_counts(&p, &u)).await }
                .into_actor(self)
                .map(|r, a, _| {
                    if let Ok(c) = r {
                        a.pushed_seq = c.seq;
                        a.pushed_meta = c;
                    }
                }),
        );
        ctx.run_interval(Duration::from_secs(30), |a, ctx| {
            let before = a.sockets.len();
            a.sockets.retain(|_, s| s.connected());
            for _ in a.sockets.len()..before {
                a.engine.socket_closed(a.project, a.user);
            }
            if a.sockets.is_empty() && a.in_flight == 0 && a.last_used.elapsed() > IDLE {
                ctx.stop();
            }
        });
    }

    fn stopped(&mut self, ctx: &mut Context<Self>) {
        // Sockets still held (the actor crashed or the engine stops) no
        // longer make the user present.
        for _ in self.sockets.drain() {
            self.engine.socket_closed(self.project, self.user);
        }
        let key = (self.project, self.user);
        super::engine::forget_actor(self.engine.user_actors(), &key, &ctx.address());
    }
}

impl Handler<Connect> for UserActor {
    type Result = AtomicResponse<Self, Result<()>>;

    /// Atomic: no frame is pushed while the socket is greeted, so its
    /// `hello` and replay end exactly where the pushes to it begin. The
    /// reads and the presence write run off the arbiter's thread.
    fn handle(&mut self, m: Connect, _: &mut Context<Self>) -> Self::Result {
        self.last_used = Instant::now();
        let latest = self.pushed_seq;
        let joins = !self.sockets.contains_key(&m.id);
        let (engine, p, u, since) = (self.engine.clone(), self.project, self.user, m.since);
        let read = async move {
            let e = engine.clone();
            let (by_category, replay, ticket) = engine
                .run_live(move |s| {
                    let by_category = match s.project(&p)? {
                        Some(project) => s.feed_counts_by_category(&project, &u)?,
                        None => None,
                    };
                    let replay = match since {
                        Some(since) if since < latest => {
                            Some(s.events_between(&p, &u, since, latest)?)
                        }
                        _ => None,
                    };
                    // Joined before it is greeted: a client that got its
                    // `hello` counts as online (`recipient.online`) on every
                    // node. Last, so a failed read leaves nothing to undo.
                    let ticket = if joins { e.socket_opened(p, u) } else { None };
                    Ok((by_category, replay, ticket))
                })
                .await?;
            // The count's batch is awaited here, off the blocking pool.
            if let Some(t) = ticket {
                engine.presence_written(t).await;
            }
            Ok::<_, Error>((by_category, replay))
        };
        AtomicResponse::new(Box::pin(read.into_actor(self).map(move |r, act, _| {
            let (by_category, replay) = r?;
            act.categories = by_category.is_some();
            let meta = act.pushed_meta.view_with(by_category.as_ref());
            let hello = json!({"type": "hello", "seq": latest, "meta": meta});
            act.sockets.insert(m.id, m.socket.clone());
            m.socket.send(Arc::from(hello.to_string()));
            let reset = || Arc::<str>::from(json!({"type": "reset", "seq": latest}).to_string());
            match (m.since, replay) {
                (Some(s), _) if s > latest => m.socket.send(reset()),
                (_, Some(Some(frames))) => {
                    for f in frames {
                        let text =
                            String::from_utf8(f).map_err(|_| Error::internal("corrupt event"))?;
                        m.socket.send(Arc::from(text));
                    }
                }
                (_, Some(None)) => m.socket.send(reset()),
                _ => {}
            }
            Ok(())
        })))
    }
}

impl Handler<Disconnect> for UserActor {
    type Result = ();
    fn handle(&mut self, m: Disconnect, _: &mut Context<Self>) {
        if self.sockets.remove(&m.id).is_some() {
            self.engine.socket_closed(self.project, self.user);
        }
        self.last_used = Instant::now();
    }
}

impl Handler<PushFrames> for UserActor {
    type Result = ();
    fn handle(&mut self, PushFrames(frames): PushFrames, ctx: &mut Context<Self>) {
        self.accept(frames, ctx);
    }
}

impl Handler<Position> for UserActor {
    type Result = ();
    fn handle(&mut self, Position(latest): Position, ctx: &mut Context<Self>) {
        if latest <= self.pushed_seq || self.sockets.is_empty() {
            return;
        }
        // Frames up to `latest` may still be on their way over the bus: only
        // what is still missing a moment later is read from the log.
        ctx.run_later(GAP_WAIT, move |a, ctx| {
            if a.pushed_seq < latest {
                a.catch_up(latest, ctx);
            }
        });
    }
}

impl Handler<UpdateEntry> for UserActor {
    type Result = ResponseActFuture<Self, Result<(Delivery, FeedCounts)>>;

    fn handle(&mut self, m: UpdateEntry, _: &mut Context<Self>) -> Self::Result {
        let (p, u) = (self.project, self.user);
        self.write(move |s| {
            s.update_feed_entry(&p, &u, &m.entry, m.update)
                .map(|c| (c.frames, (c.value, c.counts)))
        })
    }
}

impl Handler<MarkAll> for UserActor {
    type Result = ResponseActFuture<Self, Result<(usize, FeedCounts)>>;

    fn handle(&mut self, m: MarkAll, _: &mut Context<Self>) -> Self::Result {
        let (p, u) = (self.project, self.user);
        self.write(move |s| {
            let scope = m.filters.scope(s, &p)?;
            s.mark_feed(&p, &u, m.mark, scope)
                .map(|c| (c.frames, (c.value, c.counts)))
        })
    }
}

/// Frames of the events read from the log, which start right after `after`.
fn frames_from_log(after: u64, texts: Vec<Vec<u8>>) -> Vec<Frame> {
    let mut frames = Vec::with_capacity(texts.len());
    for (i, t) in texts.into_iter().enumerate() {
        let text = String::from_utf8_lossy(&t).into_owned();
        let seq = after + 1 + i as u64;
        let meta = serde_json::from_str::<Value>(&text).unwrap_or_default();
        let count = |k: &str| meta["meta"][k].as_u64().unwrap_or(0);
        let counts = FeedCounts {
            unread: count("unread_count"),
            unseen: count("unseen_count"),
            seq,
        };
        frames.push((seq, Arc::from(text), counts));
    }
    frames
}

/// The actors of users active on this node, by project and user: an engine
/// part (`engine::Parts`), registered at start.
#[derive(Default)]
pub(crate) struct UserActors(DashMap<(Uuid, Uuid), Addr<UserActor>>);

impl Engine {
    /// The actors of users active here.
    pub(crate) fn user_actors(&self) -> &DashMap<(Uuid, Uuid), Addr<UserActor>> {
        &self.inner.parts.get::<UserActors>().0
    }

    /// The user's actor, started on first use.
    pub fn user_actor(&self, project: Uuid, user: Uuid) -> Addr<UserActor> {
        if let Some(a) = self.user_actors().get(&(project, user)) {
            if a.connected() {
                return a.clone();
            }
        }
        let start = || {
            let engine = self.clone();
            UserActor::start_in_arbiter(self.arbiter_for(&user), move |_| {
                UserActor::new(engine, project, user)
            })
        };
        // Under the entry's lock, so two callers never start two actors for one user.
        match self.user_actors().entry((project, user)) {
            dashmap::mapref::entry::Entry::Occupied(o) if o.get().connected() => o.get().clone(),
            dashmap::mapref::entry::Entry::Occupied(mut o) => {
                let a = start();
                o.insert(a.clone());
                a
            }
            dashmap::mapref::entry::Entry::Vacant(v) => v.insert(start()).clone(),
        }
    }

    /// The user's actor if one is running (never starts one).
    pub fn user_actor_if_running(&self, project: Uuid, user: Uuid) -> Option<Addr<UserActor>> {
        self.user_actors()
            .get(&(project, user))
            .map(|a| a.clone())
            .filter(|a| a.connected())
    }

    /// Sends to the user's actor, restarting it once if it stopped meanwhile.
    pub async fn ask_user<M>(&self, project: Uuid, user: Uuid, msg: M) -> Result<M::Result>
    where
        M: Message + Send + Clone + 'static,
        M::Result: Send,
        UserActor: Handler<M>,
    {
        for _ in 0..3 {
            let a = self.user_actor(project, user);
            match a.send(msg.clone()).await {
                Ok(r) => return Ok(r),
                Err(_) => {
                    self.user_actors()
                        .remove_if(&(project, user), |_, v| !v.connected());
                }
            }
        }
        Err(Error::unavailable("user actor unavailable"))
    }

    /// Hands durable live-feed frames to the actors of users that are running
    /// (a user without one has no socket to push to), and, in a cluster, to
    /// the other nodes over the bus.
    pub fn push_frames(&self, frames: UserFrames) {
        if let Some(bus) = self.bus() {
            bus.publish_frames(&frames);
        }
        for (p, u, f) in frames {
            if let Some(a) = self.user_actor_if_running(p, u) {
                a.do_send(PushFrames(f));
            }
        }
    }

    /// Compares the position of every user with sockets on this node with
    /// the store, a thousand users per read, and tells each running actor
    /// its latest `seq` (`Position`): the bus may have lost frames. One read
    /// per user would be a statement per socketed user and check, which at
    /// a hundred thousand sockets is the database's whole capacity.
    pub async fn check_positions(&self) {
        let users = self.socketed_users();
        for chunk in users.chunks(POSITIONS_PER_READ) {
            let keys = chunk.to_vec();
            let seqs = match self.run(move |s| s.feed_positions(&keys)).await {
                Ok(seqs) => seqs,
                Err(e) => {
                    tracing::debug!(error = %e.message, "live feed: position check failed; the next one retries");
                    return;
                }
            };
            for (&(p, u), seq) in chunk.iter().zip(seqs) {
                if let Some(a) = self.user_actor_if_running(p, u) {
                    a.do_send(Position(seq));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actors::EngineConfig;
    use crate::store::{feed_frame, Store, Writes};
    use std::sync::Mutex;

    /// Stands in for a WebSocket: records the frames it is sent.
    struct Socket(Arc<Mutex<Vec<Value>>>);
    impl Actor for Socket {
        type Context = Context<Self>;
    }
    impl Handler<LiveFrame> for Socket {
        type Result = ();
        fn handle(&mut self, LiveFrame(f): LiveFrame, _: &mut Context<Self>) {
            self.0
                .lock()
                .unwrap()
                .push(serde_json::from_str(&f).unwrap());
        }
    }

    fn seqs(got: &Arc<Mutex<Vec<Value>>>) -> Vec<(String, u64)> {
        got.lock()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["type"].as_str().unwrap().to_string(),
                    f["seq"].as_u64().unwrap(),
                )
            })
            .collect()
    }

    /// Frames that arrive ahead of a predecessor wait; one that never arrives is
    /// read from the event log, so the socket still sees every seq once, in order.
    #[test]
    fn frames_reach_sockets_in_seq_order_and_gaps_fill_from_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        actix::System::new().block_on(async move {
            let engine = Engine::start(
                Arc::new(store.clone()),
                *store.cursor_key(),
                EngineConfig::default(),
            )
            .unwrap();
            let (p, u) = (Uuid::now_v7(), Uuid::now_v7());
            let got = Arc::new(Mutex::new(vec![]));
            let socket: Arc<dyn LiveSink> = Arc::new(Socket(got.clone()).start().recipient());
            let actor = engine.user_actor(p, u);
            actor
                .send(Connect {
                    id: 1,
                    socket,
                    since: None,
                })
                .await
                .unwrap()
                .unwrap();

            // Events 1..=4 are committed by "another writer".
            let mut w = Writes::new();
            let mut frames = vec![];
            let mut counts = FeedCounts::default();
            for seq in 1..=4u64 {
                counts.seq = seq;
                counts.unread = seq;
                let (f, meta) = feed_frame("feed_entry.created", seq, &json!({"n": seq}), &counts);
                store
                    .stage_event(&mut w, &p, &u, seq, f.as_bytes(), &counts)
                    .unwrap();
                frames.push((seq, f, meta));
            }
            store.commit_durable(w).unwrap();

            // 3 arrives first: nothing may go out before 1 and 2.
            actor.do_send(PushFrames(vec![frames[2].clone()]));
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert_eq!(seqs(&got), vec![("hello".into(), 0)]);
            // 2 arrives: still waiting for 1.
            actor.do_send(PushFrames(vec![frames[1].clone()]));
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert_eq!(seqs(&got).len(), 1, "{:?}", seqs(&got));
            // 1 never does; 4 arrives; the gap is filled from the log.
            actor.do_send(PushFrames(vec![frames[3].clone()]));
            let deadline = Instant::now() + Duration::from_secs(5);
            while seqs(&got).len() < 5 && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let ev = |s| ("feed_entry.created".to_string(), s);
            assert_eq!(
                seqs(&got),
                vec![("hello".into(), 0), ev(1), ev(2), ev(3), ev(4)]
            );
            let last = got.lock().unwrap().last().cloned().unwrap();
            assert_eq!(last["meta"]["unread_count"], json!(4), "{last}");
            // A late duplicate is dropped.
            actor.do_send(PushFrames(vec![frames[0].clone()]));
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert_eq!(seqs(&got).len(), 5);
            engine.shutdown();
        });
    }
}
