//! The bodies of preferences: a user's (or the project's defaults), their
//! update, the `?explain` part of an answer, preference categories
//! (`/admin/v1/categories`) and a flow's `categories`. What they decide is
//! `rules::preferences`.

use crate::extract::{Given, Obj};
use herald_engine::actors::PreferenceSetting;
use herald_engine::catalog::MAX_FLOW_CATEGORIES;
use herald_engine::model::{self, ChannelType, Timestamp};
use herald_engine::rules::critical;
use herald_engine::rules::preferences::{Layers, Source};
use herald_engine::rules::quiet_hours::QuietHours;
use herald_engine::{validate, Validator};
use serde::{Deserialize, Serialize};
use serde_json::Map;
use serde_json::Value;
use std::collections::BTreeMap;
use utoipa::ToSchema;

// ================================================================ a user's preferences

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

impl ChannelTypeFlags {
    /// Each channel type's flag, as `on` says.
    pub fn of(on: impl Fn(ChannelType) -> bool) -> Self {
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
    /// The categories it belongs to (each also listed in `categories`).
    pub categories: Vec<String>,
    pub channel_types: ChannelTypeFlags,
    /// Present, and true, for a critical flow only: it ignores preferences,
    /// so it shows enabled on every channel type, and turning it off is
    /// refused (422 `exclusion`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub critical: bool,
    pub enabled: bool,
    pub name: String,
}

/// A user's (or the project's default) preferences as they apply: every
/// category of the project and every flow that is not archived, by handle.
#[derive(Serialize, ToSchema)]
pub struct Preferences {
    pub categories: BTreeMap<String, CategoryPreferences>,
    pub channel_types: ChannelTypeFlags,
    /// With `?explain=true` only: where each value comes from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<PreferencesExplain>,
    pub flows: BTreeMap<String, FlowPreferences>,
    /// When deliveries other than in_app wait (null: never): the user's
    /// own, else the project's default.
    #[schema(value_type = Option<Value>)]
    pub quiet_hours: Option<Value>,
}

impl Preferences {
    /// The full object, effective values (the user's over the project's
    /// defaults, else on): all six channel types, every category, every
    /// live flow. A flow whose deliveries ignore preferences shows what
    /// applies to it: on.
    pub fn new(s: &PreferenceSetting, explain: bool) -> Self {
        let l = Layers::new(&s.user, &s.defaults);
        let is_on = |v: Option<(bool, _)>| v.is_none_or(|(on, _)| on);
        let flows = s
            .flows
            .iter()
            .map(|flow| {
                let applies = critical::opt_outs_apply(flow);
                let h = &flow.handle;
                let view = FlowPreferences {
                    categories: flow.categories.clone(),
                    channel_types: ChannelTypeFlags::of(|t| {
                        !applies || is_on(l.flow_channel(h, t))
                    }),
                    critical: !applies,
                    enabled: !applies || is_on(l.flow(h)),
                    name: flow.name.clone(),
                };
                (h.clone(), view)
            })
            .collect();
        Preferences {
            categories: s
                .categories
                .iter()
                .map(|(h, c)| (h.clone(), CategoryPreferences::new(&l, h, c)))
                .collect(),
            channel_types: ChannelTypeFlags::of(|t| is_on(l.channel_type(t))),
            explain: explain.then(|| PreferencesExplain::new(&l, &s.categories, &s.flows)),
            flows,
            quiet_hours: l.quiet_hours().map(QuietHours::view),
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
pub(crate) fn channel_types_of(
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
    /// By category handle, the same shape as a flow's; an undeclared
    /// handle is a 422 `inclusion`.
    #[serde(default)]
    #[schema(value_type = Option<BTreeMap<String, FlowPreferencesInput>>)]
    pub categories: Given<BTreeMap<String, Value>>,
    /// When deliveries other than in_app wait; null clears them (a user
    /// then follows the project's default, if any).
    #[serde(default)]
    #[schema(value_type = Option<Value>)]
    pub quiet_hours: Given<Value>,
}

impl PreferencesInput {
    /// The changes, every problem at its path (`live`: the project's flows
    /// that are not archived; another handle is a 422 `inclusion`, turning
    /// a critical one off a 422 `exclusion`; `declared`: the project's
    /// categories, likewise).
    pub fn validate(
        mut self, live: &[model::Flow], declared: &BTreeMap<String, model::Category>,
    ) -> herald_engine::Result<model::Preferences> {
        let mut v = Validator::new();
        let mut p = model::Preferences {
            channel_types: channel_types_of(&mut self.channel_types, "channel_types", &mut v),
            ..Default::default()
        };
        p.categories = preference_categories(&self.categories, declared, &mut v);
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
                    if let Some(pref) = setting_of(fp, &path, &mut v) {
                        p.flows.insert(h.clone(), pref);
                    }
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

// ================================================================ categories

/// A preference category: a group of flows a user can turn off together
/// (a flow names its categories; a user's preferences set them).
#[derive(Serialize, ToSchema)]
pub struct Category {
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Timestamp,
    pub description: Option<String>,
    pub handle: String,
    pub name: String,
    #[schema(value_type = DateTime<Utc>)]
    pub updated_at: Timestamp,
}

impl Category {
    pub fn new(handle: &str, c: &model::Category) -> Self {
        Category {
            created_at: c.created_at,
            description: c.description.clone(),
            handle: handle.to_string(),
            name: c.name.clone(),
            updated_at: c.updated_at,
        }
    }
}

/// Every category of the project, by handle order (there are at most 100,
/// so the list is not paged).
#[derive(Serialize, ToSchema)]
pub struct CategoryList {
    pub data: Vec<Category>,
}

impl CategoryList {
    pub fn new(all: &BTreeMap<String, model::Category>) -> Self {
        CategoryList {
            data: all.iter().map(|(h, c)| Category::new(h, c)).collect(),
        }
    }
}

/// Declares a category or changes its name and description.
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"name": "Comments", "description": "Replies and mentions"}))]
pub struct CategoryInput {
    #[serde(default)]
    #[schema(value_type = String, required = true, min_length = 1, max_length = 200)]
    pub name: Given<String>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 1000)]
    pub description: Given<String>,
}

