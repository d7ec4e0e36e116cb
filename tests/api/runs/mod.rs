//! docs/API.md §9 (runs, notifications and deliveries):
//! the 202, run validation, inline identify, recipient dedup, templates,
//! preferences, the notification and delivery lists with their filters, the
//! by-id reads, and a durable `delay` that survives a restart.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use serde_json::{json, Value};
use wiremock::matchers::{body_string_contains, method};
use wiremock::{Mock, ResponseTemplate};

use crate::engine_helpers::*;
use crate::helpers::*;

fn run_path(flow: &str) -> String {
    format!("{A}/flows/{flow}/run")
}

mod accept;
mod lists;
mod paging;
