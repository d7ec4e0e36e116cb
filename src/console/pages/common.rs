//! What the pages share: the page shown when one cannot be, and links to
//! a user's page (the templates have no URL filter, so paths are made
//! here).

use super::super::render::member_page;
use super::super::Member;
use actix_web::{http::StatusCode, HttpResponse};

/// A page that could not be shown: the engine's error, with its status, in
/// the layout.
pub(crate) fn failed(m: &Member, current: &str, e: herald_engine::Error) -> HttpResponse {
    let status = StatusCode::from_u16(e.code.status()).unwrap_or(StatusCode::BAD_REQUEST);
    let mut r = member_page(
        m,
        current,
        "pages/error.html",
        minijinja::context! { code => e.code.as_str(), message => e.message, details => e.details },
    );
    *r.status_mut() = status;
    r
}

/// The link to a list's next page (`None`: it has none): `path` with the
/// list's filters that are set, so the next page keeps them, and the
/// `after` cursor, each query-encoded.
pub(crate) fn next_link(
    path: &str, filters: &[(&str, Option<String>)], after: Option<String>,
) -> Option<String> {
    let after = after?;
    let mut q = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in filters {
        if let Some(v) = v {
            q.append_pair(k, v);
        }
    }
    q.append_pair("after", &after);
    Some(format!("{path}?{}", q.finish()))
}

/// What a path segment keeps as it is: letters, digits and `-._~` (RFC
/// 3986's unreserved characters); everything else is percent-encoded.
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A user's page, the external id percent-encoded as a path segment (the
/// templates have no URL filter).
pub(crate) fn user_path(external_id: &str) -> String {
    format!("/console/users/{}", segment(external_id))
}

/// `s` percent-encoded as one path segment.
pub(crate) fn segment(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, SEGMENT).to_string()
}

/// Notifications as JSON values, each recipient with the `path` of their
/// page.
pub(crate) fn with_user_paths(
    items: &[herald_engine::views::NotificationView],
) -> Vec<serde_json::Value> {
    items
        .iter()
        .map(|n| {
            let mut v = serde_json::to_value(n).unwrap_or_default();
            if let Some(r) = v.get_mut("recipient").and_then(|r| r.as_object_mut()) {
                let ext = r
                    .get("external_id")
                    .and_then(|e| e.as_str())
                    .unwrap_or_default();
                let path = user_path(ext);
                r.insert("path".into(), path.into());
            }
            v
        })
        .collect()
}

#[cfg(test)]
mod next_link_tests {
    use super::next_link;

    #[test]
    fn keeps_the_filters_set_and_encodes_the_cursor() {
        assert_eq!(next_link("/console/x", &[], None), None);
        let filters = [("status", Some("failed".to_string())), ("flow", None)];
        assert_eq!(
            next_link("/console/x", &filters, Some("a b/c".into())).as_deref(),
            Some("/console/x?status=failed&after=a+b%2Fc")
        );
    }
}
