//! Postmark's webhooks (Delivery, Bounce, SpamComplaint): one JSON record
//! per request, sent with the HTTP basic-auth credentials the operator put
//! in the webhook's URL in Postmark, which the channel keeps as
//! `webhook_username` and `webhook_password`.

use super::{Hook, Refused, Report, ReportKind, Verified};
use crate::model::{BounceKind, Timestamp};
use base64::Engine as _;
use serde_json::Value;
use subtle::ConstantTimeEq;

/// Postmark bounce `Type`s that say the address itself is bad.
const HARD: &[&str] = &["HardBounce", "BadEmailAddress", "ManuallyDeactivated"];

/// Postmark bounce `Type`s that are a failed delivery that may pass later.
const SOFT: &[&str] = &[
    "Transient",
    "SoftBounce",
    "DnsError",
    "Unknown",
    "Blocked",
    "DMARCPolicy",
    "SMTPApiError",
    "Unconfirmed",
];

/// Checks the request's basic auth against the channel's webhook
/// credentials and reads its record.
pub fn verify(config: &Value, hook: &Hook<'_>, _now: Timestamp) -> Result<Verified, Refused> {
    let user = config["webhook_username"].as_str().unwrap_or_default();
    let pass = config["webhook_password"].as_str().unwrap_or_default();
    if user.is_empty() || pass.is_empty() {
        return Err(Refused::new(
            "the channel has no webhook_username and webhook_password",
        ));
    }
    let given = hook
        .header("authorization")
        .and_then(|h| {
            h.strip_prefix("Basic ")
                .or_else(|| h.strip_prefix("basic "))
        })
        .and_then(|b| {
            base64::engine::general_purpose::STANDARD
                .decode(b.trim())
                .ok()
        })
        .ok_or_else(|| Refused::new("no basic-auth credentials"))?;
    let want = format!("{user}:{pass}");
    if !bool::from(given.ct_eq(want.as_bytes())) {
        return Err(Refused::new("the basic-auth credentials do not match"));
    }
    let v: Value = serde_json::from_slice(hook.body)
        .map_err(|_| Refused::new("the body is not a JSON object"))?;
    Ok(Verified::Reports(report(&v).into_iter().collect()))
}

/// The report of one Postmark record (`None`: a record Herald does not
/// track, such as an open, a click or an auto-responder "bounce").
fn report(v: &Value) -> Option<Report> {
    let s = |k: &str| v[k].as_str().filter(|x| !x.is_empty());
    let message_id = s("MessageID")?.to_string();
    let (kind, at, detail) = match s("RecordType")? {
        "Delivery" => (ReportKind::Delivered, s("DeliveredAt"), s("Details")),
        "SpamComplaint" => (ReportKind::Complained, s("BouncedAt"), s("Details")),
        "Bounce" => {
            let t = s("Type").unwrap_or_default();
            let kind = if t == "SpamComplaint" {
                ReportKind::Complained
            } else if HARD.contains(&t) {
                ReportKind::Bounced(BounceKind::Hard)
            } else if SOFT.contains(&t) {
                ReportKind::Bounced(BounceKind::Soft)
            } else {
                return None;
            };
            let detail = s("Description")
                .or(s("Details"))
                .map(|d| format!("{t}: {d}"));
            return Some(Report {
                message_id,
                kind,
                at: s("BouncedAt").and_then(rfc3339),
                detail: detail.or(Some(t.to_string())),
            });
        }
        _ => return None,
    };
    Some(Report {
        message_id,
        kind,
        at: at.and_then(rfc3339),
        detail: detail.map(str::to_string),
    })
}

/// A time as Postmark writes it (RFC 3339).
pub(super) fn rfc3339(s: &str) -> Option<Timestamp> {
    chrono::DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| Timestamp(t.with_timezone(&chrono::Utc)))
}

#[cfg(test)]
#[path = "tests/postmark.rs"]
mod tests;
