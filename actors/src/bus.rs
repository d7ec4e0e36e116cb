//! The cluster bus: what the nodes of one cluster (one PostgreSQL database,
//! `herald serve --bus nats://…`) tell each other over NATS.
//!
//! PostgreSQL holds all state; the bus only carries news of it, so nothing
//! acknowledged is ever lost with a message. Subjects (every node subscribes
//! to `herald.>`; `no_echo`, so a node never hears its own messages):
//!
//! - `herald.feed.<project>.<user>`: live-feed frames committed on the
//!   sending node, in `seq` order. The receiving node hands them to the
//!   user's actor if one runs there (the user has a socket on it); the actor
//!   pushes frames strictly in `seq` order, and a frame that never arrives
//!   (lost while the bus was down, dropped by a slow consumer) is read from
//!   the event log: when a later frame shows the gap, when the bus comes back
//!   (every actor with sockets compares its position with the log), and by a
//!   slow periodic position check. No gap, no duplicate: Centrifugo's broker
//!   fan-out with per-channel history and offset recovery.
//! - `herald.project.<project>`: a project's change another node must act
//!   on: its test clock moved (`clock`: the node reloads the project and
//!   wakes what the clock made due), security mode went on or the signing
//!   key changed (`security_on`, `signing_key`: the node closes the sockets
//!   the old rule authenticated), the project was deleted (`deleted`).
//! - `herald.work.<channel type>`: work was queued, due at `due_ms`
//!   (`Engine::announce_work` / `Engine::wake_queue`).
//!
//! Publishing never waits for the bus: messages go into a bounded queue that
//! a task drains into the NATS client (each publish bounded by a timeout);
//! when the queue is full or the bus is down they are dropped and counted
//! (not kept for later), and the receivers' recovery above makes up for them.
//!
//! The client lives on a small runtime of its own, so it does not depend on
//! which actix arbiter or HTTP worker happens to call it.

use crate::actors::Engine;
use crate::error::{Error, Result};
use crate::model::{ChannelType, FeedCounts};
use crate::storage::UserFrames;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use uuid::Uuid;

/// The first token of every subject Herald uses.
pub const PREFIX: &str = "herald";

/// Messages waiting to be handed to the client; past it they are dropped.
const QUEUE: usize = 16_384;

/// How long one publish may wait for the client (it waits while the client
/// reconnects and its own buffer is full).
const PUBLISH_TIMEOUT: Duration = Duration::from_secs(1);

/// How often a node compares the positions of its socketed users with the
/// store anyway (`Engine::check_positions`: the safety net for a frame the
/// bus lost with no later frame or reconnection to reveal it).
const POSITION_CHECK: Duration = Duration::from_secs(10);

/// Whether a bus location names NATS.
pub fn is_nats_url(s: &str) -> bool {
    s.starts_with("nats://") || s.starts_with("tls://")
}

/// A project change other nodes must act on (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProjectNotice {
    /// The test clock was set, moved or removed.
    Clock,
    /// Security mode went on: sockets on a bare user id must go.
    SecurityOn,
    /// The signing key changed: sockets on a user JWT must go.
    SigningKey,
    /// The project was deleted.
    Deleted,
}

/// What the node does with a project notice beyond the engine's own part
/// (the HTTP layer closes its sockets).
pub type NoticeHook = Box<dyn Fn(Uuid, ProjectNotice) + Send + Sync>;

/// What the HTTP layer re-checks when the bus is back, for the notices it
/// may have missed meanwhile (run on the bus's runtime; may block briefly).
pub type ResyncHook = Box<dyn Fn() + Send + Sync>;

/// One frame on the wire: `[seq, unread, unseen, text]`.
#[derive(Serialize, Deserialize)]
struct WireFrame(u64, u64, u64, String);

#[derive(Serialize, Deserialize)]
struct WireProject {
    kind: ProjectNotice,
}

#[derive(Serialize, Deserialize)]
struct WireWork {
    due_ms: i64,
}

/// The bus's counters, also exported as metrics (`herald_bus_*`).
#[derive(Default)]
pub struct BusStats {
    pub published: AtomicU64,
    pub received: AtomicU64,
    pub dropped: AtomicU64,
    pub reconnects: AtomicU64,
}

struct Inner {
    client: async_nats::Client,
    url: String,
    out: tokio::sync::mpsc::Sender<(String, Vec<u8>)>,
    stats: Arc<BusStats>,
    hook: OnceLock<NoticeHook>,
    /// What the HTTP layer re-checks after the bus was down.
    resync: OnceLock<ResyncHook>,
    /// Keeps the client's runtime alive as long as the bus (never dropped
    /// from an async context: the engine, which owns the bus, lives for the
    /// process).
    _rt: Mutex<Option<tokio::runtime::Runtime>>,
}

