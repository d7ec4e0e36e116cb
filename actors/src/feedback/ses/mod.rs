//! Amazon SES events through Amazon SNS: SES publishes a message's
//! deliveries, bounces and complaints to an SNS topic, and the topic's
//! HTTPS subscription POSTs each as an SNS message (JSON, its type also in
//! `x-amz-sns-message-type`).
//!
//! SNS signs every message with RSA (SignatureVersion 1: SHA1withRSA, 2:
//! SHA256withRSA) over a canonical text of some of its fields, each written
//! `Name\nValue\n` in this order:
//!
//! - Notification: Message, MessageId, Subject (when present), Timestamp,
//!   TopicArn, Type;
//! - SubscriptionConfirmation and UnsubscribeConfirmation: Message,
//!   MessageId, SubscribeURL, Timestamp, Token, TopicArn, Type;
//!
//! with the key of the X.509 certificate at `SigningCertURL`, which must be
//! an https URL of an SNS host (see [`certs`]). A channel that sets
//! `sns_topic_arn` takes messages of that topic only.
//!
//! A confirmed subscription's notifications carry an SES event as the JSON
//! text of `Message` (`notificationType` for SES's identity notifications,
//! `eventType` for a configuration set's event destination), naming the
//! message by `mail.messageId`: the `MessageId` of SES's send answer, stored
//! as the delivery's message id.

mod certs;

pub use certs::{allowed_url, is_sns_host, SigningCert, SnsCerts};

use super::detail::short;
use super::{BounceKind, Hook, Refused, Report, ReportKind, Verified};
use crate::model::Timestamp;
use rsa::Pkcs1v15Sign;
use serde_json::{Map, Value};
use sha2::Digest;

/// The config field naming the one topic a channel takes messages of.
pub const TOPIC_FIELD: &str = "sns_topic_arn";
const TYPE_HEADER: &str = "x-amz-sns-message-type";

/// Checks an SNS message's signature (fetching its certificate through
/// `certs`) and reads what it carries.
pub async fn verify(
    config: &Value, hook: &Hook<'_>, now: Timestamp, certs: &SnsCerts,
) -> Result<Verified, Refused> {
    let (msg, cert_url) = check(config, hook, certs.trusted_host())?;
    let cert = certs.get(&cert_url).await?;
    finish(&msg, &cert, now, certs.trusted_host())
}

/// An SNS message's fields.
struct Message(Map<String, Value>);

impl Message {
    fn text(&self, k: &str) -> Option<&str> {
        self.0.get(k).and_then(|v| v.as_str())
    }

    fn required(&self, k: &str) -> Result<&str, Refused> {
        self.text(k)
            .ok_or_else(|| Refused::new(format!("the SNS message has no {k}")))
    }

    /// The text SNS signed.
    fn canonical(&self) -> Result<String, Refused> {
        let kind = self.required("Type")?;
        let fields: &[&str] = match kind {
            "Notification" => &[
                "Message",
                "MessageId",
                "Subject",
                "Timestamp",
                "TopicArn",
                "Type",
            ],
            "SubscriptionConfirmation" | "UnsubscribeConfirmation" => &[
                "Message",
                "MessageId",
                "SubscribeURL",
                "Timestamp",
                "Token",
                "TopicArn",
                "Type",
            ],
            _ => return Err(Refused::new("not an SNS message type Herald knows")),
        };
        let mut text = String::new();
        for &f in fields {
            let value = match (f, self.text(f)) {
                (_, Some(v)) => v,
                ("Subject", None) => continue,
                _ => return Err(Refused::new(format!("the SNS message has no {f}"))),
            };
            text.push_str(f);
            text.push('\n');
            text.push_str(value);
            text.push('\n');
        }
        Ok(text)
    }
}

