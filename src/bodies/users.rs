//! The bodies of users and run recipients: the profile fields a user or an
//! inline recipient carries, the schemas of the values they share (an
//! external id, a time zone, an http(s) URL). A user's preferences are in
//! `preferences.rs`. The User response is the engine's `model::User` itself (the live feed and the
//! webhooks show it too).

use crate::extract::Given;
use herald_engine::model;
use herald_engine::{validate, Validator};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

fn str_schema() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String)
}

/// An absolute http(s) URL (the engine's pattern, beside the check it describes).
pub use herald_engine::validate::HTTP_URL;

/// An avatar (or a brand's logo or support page): an absolute http(s) URL
/// of at most 1,000 characters, or null.
pub(crate) fn avatar_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::SchemaType::from_iter([
            Type::String,
            Type::Null,
        ]))
        .max_length(Some(1000))
        .pattern(Some(HTTP_URL))
        .description(Some("An absolute http(s) URL."))
}

/// `ExternalId`: a user's external id, 1 to 255 characters.
pub struct ExternalId;

impl PartialSchema for ExternalId {
    fn schema() -> RefOr<Schema> {
        str_schema()
            .min_length(Some(1))
            .max_length(Some(255))
            .into()
    }
}

impl ToSchema for ExternalId {}

/// `TimeZone`: every IANA time zone name the service knows.
pub struct TimeZone;

impl PartialSchema for TimeZone {
    fn schema() -> RefOr<Schema> {
        let names: Vec<&str> = chrono_tz::TZ_VARIANTS.iter().map(|t| t.name()).collect();
        str_schema()
            .description(Some("An IANA time zone."))
            .enum_values(Some(names))
            .into()
    }
}

impl ToSchema for TimeZone {}

/// Profile fields of a user (partial update: only given fields change, `null` clears).
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com", "locale": "en-GB", "timezone": "Europe/London", "custom_fields": {"plan": "pro"}}))]
pub struct UserInput {
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 1000)]
    pub first_name: Given<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 1000)]
    pub last_name: Given<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, format = Email, max_length = 1000)]
    pub email: Given<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 1000)]
    pub phone: Given<String>,
    /// An absolute http(s) URL.
    #[serde(default)]
    #[schema(schema_with = avatar_schema)]
    pub avatar: Given<String>,
    /// A BCP 47 language tag (well-formed and made of registered subtags).
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "en-GB", format = "bcp47", max_length = 64)]
    pub locale: Given<String>,
    #[serde(default)]
    #[schema(value_type = Option<TimeZone>, example = "Europe/Paris")]
    pub timezone: Given<String>,
    /// Any JSON object, at most 64 KiB serialised.
    #[serde(default)]
    #[schema(value_type = Option<Map<String, Value>>)]
    pub custom_fields: Given<Map<String, Value>>,
}

impl UserInput {
    /// The change, every problem at `{prefix}.{field}` (`field` alone without one).
    pub fn validate(&self, prefix: &str, v: &mut Validator) -> model::UserPatch {
        let path = |k: &str| {
            if prefix.is_empty() {
                k.to_string()
            } else {
                format!("{prefix}.{k}")
            }
        };
        // a string of at most MAX_STRING characters that passes `check` (reason, message)
        let text = |k: &str,
                    given: &Given<String>,
                    check: &dyn Fn(&str) -> Option<(&'static str, &'static str)>,
                    v: &mut Validator| {
            match given.text(&path(k), validate::MAX_STRING, v) {
                Some(Some(s)) => match check(&s) {
                    Some((reason, message)) => {
                        v.push(path(k), reason, message);
                        None
                    }
                    None => Some(Some(s)),
                },
                other => other,
            }
        };
        let any = |_: &str| None;
        let mut p = model::UserPatch {
            first_name: text("first_name", &self.first_name, &any, v),
            last_name: text("last_name", &self.last_name, &any, v),
            email: text(
                "email",
                &self.email,
                &|s| (!validate::is_email(s)).then_some(("format", "must be an email address")),
                v,
            ),
            phone: text("phone", &self.phone, &any, v),
            avatar: text(
                "avatar",
                &self.avatar,
                &|s| {
                    (!validate::is_http_url(s))
                        .then_some(("format", "must be an absolute http(s) URL"))
                },
                v,
            ),
            locale: text(
                "locale",
                &self.locale,
                &|s| {
                    (!validate::is_locale(s)).then_some(("format", "must be a BCP 47 language tag"))
                },
                v,
            ),
            timezone: text(
                "timezone",
                &self.timezone,
                &|s| {
                    (!validate::is_timezone(s))
                        .then_some(("inclusion", "must be an IANA time zone"))
                },
                v,
            ),
            custom_fields: None,
        };
        p.custom_fields = match &self.custom_fields {
            Given::Absent => None,
            Given::Null => Some(None),
            Given::Value(m) => {
                let size = serde_json::to_vec(m).map(|b| b.len()).unwrap_or(usize::MAX);
                if size > validate::MAX_CUSTOM_FIELDS {
                    v.push(path("custom_fields"), "length", "at most 64 KiB serialised");
                    None
                } else {
                    Some(Some(m.clone()))
                }
            }
            Given::Wrong(_) => {
                v.push(path("custom_fields"), "format", "must be an object");
                None
            }
        };
        p
    }
}

