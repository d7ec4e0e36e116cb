//! Input rules shared by every endpoint: the shapes of emails, phone numbers,
//! URLs, handles, time zones and locales, and the limits of user fields (the
//! service's `bodies::users::UserInput` reads them from JSON).

use crate::error::Validator;

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
}
