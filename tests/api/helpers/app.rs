//! The running server (`TestApp`): starting one node or a cluster, stopping,
//! killing and restarting it.

use super::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tempfile::TempDir;

pub(crate) const START_TIMEOUT: Duration = Duration::from_secs(60);

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

pub(crate) fn base_command() -> Command {
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
    opts: &ServeOptions, bus: Option<&str>, output: &Output,
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
        data_dir: &Path, keys: &Keys, n: usize, args: &[&str], env: &[(&str, &str)],
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
