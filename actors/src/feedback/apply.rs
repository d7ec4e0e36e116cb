//! The rule of applying a provider's report to its delivery, written once
//! for every backend (a backend calls it under the delivery's lock through
//! `storage::FeedbackRepo::apply_report`), and the provider message index
//! entry a sent delivery leaves (`sent_message`).
//!
//! Transitions (docs/API.md, "Delivery feedback"):
//!
//! | from \ report | delivered | bounced | complained | failed |
//! |---|---|---|---|---|
//! | `sent` | `delivered` | `bounced` | `complained` | `failed` |
//! | `delivered` | duplicate | `bounced` | `complained` | ignored |
//! | `bounced` | ignored | duplicate (same kind), else ignored | ignored | ignored |
//! | `complained` | ignored | ignored | duplicate | ignored |
//! | `failed` after it was sent | ignored | ignored | ignored | duplicate |
//! | `pending`, `skipped`, `canceled`, `failed` before it was sent | ignored | ignored | ignored | ignored |
//!
//! Late reports are common (a bounce or complaint days after the
//! provider said delivered), so `delivered` still takes them; anything
//! that would move a delivery backwards, or away from a bounce or a
//! complaint, is ignored.

use super::{Report, ReportKind};
use crate::model::{
    BounceKind, Delivery, DeliveryError, DeliveryErrorCode, DeliveryStatus, Timestamp,
};
use crate::trace::TraceEntry;
use serde_json::json;
use uuid::Uuid;

/// Provider details kept in a trace entry or an error message, at most.
const MAX_DETAIL: usize = 200;

/// What a report did to its delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// The delivery changed (its status, and bounce kind or error).
    Changed,
    /// The delivery already says what the report says.
    Duplicate,
    /// The report does not apply to the delivery as it is.
    Ignored,
}

impl Applied {
    /// The `outcome` label of `herald_feedback_reports_total`.
    pub fn as_str(self) -> &'static str {
        match self {
            Applied::Changed => "applied",
            Applied::Duplicate => "duplicate",
            Applied::Ignored => "ignored",
        }
    }
}

/// The status a report kind leads to.
fn status_of(kind: ReportKind) -> DeliveryStatus {
    match kind {
        ReportKind::Delivered => DeliveryStatus::Delivered,
        ReportKind::Bounced(_) => DeliveryStatus::Bounced,
        ReportKind::Complained => DeliveryStatus::Complained,
        ReportKind::Failed => DeliveryStatus::Failed,
    }
}

/// The report kind's name, as the trace shows it.
pub fn kind_str(kind: ReportKind) -> &'static str {
    match kind {
        ReportKind::Delivered => "delivered",
        ReportKind::Bounced(_) => "bounced",
        ReportKind::Complained => "complained",
        ReportKind::Failed => "failed",
    }
}

/// The provider's words, cut to `MAX_DETAIL` characters.
fn short(detail: Option<&str>) -> Option<String> {
    detail.map(|d| d.chars().take(MAX_DETAIL).collect())
}

/// Applies `r` to `d` at `now` as the module's table says.
pub fn apply(d: &mut Delivery, r: &Report, now: Timestamp) -> Applied {
    use DeliveryStatus as S;
    let to = status_of(r.kind);
    let same = d.status == to
        && match r.kind {
            ReportKind::Bounced(k) => d.bounce == Some(k),
            _ => true,
        };
    let sent_before = d.sent_at.is_some();
    let allowed = matches!(
        (d.status, r.kind),
        (S::Sent, _)
            | (
                S::Delivered,
                ReportKind::Bounced(_) | ReportKind::Complained
            )
    );
    if !allowed {
        // a duplicate only of a state a report can have set
        let reported = matches!(d.status, S::Delivered | S::Bounced | S::Complained)
            || (d.status == S::Failed && sent_before);
        return if same && reported {
            Applied::Duplicate
        } else {
            Applied::Ignored
        };
    }
    d.status = to;
    d.bounce = match r.kind {
        ReportKind::Bounced(k) => Some(k),
        _ => None,
    };
    if r.kind == ReportKind::Failed {
        let why = short(r.detail.as_deref()).unwrap_or_else(|| "no reason given".into());
        d.error = Some(DeliveryError::new(
            DeliveryErrorCode::ProviderRejected,
            format!("the provider failed the message after accepting it: {why}"),
        ));
    }
    d.updated_at = now;
    Applied::Changed
}

/// The decision-trace entry of a report applied to `d` (as it is after).
pub fn trace_entry(d: &Delivery, provider: &str, r: &Report, now: Timestamp) -> TraceEntry {
    let bounce = match r.kind {
        ReportKind::Bounced(k) => Some(k.as_str()),
        _ => None,
    };
    crate::trace::entry(
        now,
        "delivery.feedback",
        json!({
            "step": crate::trace::step_of(&d.id),
            "delivery_id": d.id.to_string(),
            "provider": provider,
            "report": kind_str(r.kind),
            "bounce": bounce,
            "status": d.status.as_str(),
            "detail": short(r.detail.as_deref()),
        }),
    )
}

/// A provider's message id as both sides are compared: trimmed, without
/// the angle brackets of a `Message-Id` header (Mailgun's send answer has
/// them, its events not).
pub fn normalize_message_id(id: &str) -> &str {
    let t = id.trim();
    t.strip_prefix('<')
        .and_then(|x| x.strip_suffix('>'))
        .unwrap_or(t)
        .trim()
}

/// The longest message id indexed (longer ones are not: no provider's is).
pub const MAX_MESSAGE_ID: usize = 256;

/// What a delivery that settled as sent leaves in the provider message
/// index: its channel, the provider's message id (normalised) and the
/// address the message went to, from its outcomes (`message_id` and
/// `identifier` of the object, or of an array's first element). `None`
/// when the provider gave no id.
pub fn sent_message(d: &Delivery) -> Option<SentIndex> {
    if d.status != DeliveryStatus::Sent {
        return None;
    }
    let o = d.outcomes.as_ref()?;
    let o = o.get(0).unwrap_or(o);
    let id = normalize_message_id(o.get("message_id")?.as_str()?);
    if id.is_empty() || id.len() > MAX_MESSAGE_ID {
        return None;
    }
    let address = o
        .get("identifier")
        .or_else(|| o.get("to"))
        .and_then(|a| a.as_str())
        .unwrap_or_default();
    Some(SentIndex {
        channel_id: d.channel_id,
        message_id: id.to_string(),
        delivery_id: d.id,
        address: address.to_string(),
    })
}

/// One entry of the provider message index: `(channel, message id)` →
/// `(delivery, address)`, within a project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentIndex {
    pub channel_id: Uuid,
    pub message_id: String,
    pub delivery_id: Uuid,
    pub address: String,
}

/// The bounce kind of a report, if it is a bounce.
pub fn bounce_of(kind: ReportKind) -> Option<BounceKind> {
    match kind {
        ReportKind::Bounced(k) => Some(k),
        _ => None,
    }
}

#[cfg(test)]
#[path = "tests/apply.rs"]
mod tests;
