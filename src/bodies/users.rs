//! The bodies of users and run recipients: the profile fields a user or an
//! inline recipient carries, the schemas of the values they share (an
//! external id, a time zone, an http(s) URL), and a user's preferences (with
//! their quiet hours, read by the engine's `rules::quiet_hours`). The
//! User response is the engine's `model::User` itself (the live feed and the
//! webhooks show it too).

use crate::extract::{Given, Obj};
use herald_engine::model::{self, ChannelType};
use herald_engine::rules::critical;
use herald_engine::rules::quiet_hours::QuietHours;
use herald_engine::{validate, Validator};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

fn str_schema() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String)
}

/// An absolute http(s) URL (the engine's pattern, beside the check it describes).
pub use herald_engine::validate::HTTP_URL;

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

// ================================================================ preferences

/// One flag per channel type (all six present in a response).
#[derive(Serialize, ToSchema)]
pub struct ChannelTypeFlags {
    pub chat: bool,
    pub email: bool,
    pub in_app: bool,
    pub mobile_push: bool,
    pub sms: bool,
    pub web_push: bool,
}

impl From<&BTreeMap<ChannelType, bool>> for ChannelTypeFlags {
    /// What a user did not turn off is on.
    fn from(m: &BTreeMap<ChannelType, bool>) -> Self {
        let on = |t| m.get(&t).copied().unwrap_or(true);
        ChannelTypeFlags {
            chat: on(ChannelType::Chat),
            email: on(ChannelType::Email),
            in_app: on(ChannelType::InApp),
            mobile_push: on(ChannelType::MobilePush),
            sms: on(ChannelType::Sms),
            web_push: on(ChannelType::WebPush),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct FlowPreferences {
    pub channel_types: ChannelTypeFlags,
    /// Present, and true, for a critical flow only: it ignores preferences,
    /// so it shows enabled on every channel type, and turning it off is
    /// refused (422 `exclusion`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub critical: bool,
    pub enabled: bool,
    pub name: String,
}

/// A user's preferences: every flow of the project that is not archived, by handle.
#[derive(Serialize, ToSchema)]
pub struct Preferences {
    pub channel_types: ChannelTypeFlags,
    pub flows: BTreeMap<String, FlowPreferences>,
    /// When deliveries other than in_app wait (null: never).
    #[schema(value_type = Option<Value>)]
    pub quiet_hours: Option<Value>,
}

impl Preferences {
    /// The full object: all six channel types, every given flow. A flow
    /// whose deliveries ignore preferences shows what applies to it: on.
    pub fn new(p: &model::Preferences, flows: &[model::Flow]) -> Self {
        let flows = flows
            .iter()
            .map(|flow| {
                let applies = critical::opt_outs_apply(flow);
                let f = match p.flows.get(&flow.handle) {
                    Some(f) if applies => f.clone(),
                    _ => model::FlowPreference::default(),
                };
                let view = FlowPreferences {
                    channel_types: ChannelTypeFlags::from(&f.channel_types),
                    critical: !applies,
                    enabled: f.enabled.unwrap_or(true),
                    name: flow.name.clone(),
                };
                (flow.handle.clone(), view)
            })
            .collect();
        Preferences {
            channel_types: ChannelTypeFlags::from(&p.channel_types),
            flows,
            quiet_hours: p.quiet_hours.as_ref().map(QuietHours::view),
        }
    }
}

/// Some channel types (a preferences update).
// Read from any object: a key that is no channel type is a 422 `inclusion` at
// its path, not a refused body, so `Deserialize` is written out; the schema
// (`deny_unknown_fields`) says no other key is allowed.
#[derive(ToSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct ChannelTypeFlagsInput {
    #[schema(value_type = Option<bool>, nullable = false)]
    pub chat: Given<bool>,
    #[schema(value_type = Option<bool>, nullable = false)]
    pub email: Given<bool>,
    #[schema(value_type = Option<bool>, nullable = false)]
    pub in_app: Given<bool>,
    #[schema(value_type = Option<bool>, nullable = false)]
    pub mobile_push: Given<bool>,
    #[schema(value_type = Option<bool>, nullable = false)]
    pub sms: Given<bool>,
    #[schema(value_type = Option<bool>, nullable = false)]
    pub web_push: Given<bool>,
    /// Keys that name no channel type.
    #[schema(ignore)]
    pub unknown: Vec<String>,
}

impl<'de> Deserialize<'de> for ChannelTypeFlagsInput {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut out = ChannelTypeFlagsInput::default();
        for (k, val) in Map::<String, Value>::deserialize(d)? {
            let given = Given::of(Some(&val));
            match ChannelType::parse(&k) {
                Some(t) => *out.flag_mut(t) = given,
                None => out.unknown.push(k),
            }
        }
        Ok(out)
    }
}

impl ChannelTypeFlagsInput {
    fn flag_mut(&mut self, t: ChannelType) -> &mut Given<bool> {
        match t {
            ChannelType::Chat => &mut self.chat,
            ChannelType::Email => &mut self.email,
            ChannelType::InApp => &mut self.in_app,
            ChannelType::MobilePush => &mut self.mobile_push,
            ChannelType::Sms => &mut self.sms,
            ChannelType::WebPush => &mut self.web_push,
        }
    }