/// What can be judged before the certificate is fetched: the message's
/// form, its topic, its certificate's URL.
fn check(
    config: &Value, hook: &Hook<'_>, trusted: Option<&str>,
) -> Result<(Message, url::Url), Refused> {
    let fields: Map<String, Value> = serde_json::from_slice(hook.body)
        .map_err(|_| Refused::new("the body is not an SNS message (JSON object)"))?;
    let msg = Message(fields);
    let kind = msg.required("Type")?;
    if hook.header(TYPE_HEADER).is_some_and(|h| h != kind) {
        return Err(Refused::new(
            "x-amz-sns-message-type is not the message's Type",
        ));
    }
    if let Some(want) = config[TOPIC_FIELD].as_str().filter(|s| !s.is_empty()) {
        if msg.required("TopicArn")? != want {
            return Err(Refused::new(format!(
                "the message's TopicArn is not the channel's {TOPIC_FIELD}"
            )));
        }
    }
    let url = allowed_url(msg.required("SigningCertURL")?, trusted, "SigningCertURL")?;
    Ok((msg, url))
}

/// Checks the signature with the certificate, then reads the message.
fn finish(
    msg: &Message, cert: &SigningCert, now: Timestamp, trusted: Option<&str>,
) -> Result<Verified, Refused> {
    if !cert.valid_at(now) {
        return Err(Refused::new("the signing certificate is not valid now"));
    }
    let signature = base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        msg.required("Signature")?,
    )
    .map_err(|_| Refused::new("the Signature is not base64"))?;
    let text = msg.canonical()?;
    let checked = match msg.required("SignatureVersion")? {
        "1" => cert.key.verify(
            Pkcs1v15Sign::new::<sha1::Sha1>(),
            &sha1::Sha1::digest(text.as_bytes()),
            &signature,
        ),
        "2" => cert.key.verify(
            Pkcs1v15Sign::new::<sha2::Sha256>(),
            &sha2::Sha256::digest(text.as_bytes()),
            &signature,
        ),
        _ => return Err(Refused::new("an unknown SignatureVersion")),
    };
    checked.map_err(|_| Refused::new("the signature does not match"))?;
    match msg.required("Type")? {
        "SubscriptionConfirmation" => {
            let url = allowed_url(msg.required("SubscribeURL")?, trusted, "SubscribeURL")?;
            Ok(Verified::ConfirmSubscription {
                subscribe_url: url.to_string(),
            })
        }
        "Notification" => {
            let event: Value = serde_json::from_str(msg.required("Message")?).unwrap_or_default();
            Ok(Verified::Reports(ses_report(&event).into_iter().collect()))
        }
        // an unsubscription's confirmation: nothing to do
        _ => Ok(Verified::Reports(vec![])),
    }
}

/// What an SES event reports, if anything Herald tracks (a notification
/// that is not an SES event, such as SNS's own test message, reports
/// nothing).
fn ses_report(e: &Value) -> Option<Report> {
    let kind = e["notificationType"]
        .as_str()
        .or_else(|| e["eventType"].as_str())?;
    let text = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_string);
    let (kind, part, detail) = match kind {
        "Delivery" => (
            ReportKind::Delivered,
            &e["delivery"],
            text(&e["delivery"]["smtpResponse"]),
        ),
        "Bounce" => {
            let b = &e["bounce"];
            let hard = b["bounceType"].as_str() == Some("Permanent");
            let words: Vec<String> = [
                text(&b["bounceType"]),
                text(&b["bounceSubType"]),
                text(&b["bouncedRecipients"][0]["diagnosticCode"]),
            ]
            .into_iter()
            .flatten()
            .collect();
            let kind = if hard {
                BounceKind::Hard
            } else {
                BounceKind::Soft
            };
            (ReportKind::Bounced(kind), b, Some(words.join(": ")))
        }
        "Complaint" => (
            ReportKind::Complained,
            &e["complaint"],
            text(&e["complaint"]["complaintFeedbackType"]),
        ),
        // SES refused to send it (a virus, a rendering failure)
        "Reject" => (
            ReportKind::Failed,
            &e["reject"],
            text(&e["reject"]["reason"]),
        ),
        _ => return None,
    };
    let message_id = text(&e["mail"]["messageId"])?;
    let at = part["timestamp"]
        .as_str()
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map(|t| Timestamp::from_millis(t.timestamp_millis()));
    Some(Report {
        message_id,
        kind,
        at,
        detail: detail.filter(|d| !d.is_empty()).map(|d| short(&d)),
    })
}

#[cfg(test)]
mod tests;
