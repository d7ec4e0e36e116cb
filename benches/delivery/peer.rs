//! The soketi peer (npm `@soketi/soketi`, a Pusher-protocol WebSocket server that
//! stores nothing), installed and started with the scripts in
//! `benches/peers/soketi/` into `$SOKETI_DIR` (default: a `herald-bench-soketi`
//! dir under the system temp dir, reused by later runs). It receives the same
//! fan-out as Herald's live scenario: C sockets, each subscribed to its own channel
//! `user-N`, one event per user published through the signed batch HTTP API in
//! batches of 100.

use crate::herald::proc_status_kib;
use crate::load::{num, Stats};
use crate::trigger::{open_one, Shape, Ws};
use futures_util::{SinkExt, StreamExt};
use hmac::{Hmac, Mac};
use md5::{Digest, Md5};
use serde_json::{json, Value};
use sha2::Sha256;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::{mpsc, Semaphore};
use tokio_tungstenite::tungstenite::Message;

const HOST: &str = "127.0.0.1:6001";
const APP_ID: &str = "app-id";
const APP_KEY: &str = "app-key";
const APP_SECRET: &str = "app-secret";
pub const BATCH: usize = 100;
/// Batch requests in flight at once while publishing.
pub const PUBLISHERS: usize = 16;

pub struct Soketi {
    scripts: PathBuf,
    dir: PathBuf,
    pid: u32,
    /// The installed version (from its package.json).
    pub version: String,
}

/// Runs a script with `SOKETI_DIR` set, output to `log`, for at most `limit`.
fn script(
    scripts: &Path, name: &str, dir: &Path, log: &Path, limit: Duration,
) -> Result<(), String> {
    let out = std::fs::File::create(log).map_err(|e| format!("log file: {e}"))?;
    let err = out.try_clone().map_err(|e| format!("log file: {e}"))?;
    let mut child = Command::new("bash")
        .arg(scripts.join(name))
        .env("SOKETI_DIR", dir)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot run {name}: {e}"))?;
    let t0 = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(s)) if s.success() => return Ok(()),
            Ok(Some(s)) => {
                let text = std::fs::read_to_string(log).unwrap_or_default();
                let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
                // The first error line that says what went wrong, else the last line.
                let why = lines
                    .iter()
                    .find(|l| {
                        let l = l.to_ascii_lowercase();
                        (l.contains("error") || l.contains("did not"))
                            && !l.contains("complete log")
                    })
                    .or(lines.last())
                    .map_or("", |l| l.trim());
                return Err(format!(
                    "{name} exited with {s}: {why} (log: {})",
                    log.display()
                ));
            }
            Ok(None) if t0.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{name} took over {} s", limit.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => return Err(format!("{name}: {e}")),
        }
    }
}