impl Drop for Inner {
    /// The last handle may go on an async thread, where dropping a runtime
    /// the blocking way panics: it is let go without waiting for its tasks.
    fn drop(&mut self) {
        let rt = self._rt.get_mut().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(rt) = rt {
            rt.shutdown_background();
        }
    }
}

/// Cheap to clone handle to the cluster bus.
#[derive(Clone)]
pub struct Bus {
    inner: Arc<Inner>,
}

impl Bus {
    /// Connects to NATS at `url`, subscribes to the cluster's subjects and
    /// attaches itself to `engine`. Waits up to `wait` for the first
    /// connection; past it the node starts anyway (`/readyz` says 503 until
    /// the bus answers) and the client keeps trying in the background.
    pub fn connect(url: &str, engine: &Engine, wait: Duration) -> Result<Bus> {
        if !is_nats_url(url) {
            return Err(Error::internal(format!(
                "--bus must be a NATS URL (nats://HOST:4222), not {url:?}"
            )));
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("herald-bus")
            .enable_all()
            .build()
            .map_err(|e| Error::internal(format!("bus runtime: {e}")))?;
        let stats = Arc::new(BusStats::default());
        let (tx, rx) = tokio::sync::mpsc::channel(QUEUE);
        let events = {
            let (etx, erx) = tokio::sync::mpsc::unbounded_channel::<async_nats::Event>();
            (etx, erx)
        };
        let etx = events.0.clone();
        let opts = async_nats::ConnectOptions::new()
            .name("herald")
            .no_echo()
            .retry_on_initial_connect()
            .max_reconnects(None)
            .connection_timeout(Duration::from_secs(2))
            .ping_interval(Duration::from_secs(5))
            .subscription_capacity(QUEUE)
            .reconnect_delay_callback(|attempts| {
                Duration::from_millis((attempts as u64 * 100).clamp(100, 1000))
            })
            .event_callback(move |ev| {
                let etx = etx.clone();
                async move {
                    let _ = etx.send(ev);
                }
            });
        let owned = url.to_string();
        let client = rt
            .block_on(async move { opts.connect(owned).await })
            .map_err(|e| Error::internal(format!("bus {url}: {e}")))?;
        let bus = Bus {
            inner: Arc::new(Inner {
                client: client.clone(),
                url: url.to_string(),
                out: tx,
                stats: stats.clone(),
                hook: OnceLock::new(),
                resync: OnceLock::new(),
                _rt: Mutex::new(None),
            }),
        };
        engine.attach_bus(bus.clone());
        rt.spawn(pump(client.clone(), rx, stats.clone()));
        rt.spawn(watch(events.1, engine.clone(), stats.clone()));
        let sub = rt.block_on({
            let client = client.clone();
            async move { client.subscribe(format!("{PREFIX}.>")).await }
        });
        let sub = sub.map_err(|e| Error::internal(format!("bus subscribe: {e}")))?;
        rt.spawn(receive(sub, engine.clone(), bus.clone()));
        rt.spawn(position_checks(engine.clone()));
        let deadline = std::time::Instant::now() + wait;
        while !bus.connected() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        if !bus.connected() {
            tracing::warn!(url, "the bus does not answer yet; this node keeps trying");
        }
        metrics::gauge!("herald_bus_connected").set(if bus.connected() { 1.0 } else { 0.0 });
        *bus.inner._rt.lock().unwrap_or_else(|e| e.into_inner()) = Some(rt);
        Ok(bus)
    }

    /// The URL it was started with.
    pub fn url(&self) -> &str {
        &self.inner.url
    }

    /// Whether the client is connected to a NATS server now.
    pub fn connected(&self) -> bool {
        self.inner.client.connection_state() == async_nats::connection::State::Connected
    }

    pub fn stats(&self) -> &BusStats {
        &self.inner.stats
    }

    /// Sets what the HTTP layer does with a project notice (once).
    pub fn on_project_notice(&self, hook: NoticeHook) {
        let _ = self.inner.hook.set(hook);
    }

    /// Sets what the HTTP layer re-checks when the bus is back (once).
    pub fn on_resync(&self, hook: ResyncHook) {
        let _ = self.inner.resync.set(hook);
    }

    fn send(&self, subject: String, payload: Vec<u8>) {
        if self.inner.out.try_send((subject, payload)).is_err() {
            self.inner.stats.dropped.fetch_add(1, Ordering::Relaxed);
            metrics::counter!("herald_bus_dropped_total").increment(1);
        }
    }

    /// Tells the other nodes of durable live-feed frames (one message per user).
    pub fn publish_frames(&self, frames: &UserFrames) {
        for (p, u, f) in frames {
            self.publish_user_frames(p, u, f);
        }
    }

    /// Tells the other nodes of one user's durable frames.
    pub fn publish_user_frames(&self, p: &Uuid, u: &Uuid, frames: &[crate::storage::Frame]) {
        if frames.is_empty() {
            return;
        }
        let wire: Vec<WireFrame> = frames
            .iter()
            .map(|(seq, text, c)| WireFrame(*seq, c.unread, c.unseen, text.to_string()))
            .collect();
        if let Ok(body) = serde_json::to_vec(&wire) {
            self.send(format!("{PREFIX}.feed.{p}.{u}"), body);
        }
    }

    /// Tells the other nodes of a project change they must act on.
    pub fn publish_project(&self, project: Uuid, kind: ProjectNotice) {
        if let Ok(body) = serde_json::to_vec(&WireProject { kind }) {
            self.send(format!("{PREFIX}.project.{project}"), body);
        }
    }

    /// Tells the other nodes that work of `ct` was queued, due at `due_ms`.
    pub fn publish_work(&self, ct: ChannelType, due_ms: i64) {
        if let Ok(body) = serde_json::to_vec(&WireWork { due_ms }) {
            self.send(format!("{PREFIX}.work.{}", ct.as_str()), body);
        }
    }
}

/// Hands queued messages to the client, in order, each publish bounded.
async fn pump(
    client: async_nats::Client, mut rx: tokio::sync::mpsc::Receiver<(String, Vec<u8>)>,
    stats: Arc<BusStats>,
) {
    while let Some((subject, body)) = rx.recv().await {
        if client.connection_state() != async_nats::connection::State::Connected {
            // Not kept for later: the receivers catch up from the store when
            // the bus is back, and stale news would only arrive as a burst.
            stats.dropped.fetch_add(1, Ordering::Relaxed);
            metrics::counter!("herald_bus_dropped_total").increment(1);
            continue;
        }
        match tokio::time::timeout(PUBLISH_TIMEOUT, client.publish(subject, body.into())).await {
            Ok(Ok(())) => {
                stats.published.fetch_add(1, Ordering::Relaxed);
                metrics::counter!("herald_bus_published_total").increment(1);
            }
            _ => {
                stats.dropped.fetch_add(1, Ordering::Relaxed);
                metrics::counter!("herald_bus_dropped_total").increment(1);
            }
        }
    }
}

/// Follows the connection: on every reconnection (and on a slow-consumer
/// drop) the users' actors compare their position with the event log, and
/// the test clocks are reloaded, for whatever the bus may have lost.
async fn watch(
    mut events: tokio::sync::mpsc::UnboundedReceiver<async_nats::Event>, engine: Engine,
    stats: Arc<BusStats>,
) {
    let mut ever = false;
    let checking = Arc::new(std::sync::atomic::AtomicBool::new(false));
    while let Some(ev) = events.recv().await {
        match ev {
            async_nats::Event::Connected => {
                metrics::gauge!("herald_bus_connected").set(1.0);
                if ever {
                    stats.reconnects.fetch_add(1, Ordering::Relaxed);
                    metrics::counter!("herald_bus_reconnects_total").increment(1);
                    tracing::info!("the bus answers again; live feeds catch up from the log");
                }
                ever = true;
                resync(&engine).await;
            }
            async_nats::Event::Disconnected => {
                metrics::gauge!("herald_bus_connected").set(0.0);
                tracing::warn!("the bus is unreachable; live feeds will catch up from the log");
            }
            // One check at a time: a burst of drops reports one event each.
            async_nats::Event::SlowConsumer(_) if !checking.swap(true, Ordering::AcqRel) => {
                tracing::warn!("bus messages were dropped (slow consumer); live feeds catch up");
                let (e, checking) = (engine.clone(), checking.clone());
                tokio::spawn(async move {
                    e.check_positions().await;
                    checking.store(false, Ordering::Release);
                });
            }
            other => tracing::debug!(event = %other, "bus event"),
        }
    }
}

/// After a reconnection: catch the live feeds up now and once more a moment
/// later (a frame committed between the first read and the resubscription
/// would otherwise wait for the next frame or the periodic check), let the
/// HTTP layer re-check its sockets' projects, and reload the test clocks.
async fn resync(engine: &Engine) {
    engine.check_positions().await;
    if let Some(h) = engine.bus().and_then(|b| b.inner.resync.get()) {
        h();
    }
    let e = engine.clone();
    match tokio::task::spawn_blocking(move || e.storage().projects()).await {
        Ok(Ok(projects)) => {
            for p in projects {
                engine.reload_clock(p.id, p.test_clock);
            }
        }
        _ => tracing::warn!("cannot reload the projects' clocks after the bus came back"),
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    engine.check_positions().await;
}

/// The periodic position check (`POSITION_CHECK`), one per node.
async fn position_checks(engine: Engine) {
    let mut every = tokio::time::interval(POSITION_CHECK);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    every.tick().await;
    loop {
        every.tick().await;
        engine.check_positions().await;
    }
}

/// Receives the cluster's messages and acts on them.
async fn receive(mut sub: async_nats::Subscriber, engine: Engine, bus: Bus) {
    use futures_util::StreamExt;
    while let Some(m) = sub.next().await {
        bus.inner.stats.received.fetch_add(1, Ordering::Relaxed);
        metrics::counter!("herald_bus_received_total").increment(1);
        let subject = m.subject.as_str();
        let mut parts = subject.split('.');
        let (_, kind) = (parts.next(), parts.next());
        let rest: Vec<&str> = parts.collect();
        match (kind, rest.as_slice()) {
            (Some("feed"), [p, u]) => {
                let (Ok(p), Ok(u)) = (Uuid::parse_str(p), Uuid::parse_str(u)) else {
                    continue;
                };
                // Every node hears every user's frames: most are for users
                // with no socket here, passed over before their payload is read.
                let Some(actor) = engine.user_actor_if_running(p, u) else {
                    continue;
                };
                let Ok(wire) = serde_json::from_slice::<Vec<WireFrame>>(&m.payload) else {
                    continue;
                };
                let frames = wire
                    .into_iter()
                    .map(|WireFrame(seq, unread, unseen, text)| {
                        (
                            seq,
                            Arc::<str>::from(text),
                            FeedCounts {
                                unread,
                                unseen,
                                seq,
                            },
                        )
                    })
                    .collect();
                actor.do_send(crate::actors::PushFrames(frames));
            }
            (Some("project"), [p]) => {
                let Ok(p) = Uuid::parse_str(p) else { continue };
                let Ok(w) = serde_json::from_slice::<WireProject>(&m.payload) else {
                    continue;
                };
                if matches!(w.kind, ProjectNotice::Clock | ProjectNotice::Deleted) {
                    let e = engine.clone();
                    let found = tokio::task::spawn_blocking(move || e.storage().project(&p)).await;
                    match found {
                        Ok(Ok(found)) => {
                            engine.reload_clock(p, found.and_then(|x| x.test_clock));
                        }
                        _ => tracing::warn!(project = %p, "cannot reload a project's clock"),
                    }
                }
                if let Some(h) = bus.inner.hook.get() {
                    h(p, w.kind);
                }
            }
            (Some("work"), [ct]) => {
                let (Some(ct), Ok(w)) = (
                    ChannelType::parse(ct),
                    serde_json::from_slice::<WireWork>(&m.payload),
                ) else {
                    continue;
                };
                engine.wake_queue(ct, w.due_ms);
            }
            _ => {}
        }
    }
}

/// The engine's side of the bus: its handle, and what a node does for the
/// news the bus brings (or may have lost).
/// The bus, once attached: an engine part (`actors::engine::Parts`).
#[derive(Default)]
pub(crate) struct BusSlot(OnceLock<Bus>);

impl Engine {
    /// Attaches the bus (once, at start).
    pub(crate) fn attach_bus(&self, bus: Bus) {
        let _ = self.inner.parts.get::<BusSlot>().0.set(bus);
    }

    /// The cluster bus, when this node is one of a cluster.
    pub fn bus(&self) -> Option<&Bus> {
        self.inner.parts.get::<BusSlot>().0.get()
    }

    /// Sets a project's test clock as another node left it, and hands what
    /// became due to the delivery actors.
    pub fn reload_clock(&self, project: Uuid, at: Option<crate::model::Timestamp>) {
        let woken = self.inner.clocks.set(project, at);
        self.dispatch(woken);
    }
}

impl Engine {
    /// Tells the other nodes of a project change they must act on (no-op
    /// on a single node).
    pub fn announce_project(&self, project: Uuid, kind: ProjectNotice) {
        if let Some(bus) = self.bus() {
            bus.publish_project(project, kind);
        }
    }

    /// In a cluster, takes the test clock of a project just read from the
    /// database (every request reads its project there), so a clock another
    /// node moved is this node's too from the next request on, even before
    /// the bus tells it. No-op on a single node, whose clocks are always its own.
    pub fn observe_project(&self, p: &crate::model::Project) {
        if self.bus().is_none() {
            return;
        }
        let mine = self.inner.clocks.test_now(&p.id).map(|t| t.millis());
        let stored = p.test_clock.map(|t| t.millis());
        let ahead = match (mine, stored) {
            (Some(m), Some(s)) => s > m,
            (m, s) => m.is_some() != s.is_some(),
        };
        if ahead {
            self.reload_clock(p.id, p.test_clock);
        }
    }
}
