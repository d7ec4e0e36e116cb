//! The cluster leg (`--cluster N`, and a tiny one in `--smoke`): the
//! PostgreSQL ceiling, then live fan-out and the pipeline against N release
//! nodes sharing one fresh PostgreSQL database and a nats-server this harness
//! starts, beside the single-node sled figures of the same run.
//!
//! Everything the leg starts is owned by a value whose `Drop` stops it (the
//! nodes, then the bus, then the database), so an error or a panic leaves
//! nothing behind; databases of bench processes that died without dropping
//! theirs (`herald_bench_<pid>_…`) are dropped at the next run's start.
//!
//! The server is `HERALD_BENCH_PG` (a `postgres://USER@HOST:PORT` URL without a
//! database), else `postgres://postgres@127.0.0.1:5432`; nats-server is
//! looked for on PATH, then in /usr/sbin and /usr/bin.

use crate::herald::Server;
use serde_json::{json, Value};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The PostgreSQL server's URL, without a database.
pub fn pg_server() -> String {
    std::env::var("HERALD_BENCH_PG")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432".into())
        .trim_end_matches('/')
        .to_string()
}

/// Runs `sql` on the server's `postgres` database (`pg_at`).
fn pg_admin(sql: &str) -> Result<Vec<String>, String> {
    pg_at(&format!("{}/postgres", pg_server()), sql)
}

/// Runs `sql` on the database at `url`, on a thread of its own (callable
/// from `Drop` and from async code alike); returns the first column of the
/// last statement's rows.
fn pg_at(url: &str, sql: &str) -> Result<Vec<String>, String> {
    let (url, sql) = (url.to_string(), sql.to_string());
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        rt.block_on(async move {
            use sqlx::{Connection, Row};
            let mut c =
                tokio::time::timeout(Duration::from_secs(5), sqlx::PgConnection::connect(&url))
                    .await
                    .map_err(|_| format!("{url}: no answer within 5 s"))?
                    .map_err(|e| format!("{url}: {e}"))?;
            let rows = sqlx::raw_sql(&sql)
                .fetch_all(&mut c)
                .await
                .map_err(|e| format!("{sql}: {e}"))?;
            let _ = c.close().await;
            Ok(rows
                .iter()
                .filter_map(|r| r.try_get::<String, _>(0).ok())
                .collect())
        })
    })
    .join()
    .map_err(|_| "the database thread panicked".to_string())?
}

/// A fresh database `herald_bench_<pid>_<hex>`, dropped with this value.
pub struct Database {
    pub url: String,
    name: String,
}

impl Database {
    pub fn create() -> Result<Database, String> {
        // Leftovers of bench processes that are gone (killed before dropping).
        let names = pg_admin(
            "SELECT datname::text FROM pg_database WHERE datname LIKE 'herald\\_bench\\_%'",
        )?;
        for n in names {
            let pid = n.split('_').nth(2).and_then(|p| p.parse::<u32>().ok());
            if pid.is_some_and(|p| !std::path::Path::new(&format!("/proc/{p}")).exists()) {
                let _ = pg_admin(&format!("DROP DATABASE IF EXISTS {n} WITH (FORCE)"));
            }
        }
        let name = format!(
            "herald_bench_{}_{:016x}",
            std::process::id(),
            rand::random::<u64>()
        );
        pg_admin(&format!("CREATE DATABASE {name}"))?;
        Ok(Database {
            url: format!("{}/{name}", pg_server()),
            name,
        })
    }
}

impl Database {
    /// Runs `sql` in this database: the first column of the last
    /// statement's rows, as text.
    pub fn query(&self, sql: &str) -> Result<Vec<String>, String> {
        pg_at(&self.url, sql)
    }

    /// The database's size on disk (0 when it cannot be read).
    pub fn bytes(&self) -> u64 {
        pg_admin(&format!("SELECT pg_database_size('{}')::text", self.name))
            .ok()
            .and_then(|r| r.first().and_then(|s| s.parse().ok()))
            .unwrap_or(0)
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        if let Err(e) = pg_admin(&format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            self.name
        )) {
            eprintln!("cluster: could not drop database {}: {e}", self.name);
        }
    }
}

