//! Input rules shared by every endpoint: the shapes of emails, phone numbers,
//! URLs, handles, time zones and locales, and the parsing of user fields from JSON
//! with every problem reported at its dot-path.

use crate::error::Validator;
use crate::model::UserPatch;
use serde_json::{Map, Value};

/// Loose but honest email check: one `@`, a non-empty local part, a dotted domain,
/// no spaces. (Full RFC 5322 parsing accepts things no mail server delivers.)
pub fn is_email(s: &str) -> bool {
    if s.len() > 254 || s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return false;
    }
    let Some((local, domain)) = s.rsplit_once('@') else {
        return false;
    };
    !local.is_empty()
        && !local.contains('@')
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !domain.contains("..")
        && domain
            .chars()
            .all(|c| c.is_alphanumeric() || c == '.' || c == '-')
}

/// `+` then 8–15 digits, the first not 0.
pub fn is_e164(s: &str) -> bool {
    let Some(d) = s.strip_prefix('+') else {
        return false;
    };
    (8..=15).contains(&d.len()) && d.chars().all(|c| c.is_ascii_digit()) && !d.starts_with('0')
}

/// An absolute http(s) URL as [`is_http_url`] reads it, as a regular
/// expression for the API's schemas: the scheme in any case, a non-empty host
/// after any user info, no whitespace or control character anywhere.
pub const HTTP_URL: &str = "^[Hh][Tt][Tt][Pp][Ss]?://([^\\s\\x00-\\x1f\\x7f-\\x9f/?#]*@)?[^\\s\\x00-\\x1f\\x7f-\\x9f/?#@]+([/?#][^\\s\\x00-\\x1f\\x7f-\\x9f]*)?$";

pub fn is_http_url(s: &str) -> bool {
    match url_parts(s) {
        Some((scheme, host)) => (scheme == "http" || scheme == "https") && !host.is_empty(),
        None => false,
    }
}

fn url_parts(s: &str) -> Option<(String, &str)> {
    if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return None;
    }
    let (scheme, rest) = s.split_once("://")?;
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = host.rsplit('@').next().unwrap_or("");
    Some((scheme.to_ascii_lowercase(), host))
}

/// `^[a-z0-9][a-z0-9_-]{0,63}$` and not shaped like a UUID.
pub fn is_handle(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_' || *c == b'-')
        && uuid::Uuid::parse_str(s).is_err()
}

pub fn is_timezone(s: &str) -> bool {
    s.parse::<chrono_tz::Tz>().is_ok()
}

pub fn is_locale(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && language_tags::LanguageTag::parse(s)
            .map(|t| t.validate().is_ok())
            .unwrap_or(false)
}

pub const MAX_STRING: usize = 1000;
pub const MAX_CUSTOM_FIELDS: usize = 64 * 1024;

fn join(prefix: &str, k: &str) -> String {
    if prefix.is_empty() {
        k.to_string()
    } else {
        format!("{prefix}.{k}")
    }
}

/// Reads the profile fields of a user object. Unknown keys are ignored
/// (`external_id` included: callers handle it).
pub fn user_patch(obj: &Map<String, Value>, prefix: &str, v: &mut Validator) -> UserPatch {
    let mut p = UserPatch::default();
    let text = |k: &str,
                check: &dyn Fn(&str) -> Option<(&'static str, &'static str)>,
                v: &mut Validator|
     -> Option<Option<String>> {
        match obj.get(k) {
            None => None,
            Some(Value::Null) => Some(None),
            Some(Value::String(s)) => {
                if s.chars().count() > MAX_STRING {
                    v.push(
                        join(prefix, k),
                        "length",
                        format!("at most {MAX_STRING} characters"),
                    );
                    None
                } else if let Some((reason, msg)) = check(s) {
                    v.push(join(prefix, k), reason, msg);
                    None
                } else {
                    Some(Some(s.clone()))
                }
            }
            Some(_) => {
                v.push(join(prefix, k), "format", "must be a string");
                None
            }
        }
    };
    let none = |_: &str| None;
    p.first_name = text("first_name", &none, v);
    p.last_name = text("last_name", &none, v);
    p.email = text(
        "email",
        &|s| (!is_email(s)).then_some(("format", "must be an email address")),
        v,
    );
    p.phone = text("phone", &none, v);
    p.avatar = text(
        "avatar",
        &|s| (!is_http_url(s)).then_some(("format", "must be an absolute http(s) URL")),
        v,
    );
    p.locale = text(
        "locale",
        &|s| (!is_locale(s)).then_some(("format", "must be a BCP 47 language tag")),
        v,
    );
    p.timezone = text(
        "timezone",
        &|s| (!is_timezone(s)).then_some(("inclusion", "must be an IANA time zone")),
        v,
    );
    match obj.get("custom_fields") {
        None => {}
        Some(Value::Null) => p.custom_fields = Some(None),
        Some(Value::Object(m)) => {
            let size = serde_json::to_vec(m).map(|b| b.len()).unwrap_or(usize::MAX);
            if size > MAX_CUSTOM_FIELDS {
                v.push(
                    join(prefix, "custom_fields"),
                    "length",
                    "at most 64 KiB serialised",
                );
            } else {
                p.custom_fields = Some(Some(m.clone()));
            }
        }
        Some(_) => v.push(join(prefix, "custom_fields"), "format", "must be an object"),
    }
    p
}

/// An external id: 1–255 characters.
pub fn external_id(s: &str, field: &str, v: &mut Validator) -> bool {
    let n = s.chars().count();
    if n == 0 || n > 255 {
        v.push(field, "length", "1 to 255 characters");
        false
    } else {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert!(is_email("ada@example.com"));
        assert!(!is_email("ada@example"));
        assert!(!is_email("a da@example.com"));
        assert!(!is_email("@example.com"));
        assert!(is_e164("+14155550100"));
        assert!(!is_e164("14155550100"));
        assert!(!is_e164("+0123456789"));
        assert!(is_http_url("https://example.com/a.png"));
        assert!(!is_http_url("ftp://example.com/a.png"));
        assert!(!is_http_url("https://"));
        assert!(is_handle("welcome-email_2"));
        assert!(!is_handle("Welcome"));
        assert!(!is_handle("0190a4e2-7c1d-7b3e-8f00-000000000000"));
        assert!(is_timezone("Europe/Berlin"));
        assert!(!is_timezone("Mars/Olympus"));
        assert!(is_locale("en-US"));
        assert!(is_locale("pt"));
        assert!(!is_locale("not a locale"));
    }

    #[test]
    fn user_patch_reports_every_problem_at_its_path() {
        let m: Map<String, Value> = serde_json::from_str(
            r#"{"email":"x","avatar":"ftp://a/b","timezone":"Nowhere/City","custom_fields":[1],"first_name":null}"#,
        )
        .unwrap();
        let mut v = Validator::new();
        let p = user_patch(&m, "recipients.0", &mut v);
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