    /// The flags given; problems at `{path}.{key}`, in key order.
    pub fn validate(&mut self, path: &str, v: &mut Validator) -> BTreeMap<ChannelType, bool> {
        let mut keys: Vec<(String, Option<ChannelType>)> = ChannelType::ALL
            .into_iter()
            .map(|t| (t.as_str().to_string(), Some(t)))
            .chain(self.unknown.iter().map(|k| (k.clone(), None)))
            .collect();
        keys.sort();
        let mut out = BTreeMap::new();
        for (k, t) in keys {
            let Some(t) = t else {
                v.push(format!("{path}.{k}"), "inclusion", "unknown channel type");
                continue;
            };
            match self.flag_mut(t) {
                Given::Absent => {}
                Given::Value(b) => {
                    out.insert(t, *b);
                }
                Given::Null | Given::Wrong(_) => {
                    v.push(format!("{path}.{k}"), "format", "must be a boolean")
                }
            }
        }
        out
    }
}

/// `channel_types` of a preferences update: an object, or null for none.
fn channel_types_of(
    given: &mut Given<ChannelTypeFlagsInput>, path: &str, v: &mut Validator,
) -> BTreeMap<ChannelType, bool> {
    match given {
        Given::Absent | Given::Null => BTreeMap::new(),
        Given::Value(c) => c.validate(path, v),
        Given::Wrong(_) => {
            v.push(path, "format", "must be an object");
            BTreeMap::new()
        }
    }
}

#[derive(Deserialize, ToSchema, Default)]
pub struct FlowPreferencesInput {
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub enabled: Given<bool>,
    #[serde(default)]
    #[schema(value_type = Option<ChannelTypeFlagsInput>)]
    pub channel_types: Given<ChannelTypeFlagsInput>,
}

/// Partial update; an unknown channel type or flow handle is a 422 `inclusion`.
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"channel_types": {"email": false}}))]
pub struct PreferencesInput {
    #[serde(default)]
    #[schema(value_type = Option<ChannelTypeFlagsInput>)]
    pub channel_types: Given<ChannelTypeFlagsInput>,
    #[serde(default)]
    #[schema(value_type = Option<BTreeMap<String, FlowPreferencesInput>>)]
    pub flows: Given<BTreeMap<String, Value>>,
    /// When deliveries other than in_app wait; null clears them.
    #[serde(default)]
    #[schema(value_type = Option<Value>)]
    pub quiet_hours: Given<Value>,
}

impl PreferencesInput {
    /// The changes, every problem at its path (`live`: the project's flows
    /// that are not archived; another handle is a 422 `inclusion`, turning
    /// a critical one off a 422 `exclusion`).
    pub fn validate(mut self, live: &[model::Flow]) -> herald_engine::Result<model::Preferences> {
        let mut v = Validator::new();
        let mut p = model::Preferences {
            channel_types: channel_types_of(&mut self.channel_types, "channel_types", &mut v),
            ..Default::default()
        };
        match &self.flows {
            Given::Absent | Given::Null => {}
            Given::Wrong(_) => v.push("flows", "format", "must be an object"),
            Given::Value(flows) => {
                for (h, fp) in flows {
                    let path = format!("flows.{h}");
                    if !live.iter().any(|f| f.handle == *h) {
                        v.push(path, "inclusion", "no flow with this handle");
                        continue;
                    }
                    let Given::Value(Obj(mut fp)) =
                        Given::<Obj<FlowPreferencesInput>>::of(Some(fp))
                    else {
                        v.push(path, "format", "must be an object");
                        continue;
                    };
                    let pref = model::FlowPreference {
                        enabled: fp.enabled.flag(&format!("{path}.enabled"), &mut v),
                        channel_types: channel_types_of(
                            &mut fp.channel_types,
                            &format!("{path}.channel_types"),
                            &mut v,
                        ),
                    };
                    p.flows.insert(h.clone(), pref);
                }
            }
        }
        match &self.quiet_hours {
            Given::Absent => {}
            Given::Null => p.clear_quiet_hours = true,
            Given::Value(q) | Given::Wrong(q) => {
                p.quiet_hours = QuietHours::parse(q, "quiet_hours", &mut v);
            }
        }
        critical::refuse_opt_outs(&p, live, &mut v);
        v.finish()?;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefs(body: Value) -> herald_engine::Result<model::Preferences> {
        serde_json::from_value::<PreferencesInput>(body)
            .unwrap()
            .validate(&[])
    }

    #[test]
    fn quiet_hours_are_set_cleared_or_left_and_checked_at_their_paths() {
        let set =
            prefs(serde_json::json!({"quiet_hours": {"from": "22:00", "to": "07:30"}})).unwrap();
        assert!(set.quiet_hours.is_some() && !set.clear_quiet_hours);
        let cleared = prefs(serde_json::json!({"quiet_hours": null})).unwrap();
        assert!(cleared.quiet_hours.is_none() && cleared.clear_quiet_hours);
        let left = prefs(serde_json::json!({})).unwrap();
        assert!(left.quiet_hours.is_none() && !left.clear_quiet_hours);
        let Err(e) = prefs(
            serde_json::json!({"quiet_hours": {"from": "25:00", "to": "07:30",
            "days": ["mon", "x"], "timezone": "Mars/Olympus"}}),
        ) else {
            panic!("refused");
        };
        let fields: Vec<&str> = e.details["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["field"].as_str().unwrap())
            .collect();
        assert_eq!(
            fields,
            [
                "quiet_hours.days.1",
                "quiet_hours.from",
                "quiet_hours.timezone"
            ]
        );
        assert!(prefs(serde_json::json!({"quiet_hours": [1]})).is_err());
    }

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
