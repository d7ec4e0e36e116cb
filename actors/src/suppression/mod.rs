//! The suppression list: addresses (an email, a phone number) a project no
//! longer sends to, added by hand or by delivery feedback (a hard bounce, a
//! complaint, repeated soft bounces), and the rule that skips a delivery to
//! one (`suppressed`).

use crate::error::Result;
use crate::feedback::ReportKind;
use crate::model::{ChannelType, Timestamp};
use crate::storage::Storage;
use uuid::Uuid;

/// What a delivery feedback report does to its address's suppression: the
/// engine calls it after it applied a report to its delivery (`address` is
/// the one the message went to).
pub fn on_report(
    _store: &dyn Storage, _project: &Uuid, _ct: ChannelType, _address: &str, _kind: ReportKind,
    _at: Timestamp,
) -> Result<()> {
    Ok(())
}
