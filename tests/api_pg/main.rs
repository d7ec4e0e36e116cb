//! The black-box API suite (`tests/api`) once more, with every server it
//! starts keeping its state in PostgreSQL: `helpers::pg_mode` sees this
//! binary's name and gives each server a database of its own.

#[path = "../api/main.rs"]
mod suite;

// the suite's modules name their helpers from the crate root
pub(crate) use suite::{engine_helpers, helpers, providers_support};
