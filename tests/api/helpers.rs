//! Test harness: starts the real `herald` binary and offers request and
//! assertion helpers shared by every test file.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use reqwest::header::HeaderMap;
pub use reqwest::Method;
use serde_json::{json, Value};
use tempfile::TempDir;

pub const A: &str = "/admin/v1";
pub const U: &str = "/user/v1";
pub const CHANNEL_TYPES: [&str; 6] = ["chat", "email", "in_app", "mobile_push", "sms", "web_push"];

pub const GET: Method = Method::GET;
pub const PUT: Method = Method::PUT;
pub const POST: Method = Method::POST;
pub const PATCH: Method = Method::PATCH;
pub const DELETE: Method = Method::DELETE;

const START_TIMEOUT: Duration = Duration::from_secs(60);

// ================================================================ the PostgreSQL run

/// The test binary's file name (`api-<hash>`, `api_pg-<hash>`, …).
fn binary_name() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default()
}

fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Whether this is the `api_pg` or the `api_cluster` test binary (the same
/// suite as `api`): every server it starts keeps its state in a PostgreSQL
/// database of its own.
pub fn pg_mode() -> bool {
    static MODE: OnceLock<bool> = OnceLock::new();
    *MODE.get_or_init(|| {
        let name = binary_name();
        let pg = name.starts_with("api_pg") || name.starts_with("api_cluster");
        if pg && !pg_available() {
            let why = format!("PostgreSQL does not answer at {}", pg_server());
            if under_ci() {
                panic!("{why}: CI runs the suite on PostgreSQL and must not skip it");
            }
            eprintln!("NOTE: {why}; the {name} suite runs on the embedded store instead (set HERALD_TEST_PG to a server to run it on PostgreSQL)");
            return false;
        }
        pg
    })
}

/// How many nodes one `TestApp` is in the `api_cluster` run.
pub const CLUSTER_NODES: usize = 3;

/// Whether this is the `api_cluster` test binary: every `TestApp` is a
/// cluster of `CLUSTER_NODES` nodes on one PostgreSQL database and one
/// nats-server of its own, and its requests and sockets go round robin over
/// the nodes. Without PostgreSQL or `nats-server` the run says so and falls
/// back (to the embedded store, or to one node on PostgreSQL); under CI it
/// fails instead.
pub fn cluster_mode() -> bool {
    static MODE: OnceLock<bool> = OnceLock::new();
    *MODE.get_or_init(|| {
        if !binary_name().starts_with("api_cluster") || !pg_mode() {
            return false;
        }
        if nats_binary().is_none() {
            let why = "nats-server is not installed (Debian package `nats-server`)";
            if under_ci() {
                panic!("{why}: CI runs the suite on a cluster and must not skip it");
            }
            eprintln!("NOTE: {why}; the api_cluster suite runs on one node per server instead");
            return false;
        }
        true
    })
}

/// Skips a test of what one process has by itself (its log lines, its
/// in-memory limits, its exit) in the `api_cluster` run: true, with the
/// reason printed, where the test returns early.
pub fn single_node_only(why: &str) -> bool {
    if cluster_mode() {
        eprintln!("skipped on a cluster: {why}");
    }
    cluster_mode()
}

// ================================================================ nats-server

/// The `nats-server` binary, on PATH or where Debian puts it.
pub fn nats_binary() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("nats-server"))
            .find(|p| p.is_file())
    });
    on_path.or_else(|| {
        ["/usr/sbin/nats-server", "/usr/bin/nats-server"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.is_file())
    })
}

/// A free TCP port on 127.0.0.1 (free when asked).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// A nats-server of the test's own, on a free port of 127.0.0.1; killed
/// when dropped.
pub struct Nats {
    bin: PathBuf,
    pub port: u16,
    child: Option<Child>,
}

impl Nats {
    pub fn start(bin: PathBuf) -> Nats {
        let mut n = Nats {
            bin,
            port: free_port(),
            child: None,
        };
        n.restart();
        n
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Starts it (again, on the same port) and waits until it accepts.
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "nats-server already running");
        let child = Command::new(&self.bin)
            .args(["-a", "127.0.0.1", "-p", &self.port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", self.bin.display()));
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "nats-server did not listen on {} within 10 s",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL (a crash of the bus), then wait for the exit.
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The server the PostgreSQL run uses: `HERALD_TEST_PG`, else the local one.
pub fn pg_server() -> String {
    std::env::var("HERALD_TEST_PG")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432".to_string())
        .trim_end_matches('/')
        .to_string()
}

/// Runs statements on the server's `postgres` database, on a thread of its
/// own (the callers are often inside a tokio runtime, where blocking on
/// another one panics).
pub fn pg_admin(sql: &[String]) -> Result<Vec<String>, String> {
    pg_query(&format!("{}/postgres", pg_server()), sql)
}

/// Runs statements on a database of the test server (by URL): the first
/// column of every row they return, as text.
pub fn pg_query(db_url: &str, sql: &[String]) -> Result<Vec<String>, String> {
    let url = db_url.to_string();
    let sql = sql.to_vec();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        rt.block_on(async move {
            use sqlx::{Connection, Row};
            let mut c =
                tokio::time::timeout(Duration::from_secs(10), sqlx::PgConnection::connect(&url))
                    .await
                    .map_err(|_| format!("{url}: no answer within 10 s"))?
                    .map_err(|e| format!("{url}: {e}"))?;
            let mut out = vec![];
            for s in &sql {
                for r in sqlx::query(s)
                    .fetch_all(&mut c)
                    .await
                    .map_err(|e| format!("{s}: {e}"))?
                {
                    out.push(r.try_get::<String, _>(0).unwrap_or_default());
                }
            }
            let _ = c.close().await;
            Ok(out)
        })
    })
    .join()
    .map_err(|_| "the database thread panicked".to_string())?
}

/// Runs one statement on a database of the test server (by URL).
pub fn pg_exec(db_url: &str, sql: &str) -> Result<(), String> {
    let (url, sql) = (db_url.to_string(), sql.to_string());
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        rt.block_on(async move {
            use sqlx::Connection;
            let mut c = sqlx::PgConnection::connect(&url)
                .await
                .map_err(|e| format!("{url}: {e}"))?;
            sqlx::raw_sql(&sql)
                .execute(&mut c)
                .await
                .map_err(|e| format!("{sql}: {e}"))?;
            let _ = c.close().await;
            Ok(())
        })
    })
    .join()
    .map_err(|_| "the database thread panicked".to_string())?
}

