//! docs/DEPLOY.md "A cluster", when something fails under load: a node
//! holding live-feed sockets killed with SIGKILL mid-stream (its clients
//! resume on another node with `since_seq`: every frame once, in order); the
//! bus killed and started again while runs flow to connected sockets (live
//! frames resume, nothing lost or doubled); PostgreSQL stopped for 10 s
//! under load (requests answer 503 `service_unavailable`, `/readyz` 503
//! then 200 without a restart, every accepted run delivered exactly once).
//!
//! PostgreSQL only (the `api_pg` and `api_cluster` runs), with
//! `nats-server`; the database test starts a PostgreSQL of its own (never
//! the shared one), as the `postgres` user when the tests run as root.
//! Without what they need they say so and return, except under `CI=true`.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
use wiremock::MockServer;

use super::cluster_bus::{
    cluster_or_skip, frame, in_app_flow, next_got, readyz, run_on, wait_readyz, Got, Ws, WAIT,
};
use crate::engine_helpers::*;
use crate::helpers::*;

fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// A live-feed socket of `ext` on `address`, resuming after `since`.
async fn connect_since(address: &str, public_key: &str, ext: &str, since: u64) -> Ws {
    let url = format!(
        "{}{U}/feed/live?since_seq={since}",
        address.replacen("http://", "ws://", 1)
    );
    let mut req = url.into_client_request().unwrap();
    for (k, v) in [
        ("x-service-api-key", public_key),
        ("x-service-user-id", ext),
    ] {
        req.headers_mut().insert(
            HeaderName::from_bytes(k.as_bytes()).unwrap(),
            HeaderValue::from_str(v).unwrap(),
        );
    }
    let (mut ws, _) = tokio::time::timeout(WAIT, tokio_tungstenite::connect_async(req))
        .await
        .expect("WebSocket handshake timed out")
        .expect("WebSocket upgrade");
    let hello = frame(&mut ws).await;
    assert_eq!(hello["type"], json!("hello"), "{hello}");
    ws
}

/// Reads `feed_entry.created` frames into `seen` until it holds `upto`
/// frames or the socket closes; asserts each is the next `seq`.
async fn read_in_order(ws: &mut Ws, seen: &mut Vec<u64>, upto: u64, who: &str) -> bool {
    while (seen.len() as u64) < upto {
        match next_got(ws, Duration::from_secs(20)).await {
            Got::Text(f) => {
                assert_eq!(f["type"], json!("feed_entry.created"), "{who}: {f}");
                let want = seen.len() as u64 + 1;
                assert_eq!(
                    f["seq"],
                    json!(want),
                    "{who}: every frame once, in order (after {} frames): {f}",
                    seen.len()
                );
                seen.push(want);
            }
            Got::Close(_) => return false,
            Got::Nothing => panic!("{who}: no frame within 20 s after {} of {upto}", seen.len()),
        }
    }
    true
}

/// Nothing more may come on the socket (no duplicate).
async fn quiet(ws: &mut Ws, who: &str) {
    match next_got(ws, Duration::from_millis(700)).await {
        Got::Nothing => {}
        other => panic!("{who}: nothing more may come (no duplicates): {other:?}"),
    }
}

