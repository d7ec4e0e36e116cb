//! Herald's scenarios: live fan-out, the delivery pipeline (with the 202 latency of
//! 1,000-recipient runs) and the REST endpoints under 64 connections. Live
//! fan-out and the pipeline run on one node or on the nodes of a cluster
//! (`crate::cluster`).

use crate::herald::Server;
use crate::load::{self, num, LoadResult, MakeRequest, Stats};
use crate::trigger::{open_one, Ws};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, Semaphore};
use tokio_tungstenite::tungstenite::Message;

/// The servers' summed resident memory, peak memory and CPU time (one node, or
/// every node of a cluster).
fn rss_kib(nodes: &[Server]) -> u64 {
    nodes.iter().map(Server::rss_kib).sum()
}
fn peak_kib(nodes: &[Server]) -> u64 {
    nodes.iter().map(Server::peak_kib).sum()
}
fn cpu_ms(nodes: &[Server]) -> f64 {
    nodes.iter().map(Server::cpu_ms).sum()
}

/// Live fan-out: `c` users with an open WebSocket each, one topic run to all of
/// them; time from the run's 202 to each socket's `feed_entry.created`.
pub async fn live(c: usize) -> Value {
    live_on(&[Server::start()], c).await
}

/// Live fan-out on `nodes`: the sockets spread over them (user i on node i
/// mod n), the run posted to the first; memory and CPU are the nodes' sums.
/// Past what one process may hold, the sockets are held by client processes
/// of their own (`crate::fanout`).
pub async fn live_on(nodes: &[Server], c: usize) -> Value {
    if crate::fanout::needs_processes(c) {
        return crate::fanout::live_spread(nodes, c).await;
    }
    let (api, urls) = live_setup(nodes, c).await;
    let rss_before = rss_kib(nodes);
    let (ready_tx, mut ready_rx) = mpsc::unbounded_channel::<Result<(), String>>();
    let (got_tx, mut got_rx) = mpsc::unbounded_channel::<(Instant, usize)>();
    let sem = Arc::new(Semaphore::new(256));
    let mut sockets = tokio::task::JoinSet::new();
    for i in 0..c {
        let (url, ready_tx, got_tx, sem) = (
            urls[i % urls.len()].clone(),
            ready_tx.clone(),
            got_tx.clone(),
            sem.clone(),
        );
        sockets.spawn(hold_live_socket(url, i, sem, ready_tx, got_tx, |len| {
            (Instant::now(), len)
        }));
    }
    drop((ready_tx, got_tx));
    let (connected, first_error) = crate::load::await_ready(&mut ready_rx, c).await;
    // A mark for profiling only the fan-out (a `perf record` started on it
    // sees the 500 ms of idle sockets, then the run).
    eprintln!("  (live {c}: {connected} sockets open, run in 500 ms)");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_sockets = rss_kib(nodes);
    nodes.iter().for_each(Server::reset_peak);
    let cpu0 = cpu_ms(nodes);
    let (s, run, accept) = api.run("live", json!({"topic": "everyone"})).await;
    let t202 = Instant::now();
    assert_eq!(s, 202, "run: {run}");
    let mut lat = Vec::with_capacity(c);
    let mut frame_bytes = 0;
    let deadline = Instant::now() + Duration::from_secs(120);
    while lat.len() < connected {
        match tokio::time::timeout_at(deadline.into(), got_rx.recv()).await {
            Ok(Some((t, len))) => {
                frame_bytes = len;
                lat.push(t.duration_since(t202).as_secs_f64() * 1000.0)
            }
            _ => break,
        }
    }
    let peak = peak_kib(nodes);
    let cpu = cpu_ms(nodes) - cpu0;
    sockets.abort_all();
    while sockets.join_next().await.is_some() {}
    let stats = Stats::of(&mut lat);
    let mut v = stats.json();
    let o = v.as_object_mut().expect("object");
    o.insert("scenario".into(), json!("live"));
    o.insert("nodes".into(), json!(nodes.len()));
    o.insert("sockets".into(), json!(c));
    o.insert("connected".into(), json!(connected));
    o.insert("received".into(), json!(lat.len()));
    o.insert("accept_ms".into(), num(accept.as_secs_f64() * 1000.0));
    o.insert(
        "events_per_s".into(),
        num(lat.len() as f64 / (stats.max / 1000.0)),
    );
    o.insert(
        "rss_per_socket_kib".into(),
        num(rss_sockets.saturating_sub(rss_before) as f64 / c.max(1) as f64),
    );
    o.insert("server_peak_mib".into(), num(peak as f64 / 1024.0));
    o.insert("frame_bytes".into(), json!(frame_bytes));
    // The server's CPU time from the run's request to the last event, per event:
    // steadier than wall time on a noisy machine.
    o.insert(
        "server_cpu_us_per_event".into(),
        num(cpu * 1000.0 / lat.len().max(1) as f64),
    );
    if let Some(e) = first_error {
        o.insert("first_error".into(), json!(e));
    }
    v
}

