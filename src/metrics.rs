//! Prometheus metrics (docs/API.md §14): the recorder, the `/metrics` handler and
//! the HTTP middleware that counts requests by route pattern and status. The
//! engine records its own (deliveries, retries, queue depth, run-to-delivery
//! latency) through the same `metrics` facade.

use crate::openapi::{Content, Op};
use crate::routes::endpoint::{Endpoint, Serve};
use crate::state::State;
use actix_web::body::BoxBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::HttpResponse;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::sync::OnceLock;
use std::time::Instant;

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Installs the process-wide recorder (once).
pub fn install() {
    HANDLE.get_or_init(|| {
        let latency = [
            0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
            30.0,
        ];
        let builder = PrometheusBuilder::new()
            .set_buckets_for_metric(
                Matcher::Full("herald_http_request_duration_seconds".into()),
                &latency,
            )
            .and_then(|b| {
                b.set_buckets_for_metric(
                    Matcher::Full("herald_flow_run_delivery_seconds".into()),
                    &latency,
                )
            })
            .expect("valid buckets");
        builder
            .install_recorder()
            .expect("install the metrics recorder")
    });
    describe();
    // Present from the start, so dashboards see 0 rather than nothing.
    metrics::gauge!("herald_websocket_connections").set(0.0);
}

fn describe() {
    metrics::describe_counter!(
        "herald_http_requests_total",
        "HTTP requests by route pattern, method and status"
    );
    metrics::describe_histogram!(
        "herald_http_request_duration_seconds",
        "HTTP request latency"
    );
    metrics::describe_counter!(
        "herald_deliveries_total",
        "Deliveries that reached a final status, by channel type and status"
    );
    metrics::describe_counter!(
        "herald_feedback_reports_total",
        "Provider delivery-feedback reports by outcome: applied, duplicate, ignored (the delivery's status does not take it), unknown (no message of the channel's project)"
    );
    metrics::describe_counter!(
        "herald_delivery_retries_total",
        "Delivery attempts that will be retried, by channel type"
    );
    metrics::describe_gauge!(
        "herald_delivery_queue_depth",
        "Deliveries waiting or in flight, by channel type"
    );
    metrics::describe_gauge!("herald_websocket_connections", "Open live-feed WebSockets");
    metrics::describe_counter!(
        "herald_retention_purged_total",
        "Records the retention purge removed, by kind (notifications, deliveries, feed_entries, events, runs)"
    );
    metrics::describe_counter!(
        "herald_retention_reclaimed_bytes_total",
        "Bytes of keys and values the retention purge removed (an estimate of the space reclaimed)"
    );
    metrics::describe_gauge!(
        "herald_retention_oldest_record_age_seconds",
        "Age of the oldest notification kept, all projects, as of the last purge pass"
    );
    metrics::describe_gauge!("herald_erasures_running", "User erasures not yet complete");
    metrics::describe_gauge!(
        "herald_project_usage_bytes",
        "Per project (label project: its id), the estimated bytes of its live records (GET /admin/v1/project usage.bytes), read at each scrape"
    );
    metrics::describe_gauge!(
        "herald_project_quota_bytes",
        "Per project (label project: its id), its storage quota in force; 0: none"
    );
    metrics::describe_gauge!(
        "herald_actors",
        "Actors running, by kind: flow_run (runs with work left), user (users with a live feed or recent feed activity)"
    );
    metrics::describe_gauge!(
        "herald_allocator_bytes",
        "The memory allocator's figures, by kind: allocated (held by the process's data), active, resident (pages the allocator has in memory), retained (address space kept for reuse)"
    );
    metrics::describe_gauge!(
        "process_resident_memory_bytes",
        "Resident memory of the process (RSS)"
    );
    metrics::describe_histogram!(
        "herald_flow_run_delivery_seconds",
        "Time from a run's acceptance to a delivery being sent"
    );
    // PostgreSQL store only.
    metrics::describe_gauge!(
        "herald_pg_up",
        "1 while the database answers its probe, else 0"
    );
    metrics::describe_gauge!(
        "herald_pg_pool_connections",
        "Connections the PostgreSQL pool holds (busy and idle)"
    );
    metrics::describe_gauge!(
        "herald_pg_pool_idle_connections",
        "Idle connections in the PostgreSQL pool"
    );
    metrics::describe_gauge!(
        "herald_pg_pool_max_connections",
        "The PostgreSQL pool's maximum size"
    );
    metrics::describe_counter!(
        "herald_pg_pool_acquire_waits_total",
        "Transactions that found no idle connection and waited for one"
    );
    metrics::describe_counter!(
        "herald_pg_pool_acquire_timeouts_total",
        "Waits for a connection that timed out (the request answered 503)"
    );
    // Cluster nodes only (--bus).
    metrics::describe_gauge!(
        "herald_bus_connected",
        "1 while the cluster bus is connected, else 0"
    );
    metrics::describe_counter!(
        "herald_bus_published_total",
        "Messages this node published on the cluster bus"
    );
    metrics::describe_counter!(
        "herald_bus_received_total",
        "Messages this node received from the cluster bus"
    );
    metrics::describe_counter!(
        "herald_bus_dropped_total",
        "Messages this node could not publish (bus down or its queue full); receivers recover them from the store"
    );
    metrics::describe_counter!(
        "herald_bus_reconnects_total",
        "Times the bus connection came back after it was lost"
    );
    metrics::describe_counter!(
        "herald_bus_recoveries_total",
        "Times a live feed read frames the bus did not bring from the event log"
    );
    metrics::describe_counter!(
        "herald_bus_recovered_frames_total",
        "Live-feed frames read from the event log because the bus did not bring them"
    );
}

