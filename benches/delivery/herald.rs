//! The Herald server under test (the release binary on a temporary data dir,
//! alone on the embedded store or a node of a cluster) and a small Admin API
//! client for setting scenarios up.

use serde_json::{json, Value};
use std::future::Future;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub struct Server {
    child: Child,
    pub base: String,
    pub addr: SocketAddr,
    pub pk: String,
    pub sk: String,
    dir: tempfile::TempDir,
}

impl Server {
    /// Starts `herald serve` on 127.0.0.1 with rate limits high enough for a load test.
    pub fn start() -> Server {
        let pk = format!("pk_bench_{:032x}", rand::random::<u128>());
        let sk = format!("sk_bench_{:032x}", rand::random::<u128>());
        Server::launch(None, None, &pk, &sk)
    }

    /// Starts one node of a cluster: `herald serve` on the PostgreSQL `store`
    /// and the NATS `bus`, with the cluster's bootstrap keys (the first node
    /// makes the project, the others find it).
    pub fn start_node(store: &str, bus: &str, pk: &str, sk: &str) -> Server {
        Server::launch(Some(store), Some(bus), pk, sk)
    }

    /// Starts a single node (no bus) on the PostgreSQL `store`.
    pub fn start_pg(store: &str) -> Server {
        let pk = format!("pk_bench_{:032x}", rand::random::<u128>());
        let sk = format!("sk_bench_{:032x}", rand::random::<u128>());
        Server::launch(Some(store), None, &pk, &sk)
    }