impl Soketi {
    /// Installs (when not already installed in `$SOKETI_DIR`) and starts soketi.
    /// Err holds the reason it cannot run here.
    pub fn start() -> Result<Soketi, String> {
        let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/peers/soketi");
        if !scripts.join("start_soketi.sh").exists() {
            return Err(format!("no scripts in {}", scripts.display()));
        }
        let dir = std::env::var_os("SOKETI_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| std::env::temp_dir().join("herald-bench-soketi"));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        if std::net::TcpStream::connect(HOST).is_ok() {
            return Err(format!("{HOST} is already in use"));
        }
        if !dir
            .join("node_modules/@soketi/soketi/bin/server.js")
            .exists()
        {
            println!("soketi peer: installing into {} (npm)", dir.display());
            script(
                &scripts,
                "install_soketi.sh",
                &dir,
                &dir.join("install.log"),
                Duration::from_secs(300),
            )?;
        }
        script(
            &scripts,
            "start_soketi.sh",
            &dir,
            &dir.join("start.log"),
            Duration::from_secs(60),
        )?;
        let pid = std::fs::read_to_string(dir.join("soketi.pid"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .ok_or("start_soketi.sh wrote no pid")?;
        let version = std::fs::read_to_string(dir.join("node_modules/@soketi/soketi/package.json"))
            .ok()
            .and_then(|s| serde_json::from_str::<Value>(&s).ok())
            .and_then(|v| v["version"].as_str().map(String::from))
            .unwrap_or_default();
        Ok(Soketi {
            scripts,
            dir,
            pid,
            version,
        })
    }

    fn rss_kib(&self) -> u64 {
        proc_status_kib(self.pid, "VmRSS:")
    }

    /// Fan-out of one event each to `c` subscribed sockets.
    pub async fn fanout(&self, c: usize) -> Value {
        let rss_before = self.rss_kib();
        let url = format!("ws://{HOST}/app/{APP_KEY}?protocol=7");
        let (ready_tx, mut ready_rx) = mpsc::unbounded_channel::<Result<(), String>>();
        let (got_tx, mut got_rx) = mpsc::unbounded_channel::<Instant>();
        let sem = Arc::new(Semaphore::new(256));
        let mut sockets = tokio::task::JoinSet::new();
        for i in 0..c {
            let (url, ready_tx, got_tx, sem) =
                (url.clone(), ready_tx.clone(), got_tx.clone(), sem.clone());
            sockets.spawn(async move {
                let Some(mut ws) = open_one(sem, subscribe(&url, i), "subscribe", &ready_tx).await
                else {
                    return;
                };
                // Read until this socket's event; the socket stays open until the
                // scenario aborts its task.
                while let Some(Ok(m)) = ws.next().await {
                    if let Message::Text(t) = &m {
                        if t.contains("feed_entry.created") {
                            let _ = got_tx.send(Instant::now());
                            break;
                        }
                    }
                }
                std::future::pending::<()>().await;
            });
        }
        drop((ready_tx, got_tx));
        let (connected, first_error) = crate::load::await_ready(&mut ready_rx, c).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let rss_sockets = self.rss_kib();
        // Sign every batch before the clock starts.
        let payload = event_data();
        let requests: Vec<(String, String)> = (0..c)
            .collect::<Vec<_>>()
            .chunks(BATCH)
            .map(|chunk| {
                let batch: Vec<Value> = chunk
                    .iter()
                    .map(|i| json!({"name": "feed_entry.created", "channel": format!("user-{i}"), "data": payload}))
                    .collect();
                let body = json!({ "batch": batch }).to_string();
                (signed_url("/apps/app-id/batch_events", &body), body)
            })
            .collect();
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(PUBLISHERS)
            .build()
            .expect("client");
        let requests = Arc::new(requests);
        let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let t0 = Instant::now();
        let mut publishers = tokio::task::JoinSet::new();
        for _ in 0..PUBLISHERS {
            let (http, requests, next) = (http.clone(), requests.clone(), next.clone());
            publishers.spawn(async move {
                let mut errors = vec![];
                loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((url, body)) = requests.get(k) else {
                        break;
                    };
                    let r = post_json(&http, url, body).await;
                    match r {
                        Ok(r) if r.status().is_success() => {}
                        Ok(r) => errors.push(format!(
                            "{}: {}",
                            r.status(),
                            r.text().await.unwrap_or_default()
                        )),
                        Err(e) => errors.push(e.to_string()),
                    }
                }
                errors
            });
        }
        let mut publish_errors = vec![];
        while let Some(r) = publishers.join_next().await {
            publish_errors.extend(r.unwrap_or_default());
        }
        let published = t0.elapsed();
        let mut lat = Vec::with_capacity(c);
        let deadline = Instant::now() + Duration::from_secs(60);
        while lat.len() < connected {
            match tokio::time::timeout_at(deadline.into(), got_rx.recv()).await {
                Ok(Some(t)) => lat.push(t.duration_since(t0).as_secs_f64() * 1000.0),
                _ => break,
            }
        }
        sockets.abort_all();
        while sockets.join_next().await.is_some() {}
        let stats = Stats::of(&mut lat);
        let mut v = stats.json();
        let o = v.as_object_mut().expect("object");
        o.insert("scenario".into(), json!("soketi"));
        o.insert("sockets".into(), json!(c));
        o.insert("connected".into(), json!(connected));
        o.insert("received".into(), json!(lat.len()));
        o.insert(
            "events_per_s".into(),
            num(lat.len() as f64 / (stats.max / 1000.0)),
        );
        o.insert("publish_ms".into(), num(published.as_secs_f64() * 1000.0));
        o.insert("publish_requests".into(), json!(requests.len()));
        o.insert("publish_errors".into(), json!(publish_errors.len()));
        o.insert(
            "rss_per_socket_kib".into(),
            num(rss_sockets.saturating_sub(rss_before) as f64 / c.max(1) as f64),
        );
        if let Some(e) = first_error.or_else(|| publish_errors.first().cloned()) {
            o.insert("first_error".into(), json!(e));
        }
        v
    }
}

impl Soketi {
    /// The transactional shapes against soketi: `c` sockets on channels
    /// `user-0..c`, each run one signed `batch_events` request holding one event
    /// per user, as many in flight as Herald's runs. Every request is signed
    /// before the clock starts.
    pub async fn trigger(&self, shapes: &[Shape]) -> Vec<Value> {
        let Some(c) = shapes.iter().map(|s| s.sockets).max() else {
            return vec![];
        };
        let url = format!("ws://{HOST}/app/{APP_KEY}?protocol=7");
        let mut sockets = crate::trigger::open(c, move |i| {
            let url = url.clone();
            async move { subscribe(&url, i).await }
        })
        .await;
        let payload = event_data();
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(64)
            .build()
            .expect("client");
        let pid = self.pid;
        let mut out = vec![];
        for &shape in shapes {
            let requests: Arc<Vec<(String, String)>> = Arc::new(
                (0..shape.runs)
                    .map(|k| {
                        let batch: Vec<Value> = shape
                            .users(k)
                            .map(|u| json!({"name": "feed_entry.created", "channel": format!("user-{u}"), "data": payload}))
                            .collect();
                        let body = json!({ "batch": batch }).to_string();
                        (signed_url("/apps/app-id/batch_events", &body), body)
                    })
                    .collect(),
            );
            let http = http.clone();
            let publish = move |k: usize| {
                let (http, requests) = (http.clone(), requests.clone());
                async move {
                    let (url, body) = &requests[k];
                    let r = post_json(&http, url, body)
                        .await
                        .map_err(|e| e.to_string())?;
                    if r.status().is_success() {
                        Ok(())
                    } else {
                        Err(format!(
                            "{}: {}",
                            r.status(),
                            r.text().await.unwrap_or_default()
                        ))
                    }
                }
            };
            let mut v = crate::trigger::drive(
                shape,
                &mut sockets,
                || crate::herald::proc_cpu_ms(pid),
                publish,
            )
            .await;
            v["server"] = json!("soketi");
            out.push(v);
        }
        out
    }
}

impl Drop for Soketi {
    fn drop(&mut self) {
        let _ = script(
            &self.scripts,
            "stop_soketi.sh",
            &self.dir,
            &self.dir.join("stop.log"),
            Duration::from_secs(10),
        );
        // Wait for the port to be released (bounded).
        let t0 = Instant::now();
        while Path::new(&format!("/proc/{}", self.pid)).exists()
            && t0.elapsed() < Duration::from_secs(5)
        {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Connects, waits for `pusher:connection_established`, subscribes to `user-{i}`
/// and waits for `pusher_internal:subscription_succeeded`.
async fn subscribe(url: &str, i: usize) -> Result<Ws, String> {
    let mut ws = crate::load::ws_connect(url).await?;
    let mut established = false;
    for _ in 0..8 {
        let m = ws
            .next()
            .await
            .ok_or("closed")?
            .map_err(|e| format!("read: {e}"))?;
        let Message::Text(t) = m else { continue };
        if !established && t.contains("pusher:connection_established") {
            established = true;
            let sub =
                json!({"event": "pusher:subscribe", "data": {"channel": format!("user-{i}")}});
            ws.send(Message::Text(sub.to_string().into()))
                .await
                .map_err(|e| format!("send: {e}"))?;
        } else if t.contains("pusher_internal:subscription_succeeded") {
            return Ok(ws);
        } else if t.contains("pusher:error") {
            return Err(t.to_string());
        }
    }
    Err("no subscription_succeeded".into())
}

/// The event's data: about the size of Herald's `feed_entry.created` frame.
fn event_data() -> String {
    json!({
        "type": "feed_entry.created",
        "entry": {
            "id": "0190f3c2-7b1e-7a44-9c1d-2f6e8b0a4c11",
            "flow": {"handle": "live"},
            "data": {"body": "Hello live user"},
            "seen_at": null, "read_at": null, "clicked_at": null, "archived_at": null,
            "created_at": "2026-01-01T00:00:00.000Z",
        },
        "meta": {"unseen_count": 1, "unread_count": 1, "total_count": 1},
    })
    .to_string()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The Pusher HTTP API's signed URL for a POST of `body` to `path`.
fn signed_url(path: &str, body: &str) -> String {
    let ts = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let md5 = hex(&Md5::digest(body.as_bytes()));
    let query = format!("auth_key={APP_KEY}&auth_timestamp={ts}&auth_version=1.0&body_md5={md5}");
    let mut mac = Hmac::<Sha256>::new_from_slice(APP_SECRET.as_bytes()).expect("hmac key");
    mac.update(format!("POST\n{path}\n{query}").as_bytes());
    let sig = hex(&mac.finalize().into_bytes());
    debug_assert!(path.contains(APP_ID));
    format!("http://{HOST}{path}?{query}&auth_signature={sig}")
}

/// POSTs a signed JSON body to soketi's HTTP API (a minute at most).
async fn post_json(
    http: &reqwest::Client, url: &str, body: &str,
) -> reqwest::Result<reqwest::Response> {
    http.post(url)
        .header("content-type", "application/json")
        .body(body.to_string())
        .timeout(Duration::from_secs(60))
        .send()
        .await
}
