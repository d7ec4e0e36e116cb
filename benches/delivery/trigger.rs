//! Transactional triggers (`trigger-1`, `trigger-100`): the common workload of a
//! product, a stream of small runs ("notify this user about this comment") to
//! users who each hold an open socket. Herald gets single- or few-recipient
//! `POST /admin/v1/flows/{id}/run`s, soketi the same events as signed
//! `batch_events` publishes (one Pusher event per user channel), with the same
//! number of requests in flight. Latency runs from just before a request is sent
//! to the event's frame arriving on its user's socket.
//!
//! Runs walk the users round-robin, `per_run` consecutive users each, so a user
//! never has two events in flight unless the in-flight window covers every
//! socket; each user's send times form a queue that its frames pop in order.

use crate::herald::{proc_cpu_ms, Api, Server};
use crate::load::{await_ready, num, Stats};
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, Semaphore};
use tokio_tungstenite::tungstenite::Message;

pub type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Opens one socket with `open` under one of `sem`'s permits (30 s at most)
/// and tells `ready` whether it did (`what` names the step in the error); the
/// socket, or `None` when it did not open.
pub async fn open_one(
    sem: Arc<Semaphore>, open: impl Future<Output = Result<Ws, String>>, what: &str,
    ready: &mpsc::UnboundedSender<Result<(), String>>,
) -> Option<Ws> {
    let permit = sem.acquire_owned().await.expect("semaphore");
    let ws = tokio::time::timeout(Duration::from_secs(30), open).await;
    drop(permit);
    let ws = match ws {
        Ok(r) => r,
        Err(_) => Err(format!("{what} timed out")),
    };
    let _ = ready.send(ws.as_ref().map(|_| ()).map_err(Clone::clone));
    ws.ok()
}

/// One transactional scenario's shape.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub name: &'static str,
    pub sockets: usize,
    pub per_run: usize,
    pub in_flight: usize,
    /// Requests sent in the measured window.
    pub runs: usize,
}

/// Sockets of a full run; a smaller `--trigger-sockets` scales the runs with it.
const SOCKETS: usize = 5000;
const SMOKE_SOCKETS: usize = 50;

fn socket_count(smoke: bool, sockets: Option<usize>) -> usize {
    if smoke {
        SMOKE_SOCKETS
    } else {
        sockets.unwrap_or(SOCKETS).max(1)
    }
}

impl Shape {
    /// `trigger-1`: single-recipient runs, 32 in flight, four per socket.
    pub fn one(smoke: bool, sockets: Option<usize>) -> Shape {
        let c = socket_count(smoke, sockets);
        Shape {
            name: "trigger-1",
            sockets: c,
            per_run: 1,
            in_flight: 32,
            runs: 4 * c,
        }
    }

    /// `trigger-100`: 100-recipient runs, 16 in flight, 20 events per socket
    /// (10 recipients per run in a smoke run, whose 50 sockets are too few for 100).
    pub fn hundred(smoke: bool, sockets: Option<usize>) -> Shape {
        let c = socket_count(smoke, sockets);
        let per_run = if smoke { 10 } else { 100.min(c) };
        Shape {
            name: "trigger-100",
            sockets: c,
            per_run,
            in_flight: 16,
            runs: 20 * c / per_run,
        }
    }

    fn events(&self) -> usize {
        self.runs * self.per_run
    }

    /// The users run `k` goes to.
    pub fn users(&self, k: usize) -> impl Iterator<Item = usize> {
        let (c, n) = (self.sockets, self.per_run);
        (0..n).map(move |j| (k * n + j) % c)
    }
}

/// Open sockets that report each `feed_entry.created` frame as (user, arrival).
pub struct Sockets {
    tasks: tokio::task::JoinSet<()>,
    frames: mpsc::UnboundedReceiver<(usize, Instant)>,
    pub connected: usize,
    pub first_error: Option<String>,
}

impl Drop for Sockets {
    fn drop(&mut self) {
        self.tasks.abort_all();
    }
}

/// Opens `c` sockets with `connect(i)` (256 handshakes at a time) and keeps
/// reading them until they are dropped.
pub async fn open<F, Fut>(c: usize, connect: F) -> Sockets
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Ws, String>> + Send + 'static,
{
    let connect = Arc::new(connect);
    let (ready_tx, mut ready_rx) = mpsc::unbounded_channel::<Result<(), String>>();
    let (got_tx, frames) = mpsc::unbounded_channel::<(usize, Instant)>();
    let sem = Arc::new(Semaphore::new(256));
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..c {
        let (connect, ready_tx, got_tx, sem) = (
            connect.clone(),
            ready_tx.clone(),
            got_tx.clone(),
            sem.clone(),
        );
        tasks.spawn(async move {
            let Some(mut ws) = open_one(sem, connect(i), "socket setup", &ready_tx).await else {
                return;
            };
            while let Some(Ok(m)) = ws.next().await {
                if let Message::Text(t) = &m {
                    if t.contains("feed_entry.created") {
                        let _ = got_tx.send((i, Instant::now()));
                    }
                }
            }
            // A socket closed by the server stays counted as connected; its
            // missing frames show as received < events.
            std::future::pending::<()>().await;
        });
    }
    drop((ready_tx, got_tx));
    let (connected, first_error) = await_ready(&mut ready_rx, c).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    Sockets {
        tasks,
        frames,
        connected,
        first_error,
    }
}

