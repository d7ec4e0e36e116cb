//! A channel step's backup channels as a request gives them
//! (`fallback_channel_ids`, docs/API.md "Provider failover"): checked
//! against the project's channels and the step's own.

use crate::extract::Given;
use herald_engine::model::{self, ChannelType, MAX_FALLBACKS};
use herald_engine::Validator;
use serde_json::Value;
use uuid::Uuid;

/// A channel step's backups (`fallback_channel_ids`): channels of the
/// project, of the step's channel's type, none repeated nor the step's own,
/// at most `MAX_FALLBACKS`; an in_app step takes none.
pub(super) fn fallbacks(
    given: &Given<Vec<Value>>, p: &str, channel: Option<&model::Channel>,
    channels: &[model::Channel], v: &mut Validator,
) -> Vec<Uuid> {
    let path = format!("{p}.fallback_channel_ids");
    let given = match given {
        Given::Absent | Given::Null => return vec![],
        Given::Value(ids) => ids,
        Given::Wrong(_) => {
            v.push(path, "format", "must be an array of channel ids");
            return vec![];
        }
    };
    if given.is_empty() {
        return vec![];
    }
    if channel.is_some_and(|c| c.channel_type == ChannelType::InApp) {
        v.push(path, "inclusion", "an in_app step has no backup channels");
        return vec![];
    }
    let mut out: Vec<Uuid> = vec![];
    for (m, id) in given.iter().enumerate() {
        let at = format!("{path}.{m}");
        if m >= MAX_FALLBACKS {
            v.push(
                at,
                "length",
                format!("a step has at most {MAX_FALLBACKS} backup channels"),
            );
            break;
        }
        let Some(id) = id.as_str().and_then(|t| Uuid::parse_str(t).ok()) else {
            v.push(at, "format", "must be a UUID string");
            continue;
        };
        let Some(c) = channels.iter().find(|c| c.id == id) else {
            v.push(at, "inclusion", "no channel with this id in the project");
            continue;
        };
        if out.contains(&id) || channel.is_some_and(|ch| ch.id == id) {
            v.push(at, "unique", "a channel is named once in a step");
            continue;
        }
        if let Some(ch) = channel {
            if c.channel_type != ch.channel_type {
                v.push(
                    at,
                    "inclusion",
                    format!(
                        "a backup is of the step's channel type ({})",
                        ch.channel_type.as_str()
                    ),
                );
                continue;
            }
        }
        out.push(id);
    }
    out
}
