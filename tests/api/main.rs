//! Black-box integration tests for Herald: every test starts the real `herald`
//! binary on a temporary data dir and talks to it over HTTP (contract:
//! docs/API.md).

pub(crate) mod helpers;

mod auth;
mod bulk;
mod channels;
mod cluster_bus;
mod cluster_failover;
mod cluster_work;
mod crash;
mod disk_full;
mod docs_channels;
mod egress;
pub(crate) mod engine_helpers;
mod erasure;
mod errors;
mod fairness;
mod feed;
mod flows;
mod hardening;
mod idempotency;
mod live;
mod metrics;
mod ops_backup;
mod ops_logs;
mod ops_openapi;
mod ops_projects;
mod ops_readme;
mod packaging;
mod pagination;
mod pg_store;
mod preferences;
mod project;
mod providers_config;
mod providers_email;
mod providers_http;
mod providers_mobile_push;
pub(crate) mod providers_support;
mod providers_web_push;
mod rate_limit;
mod restart;
mod retention;
mod runs;
mod secrets_at_rest;
mod templates_bounded;
mod tenancy;
mod topics;
mod trace;
mod users;
mod webhook_delivery;
mod webhook_endpoints;
mod workflow_batch;
mod workflow_clock;
mod workflow_conditions;
mod workflow_throttle;
mod workflow_windows;
