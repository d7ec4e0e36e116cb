//! Mailgun's webhooks (`delivered`, `failed`, `complained`): a JSON body
//! with `signature: {timestamp, token, signature}`, the signature being the
//! hex HMAC-SHA256 of `timestamp` followed by `token` under the domain's
//! webhook signing key (the channel's `webhook_signing_key`), and the event
//! in `event-data`.

use super::{Hook, Refused, Report, ReportKind, Verified};
use crate::model::{BounceKind, Timestamp};
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

/// How far a signature's timestamp may be from now: Mailgun signs each
/// call as it makes it, so an older one is a replay.
const MAX_SKEW_SECS: i64 = 24 * 3600;

/// Checks the signature with the channel's signing key and reads the event.
pub fn verify(config: &Value, hook: &Hook<'_>, now: Timestamp) -> Result<Verified, Refused> {
    let key = config["webhook_signing_key"]
        .as_str()
        .filter(|k| !k.is_empty())
        .ok_or_else(|| Refused::new("the channel has no webhook_signing_key"))?;
    let v: Value = serde_json::from_slice(hook.body)
        .map_err(|_| Refused::new("the body is not a JSON object"))?;
    let sig = &v["signature"];
    let (Some(ts), Some(token), Some(given)) = (
        sig["timestamp"].as_str(),
        sig["token"].as_str(),
        sig["signature"].as_str(),
    ) else {
        return Err(Refused::new("no signature"));
    };
    let given = hex(given).ok_or_else(|| Refused::new("the signature is not hex"))?;
    let mut mac = Hmac::<Sha256>::new_from_slice(key.as_bytes())
        .map_err(|_| Refused::new("unusable signing key"))?;
    mac.update(ts.as_bytes());
    mac.update(token.as_bytes());
    mac.verify_slice(&given)
        .map_err(|_| Refused::new("the signature does not match"))?;
    let at: i64 = ts
        .parse()
        .map_err(|_| Refused::new("the signature's timestamp is not a number"))?;
    if (now.millis() / 1000 - at).abs() > MAX_SKEW_SECS {
        return Err(Refused::new(
            "the signature's timestamp is too far from now",
        ));
    }
    Ok(Verified::Reports(
        report(&v["event-data"]).into_iter().collect(),
    ))
}

/// The report of one event (`None`: an event Herald does not track).
fn report(e: &Value) -> Option<Report> {
    let message_id = e["message"]["headers"]["message-id"]
        .as_str()
        .filter(|m| !m.is_empty())?
        .to_string();
    let status = &e["delivery-status"];
    let words = status["description"]
        .as_str()
        .filter(|d| !d.is_empty())
        .or(status["message"].as_str().filter(|d| !d.is_empty()))
        .or(e["reason"].as_str());
    let code = status["code"].as_i64();
    let detail = match (code, words) {
        (Some(c), Some(w)) => Some(format!("{c} {w}")),
        (Some(c), None) => Some(c.to_string()),
        (None, w) => w.map(str::to_string),
    };
    let kind = match e["event"].as_str()? {
        "delivered" => ReportKind::Delivered,
        "complained" => ReportKind::Complained,
        "failed" => match e["severity"].as_str() {
            Some("permanent") => ReportKind::Bounced(BounceKind::Hard),
            _ => ReportKind::Bounced(BounceKind::Soft),
        },
        _ => return None,
    };
    let at = e["timestamp"]
        .as_f64()
        .map(|s| Timestamp::from_millis((s * 1000.0) as i64));
    Some(Report {
        message_id,
        kind,
        at,
        detail: if kind == ReportKind::Delivered {
            None
        } else {
            detail
        },
    })
}

/// Bytes of a hex string.
fn hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
#[path = "tests/mailgun.rs"]
mod tests;
