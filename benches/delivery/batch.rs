//! The `batch` scenario: single-recipient runs spread over a set of
//! recipients through a flow with a batch step (1 s window) then an in_app
//! step, as a product digesting a stream of events per user would. Reports
//! runs/s accepted, digests (in-app deliveries) per second from the first
//! run to the last digest, how many runs each digest carried, and the
//! server's resident memory with one open batch per recipient.

use crate::herald::{parallel, Server};
use crate::load::num;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The sizes: `(runs, recipients)`.
pub fn sizes(smoke: bool) -> (usize, usize) {
    if smoke {
        (200, 10)
    } else {
        (100_000, 1_000)
    }
}

pub async fn batch(runs: usize, recipients: usize) -> Value {
    let srv = Server::start();
    let api = srv.api();
    let ch = api.in_app_channel().await;
    api.flow(
        "digest",
        json!([
            {"type": "batch", "window": "1s"},
            {"type": "channel", "channel_id": ch,
             "template": {"body": "{{ batch.count }} new events"}}
        ]),
    )
    .await;
    api.users("b", recipients).await;
    let rss_idle = srv.rss_kib();
    let errors = Arc::new(AtomicU64::new(0));
    let run = |api: crate::herald::Api, errors: Arc<AtomicU64>, recipients: usize| {
        move |i: usize| {
            let (api, errors) = (api.clone(), errors.clone());
            async move {
                let body = json!({"recipients": [format!("b-{}", i % recipients)],
                    "data": {"i": i}});
                let (s, _, _) = api.run("digest", body).await;
                if s != 202 {
                    errors.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    };
    let t0 = Instant::now();
    // One run per recipient: a batch open for each.
    parallel(recipients, 64, run(api.clone(), errors.clone(), recipients)).await;
    let rss_open = srv.rss_kib();
    let open_s = t0.elapsed().as_secs_f64();
    let rest = runs.saturating_sub(recipients);
    let api2 = api.clone();
    let errors2 = errors.clone();
    parallel(rest, 64, move |i| {
        run(api2.clone(), errors2.clone(), recipients)(i + recipients)
    })
    .await;
    let accepted_s = t0.elapsed().as_secs_f64();
    let idle = api.wait_idle(Duration::from_secs(600)).await;
    let total_s = t0.elapsed().as_secs_f64();
    // The digests: every in-app delivery (each carries a batch).
    let mut digests = 0u64;
    let mut after: Option<String> = None;
    for _ in 0..10_000 {
        let mut path = "/admin/v1/deliveries?channel_type=in_app&limit=1000".to_string();
        if let Some(a) = &after {
            path.push_str(&format!("&after={a}"));
        }
        let (s, v) = api.admin(reqwest::Method::GET, &path, None).await;
        if s != 200 {
            break;
        }
        digests += v["items"].as_array().map_or(0, |a| a.len()) as u64;
        match v["page"]["after"].as_str() {
            Some(a) if v["page"]["has_more_after"] == true => after = Some(a.to_string()),
            _ => break,
        }
    }
    let errors = errors.load(Ordering::Relaxed);
    json!({
        "scenario": "batch",
        "runs": runs,
        "recipients": recipients,
        "errors": errors,
        "processed": idle && errors == 0,
        "runs_per_s": num(runs as f64 / accepted_s),
        "digests": digests,
        "digests_per_s": num(digests as f64 / total_s),
        "runs_per_digest": num(runs as f64 / digests.max(1) as f64),
        "total_ms": num(total_s * 1000.0),
        "open_batches": recipients,
        "open_batches_s": num(open_s),
        "server_rss_idle_mib": num(rss_idle as f64 / 1024.0),
        "server_rss_open_batches_mib": num(rss_open as f64 / 1024.0),
    })
}