/// A live scenario's setup: the in-app flow `live`, users `live-0..c`
/// subscribed to topic `everyone`; the first node's API (the run is posted
/// there) and each node's live-feed URL.
pub async fn live_setup(nodes: &[Server], c: usize) -> (crate::herald::Api, Vec<String>) {
    let api = nodes[0].api();
    api.in_app_flow("live").await;
    api.users("live", c).await;
    api.subscribe_all("live", c, "everyone").await;
    let urls = nodes
        .iter()
        .map(|n| {
            format!(
                "{}/user/v1/feed/live?api_key={}",
                n.base.replacen("http://", "ws://", 1),
                n.pk
            )
        })
        .collect();
    (api, urls)
}

/// Opens user `i`'s live feed (reporting it open, or why not, on `ready`),
/// sends `stamp(frame length)` on `got` when its first `feed_entry.created`
/// arrives, then holds the socket open until the task is aborted.
pub async fn hold_live_socket<T>(
    url: String, i: usize, sem: Arc<Semaphore>, ready: mpsc::UnboundedSender<Result<(), String>>,
    got: mpsc::UnboundedSender<T>, stamp: fn(usize) -> T,
) {
    let Some(mut ws) = open_one(sem, live_socket(&url, i), "hello", &ready).await else {
        return;
    };
    while let Some(Ok(m)) = ws.next().await {
        if let Message::Text(t) = &m {
            if t.contains("feed_entry.created") {
                let _ = got.send(stamp(t.len()));
                break;
            }
        }
    }
    std::future::pending::<()>().await;
}

/// Loopback source addresses the live sockets are spread over (127.0.0.1 to
/// 127.0.0.8): one address has about 28,000 ephemeral ports, too few for
/// 100,000 sockets.
const SOURCE_ADDRESSES: usize = 8;

/// Raises this process's open-files limit (soft, and hard when allowed) to at
/// least `want`; the server started afterwards inherits it. Returns the limit
/// now in force.
pub fn raise_open_files(want: u64) -> u64 {
    let mut l = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed in.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) != 0 {
            return 0;
        }
        if l.rlim_cur >= want {
            return l.rlim_cur;
        }
        let raised = libc::rlimit {
            rlim_cur: want,
            rlim_max: l.rlim_max.max(want),
        };
        if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
            return want;
        }
        // Not allowed above the hard limit (raising it takes CAP_SYS_RESOURCE):
        // as far as it goes, and say so.
        println!(
            "warning: cannot raise the open-files limit to {want} (hard limit {}); the server and the harness each hold one descriptor per socket",
            l.rlim_max
        );
        let capped = libc::rlimit {
            rlim_cur: l.rlim_max,
            rlim_max: l.rlim_max,
        };
        if libc::setrlimit(libc::RLIMIT_NOFILE, &capped) == 0 {
            return l.rlim_max;
        }
        l.rlim_cur
    }
}

/// A WebSocket client connection from source address `127.0.0.{1 + i % 8}`,
/// configured as `load::ws_connect`'s.
async fn ws_connect_from(url: &str, i: usize) -> Result<Ws, String> {
    let u = url::Url::parse(url).map_err(|e| format!("url: {e}"))?;
    let to = u
        .socket_addrs(|| None)
        .map_err(|e| format!("url: {e}"))?
        .into_iter()
        .next()
        .ok_or("url: no address")?;
    let from = std::net::Ipv4Addr::new(127, 0, 0, 1 + (i % SOURCE_ADDRESSES) as u8);
    let sock = tokio::net::TcpSocket::new_v4().map_err(|e| format!("socket: {e}"))?;
    sock.bind((from, 0).into())
        .map_err(|e| format!("bind {from}: {e}"))?;
    let stream = sock
        .connect(to)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let _ = stream.set_nodelay(true);
    let config =
        tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default().read_buffer_size(4096);
    tokio_tungstenite::client_async_with_config(
        url,
        tokio_tungstenite::MaybeTlsStream::Plain(stream),
        Some(config),
    )
    .await
    .map(|(ws, _)| ws)
    .map_err(|e| format!("connect: {e}"))
}