fn pg_available() -> bool {
    pg_admin(&["SELECT 'ok'".to_string()]).is_ok()
}

/// Where a data directory's database name is kept in the PostgreSQL run.
const PG_DB_FILE: &str = ".herald-test-database";

/// A new empty database `herald_t_<pid>_<hex>` on the test server: its URL.
/// Databases of test processes that are gone are dropped first (once per
/// process), so an interrupted run leaves nothing behind for long.
pub fn pg_new_database() -> String {
    static SWEPT: OnceLock<()> = OnceLock::new();
    SWEPT.get_or_init(|| {
        let names = pg_admin(&[
            "SELECT datname::text FROM pg_database WHERE datname LIKE 'herald_t_%'".to_string(),
        ])
        .unwrap_or_default();
        for n in names {
            let pid = n.split('_').nth(2).and_then(|p| p.parse::<u32>().ok());
            if pid.is_some_and(|p| !Path::new(&format!("/proc/{p}")).exists()) {
                let _ = pg_admin(&[format!("DROP DATABASE IF EXISTS {n} WITH (FORCE)")]);
            }
        }
    });
    let name = format!("herald_t_{}_{}", std::process::id(), &random_hex()[..16]);
    pg_admin(&[format!("CREATE DATABASE {name}")])
        .unwrap_or_else(|e| panic!("cannot create a test database: {e}"));
    format!("{}/{name}", pg_server())
}

/// The database standing for a data directory in the PostgreSQL run (made
/// on first use and named in the directory, so a restart on the same
/// directory finds the same data).
pub fn pg_url_for(dir: &Path) -> String {
    let file = dir.join(PG_DB_FILE);
    if let Ok(url) = std::fs::read_to_string(&file) {
        return url.trim().to_string();
    }
    let _ = std::fs::create_dir_all(dir);
    let url = pg_new_database();
    std::fs::write(&file, &url).expect("write the test database's name");
    url
}

