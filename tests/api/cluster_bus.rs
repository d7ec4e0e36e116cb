//! docs/DEPLOY.md "A cluster": three nodes on one PostgreSQL database and one
//! nats-server (started here, on a port of its own, so it can be stopped):
//! live-feed frames of runs accepted on other nodes reach a socket in `seq`
//! order without duplicates; frames lost while the bus is down come back
//! from the event log; `/readyz` follows the bus without a restart; a
//! user deleted, a secret rotated, a test clock moved or security mode
//! turned on on one node holds on the others at once.
//!
//! PostgreSQL only (the `api_pg` run): on the embedded store there is no
//! cluster, and the tests say so and return. They also need the
//! `nats-server` binary (`.ci/run` installs Debian's package); without it
//! they say so and return, except under `CI=true`, where they fail.

use std::path::Path;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::engine_helpers::*;
use crate::helpers::*;

pub(crate) type Ws = WebSocketStream<MaybeTlsStream<tokio::net::TcpStream>>;

pub(crate) const WAIT: Duration = Duration::from_secs(10);

// ================================================================ the cluster

/// Three nodes on one database and one bus. Dropped: nodes, then the bus,
/// then the database.
pub(crate) struct Cluster {
    pub(crate) nodes: Vec<TestApp>,
    pub(crate) nats: Nats,
    pub(crate) db: String,
    _root: tempfile::TempDir,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.nodes.clear();
        self.nats.stop();
        pg_drop_database(&self.db);
    }
}

/// Where a node's data directory names its test database (helpers/backends.rs).
const PG_DB_FILE: &str = ".herald-test-database";

/// `None` (after saying why) when the cluster cannot run here.
pub(crate) fn cluster_or_skip(env: &[(&str, &str)]) -> Option<Cluster> {
    if !pg_mode() {
        eprintln!(
            "skipped: a cluster needs PostgreSQL; these tests run in the api_pg suite (cargo test --test api_pg cluster_bus)"
        );
        return None;
    }
    let Some(bin) = crate::helpers::nats_binary() else {
        let why = "nats-server is not installed (Debian package `nats-server`)";
        if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
            panic!("{why}: CI runs the cluster tests and must not skip them");
        }
        eprintln!("skipped: {why}");
        return None;
    };
    let nats = Nats::start(bin);
    let db = pg_new_database();
    let root = tempfile::tempdir().expect("tempdir");
    let keys = Keys::random();
    let mut nodes = vec![];
    for i in 0..3 {
        let dir = root.path().join(format!("node{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        // The helpers point a node at its directory's database: the shared one.
        std::fs::write(dir.join(PG_DB_FILE), &db).unwrap();
        nodes.push(start_node(&dir, &keys, &db, &nats.url(), env));
    }
    Some(Cluster {
        nodes,
        nats,
        db,
        _root: root,
    })
}

pub(crate) fn start_node(
    dir: &Path, keys: &Keys, db: &str, bus: &str, env: &[(&str, &str)],
) -> TestApp {
    TestApp::start_one(ServeOptions {
        data_dir: dir,
        bootstrap: Some(keys),
        args: &["--store", db, "--bus", bus, "--user-rate", "100000"],
        env,
        default_flags: true,
    })
    .unwrap_or_else(|e| panic!("{e}"))
}

// ================================================================ sockets

pub(crate) async fn connect(app: &TestApp, ext: &str) -> Ws {
    let url = format!(
        "{}{U}/feed/live",
        app.address.replacen("http://", "ws://", 1)
    );
    let mut req = url.into_client_request().unwrap();
    for (k, v) in [
        ("x-service-api-key", app.public_key.as_str()),
        ("x-service-user-id", ext),
    ] {
        req.headers_mut().insert(
            HeaderName::from_bytes(k.as_bytes()).unwrap(),
            HeaderValue::from_str(v).unwrap(),
        );
    }
    let (ws, _) = tokio::time::timeout(WAIT, tokio_tungstenite::connect_async(req))
        .await
        .expect("WebSocket handshake timed out")
        .expect("WebSocket upgrade");
    ws
}

#[derive(Debug)]
pub(crate) enum Got {
    Text(Value),
    Close(Option<u16>),
    Nothing,
}

pub(crate) async fn next_got(ws: &mut Ws, wait: Duration) -> Got {
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        match tokio::time::timeout_at(deadline, ws.next()).await {
            Err(_) => return Got::Nothing,
            Ok(None) | Ok(Some(Err(_))) => return Got::Close(None),
            Ok(Some(Ok(Message::Text(t)))) => {
                return Got::Text(serde_json::from_str(t.as_str()).expect("JSON frame"))
            }
            Ok(Some(Ok(Message::Close(f)))) => return Got::Close(f.map(|f| u16::from(f.code))),
            Ok(Some(Ok(_))) => continue,
        }
    }
}