#[tokio::test]
async fn clients_of_a_node_killed_mid_stream_resume_on_another_with_every_frame_once() {
    let Some(mut c) = cluster_or_skip(&[]) else {
        return;
    };
    let flow = in_app_flow(&c.nodes[1]).await;
    let users: Vec<String> = (0..4).map(|_| new_ext("failover")).collect();
    for u in &users {
        c.nodes[1].create_user_as(u, json!({})).await;
    }
    let per_user: u64 = 40;
    // every client on node A (nodes[0])
    let mut sockets = vec![];
    for u in &users {
        sockets.push(connect_since(&c.nodes[0].address, &c.nodes[0].public_key, u, 0).await);
    }
    let (a, rest) = c.nodes.split_at_mut(1);
    let a = &mut a[0];
    let (b, cc) = (&rest[0], &rest[1]);
    let public_key = b.public_key.clone();
    let (b_address, c_address) = (b.address.clone(), cc.address.clone());

    // Runs accepted on B and C, one per user at a time, while the clients read.
    let load = async {
        for i in 1..=per_user {
            let posts = users.iter().enumerate().map(|(k, u)| {
                let node = if (i as usize + k).is_multiple_of(2) {
                    b
                } else {
                    cc
                };
                let (flow, u) = (flow.clone(), u.clone());
                async move { run_on(node, &flow, &u, i).await }
            });
            futures_util::future::join_all(posts).await;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let clients = async {
        let mut seen: Vec<Vec<u64>> = vec![vec![]; users.len()];
        // a few frames each on A, then A dies with its sockets open
        for (k, ws) in sockets.iter_mut().enumerate() {
            assert!(read_in_order(ws, &mut seen[k], 3, &users[k]).await);
        }
        a.kill9();
        let at_kill: Vec<usize> = seen.iter().map(Vec::len).collect();
        // each reads what A still pushed until the socket drops, then
        // resumes on B or C after the last seq it saw
        for (k, ws) in sockets.iter_mut().enumerate() {
            let done = read_in_order(ws, &mut seen[k], per_user, &users[k]).await;
            assert!(!done, "{}: the killed node's socket must drop", users[k]);
        }
        for (k, u) in users.iter().enumerate() {
            let address = if k % 2 == 0 { &b_address } else { &c_address };
            let since = seen[k].len() as u64;
            let mut ws = connect_since(address, &public_key, u, since).await;
            assert!(read_in_order(&mut ws, &mut seen[k], per_user, u).await);
            quiet(&mut ws, u).await;
        }
        at_kill
    };
    let ((), at_kill) = tokio::join!(load, clients);
    eprintln!("frames seen per client when node A was killed: {at_kill:?} of {per_user}");
    // what the clients saw is what the log holds
    for u in &users {
        let feed = wait_feed(b, u, per_user as usize).await;
        assert_eq!(feed["items"].as_array().unwrap().len(), per_user as usize);
    }
}

/// Run `i` for every user, user k's on a node other than k (all at once).
async fn post_round(nodes: &[TestApp], flow: &str, users: &[String], i: u64) {
    let posts = users.iter().enumerate().map(|(k, u)| {
        let node = &nodes[(k + 1 + i as usize % 2) % nodes.len()];
        async move { run_on(node, flow, u, i).await }
    });
    futures_util::future::join_all(posts).await;
}

#[tokio::test]
async fn live_frames_resume_after_the_bus_is_killed_and_started_under_load() {
    let Some(mut c) = cluster_or_skip(&[]) else {
        return;
    };
    let flow = in_app_flow(&c.nodes[0]).await;
    let users: Vec<String> = (0..3).map(|_| new_ext("natsdown")).collect();
    for u in &users {
        c.nodes[0].create_user_as(u, json!({})).await;
    }
    // user k's socket on node k, its runs accepted on the other nodes
    let mut sockets = vec![];
    for (k, u) in users.iter().enumerate() {
        let n = &c.nodes[k];
        sockets.push(connect_since(&n.address, &n.public_key, u, 0).await);
    }
    let per_user: u64 = 30;
    let mut seen: Vec<Vec<u64>> = vec![vec![]; users.len()];
    // a third of the runs with the bus up, read live
    for i in 1..=10 {
        post_round(&c.nodes, &flow, &users, i).await;
    }
    for (k, ws) in sockets.iter_mut().enumerate() {
        assert!(read_in_order(ws, &mut seen[k], 10, &users[k]).await);
    }
    // the bus dies (SIGKILL) while runs keep coming: they are accepted
    c.nats.stop();
    for i in 11..=20 {
        post_round(&c.nodes, &flow, &users, i).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for n in &c.nodes {
        wait_readyz(n, 503).await;
    }
    // back on the same port, with runs still coming: every socket gets
    // every frame once, in order (the missed ones from the log)
    c.nats.restart();
    for i in 21..=per_user {
        post_round(&c.nodes, &flow, &users, i).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for (k, ws) in sockets.iter_mut().enumerate() {
        assert!(read_in_order(ws, &mut seen[k], per_user, &users[k]).await);
        quiet(ws, &users[k]).await;
    }
    for n in &c.nodes {
        wait_readyz(n, 200).await;
    }
}

// ================================================================ a PostgreSQL of the test's own

/// A PostgreSQL server in a temporary directory on a free port, stopped
/// (immediately) and removed when dropped.
struct PrivatePg {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
    /// `postgres` when the tests run as root (initdb refuses root).
    user: Option<String>,
}

impl PrivatePg {
    /// `Err` (why) when it cannot be started here.
    fn start() -> Result<PrivatePg, String> {
        let mut bins: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .map_err(|e| format!("/usr/lib/postgresql: {e}"))?
            .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
            .filter(|b| b.join("initdb").is_file() && b.join("pg_ctl").is_file())
            .collect();
        bins.sort_by_key(|b| {
            b.parent()
                .and_then(|v| v.file_name())
                .and_then(|v| v.to_str())
                .and_then(|v| v.parse::<u32>().ok())
                .unwrap_or(0)
        });
        let bin = bins
            .pop()
            .ok_or("no /usr/lib/postgresql/*/bin/initdb (Debian package `postgresql`)")?;
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        let user = root.then(|| "postgres".to_string());
        if root {
            let out = Command::new("chown")
                .args(["postgres:", dir.path().to_str().unwrap()])
                .output()
                .map_err(|e| format!("chown: {e}"))?;
            if !out.status.success() {
                return Err(format!(
                    "running as root and cannot hand {} to the postgres user: {}",
                    dir.path().display(),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
        let pg = PrivatePg {
            bin,
            dir,
            port: free_port(),
            user,
        };
        let data = pg.data();
        pg.run(
            "initdb",
            &[
                "-D",
                data.to_str().unwrap(),
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
            ],
        )?;
        pg.pg_start()?;
        Ok(pg)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }

    /// Runs one of its binaries (as the postgres user under root), bounded.
    fn run(&self, tool: &str, args: &[&str]) -> Result<(), String> {
        let exe = self.bin.join(tool);
        let mut cmd = match &self.user {
            Some(u) => {
                let mut c = Command::new("runuser");
                c.args(["-u", u, "--"]).arg(&exe);
                c
            }
            None => Command::new(&exe),
        };
        cmd.args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::null());
        let out = run_with_timeout(cmd, Duration::from_secs(60));
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{tool} {args:?}: {:?}\n{}{}",
                out.status, out.stdout, out.stderr
            ))
        }
    }

    fn pg_start(&self) -> Result<(), String> {
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("log");
        self.run(
            "pg_ctl",
            &[
                "-D",
                self.data().to_str().unwrap(),
                "-o",
                &opts,
                "-l",
                log.to_str().unwrap(),
                "-w",
                "-t",
                "30",
                "start",
            ],
        )
    }

    fn pg_stop(&self, mode: &str) -> Result<(), String> {
        self.run(
            "pg_ctl",
            &[
                "-D",
                self.data().to_str().unwrap(),
                "-m",
                mode,
                "-w",
                "-t",
                "30",
                "stop",
            ],
        )
    }
}

impl Drop for PrivatePg {
    fn drop(&mut self) {
        let _ = self.pg_stop("immediate");
    }
}

/// Requests the sink got, per delivery id (the idempotency key).
async fn per_delivery(hook: &MockServer) -> HashMap<String, usize> {
    let mut n: HashMap<String, usize> = HashMap::new();
    for r in received(hook).await {
        let id = req_header(&r, "idempotency-key").expect("a delivery id on every request");
        *n.entry(id).or_default() += 1;
    }
    n
}

/// What one run request got while the database came and went.
enum Outcome {
    Accepted(String),
    Unavailable,
}

/// Posts one run with a bounded wait: 202 or 503 `service_unavailable`,
/// nothing else (no 500, no hang).
async fn post_run(client: &reqwest::Client, node: &TestApp, flow: &str, ext: &str) -> Outcome {
    let req = client
        .post(format!("{}{A}/flows/{flow}/run", node.address))
        .header("x-service-api-key", &node.public_key)
        .header("x-service-secret-key", &node.secret_key)
        .json(&json!({"recipients": [{"external_id": ext}]}));
    let r = tokio::time::timeout(Duration::from_secs(15), req.go())
        .await
        .unwrap_or_else(|_| panic!("POST run on {} hung for 15 s", node.address));
    match r.status {
        202 => Outcome::Accepted(s(&r.json["id"])),
        503 => {
            assert_error(&r, 503, "service_unavailable");
            Outcome::Unavailable
        }
        _ => panic!("a run answers 202 or 503 while the database comes and goes: {r}"),
    }
}

#[tokio::test]
async fn postgresql_stopped_for_ten_seconds_under_load_costs_503s_and_no_delivery() {
    if pg_only("a cluster on a PostgreSQL of the test's own") {
        return;
    }
    let pg = match PrivatePg::start() {
        Ok(pg) => pg,
        Err(why) => {
            if under_ci() {
                panic!("cannot start a private PostgreSQL: {why}");
            }
            eprintln!("skipped: cannot start a private PostgreSQL: {why}");
            return;
        }
    };
    pg_exec(&pg.url("postgres"), "CREATE DATABASE herald").expect("create the database");
    let db = pg.url("herald");
    let Some(nats_bin) = nats_binary() else {
        assert!(!under_ci(), "nats-server is not installed");
        eprintln!("skipped: nats-server is not installed");
        return;
    };
    let nats = Nats::start(nats_bin);
    let hook = mock_server().await;
    mock_always(&hook, 200).await;
    let root = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let bus = nats.url();
    let nodes: Vec<TestApp> = (0..3)
        .map(|i| {
            let dir = root.path().join(format!("node{i}"));
            std::fs::create_dir_all(&dir).unwrap();
            TestApp::start_one(ServeOptions {
                data_dir: &dir,
                bootstrap: Some(&keys),
                args: &["--store", &db, "--bus", &bus, "--admin-rate", "100000"],
                // the default lease, longer than the outage: no node's work
                // is taken over meanwhile
                env: &[("HERALD_LEASE_SECONDS", "30")],
                default_flags: true,
            })
            .unwrap_or_else(|e| panic!("{e}"))
        })
        .collect();
    let flow = {
        let chat = create_webhook_channel(&nodes[0], &hook_url(&hook), None).await;
        let steps = json!([channel_step(&s(&chat["id"]), None, "hi")]);
        s(&active_flow(&nodes[0], "pgdown", steps).await["id"])
    };
    let client = http_client();
    let tag = &random_hex()[..8];
    let mut accepted: Vec<String> = vec![];
    let mut unavailable = 0usize;
    let mut i = 0usize;
    // before: a bounded load, every run accepted
    for _ in 0..30 {
        i += 1;
        match post_run(&client, &nodes[i % 3], &flow, &format!("pg-{i:04}-{tag}")).await {
            Outcome::Accepted(id) => accepted.push(id),
            Outcome::Unavailable => panic!("503 with the database up"),
        }
    }
    // down for 10 s: runs keep coming, each answered (503, or 202 for one
    // that committed before the stop), and /readyz turns 503 on every node
    pg.pg_stop("fast").expect("stop the private PostgreSQL");
    let down = Instant::now();
    let mut readyz_503: HashSet<usize> = HashSet::new();
    let mut slowest = Duration::ZERO;
    while down.elapsed() < Duration::from_secs(10) {
        // six at once, two per node
        let asked = Instant::now();
        let posts = (0..6).map(|j| {
            let (node, ext) = (&nodes[j % 3], format!("pg-{:04}-{tag}", i + 1 + j));
            let (client, flow) = (&client, &flow);
            async move { post_run(client, node, flow, &ext).await }
        });
        for o in futures_util::future::join_all(posts).await {
            match o {
                Outcome::Accepted(id) => accepted.push(id),
                Outcome::Unavailable => unavailable += 1,
            }
        }
        i += 6;
        slowest = slowest.max(asked.elapsed());
        for (k, n) in nodes.iter().enumerate() {
            let code = readyz(n).await;
            assert!(code == 503 || code == 200, "/readyz: {code}");
            if code == 503 {
                readyz_503.insert(k);
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    eprintln!("the slowest answer while the database was down took {slowest:?}");
    assert!(unavailable > 0, "no 503 while the database was down");
    assert_eq!(readyz_503.len(), 3, "/readyz 503 on every node meanwhile");
    let outage = i;
    pg.pg_start().expect("start the private PostgreSQL again");
    // the same processes are ready again and accept runs
    for n in &nodes {
        wait_readyz(n, 200).await;
    }
    for _ in 0..30 {
        i += 1;
        match post_run(&client, &nodes[i % 3], &flow, &format!("pg-{i:04}-{tag}")).await {
            Outcome::Accepted(id) => accepted.push(id),
            Outcome::Unavailable => panic!("503 after /readyz was 200 again"),
        }
    }
    eprintln!(
        "{} runs posted ({outage} before and during the outage): {} accepted, {unavailable} answered 503",
        i,
        accepted.len()
    );
    // every accepted run is delivered: once, or again with its delivery id
    // as the idempotency key when the attempt raced the outage (see
    // docs/DEPLOY.md, "What happens when something fails")
    for run in &accepted {
        wait_run_processed(&nodes[1], run, 30).await;
    }
    let d = Deadline::new(format!("{} deliveries to be sent", accepted.len()), 30);
    let sent = loop {
        let sent = list_all(&nodes[2], &format!("{A}/deliveries"), &[("status", "sent")]).await;
        if sent.len() >= accepted.len() {
            break sent;
        }
        d.tick(format!("{} sent", sent.len())).await;
    };
    assert_eq!(sent.len(), accepted.len(), "one delivery per accepted run");
    let got = per_delivery(&hook).await;
    let again: Vec<_> = got.iter().filter(|(_, c)| **c > 1).collect();
    eprintln!(
        "{} deliveries, {} attempted again with the same delivery id: {again:?}",
        got.len(),
        again.len()
    );
    assert!(
        again.len() <= 2,
        "more than a delivery or two raced the outage: {again:?}"
    );
    assert_eq!(
        got.keys().cloned().collect::<HashSet<_>>(),
        sent.iter().map(|d| s(&d["id"])).collect::<HashSet<_>>(),
        "every sent delivery reached the sink, and no other"
    );
}
