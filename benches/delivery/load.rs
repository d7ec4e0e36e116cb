//! A lean closed-loop HTTP/1.1 load client on raw hyper: `conns` keep-alive
//! connections, each sending its next request as soon as the previous response is
//! read, for a fixed time after a short warm-up. The same client drives Herald and
//! the minimal actix-web ceiling, so their ratio does not depend on the client.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Latency percentiles over a sample (milliseconds).
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub n: usize,
    pub min: f64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

impl Stats {
    /// `ms` is sorted here.
    pub fn of(ms: &mut [f64]) -> Stats {
        ms.sort_by(|a, b| a.total_cmp(b));
        Stats {
            n: ms.len(),
            min: ms.first().copied().unwrap_or(f64::NAN),
            p50: pct(ms, 0.50),
            p99: pct(ms, 0.99),
            max: ms.last().copied().unwrap_or(f64::NAN),
        }
    }

    pub fn json(&self) -> Value {
        json!({"min_ms": num(self.min), "p50_ms": num(self.p50), "p99_ms": num(self.p99), "max_ms": num(self.max)})
    }
}

/// Nearest-rank percentile of a sorted sample.
pub fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// A JSON number, or null for NaN/infinity.
pub fn num(x: f64) -> Value {
    if x.is_finite() {
        json!((x * 1000.0).round() / 1000.0)
    } else {
        Value::Null
    }
}

#[derive(Clone, Debug, Default)]
pub struct LoadResult {
    pub requests: u64,
    pub errors: u64,
    pub rps: f64,
    pub latency: Stats,
    pub seconds: f64,
    pub first_error: Option<String>,
    /// CPU used while driving, in % of one core: this client (the runtime's
    /// worker threads) and the server.
    pub client_cpu_pct: f64,
    pub server_cpu_pct: f64,
}

/// Where the server's CPU time is read.
#[derive(Clone, Copy)]
pub enum ServerCpu {
    /// Another process.
    Pid(u32),
    /// Threads of this process other than the runtime's workers.
    InProcess,
}

const TICKS_PER_S: f64 = 100.0; // USER_HZ on Linux

/// utime + stime (seconds) from a `/proc/.../stat` line.
fn stat_cpu(stat: &str) -> f64 {
    // Fields after the parenthesised command name; utime and stime are 14 and 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let t = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    (t(11) + t(12)) / TICKS_PER_S
}

/// CPU seconds of each thread of this process: tid -> (a tokio runtime thread, seconds).
fn own_threads_cpu() -> HashMap<String, (bool, f64)> {
    let mut out = HashMap::new();
    if let Ok(dir) = std::fs::read_dir("/proc/self/task") {
        for e in dir.flatten() {
            let comm = std::fs::read_to_string(e.path().join("comm")).unwrap_or_default();
            let cpu = stat_cpu(&std::fs::read_to_string(e.path().join("stat")).unwrap_or_default());
            out.insert(
                e.file_name().to_string_lossy().into_owned(),
                (comm.starts_with("tokio-r"), cpu),
            );
        }
    }
    out
}

/// CPU used between two snapshots: (client, server) seconds. Threads that ended in
/// between are not counted; threads that started count in full.
struct CpuSnapshot {
    threads: HashMap<String, (bool, f64)>,
    server_pid: f64,
}

fn cpu_snapshot(server: ServerCpu) -> CpuSnapshot {
    CpuSnapshot {
        threads: own_threads_cpu(),
        server_pid: match server {
            ServerCpu::Pid(pid) => {
                stat_cpu(&std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default())
            }
            ServerCpu::InProcess => 0.0,
        },
    }
}

fn cpu_used(a: &CpuSnapshot, b: &CpuSnapshot, server: ServerCpu) -> (f64, f64) {
    let (mut client, mut other) = (0.0, 0.0);
    for (tid, (is_client, cpu)) in &b.threads {
        let before = a.threads.get(tid).map_or(0.0, |t| t.1);
        let d = (cpu - before).max(0.0);
        if *is_client {
            client += d;
        } else {
            other += d;
        }
    }
    match server {
        ServerCpu::Pid(_) => (client, (b.server_pid - a.server_pid).max(0.0)),
        ServerCpu::InProcess => (client, other),
    }
}

impl LoadResult {
    pub fn json(&self) -> Value {
        let mut v = self.latency.json();
        v["requests"] = json!(self.requests);
        v["errors"] = json!(self.errors);
        v["rps"] = num(self.rps);
        v["seconds"] = num(self.seconds);
        v["client_cpu_pct"] = num(self.client_cpu_pct);
        v["server_cpu_pct"] = num(self.server_cpu_pct);
        if let Some(e) = &self.first_error {
            v["first_error"] = json!(e);
        }
        v
    }
}

/// Builds the request a connection sends next: (connection index, sequence number).
pub type MakeRequest = Arc<dyn Fn(usize, u64) -> Request<Full<Bytes>> + Send + Sync>;

/// A request to `path` with `headers` and an optional JSON body.
pub fn request(
    method: &str, path: &str, headers: &[(&str, &str)], body: Option<String>,
) -> Request<Full<Bytes>> {
    let mut b = Request::builder()
        .method(method)
        .uri(path)
        .header("host", "127.0.0.1");
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    let body = match body {
        Some(s) => {
            b = b.header("content-type", "application/json");
            Bytes::from(s)
        }
        None => Bytes::new(),
    };
    b.body(Full::new(body)).expect("request")
}