/// Opens user `live-{i}`'s live feed and waits for its `hello`.
pub async fn live_socket(url: &str, i: usize) -> Result<Ws, String> {
    let mut ws = ws_connect_from(url, i).await?;
    let auth = json!({"type": "auth", "user_id": format!("live-{i}")});
    ws.send(Message::Text(auth.to_string().into()))
        .await
        .map_err(|e| format!("send: {e}"))?;
    let hello = ws
        .next()
        .await
        .ok_or("closed")?
        .map_err(|e| format!("read: {e}"))?;
    match hello.to_text() {
        Ok(t) if t.contains("\"hello\"") => Ok(ws),
        other => Err(format!("expected hello, got {other:?}")),
    }
}

/// A webhook sink that answers 200 to everything and records when each request
/// arrived (at most `cap` of them).
pub struct Sink {
    pub url: String,
    pub count: Arc<AtomicU64>,
    arrivals: Arc<Mutex<Vec<Instant>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Sink {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub async fn sink(cap: usize) -> Sink {
    sink_refusing(cap, None).await
}

/// A sink that answers 400 (a permanent refusal, `provider_rejected`) to
/// every request whose body holds `refuse`, and 200 to the others; only
/// the accepted ones are counted.
pub async fn sink_refusing(cap: usize, refuse: Option<&'static str>) -> Sink {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind sink");
    let addr = listener.local_addr().expect("sink addr");
    let count = Arc::new(AtomicU64::new(0));
    let arrivals = Arc::new(Mutex::new(Vec::with_capacity(cap)));
    let (c2, a2) = (count.clone(), arrivals.clone());
    let task = tokio::spawn(async move {
        let mut conns = tokio::task::JoinSet::new();
        while let Ok((mut sock, _)) = listener.accept().await {
            let (c, a) = (c2.clone(), a2.clone());
            conns.spawn(async move {
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
                    while let Some(h) = acc.windows(4).position(|w| w == b"\r\n\r\n") {
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
                        let refused = refuse.is_some_and(|m| {
                            acc[h + 4..h + 4 + len]
                                .windows(m.len())
                                .any(|w| w == m.as_bytes())
                        });
                        acc.drain(..h + 4 + len);
                        if refused {
                            if sock
                                .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
                                .await
                                .is_err()
                            {
                                return;
                            }
                            continue;
                        }
                        c.fetch_add(1, Ordering::Relaxed);
                        {
                            let mut a = a.lock().expect("arrivals");
                            if a.len() < a.capacity() {
                                a.push(Instant::now());
                            }
                        }
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
            while conns.try_join_next().is_some() {}
        }
    });
    Sink {
        url: format!("http://{addr}/hook"),
        count,
        arrivals,
        task,
    }
}

/// 1,000-recipient runs whose 202 latency is sampled (besides the measured run).
pub fn accept_samples(smoke: bool) -> usize {
    if smoke {
        2
    } else {
        10
    }
}

/// Pipeline: one run with an in_app and a webhook step (answered by the sink) to
/// `n` recipients: inline when n <= 1,000 (users created beforehand by a run to
/// the same recipients), else through a topic. Deliveries/s from the 202 to the
/// run being processed; latency from the 202 to each webhook reaching the sink.
/// With `events`, one event endpoint subscribed to every event type (answered
/// by a second sink) is created before the measured run, so the run pays for
/// writing its events to the outbox and the sender's POSTs.
pub async fn pipeline(n: usize, accept_runs: usize, events: bool) -> Value {
    pipeline_on(&[Server::start()], n, accept_runs, events).await
}

/// The pipeline on `nodes`: set up through and the run posted to the first
/// (the node that accepts a run sends its deliveries); memory is the nodes' sum.
pub async fn pipeline_on(nodes: &[Server], n: usize, accept_runs: usize, events: bool) -> Value {
    let srv = &nodes[0];
    let api = srv.api();
    let ch = api.in_app_channel().await;
    let sink = sink(n).await;
    let (s, hook) = api
        .admin(
            reqwest::Method::POST,
            "/admin/v1/channels",
            Some(json!({"type": "chat", "provider": "webhook", "config": {"url": sink.url}})),
        )
        .await;
    assert_eq!(s, 201, "webhook channel: {hook}");
    api.flow(
        "pipe",
        json!([
            {"type": "channel", "channel_id": ch, "template": {"body": "Hi {{ recipient.external_id }}"}},
            {"type": "channel", "channel_id": hook["id"], "template": {"body": "Hi {{ recipient.external_id }}"}}
        ]),
    )
    .await;
    let t_setup = Instant::now();
    let inline = n <= 1000;
    let body = if inline {
        let recipients: Vec<Value> = (0..n)
            .map(|i| json!({"external_id": format!("p-{i}")}))
            .collect();
        // Users exist beforehand, as in a product that has identified them: one
        // run to the same recipients creates them in bulk.
        let (s, v, _) = api.run("pipe", json!({"recipients": recipients})).await;
        assert_eq!(s, 202, "setup run: {v}");
        api.wait_idle(Duration::from_secs(120)).await;
        json!({"recipients": recipients})
    } else {
        let t = Instant::now();
        api.users("p", n).await;
        eprintln!("  (setup: {n} users in {:.1} s)", t.elapsed().as_secs_f64());
        let t = Instant::now();
        api.subscribe_all("p", n, "all").await;
        eprintln!(
            "  (setup: {n} subscriptions in {:.1} s)",
            t.elapsed().as_secs_f64()
        );
        json!({"topic": "all"})
    };
    let setup_s = t_setup.elapsed().as_secs_f64();
    let event_sink = if events {
        let es = self::sink(0).await;
        let (s, ep) = api
            .admin(
                reqwest::Method::POST,
                "/admin/v1/webhook_endpoints",
                Some(json!({"url": es.url})),
            )
            .await;
        assert_eq!(s, 201, "event endpoint: {ep}");
        Some(es)
    } else {
        None
    };
    let before = sink.count.load(Ordering::Relaxed);
    sink.arrivals.lock().expect("arrivals").clear();
    let rss_before = rss_kib(nodes);
    nodes.iter().for_each(Server::reset_peak);
    let (s, run, accept) = api.run("pipe", body.clone()).await;
    let t202 = Instant::now();
    assert_eq!(s, 202, "run: {run}");
    let done = api
        .wait_processed(
            run["id"].as_str().expect("run id"),
            Duration::from_secs(300),
        )
        .await;
    let peak = peak_kib(nodes);
    // The webhooks still in flight when the run is marked processed (none expected).
    let t_hooks = Instant::now();
    while sink.count.load(Ordering::Relaxed) - before < n as u64
        && t_hooks.elapsed() < Duration::from_secs(5)
    {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let hooks = sink.count.load(Ordering::Relaxed) - before;
    let mut lat: Vec<f64> = sink
        .arrivals
        .lock()
        .expect("arrivals")
        .iter()
        .map(|t| t.saturating_duration_since(t202).as_secs_f64() * 1000.0)
        .collect();
    let stats = Stats::of(&mut lat);
    let total = done.map(|d| d.duration_since(t202).as_secs_f64());
    let mut v = stats.json();
    let o = v.as_object_mut().expect("object");
    o.insert("scenario".into(), json!("pipeline"));
    o.insert("nodes".into(), json!(nodes.len()));
    o.insert("recipients".into(), json!(n));
    o.insert("via".into(), json!(if inline { "inline" } else { "topic" }));
    o.insert("events".into(), json!(events));
    if let Some(es) = &event_sink {
        // The run's events: flow_run.accepted, two delivery.sent and one
        // notification.processed per recipient; waited for (bounded) after
        // the measured part, to report when the last one arrived.
        let want = 3 * n as u64 + 1;
        while es.count.load(Ordering::Relaxed) < want && t202.elapsed() < Duration::from_secs(120) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let got = es.count.load(Ordering::Relaxed);
        o.insert("events_expected".into(), json!(want));
        o.insert("events_received".into(), json!(got));
        o.insert(
            "events_done_ms".into(),
            num(t202.elapsed().as_secs_f64() * 1000.0),
        );
    }
    o.insert("processed".into(), json!(done.is_some()));
    o.insert("accept_ms".into(), num(accept.as_secs_f64() * 1000.0));
    o.insert("total_ms".into(), num(total.unwrap_or(f64::NAN) * 1000.0));
    o.insert(
        "deliveries_per_s".into(),
        num((2 * n) as f64 / total.unwrap_or(f64::NAN)),
    );
    o.insert("webhooks_received".into(), json!(hooks));
    o.insert("rss_before_mib".into(), num(rss_before as f64 / 1024.0));
    o.insert("server_peak_mib".into(), num(peak as f64 / 1024.0));
    o.insert(
        "peak_growth_mib".into(),
        num(peak.saturating_sub(rss_before) as f64 / 1024.0),
    );
    o.insert("setup_s".into(), num(setup_s));
    if inline && n == 1000 && accept_runs > 0 {
        // More 1,000-recipient runs, one after another once the previous one is
        // processed: the 202's latency.
        let mut samples = vec![accept.as_secs_f64() * 1000.0];
        for _ in 0..accept_runs {
            let (s, run, accept) = api.run("pipe", body.clone()).await;
            assert_eq!(s, 202, "run: {run}");
            samples.push(accept.as_secs_f64() * 1000.0);
            api.wait_processed(run["id"].as_str().expect("run id"), Duration::from_secs(60))
                .await;
        }
        let a = Stats::of(&mut samples);
        o.insert(
            "accept_1000".into(),
            json!({"runs": a.n, "p50_ms": num(a.p50), "p99_ms": num(a.p99), "max_ms": num(a.max)}),
        );
    }
    v
}

/// REST: GET /user/v1/feed, PUT /admin/v1/users/{id} and POST
/// /admin/v1/flows/{id}/run (10 recipients), each under `conns` connections.
pub async fn rest(conns: usize, warmup: Duration, duration: Duration) -> Value {
    let srv = Server::start();
    let api = srv.api();
    api.in_app_flow("rest").await;
    // One feed user per connection, with a few entries each.
    let users: Vec<String> = (0..conns).map(|i| format!("rest-{i}")).collect();
    for _ in 0..5 {
        let (s, v, _) = api.run("rest", json!({"recipients": users})).await;
        assert_eq!(s, 202, "setup run: {v}");
    }
    api.wait_idle(Duration::from_secs(60)).await;
    // The admin users to update already exist (PUT then updates them).
    const PUT_USERS: usize = 1000;
    api.users("rest-put", PUT_USERS).await;
    let (pk, sk) = (Arc::new(srv.pk.clone()), Arc::new(srv.sk.clone()));

    let feed: MakeRequest = {
        let (pk, users) = (pk.clone(), Arc::new(users.clone()));
        Arc::new(move |c, _| {
            load::request(
                "GET",
                "/user/v1/feed",
                &[("x-service-api-key", &pk), ("x-service-user-id", &users[c])],
                None,
            )
        })
    };
    let put: MakeRequest = {
        let (pk, sk) = (pk.clone(), sk.clone());
        Arc::new(move |c, seq| {
            let id = (c as u64 * 7919 + seq) % PUT_USERS as u64;
            load::request(
                "PUT",
                &format!("/admin/v1/users/rest-put-{id}"),
                &[("x-service-api-key", &pk), ("x-service-secret-key", &sk)],
                Some(format!(r#"{{"first_name":"Bench {seq}"}}"#)),
            )
        })
    };
    let run: MakeRequest = {
        let (pk, sk, users) = (pk.clone(), sk.clone(), Arc::new(users.clone()));
        Arc::new(move |c, seq| {
            let recipients: Vec<&String> = (0..10)
                .map(|k| &users[(c + seq as usize + k) % users.len()])
                .collect();
            load::request(
                "POST",
                "/admin/v1/flows/rest/run",
                &[("x-service-api-key", &pk), ("x-service-secret-key", &sk)],
                Some(json!({ "recipients": recipients }).to_string()),
            )
        })
    };
    let mut out = serde_json::Map::new();
    // The run endpoint last: it leaves a backlog of deliveries behind it.
    // `HERALD_BENCH_REST_ONLY=put_admin_user` (names, comma-separated) drives
    // only those endpoints, so a profile of the server covers one of them.
    let only: Option<Vec<String>> = std::env::var("HERALD_BENCH_REST_ONLY")
        .ok()
        .map(|v| v.split(',').map(|s| s.trim().to_string()).collect());
    for (name, make) in [
        ("get_user_feed", feed),
        ("put_admin_user", put),
        ("post_flow_run_10", run),
    ] {
        if only.as_ref().is_some_and(|o| !o.iter().any(|n| n == name)) {
            continue;
        }
        let r: LoadResult = load::drive(
            srv.addr,
            load::ServerCpu::Pid(srv.pid()),
            conns,
            warmup,
            duration,
            make,
        )
        .await;
        out.insert(name.into(), r.json());
    }
    json!({"scenario": "rest", "connections": conns, "endpoints": out})
}
