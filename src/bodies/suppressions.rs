//! The bodies of a project's suppression list (`/admin/v1/suppressions`):
//! the item shown and the input that adds an address by hand, checked here
//! for shape; what an address is (its normal form) is the engine's
//! (`herald_engine::suppression`).

use crate::extract::Given;
use herald_engine::model::{self, ChannelType, SuppressionReason, Timestamp};
use herald_engine::suppression::address;
use herald_engine::Validator;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// An address the project no longer sends to.
#[derive(Serialize, ToSchema)]
pub struct Suppression {
    /// The address, normalised: an email lower-cased, a phone in E.164.
    pub address: String,
    /// `email` or `sms`.
    #[schema(value_type = String, example = "email")]
    pub channel_type: ChannelType,
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Timestamp,
    /// `manual` (added through the API), `hard_bounce`, `soft_bounce`
    /// (three in 7 days) or `complaint` (reported by a provider).
    pub reason: SuppressionReason,
}

impl From<&model::Suppression> for Suppression {
    fn from(s: &model::Suppression) -> Self {
        Suppression {
            address: s.address.clone(),
            channel_type: s.channel_type,
            created_at: s.created_at,
            reason: s.reason,
        }
    }
}

/// Suppresses an address by hand.
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"channel_type": "email", "address": "bounced@example.com", "reason": "manual"}))]
pub struct SuppressionInput {
    /// `email` or `sms`.
    #[serde(default)]
    #[schema(value_type = SuppressionChannelType, required = true)]
    pub channel_type: Given<String>,
    /// An email address, or a phone number in E.164 (`+15551234567`).
    #[serde(default)]
    #[schema(value_type = String, required = true, min_length = 1, max_length = 320)]
    pub address: Given<String>,
    /// Only `manual` (the default): the other reasons come from providers'
    /// reports.
    #[serde(default)]
    #[schema(value_type = Option<ManualReason>)]
    pub reason: Given<String>,
}

/// The channel types whose addresses a project suppresses (the document's
/// enum of `SuppressionInput.channel_type`, which is read as a string so
/// that another value is a 422 at its field).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SuppressionChannelType {
    Email,
    Sms,
}

/// The one reason the API gives a suppression (the others come from
/// providers' reports).
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ManualReason {
    Manual,
}

/// A checked `SuppressionInput`: the channel type and the address as given
/// (the engine normalises it).
pub struct NewSuppression {
    pub channel_type: ChannelType,
    pub address: String,
}

impl SuppressionInput {
    pub fn validate(&self) -> herald_engine::Result<NewSuppression> {
        let mut v = Validator::new();
        let ct = match self.channel_type.required_text("channel_type", 64, &mut v) {
            Some(t) => match ChannelType::parse(&t).filter(|t| address::covers(*t)) {
                Some(t) => Some(t),
                None => {
                    v.push("channel_type", "inclusion", "one of email, sms");
                    None
                }
            },
            None => None,
        };
        let raw = self.address.required_text("address", 320, &mut v);
        if let (Some(ct), Some(raw)) = (ct, &raw) {
            if let Err(m) = address::normalize(ct, raw) {
                v.push("address", "format", m);
            }
        }
        match self.reason.text("reason", 64, &mut v) {
            None | Some(None) => {}
            Some(Some(r)) if r == "manual" => {}
            Some(Some(_)) => v.push(
                "reason",
                "inclusion",
                "only manual: the other reasons come from providers' reports",
            ),
        }
        v.finish()?;
        match (ct, raw) {
            (Some(channel_type), Some(address)) => Ok(NewSuppression {
                channel_type,
                address,
            }),
            // Each `None` pushed its field's error, so `finish` refused.
            _ => Err(herald_engine::Error::field(
                "channel_type",
                "required",
                "is required",
            )),
        }
    }
}