/// Drops a test database (by URL).
pub fn pg_drop_database(url: &str) {
    if let Some(name) = url.trim().rsplit('/').next() {
        let _ = pg_admin(&[format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")]);
    }
}

/// Drops the database of a data directory, if it has one.
fn pg_drop_for(dir: &Path) {
    if let Ok(url) = std::fs::read_to_string(dir.join(PG_DB_FILE)) {
        pg_drop_database(&url);
    }
}

/// Points a `herald` command at the directory's database in the PostgreSQL
/// run (`HERALD_STORE`; a test's own flags still win).
pub fn with_store(cmd: &mut Command, dir: &Path) {
    if pg_mode() {
        cmd.env("HERALD_STORE", pg_url_for(dir));
        // A node killed by a test leaves its leases: a short lease lets the
        // restarted node (a new node id) take its work back within seconds.
        cmd.env("HERALD_LEASE_SECONDS", "3")
            .env("HERALD_CLAIM_POLL_MS", "500");
        // Three nodes per server and several tests at once would exceed the
        // shared server's connections with the default pool of 16 each.
        if cluster_mode() {
            cmd.env("HERALD_PG_MAX_CONNECTIONS", "4");
        }
    }
}

/// For tests of what only PostgreSQL has (several nodes on one database):
/// true, with the reason printed, in the embedded store's run, where the
/// test returns early. (The PostgreSQL run never skips: without a server it
/// fails under CI, see `pg_mode`.)
pub fn pg_only(why: &str) -> bool {
    if !pg_mode() {
        eprintln!("skipped on the embedded store (runs in the api_pg suite): {why}");
    }
    !pg_mode()
}

/// For tests of what only the embedded store has (its files, backups, disk
/// space, sealed secrets): true, with the reason printed, in the PostgreSQL
/// run, where the test returns early.
pub fn sled_only(why: &str) -> bool {
    if pg_mode() {
        eprintln!("skipped on PostgreSQL: {why}");
    }
    pg_mode()
}

// ================================================================ keys and ids

/// A project's public and secret key.
#[derive(Clone, Debug)]
pub struct Keys {
    pub public_key: String,
    pub secret_key: String,
}

impl Keys {
    /// Fresh random bootstrap keys (`pk_test_<hex>`, `sk_test_<hex>`).
    pub fn random() -> Keys {
        Keys {
            public_key: format!("pk_test_{}", random_hex()),
            secret_key: format!("sk_test_{}", random_hex()),
        }
    }
}

/// The value on the first line of a `/metrics` text that starts with
/// `line_prefix` (a metric name with its labels), if there is one.
pub fn metric_value(text: &str, line_prefix: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(line_prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

pub fn random_hex() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// A unique external id with a readable tag.
pub fn new_ext(tag: &str) -> String {
    format!("{tag}-{}", &random_hex()[..12])
}

/// Percent-encodes a path segment (everything but unreserved characters).
pub fn enc(segment: &str) -> String {
    let mut out = String::new();
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

pub fn now_secs() -> i64 {
    chrono::Utc::now().timestamp()
}

// ================================================================ the process

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Output of a child process, drained by background threads so the child
/// never blocks on a full pipe.
#[derive(Clone, Default)]
pub struct Output(Arc<Mutex<Vec<(Stream, String)>>>);

impl Output {
    pub fn lines(&self) -> Vec<(Stream, String)> {
        self.0.lock().unwrap().clone()
    }
    pub fn stdout_lines(&self) -> Vec<String> {
        self.stream(Stream::Stdout)
    }
    pub fn stderr_lines(&self) -> Vec<String> {
        self.stream(Stream::Stderr)
    }
    fn stream(&self, which: Stream) -> Vec<String> {
        self.lines()
            .into_iter()
            .filter(|(s, _)| *s == which)
            .map(|(_, l)| l)
            .collect()
    }
    pub fn text(&self) -> String {
        self.lines()
            .into_iter()
            .map(|(s, l)| format!("[{}] {l}", if s == Stream::Stdout { "out" } else { "err" }))
            .collect::<Vec<_>>()
            .join("\n")
    }
    pub fn tail(&self, n: usize) -> String {
        let lines = self.lines();
        let start = lines.len().saturating_sub(n);
        lines[start..]
            .iter()
            .map(|(s, l)| format!("[{}] {l}", if *s == Stream::Stdout { "out" } else { "err" }))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// The server's test knob that delays opening its store (see `wait_until_serving`).
pub const OPEN_DELAY_ENV: &str = "HERALD_TEST_OPEN_DELAY_MS";

/// A server whose store takes more than a second to open (a loaded machine,
/// a PostgreSQL migration) listens early and answers 503 "the server is
/// starting" until it is open (docs/API.md §14): a test starts once it
/// serves. Raw HTTP/1.1 on a std socket, as `start` is not async.
fn wait_until_serving(address: &str) -> Result<(), String> {
    use std::io::Write;
    let host = address.trim_start_matches("http://").trim_end_matches('/');
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        let starting = (|| -> std::io::Result<bool> {
            let mut s = std::net::TcpStream::connect(host)?;
            s.set_read_timeout(Some(Duration::from_secs(10)))?;
            s.write_all(
                format!("GET /readyz HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n\r\n")
                    .as_bytes(),
            )?;
            let mut buf = String::new();
            s.read_to_string(&mut buf)?;
            Ok(buf.is_empty() || buf.contains("the server is starting"))
        })();
        if let Ok(false) = starting {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!(
                "herald serve listened on {address} but did not serve within {START_TIMEOUT:?} ({starting:?})"
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Extracts `http://ADDR` from a line containing `listening on http://ADDR`.
fn parse_listen(line: &str) -> Option<String> {
    let i = line.find("listening on http://")?;
    let rest = &line[i + "listening on ".len()..];
    let end = rest
        .find(|c: char| c.is_whitespace() || "\"'<>,;\\".contains(c))
        .unwrap_or(rest.len());
    let url = rest[..end].trim_end_matches(['.', ')']);
    Some(url.to_string())
}

fn pump<R: Read + Send + 'static>(
    reader: R,
    stream: Stream,
    out: Output,
    listen: Option<mpsc::Sender<String>>,
) {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(reader);
        let mut buf = Vec::new();
        let mut sent = false;
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let line = strip_ansi(String::from_utf8_lossy(&buf).trim_end_matches(['\n', '\r']));
            let url = if sent { None } else { parse_listen(&line) };
            // record the line before telling the waiter, so it is visible then
            out.0.lock().unwrap().push((stream, line));
            if let (Some(tx), Some(url)) = (&listen, url) {
                let _ = tx.send(url);
                sent = true;
            }
        }
        // dropping `listen` tells the waiter that stdout closed
    });
}

/// In `ServeOptions::env` / `spawn_with`: the egress guard on, as in production
/// (the helpers otherwise start every server with private destinations allowed).
pub const GUARD_ON: (&str, &str) = ("HERALD_ALLOW_PRIVATE_DESTINATIONS", "false");

/// How to start `herald serve`.
pub struct ServeOptions<'a> {
    pub data_dir: &'a Path,
    /// Bootstrap keys passed as HERALD_BOOTSTRAP_*; None: no bootstrap variables.
    pub bootstrap: Option<&'a Keys>,
    /// Extra command-line arguments after `serve`.
    pub args: &'a [&'a str],
    /// Extra environment variables (applied last).
    pub env: &'a [(&'a str, &'a str)],
    /// Pass `--bind 127.0.0.1:0 --data-dir DIR` (false: the caller sets them, e.g. by env).
    pub default_flags: bool,
}

/// A running `herald serve`: one process, or in the `api_cluster` run
/// (`cluster_mode`) `CLUSTER_NODES` processes on one database and one
/// nats-server, answering requests in turn.
pub struct TestApp {
    /// Base URL, e.g. `http://127.0.0.1:41234` (the first node's).
    pub address: String,
    pub public_key: String,
    pub secret_key: String,
    pub data_dir: PathBuf,
    /// Every node's lines, in the order they came.
    pub output: Output,
    pub client: reqwest::Client,
    /// Every node's base URL (one in the other runs).
    addresses: Vec<String>,
    /// Every node's process (`None` once stopped).
    children: Vec<Option<Child>>,
    /// Which node the next request or socket goes to.
    turn: Arc<AtomicUsize>,
    /// The cluster's bus (the `api_cluster` run; dropped after the nodes).
    nats: Option<Nats>,
    _tmp: Option<TempDir>,
}

pub fn herald_bin() -> &'static str {
    env!("CARGO_BIN_EXE_herald")
}

fn base_command() -> Command {
    let mut cmd = Command::new(herald_bin());
    // nothing of the caller's HERALD_* environment leaks into the server
    for (var, _) in std::env::vars_os() {
        if var.to_string_lossy().starts_with("HERALD_") {
            cmd.env_remove(var);
        }
    }
    cmd.env("NO_COLOR", "1").env("RUST_LOG", "warn");
    cmd
}

pub fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(30))
        // Below actix-web's 5 s keep-alive: a pooled connection the server is
        // closing must never be picked for the next request (a transport error).
        .pool_idle_timeout(Duration::from_secs(2))
        .build()
        .expect("reqwest client")
}

/// Starts one `herald serve` process (on `bus` when given), waits for its
/// `listening on http://ADDR` line and until it serves; its lines go to
/// `output`. The process and its base URL.
fn launch(
    opts: &ServeOptions,
    bus: Option<&str>,
    output: &Output,
) -> Result<(Child, String), String> {
    let mut cmd = base_command();
    cmd.arg("serve");
    // The suites point providers at listeners on 127.0.0.1, which the egress
    // guard refuses: off by default here; `GUARD_ON` in `env` turns it back on.
    cmd.env("HERALD_ALLOW_PRIVATE_DESTINATIONS", "true");
    with_store(&mut cmd, opts.data_dir);
    if let Some(bus) = bus {
        cmd.env("HERALD_BUS", bus);
    }
    if opts.default_flags {
        cmd.arg("--bind")
            .arg("127.0.0.1:0")
            .arg("--data-dir")
            .arg(opts.data_dir);
    }
    cmd.args(opts.args);
    if let Some(k) = opts.bootstrap {
        cmd.env("HERALD_BOOTSTRAP_PUBLIC_KEY", &k.public_key)
            .env("HERALD_BOOTSTRAP_SECRET_KEY", &k.secret_key);
    }
    for (k, v) in opts.env {
        cmd.env(k, v);
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", herald_bin()))?;
    let (tx, rx) = mpsc::channel();
    pump(
        child.stdout.take().unwrap(),
        Stream::Stdout,
        output.clone(),
        Some(tx.clone()),
    );
    pump(
        child.stderr.take().unwrap(),
        Stream::Stderr,
        output.clone(),
        Some(tx),
    );
    let address = match rx.recv_timeout(START_TIMEOUT) {
        Ok(url) => url,
        Err(e) => {
            let _ = child.kill();
            let status = child.wait().ok();
            std::thread::sleep(Duration::from_millis(100));
            return Err(format!(
                "herald serve did not print `listening on http://ADDR` ({e:?}; exit status {status:?}); output:\n{}",
                output.text()
            ));
        }
    };
    // A test that watches the start itself sets the open delay.
    if !opts.env.iter().any(|(k, _)| *k == OPEN_DELAY_ENV) {
        if let Err(e) = wait_until_serving(&address) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{e}; output:\n{}", output.text()));
        }
    }
    Ok((child, address))
}

impl TestApp {
    /// A fresh server on a new temporary data dir with random bootstrap keys.
    pub fn spawn() -> TestApp {
        TestApp::spawn_with(&[], &[])
    }

    /// Like `spawn`, with extra `serve` arguments and environment variables.
    pub fn spawn_with(args: &[&str], env: &[(&str, &str)]) -> TestApp {
        let tmp = tempfile::tempdir().expect("tempdir");
        let keys = Keys::random();
        let mut app = TestApp::start(ServeOptions {
            data_dir: tmp.path(),
            bootstrap: Some(&keys),
            args,
            env,
            default_flags: true,
        })
        .unwrap_or_else(|e| panic!("{e}"));
        app._tmp = Some(tmp);
        app
    }

    /// (Re)starts a server on an existing data dir (owned by the caller) with
    /// the given keys as bootstrap keys (ignored by the server when the
    /// default project exists already).
    pub fn spawn_on(data_dir: &Path, keys: &Keys) -> TestApp {
        TestApp::start(ServeOptions {
            data_dir,
            bootstrap: Some(keys),
            args: &[],
            env: &[],
            default_flags: true,
        })
        .unwrap_or_else(|e| panic!("{e}"))
    }

    /// `n` nodes of one cluster: `herald serve` processes sharing the
    /// database of `data_dir` (the PostgreSQL run only; see `pg_url_for`),
    /// each with `args` and `env`.
    pub fn start_nodes(
        data_dir: &Path,
        keys: &Keys,
        n: usize,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Vec<TestApp> {
        assert!(pg_mode(), "a cluster shares a PostgreSQL database");
        (0..n)
            .map(|_| {
                TestApp::start_one(ServeOptions {
                    data_dir,
                    bootstrap: Some(keys),
                    args,
                    env,
                    default_flags: true,
                })
                .unwrap_or_else(|e| panic!("{e}"))
            })
            .collect()
    }

    /// Starts `herald serve` and waits until it serves: one process, or in
    /// the `api_cluster` run a nats-server of its own and `CLUSTER_NODES`
    /// nodes on it and on the directory's database (the first one alone,
    /// as it makes the schema, then the others at once).
    pub fn start(opts: ServeOptions) -> Result<TestApp, String> {
        if !cluster_mode() {
            return TestApp::start_one(opts);
        }
        let nats = Nats::start(nats_binary().expect("cluster_mode checked it"));
        let bus = nats.url();
        let output = Output::default();
        let first = launch(&opts, Some(&bus), &output)?;
        let rest: Vec<Result<(Child, String), String>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (1..CLUSTER_NODES)
                .map(|_| scope.spawn(|| launch(&opts, Some(&bus), &output)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a node's start panicked"))
                .collect()
        });
        let mut nodes = vec![first];
        let mut failed = None;
        for r in rest {
            match r {
                Ok(node) => nodes.push(node),
                Err(e) => failed = Some(e),
            }
        }
        if let Some(e) = failed {
            for (mut c, _) in nodes {
                let _ = c.kill();
                let _ = c.wait();
            }
            return Err(e);
        }
        let mut app = TestApp::assemble(&opts, nodes, output);
        app.nats = Some(nats);
        Ok(app)
    }

    /// One `herald serve` process, whatever the run (a test that builds a
    /// cluster of its own starts its nodes with this).
    pub fn start_one(opts: ServeOptions) -> Result<TestApp, String> {
        let output = Output::default();
        let node = launch(&opts, None, &output)?;
        Ok(TestApp::assemble(&opts, vec![node], output))
    }

    fn assemble(opts: &ServeOptions, nodes: Vec<(Child, String)>, output: Output) -> TestApp {
        let (public_key, secret_key) = match opts.bootstrap {
            Some(k) => (k.public_key.clone(), k.secret_key.clone()),
            None => {
                // give the key lines a moment if they follow the listening line
                let deadline = Instant::now() + Duration::from_secs(2);
                loop {
                    if let Some(k) = printed_keys(&output.stdout_lines()) {
                        break (k.public_key, k.secret_key);
                    }
                    if Instant::now() > deadline {
                        break (String::new(), String::new());
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        };
        let (children, addresses): (Vec<_>, Vec<_>) =
            nodes.into_iter().map(|(c, a)| (Some(c), a)).unzip();
        TestApp {
            address: addresses[0].clone(),
            public_key,
            secret_key,
            data_dir: opts.data_dir.to_path_buf(),
            output,
            client: http_client(),
            addresses,
            children,
            turn: Arc::new(AtomicUsize::new(0)),
            nats: None,
            _tmp: None,
        }
    }

    /// Every node's base URL (one outside the `api_cluster` run).
    pub fn node_addresses(&self) -> &[String] {
        &self.addresses
    }

    /// The base URL of the node whose turn it is (the `api_cluster` run
    /// spreads requests and sockets over its nodes; elsewhere the one).
    pub fn next_address(&self) -> &str {
        let i = self.turn.fetch_add(1, Ordering::Relaxed) % self.addresses.len();
        &self.addresses[i]
    }

    /// `ws://…` of the node whose turn it is.
    pub fn next_ws_base(&self) -> String {
        self.next_address().replacen("http://", "ws://", 1)
    }

    pub fn keys(&self) -> Keys {
        Keys {
            public_key: self.public_key.clone(),
            secret_key: self.secret_key.clone(),
        }
    }

    /// The first node's process id.
    pub fn pid(&self) -> u32 {
        self.children[0].as_ref().expect("child running").id()
    }

    /// SIGTERM; waits up to 15 s for the exit and returns its status
    /// (panics, after a SIGKILL, when the process does not exit in time).
    pub fn stop(&mut self) -> ExitStatus {
        self.stop_with("TERM")
    }

    /// Sends `kill -SIG` (e.g. "TERM", "INT") and waits up to 15 s for the exit.
    /// On a cluster every node gets the signal at once, and the status is
    /// the first one that is not a success (else the first node's).
    pub fn stop_with(&mut self, sig: &str) -> ExitStatus {
        let mut children: Vec<Child> = self
            .children
            .iter_mut()
            .map(|c| c.take().expect("server already stopped"))
            .collect();
        for child in &children {
            let status = Command::new("kill")
                .arg(format!("-{sig}"))
                .arg(child.id().to_string())
                .status()
                .expect("run kill");
            assert!(status.success(), "kill -{sig} failed: {status}");
        }
        let started = Instant::now();
        let mut statuses: Vec<Option<ExitStatus>> = vec![None; children.len()];
        loop {
            for (child, st) in children.iter_mut().zip(statuses.iter_mut()) {
                if st.is_none() {
                    *st = child.try_wait().expect("try_wait");
                }
            }
            if statuses.iter().all(Option::is_some) {
                let all: Vec<ExitStatus> = statuses.into_iter().flatten().collect();
                return all.iter().find(|s| !s.success()).copied().unwrap_or(all[0]);
            }
            if started.elapsed() > Duration::from_secs(15) {
                for child in &mut children {
                    let _ = child.kill();
                    let _ = child.wait();
                }
                panic!(
                    "server did not exit within 15 s of SIG{sig}; output tail:\n{}",
                    self.output.tail(30)
                );
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// SIGKILL (every node of a cluster), then wait for the exit; the first
    /// node's status.
    pub fn kill9(&mut self) -> ExitStatus {
        let statuses: Vec<ExitStatus> = self
            .children
            .iter_mut()
            .map(|c| {
                let mut child = c.take().expect("server already stopped");
                child.kill().expect("SIGKILL");
                child.wait().expect("wait")
            })
            .collect();
        statuses[0]
    }

    /// SIGKILL of one node (by index, see `node_addresses`), then wait for
    /// its exit; later requests and sockets skip it.
    pub fn kill9_node(&mut self, i: usize) -> ExitStatus {
        let mut child = self.children[i].take().expect("node already stopped");
        child.kill().expect("SIGKILL");
        let st = child.wait().expect("wait");
        if self.addresses.len() > 1 {
            self.addresses.remove(i);
            self.children.remove(i);
            self.address = self.addresses[0].clone();
        }
        st
    }

    /// The cluster's nats-server (the `api_cluster` run only).
    pub fn nats(&mut self) -> Option<&mut Nats> {
        self.nats.as_mut()
    }

    /// Time the stop took: (status, elapsed).
    pub fn stop_timed(&mut self) -> (ExitStatus, Duration) {
        let t = Instant::now();
        let st = self.stop();
        (st, t.elapsed())
    }

    // ------------------------------------------------------------ requests

    /// The URL of `path` on the node whose turn it is.
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.next_address(), path)
    }

    /// No headers at all.
    pub fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.client.request(method, self.url(path))
    }

    /// Only the public API key.
    pub fn api(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.request(method, path)
            .header("x-service-api-key", &self.public_key)
    }

    /// Admin API credentials (API key + secret key).
    pub fn admin(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.api(method, path)
            .header("x-service-secret-key", &self.secret_key)
    }

    /// User API with `x-service-user-id` (development mode).
    pub fn user(&self, method: Method, path: &str, external_id: &str) -> reqwest::RequestBuilder {
        self.api(method, path)
            .header("x-service-user-id", external_id)
    }

    /// User API with a JWT user key.
    pub fn user_jwt(&self, method: Method, path: &str, token: &str) -> reqwest::RequestBuilder {
        self.api(method, path).header("x-service-user-key", token)
    }

    /// Admin API credentials of another project (same server).
    pub fn admin_with(&self, keys: &Keys, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.request(method, path)
            .header("x-service-api-key", &keys.public_key)
            .header("x-service-secret-key", &keys.secret_key)
    }

    /// User API (user id header) with another project's API key.
    pub fn user_with(
        &self,
        keys: &Keys,
        method: Method,
        path: &str,
        external_id: &str,
    ) -> reqwest::RequestBuilder {
        self.request(method, path)
            .header("x-service-api-key", &keys.public_key)
            .header("x-service-user-id", external_id)
    }

    /// Creates a user with a unique external id (tag-prefixed); asserts 201.
    pub async fn create_user(&self, tag: &str, fields: Value) -> (String, Value) {
        let ext = new_ext(tag);
        let user = self.create_user_as(&ext, fields).await;
        (ext, user)
    }

    /// Creates the user `ext`; asserts 201 and returns the User.
    pub async fn create_user_as(&self, ext: &str, fields: Value) -> Value {
        let r = self
            .admin(PUT, &format!("{A}/users/{}", enc(ext)))
            .json(&fields)
            .go()
            .await;
        let u = r.ok(201);
        assert_eq!(u["external_id"], json!(ext), "created user: {r}");
        u
    }

    pub async fn set_security_mode(&self, on: bool) {
        let r = self
            .admin(PUT, &format!("{A}/project"))
            .json(&json!({ "security_mode": on }))
            .go()
            .await;
        assert_eq!(r.ok(200)["security_mode"], json!(on), "{r}");
    }

    /// Stores `public_pem` as the project's signing key (asserts 200).
    pub async fn put_signing_key(&self, public_pem: &str) -> Value {
        let r = self
            .admin(PUT, &format!("{A}/project/signing_key"))
            .json(&json!({ "public_key": public_pem }))
            .go()
            .await;
        r.ok(200)
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        for mut child in self.children.iter_mut().filter_map(Option::take) {
            let _ = child.kill();
            let _ = child.wait();
        }
        // the data directory (and so its database) was the server's own
        if let Some(tmp) = &self._tmp {
            pg_drop_for(tmp.path());
        }
    }
}

/// The `public_key: pk_…` / `secret_key: sk_…` pair printed on stdout, if any.
pub fn printed_keys(stdout: &[String]) -> Option<Keys> {
    let find = |label: &str, prefix: &str| {
        stdout.iter().find_map(|l| {
            let i = l.find(label)?;
            let tok = l[i + label.len()..]
                .split_whitespace()
                .next()?
                .trim_matches(|c| c == '"' || c == '\'' || c == ',');
            tok.starts_with(prefix).then(|| tok.to_string())
        })
    };
    Some(Keys {
        public_key: find("public_key: ", "pk_")?,
        secret_key: find("secret_key: ", "sk_")?,
    })
}

/// Result of a finished one-shot command such as `herald project create`.
#[derive(Debug)]
pub struct CmdOutput {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `herald project create NAME --data-dir DIR` (with a 60 s timeout).
pub fn project_create(name: &str, data_dir: &Path) -> CmdOutput {
    let mut cmd = base_command();
    cmd.arg("project")
        .arg("create")
        .arg(name)
        .arg("--data-dir")
        .arg(data_dir)
        .stdin(Stdio::null());
    with_store(&mut cmd, data_dir);
    run_with_timeout(cmd, Duration::from_secs(60))
}

pub fn run_with_timeout(mut cmd: Command, timeout: Duration) -> CmdOutput {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn herald");
    let out = Output::default();
    pump(
        child.stdout.take().unwrap(),
        Stream::Stdout,
        out.clone(),
        None,
    );
    pump(
        child.stderr.take().unwrap(),
        Stream::Stderr,
        out.clone(),
        None,
    );
    let started = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().expect("try_wait") {
            break st;
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "command {cmd:?} did not exit within {timeout:?}; output:\n{}",
                out.text()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // let the pumps drain what is left in the pipes
    std::thread::sleep(Duration::from_millis(100));
    let join = |s: Stream| {
        out.lines()
            .into_iter()
            .filter(|(st, _)| *st == s)
            .map(|(_, l)| format!("{l}\n"))
            .collect::<String>()
    };
    CmdOutput {
        status,
        stdout: join(Stream::Stdout),
        stderr: join(Stream::Stderr),
    }
}

/// Like `spawn_on`, with extra `serve` arguments; the server owns the dir.
pub fn spawn_with_dir(dir: TempDir, keys: &Keys, args: &[&str]) -> TestApp {
    let mut app = TestApp::start(ServeOptions {
        data_dir: dir.path(),
        bootstrap: Some(keys),
        args,
        env: &[],
        default_flags: true,
    })
    .unwrap_or_else(|e| panic!("{e}"));
    app._tmp = Some(dir);
    app
}

/// A server with two projects: `default` with keys A, and `other` (keys B) made
/// with the CLI before the start. The server owns the temporary data dir.
pub fn spawn_two_projects() -> (TestApp, Keys, Keys) {
    let dir = tempfile::tempdir().unwrap();
    let b = create_project_keys("other", dir.path());
    let a = Keys::random();
    let app = spawn_with_dir(dir, &a, &[]);
    (app, a, b)
}

/// Runs `project create` and asserts the exact two-line output; returns the keys.
pub fn create_project_keys(name: &str, data_dir: &Path) -> Keys {
    let out = project_create(name, data_dir);
    assert_eq!(
        out.status.code(),
        Some(0),
        "herald project create {name}: expected exit 0; {out:?}"
    );
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines.len(),
        2,
        "herald project create: expected exactly two stdout lines; {out:?}"
    );
    let pk = lines[0]
        .strip_prefix("public_key: ")
        .unwrap_or_else(|| panic!("line 1 must be `public_key: pk_…`; {out:?}"));
    let sk = lines[1]
        .strip_prefix("secret_key: ")
        .unwrap_or_else(|| panic!("line 2 must be `secret_key: sk_…`; {out:?}"));
    assert!(
        pk.starts_with("pk_") && pk.len() > 3 && !pk.contains(char::is_whitespace),
        "public key {pk:?}"
    );
    assert!(
        sk.starts_with("sk_") && sk.len() > 3 && !sk.contains(char::is_whitespace),
        "secret key {sk:?}"
    );
    Keys {
        public_key: pk.to_string(),
        secret_key: sk.to_string(),
    }
}

// ================================================================ responses

/// A received response, fully read.
pub struct Resp {
    pub method: Method,
    pub url: String,
    pub status: u16,
    pub headers: HeaderMap,
    pub text: String,
    /// Parsed body, `Value::Null` when empty or not JSON.
    pub json: Value,
}

impl std::fmt::Display for Resp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let body: String = self.text.chars().take(1500).collect();
        write!(
            f,
            "{} {} -> {} {:?} body: {}",
            self.method, self.url, self.status, self.headers, body
        )
    }
}

impl std::fmt::Debug for Resp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

#[allow(async_fn_in_trait)]
pub trait Go {
    /// Sends the request and reads the whole response (panics on transport errors).
    async fn go(self) -> Resp;
}

impl Go for reqwest::RequestBuilder {
    async fn go(self) -> Resp {
        let (client, req) = self.build_split();
        let req = req.expect("build request");
        let (method, url) = (req.method().clone(), req.url().to_string());
        let resp = client
            .execute(req)
            .await
            .unwrap_or_else(|e| panic!("{method} {url}: transport error: {e:?}"));
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let bytes = resp
            .bytes()
            .await
            .unwrap_or_else(|e| panic!("{method} {url}: reading body: {e:?}"));
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let json = serde_json::from_str(&text).unwrap_or(Value::Null);
        Resp {
            method,
            url,
            status,
            headers,
            text,
            json,
        }
    }
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    }

    /// Asserts the status (and a JSON body when the status is not 204); returns the body.
    #[track_caller]
    pub fn ok(&self, status: u16) -> Value {
        assert_eq!(self.status, status, "expected status {status}: {self}");
        if status != 204 {
            let ct = self.header("content-type").unwrap_or_default();
            assert!(
                ct.starts_with("application/json"),
                "expected a JSON content type: {self}"
            );
            assert!(!self.json.is_null(), "expected a JSON body: {self}");
        }
        self.json.clone()
    }

    /// Asserts a list response `{items: [...], page: {...}}`; returns it.
    #[track_caller]
    pub fn page(&self) -> Value {
        let body = self.ok(200);
        assert!(body["items"].is_array(), "items: expected an array: {self}");
        let page = &body["page"];
        assert!(page["limit"].is_u64(), "page.limit: {self}");
        for k in ["after", "before"] {
            assert!(
                page[k].is_null() || page[k].as_str().is_some_and(|s| !s.is_empty()),
                "page.{k}: expected null or a non-empty string: {self}"
            );
        }
        for k in ["has_more_after", "has_more_before"] {
            assert!(page[k].is_boolean(), "page.{k}: expected a boolean: {self}");
        }
        body
    }
}

// ================================================================ error assertions

/// Asserts the whole error object; returns `error.details`.
#[track_caller]
pub fn assert_error(r: &Resp, status: u16, code: &str) -> Value {
    assert_eq!(r.status, status, "expected {status} {code}: {r}");
    let ct = r.header("content-type").unwrap_or_default();
    assert!(
        ct.starts_with("application/json"),
        "error content type must be application/json: {r}"
    );
    let err = &r.json["error"];
    assert!(err.is_object(), "expected {{\"error\": {{...}}}}: {r}");
    assert_eq!(err["code"], json!(code), "error.code: {r}");
    assert_eq!(err["status"], json!(status), "error.status: {r}");
    assert_eq!(
        err["type"],
        json!(format!("https://herald.dev/errors#{code}-{status}")),
        "error.type: {r}"
    );
    assert!(
        err["message"].as_str().is_some_and(|m| !m.is_empty()),
        "error.message must be a non-empty string: {r}"
    );
    let rid = err["request_id"].as_str().unwrap_or_default();
    assert!(
        !rid.is_empty(),
        "error.request_id must be a non-empty string: {r}"
    );
    assert_eq!(
        r.header("x-request-id").as_deref(),
        Some(rid),
        "x-request-id header must equal error.request_id: {r}"
    );
    let details = &err["details"];
    assert!(details.is_object(), "error.details must be an object: {r}");
    // the contract: a 500 or 503 has empty details (a 503's wait is in `Retry-After`)
    if status == 500 || status == 503 {
        assert_eq!(details, &json!({}), "details of a {status}: {r}");
    }
    details.clone()
}

/// 401 unauthenticated with the given `auth` and `reason`.
#[track_caller]
pub fn assert_unauth(r: &Resp, auth: &str, reason: &str) {
    let d = assert_error(r, 401, "unauthenticated");
    assert_eq!(d["auth"], json!(auth), "details.auth: {r}");
    assert_eq!(d["reason"], json!(reason), "details.reason: {r}");
}

/// 400 bad_request reason invalid_param naming `param`.
#[track_caller]
pub fn assert_invalid_param(r: &Resp, param: &str) {
    let d = assert_error(r, 400, "bad_request");
    assert_eq!(d["reason"], json!("invalid_param"), "details.reason: {r}");
    assert_eq!(d["param"], json!(param), "details.param: {r}");
}

/// 400 bad_request reason invalid_json.
#[track_caller]
pub fn assert_invalid_json(r: &Resp) {
    let d = assert_error(r, 400, "bad_request");
    assert_eq!(d["reason"], json!("invalid_json"), "details.reason: {r}");
}

/// 404 not_found naming `resource` and `id`.
#[track_caller]
pub fn assert_not_found(r: &Resp, resource: &str, id: &str) {
    let d = assert_error(r, 404, "not_found");
    assert_eq!(d["resource"], json!(resource), "details.resource: {r}");
    assert_eq!(d["id"], json!(id), "details.id: {r}");
}

/// Each (field, reason) pair must appear in `details.fields`, whose entries
/// must all be `{field, reason, message}` with string values.
#[track_caller]
pub fn assert_fields(details: &Value, want: &[(&str, &str)]) {
    let fields = details["fields"]
        .as_array()
        .unwrap_or_else(|| panic!("details.fields must be an array: {details}"));
    assert!(!fields.is_empty(), "details.fields must not be empty");
    for f in fields {
        for k in ["field", "reason", "message"] {
            assert!(
                f[k].as_str().is_some_and(|s| !s.is_empty()),
                "details.fields entries need a non-empty string {k}: {f}"
            );
        }
        let reason = f["reason"].as_str().unwrap();
        assert!(
            [
                "required",
                "format",
                "inclusion",
                "exclusion",
                "length",
                "number",
                "unique"
            ]
            .contains(&reason),
            "unknown validation reason {reason:?} in {f}"
        );
    }
    for (field, reason) in want {
        assert!(
            fields
                .iter()
                .any(|f| f["field"] == json!(field) && f["reason"] == json!(reason)),
            "details.fields: expected {{field: {field:?}, reason: {reason:?}}}, got {details}"
        );
    }
}

/// 422 validation_failed listing every pair of `want`; returns details.
#[track_caller]
pub fn assert_validation(r: &Resp, want: &[(&str, &str)]) -> Value {
    let d = assert_error(r, 422, "validation_failed");
    assert_fields(&d, want);
    d
}

/// True when `s` is an RFC 3339 UTC timestamp with a `Z` suffix.
pub fn is_timestamp(v: &Value) -> bool {
    v.as_str().is_some_and(|s| {
        s.ends_with('Z') && chrono::DateTime::parse_from_rfc3339(s).is_ok() && s.contains('T')
    })
}

/// Parses an RFC 3339 timestamp (panics otherwise).
#[track_caller]
pub fn parse_ts(v: &Value) -> chrono::DateTime<chrono::FixedOffset> {
    chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap_or_default())
        .unwrap_or_else(|e| panic!("not an RFC 3339 timestamp: {v} ({e})"))
}

/// True when `v` is a UUID v7 string.
pub fn is_uuid_v7(v: &Value) -> bool {
    v.as_str()
        .and_then(|s| uuid::Uuid::parse_str(s).ok())
        .is_some_and(|u| u.get_version_num() == 7)
}

pub fn all_true() -> Value {
    channel_types(&[])
}

/// All six channel types true except those listed false.
pub fn channel_types(off: &[&str]) -> Value {
    let mut m = serde_json::Map::new();
    for t in CHANNEL_TYPES {
        m.insert(t.to_string(), json!(!off.contains(&t)));
    }
    Value::Object(m)
}

// ================================================================ JWTs

/// An RSA key pair as PEM strings.
pub struct RsaPair {
    /// PKCS#8 `PRIVATE KEY`.
    pub private_pem: String,
    /// SPKI `PUBLIC KEY`.
    pub public_pem: String,
    /// PKCS#1 `RSA PUBLIC KEY`.
    pub public_pkcs1_pem: String,
}

impl RsaPair {
    pub fn generate(bits: usize) -> RsaPair {
        use rsa::pkcs1::EncodeRsaPublicKey;
        use rsa::pkcs8::{EncodePrivateKey, EncodePublicKey, LineEnding};
        let key = rsa::RsaPrivateKey::new(&mut rand::thread_rng(), bits).expect("rsa keygen");
        let public = key.to_public_key();
        RsaPair {
            private_pem: key.to_pkcs8_pem(LineEnding::LF).unwrap().to_string(),
            public_pem: public.to_public_key_pem(LineEnding::LF).unwrap(),
            public_pkcs1_pem: public.to_pkcs1_pem(LineEnding::LF).unwrap(),
        }
    }

    /// RS256 token with the given claims.
    pub fn sign(&self, claims: &Value) -> String {
        sign_with(&self.private_pem, jsonwebtoken::Algorithm::RS256, claims)
    }

    /// RS256 token `{sub, iat, exp: now + 300}`.
    pub fn token(&self, sub: &str) -> String {
        self.sign(&json!({"sub": sub, "iat": now_secs(), "exp": now_secs() + 300}))
    }
}

/// Two 2048-bit key pairs generated once per test binary.
pub fn key_a() -> &'static RsaPair {
    static K: OnceLock<RsaPair> = OnceLock::new();
    K.get_or_init(|| RsaPair::generate(2048))
}

pub fn key_b() -> &'static RsaPair {
    static K: OnceLock<RsaPair> = OnceLock::new();
    K.get_or_init(|| RsaPair::generate(2048))
}

