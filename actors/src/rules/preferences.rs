//! Whether a delivery goes out, by the recipient's preferences: the one
//! precedence rule (docs/API.md §6, docs/PREFERENCES.md), written once for
//! staging, the decision trace and the `?explain` answer.
//!
//! Every setting is looked up in two layers: what the user set, else what
//! the project's defaults set, else on. A delivery of flow `h` on channel
//! type `t` goes out when every level allows it:
//!
//! 1. the channel type `t` everywhere (`channel_types[t]`);
//! 2. each category `c` of the flow, as a whole and on `t`
//!    (`categories[c].enabled`, `categories[c].channel_types[t]`);
//! 3. the flow, as a whole and on `t` (`flows[h].enabled`,
//!    `flows[h].channel_types[t]`).
//!
//! So an "off" anywhere wins over an "on" elsewhere: a user who turns
//! email off gets no email of a category they turned on, and a flow turned
//! on does not bring back a category turned off. A critical flow
//! (`rules::critical`) is decided by none of them.

use crate::model::{ChannelType, Flow, FlowPreference, Preferences};
use crate::rules::quiet_hours::QuietHours;

/// Where an effective value comes from (`?explain=true`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The user set it.
    User,
    /// The project's defaults set it, or nothing did (on).
    Default,
    /// A critical flow: on, whatever is set.
    Critical,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::User => "user",
            Source::Default => "default",
            Source::Critical => "critical",
        }
    }
}

/// The setting that decided a delivery, as the trace names it (its `key`).
/// The codec stores them by index (`store::trace_codec::PREF_KEYS`).
pub mod key {
    pub const DEFAULT: &str = "default";
    pub const CHANNEL_TYPE: &str = "channel_type";
    pub const CATEGORY: &str = "category";
    pub const CATEGORY_CHANNEL: &str = "category_channel";
    pub const FLOW: &str = "flow";
    pub const FLOW_CHANNEL: &str = "flow_channel";
}

/// A user's settings over the project's defaults.
#[derive(Debug, Clone, Copy)]
pub struct Layers<'a> {
    pub user: &'a Preferences,
    pub defaults: &'a Preferences,
}

/// A flag looked up in both layers: its value and where it came from;
/// `None` when neither sets it.
fn layered(user: Option<bool>, default: Option<bool>) -> Option<(bool, Source)> {
    match (user, default) {
        (Some(v), _) => Some((v, Source::User)),
        (None, Some(v)) => Some((v, Source::Default)),
        (None, None) => None,
    }
}

fn enabled(p: Option<&FlowPreference>) -> Option<bool> {
    p.and_then(|p| p.enabled)
}

fn on(p: Option<&FlowPreference>, t: ChannelType) -> Option<bool> {
    p.and_then(|p| p.channel_types.get(&t).copied())
}

impl<'a> Layers<'a> {
    pub fn new(user: &'a Preferences, defaults: &'a Preferences) -> Self {
        Layers { user, defaults }
    }

    /// `channel_types[t]`, as set.
    pub fn channel_type(&self, t: ChannelType) -> Option<(bool, Source)> {
        layered(
            self.user.channel_types.get(&t).copied(),
            self.defaults.channel_types.get(&t).copied(),
        )
    }

    /// `categories[c].enabled`, as set.
    pub fn category(&self, c: &str) -> Option<(bool, Source)> {
        layered(
            enabled(self.user.categories.get(c)),
            enabled(self.defaults.categories.get(c)),
        )
    }

    /// `categories[c].channel_types[t]`, as set.
    pub fn category_channel(&self, c: &str, t: ChannelType) -> Option<(bool, Source)> {
        layered(
            on(self.user.categories.get(c), t),
            on(self.defaults.categories.get(c), t),
        )
    }

    /// `flows[h].enabled`, as set.
    pub fn flow(&self, h: &str) -> Option<(bool, Source)> {
        layered(
            enabled(self.user.flows.get(h)),
            enabled(self.defaults.flows.get(h)),
        )
    }

