//! The suppression list: addresses (an email, a phone number) a project no
//! longer sends to, added by hand or by delivery feedback (a hard bounce, a
//! complaint, repeated soft bounces), and the rule that skips a delivery to
//! one (`suppressed`).
//!
//! Suppression is by address, not by user: every user of the project with
//! that email or phone is skipped, and deleting or erasing a user leaves
//! the suppression in place (it records the address's standing with the
//! providers, which outlives any one user record). Critical flows are
//! skipped too: a suppression protects the sender's reputation rather than
//! expressing a recipient's choice (`rules::critical`).
//!
//! `address` normalises addresses; `rules` decides when soft bounces
//! suppress; the storage is `storage::SuppressionRepo`.

pub mod address;
pub mod rules;

use crate::error::{Error, Result};
use crate::feedback::{BounceKind, ReportKind};
use crate::model::{new_id, ChannelType, DeliveryError, DeliveryErrorCode, Suppression};
use crate::model::{SuppressionReason, Timestamp, User};
use crate::storage::Storage;
use uuid::Uuid;

/// What a delivery feedback report does to its address's suppression: the
/// engine calls it after it applied a report to its delivery (`address` is
/// the one the message went to).
pub fn on_report(
    store: &dyn Storage, project: &Uuid, ct: ChannelType, address: &str, kind: ReportKind,
    at: Timestamp,
) -> Result<()> {
    let Ok(address) = address::normalize(ct, address) else {
        // Not an address the list can hold (another channel type, a form
        // no provider sends to): nothing to suppress.
        return Ok(());
    };
    let reason = match kind {
        ReportKind::Bounced(BounceKind::Hard) => SuppressionReason::HardBounce,
        ReportKind::Complained => SuppressionReason::Complaint,
        ReportKind::Bounced(BounceKind::Soft) => {
            let now = at.millis();
            let times =
                store.add_soft_bounce(project, (ct, &address), now, rules::window_start(now))?;
            if !rules::soft_bounces_suppress(&times, now) {
                return Ok(());
            }
            SuppressionReason::SoftBounce
        }
        ReportKind::Delivered | ReportKind::Failed => return Ok(()),
    };
    store.put_suppression(project, new_suppression(ct, address, reason))?;
    Ok(())
}

/// A new suppression of a normalised address.
fn new_suppression(ct: ChannelType, address: String, reason: SuppressionReason) -> Suppression {
    let (id, created_at) = new_id();
    Suppression {
        id,
        channel_type: ct,
        address,
        reason,
        created_at,
    }
}

/// The address of an API request, normalised, or the 422 that refuses it
/// (`channel_type` not email or sms: `inclusion`; an address not of its
/// form: `format`).
pub fn checked_address(ct: ChannelType, raw: &str) -> Result<String> {
    if !address::covers(ct) {
        return Err(Error::field(
            "channel_type",
            "inclusion",
            "one of email, sms",
        ));
    }
    address::normalize(ct, raw).map_err(|m| Error::field("address", "format", m))
}

/// Adds an address to the list by hand (`manual`): the suppression, and
/// whether it is new (an address suppressed already keeps its suppression,
/// whatever its reason).
pub fn add_manual(
    store: &dyn Storage, project: &Uuid, ct: ChannelType, raw: &str,
) -> Result<(Suppression, bool)> {
    let address = checked_address(ct, raw)?;
    store.put_suppression(
        project,
        new_suppression(ct, address, SuppressionReason::Manual),
    )
}

/// Removes an address from the list; 404 when it is not on it.
pub fn remove(store: &dyn Storage, project: &Uuid, ct: ChannelType, raw: &str) -> Result<()> {
    let missing = || Error::not_found("suppression", format!("{}/{}", ct.as_str(), raw));
    if !address::covers(ct) {
        return Err(Error::field(
            "channel_type",
            "inclusion",
            "one of email, sms",
        ));
    }
    // An address of no valid form cannot be on the list.
    let Ok(address) = address::normalize(ct, raw) else {
        return Err(missing());
    };
    if store.remove_suppression(project, (ct, &address))? {
        Ok(())
    } else {
        Err(missing())
    }
}

/// The rule at send time: a delivery of `ct` to `recipient` whose address
/// is suppressed is skipped with `suppressed`. One keyed read for an email
/// or SMS delivery with an address; none for any other.
pub fn skip_if_suppressed(
    store: &dyn Storage, project: &Uuid, ct: ChannelType, recipient: Option<&User>,
) -> Result<Option<DeliveryError>> {
    let Some(address) = recipient.and_then(|u| address::of_recipient(ct, u)) else {
        return Ok(None);
    };
    let found = store
        .suppressions_of(project, &[(ct, &address)])?
        .into_iter()
        .next()
        .flatten();
    Ok(found.map(|s| {
        DeliveryError::new(
            DeliveryErrorCode::Suppressed,
            format!(
                "the recipient's address is on the project's suppression list ({})",
                s.reason.as_str()
            ),
        )
    }))
}
