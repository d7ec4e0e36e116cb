//! Herald's delivery benchmark harness (`cargo bench --bench delivery`).
//!
//! Starts the real `herald` binary (release build) on a temporary data dir and
//! drives it over HTTP and WebSockets from this process, like a product would.
//! Scenarios (choose with `--scenario NAME`, default: all; sizes with `--sizes`):
//!
//! - `live`: C users each with an open WebSocket; one topic run to all of them;
//!   time from the run's 202 to each socket's `feed_entry.created`, events/s, and
//!   the server's resident memory per open socket.
//! - `pipeline`: one run with an in_app and a webhook step (answered by a sink in
//!   this process) to N recipients (a topic run when N > 1,000); deliveries/s from
//!   the 202 to the run being processed, and the 202's latency.
//!
//! Prints a table and writes `bench-results/delivery.json`. Only 127.0.0.1 is used;
//! every loop is bounded. `--smoke` runs tiny sizes (CI keeps the harness alive).

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

struct Server {
    child: Child,
    base: String,
    pk: String,
    sk: String,
    _dir: tempfile::TempDir,
}

impl Server {
    fn start() -> Server {
        let dir = tempfile::tempdir().expect("temp dir");
        let pk = format!("pk_bench_{:032x}", rand::random::<u128>());
        let sk = format!("sk_bench_{:032x}", rand::random::<u128>());
        let mut child = Command::new(env!("CARGO_BIN_EXE_herald"))
            .args([
                "serve",
                "--bind",
                "127.0.0.1:0",
                "--admin-rate",
                "1000000",
                "--user-rate",
                "1000000",
            ])
            .arg("--data-dir")
            .arg(dir.path())
            .env("HERALD_BOOTSTRAP_PUBLIC_KEY", &pk)
            .env("HERALD_BOOTSTRAP_SECRET_KEY", &sk)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start herald");
        let out = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(out).lines();
        let base = loop {
            match lines.next() {
                Some(Ok(l)) => {
                    if let Some(a) = l.split("listening on ").nth(1) {
                        break a.trim().to_string();
                    }
                }
                _ => panic!("herald exited before listening"),
            }
        };
        std::thread::spawn(move || for _ in lines {});
        Server {
            child,
            base,
            pk,
            sk,
            _dir: dir,
        }
    }

