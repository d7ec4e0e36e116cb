//! The machine's ceilings, measured in the same run as Herald so its results are
//! ratios that hold on a noisy machine:
//!
//! - storage: raw sled 0.34 batched inserts of delivery-sized records (600 bytes
//!   under 32-byte keys), one `apply_batch` and one flush per batch of 1,000 (group
//!   commit, as Herald's durable writes);
//! - PostgreSQL (the cluster leg, `crate::cluster`): the same records as rows of
//!   a table (32-byte `bytea` key, 600-byte `bytea` value) in a fresh database,
//!   1,000 rows per multi-row `INSERT … SELECT FROM UNNEST` and a commit per
//!   batch (synchronous commit, the server's default, as Herald's writes);
//! - HTTP: a minimal actix-web handler answering `{"ok":true}`, in this process on
//!   127.0.0.1:0 with as many workers as Herald (one per core), driven by the same
//!   load client as Herald's REST scenario.

use crate::load::{self, LoadResult, MakeRequest};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub const RECORD_BYTES: usize = 600;
pub const BATCH: usize = 1000;

pub struct SledCeiling {
    pub inserts: usize,
    pub seconds: f64,
    pub inserts_per_s: f64,
    pub batch_p99_ms: f64,
}

impl SledCeiling {
    pub fn json(&self) -> Value {
        json!({
            "inserts": self.inserts, "record_bytes": RECORD_BYTES, "batch": BATCH,
            "flush_per_batch": true, "seconds": load::num(self.seconds),
            "inserts_per_s": load::num(self.inserts_per_s),
            "batch_p99_ms": load::num(self.batch_p99_ms),
        })
    }
}

