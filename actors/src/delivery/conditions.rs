//! Step conditions as the delivery pipeline applies them: the language and its
//! evaluation are domain types (`model::conditions`, re-exported here); what a
//! false condition makes of a delivery waiting for it is an outcome of settling.

pub use crate::model::conditions::*;

use crate::storage::Outcome;

/// The outcome of a delivery whose condition is false.
pub fn condition_false() -> Outcome {
    Outcome::Skipped(condition_false_error())
}
