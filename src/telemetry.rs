//! Logging through `tracing` (README, Operations): human-readable by default, one JSON
//! object per line with `--log-format json`; the level comes from `RUST_LOG`
//! (default `info`). Logs go to stderr (stdout carries the `listening on` line
//! and generated keys).
//!
//! Every HTTP request runs in a `request` span with `request_id`, `method`,
//! `route` (the route pattern, never the concrete path, so no id or key in a URL
//! is logged) and `project_id` once authenticated, and ends with one
//! `request completed` line at info level carrying `status` and `latency_ms`
//! (see `startup::request_scope`). In JSON each line carries its spans' fields
//! under `span` (the innermost) and `spans` (all of them).
//!
//! Secrets are never logged: no header value, request body, channel config or
//! key is ever put on a span or an event.

use std::io::IsTerminal;
use tracing_subscriber::{fmt, EnvFilter};

/// The filter when `RUST_LOG` is not set.
pub const DEFAULT_FILTER: &str = "info,sled=warn";

pub fn init(format: &str) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let res = if format == "json" {
        fmt()
            .with_env_filter(filter)
            .json()
            .with_current_span(true)
            .with_span_list(true)
            .with_writer(std::io::stderr)
            .try_init()
    } else {
        // colours only for a terminal, and never with NO_COLOR set
        let ansi = std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal();
        fmt()
            .with_env_filter(filter)
            .with_ansi(ansi)
            .with_writer(std::io::stderr)
            .try_init()
    };
    let _ = res; // already initialised (tests, repeated calls)
}
