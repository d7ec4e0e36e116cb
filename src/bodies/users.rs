//! The bodies of users and run recipients: the profile fields a user or an
//! inline recipient carries, and the schemas of the values they share (an
//! external id, a time zone, an http(s) URL).

use serde_json::{Map, Value};
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

fn str_schema() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String)
}

/// An absolute http(s) URL (the engine's pattern, beside the check it describes).
pub use herald_actors::validate::HTTP_URL;

/// An avatar: an absolute http(s) URL of at most 1,000 characters, or null.
fn avatar_schema() -> ObjectBuilder {
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
#[derive(ToSchema)]
#[schema(example = json!({"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com", "locale": "en-GB", "timezone": "Europe/London", "custom_fields": {"plan": "pro"}}))]
pub struct UserInput {
    #[schema(max_length = 1000)]
    pub first_name: Option<String>,
    #[schema(max_length = 1000)]
    pub last_name: Option<String>,
    #[schema(format = Email, max_length = 1000)]
    pub email: Option<String>,
    #[schema(max_length = 1000)]
    pub phone: Option<String>,
    /// An absolute http(s) URL.
    #[schema(schema_with = avatar_schema)]
    pub avatar: Option<String>,
    /// A BCP 47 language tag (well-formed and made of registered subtags).
    #[schema(example = "en-GB", format = "bcp47", max_length = 64)]
    pub locale: Option<String>,
    #[schema(value_type = Option<TimeZone>, example = "Europe/Paris")]
    pub timezone: Option<String>,
    /// Any JSON object, at most 64 KiB serialised.
    pub custom_fields: Option<Map<String, Value>>,
}

/// A run recipient identified inline: `external_id` plus any user fields.
#[derive(ToSchema)]
pub struct RecipientInput {
    #[schema(min_length = 1, max_length = 255)]
    pub external_id: String,
    #[schema(max_length = 1000)]
    pub first_name: Option<String>,
    #[schema(max_length = 1000)]
    pub last_name: Option<String>,
    #[schema(format = Email, max_length = 1000)]
    pub email: Option<String>,
    #[schema(max_length = 1000)]
    pub phone: Option<String>,
    #[schema(schema_with = avatar_schema)]
    pub avatar: Option<String>,
    /// A BCP 47 language tag (well-formed and made of registered subtags).
    #[schema(format = "bcp47", max_length = 64)]
    pub locale: Option<String>,
    #[schema(value_type = Option<TimeZone>)]
    pub timezone: Option<String>,
    pub custom_fields: Option<Map<String, Value>>,
}