impl CategoryInput {
    /// The name and description (a PUT replaces both).
    pub fn validate(&self) -> herald_engine::Result<(String, Option<String>)> {
        let mut v = Validator::new();
        let name = self.name.required_text("name", 200, &mut v);
        let description = self.description.text("description", 1000, &mut v).flatten();
        v.finish()?;
        Ok((name.unwrap_or_default(), description))
    }
}

/// A flow's `categories`: distinct handles of declared categories, at most
/// `MAX_FLOW_CATEGORIES`; `None` when absent or wrong (the problem in `v`).
pub fn flow_categories(
    given: &Given<Value>, declared: &BTreeMap<String, model::Category>, v: &mut Validator,
) -> Option<Vec<String>> {
    let items = match given {
        Given::Absent => return None,
        Given::Null => return Some(vec![]),
        Given::Value(Value::Array(a)) => a,
        Given::Value(_) | Given::Wrong(_) => {
            v.push(
                "categories",
                "format",
                "must be an array of category handles",
            );
            return None;
        }
    };
    if items.len() > MAX_FLOW_CATEGORIES {
        v.push(
            "categories",
            "length",
            format!("a flow belongs to at most {MAX_FLOW_CATEGORIES} categories"),
        );
        return None;
    }
    let mut out: Vec<String> = vec![];
    for (i, item) in items.iter().enumerate() {
        let path = format!("categories.{i}");
        match item.as_str() {
            Some(h) if !declared.contains_key(h) => {
                v.push(
                    path,
                    "inclusion",
                    "no category with this handle (declare it with PUT /admin/v1/categories/{handle})",
                );
            }
            Some(h) if out.iter().any(|o| o == h) => v.push(path, "unique", "listed twice"),
            Some(h) => out.push(h.to_string()),
            None => v.push(path, "format", "must be a category handle"),
        }
    }
    Some(out)
}

/// Whether `handle` is a category handle (the shape of a flow handle).
pub fn is_category_handle(handle: &str) -> bool {
    validate::is_handle(handle)
}

/// A preferences update's `categories`: each a declared category's
/// setting, the same shape as a flow's (`enabled`, `channel_types`).
pub fn preference_categories(
    given: &Given<BTreeMap<String, Value>>, declared: &BTreeMap<String, model::Category>,
    v: &mut Validator,
) -> BTreeMap<String, model::FlowPreference> {
    let mut out = BTreeMap::new();
    let all = match given {
        Given::Absent | Given::Null => return out,
        Given::Wrong(_) => {
            v.push("categories", "format", "must be an object");
            return out;
        }
        Given::Value(all) => all,
    };
    for (h, cp) in all {
        let path = format!("categories.{h}");
        if !declared.contains_key(h) {
            v.push(path, "inclusion", "no category with this handle");
            continue;
        }
        if let Some(pref) = setting_of(cp, &path, v) {
            out.insert(h.clone(), pref);
        }
    }
    out
}