    fn launch(store: Option<&str>, bus: Option<&str>, pk: &str, sk: &str) -> Server {
        let dir = tempfile::tempdir().expect("temp dir");
        // `HERALD_BIN` runs another build (an earlier commit's, to compare
        // two builds with one bench binary), as in the soak.
        let bin =
            std::env::var("HERALD_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_herald").into());
        let mut cmd = Command::new(bin);
        cmd.args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--admin-rate",
            "1000000000",
            "--user-rate",
            "1000000000",
        ])
        .arg("--data-dir")
        .arg(dir.path())
        // The webhook sink listens on 127.0.0.1, which the egress guard refuses.
        // Opening just that address (rather than turning the guard off) keeps
        // the guard's checks in the measured path.
        .args(["--egress-allow", "127.0.0.1/32"]);
        // The store and bus are the scenario's, never the caller's environment's.
        cmd.env_remove("HERALD_ALLOW_PRIVATE_DESTINATIONS")
            .env_remove("HERALD_STORE")
            .env_remove("HERALD_BUS");
        if let Some(store) = store {
            cmd.args(["--store", store]);
        }
        if let Some(bus) = bus {
            cmd.args(["--bus", bus]);
        }
        let mut child = cmd
            .env("HERALD_BOOTSTRAP_PUBLIC_KEY", pk)
            .env("HERALD_BOOTSTRAP_SECRET_KEY", sk)
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
        let addr = base
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .parse()
            .expect("listening address");
        // Built first, so a server that never serves is stopped by `Drop`.
        let srv = Server {
            child,
            base,
            addr,
            pk: pk.to_string(),
            sk: sk.to_string(),
            dir,
        };
        wait_until_serving(srv.addr);
        srv
    }

    /// The server's data directory (on PostgreSQL, only its `ops.json` and
    /// the like).
    pub fn data_dir(&self) -> &std::path::Path {
        self.dir.path()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn api(&self) -> Api {
        Api {
            http: reqwest::Client::builder()
                .pool_max_idle_per_host(128)
                .build()
                .expect("client"),
            base: self.base.clone(),
            pk: self.pk.clone(),
            sk: self.sk.clone(),
        }
    }

    pub fn rss_kib(&self) -> u64 {
        proc_status_kib(self.pid(), "VmRSS:")
    }

    pub fn peak_kib(&self) -> u64 {
        proc_status_kib(self.pid(), "VmHWM:")
    }

    /// CPU time (user + system) the server has used so far, in milliseconds.
    pub fn cpu_ms(&self) -> f64 {
        proc_cpu_ms(self.pid())
    }

    /// Resets the kernel's peak-RSS mark so `peak_kib` covers only what follows.
    pub fn reset_peak(&self) {
        let _ = std::fs::write(format!("/proc/{}/clear_refs", self.pid()), "5");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits (at most 60 s) until the server past its `listening on` line
/// serves requests: until then it answers that it is starting (it opens the
/// store, and on PostgreSQL migrates the schema, after binding).
fn wait_until_serving(addr: SocketAddr) {
    use std::io::{Read, Write};
    let t0 = Instant::now();
    loop {
        let starting = (|| -> std::io::Result<bool> {
            let mut s = std::net::TcpStream::connect(addr)?;
            s.set_read_timeout(Some(Duration::from_secs(10)))?;
            s.write_all(
                format!("GET /readyz HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n")
                    .as_bytes(),
            )?;
            let mut buf = String::new();
            s.read_to_string(&mut buf)?;
            Ok(buf.is_empty() || buf.contains("the server is starting"))
        })();
        if let Ok(false) = starting {
            return;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "herald listened on {addr} but did not serve within 60 s ({starting:?})"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// CPU time (user + system) process `pid` has used so far, exited threads
/// included, in milliseconds (the kernel counts in clock ticks, 10 ms).
pub fn proc_cpu_ms(pid: u32) -> f64 {
    let (user, system) = proc_cpu_split_ms(pid);
    user + system
}

/// CPU time process `pid` has used so far, as (user, system) milliseconds.
pub fn proc_cpu_split_ms(pid: u32) -> (f64, f64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the parenthesised command name: utime and stime are the
    // 12th and 13th (14th and 15th of the line).
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<f64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|x| x.parse().ok())
        .collect();
    (
        f.first().copied().unwrap_or(0.0) * 10.0,
        f.get(1).copied().unwrap_or(0.0) * 10.0,
    )
}

/// A `/proc/PID/status` field in KiB (0 when unreadable).
pub fn proc_status_kib(pid: u32, field: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Runs `f(0..n)` on `conc` tasks (spread over the runtime's threads).
/// Items per request of the bulk endpoints (their limit).
const BULK: usize = 1000;

pub async fn parallel<F, Fut>(n: usize, conc: usize, f: F)
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send,
{
    let f = Arc::new(f);
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..conc.min(n.max(1)) {
        let (f, next) = (f.clone(), next.clone());
        tasks.spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                f(i).await;
            }
        });
    }
    while let Some(r) = tasks.join_next().await {
        r.expect("setup task");
    }
}

#[derive(Clone)]
pub struct Api {
    pub http: reqwest::Client,
    pub base: String,
    pub pk: String,
    pub sk: String,
}

impl Api {
    pub async fn admin(
        &self, method: reqwest::Method, path: &str, body: Option<Value>,
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

    pub async fn in_app_channel(&self) -> String {
        let (_, v) = self
            .admin(reqwest::Method::GET, "/admin/v1/channels", None)
            .await;
        v["items"]
            .as_array()
            .expect("channels")
            .iter()
            .find(|c| c["type"] == "in_app")
            .expect("in_app channel")["id"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Creates and activates a flow.
    pub async fn flow(&self, handle: &str, steps: Value) {
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

    /// An in_app-only flow with a short body.
    pub async fn in_app_flow(&self, handle: &str) {
        let ch = self.in_app_channel().await;
        self.flow(
            handle,
            json!([{"type": "channel", "channel_id": ch,
                    "template": {"body": "Hello {{ recipient.external_id }}"}}]),
        )
        .await;
    }

    /// Runs a flow; returns (status, body, time to the response).
    pub async fn run(&self, flow: &str, body: Value) -> (u16, Value, Duration) {
        let t0 = Instant::now();
        let (s, v) = self
            .admin(
                reqwest::Method::POST,
                &format!("/admin/v1/flows/{flow}/run"),
                Some(body),
            )
            .await;
        (s, v, t0.elapsed())
    }

    /// Creates users `prefix-0..n` with `POST /admin/v1/users/bulk`, 1,000 a
    /// request, 4 requests at a time (setup, not measured: one PUT per user
    /// made the setup of a 10,000-user run dominate a cluster run's database).
    pub async fn users(&self, prefix: &str, n: usize) {
        let api = self.clone();
        let prefix = prefix.to_string();
        parallel(n.div_ceil(BULK), 4, move |b| {
            let api = api.clone();
            let users: Vec<Value> = (b * BULK..((b + 1) * BULK).min(n))
                .map(|i| json!({"external_id": format!("{prefix}-{i}"), "first_name": "Bench"}))
                .collect();
            async move {
                let (s, v) = api
                    .admin(
                        reqwest::Method::POST,
                        "/admin/v1/users/bulk",
                        Some(json!({ "users": users })),
                    )
                    .await;
                assert_eq!(s, 200, "bulk users: {v}");
                let refused = v["results"]
                    .as_array()
                    .map(|r| r.iter().filter(|i| i.get("error").is_some()).count());
                assert_eq!(refused, Some(0), "bulk users: {v}");
            }
        })
        .await;
    }

    /// Subscribes the existing users `prefix-0..n` to `topic` (created here)
    /// with the bulk form of `POST /admin/v1/topics/{key}/subscriptions`, 1,000
    /// a request, one request at a time (they all lock the topic's row).
    pub async fn subscribe_all(&self, prefix: &str, n: usize, topic: &str) {
        let (s, v) = self
            .admin(
                reqwest::Method::PUT,
                &format!("/admin/v1/topics/{topic}"),
                Some(json!({"name": topic})),
            )
            .await;
        assert!(s == 201 || s == 200, "topic: {v}");
        for b in 0..n.div_ceil(BULK) {
            let users: Vec<String> = (b * BULK..((b + 1) * BULK).min(n))
                .map(|i| format!("{prefix}-{i}"))
                .collect();
            let (s, v) = self
                .admin(
                    reqwest::Method::POST,
                    &format!("/admin/v1/topics/{topic}/subscriptions"),
                    Some(json!({ "users": users })),
                )
                .await;
            assert_eq!(s, 200, "bulk subscribe: {v}");
        }
    }

    /// Polls a run until it is processed; returns when that was seen, if it was.
    pub async fn wait_processed(&self, run: &str, limit: Duration) -> Option<Instant> {
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
                return Some(Instant::now());
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        None
    }

    /// Waits until no notification of the project is pending (after setup runs).
    pub async fn wait_idle(&self, limit: Duration) -> bool {
        let t0 = Instant::now();
        while t0.elapsed() < limit {
            let (_, v) = self
                .admin(
                    reqwest::Method::GET,
                    "/admin/v1/notifications?status=pending&limit=1",
                    None,
                )
                .await;
            if v["items"].as_array().is_some_and(|a| a.is_empty()) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }
}
