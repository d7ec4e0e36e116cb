//! Critical flows (`Flow::critical`): deliveries a recipient must get, such
//! as a password reset or a security alert. The recipient's opt-outs do not
//! apply to them; an address's suppression (`crate::suppression`) does, as
//! it protects the sender rather than expressing the recipient's choice.
//!
//! The opt-outs are preferences (docs/API.md §6) and quiet hours
//! (`rules::quiet_hours`, applied at staging by `delivery::accept`);
//! one-click unsubscribe is to obey the same rule when it lands. Each asks
//! `opt_outs_apply` rather than reading `Flow::critical`, so what "critical"
//! exempts from stays decided here.

use crate::error::Validator;
use crate::model::{ChannelType, Flow, Preferences};
use crate::rules::quiet_hours::QuietHours;

/// Whether the recipient's opt-outs (preferences, quiet hours; later
/// one-click unsubscribe) decide whether a delivery of `flow` goes out.
pub fn opt_outs_apply(flow: &Flow) -> bool {
    !flow.critical
}

/// When the recipient's quiet hours `quiet` (their own, else the project's
/// default: `rules::preferences::Layers::quiet_hours`) let a delivery of
/// `flow` on channel type `t`, due at `at_ms`, go out: `None` when they do not hold it (none set, outside
/// them, an in_app delivery: the feed is never quiet, or a critical flow),
/// else the instant they end. `tz`: the recipient's timezone, else the
/// project's (their own, when set, comes first). Staging decides with it
/// (`delivery::accept`), and a batch's close again (`delivery::batch`).
pub fn quiet_hours_end(
    quiet: Option<&QuietHours>, flow: &Flow, t: ChannelType, tz: Option<&str>, at_ms: i64,
) -> Option<i64> {
    let q = quiet?;
    if t == ChannelType::InApp || !opt_outs_apply(flow) {
        return None;
    }
    q.release_at(at_ms, q.timezone(tz))
}

/// Refuses, in `v`, a preferences change that turns off a critical flow of
/// `flows` (the project's live flows): its `enabled` or any of its channel
/// types set to `false`, each an `exclusion` at its path. Turning them on,
/// or leaving the flow out, changes nothing a delivery sees, so it passes.
pub fn refuse_opt_outs(patch: &Preferences, flows: &[Flow], v: &mut Validator) {
    for f in flows.iter().filter(|f| !opt_outs_apply(f)) {
        let Some(p) = patch.flows.get(&f.handle) else {
            continue;
        };
        let path = format!("flows.{}", f.handle);
        if p.enabled == Some(false) {
            v.push(
                format!("{path}.enabled"),
                "exclusion",
                "a critical flow cannot be turned off",
            );
        }
        for (t, on) in &p.channel_types {
            if !on {
                v.push(
                    format!("{path}.channel_types.{}", t.as_str()),
                    "exclusion",
                    "a critical flow's channel types cannot be turned off",
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::FlowPreference;

    fn flow(handle: &str, critical: bool) -> Flow {
        serde_json::from_value(serde_json::json!({
            "id": uuid::Uuid::now_v7(), "handle": handle, "name": handle,
            "description": null, "status": "active", "steps": [],
            "critical": critical,
            "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
        }))
        .unwrap()
    }

    #[test]
    fn only_a_critical_flow_ignores_opt_outs() {
        assert!(opt_outs_apply(&flow("news", false)));
        assert!(!opt_outs_apply(&flow("reset", true)));
    }

    #[test]
    fn a_flow_stored_before_critical_existed_is_not_critical() {
        let f: Flow = serde_json::from_value(serde_json::json!({
            "id": uuid::Uuid::now_v7(), "handle": "old", "name": "Old",
            "description": null, "status": "draft", "steps": [],
            "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
        }))
        .unwrap();
        assert!(!f.critical);
        assert!(opt_outs_apply(&f));
    }

    fn patch(handle: &str, enabled: Option<bool>, types: &[(ChannelType, bool)]) -> Preferences {
        let mut p = Preferences::default();
        p.flows.insert(
            handle.into(),
            FlowPreference {
                enabled,
                channel_types: types.iter().copied().collect(),
            },
        );
        p
    }

    fn refused(p: &Preferences, flows: &[Flow]) -> Vec<(String, &'static str)> {
        let mut v = Validator::new();
        refuse_opt_outs(p, flows, &mut v);
        v.fields.into_iter().map(|f| (f.field, f.reason)).collect()
    }

    #[test]
    fn turning_a_critical_flow_off_is_an_exclusion_at_its_path() {
        let flows = [flow("reset", true), flow("news", false)];
        let p = patch(
            "reset",
            Some(false),
            &[(ChannelType::Email, false), (ChannelType::Sms, true)],
        );
        assert_eq!(
            refused(&p, &flows),
            vec![
                ("flows.reset.enabled".to_string(), "exclusion"),
                ("flows.reset.channel_types.email".to_string(), "exclusion"),
            ]
        );
    }

    #[test]
    fn turning_it_on_or_another_flow_off_passes() {
        let flows = [flow("reset", true), flow("news", false)];
        let on = patch("reset", Some(true), &[(ChannelType::InApp, true)]);
        assert!(refused(&on, &flows).is_empty());
        let other = patch("news", Some(false), &[(ChannelType::Email, false)]);
        assert!(refused(&other, &flows).is_empty());
        let mut global = Preferences::default();
        global.channel_types.insert(ChannelType::InApp, false);
        assert!(refused(&global, &flows).is_empty());
    }

    #[test]
    fn quiet_hours_hold_no_in_app_nor_critical_delivery() {
        let none = Preferences::default();
        let mut p = Preferences::default();
        let at = 1_800_000_000_000; // 2027-01-15T08:00:00Z
        let news = flow("news", false);
        assert_eq!(
            quiet_hours_end(p.quiet_hours.as_ref(), &news, ChannelType::Email, None, at),
            None
        );
        let mut v = Validator::new();
        p.quiet_hours = crate::rules::quiet_hours::QuietHours::parse(
            &serde_json::json!({"from": "07:00", "to": "09:00"}),
            "quiet_hours",
            &mut v,
        );
        let end = Some(at + 3_600_000);
        assert_eq!(
            quiet_hours_end(p.quiet_hours.as_ref(), &news, ChannelType::Email, None, at),
            end
        );
        assert_eq!(
            quiet_hours_end(
                p.quiet_hours.as_ref(),
                &news,
                ChannelType::Sms,
                Some("UTC"),
                at
            ),
            end
        );
        assert_eq!(
            quiet_hours_end(p.quiet_hours.as_ref(), &news, ChannelType::InApp, None, at),
            None
        );
        let reset = flow("reset", true);
        assert_eq!(
            quiet_hours_end(p.quiet_hours.as_ref(), &reset, ChannelType::Email, None, at),
            None
        );
        // an hour east of UTC it is 09:00 there: already over
        assert_eq!(
            quiet_hours_end(
                p.quiet_hours.as_ref(),
                &news,
                ChannelType::Email,
                Some("Europe/Paris"),
                at
            ),
            None
        );
        // the project's default holds a user who set none
        assert_eq!(
            quiet_hours_end(
                none.quiet_hours.as_ref().or(p.quiet_hours.as_ref()),
                &news,
                ChannelType::Email,
                None,
                at
            ),
            end
        );
    }
}