/// A flow's or a category's setting in an update (`{enabled?,
/// channel_types?}`) at `path`; `None` when it is not an object (the
/// problem in `v`).
fn setting_of(given: &Value, path: &str, v: &mut Validator) -> Option<model::FlowPreference> {
    let Given::Value(Obj(mut fp)) = Given::<Obj<FlowPreferencesInput>>::of(Some(given)) else {
        v.push(path, "format", "must be an object");
        return None;
    };
    Some(model::FlowPreference {
        enabled: fp.enabled.flag(&format!("{path}.enabled"), v),
        channel_types: channel_types_of(&mut fp.channel_types, &format!("{path}.channel_types"), v),
    })
}

// ================================================================ the answer

/// A category as a user's preferences show it: effective values.
#[derive(Serialize, ToSchema)]
pub struct CategoryPreferences {
    pub channel_types: ChannelTypeFlags,
    pub enabled: bool,
    pub name: String,
}

impl CategoryPreferences {
    pub fn new(l: &Layers<'_>, handle: &str, c: &model::Category) -> Self {
        CategoryPreferences {
            channel_types: ChannelTypeFlags::of(|t| {
                l.category_channel(handle, t).is_none_or(|(on, _)| on)
            }),
            enabled: l.category(handle).is_none_or(|(on, _)| on),
            name: c.name.clone(),
        }
    }
}

/// Where a value of a preferences answer comes from (`?explain=true`):
/// `user` (the user set it), `default` (the project's defaults set it, or
/// nothing did: on), `critical` (a critical flow: on whatever is set).
#[derive(Serialize, ToSchema, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub enum PreferenceSource {
    User,
    Default,
    Critical,
}

impl From<Option<(bool, Source)>> for PreferenceSource {
    fn from(v: Option<(bool, Source)>) -> Self {
        match v.map(|(_, s)| s) {
            Some(Source::User) => PreferenceSource::User,
            Some(Source::Critical) => PreferenceSource::Critical,
            Some(Source::Default) | None => PreferenceSource::Default,
        }
    }
}

/// One source per channel type.
#[derive(Serialize, ToSchema)]
pub struct ChannelTypeSources {
    pub chat: PreferenceSource,
    pub email: PreferenceSource,
    pub in_app: PreferenceSource,
    pub mobile_push: PreferenceSource,
    pub sms: PreferenceSource,
    pub web_push: PreferenceSource,
}

impl ChannelTypeSources {
    fn of(f: impl Fn(ChannelType) -> PreferenceSource) -> Self {
        ChannelTypeSources {
            chat: f(ChannelType::Chat),
            email: f(ChannelType::Email),
            in_app: f(ChannelType::InApp),
            mobile_push: f(ChannelType::MobilePush),
            sms: f(ChannelType::Sms),
            web_push: f(ChannelType::WebPush),
        }
    }
}

/// The sources of a flow's or a category's values.
#[derive(Serialize, ToSchema)]
pub struct SettingSources {
    pub channel_types: ChannelTypeSources,
    pub enabled: PreferenceSource,
}

/// `explain` of a preferences answer: the same keys, each value's source.
#[derive(Serialize, ToSchema)]
pub struct PreferencesExplain {
    pub categories: BTreeMap<String, SettingSources>,
    pub channel_types: ChannelTypeSources,
    pub flows: BTreeMap<String, SettingSources>,
    pub quiet_hours: PreferenceSource,
}

impl PreferencesExplain {
    pub fn new(
        l: &Layers<'_>, categories: &BTreeMap<String, model::Category>, flows: &[model::Flow],
    ) -> Self {
        let critical = |f: &model::Flow| !herald_engine::rules::critical::opt_outs_apply(f);
        PreferencesExplain {
            categories: categories
                .keys()
                .map(|h| {
                    let s = SettingSources {
                        channel_types: ChannelTypeSources::of(|t| l.category_channel(h, t).into()),
                        enabled: l.category(h).into(),
                    };
                    (h.clone(), s)
                })
                .collect(),
            channel_types: ChannelTypeSources::of(|t| l.channel_type(t).into()),
            flows: flows
                .iter()
                .map(|f| {
                    let h = &f.handle;
                    let s = if critical(f) {
                        SettingSources {
                            channel_types: ChannelTypeSources::of(|_| PreferenceSource::Critical),
                            enabled: PreferenceSource::Critical,
                        }
                    } else {
                        SettingSources {
                            channel_types: ChannelTypeSources::of(|t| l.flow_channel(h, t).into()),
                            enabled: l.flow(h).into(),
                        }
                    };
                    (h.clone(), s)
                })
                .collect(),
            quiet_hours: if l.user.quiet_hours.is_some() {
                PreferenceSource::User
            } else {
                PreferenceSource::Default
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prefs(body: Value) -> herald_engine::Result<model::Preferences> {
        serde_json::from_value::<PreferencesInput>(body)
            .unwrap()
            .validate(&[], &BTreeMap::new())
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
}