/// A delivery-like JSON record padded to RECORD_BYTES.
fn record() -> Vec<u8> {
    let mut value = br#"{"id":"0190f3c2-7b1e-7a44-9c1d-2f6e8b0a4c11","status":"sent","channel_type":"in_app","data":{"body":"Hello "#.to_vec();
    while value.len() < RECORD_BYTES - 3 {
        value.push(b'x');
    }
    value.extend_from_slice(br#""}}"#);
    value
}

/// Record `i`'s 32-byte key: the project, then a time-ordered id like UUIDv7.
fn key(project: &[u8; 16], i: usize) -> [u8; 32] {
    let mut key = [0u8; 32];
    key[..16].copy_from_slice(project);
    key[16..].copy_from_slice(&((i as u128) << 64 | rand::random::<u64>() as u128).to_be_bytes());
    key
}

/// Inserts `n` records into a fresh sled db in a temp dir.
pub fn sled_inserts(n: usize) -> SledCeiling {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = sled::Config::new()
        .path(dir.path())
        .open()
        .expect("open sled");
    let tree = db.open_tree("deliveries").expect("tree");
    let project = rand::random::<u128>().to_be_bytes();
    let mut value = record();
    let mut batch_ms = Vec::with_capacity(n / BATCH + 1);
    let t0 = Instant::now();
    let mut i = 0usize;
    while i < n {
        let tb = Instant::now();
        let mut b = sled::Batch::default();
        for _ in 0..BATCH.min(n - i) {
            let key = key(&project, i);
            // Vary the record a little so values are not all identical.
            value[20] = b'0' + (i % 10) as u8;
            b.insert(&key[..], &value[..]);
            i += 1;
        }
        tree.apply_batch(b).expect("apply batch");
        db.flush().expect("flush");
        batch_ms.push(tb.elapsed().as_secs_f64() * 1000.0);
    }
    let seconds = t0.elapsed().as_secs_f64();
    let stats = load::Stats::of(&mut batch_ms);
    SledCeiling {
        inserts: n,
        seconds,
        inserts_per_s: n as f64 / seconds,
        batch_p99_ms: stats.p99,
    }
}

pub struct PgCeiling {
    pub rows: usize,
    pub seconds: f64,
    pub rows_per_s: f64,
    pub batch_p99_ms: f64,
    pub server_version: String,
}

impl PgCeiling {
    pub fn json(&self) -> Value {
        json!({
            "rows": self.rows, "row_bytes": RECORD_BYTES, "batch": BATCH,
            "commit_per_batch": true, "statement": "INSERT ... SELECT FROM UNNEST($1::bytea[], $2::bytea[])",
            "seconds": load::num(self.seconds),
            "rows_per_s": load::num(self.rows_per_s),
            "batch_p99_ms": load::num(self.batch_p99_ms),
            "server_version": self.server_version,
        })
    }
}

/// Inserts `n` rows into a table of the database at `url` (fresh, made by
/// the caller), over one connection: a transaction of one multi-row INSERT
/// per batch of BATCH rows.
pub async fn pg_inserts(url: &str, n: usize) -> Result<PgCeiling, String> {
    use sqlx::Connection;
    let e = |what: &'static str| move |err: sqlx::Error| format!("{what}: {err}");
    let mut c = sqlx::PgConnection::connect(url)
        .await
        .map_err(e("connect"))?;
    let server_version: String = sqlx::query_scalar("SHOW server_version")
        .fetch_one(&mut c)
        .await
        .map_err(e("server_version"))?;
    sqlx::raw_sql("CREATE TABLE ceiling (id bytea PRIMARY KEY, body bytea NOT NULL)")
        .execute(&mut c)
        .await
        .map_err(e("create table"))?;
    let project = rand::random::<u128>().to_be_bytes();
    let mut value = record();
    let mut batch_ms = Vec::with_capacity(n / BATCH + 1);
    let t0 = Instant::now();
    let mut i = 0usize;
    while i < n {
        // The batch is built inside the timed part, as sled's is.
        let tb = Instant::now();
        let m = BATCH.min(n - i);
        let mut keys: Vec<Vec<u8>> = Vec::with_capacity(m);
        let mut values: Vec<Vec<u8>> = Vec::with_capacity(m);
        for _ in 0..m {
            keys.push(key(&project, i).to_vec());
            value[20] = b'0' + (i % 10) as u8;
            values.push(value.clone());
            i += 1;
        }
        let mut tx = c.begin().await.map_err(e("begin"))?;
        sqlx::query(
            "INSERT INTO ceiling (id, body) SELECT * FROM UNNEST($1::bytea[], $2::bytea[])",
        )
        .bind(&keys)
        .bind(&values)
        .execute(&mut *tx)
        .await
        .map_err(e("insert"))?;
        tx.commit().await.map_err(e("commit"))?;
        batch_ms.push(tb.elapsed().as_secs_f64() * 1000.0);
    }
    let seconds = t0.elapsed().as_secs_f64();
    let _ = c.close().await;
    let stats = load::Stats::of(&mut batch_ms);
    Ok(PgCeiling {
        rows: n,
        seconds,
        rows_per_s: n as f64 / seconds,
        batch_p99_ms: stats.p99,
        server_version,
    })
}

/// The minimal actix-web JSON handler under the load client.
pub async fn actix_json(conns: usize, warmup: Duration, duration: Duration) -> LoadResult {
    let (tx, rx) = std::sync::mpsc::channel();
    let thread = std::thread::Builder::new()
        .name("actix-ceiling".into())
        .spawn(move || {
            actix_web::rt::System::new().block_on(async move {
                use actix_web::{web, App, HttpResponse, HttpServer};
                let server = HttpServer::new(|| {
                    App::new().route(
                        "/ok",
                        web::get().to(|| async { HttpResponse::Ok().json(json!({"ok": true})) }),
                    )
                })
                .workers(std::thread::available_parallelism().map_or(2, |n| n.get()))
                .disable_signals()
                .bind("127.0.0.1:0")
                .expect("bind actix");
                let addr = server.addrs()[0];
                let server = server.run();
                tx.send((addr, server.handle())).expect("send addr");
                let _ = server.await;
            })
        })
        .expect("actix thread");
    let (addr, handle) = rx.recv().expect("actix ceiling started");
    let make: MakeRequest = Arc::new(|_, _| load::request("GET", "/ok", &[], None));
    let r = load::drive(
        addr,
        load::ServerCpu::InProcess,
        conns,
        warmup,
        duration,
        make,
    )
    .await;
    handle.stop(true).await;
    let _ = tokio::task::spawn_blocking(move || thread.join()).await;
    r
}