pub(crate) async fn frame(ws: &mut Ws) -> Value {
    match next_got(ws, WAIT).await {
        Got::Text(v) => v,
        other => panic!("expected a frame within {WAIT:?}, got {other:?}"),
    }
}

/// Reads event frames until `upto` (inclusive); asserts they are exactly
/// `from..=upto`, in order, once each.
pub(crate) async fn expect_seqs(ws: &mut Ws, from: u64, upto: u64) -> Vec<Value> {
    let mut got = vec![];
    while got.len() < (upto + 1 - from) as usize {
        let f = frame(ws).await;
        assert_eq!(f["type"], json!("feed_entry.created"), "{f}");
        let want = from + got.len() as u64;
        assert_eq!(
            f["seq"],
            json!(want),
            "frames must come in seq order, once each (after {:?}): {f}",
            got.iter()
                .map(|v: &Value| v["seq"].clone())
                .collect::<Vec<_>>()
        );
        got.push(f);
    }
    got
}

/// A flow with one in_app step, made through `app`.
pub(crate) async fn in_app_flow(app: &TestApp) -> String {
    let inapp = in_app_channel(app).await;
    let steps = json!([channel_step(&inapp, Some("S{{ data.i }}"), "B")]);
    s(&active_flow(app, "cluster", steps).await["id"])
}

pub(crate) async fn run_on(app: &TestApp, flow: &str, ext: &str, i: u64) -> Value {
    run_flow(
        app,
        flow,
        json!({"recipients": [{"external_id": ext}], "data": {"i": i}}),
    )
    .await
}

pub(crate) async fn readyz(app: &TestApp) -> u16 {
    match app.request(GET, "/readyz").send().await {
        Ok(r) => r.status().as_u16(),
        Err(_) => 0,
    }
}

pub(crate) async fn wait_readyz(app: &TestApp, want: u16) {
    let d = Deadline::new(format!("/readyz {want} on {}", app.address), 30);
    loop {
        let got = readyz(app).await;
        if got == want {
            return;
        }
        d.tick(got).await;
    }
}

/// The one delivery of a run's one notification.
async fn only_delivery(app: &TestApp, run_id: &str) -> Value {
    let ns = run_notifications(app, run_id).await;
    assert_eq!(ns.len(), 1, "{ns:?}");
    delivery_of(&ns[0], "in_app")
}

