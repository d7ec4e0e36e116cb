//! Black-box integration tests for Herald: every test starts the real `herald`
//! binary on a temporary data dir and talks to it over HTTP (contract:
//! shared/API.md and the seed it extends).

mod helpers;

mod auth;
mod errors;
mod pagination;
mod preferences;
mod project;
mod rate_limit;
mod restart;
mod tenancy;
mod users;
mod engine_helpers;
mod channels;
mod flows;
mod runs;
mod webhook_delivery;
mod feed;
mod topics;
mod idempotency;
mod crash;
