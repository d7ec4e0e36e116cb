//! The answer of `POST /hooks/v1/{channel_id}` (delivery feedback).

use serde::Serialize;
use utoipa::ToSchema;

/// What a verified provider callback did, report by report.
#[derive(Serialize, ToSchema)]
pub struct CallbackResult {
    /// Reports that changed their delivery.
    pub applied: usize,
    /// Reports of what their delivery already says.
    pub duplicate: usize,
    /// Reports the delivery's status does not take (a delivery never
    /// sent, a report that would move it backwards).
    pub ignored: usize,
    /// Reports naming no message of the channel's project.
    pub unknown: usize,
}

impl From<herald_engine::actors::CallbackDone> for CallbackResult {
    fn from(d: herald_engine::actors::CallbackDone) -> Self {
        CallbackResult {
            applied: d.applied,
            duplicate: d.duplicate,
            ignored: d.ignored,
            unknown: d.unknown,
        }
    }
}