    fn rss_kib(&self) -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        s.lines()
            .find(|l| l.starts_with("VmRSS:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    }

    fn peak_kib(&self) -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        s.lines()
            .find(|l| l.starts_with("VmHWM:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}

#[derive(Clone)]
struct Api {
    http: reqwest::Client,
    base: String,
    pk: String,
    sk: String,
}

impl Api {
    async fn admin(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut rb = self
            .http
            .request(method, format!("{}{}", self.base, path))
            .header("x-service-api-key", &self.pk)
            .header("x-service-secret-key", &self.sk);
        if let Some(b) = body {
            rb = rb.json(&b);
        }
        let r = rb.send().await.expect("request");
        let status = r.status().as_u16();
        let v = r.json::<Value>().await.unwrap_or(Value::Null);
        (status, v)
    }

    async fn in_app_channel(&self) -> String {
        let (_, v) = self
            .admin(reqwest::Method::GET, "/admin/v1/channels", None)
            .await;
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "in_app")
            .unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    }

    async fn flow(&self, handle: &str, steps: Value) {
        let (s, v) = self
            .admin(
                reqwest::Method::POST,
                "/admin/v1/flows",
                Some(json!({"handle": handle, "name": handle, "steps": steps})),
            )
            .await;
        assert_eq!(s, 201, "create flow: {v}");
        let (s, v) = self
            .admin(
                reqwest::Method::POST,
                &format!("/admin/v1/flows/{handle}/activate"),
                None,
            )
            .await;
        assert_eq!(s, 200, "activate: {v}");
    }

    /// Creates users `prefix-0..n` subscribed to `topic`, 64 requests at a time.
    async fn users_on_topic(&self, prefix: &str, n: usize, topic: &str) {
        let (s, _) = self
            .admin(
                reqwest::Method::PUT,
                &format!("/admin/v1/topics/{topic}"),
                Some(json!({"name": topic})),
            )
            .await;
        assert!(s == 201 || s == 200);
        let sem = Arc::new(Semaphore::new(64));
        let mut tasks = vec![];
        for i in 0..n {
            let api = self.clone();
            let sem = sem.clone();
            let (ext, topic) = (format!("{prefix}-{i}"), topic.to_string());
            tasks.push(tokio::spawn(async move {
                let _p = sem.acquire().await.unwrap();
                api.admin(
                    reqwest::Method::PUT,
                    &format!("/admin/v1/users/{ext}"),
                    Some(json!({"first_name": "B"})),
                )
                .await;
                let (s, v) = api
                    .admin(
                        reqwest::Method::POST,
                        &format!("/admin/v1/topics/{topic}/subscriptions"),
                        Some(json!({"external_id": ext})),
                    )
                    .await;
                assert_eq!(s, 201, "subscribe: {v}");
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
    }

    async fn wait_processed(&self, run: &str, limit: Duration) -> bool {
        let t0 = Instant::now();
        while t0.elapsed() < limit {
            let (_, v) = self
                .admin(
                    reqwest::Method::GET,
                    &format!("/admin/v1/flow_runs/{run}"),
                    None,
                )
                .await;
            if v["status"] == "processed" {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        false
    }
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// Live fan-out to `c` connected users.
async fn live(c: usize) -> Value {
    let srv = Server::start();
    let api = Api {
        http: reqwest::Client::new(),
        base: srv.base.clone(),
        pk: srv.pk.clone(),
        sk: srv.sk.clone(),
    };
    let ch = api.in_app_channel().await;
    api.flow("live", json!([{"type": "channel", "channel_id": ch, "template": {"body": "Hello {{ recipient.external_id }}"}}])).await;
    api.users_on_topic("live", c, "everyone").await;
    let rss_before = srv.rss_kib();
    let ws_base = srv.base.replacen("http://", "ws://", 1);
    // Connect every socket and wait for its hello.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(usize, Instant)>();
    let ready = Arc::new(tokio::sync::Barrier::new(c + 1));
    let sem = Arc::new(Semaphore::new(256));
    for i in 0..c {
        let url = format!("{ws_base}/user/v1/feed/live?api_key={}", srv.pk);
        let (tx, ready, sem) = (tx.clone(), ready.clone(), sem.clone());
        tokio::spawn(async move {
            let permit = sem.acquire_owned().await.unwrap();
            let (mut ws, _) = tokio_tungstenite::connect_async(url)
                .await
                .expect("ws connect");
            ws.send(tokio_tungstenite::tungstenite::Message::Text(
                json!({"type": "auth", "user_id": format!("live-{i}")})
                    .to_string()
                    .into(),
            ))
            .await
            .unwrap();
            let hello = ws.next().await.unwrap().unwrap();
            assert!(hello.to_text().unwrap().contains("\"hello\""));
            drop(permit);
            ready.wait().await;
            while let Some(Ok(m)) = ws.next().await {
                if let Ok(t) = m.to_text() {
                    if t.contains("feed_entry.created") {
                        let _ = tx.send((i, Instant::now()));
                        break;
                    }
                }
            }
            // Keep the socket open until the scenario ends.
            tokio::time::sleep(Duration::from_secs(5)).await;
        });
    }
    ready.wait().await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_sockets = srv.rss_kib();
    let t0 = Instant::now();
    let (s, run) = api
        .admin(
            reqwest::Method::POST,
            "/admin/v1/flows/live/run",
            Some(json!({"topic": "everyone"})),
        )
        .await;
    let t202 = Instant::now();
    assert_eq!(s, 202, "run: {run}");
    let mut lat = Vec::with_capacity(c);
    let deadline = Instant::now() + Duration::from_secs(120);
    while lat.len() < c {
        match tokio::time::timeout_at(deadline.into(), rx.recv()).await {
            Ok(Some((_, t))) => lat.push(t.duration_since(t202).as_secs_f64() * 1000.0),
            _ => break,
        }
    }
    let total = t0.elapsed();
    lat.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let last = lat.last().copied().unwrap_or(f64::NAN);
    json!({
        "scenario": "live", "sockets": c, "received": lat.len(),
        "accept_ms": (t202 - t0).as_secs_f64() * 1000.0,
        "p50_ms": pct(&lat, 0.5), "p99_ms": pct(&lat, 0.99), "max_ms": last,
        "events_per_s": lat.len() as f64 / (last / 1000.0),
        "rss_per_socket_kib": (rss_sockets.saturating_sub(rss_before)) as f64 / c as f64,
        "server_peak_mib": srv.peak_kib() as f64 / 1024.0,
        "wall_s": total.as_secs_f64(),
    })
}

/// A webhook sink that answers 200 to everything and counts requests.
async fn sink() -> (String, Arc<std::sync::atomic::AtomicU64>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let count = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let c2 = count.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                break;
            };
            let c = c2.clone();
            tokio::spawn(async move {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let mut buf = vec![0u8; 64 * 1024];
                let mut acc: Vec<u8> = vec![];
                loop {
                    let n = match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    acc.extend_from_slice(&buf[..n]);
                    // Answer every complete request (headers + content-length body).
                    loop {
                        let Some(h) = acc.windows(4).position(|w| w == b"\r\n\r\n") else {
                            break;
                        };
                        let head = String::from_utf8_lossy(&acc[..h]).to_ascii_lowercase();
                        let len: usize = head
                            .lines()
                            .find_map(|l| {
                                l.strip_prefix("content-length:")
                                    .map(|v| v.trim().parse().unwrap_or(0))
                            })
                            .unwrap_or(0);
                        if acc.len() < h + 4 + len {
                            break;
                        }
                        acc.drain(..h + 4 + len);
                        c.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if sock
                            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                            .await
                            .is_err()
                        {
                            return;
                        }
                    }
                }
            });
        }
    });
    (format!("http://{addr}/hook"), count)
}

/// One run with an in_app and a webhook step to `n` recipients.
async fn pipeline(n: usize) -> Value {
    let srv = Server::start();
    let api = Api {
        http: reqwest::Client::new(),
        base: srv.base.clone(),
        pk: srv.pk.clone(),
        sk: srv.sk.clone(),
    };
    let ch = api.in_app_channel().await;
    let (url, received) = sink().await;
    let (s, hook) = api
        .admin(
            reqwest::Method::POST,
            "/admin/v1/channels",
            Some(json!({"type": "chat", "provider": "webhook", "config": {"url": url}})),
        )
        .await;
    assert_eq!(s, 201);
    api.flow(
        "pipe",
        json!([
            {"type": "channel", "channel_id": ch, "template": {"body": "Hi {{ recipient.external_id }}"}},
            {"type": "channel", "channel_id": hook["id"], "template": {"body": "Hi {{ recipient.external_id }}"}}
        ]),
    )
    .await;
    let body = if n <= 1000 {
        // Users exist beforehand, as in a product that has identified them.
        let recipients: Vec<Value> = (0..n)
            .map(|i| json!({"external_id": format!("p-{i}")}))
            .collect();
        for chunk in recipients.chunks(1000) {
            let (s, _) = api
                .admin(
                    reqwest::Method::POST,
                    "/admin/v1/flows/pipe/run",
                    Some(json!({"recipients": chunk})),
                )
                .await;
            assert_eq!(s, 202);
        }
        api.wait_processed_all().await;
        json!({"recipients": recipients})
    } else {
        api.users_on_topic("p", n, "all").await;
        json!({"topic": "all"})
    };
    let before = received.load(std::sync::atomic::Ordering::Relaxed);
    let t0 = Instant::now();
    let (s, run) = api
        .admin(
            reqwest::Method::POST,
            "/admin/v1/flows/pipe/run",
            Some(body),
        )
        .await;
    let accept = t0.elapsed();
    assert_eq!(s, 202, "run: {run}");
    let ok = api
        .wait_processed(run["id"].as_str().unwrap(), Duration::from_secs(300))
        .await;
    let total = t0.elapsed();
    let hooks = received.load(std::sync::atomic::Ordering::Relaxed) - before;
    json!({
        "scenario": "pipeline", "recipients": n, "processed": ok,
        "accept_ms": accept.as_secs_f64() * 1000.0,
        "total_ms": total.as_secs_f64() * 1000.0,
        "deliveries_per_s": (2 * n) as f64 / total.as_secs_f64(),
        "webhooks_received": hooks,
        "server_peak_mib": srv.peak_kib() as f64 / 1024.0,
    })
}

impl Api {
    /// Waits until no run of the project is pending (setup runs).
    async fn wait_processed_all(&self) {
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(120) {
            let (_, v) = self
                .admin(
                    reqwest::Method::GET,
                    "/admin/v1/notifications?status=pending&limit=1",
                    None,
                )
                .await;
            if v["items"].as_array().is_some_and(|a| a.is_empty()) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let smoke = std::env::args().any(|a| a == "--smoke");
    let scenario = arg("--scenario").unwrap_or_else(|| "all".into());
    let sizes = |default: &[usize]| -> Vec<usize> {
        if smoke {
            return vec![20];
        }
        arg("--sizes")
            .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
            .unwrap_or_else(|| default.to_vec())
    };
    let mut results = vec![];
    if scenario == "all" || scenario == "live" {
        for c in sizes(&[1000, 5000, 10000]) {
            let r = live(c).await;
            println!(
                "live      sockets={:>6}  received={:>6}  p50={:>7.1} ms  p99={:>7.1} ms  max={:>7.1} ms  events/s={:>8.0}  rss/socket={:>5.1} KiB",
                c, r["received"], r["p50_ms"].as_f64().unwrap_or(0.0), r["p99_ms"].as_f64().unwrap_or(0.0),
                r["max_ms"].as_f64().unwrap_or(0.0), r["events_per_s"].as_f64().unwrap_or(0.0), r["rss_per_socket_kib"].as_f64().unwrap_or(0.0)
            );
            results.push(r);
        }
    }
    if scenario == "all" || scenario == "pipeline" {
        for n in sizes(&[1000, 10000, 100000]) {
            let r = pipeline(n).await;
            println!(
                "pipeline  recipients={:>6}  202={:>7.1} ms  total={:>8.0} ms  deliveries/s={:>8.0}  peak={:>6.0} MiB  processed={}",
                n, r["accept_ms"].as_f64().unwrap_or(0.0), r["total_ms"].as_f64().unwrap_or(0.0),
                r["deliveries_per_s"].as_f64().unwrap_or(0.0), r["server_peak_mib"].as_f64().unwrap_or(0.0), r["processed"]
            );
            results.push(r);
        }
    }
    std::fs::create_dir_all("bench-results").ok();
    let out = json!({"results": results});
    std::fs::write(
        "bench-results/delivery.json",
        serde_json::to_string_pretty(&out).unwrap(),
    )
    .ok();
    if smoke {
        let ok = results.iter().all(|r| {
            r.get("received")
                .map_or(true, |x| x.as_u64() == r["sockets"].as_u64())
                && r.get("processed").map_or(true, |p| p == true)
        });
        if !ok {
            eprintln!("smoke run failed: {out}");
            std::process::exit(1);
        }
        println!("smoke run ok");
    }
}
