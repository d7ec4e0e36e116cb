//! Users, what a run names them by, patches of them, and their preferences.

use super::{ChannelType, Timestamp};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use uuid::Uuid;

/// A user as stored. What the APIs, the live feed and the events show of it
/// is `views::UserView`, built from it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct User {
    pub id: Uuid,
    pub external_id: String,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub email: Option<String>,
    pub phone: Option<String>,
    pub avatar: Option<String>,
    pub locale: Option<String>,
    pub timezone: Option<String>,
    pub custom_fields: Map<String, Value>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// A user as a subscription names it: its id and external id, all that a
/// topic subscription stores of it (a bulk subscribe reads no user records).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserRef {
    pub id: Uuid,
    pub external_id: String,
}

impl From<&User> for UserRef {
    fn from(u: &User) -> Self {
        UserRef {
            id: u.id,
            external_id: u.external_id.clone(),
        }
    }
}

/// The profile fields of a user PUT. `None` = not given; `Some(None)` = `null` (clear).
#[derive(Debug, Clone, Default)]
pub struct UserPatch {
    pub first_name: Option<Option<String>>,
    pub last_name: Option<Option<String>>,
    pub email: Option<Option<String>>,
    pub phone: Option<Option<String>>,
    pub avatar: Option<Option<String>>,
    pub locale: Option<Option<String>>,
    pub timezone: Option<Option<String>>,
    pub custom_fields: Option<Option<Map<String, Value>>>,
}

impl UserPatch {
    pub fn is_empty(&self) -> bool {
        self.first_name.is_none()
            && self.last_name.is_none()
            && self.email.is_none()
            && self.phone.is_none()
            && self.avatar.is_none()
            && self.locale.is_none()
            && self.timezone.is_none()
            && self.custom_fields.is_none()
    }

    /// Applies the patch; returns whether anything changed.
    pub fn apply(&self, u: &mut User) -> bool {
        let before = u.clone();
        fn set(dst: &mut Option<String>, v: &Option<Option<String>>) {
            if let Some(v) = v {
                *dst = v.clone();
            }
        }
        set(&mut u.first_name, &self.first_name);
        set(&mut u.last_name, &self.last_name);
        set(&mut u.email, &self.email);
        set(&mut u.phone, &self.phone);
        set(&mut u.avatar, &self.avatar);
        set(&mut u.locale, &self.locale);
        set(&mut u.timezone, &self.timezone);
        if let Some(cf) = &self.custom_fields {
            u.custom_fields = cf.clone().unwrap_or_default();
        }
        *u != before
    }
}

// ---------------------------------------------------------------- preferences

/// A flow's or a category's setting: on or off as a whole, and per
/// channel type; `None` or a missing type is "not set" (the layer below
/// decides, see `rules::preferences`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FlowPreference {
    pub enabled: Option<bool>,
    pub channel_types: std::collections::BTreeMap<ChannelType, bool>,
}

impl FlowPreference {
    fn merge(&mut self, patch: &FlowPreference) {
        if patch.enabled.is_some() {
            self.enabled = patch.enabled;
        }
        for (t, v) in &patch.channel_types {
            self.channel_types.insert(*t, *v);
        }
    }
}

/// What a user (or a project's defaults) set; everything else is not set.
/// Whether a delivery goes out is `rules::preferences`' to say.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Preferences {
    pub channel_types: std::collections::BTreeMap<ChannelType, bool>,
    pub flows: std::collections::BTreeMap<String, FlowPreference>,
    /// By category handle (`Project::categories`). Stored before categories
    /// existed: none.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub categories: std::collections::BTreeMap<String, FlowPreference>,
    /// When non-in_app deliveries wait (`rules::quiet_hours`); `None`: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet_hours: Option<crate::rules::quiet_hours::QuietHours>,
    /// In a patch only: `quiet_hours: null` was given, so `merge` clears
    /// them (`quiet_hours: None` there means "leave them"). Never stored.
    #[serde(skip)]
    pub clear_quiet_hours: bool,
}

impl Preferences {
    /// Nothing set.
    pub fn is_empty(&self) -> bool {
        self.channel_types.is_empty()
            && self.flows.is_empty()
            && self.categories.is_empty()
            && self.quiet_hours.is_none()
    }

    /// Sets what `patch` sets, keeps the rest.
    pub fn merge(&mut self, patch: &Preferences) {
        for (t, v) in &patch.channel_types {
            self.channel_types.insert(*t, *v);
        }
        for (h, fp) in &patch.flows {
            self.flows.entry(h.clone()).or_default().merge(fp);
        }
        for (h, cp) in &patch.categories {
            self.categories.entry(h.clone()).or_default().merge(cp);
        }
        if patch.clear_quiet_hours {
            self.quiet_hours = None;
        }
        if let Some(q) = &patch.quiet_hours {
            self.quiet_hours = Some(q.clone());
        }
    }
}