/// A run recipient or actor identified inline: `external_id` plus any user
/// fields (`UserInput`).
#[derive(Deserialize, Default)]
pub struct RecipientInput {
    #[serde(default)]
    pub external_id: Given<String>,
    #[serde(flatten)]
    pub profile: UserInput,
}

impl PartialSchema for RecipientInput {
    /// `UserInput`'s properties and `external_id`, which is required (written
    /// out rather than derived: utoipa would make a flattened field an `allOf`).
    fn schema() -> RefOr<Schema> {
        let RefOr::T(Schema::Object(mut o)) = UserInput::schema() else {
            return UserInput::schema();
        };
        o.properties
            .insert("external_id".into(), ExternalId::schema());
        o.required = vec!["external_id".into()];
        o.description =
            Some("A run recipient identified inline: `external_id` plus any user fields.".into());
        o.example = None;
        o.examples = vec![];
        Schema::Object(o).into()
    }
}

impl ToSchema for RecipientInput {}

impl RecipientInput {
    /// The external id and the change, every problem under `prefix`
    /// (`{prefix}.external_id`, `{prefix}.{field}`); `None` without a usable
    /// external id.
    pub fn validate(&self, prefix: &str, v: &mut Validator) -> Option<(String, model::UserPatch)> {
        let at = format!("{prefix}.external_id");
        let ext = match &self.external_id {
            Given::Value(s) => validate::external_id(s, &at, v).then(|| s.clone()),
            Given::Absent | Given::Null => {
                v.push(at, "required", "is required");
                None
            }
            Given::Wrong(_) => {
                v.push(at, "format", "must be a string");
                None
            }
        };
        let patch = self.profile.validate(prefix, v);
        ext.map(|e| (e, patch))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_input_reports_every_problem_at_its_path() {
        let input: UserInput = serde_json::from_str(
            r#"{"email":"x","avatar":"ftp://a/b","timezone":"Nowhere/City","custom_fields":[1],"first_name":null}"#,
        )
        .unwrap();
        let mut v = Validator::new();
        let p = input.validate("recipients.0", &mut v);
        let got: Vec<(String, &str)> = v
            .fields
            .iter()
            .map(|f| (f.field.clone(), f.reason))
            .collect();
        assert!(got.contains(&("recipients.0.email".into(), "format")));
        assert!(got.contains(&("recipients.0.avatar".into(), "format")));
        assert!(got.contains(&("recipients.0.timezone".into(), "inclusion")));
        assert!(got.contains(&("recipients.0.custom_fields".into(), "format")));
        assert_eq!(p.first_name, Some(None), "null clears");
    }
}

/// The erasure of a deleted user's notifications (`DELETE
/// /admin/v1/users/{external_id}?erase=true`, `GET /admin/v1/erasures/{id}`).
#[derive(Serialize, ToSchema)]
pub struct Erasure {
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub completed_at: Option<model::Timestamp>,
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: model::Timestamp,
    pub id: uuid::Uuid,
    /// The user's notifications removed so far (with their deliveries).
    pub notifications_removed: u64,
    /// `running` until nothing of the user's notifications, deliveries, feed
    /// entries and events remains, then `complete`.
    #[schema(value_type = String, example = "running")]
    pub status: herald_engine::storage::ErasureStatus,
}

impl From<&herald_engine::storage::Erasure> for Erasure {
    fn from(e: &herald_engine::storage::Erasure) -> Self {
        Erasure {
            completed_at: e.completed_at,
            created_at: e.created_at,
            id: e.id,
            notifications_removed: e.notifications_removed,
            status: e.status,
        }
    }
}