/// A counter's value in `/metrics` (0 when absent).
async fn metric(app: &TestApp, name: &str) -> f64 {
    let text = app
        .request(GET, "/metrics")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .find_map(|l| {
            let (k, v) = l.split_once(' ')?;
            (k == name).then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0.0)
}

// ================================================================ tests

#[tokio::test]
async fn frames_of_runs_on_other_nodes_reach_a_socket_in_seq_order_once_each() {
    let Some(c) = cluster_or_skip(&[]) else {
        return;
    };
    let (a, b, cc) = (&c.nodes[0], &c.nodes[1], &c.nodes[2]);
    let flow = in_app_flow(a).await;
    let ext = new_ext("busfeed");
    a.create_user_as(&ext, json!({})).await;
    let mut ws = connect(b, &ext).await;
    let hello = frame(&mut ws).await;
    assert_eq!(hello["type"], json!("hello"), "{hello}");
    assert_eq!(hello["seq"], json!(0), "{hello}");

    // Runs accepted on A and C, one after the other and then all at once.
    for i in 1..=6u64 {
        let node = if i % 2 == 1 { a } else { cc };
        run_on(node, &flow, &ext, i).await;
    }
    let got = expect_seqs(&mut ws, 1, 6).await;
    assert_eq!(
        got.last().unwrap()["meta"]["unread_count"],
        json!(6),
        "{:?}",
        got.last()
    );
    let runs: Vec<_> = (7..=16u64)
        .map(|i| {
            let node = if i % 2 == 1 { a } else { cc };
            let (flow, ext) = (flow.clone(), ext.clone());
            async move { run_on(node, &flow, &ext, i).await }
        })
        .collect();
    futures_util::future::join_all(runs).await;
    expect_seqs(&mut ws, 7, 16).await;
    match next_got(&mut ws, Duration::from_millis(500)).await {
        Got::Nothing => {}
        other => panic!("nothing more may come (no duplicates): {other:?}"),
    }
    // What B's socket saw is what the log holds.
    let feed = wait_feed(b, &ext, 16).await;
    assert_eq!(feed["items"].as_array().unwrap().len(), 16, "{feed}");
    assert!(metric(b, "herald_bus_received_total").await >= 1.0);
    assert!(metric(a, "herald_bus_published_total").await >= 1.0);
}

#[tokio::test]
async fn frames_lost_while_the_bus_is_down_come_back_from_the_log_and_readyz_follows_the_bus() {
    let Some(mut c) = cluster_or_skip(&[]) else {
        return;
    };
    let flow = in_app_flow(&c.nodes[0]).await;
    let ext = new_ext("buslost");
    c.nodes[0].create_user_as(&ext, json!({})).await;
    let mut ws = connect(&c.nodes[1], &ext).await;
    assert_eq!(frame(&mut ws).await["type"], json!("hello"));
    run_on(&c.nodes[0], &flow, &ext, 1).await;
    expect_seqs(&mut ws, 1, 1).await;
    for n in &c.nodes {
        wait_readyz(n, 200).await;
    }

    // The bus goes away: every node says so, and keeps accepting runs
    // (the bus is never waited for).
    c.nats.stop();
    for n in &c.nodes {
        wait_readyz(n, 503).await;
    }
    let r = c.nodes[1].request(GET, "/readyz").send().await.unwrap();
    let body: Value = r.json().await.unwrap();
    assert_eq!(
        body["error"]["code"],
        json!("service_unavailable"),
        "{body}"
    );
    for i in 2..=4u64 {
        run_on(&c.nodes[0], &flow, &ext, i).await;
    }
    run_on(&c.nodes[2], &flow, &ext, 5).await;
    // Their frames cannot cross nodes now (B's periodic position check may
    // still read them from the log meanwhile: that is recovery too).

    // The bus comes back: ready again without a restart, and the socket gets
    // exactly what it missed, from the event log, in order.
    c.nats.restart();
    for n in &c.nodes {
        wait_readyz(n, 200).await;
    }
    expect_seqs(&mut ws, 2, 5).await;
    // And live frames flow over the bus again.
    run_on(&c.nodes[2], &flow, &ext, 6).await;
    expect_seqs(&mut ws, 6, 6).await;
    match next_got(&mut ws, Duration::from_millis(500)).await {
        Got::Nothing => {}
        other => panic!("nothing more may come (no duplicates): {other:?}"),
    }
    let b = &c.nodes[1];
    assert!(metric(b, "herald_bus_reconnects_total").await >= 1.0);
    assert!(metric(b, "herald_bus_recoveries_total").await >= 1.0);
    assert!(metric(b, "herald_bus_recovered_frames_total").await >= 4.0);
    assert!(metric(&c.nodes[0], "herald_bus_dropped_total").await >= 3.0);
    assert_eq!(metric(b, "herald_bus_connected").await, 1.0);
    assert!(metric(b, "herald_pg_pool_connections").await >= 1.0);
}

#[tokio::test]
async fn changes_on_one_node_hold_on_the_others_at_once() {
    let operator = format!("op_{}", random_hex());
    let Some(mut c) = cluster_or_skip(&[("HERALD_OPERATOR_TOKEN", &operator)]) else {
        return;
    };
    let (a, b) = (&c.nodes[0], &c.nodes[1]);

    // A user deleted on A is gone on B.
    let (ext, _) = a.create_user("busdel", json!({"name": "Ann"})).await;
    let path = format!("{A}/users/{}", enc(&ext));
    b.admin(GET, &path).go().await.ok(200);
    let r = a.admin(DELETE, &path).go().await;
    assert!(r.status == 204 || r.status == 200, "{r}");
    let r = b.admin(GET, &path).go().await;
    assert_eq!(r.status, 404, "deleted on A, still found on B: {r}");

    // A secret rotated on A (no grace) is refused on B, the new one accepted.
    let r = a
        .request(POST, "/ops/v1/projects/default/rotate_secret")
        .header("x-herald-ops-token", &operator)
        .json(&json!({"grace_seconds": 0}))
        .go()
        .await;
    let rotated = r.ok(200);
    let new_keys = Keys {
        public_key: a.public_key.clone(),
        secret_key: s(&rotated["secret_key"]),
    };
    let r = b.get_project().await;
    assert_unauth(&r, "secret_key", "invalid_secret_key");
    let r = b
        .admin_with(&new_keys, GET, &format!("{A}/project"))
        .go()
        .await;
    r.ok(200);

    // A test clock set and moved on A is B's at once: a run accepted on B
    // counts its delay from A's clock, and the delivery B parked on it is
    // made due by the advance on A.
    for n in &mut c.nodes {
        n.secret_key = new_keys.secret_key.clone();
    }
    let (a, b) = (&c.nodes[0], &c.nodes[1]);
    let r = a.put_project(&json!({"clock": "test"})).await;
    let t0 = parse_ts(&r.ok(200)["clock_time"]);
    let inapp = in_app_channel(a).await;
    let flow = active_flow(
        a,
        "busclock",
        json!([delay_step(3600), channel_step(&inapp, None, "hi")]),
    )
    .await;
    let run = run_flow(
        b,
        &s(&flow["id"]),
        json!({"recipients": [new_ext("busclock")]}),
    )
    .await;
    let run_id = s(&run["id"]);
    let d = only_delivery(b, &run_id).await;
    assert_eq!(d["status"], json!("pending"), "{d}");
    let due = parse_ts(&d["next_attempt_at"]);
    assert_eq!(
        (due - t0).num_seconds(),
        3600,
        "B counts from A's test clock: {d}"
    );
    a.advance_clock(&json!({"by": "2h"})).await.ok(200);
    let wait = Deadline::new("the delivery B parked to be sent after A's advance", 30);
    loop {
        let d = only_delivery(b, &run_id).await;
        if d["status"] == json!("sent") {
            break;
        }
        wait.tick(&d).await;
    }
    // A run accepted on B right after A's advance counts from the new time.
    let run = run_flow(
        b,
        &s(&flow["id"]),
        json!({"recipients": [new_ext("busclock")]}),
    )
    .await;
    let ns = run_notifications(b, &s(&run["id"])).await;
    let d = delivery_of(&ns[0], "in_app");
    assert_eq!(
        (parse_ts(&d["next_attempt_at"]) - t0).num_seconds(),
        3 * 3600,
        "{d}"
    );

    // Security mode turned on on A closes B's sockets on a bare user id.
    let r = a.put_project(&json!({"clock": "real"})).await;
    r.ok(200);
    let ext = new_ext("bussec");
    a.create_user_as(&ext, json!({})).await;
    let mut ws = connect(b, &ext).await;
    assert_eq!(frame(&mut ws).await["type"], json!("hello"));
    let r = a.put_project(&json!({"security_mode": true})).await;
    r.ok(200);
    match next_got(&mut ws, WAIT).await {
        Got::Close(Some(4401)) => {}
        other => panic!("B's socket must close with 4401: {other:?}"),
    }
}

#[tokio::test]
async fn a_bus_without_the_postgresql_store_is_refused() {
    if pg_mode() {
        // The suite points every server at PostgreSQL; the refusal is about
        // the embedded store, which the `api` run covers.
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let r = TestApp::start(ServeOptions {
        data_dir: dir.path(),
        bootstrap: Some(&keys),
        args: &["--bus", "nats://127.0.0.1:4222"],
        env: &[],
        default_flags: true,
    });
    let Err(out) = r else {
        panic!("serve must refuse --bus on the embedded store")
    };
    assert!(
        out.contains("--bus (HERALD_BUS) needs the PostgreSQL store"),
        "{out}"
    );
    // Nor anything but a NATS URL.
    let r = TestApp::start(ServeOptions {
        data_dir: dir.path(),
        bootstrap: Some(&keys),
        args: &["--bus", "redis://127.0.0.1:6379"],
        env: &[],
        default_flags: true,
    });
    let Err(out) = r else {
        panic!("serve must refuse a --bus that is not NATS")
    };
    assert!(out.contains("--bus must be a NATS URL"), "{out}");
}

#[tokio::test]
async fn security_mode_turned_on_while_the_bus_is_down_closes_the_other_nodes_sockets_once_it_is_back(
) {
    let Some(mut c) = cluster_or_skip(&[]) else {
        return;
    };
    let ext = new_ext("busrecheck");
    c.nodes[0].create_user_as(&ext, json!({})).await;
    let mut ws = connect(&c.nodes[1], &ext).await;
    assert_eq!(frame(&mut ws).await["type"], json!("hello"));
    c.nats.stop();
    wait_readyz(&c.nodes[0], 503).await;
    c.nodes[0]
        .admin(PUT, &format!("{A}/project"))
        .json(&json!({"security_mode": true}))
        .go()
        .await
        .ok(200);
    c.nats.restart();
    match next_got(&mut ws, Duration::from_secs(20)).await {
        Got::Close(Some(4401)) => {}
        other => panic!("B's socket must close with 4401 once the bus is back: {other:?}"),
    }
}
