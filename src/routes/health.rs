//! Liveness and readiness (no credentials).

use super::endpoint::{Endpoint, Serve};
use super::ok;
use crate::bodies::Health;
use crate::errors::{ApiError, ApiResult};
use crate::openapi::{Content, Op};
use crate::state::State;
use actix_web::HttpResponse;
use herald_engine::Error;

/// `GET /healthz`
pub fn healthz_endpoint() -> Endpoint {
    Op::get("/healthz", "healthz", "Liveness")
        .ok(200, "Alive", Content::Json("Health"))
        .to(healthz)
}

pub async fn healthz() -> HttpResponse {
    ok(Health { status: "ok" })
}

/// `GET /readyz`
pub fn readyz_endpoint() -> Endpoint {
    Op::get(
        "/readyz",
        "readyz",
        "Readiness: the store is open and the engine runs",
    )
    .ok(200, "Ready", Content::Json("Health"))
    .errors(&[503])
    .to(readyz)
}

/// 200 while the store answers and can write, the engine runs and (in a
/// cluster) the bus is connected, else 503 (with `Retry-After` while the
/// store is degraded by a disk error).
pub async fn readyz(st: State) -> ApiResult<HttpResponse> {
    let health = st.engine.health_status();
    if health.degraded {
        return Err(ApiError(Error::storage_unavailable(format!(
            "the store cannot write: {}",
            health.reason
        ))));
    }
    if !st.engine.is_running() {
        return Err(ApiError(Error::unavailable(
            "the delivery engine is not running",
        )));
    }
    st.engine
        .store_answers()
        .await
        .map_err(|_| ApiError(Error::unavailable("the store is not available")))?;
    // A node of a cluster without its bus would miss the other nodes' live
    // frames and changes: not ready until the bus answers again.
    if st.engine.bus().is_some_and(|b| !b.connected()) {
        return Err(ApiError(Error::unavailable(
            "the cluster bus (NATS) is unreachable",
        )));
    }
    Ok(ok(Health { status: "ready" }))
}
