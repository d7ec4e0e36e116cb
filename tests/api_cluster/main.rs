//! The black-box API suite (`tests/api`) once more, with every server it
//! starts a cluster: `helpers::cluster_mode` sees this binary's name, and
//! each `TestApp` is three nodes on one PostgreSQL database and one
//! nats-server of its own, its requests and sockets spread over the nodes.

#[path = "../api/main.rs"]
mod suite;

// the suite's modules name their helpers from the crate root
pub(crate) use suite::{engine_helpers, helpers, providers_support};
