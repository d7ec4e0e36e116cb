//! The bodies of `POST /admin/v1/users/{external_id}/preference_link`: how
//! long the link lasts, and the link (docs/API.md §6, "Preference page").

use crate::extract::Given;
use herald_engine::delivery::clock::Span;
use herald_engine::model::Timestamp;
use herald_engine::Validator;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// How long a link lasts unless the request says: 30 days.
pub const DEFAULT_EXPIRES_IN_MS: i64 = 30 * 86_400_000;
/// The longest a link may last: a year.
pub const MAX_EXPIRES_IN_DAYS: i64 = 365;

#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"expires_in": "30d"}))]
pub struct PreferenceLinkInput {
    /// How long the link works: a duration such as `"15m"`, `"1h"`, `"30d"`
    /// (at most 365 days; default 30 days).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub expires_in: Given<String>,
}

impl PreferenceLinkInput {
    /// The link's lifetime in milliseconds.
    pub fn validate(&self) -> herald_engine::Result<i64> {
        let mut v = Validator::new();
        let ms = match &self.expires_in {
            Given::Absent | Given::Null => Some(DEFAULT_EXPIRES_IN_MS),
            Given::Value(s) => match Span::parse(s) {
                Ok(span) => Some(span.millis()),
                // a duration past the span's own bound is a number out of range too
                Err(m) if m.contains("at most") => Some(i64::MAX),
                Err(m) => {
                    v.push("expires_in", "format", m);
                    None
                }
            },
            Given::Wrong(_) => {
                v.push(
                    "expires_in",
                    "format",
                    "must be a duration string such as \"30d\"",
                );
                None
            }
        };
        if ms.is_some_and(|ms| ms > MAX_EXPIRES_IN_DAYS * 86_400_000) {
            v.push(
                "expires_in",
                "number",
                format!("must be at most {MAX_EXPIRES_IN_DAYS} days"),
            );
        }
        v.finish()?;
        Ok(ms.unwrap_or(DEFAULT_EXPIRES_IN_MS))
    }
}

/// A signed link to the user's hosted preference page.
#[derive(Serialize, ToSchema)]
pub struct PreferenceLink {
    /// When the link stops working (whole seconds).
    #[schema(value_type = DateTime<Utc>)]
    pub expires_at: Timestamp,
    /// The token alone (the last segment of `url`).
    pub token: String,
    /// `PUBLIC_URL/p/TOKEN`: the page to send the user to.
    pub url: String,
}

/// The preference page's form (`application/x-www-form-urlencoded`): the
/// CSRF value, the name of every checkbox shown, and the checked ones, each
/// as `NAME=on` (`ct.email`, `category.comments`, `category.comments.sms`,
/// `flow.welcome`).
#[derive(Deserialize, ToSchema)]
pub struct PreferenceForm {
    /// The value the page put in the form.
    pub csrf: String,
    /// Each checkbox the page showed (an unchecked box is not posted).
    pub shown: Vec<String>,
}

/// The body of a one-click unsubscribe POST (RFC 8058): a mail client sends
/// `List-Unsubscribe=One-Click`, the confirmation page's form the same.
/// Optional, and not checked: any body, or none, unsubscribes.
#[derive(Deserialize, ToSchema)]
pub struct UnsubscribeForm {
    /// `One-Click`.
    #[serde(rename = "List-Unsubscribe")]
    #[schema(example = "One-Click")]
    pub list_unsubscribe: Option<String>,
}
