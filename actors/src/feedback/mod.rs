//! Delivery feedback: what a provider tells Herald about a message after it
//! accepted it (delivered, bounced, complained, failed), received at
//! `POST /hooks/v1/{channel_id}`.
//!
//! Each provider with callbacks has a verifier here (`verify_*`): a pure
//! function of the channel's configuration and the request as received
//! that either refuses it (the route answers 401 and changes nothing) or
//! returns the reports it carries, each naming a message by the provider's
//! own message id (stored with the delivery when it was sent). Applying a
//! report to its delivery is the engine's rule, written once for every
//! backend.

mod apply;
mod detail;
pub mod mailgun;
pub mod postmark;
pub mod sendgrid;
pub mod ses;
pub mod twilio;
pub mod vonage;

pub use apply::*;

use crate::model::Timestamp;
use serde::{Deserialize, Serialize};

/// A provider's callback as the server received it.
pub struct Hook<'a> {
    /// The absolute URL the provider called, as the operator published it
    /// (`{public_url}/hooks/v1/{channel_id}`, with its query string): the
    /// schemes that sign the URL (Twilio) sign this one.
    pub url: &'a str,
    /// The request headers, names in lower case.
    pub headers: &'a [(String, String)],
    pub body: &'a [u8],
}

impl Hook<'_> {
    /// The first header of that (lower-case) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A bounce's kind (a delivery record's too, so it lives with the model).
pub use crate::model::BounceKind;

/// What a provider reports about one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportKind {
    Delivered,
    Bounced(BounceKind),
    Complained,
    /// The provider failed the message after accepting it (an SMS the
    /// carrier refused, an email it dropped).
    Failed,
}

/// One report of a callback.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The provider's id of the message, as its send answer gave it.
    pub message_id: String,
    pub kind: ReportKind,
    /// When the provider says it happened, if it says.
    pub at: Option<Timestamp>,
    /// The provider's words (a bounce's diagnostic, an error code), kept
    /// short for the decision trace.
    pub detail: Option<String>,
}

/// What a verified callback asks of Herald.
#[derive(Debug, Clone, PartialEq)]
pub enum Verified {
    /// Reports to apply (possibly none: an event type Herald does not track,
    /// such as an open or a click, is answered 200 and ignored).
    Reports(Vec<Report>),
    /// An Amazon SNS subscription confirmation: Herald GETs this URL (an SNS
    /// host, checked by the verifier) once to confirm the subscription.
    ConfirmSubscription { subscribe_url: String },
}

/// Why a callback is refused (401): its signature, credentials or form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

impl Refused {
    pub fn new(why: impl Into<String>) -> Self {
        Refused(why.into())
    }
}

/// A form parameter's value by name (the first), `None` when absent or
/// empty: how form-encoded callbacks (Twilio, Vonage) are read.
pub(crate) fn param<'a>(params: &'a [(String, String)], name: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .filter(|v| !v.is_empty())
}
