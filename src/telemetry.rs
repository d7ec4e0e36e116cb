//! Logging through `tracing`: human-readable by default, JSON with
//! `--log-format json`; the level comes from `RUST_LOG` (default `info`).

use tracing_subscriber::{fmt, EnvFilter};

pub fn init(format: &str) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sled=warn"));
    let ansi = std::env::var_os("NO_COLOR").is_none();
    let res = if format == "json" {
        fmt()
            .with_env_filter(filter)
            .json()
            .with_current_span(true)
            .with_writer(std::io::stderr)
            .try_init()
    } else {
        fmt()
            .with_env_filter(filter)
            .with_ansi(ansi)
            .with_writer(std::io::stderr)
            .try_init()
    };
    let _ = res; // already initialised (tests, repeated calls)
}
