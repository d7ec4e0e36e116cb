//! The soak (`cargo bench --bench delivery -- --soak 30m`): the release `herald`
//! on a data dir of its own under a steady open-loop load for a long time, with
//! a short retention window, to see whether disk, memory and latency level off
//! once the purge keeps pace with the traffic.
//!
//! Defaults: 400 runs/s of 5 recipients each, 2,000 users (`live-0..1999`) of
//! which 200 hold a live-feed WebSocket, one flow with an in_app step and a
//! webhook step answered by a sink in this process (127.0.0.1 only), and a
//! retention of 5 minutes set on the project. Every interval (a minute) it
//! prints and records the data dir's size on disk, the server's RSS, p50/p99 of
//! the run's 202, runs accepted, deliveries sent (the server's
//! `herald_deliveries_total`) and webhooks received. At the end: growth of the
//! data dir and RSS over the last 10 minutes (the last third of a shorter run),
//! p99 of the last interval against the first, bytes on disk per notification
//! still stored, then SIGTERM and a restart on the same data dir (time to the
//! `listening on` line and to `/readyz` answering 200), and, with the server
//! stopped, the logical bytes of each key space read straight from sled.
//! Writes `bench-results/soak.json` (`soak-smoke.json` with `--smoke`).
//!
//! Options: `--soak DURATION` (`30m`, `180s`, `1h`; default 30m), `--rate RUNS_PER_S`
//! (400), `--recipients N` (5), `--users N` (2,000), `--sockets N` (200),
//! `--retention WINDOW` (`5m`), `--interval SECS` (60), `--in-flight N` (256
//! requests at most; a run that would exceed it is counted as `late`, not
//! sent), `--soak-dir PATH` (use and keep this data dir, e.g. to grow a large
//! one with `--retention 90d`), and `--soak-restart PATH` (only measure
//! restarts, three, on an existing data dir). `HERALD_BIN=PATH` runs that
//! build of the server instead of this one's. `--smoke`: 20 s at 20 runs/s to 20 users,
//! retention 5 s (through `HERALD_RETENTION_TEST_SECONDS`), 3 s intervals.

use crate::arg;
use crate::herald::{proc_status_kib, Api};
use crate::load::{num, Stats};
use crate::purge::restarts;
use crate::scenarios::{live_socket, sink};
use crate::soak_store::SoakStore;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// The short commit the bench was built from, when git answers.
pub(crate) fn git_commit() -> Option<String> {
    Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// `30m`, `90s`, `1h`, or plain seconds.
pub(crate) fn duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    let (n, mult) = match s.chars().last()? {
        's' => (&s[..s.len() - 1], 1.0),
        'm' => (&s[..s.len() - 1], 60.0),
        'h' => (&s[..s.len() - 1], 3600.0),
        _ => (s, 1.0),
    };
    n.parse::<f64>()
        .ok()
        .filter(|x| *x > 0.0)
        .map(|x| Duration::from_secs_f64(x * mult))
}

pub(crate) struct Opts {
    pub(crate) duration: Duration,
    pub(crate) rate: f64,
    pub(crate) recipients: usize,
    pub(crate) users: usize,
    pub(crate) sockets: usize,
    pub(crate) retention: String,
    pub(crate) interval: Duration,
    pub(crate) in_flight: usize,
    pub(crate) dir: Option<PathBuf>,
}

impl Opts {
    pub(crate) fn parse(smoke: bool) -> Opts {
        let num = |name: &str, smoke_v: f64, v: f64| {
            arg(name)
                .and_then(|x| x.replace('_', "").parse::<f64>().ok())
                .unwrap_or(if smoke { smoke_v } else { v })
        };
        Opts {
            duration: arg("--soak")
                .and_then(|d| duration(&d))
                .unwrap_or(if smoke {
                    Duration::from_secs(20)
                } else {
                    Duration::from_secs(30 * 60)
                }),
            rate: num("--rate", 20.0, 400.0),
            recipients: num("--recipients", 5.0, 5.0) as usize,
            users: num("--users", 20.0, 2000.0) as usize,
            sockets: num("--sockets", 2.0, 200.0) as usize,
            retention: arg("--retention")
                .unwrap_or_else(|| (if smoke { "5s" } else { "5m" }).into()),
            interval: Duration::from_secs_f64(num("--interval", 3.0, 60.0).max(0.5)),
            in_flight: num("--in-flight", 32.0, 256.0) as usize,
            dir: arg("--soak-dir").map(PathBuf::from),
        }
    }
}

