//! herald: the service around the engine — CLI, configuration, HTTP routes,
//! authentication, errors and the WebSocket endpoint.

pub mod auth;
pub mod bodies;
pub mod cli;
pub mod configuration;
pub mod console;
pub mod console_cmd;
pub mod edge;
pub mod errors;
pub mod extract;
pub mod idempotency;
pub mod live;
pub mod metrics;
pub mod openapi;
pub mod ops_access;
pub mod ops_client;
pub mod pagination;
pub mod preference_page;
pub mod project_cmd;
pub mod routes;
pub mod startup;
pub mod state;
pub mod telemetry;