/// The process's memory, read at each scrape: its resident set (from
/// `/proc/self/status`), and the allocator's view of it, so a growing RSS can
/// be told apart between data the process holds (`allocated`), pages the
/// allocator keeps for reuse (`resident` minus `allocated`) and memory
/// outside the allocator (RSS minus `resident`: the binary, thread stacks).
fn sample_memory() {
    use tikv_jemalloc_ctl::{epoch, stats};
    // jemalloc's statistics are a snapshot, refreshed by advancing its epoch.
    if epoch::advance().is_ok() {
        for (kind, v) in [
            ("allocated", stats::allocated::read()),
            ("active", stats::active::read()),
            ("resident", stats::resident::read()),
            ("retained", stats::retained::read()),
        ] {
            if let Ok(v) = v {
                metrics::gauge!("herald_allocator_bytes", "kind" => kind).set(v as f64);
            }
        }
    }
    let rss_kib = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let l = s.lines().find(|l| l.starts_with("VmRSS:"))?;
            l.split_whitespace().nth(1)?.parse::<f64>().ok()
        });
    if let Some(kib) = rss_kib {
        metrics::gauge!("process_resident_memory_bytes").set(kib * 1024.0);
    }
}

/// Each project's usage and quota, read at each scrape (one read of the
/// projects and one of each counter): a gauge set only when usage changes
/// would show a node's view, not the store's, on a cluster.
async fn sample_usage(st: &State) {
    let read = st.engine.usage_of_all().await;
    // A store that cannot answer now leaves the last values.
    for (id, bytes, own) in read.unwrap_or_default() {
        let quota = herald_engine::quota::effective_quota(own);
        metrics::gauge!("herald_project_usage_bytes", "project" => id.to_string())
            .set(bytes as f64);
        metrics::gauge!("herald_project_quota_bytes", "project" => id.to_string())
            .set(quota as f64);
    }
}

/// `GET /metrics`
pub fn handler_endpoint() -> Endpoint {
    Op::get("/metrics", "metrics", "Prometheus metrics")
        .ok(
            200,
            "Metrics in the Prometheus text format",
            Content::Text("text/plain", "string"),
        )
        .to(handler)
}

pub async fn handler(st: State) -> HttpResponse {
    sample_memory();
    sample_usage(&st).await;
    let (runs, users) = st.engine.actor_counts();
    metrics::gauge!("herald_actors", "kind" => "flow_run").set(runs as f64);
    metrics::gauge!("herald_actors", "kind" => "user").set(users as f64);
    let body = HANDLE.get().map(|h| h.render()).unwrap_or_default();
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .body(body)
}

/// Counts every request by its route pattern (not its concrete path, so ids do
/// not explode the label set).
pub async fn middleware(
    req: ServiceRequest, next: Next<BoxBody>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let start = Instant::now();
    let method = req.method().as_str().to_string();
    let res = next.call(req).await?;
    let route = res
        .request()
        .match_pattern()
        .unwrap_or_else(|| "unmatched".to_string());
    let status = res.status().as_u16().to_string();
    let secs = start.elapsed().as_secs_f64();
    metrics::counter!("herald_http_requests_total", "route" => route.clone(), "method" => method.clone(), "status" => status).increment(1);
    metrics::histogram!("herald_http_request_duration_seconds", "route" => route, "method" => method).record(secs);
    Ok(res)
}