    /// `flows[h].channel_types[t]`, as set.
    pub fn flow_channel(&self, h: &str, t: ChannelType) -> Option<(bool, Source)> {
        layered(
            on(self.user.flows.get(h), t),
            on(self.defaults.flows.get(h), t),
        )
    }

    /// The quiet hours that apply: the user's own, else the project's
    /// default (a user who cleared theirs follows the default).
    pub fn quiet_hours(&self) -> Option<&'a QuietHours> {
        self.user
            .quiet_hours
            .as_ref()
            .or(self.defaults.quiet_hours.as_ref())
    }

    /// Whether a delivery of `flow` on `t` goes out by these preferences,
    /// and the setting that decided (a `key`): the first one off, from the
    /// broadest level down; when none is, the most specific one set on
    /// (`default` when nothing is set). Critical flows are the caller's to
    /// exempt (`decide`).
    pub fn allows(&self, flow: &Flow, t: ChannelType) -> (&'static str, bool) {
        let off = |v: Option<(bool, Source)>| matches!(v, Some((false, _)));
        let set = |v: Option<(bool, Source)>| v.is_some();
        let (h, cats) = (flow.handle.as_str(), &flow.categories);
        if off(self.channel_type(t)) {
            return (key::CHANNEL_TYPE, false);
        }
        for c in cats {
            if off(self.category(c)) {
                return (key::CATEGORY, false);
            }
            if off(self.category_channel(c, t)) {
                return (key::CATEGORY_CHANNEL, false);
            }
        }
        if off(self.flow(h)) {
            return (key::FLOW, false);
        }
        if off(self.flow_channel(h, t)) {
            return (key::FLOW_CHANNEL, false);
        }
        let k = if set(self.flow_channel(h, t)) {
            key::FLOW_CHANNEL
        } else if set(self.flow(h)) {
            key::FLOW
        } else if cats.iter().any(|c| set(self.category_channel(c, t))) {
            key::CATEGORY_CHANNEL
        } else if cats.iter().any(|c| set(self.category(c))) {
            key::CATEGORY
        } else if set(self.channel_type(t)) {
            key::CHANNEL_TYPE
        } else {
            key::DEFAULT
        };
        (k, true)
    }
}

/// The preference "key" of a delivery of a critical flow: none decides, as
/// none applies (`rules::critical`); traced as `preference.ignored`.
pub const CRITICAL: &str = "critical";

