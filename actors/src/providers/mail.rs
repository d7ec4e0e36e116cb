//! What the HTTP email providers (`sendgrid`, `postmark`, `mailgun`, `resend`,
//! `ses`) share: the recipient's address checked as `smtp` checks it, the
//! message's parts (subject, a plain-text part and an HTML part, as rendered
//! with the step's layout), the sender's config field, and the outcome of an
//! accepted message.

use super::{ConfigField, FieldFormat, SendError, SendRequest, SendResult, Sent};
use crate::model::DeliveryErrorCode;
use serde_json::json;

/// The `from` field of every HTTP email provider: the sender as `smtp` takes it.
pub(crate) const FROM: ConfigField = ConfigField {
    name: "from",
    required: true,
    secret: false,
    format: FieldFormat::Pattern(super::smtp::SENDER),
    description: "Sender: `addr@example.com` or `Name <addr@example.com>` (a sender the service has verified).",
};

/// The `config.from` check shared by these providers (as `smtp`'s).
pub(crate) fn validate_from(f: &super::channel::Fields, v: &mut crate::error::Validator) {
    f.want_format(
        "from",
        super::smtp::is_sender,
        "must be an email address",
        v,
    );
}

/// The recipient's email address, checked as `smtp` checks it: none is
/// `NoAddress` (the delivery is skipped), one that does not parse is
/// `invalid_address` with nothing sent.
pub(crate) fn recipient(req: &SendRequest) -> Result<String, SendError> {
    let email = req
        .recipient
        .as_ref()
        .and_then(|u| u.email.as_deref())
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .ok_or_else(|| SendError::NoAddress {
            message: "the recipient has no email address".into(),
        })?;
    email
        .parse::<lettre::Address>()
        .map(|a| a.to_string())
        .map_err(|_| invalid_address("the recipient's email address is not valid".into()))
}

/// A refusal of the recipient's address.
pub(crate) fn invalid_address(message: String) -> SendError {
    SendError::Rejected {
        code: DeliveryErrorCode::InvalidAddress,
        message,
    }
}

/// The parts of one email.
pub(crate) struct Parts {
    pub subject: String,
    pub text: String,
    pub html: String,
}

/// The parts of the delivery's email: the subject, the body as the plain-text
/// part, and the HTML part: the rendered `html` (already wrapped in the step's
/// layout by the renderer), else the body as escaped paragraphs, so every
/// message carries both.
pub(crate) fn parts(req: &SendRequest) -> Parts {
    let d = &req.delivery.data;
    let html = match d.html.as_deref().filter(|h| !h.is_empty()) {
        Some(h) => h.to_string(),
        None => crate::rules::content::paragraphs(&d.body),
    };
    Parts {
        subject: d.subject.clone(),
        text: d.body.clone(),
        html,
    }
}

/// The one-click unsubscribe headers of the message (a commercial flow's
/// email, `SendRequest::unsubscribe_url`), as (name, value) pairs; none for
/// any other. Each provider passes them its own way.
pub(crate) fn unsubscribe_headers(req: &SendRequest) -> Vec<(&'static str, String)> {
    match req.unsubscribe_url.as_deref() {
        Some(url) => crate::rules::unsubscribe_link::headers(url).into(),
        None => vec![],
    }
}

/// An accepted message: its outcome names the address and the provider's
/// message id, as `twilio`'s does.
pub(crate) fn sent(to: &str, status: u16, message_id: Option<&str>) -> SendResult {
    let mut o = json!({"identifier": to, "status": "sent"});
    if let Some(id) = message_id.filter(|i| !i.is_empty()) {
        o["message_id"] = json!(id);
    }
    Ok(Sent {
        outcomes: Some(json!([o])),
        expired: vec![],
        status_code: Some(status),
    })
}

/// The base URL of a config (`default` when absent), without a trailing `/`.
pub(crate) fn base_url<'a>(
    config: &'a serde_json::Map<String, serde_json::Value>, default: &'a str,
) -> &'a str {
    super::cfg_str(config, "base_url")
        .unwrap_or(default)
        .trim_end_matches('/')
}

/// The `base_url` field of a provider whose API is at `default`.
pub(crate) const fn base_url_field(default: &'static str) -> ConfigField {
    ConfigField {
        name: "base_url",
        required: false,
        secret: false,
        format: FieldFormat::Url {
            default: Some(default),
        },
        description: "API base URL (a mock or a proxy).",
    }
}

/// The configured sender as (address, display name): what a provider that takes
/// them apart (`sendgrid`) sends; one that does not parse is a configuration
/// the transport cannot use.
pub(crate) fn sender(
    config: &serde_json::Map<String, serde_json::Value>,
) -> Result<(String, Option<String>), SendError> {
    let m: lettre::message::Mailbox = super::cfg_str(config, "from")
        .unwrap_or_default()
        .parse()
        .map_err(|_| super::misconfigured("config.from is not a mailbox"))?;
    Ok((m.email.to_string(), m.name.filter(|n| !n.is_empty())))
}