/// Signs `claims` with an RSA private key PEM (PKCS#1 or PKCS#8) and `alg`.
pub fn sign_with(private_pem: &str, alg: jsonwebtoken::Algorithm, claims: &Value) -> String {
    let key = jsonwebtoken::EncodingKey::from_rsa_pem(private_pem.as_bytes()).expect("rsa pem");
    jsonwebtoken::encode(&jsonwebtoken::Header::new(alg), claims, &key).expect("sign jwt")
}

/// HS256 token signed with `secret`.
pub fn hs256_token(claims: &Value, secret: &[u8]) -> String {
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        claims,
        &jsonwebtoken::EncodingKey::from_secret(secret),
    )
    .expect("sign hs256")
}

pub fn b64url(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// An unsigned token (`alg: none`, empty signature).
pub fn none_token(claims: &Value) -> String {
    format!(
        "{}.{}.",
        b64url(br#"{"alg":"none","typ":"JWT"}"#),
        b64url(claims.to_string().as_bytes())
    )
}

/// Replaces the payload of `token` by `claims`, keeping header and signature.
pub fn with_payload(token: &str, claims: &Value) -> String {
    let parts: Vec<&str> = token.split('.').collect();
    assert_eq!(parts.len(), 3);
    format!(
        "{}.{}.{}",
        parts[0],
        b64url(claims.to_string().as_bytes()),
        parts[2]
    )
}