/// Drives `addr` with `conns` connections for `warmup` (not recorded) and then
/// `duration`. Every loop ends at the deadline; a connection that fails more than
/// 100 times in a row gives up.
pub async fn drive(
    addr: SocketAddr, server: ServerCpu, conns: usize, warmup: Duration, duration: Duration,
    make: MakeRequest,
) -> LoadResult {
    let cpu0 = cpu_snapshot(server);
    let t_cpu = Instant::now();
    let start = Instant::now() + warmup;
    let end = start + duration;
    let mut tasks = tokio::task::JoinSet::new();
    for c in 0..conns {
        let make = make.clone();
        tasks.spawn(async move { connection(addr, c, start, end, make).await });
    }
    let (mut lat, mut requests, mut errors, mut first_error) = (vec![], 0u64, 0u64, None);
    while let Some(r) = tasks.join_next().await {
        let (l, e, fe) = r.expect("load connection");
        requests += l.len() as u64;
        errors += e;
        lat.extend(l);
        if first_error.is_none() {
            first_error = fe;
        }
    }
    let (client_cpu, server_cpu) = cpu_used(&cpu0, &cpu_snapshot(server), server);
    let wall = t_cpu.elapsed().as_secs_f64();
    let seconds = duration.as_secs_f64();
    LoadResult {
        client_cpu_pct: 100.0 * client_cpu / wall,
        server_cpu_pct: 100.0 * server_cpu / wall,
        requests,
        errors,
        rps: requests as f64 / seconds,
        latency: Stats::of(&mut lat),
        seconds,
        first_error,
    }
}

/// One connection's loop: (latencies in ms of successful responses inside the
/// measured window, errors inside it, the first error seen).
async fn connection(
    addr: SocketAddr, c: usize, start: Instant, end: Instant, make: MakeRequest,
) -> (Vec<f64>, u64, Option<String>) {
    let (mut lat, mut errors, mut first_error) = (Vec::with_capacity(4096), 0u64, None);
    let mut seq = 0u64;
    let mut failures_in_row = 0;
    'outer: while Instant::now() < end && failures_in_row < 100 {
        let stream = match tokio::net::TcpStream::connect(addr).await {
            Ok(s) => s,
            Err(e) => {
                failures_in_row += 1;
                first_error.get_or_insert_with(|| format!("connect: {e}"));
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let Ok((mut sender, conn)) =
            hyper::client::conn::http1::handshake(TokioIo::new(stream)).await
        else {
            failures_in_row += 1;
            continue;
        };
        let driver = tokio::spawn(async move {
            let _ = conn.await;
        });
        while Instant::now() < end {
            let req = make(c, seq);
            seq += 1;
            let t0 = Instant::now();
            // Ok(true): a 2xx; Ok(false): another status; Err: the connection broke.
            let outcome = match sender.send_request(req).await {
                Ok(resp) => {
                    let status = resp.status();
                    match resp.into_body().collect().await {
                        Ok(_) if status.is_success() => Ok(true),
                        Ok(b) => {
                            let b = b.to_bytes();
                            first_error.get_or_insert_with(|| {
                                let head = &b[..b.len().min(200)];
                                format!("status {status}: {}", String::from_utf8_lossy(head))
                            });
                            Ok(false)
                        }
                        Err(e) => Err(format!("body: {e}")),
                    }
                }
                Err(e) => Err(format!("send: {e}")),
            };
            let t1 = Instant::now();
            let measured = t0 >= start && t1 <= end;
            match outcome {
                Ok(true) => {
                    failures_in_row = 0;
                    if measured {
                        lat.push((t1 - t0).as_secs_f64() * 1000.0);
                    }
                }
                Ok(false) => {
                    failures_in_row += 1;
                    if measured {
                        errors += 1;
                    }
                    if failures_in_row >= 100 {
                        break 'outer;
                    }
                }
                Err(e) => {
                    failures_in_row += 1;
                    if measured {
                        errors += 1;
                    }
                    first_error.get_or_insert(e);
                    driver.abort();
                    continue 'outer;
                }
            }
        }
        driver.abort();
    }
    (lat, errors, first_error)
}

/// Waits until `c` sockets reported ready (or failed to connect), for at most
/// three minutes: `(connected, first connection error)`.
pub async fn await_ready(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<Result<(), String>>, c: usize,
) -> (usize, Option<String>) {
    let (mut connected, mut failed, mut first_error) = (0, 0, None);
    let deadline = Instant::now() + Duration::from_secs(180);
    while connected + failed < c {
        match tokio::time::timeout_at(deadline.into(), rx.recv()).await {
            Ok(Some(Ok(()))) => connected += 1,
            Ok(Some(Err(e))) => {
                failed += 1;
                first_error.get_or_insert(e);
            }
            _ => break,
        }
    }
    (connected, first_error)
}

/// Opens a WebSocket client connection the way every live scenario does, for
/// Herald and the peer alike. The read buffer is 4 KiB instead of
/// tungstenite's 128 KiB: tungstenite zero-fills its whole free buffer before
/// each read, which for thousands of sockets receiving one small frame each
/// cost the harness (which shares the machine with the server under test)
/// about a sixth of all CPU in a 5,000-socket run.
pub async fn ws_connect(
    url: &str,
) -> Result<
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
    String,
> {
    let config =
        tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default().read_buffer_size(4096);
    tokio_tungstenite::connect_async_with_config(url, Some(config), true)
        .await
        .map(|(ws, _)| ws)
        .map_err(|e| format!("connect: {e}"))
}

/// A number for the table: thousands separators, `-` when absent.
pub(crate) fn n0(x: f64) -> String {
    if !x.is_finite() {
        return "-".into();
    }
    let s = format!("{:.0}", x.abs());
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    if x < 0.0 {
        format!("-{out}")
    } else {
        out
    }
}

pub(crate) fn n1(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.1}")
    } else {
        "-".into()
    }
}

pub(crate) fn n2(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}")
    } else {
        "-".into()
    }
}
