//! Project keys, unique ids and small value checks the tests share.

use super::*;

use serde_json::{json, Value};

// ================================================================ keys and ids

/// A project's public and secret key.
#[derive(Clone, Debug)]
pub struct Keys {
    pub public_key: String,
    pub secret_key: String,
}

impl Keys {
    /// Fresh random bootstrap keys (`pk_test_<hex>`, `sk_test_<hex>`).
    pub fn random() -> Keys {
        Keys {
            public_key: format!("pk_test_{}", random_hex()),
            secret_key: format!("sk_test_{}", random_hex()),
        }
    }
}

/// The value on the first line of a `/metrics` text that starts with
/// `line_prefix` (a metric name with its labels), if there is one.
pub fn metric_value(text: &str, line_prefix: &str) -> Option<f64> {
    text.lines()
        .find(|l| l.starts_with(line_prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

pub fn random_hex() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// A unique external id with a readable tag.
pub fn new_ext(tag: &str) -> String {
    format!("{tag}-{}", &random_hex()[..12])
}

/// Percent-encodes a path segment (everything but unreserved characters).
pub fn enc(segment: &str) -> String {
    let mut out = String::new();
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

pub fn now_secs() -> i64 {
    chrono::Utc::now().timestamp()
}

/// True when `s` is an RFC 3339 UTC timestamp with a `Z` suffix.
pub fn is_timestamp(v: &Value) -> bool {
    v.as_str().is_some_and(|s| {
        s.ends_with('Z') && chrono::DateTime::parse_from_rfc3339(s).is_ok() && s.contains('T')
    })
}

/// Parses an RFC 3339 timestamp (panics otherwise).
#[track_caller]
pub fn parse_ts(v: &Value) -> chrono::DateTime<chrono::FixedOffset> {
    chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap_or_default())
        .unwrap_or_else(|e| panic!("not an RFC 3339 timestamp: {v} ({e})"))
}

/// True when `v` is a UUID v7 string.
pub fn is_uuid_v7(v: &Value) -> bool {
    v.as_str()
        .and_then(|s| uuid::Uuid::parse_str(s).ok())
        .is_some_and(|u| u.get_version_num() == 7)
}

pub fn all_true() -> Value {
    channel_types(&[])
}

/// All six channel types true except those listed false.
pub fn channel_types(off: &[&str]) -> Value {
    let mut m = serde_json::Map::new();
    for t in CHANNEL_TYPES {
        m.insert(t.to_string(), json!(!off.contains(&t)));
    }
    Value::Object(m)
}