/// Bytes the files under `p` take on disk (allocated blocks, as `du`), and their
/// apparent length.
pub(crate) fn dir_bytes(p: &Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let (mut disk, mut len) = (0, 0);
    if let Ok(rd) = std::fs::read_dir(p) {
        for e in rd.flatten() {
            let Ok(m) = e.metadata() else { continue };
            if m.is_dir() {
                let (d, l) = dir_bytes(&e.path());
                disk += d;
                len += l;
            } else {
                disk += m.blocks() * 512;
                len += m.len();
            }
        }
    }
    (disk, len)
}

pub(crate) fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

/// A `herald serve` process on a given data dir.
pub(crate) struct Herald {
    pub(crate) child: Child,
    pub(crate) base: String,
    /// From spawning the process to its `listening on` line.
    pub(crate) listening: Duration,
    pub(crate) spawned: Instant,
}

impl Herald {
    /// `store`: the server's `--store` (none: sled in `dir`).
    pub(crate) fn start(
        dir: &Path, pk: &str, sk: &str, smoke: bool, store: Option<&str>,
    ) -> Herald {
        let spawned = Instant::now();
        // `HERALD_BIN` runs another build (an earlier commit's, to compare).
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
            "--egress-allow",
            "127.0.0.1/32",
        ])
        .arg("--data-dir")
        .arg(dir)
        .env_remove("HERALD_ALLOW_PRIVATE_DESTINATIONS")
        .env_remove("HERALD_STORE")
        .env_remove("HERALD_BUS")
        .env("HERALD_BOOTSTRAP_PUBLIC_KEY", pk)
        .env("HERALD_BOOTSTRAP_SECRET_KEY", sk)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
        if let Some(store) = store {
            cmd.args(["--store", store]);
        }
        if smoke {
            cmd.env("HERALD_RETENTION_TEST_SECONDS", "1")
                .env("HERALD_RETENTION_TICK", "1");
        }
        let mut child = cmd.spawn().expect("start herald");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
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
        let listening = spawned.elapsed();
        std::thread::spawn(move || for _ in lines {});
        Herald {
            child,
            base,
            listening,
            spawned,
        }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Polls `/readyz` until 200: the time from spawning.
    pub(crate) async fn ready(&self, http: &reqwest::Client) -> Option<Duration> {
        let deadline = Instant::now() + Duration::from_secs(300);
        while Instant::now() < deadline {
            if let Ok(r) = http.get(format!("{}/readyz", self.base)).send().await {
                if r.status().as_u16() == 200 {
                    return Some(self.spawned.elapsed());
                }
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        None
    }

    /// SIGTERM and wait: (seconds to exit, exit code).
    pub(crate) fn stop(mut self) -> (f64, Option<i32>) {
        let t = Instant::now();
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        loop {
            if let Ok(Some(s)) = self.child.try_wait() {
                return (t.elapsed().as_secs_f64(), s.code());
            }
            if t.elapsed() > Duration::from_secs(60) {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return (t.elapsed().as_secs_f64(), None);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Counters read from `/metrics`.
#[derive(Default, Clone, Copy)]
pub(crate) struct Scrape {
    /// `herald_deliveries_total` with status `sent`, every channel type.
    pub(crate) sent: f64,
    /// `herald_retention_purged_total{kind="notifications"}`.
    pub(crate) purged: f64,
    pub(crate) oldest_s: f64,
    /// `herald_allocator_bytes{kind="allocated"}` and `{kind="resident"}`.
    pub(crate) allocated: f64,
    pub(crate) resident: f64,
    /// `herald_bus_dropped_total`, `herald_bus_recoveries_total` and
    /// `herald_bus_recovered_frames_total` (a cluster node's).
    pub(crate) bus: [f64; 3],
}

/// The bus counters `Scrape::bus` holds, in its order.
pub(crate) const BUS_COUNTERS: [&str; 3] = ["dropped", "recoveries", "recovered_frames"];

pub(crate) async fn scrape(http: &reqwest::Client, base: &str) -> Scrape {
    let text = match http.get(format!("{base}/metrics")).send().await {
        Ok(r) => r.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    };
    let mut s = Scrape::default();
    for l in text.lines().filter(|l| !l.starts_with('#')) {
        let v: f64 = l
            .rsplit(' ')
            .next()
            .and_then(|x| x.parse().ok())
            .unwrap_or(0.0);
        if l.starts_with("herald_deliveries_total{") && l.contains("status=\"sent\"") {
            s.sent += v;
        } else if l.starts_with("herald_retention_purged_total{")
            && l.contains("kind=\"notifications\"")
        {
            s.purged += v;
        } else if l.starts_with("herald_retention_oldest_record_age_seconds") {
            s.oldest_s = v;
        } else if l.starts_with("herald_allocator_bytes{") && l.contains("kind=\"allocated\"") {
            s.allocated = v;
        } else if l.starts_with("herald_allocator_bytes{") && l.contains("kind=\"resident\"") {
            s.resident = v;
        } else if let Some(name) = l
            .strip_prefix("herald_bus_")
            .and_then(|r| r.split_once("_total"))
            .map(|(name, _)| name)
        {
            if let Some(i) = BUS_COUNTERS.iter().position(|c| *c == name) {
                s.bus[i] += v;
            }
        }
    }
    s
}

/// What the load task collected since the last sample.
#[derive(Default)]
pub(crate) struct Bucket {
    pub(crate) lat_ms: Vec<f64>,
    pub(crate) accepted: u64,
    pub(crate) errors: u64,
    pub(crate) late: u64,
    pub(crate) first_error: Option<String>,
}

/// The logical size of each key space (record counts and bytes), read with
/// sled itself from the data dir of a stopped server.
pub(crate) fn spaces(dir: &Path) -> Result<(Value, u64, u64, f64), String> {
    let t = Instant::now();
    let db = sled::Config::new()
        .path(dir.join(format!("v{}", herald_engine::store::FORMAT_VERSION)))
        .open()
        .map_err(|e| e.to_string())?;
    let open_s = t.elapsed().as_secs_f64();
    let data = db.open_tree("data").map_err(|e| e.to_string())?;
    let mut by: BTreeMap<u8, (u64, u64, u64)> = BTreeMap::new();
    for kv in data.iter() {
        let (k, v) = kv.map_err(|e| e.to_string())?;
        let e = by.entry(k.first().copied().unwrap_or(0)).or_default();
        e.0 += 1;
        e.1 += k.len() as u64;
        e.2 += v.len() as u64;
    }
    let total: u64 = by.values().map(|e| e.1 + e.2).sum();
    let names = herald_engine::store::T::ALL;
    let mut rows = vec![];
    for (tag, (n, kb, vb)) in &by {
        let name = names
            .get(*tag as usize)
            .map(|t| format!("{t:?}"))
            .unwrap_or_else(|| format!("0x{tag:02x}"));
        rows.push(
            json!({"space": name, "records": n, "key_bytes": kb, "value_bytes": vb,
            "bytes_per_record": num((kb + vb) as f64 / (*n).max(1) as f64),
            "share": num((kb + vb) as f64 / total.max(1) as f64)}),
        );
    }
    let notifications = by
        .get(&(herald_engine::store::T::notifications as u8))
        .map_or(0, |e| e.0);
    Ok((json!(rows), total, notifications, open_s))
}

/// `(value at the start of the window, value at the end, growth in %)` over the
/// last `window` of the samples (column `key`).
pub(crate) fn growth(rows: &[Value], key: &str, window: f64) -> (f64, f64, f64) {
    let end = rows
        .last()
        .map_or(0.0, |r| r["t_s"].as_f64().unwrap_or(0.0));
    let start = rows
        .iter()
        .rev()
        .find(|r| r["t_s"].as_f64().unwrap_or(0.0) <= end - window + 1e-6)
        .or(rows.first());
    let a = start.map_or(f64::NAN, |r| r[key].as_f64().unwrap_or(f64::NAN));
    let b = rows
        .last()
        .map_or(f64::NAN, |r| r[key].as_f64().unwrap_or(f64::NAN));
    (a, b, (b - a) / a * 100.0)
}

/// The soak's flow (`soak`: an in_app step, then a webhook step to
/// `hook_url`); on a kept data dir, its webhook channel pointed at `hook_url`.
pub(crate) async fn soak_flow(api: &Api, hook_url: &str) {
    let (_, flows) = api
        .admin(reqwest::Method::GET, "/admin/v1/flows/soak", None)
        .await;
    if flows["handle"] != "soak" {
        let ch = api.in_app_channel().await;
        let (s, hook) = api
            .admin(
                reqwest::Method::POST,
                "/admin/v1/channels",
                Some(json!({"type": "chat", "provider": "webhook", "config": {"url": hook_url}})),
            )
            .await;
        assert_eq!(s, 201, "webhook channel: {hook}");
        api.flow(
            "soak",
            json!([
                {"type": "channel", "channel_id": ch, "template": {"body": "Hi {{ recipient.external_id }}, your order shipped"}},
                {"type": "channel", "channel_id": hook["id"], "template": {"body": "Hi {{ recipient.external_id }}, your order shipped"}}
            ]),
        )
        .await;
    } else {
        // A kept data dir from an earlier soak: point its webhook channel at
        // this run's sink.
        let (_, chans) = api
            .admin(reqwest::Method::GET, "/admin/v1/channels", None)
            .await;
        for c in chans["items"].as_array().into_iter().flatten() {
            if c["provider"] == "webhook" {
                let (s, v) = api
                    .admin(
                        reqwest::Method::PUT,
                        &format!("/admin/v1/channels/{}", c["id"].as_str().unwrap_or("")),
                        Some(json!({"config": {"url": hook_url}})),
                    )
                    .await;
                assert_eq!(s, 200, "webhook channel: {v}");
            }
        }
    }
}

pub async fn main(smoke: bool) {
    if let Some(dir) = arg("--soak-restart") {
        restarts(Path::new(&dir)).await;
        return;
    }
    let o = Opts::parse(smoke);
    let store = SoakStore::from_args();
    let tmp;
    let dir = match &o.dir {
        Some(d) => d.clone(),
        None => {
            tmp = tempfile::tempdir().expect("temp dir");
            tmp.path().to_path_buf()
        }
    };
    let keys_file = dir.join("soak-keys.txt");
    let (pk, sk) = match std::fs::read_to_string(&keys_file) {
        Ok(s) if s.lines().count() == 2 => {
            let mut l = s.lines();
            (l.next().unwrap().to_string(), l.next().unwrap().to_string())
        }
        _ => {
            let pk = format!("pk_soak_{:032x}", rand::random::<u128>());
            let sk = format!("sk_soak_{:032x}", rand::random::<u128>());
            std::fs::create_dir_all(&dir).expect("data dir");
            std::fs::write(&keys_file, format!("{pk}\n{sk}\n")).expect("keys");
            (pk, sk)
        }
    };
    println!(
        "soak on {}: {:.0} s at {} runs/s x {} recipients, {} users ({} with a socket), retention {}, data dir {}",
        store.name(),
        o.duration.as_secs_f64(),
        o.rate,
        o.recipients,
        o.users,
        o.sockets,
        o.retention,
        dir.display()
    );
    let srv = Herald::start(&dir, &pk, &sk, smoke, store.server_arg());
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(o.in_flight + 8)
        .build()
        .expect("client");
    let api = Api {
        http: http.clone(),
        base: srv.base.clone(),
        pk: pk.clone(),
        sk: sk.clone(),
    };
    // Setup: retention on the project, the flow, the users and their sockets.
    let (s, v) = api
        .admin(
            reqwest::Method::PUT,
            "/admin/v1/project",
            Some(json!({"retention": {"notifications": o.retention, "feed": o.retention}})),
        )
        .await;
    assert_eq!(s, 200, "retention: {v}");
    let hooks = sink(0).await;
    soak_flow(&api, &hooks.url).await;
    let t = Instant::now();
    api.users("live", o.users).await;
    let url = format!(
        "{}/user/v1/feed/live?api_key={}",
        srv.base.replacen("http://", "ws://", 1),
        pk
    );
    let frames = Arc::new(AtomicU64::new(0));
    let mut sockets = tokio::task::JoinSet::new();
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::unbounded_channel();
    let sem = Arc::new(Semaphore::new(64));
    for i in 0..o.sockets.min(o.users) {
        let (url, ready_tx, frames, sem) =
            (url.clone(), ready_tx.clone(), frames.clone(), sem.clone());
        sockets.spawn(async move {
            use futures_util::StreamExt;
            let Some(mut ws) =
                crate::trigger::open_one(sem, live_socket(&url, i), "hello", &ready_tx).await
            else {
                return;
            };
            while let Some(Ok(m)) = ws.next().await {
                if m.is_text() {
                    frames.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
    }
    drop(ready_tx);
    let (connected, sock_err) =
        crate::load::await_ready(&mut ready_rx, o.sockets.min(o.users)).await;
    println!(
        "setup: {} users, {connected} sockets in {:.1} s{}",
        o.users,
        t.elapsed().as_secs_f64(),
        sock_err
            .map(|e| format!(" (first error: {e})"))
            .unwrap_or_default()
    );

    // The load: an open loop at `rate` runs/s, in 10 ms ticks.
    let bucket = Arc::new(Mutex::new(Bucket::default()));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let inflight = Arc::new(Semaphore::new(o.in_flight));
    let load = {
        let (api, bucket, stop, inflight) =
            (api.clone(), bucket.clone(), stop.clone(), inflight.clone());
        let (rate, rec, users) = (o.rate, o.recipients, o.users.max(1));
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(10));
            let (mut owed, mut k) = (0.0f64, 0usize);
            while !stop.load(Ordering::Relaxed) {
                tick.tick().await;
                owed += rate / 100.0;
                while owed >= 1.0 {
                    owed -= 1.0;
                    k += 1;
                    let Ok(permit) = inflight.clone().try_acquire_owned() else {
                        bucket.lock().expect("bucket").late += 1;
                        continue;
                    };
                    let recipients: Vec<Value> = (0..rec)
                        .map(|j| json!({"external_id": format!("live-{}", (k * rec + j) % users)}))
                        .collect();
                    let (api, bucket) = (api.clone(), bucket.clone());
                    tokio::spawn(async move {
                        let t0 = Instant::now();
                        let r = api
                            .http
                            .post(format!("{}/admin/v1/flows/soak/run", api.base))
                            .header("x-service-api-key", &api.pk)
                            .header("x-service-secret-key", &api.sk)
                            .json(&json!({"recipients": recipients}))
                            .send()
                            .await;
                        let (status, err) = match r {
                            Ok(r) => {
                                let s = r.status().as_u16();
                                let body = r.bytes().await.unwrap_or_default();
                                (
                                    s,
                                    (s != 202).then(|| String::from_utf8_lossy(&body).into_owned()),
                                )
                            }
                            Err(e) => (0, Some(e.to_string())),
                        };
                        let ms = t0.elapsed().as_secs_f64() * 1000.0;
                        let mut b = bucket.lock().expect("bucket");
                        if status == 202 {
                            b.accepted += 1;
                            b.lat_ms.push(ms);
                        } else {
                            b.errors += 1;
                            b.first_error.get_or_insert(format!("{status}: {err:?}"));
                        }
                        drop(permit);
                    });
                }
            }
        })
    };

    // Samples, one per interval.
    let t0 = Instant::now();
    let mut rows: Vec<Value> = vec![];
    let (mut prev, mut prev_hooks, mut prev_frames) = (scrape(&http, &srv.base).await, 0, 0);
    let (mut accepted, mut errors, mut late) = (0u64, 0u64, 0u64);
    let mut first_error = None;
    let mut next = t0 + o.interval;
    println!(
        "{:>6} {:>10} {:>9} {:>9} {:>9} {:>8} {:>8} {:>9} {:>10} {:>9} {:>8} {:>10} {:>9}",
        "t_s",
        "disk_MiB",
        "rss_MiB",
        "alloc_MiB",
        "jeres_MiB",
        "p50_ms",
        "p99_ms",
        "runs",
        "sent",
        "webhooks",
        "frames",
        "live_notif",
        "oldest_s"
    );
    while next <= t0 + o.duration + Duration::from_millis(50) {
        tokio::time::sleep_until(next.into()).await;
        next += o.interval;
        let b = std::mem::take(&mut *bucket.lock().expect("bucket"));
        let mut lat = b.lat_ms;
        let st = Stats::of(&mut lat);
        accepted += b.accepted;
        errors += b.errors;
        late += b.late;
        if first_error.is_none() {
            first_error = b.first_error;
        }
        let (disk, len) = store.bytes(&dir);
        let rss = proc_status_kib(srv.pid(), "VmRSS:");
        let sc = scrape(&http, &srv.base).await;
        let h = hooks.count.load(Ordering::Relaxed);
        let f = frames.load(Ordering::Relaxed);
        let live = (accepted as f64 * o.recipients as f64 - sc.purged).max(0.0);
        let row = json!({
            "t_s": num(t0.elapsed().as_secs_f64()),
            "disk_bytes": disk, "apparent_bytes": len, "disk_mib": num(mib(disk)),
            "rss_mib": num(rss as f64 / 1024.0),
            "allocated_mib": num(mib(sc.allocated as u64)),
            "allocator_resident_mib": num(mib(sc.resident as u64)),
            "p50_ms": num(st.p50), "p99_ms": num(st.p99), "max_ms": num(st.max),
            "runs_accepted": b.accepted, "errors": b.errors, "late": b.late,
            "deliveries_sent": num(sc.sent - prev.sent),
            "webhooks_received": h - prev_hooks, "frames_received": f - prev_frames,
            "notifications_purged": num(sc.purged - prev.purged),
            "live_notifications": num(live),
            "oldest_record_age_s": num(sc.oldest_s),
        });
        println!(
            "{:>6.0} {:>10.1} {:>9.1} {:>9.1} {:>9.1} {:>8.2} {:>8.2} {:>9} {:>10.0} {:>9} {:>8} {:>10.0} {:>9.0}",
            t0.elapsed().as_secs_f64(),
            mib(disk),
            rss as f64 / 1024.0,
            mib(sc.allocated as u64),
            mib(sc.resident as u64),
            st.p50,
            st.p99,
            b.accepted,
            sc.sent - prev.sent,
            h - prev_hooks,
            f - prev_frames,
            live,
            sc.oldest_s
        );
        rows.push(row);
        (prev, prev_hooks, prev_frames) = (sc, h, f);
    }
    stop.store(true, Ordering::Relaxed);
    let _ = load.await;
    let _ = inflight.acquire_many(o.in_flight as u32).await;
    sockets.abort_all();
    while sockets.join_next().await.is_some() {}
    let sc = scrape(&http, &srv.base).await;
    let end_disk = store.bytes(&dir).0;
    let live_est = (accepted as f64 * o.recipients as f64 - sc.purged).max(0.0);

    // Growth over the last 10 minutes (the last third of a shorter run).
    let total_s = o.duration.as_secs_f64();
    let window = if total_s >= 30.0 * 60.0 {
        600.0
    } else {
        total_s / 3.0
    };
    let (d0, d1, dg) = growth(&rows, "disk_bytes", window);
    let (r0, r1, rg) = growth(&rows, "rss_mib", window);
    let p99 = |r: Option<&Value>| r.map_or(f64::NAN, |r| r["p99_ms"].as_f64().unwrap_or(f64::NAN));
    let (p_first, p_last) = (p99(rows.first()), p99(rows.last()));

    // SIGTERM, restart on the same data dir, stop again.
    let (exit_s, code) = srv.stop();
    let again = Herald::start(&dir, &pk, &sk, smoke, store.server_arg());
    let listening = again.listening.as_secs_f64();
    let ready = again.ready(&http).await.map(|d| d.as_secs_f64());
    let (_, page) = Api {
        base: again.base.clone(),
        ..api.clone()
    }
    .admin(
        reqwest::Method::GET,
        "/admin/v1/notifications?limit=1",
        None,
    )
    .await;
    let found_after_restart = page["items"].as_array().is_some_and(|a| !a.is_empty());
    let (exit2_s, code2) = again.stop();

    // The logical bytes per key space (or table), with the server stopped.
    let sp = tokio::task::spawn_blocking({
        let dir = dir.clone();
        move || {
            let sp = store.spaces(&dir);
            (store, sp)
        }
    })
    .await
    .expect("spaces");
    let (store, sp) = sp;
    let (space_rows, logical, stored) = match sp {
        Ok(s) => (s.rows, s.logical, s.notifications),
        Err(e) => {
            println!("key spaces: cannot read the store: {e}");
            (Value::Null, 0, 0)
        }
    };
    let per_notif = end_disk as f64 / stored.max(1) as f64;
    let logical_per = logical as f64 / stored.max(1) as f64;

    println!();
    store.print(&space_rows);
    let amp = end_disk as f64 / logical.max(1) as f64;
    let judge = |ok: bool| {
        if smoke {
            "-"
        } else if ok {
            "met"
        } else {
            "NOT met"
        }
    };
    println!();
    println!(
        "runs accepted {accepted}, errors {errors}, late (in-flight cap) {late}{}",
        first_error
            .as_ref()
            .map(|e| format!(", first error: {e}"))
            .unwrap_or_default()
    );
    println!(
        "data dir over the last {:.0} s: {:.1} -> {:.1} MiB ({:+.1}%)  [{}: <= +5%]",
        window,
        mib(d0 as u64),
        mib(d1 as u64),
        dg,
        judge(dg <= 5.0)
    );
    println!(
        "rss over the last {:.0} s: {:.1} -> {:.1} MiB ({:+.1}%)  [{}: <= +5%]",
        window,
        r0,
        r1,
        rg,
        judge(rg <= 5.0)
    );
    println!(
        "202 p99: first interval {:.2} ms, last {:.2} ms ({:.2}x)  [{}: <= 1.5x]",
        p_first,
        p_last,
        p_last / p_first,
        judge(p_last / p_first <= 1.5)
    );
    println!(
        "notifications stored {stored} (estimate from metrics {live_est:.0}); on disk {:.1} MiB = {:.0} B per notification  [{}: <= {:.0} B]; logical {:.1} MiB = {:.0} B per notification; disk/logical {:.2}x",
        mib(end_disk),
        per_notif,
        judge(per_notif <= store.target_per_notification()),
        store.target_per_notification(),
        mib(logical),
        logical_per,
        amp
    );
    println!(
        "SIGTERM: exit {code:?} in {exit_s:.2} s; restart on {:.1} MiB: listening in {listening:.3} s, ready in {}; a notification listed after restart: {found_after_restart}; second exit {code2:?} in {exit2_s:.2} s",
        mib(end_disk),
        ready.map_or("never".into(), |r| format!("{r:.3} s")),
    );

    let out = json!({
        "run": {"smoke": smoke, "store": store.name(), "duration_s": total_s, "rate": o.rate, "recipients": o.recipients,
                "users": o.users, "sockets": connected, "retention": o.retention,
                "interval_s": o.interval.as_secs_f64(), "in_flight": o.in_flight,
                "cores": std::thread::available_parallelism().map_or(0, |n| n.get()),
                "commit": git_commit()},
        "soak": {
            "intervals": rows,
            "runs_accepted": accepted, "errors": errors, "late": late, "first_error": first_error,
            "growth_window_s": window,
            "disk_growth_pct": num(dg), "rss_growth_pct": num(rg),
            "p99_first_ms": num(p_first), "p99_last_ms": num(p_last), "p99_ratio": num(p_last / p_first),
            "end_disk_bytes": end_disk, "notifications_stored": stored,
            "notifications_stored_estimate": num(live_est),
            "disk_bytes_per_notification": num(per_notif),
            "logical_bytes": logical, "logical_bytes_per_notification": num(logical_per),
            "disk_to_logical": num(amp),
            "spaces": space_rows,
            "sigterm_exit_s": num(exit_s), "sigterm_exit_code": code,
            "restart_listening_s": num(listening), "restart_ready_s": ready.map(num),
            "found_after_restart": found_after_restart,
        },
    });
    std::fs::create_dir_all("bench-results").ok();
    let path = match (smoke, &store) {
        (true, SoakStore::Sled) => "bench-results/soak-smoke.json",
        (true, SoakStore::Postgres(_)) => "bench-results/soak-pg-smoke.json",
        (false, SoakStore::Sled) => "bench-results/soak.json",
        (false, SoakStore::Postgres(_)) => "bench-results/soak-pg.json",
    };
    match std::fs::write(path, serde_json::to_string_pretty(&out).expect("json")) {
        Ok(()) => println!("\nresults: {path}"),
        Err(e) => println!("\nresults: cannot write {path}: {e}"),
    }
    if smoke {
        let ok = accepted > 0
            && errors == 0
            && code == Some(0)
            && ready.is_some()
            && found_after_restart
            && stored > 0;
        if !ok {
            eprintln!("soak smoke failed");
            std::process::exit(1);
        }
        println!("soak smoke ok");
    }
}
