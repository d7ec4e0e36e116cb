//! The HTTP layer's side of the cluster bus (`herald_engine::bus`): starting
//! it with the server, and the project changes whose sockets every node must
//! close (security mode on, signing key changed, project deleted), closed
//! here and announced to the other nodes, which close theirs.

use crate::live::sockets::AuthedBy;
use crate::state::AppState;
use herald_engine::bus::{Bus, ProjectNotice};
use herald_engine::Engine;
use std::sync::{Arc, Weak};
use std::time::Duration;

/// How long a starting node waits for the bus before it starts anyway
/// (`/readyz` says 503 until the bus answers).
const FIRST_CONNECT: Duration = Duration::from_secs(5);

/// Connects this node to the bus at `url` (on the blocking pool: the client
/// has a runtime of its own, which cannot be entered from an async thread).
pub async fn start(url: &str, engine: &Engine) -> Result<Bus, String> {
    let (url, engine) = (url.to_string(), engine.clone());
    let bus = actix_web::web::block(move || Bus::connect(&url, &engine, FIRST_CONNECT))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.message)?;
    // Present from the start, so dashboards see 0 rather than nothing.
    for c in [
        "herald_bus_published_total",
        "herald_bus_received_total",
        "herald_bus_dropped_total",
        "herald_bus_reconnects_total",
        "herald_bus_recoveries_total",
        "herald_bus_recovered_frames_total",
    ] {
        metrics::counter!(c).increment(0);
    }
    tracing::info!(
        url = bus.url(),
        connected = bus.connected(),
        "cluster bus started"
    );
    Ok(bus)
}

/// Lets the other nodes' project notices close this node's sockets.
pub fn attach(bus: &Bus, state: &Arc<AppState>) {
    // Weak: the engine owns the bus, and the state owns the engine.
    let st: Weak<AppState> = Arc::downgrade(state);
    bus.on_project_notice(Box::new(move |project, notice| {
        if let Some(st) = st.upgrade() {
            close_sockets(&st, project, notice);
        }
    }));
    let st: Weak<AppState> = Arc::downgrade(state);
    bus.on_resync(Box::new(move || {
        if let Some(st) = st.upgrade() {
            // Off the bus's async thread: it reads the database.
            tokio::task::spawn_blocking(move || recheck_sockets(&st));
        }
    }));
}

/// After the bus was down: the notices of projects deleted or put in
/// security mode meanwhile may be lost, so the sockets' projects are read
/// again and what the new rules refuse is closed. (A signing key changed
/// meanwhile is not detected: those sockets stay until they reconnect.)
fn recheck_sockets(st: &AppState) {
    for id in st.live.projects() {
        match st.engine.project_blocking(&id) {
            Ok(None) => close_sockets(st, id, ProjectNotice::Deleted),
            Ok(Some(p)) if p.security_mode => close_sockets(st, id, ProjectNotice::SecurityOn),
            Ok(Some(_)) => {}
            Err(e) => {
                tracing::warn!(project = %id, error = %e.message, "cannot re-check a project's sockets after the bus came back")
            }
        }
    }
}

/// A project change whose sockets must close: closes this node's and tells
/// the other nodes of a cluster, which close theirs.
pub fn project_changed(st: &AppState, project: uuid::Uuid, notice: ProjectNotice) {
    close_sockets(st, project, notice);
    st.engine.announce_project(project, notice);
}

fn close_sockets(st: &AppState, project: uuid::Uuid, notice: ProjectNotice) {
    match notice {
        // Sockets that joined on a bare user id would keep receiving: they
        // must authenticate again under the new rule.
        ProjectNotice::SecurityOn => st.live.close_authenticated(
            project,
            AuthedBy::UserId,
            "security mode is on: authenticate with a user key",
        ),
        // The key that verified their tokens is gone.
        ProjectNotice::SigningKey => st.live.close_authenticated(
            project,
            AuthedBy::Jwt,
            "the signing key changed: authenticate again",
        ),
        ProjectNotice::Deleted => st.live.close_project(project, "the project was deleted"),
        ProjectNotice::Clock => {}
    }
}
