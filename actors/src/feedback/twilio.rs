//! Twilio's message status callbacks: a form-encoded POST with
//! `MessageSid` and `MessageStatus`, signed in `X-Twilio-Signature` with
//! the base64 HMAC-SHA1, under the account's auth token (the channel's
//! `auth_token`), of the full URL Twilio called followed by every POST
//! parameter's name and value, sorted by name.

use super::{Hook, Refused, Report, ReportKind, Verified};
use crate::model::Timestamp;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha1::Sha1;

/// Checks the signature with the channel's auth token and reads the status.
pub fn verify(config: &Value, hook: &Hook<'_>, _now: Timestamp) -> Result<Verified, Refused> {
    let token = config["auth_token"]
        .as_str()
        .filter(|k| !k.is_empty())
        .ok_or_else(|| Refused::new("the channel has no auth_token"))?;
    let given = hook
        .header("x-twilio-signature")
        .and_then(|s| {
            base64::engine::general_purpose::STANDARD
                .decode(s.trim())
                .ok()
        })
        .ok_or_else(|| Refused::new("no X-Twilio-Signature"))?;
    let mut params: Vec<(String, String)> = url::form_urlencoded::parse(hook.body)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    params.sort();
    let mut mac = Hmac::<Sha1>::new_from_slice(token.as_bytes())
        .map_err(|_| Refused::new("unusable auth token"))?;
    mac.update(hook.url.as_bytes());
    for (k, v) in &params {
        mac.update(k.as_bytes());
        mac.update(v.as_bytes());
    }
    mac.verify_slice(&given)
        .map_err(|_| Refused::new("the signature does not match"))?;
    let get = |name: &str| super::param(&params, name);
    let Some(sid) = get("MessageSid").or(get("SmsSid")) else {
        return Ok(Verified::Reports(vec![]));
    };
    let kind = match get("MessageStatus").or(get("SmsStatus")) {
        Some("delivered") => ReportKind::Delivered,
        Some("undelivered" | "failed") => ReportKind::Failed,
        // queued, sending, sent, accepted, read…: not a change Herald tracks
        _ => return Ok(Verified::Reports(vec![])),
    };
    let detail = (kind == ReportKind::Failed)
        .then(|| get("ErrorCode").map(|c| format!("Twilio error {c}")))
        .flatten();
    Ok(Verified::Reports(vec![Report {
        message_id: sid.to_string(),
        kind,
        at: None,
        detail,
    }]))
}

#[cfg(test)]
#[path = "tests/twilio.rs"]
mod tests;
