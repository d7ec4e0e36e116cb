//! The machine's ceilings, measured in the same run as Herald so its results are
//! ratios that hold on a noisy machine:
//!
//! - storage: raw sled 0.34 batched inserts of delivery-sized records (600 bytes
//!   under 32-byte keys), one `apply_batch` and one flush per batch of 1,000 (group
//!   commit, as Herald's durable writes);
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

/// Inserts `n` records into a fresh sled db in a temp dir.
pub fn sled_inserts(n: usize) -> SledCeiling {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = sled::Config::new()
        .path(dir.path())
        .open()
        .expect("open sled");
    let tree = db.open_tree("deliveries").expect("tree");
    let project = rand::random::<u128>().to_be_bytes();
    // A delivery-like JSON record padded to RECORD_BYTES.
    let mut value = br#"{"id":"0190f3c2-7b1e-7a44-9c1d-2f6e8b0a4c11","status":"sent","channel_type":"in_app","data":{"body":"Hello "#.to_vec();
    while value.len() < RECORD_BYTES - 3 {
        value.push(b'x');
    }
    value.extend_from_slice(br#""}}"#);
    let mut batch_ms = Vec::with_capacity(n / BATCH + 1);
    let t0 = Instant::now();
    let mut i = 0usize;
    while i < n {
        let tb = Instant::now();
        let mut b = sled::Batch::default();
        for _ in 0..BATCH.min(n - i) {
            let mut key = [0u8; 32];
            key[..16].copy_from_slice(&project);
            // Time-ordered ids, like UUIDv7.
            key[16..].copy_from_slice(
                &((i as u128) << 64 | rand::random::<u64>() as u128).to_be_bytes(),
            );
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