/// Which preference decides whether a delivery of `flow` on `t` goes out:
/// `(CRITICAL, true)` when preferences do not apply to the flow, else
/// `Layers::allows`.
pub fn decide(layers: &Layers<'_>, flow: &Flow, t: ChannelType) -> (&'static str, bool) {
    if crate::rules::critical::opt_outs_apply(flow) {
        layers.allows(flow, t)
    } else {
        (CRITICAL, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ChannelType::{Email, Sms};

    fn flow(handle: &str, categories: &[&str], critical: bool) -> Flow {
        serde_json::from_value(serde_json::json!({
            "id": uuid::Uuid::now_v7(), "handle": handle, "name": handle,
            "description": null, "status": "active", "steps": [],
            "critical": critical, "categories": categories,
            "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
        }))
        .unwrap()
    }

    fn prefs(v: serde_json::Value) -> Preferences {
        serde_json::from_value(v).unwrap()
    }

    fn empty() -> Preferences {
        Preferences::default()
    }

    /// The table of docs/PREFERENCES.md, row by row.
    #[test]
    fn the_precedence_table() {
        let f = flow("comment", &["comments"], false);
        let none = empty();
        // nothing set: on
        assert_eq!(
            Layers::new(&none, &none).allows(&f, Email),
            ("default", true)
        );
        // global off beats category on
        let p = prefs(
            serde_json::json!({"channel_types": {"email": false}, "flows": {},
            "categories": {"comments": {"enabled": true, "channel_types": {"email": true}}}}),
        );
        assert_eq!(
            Layers::new(&p, &none).allows(&f, Email),
            ("channel_type", false)
        );
        assert_eq!(Layers::new(&p, &none).allows(&f, Sms), ("category", true));
        // category off beats flow on
        let p = prefs(
            serde_json::json!({"channel_types": {}, "categories": {"comments": {"enabled": false, "channel_types": {}}},
            "flows": {"comment": {"enabled": true, "channel_types": {"email": true}}}}),
        );
        assert_eq!(
            Layers::new(&p, &none).allows(&f, Email),
            ("category", false)
        );
        // a category off on one channel type only
        let p = prefs(serde_json::json!({"channel_types": {}, "flows": {},
            "categories": {"comments": {"enabled": null, "channel_types": {"email": false}}}}));
        assert_eq!(
            Layers::new(&p, &none).allows(&f, Email),
            ("category_channel", false)
        );
        assert_eq!(Layers::new(&p, &none).allows(&f, Sms), ("default", true));
        // flow off alone
        let p = prefs(
            serde_json::json!({"channel_types": {}, "flows": {"comment": {"enabled": false, "channel_types": {}}}}),
        );
        assert_eq!(Layers::new(&p, &none).allows(&f, Email), ("flow", false));
        // a category the flow is not in changes nothing
        let other = flow("invoice", &["billing"], false);
        let p = prefs(serde_json::json!({"channel_types": {}, "flows": {},
            "categories": {"comments": {"enabled": false, "channel_types": {}}}}));
        assert_eq!(
            Layers::new(&p, &none).allows(&other, Email),
            ("default", true)
        );
    }

    #[test]
    fn a_user_setting_overrides_a_default_and_an_unset_one_follows_it() {
        let f = flow("digest", &["marketing"], false);
        let defaults = prefs(serde_json::json!({"channel_types": {}, "flows": {},
            "categories": {"marketing": {"enabled": false, "channel_types": {}}}}));
        let none = empty();
        let l = Layers::new(&none, &defaults);
        assert_eq!(l.allows(&f, Email), ("category", false));
        assert_eq!(l.category("marketing"), Some((false, Source::Default)));
        let user = prefs(serde_json::json!({"channel_types": {}, "flows": {},
            "categories": {"marketing": {"enabled": true, "channel_types": {}}}}));
        let l = Layers::new(&user, &defaults);
        assert_eq!(l.allows(&f, Email), ("category", true));
        assert_eq!(l.category("marketing"), Some((true, Source::User)));
    }

    #[test]
    fn a_critical_flow_is_decided_by_none() {
        let f = flow("reset", &["security"], true);
        let p = prefs(
            serde_json::json!({"channel_types": {"email": false}, "flows": {},
            "categories": {"security": {"enabled": false, "channel_types": {}}}}),
        );
        let none = empty();
        assert_eq!(decide(&Layers::new(&p, &none), &f, Email), (CRITICAL, true));
        let f = flow("reset", &["security"], false);
        assert_eq!(
            decide(&Layers::new(&p, &none), &f, Email),
            ("channel_type", false)
        );
    }

    #[test]
    fn the_most_specific_setting_on_is_named() {
        let f = flow("f", &["c"], false);
        let none = empty();
        let mut p = empty();
        p.channel_types.insert(Email, true);
        assert_eq!(
            Layers::new(&p, &none).allows(&f, Email),
            ("channel_type", true)
        );
        let fp = FlowPreference {
            enabled: Some(true),
            ..Default::default()
        };
        p.categories.insert("c".into(), fp.clone());
        assert_eq!(Layers::new(&p, &none).allows(&f, Email), ("category", true));
        p.flows.insert("f".into(), fp);
        assert_eq!(Layers::new(&p, &none).allows(&f, Email), ("flow", true));
        p.flows
            .get_mut("f")
            .unwrap()
            .channel_types
            .insert(Email, true);
        assert_eq!(
            Layers::new(&p, &none).allows(&f, Email),
            ("flow_channel", true)
        );
    }
}
