//! Which backend and topology a run of the suite uses (sled, PostgreSQL, a
//! cluster: the test binary's name decides) and the services it needs: the
//! PostgreSQL databases and the nats-server.

use super::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

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
pub(crate) fn pg_drop_for(dir: &Path) {
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