fn nats_binary() -> Option<PathBuf> {
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

/// `nats-server --version`'s answer (`nats-server: v2.x.y`).
fn nats_version(bin: &std::path::Path) -> String {
    Command::new(bin)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// A nats-server of this run's own on a free port of 127.0.0.1, killed with
/// this value.
pub struct Nats {
    child: Child,
    pub url: String,
}

impl Nats {
    pub fn start() -> Result<Nats, String> {
        let bin =
            nats_binary().ok_or("nats-server is not installed (Debian package nats-server)")?;
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("a free port: {e}"))?
            .port();
        let child = Command::new(&bin)
            .args(["-a", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
        let nats = Nats {
            child,
            url: format!("nats://127.0.0.1:{port}"),
        };
        let t0 = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if t0.elapsed() > Duration::from_secs(10) {
                return Err(format!("nats-server did not listen on {port} within 10 s"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(nats)
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// N nodes on one fresh database and one bus. Fields drop in order: the
/// nodes (SIGTERM, they give their leases back), the bus, the database.
pub struct Cluster {
    pub nodes: Vec<Server>,
    _nats: Nats,
    _db: Database,
}

impl Cluster {
    /// Starts the nodes one after another (the first migrates the schema and
    /// makes the project from the shared bootstrap keys).
    pub fn start(n: usize) -> Result<Cluster, String> {
        let nats = Nats::start()?;
        let db = Database::create()?;
        let pk = format!("pk_bench_{:032x}", rand::random::<u128>());
        let sk = format!("sk_bench_{:032x}", rand::random::<u128>());
        let nodes = (0..n)
            .map(|_| Server::start_node(&db.url, &nats.url, &pk, &sk))
            .collect();
        Ok(Cluster {
            nodes,
            _nats: nats,
            _db: db,
        })
    }
}

/// Whether the PostgreSQL server answers (why not, when it does not).
pub fn pg_reachable() -> Result<(), String> {
    pg_admin("SELECT 'ok'")
        .map(drop)
        .map_err(|e| format!("PostgreSQL not reachable ({e})"))
}

/// Why the cluster leg cannot run here, if it cannot: no PostgreSQL server
/// answering, or no nats-server.
pub fn unavailable() -> Option<String> {
    if let Err(e) = pg_reachable() {
        return Some(e);
    }
    if nats_binary().is_none() {
        return Some("nats-server is not installed (Debian package nats-server)".into());
    }
    None
}

/// The leg: the PostgreSQL ceiling (`pg_rows` rows), then each live size and
/// each pipeline size on a fresh cluster of `n` nodes. Returns the report's
/// `cluster` section (with `skipped` when it could not run).
pub async fn run(n: usize, pg_rows: usize, live: &[usize], pipeline: &[usize]) -> Value {
    if let Some(why) = unavailable() {
        println!("cluster: skipped, {why}");
        return json!({"nodes": n, "skipped": why});
    }
    let nats_version = nats_binary().map(|b| nats_version(&b)).unwrap_or_default();
    let mut out = json!({"nodes": n, "store": "postgresql", "bus": "nats",
                         "nats_version": nats_version, "live": [], "pipeline": []});
    let t = Instant::now();
    let ceiling = match Database::create() {
        Ok(db) => crate::ceilings::pg_inserts(&db.url, pg_rows).await,
        Err(e) => Err(e),
    };
    match ceiling {
        Ok(c) => {
            println!(
                "ceiling   postgres  {:>10.0} rows/s ({} x {} B, batches of {} in one INSERT … UNNEST, a commit each; PostgreSQL {})",
                c.rows_per_s,
                c.rows,
                crate::ceilings::RECORD_BYTES,
                crate::ceilings::BATCH,
                c.server_version
            );
            out["pg_ceiling"] = c.json();
        }
        Err(e) => {
            println!("ceiling   postgres  failed: {e}");
            out["pg_ceiling_error"] = json!(e);
        }
    }
    eprintln!("  (cluster pg ceiling: {:.1} s)", t.elapsed().as_secs_f64());
    for &c in live {
        let t = Instant::now();
        let v = match Cluster::start(n) {
            Ok(cl) => crate::scenarios::live_on(&cl.nodes, c).await,
            Err(e) => json!({"scenario": "live", "nodes": n, "sockets": c, "error": e}),
        };
        println!(
            "cluster   live      nodes={n} sockets={:>6}  received={:>6}  p50={:>7.1} ms  p99={:>7.1} ms  max={:>7.1} ms  events/s={:>8.0}  server cpu/event={:>5.1} µs",
            c,
            v["received"],
            v["p50_ms"].as_f64().unwrap_or(f64::NAN),
            v["p99_ms"].as_f64().unwrap_or(f64::NAN),
            v["max_ms"].as_f64().unwrap_or(f64::NAN),
            v["events_per_s"].as_f64().unwrap_or(0.0),
            v["server_cpu_us_per_event"].as_f64().unwrap_or(f64::NAN)
        );
        if v.get("bus_dropped").is_some() {
            println!(
                "cluster   live      nodes={n} sockets={:>6}  opened in {:.1} s  bus dropped={}  recoveries={}  recovered frames={}  KiB/socket (worst node)={:.1}",
                c,
                v["open_s"].as_f64().unwrap_or(f64::NAN),
                v["bus_dropped"],
                v["bus_recoveries"],
                v["bus_recovered_frames"],
                v["rss_per_socket_kib"].as_f64().unwrap_or(f64::NAN)
            );
        }
        out["live"].as_array_mut().expect("live").push(v);
        eprintln!("  (cluster live {c}: {:.1} s)", t.elapsed().as_secs_f64());
    }
    for &r in pipeline {
        let t = Instant::now();
        let v = match Cluster::start(n) {
            Ok(cl) => crate::scenarios::pipeline_on(&cl.nodes, r, 0, false).await,
            Err(e) => json!({"scenario": "pipeline", "nodes": n, "recipients": r, "error": e}),
        };
        println!(
            "cluster   pipeline  nodes={n} recipients={:>6}  202={:>7.1} ms  total={:>8.0} ms  deliveries/s={:>8.0}  p99={:>7.1} ms  processed={}",
            r,
            v["accept_ms"].as_f64().unwrap_or(f64::NAN),
            v["total_ms"].as_f64().unwrap_or(f64::NAN),
            v["deliveries_per_s"].as_f64().unwrap_or(0.0),
            v["p99_ms"].as_f64().unwrap_or(f64::NAN),
            v["processed"]
        );
        out["pipeline"].as_array_mut().expect("pipeline").push(v);
        eprintln!(
            "  (cluster pipeline {r}: {:.1} s)",
            t.elapsed().as_secs_f64()
        );
    }
    out
}