/// Sends `shape.runs` requests with `publish(k)`, `shape.in_flight` at a time,
/// then collects the frames (for at most 60 s after the last response) and
/// measures. `cpu_ms` reads the server's CPU time.
pub async fn drive<F, Fut>(
    shape: Shape, sockets: &mut Sockets, cpu_ms: impl Fn() -> f64, publish: F,
) -> Value
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), String>> + Send,
{
    // Frames left over from an earlier shape (late or extra) must not be
    // matched to this one's sends.
    while sockets.frames.try_recv().is_ok() {}
    let sent: Arc<Vec<Mutex<VecDeque<Instant>>>> =
        Arc::new((0..shape.sockets).map(|_| Mutex::default()).collect());
    let publish = Arc::new(publish);
    let next = Arc::new(AtomicUsize::new(0));
    let cpu0 = cpu_ms();
    let t0 = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..shape.in_flight {
        let (publish, next, sent) = (publish.clone(), next.clone(), sent.clone());
        workers.spawn(async move {
            let (mut errors, mut first) = (0usize, None);
            loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= shape.runs {
                    break;
                }
                let t = Instant::now();
                for u in shape.users(k) {
                    sent[u].lock().expect("sent").push_back(t);
                }
                if let Err(e) = publish(k).await {
                    errors += 1;
                    first.get_or_insert(e);
                }
            }
            (errors, first)
        });
    }
    let (mut errors, mut first_error) = (0, sockets.first_error.clone());
    while let Some(r) = workers.join_next().await {
        let (e, f) = r.unwrap_or((1, Some("publisher panicked".into())));
        errors += e;
        if first_error.is_none() {
            first_error = f;
        }
    }
    let published = t0.elapsed();
    // Users whose socket failed get no frames: wait only for the others' share.
    let expected = shape.events() * sockets.connected.min(shape.sockets) / shape.sockets.max(1);
    let mut lat = Vec::with_capacity(expected);
    let mut last = t0;
    let deadline = Instant::now() + Duration::from_secs(60);
    while lat.len() < expected {
        match tokio::time::timeout_at(deadline.into(), sockets.frames.recv()).await {
            Ok(Some((u, t))) => {
                let Some(s) = sent
                    .get(u)
                    .and_then(|q| q.lock().expect("sent").pop_front())
                else {
                    continue;
                };
                last = last.max(t);
                lat.push(t.saturating_duration_since(s).as_secs_f64() * 1000.0);
            }
            _ => break,
        }
    }
    let cpu = cpu_ms() - cpu0;
    let stats = Stats::of(&mut lat);
    let mut v = stats.json();
    let o = v.as_object_mut().expect("object");
    let span = last.duration_since(t0).as_secs_f64();
    for (k, x) in [
        ("scenario", json!(shape.name)),
        ("sockets", json!(shape.sockets)),
        ("connected", json!(sockets.connected)),
        ("recipients_per_run", json!(shape.per_run)),
        ("in_flight", json!(shape.in_flight)),
        ("runs", json!(shape.runs)),
        ("events", json!(shape.events())),
        ("received", json!(lat.len())),
        ("errors", json!(errors)),
        ("publish_ms", num(published.as_secs_f64() * 1000.0)),
        ("events_per_s", num(lat.len() as f64 / span)),
        // The server's CPU time from the first request to the last frame, per
        // event (10 ms ticks; thousands of events make that fine enough).
        (
            "server_cpu_us_per_event",
            num(cpu * 1000.0 / lat.len().max(1) as f64),
        ),
    ] {
        o.insert(k.into(), x);
    }
    if let Some(e) = first_error {
        o.insert("first_error".into(), json!(e));
    }
    v
}

/// Herald: one server, the users `live-0..c` created and connected to the live
/// feed, then each shape in turn against the same sockets.
pub async fn herald(shapes: &[Shape]) -> Vec<Value> {
    let Some(c) = shapes.iter().map(|s| s.sockets).max() else {
        return vec![];
    };
    let srv = Server::start();
    let api = srv.api();
    api.in_app_flow("trigger").await;
    api.users("live", c).await;
    let url = format!(
        "{}/user/v1/feed/live?api_key={}",
        srv.base.replacen("http://", "ws://", 1),
        srv.pk
    );
    let mut sockets = open(c, move |i| {
        let url = url.clone();
        async move { crate::scenarios::live_socket(&url, i).await }
    })
    .await;
    let pid = srv.pid();
    let mut out = vec![];
    for &shape in shapes {
        let api = api.clone();
        let publish = move |k: usize| {
            let api: Api = api.clone();
            let recipients: Vec<String> = shape.users(k).map(|u| format!("live-{u}")).collect();
            async move {
                let (s, v) = api
                    .admin(
                        reqwest::Method::POST,
                        "/admin/v1/flows/trigger/run",
                        Some(json!({ "recipients": recipients })),
                    )
                    .await;
                if s == 202 {
                    Ok(())
                } else {
                    Err(format!("status {s}: {v}"))
                }
            }
        };
        let mut v = drive(shape, &mut sockets, || proc_cpu_ms(pid), publish).await;
        v["server"] = json!("herald");
        out.push(v);
    }
    out
}
