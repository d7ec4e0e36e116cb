//! Black-box integration tests for Herald: every test starts the real `herald`
//! binary on a temporary data dir and talks to it over HTTP (contract:
//! shared/API.md and the seed it extends).

mod helpers;

mod auth;
mod channels;
mod crash;
mod engine_helpers;
mod errors;
mod feed;
mod flows;
mod idempotency;
mod live;
mod pagination;
mod preferences;
mod project;
mod rate_limit;
mod restart;
mod runs;
mod tenancy;
mod topics;
mod users;
mod webhook_delivery;
mod metrics;
