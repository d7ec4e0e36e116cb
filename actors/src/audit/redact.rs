//! What the audit log shows of a record, before and after a change: the
//! snapshot of each kind of resource (`flow`, `channel`, `topic`,
//! `endpoint`, `content`, `project`, `clock`, `secret_key`), each made
//! without secrets, and `redact`, the pass over a snapshot made outside the
//! engine (`AuditChange::redacted`, a console member's change). Channel
//! credentials read `********` (as the channel's own view shows them);
//! hashes and keys are never present; times of the change itself
//! (`updated_at`) are left out, since the entry has its own.

use crate::events::WebhookEndpoint;
use crate::model::{Channel, ContentRecord, Flow, Project, Topic};
use crate::providers::MASK;
use serde_json::{json, Map, Value};

/// Field names whose values are never shown (a hash of a secret, a key).
const REMOVED: &[&str] = &["hash", "secret_key", "api_key_hash"];

/// Field names whose values read `********` when set (credentials).
const MASKED: &[&str] = &[
    "secret",
    "password",
    "token",
    "api_key",
    "private_key",
    "credential",
    "authorization",
];

/// Fields no snapshot keeps: the entry's own time says when.
const DROPPED: &[&str] = &["updated_at"];

fn masked(v: &Value) -> Value {
    if v.is_null() {
        Value::Null
    } else {
        Value::String(MASK.into())
    }
}

/// `v` without secrets, at any depth: a field whose name holds `hash` (or
/// names a key) is removed, one that names a credential (`secret`,
/// `password`, `token`, `api_key`, `private_key`, …) reads `********` when
/// set.
pub fn redact(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::with_capacity(m.len());
            for (k, v) in m {
                let name = k.to_ascii_lowercase();
                if REMOVED.iter().any(|r| name.contains(r)) {
                    continue;
                }
                let shown = if MASKED.iter().any(|s| name.contains(s)) {
                    masked(&v)
                } else {
                    redact(v)
                };
                out.insert(k, shown);
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.into_iter().map(redact).collect()),
        other => other,
    }
}

fn without_times(mut v: Value) -> Value {
    if let Value::Object(m) = &mut v {
        for k in DROPPED {
            m.remove(*k);
        }
    }
    v
}

/// A flow as the log shows it: all of it (a flow holds no secret).
pub fn flow(f: &Flow) -> Value {
    without_times(serde_json::to_value(f).unwrap_or(Value::Null))
}

/// A content record (a partial, a layout, a catalog): its key and body.
pub fn content(r: &ContentRecord) -> Value {
    json!({ "key": r.key, "body": r.body })
}

/// A channel: its config masked as the channel's view masks it.
pub fn channel(c: &Channel) -> Value {
    json!({
        "id": c.id,
        "type": c.channel_type.as_str(),
        "name": c.name,
        "provider": c.provider,
        "config": c.masked_config(),
        "revoked": c.revoked,
        "builtin": c.builtin,
        "sandbox": c.sandbox,
    })
}

/// A topic: its key, name and description (not its subscriber count,
/// which subscriptions move).
pub fn topic(t: &Topic) -> Value {
    json!({
        "id": t.id,
        "key": t.key,
        "name": t.name,
        "description": t.description,
    })
}

/// An event endpoint (its signing secrets are not part of its record).
pub fn endpoint(e: &WebhookEndpoint) -> Value {
    json!({
        "id": e.id,
        "url": e.url,
        "event_types": e.event_types,
        "enabled": e.enabled,
        "disabled_reason": e.disabled_reason,
    })
}

/// A project's settings: what `PUT /admin/v1/project`, the categories, the
/// preference defaults, the signing key and the link secret change; its
/// API keys and secret hashes are not among them, the signing key reads
/// `********` when set.
pub fn project(p: &Project) -> Value {
    json!({
        "name": p.name,
        "security_mode": p.security_mode,
        "timezone": p.timezone,
        "retention": p.retention,
        "quota_bytes": p.quota_bytes,
        "sandbox": p.sandbox,
        "branding": p.branding,
        "default_locale": p.default_locale,
        "default_layout": p.default_layout,
        "test_clock": p.test_clock,
        "categories": p.categories,
        "preference_defaults": p.preference_defaults,
        "signing_key": p.signing_key.as_ref().map(|_| MASK),
        "link_epoch": p.link_epoch,
    })
}

/// A project's test clock (`clock.advanced`).
pub fn clock(p: &Project) -> Value {
    json!({ "test_clock": p.test_clock })
}

/// What a secret key rotation changes that may be shown: when, and until
/// when the previous key still works.
pub fn secret_key(p: &Project) -> Value {
    json!({
        "rotated_at": p.secret_rotated_at,
        "previous_valid_until": p.previous_secret_expires_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ChannelType;
    use crate::model::Timestamp;
    use serde_json::json;
    use uuid::Uuid;

    #[test]
    fn credentials_read_masked_and_hashes_are_gone_at_any_depth() {
        let v = json!({
            "name": "n",
            "config": {"auth_token": "tok", "from": "+1", "api_key": null},
            "members": [{"email": "a@b.c", "password_hash": "h", "session_secret": "s"}],
            "secret_hash": [1, 2, 3],
        });
        assert_eq!(
            redact(v),
            json!({
                "name": "n",
                "config": {"auth_token": MASK, "from": "+1", "api_key": null},
                "members": [{"email": "a@b.c", "session_secret": MASK}],
            })
        );
    }

    #[test]
    fn a_channel_shows_its_secret_config_masked() {
        let now = Timestamp::now();
        let c = Channel {
            id: Uuid::now_v7(),
            channel_type: ChannelType::Sms,
            name: "sms".into(),
            provider: "twilio".into(),
            config: json!({"account_sid": "AC1", "auth_token": "hunter2", "from": "+15550001"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            revoked: false,
            builtin: false,
            sandbox: false,
            created_at: now,
            updated_at: now,
        };
        let shown = channel(&c).to_string();
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("+15550001"), "{shown}");
        assert!(shown.contains(MASK), "{shown}");
    }

    #[test]
    fn project_settings_hold_no_key_or_hash() {
        let mut p = Project::new(Uuid::now_v7(), "p", "pk_abc", vec![], Timestamp::now());
        p.signing_key = Some("-----BEGIN PUBLIC KEY-----".into());
        p.secret_hash = vec![9; 32];
        let shown = project(&p).to_string();
        assert!(!shown.contains("BEGIN PUBLIC KEY"), "{shown}");
        assert!(!shown.contains(&p.public_key), "{shown}");
        assert!(!shown.contains("secret_hash"), "{shown}");
        assert!(shown.contains(MASK), "{shown}");
    }
}
