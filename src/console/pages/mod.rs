//! The console's pages, one module per entry of the navigation
//! (`render::NAV`), and the assets their templates load (`assets`).
//!
//! A page handler reads through the engine (the same methods the Admin
//! API's GET routes call) and renders a template; what a page changes, its
//! script (`assets/console.js`) asks the Admin API for, so every rule and
//! its validation stay in one place.

pub mod assets;
mod flows;
mod messages;
mod overview;
pub mod timeline;
mod users;

use super::render::member_page;
use super::Member;
use actix_web::{http::StatusCode, web, HttpResponse};

/// The pages' templates: (name, source).
pub const TEMPLATES: &[(&str, &str)] = &[
    ("pages/error.html", include_str!("templates/error.html")),
    (
        "pages/overview.html",
        include_str!("templates/overview.html"),
    ),
    (
        "pages/messages.html",
        include_str!("templates/messages.html"),
    ),
    ("pages/message.html", include_str!("templates/message.html")),
    ("pages/flows.html", include_str!("templates/flows.html")),
    ("pages/flow.html", include_str!("templates/flow.html")),
    ("pages/users.html", include_str!("templates/users.html")),
    ("pages/user.html", include_str!("templates/user.html")),
];

/// Registers the pages' routes.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/console", web::get().to(overview::page))
        .route("/console/", web::get().to(overview::page))
        .route("/console/notifications", web::get().to(messages::list))
        .route("/console/notifications/{id}", web::get().to(messages::one))
        .route("/console/flows", web::get().to(flows::list))
        .route("/console/flows/{handle}", web::get().to(flows::editor))
        .route("/console/users", web::get().to(users::list))
        .route("/console/users/{external_id}", web::get().to(users::one))
        .route("/console/assets/{file}", web::get().to(assets::serve));
}

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

/// A user's page, the external id percent-encoded as a path segment (the
/// templates have no URL filter).
pub(crate) fn user_path(external_id: &str) -> String {
    let seg =
        percent_encoding::utf8_percent_encode(external_id, percent_encoding::NON_ALPHANUMERIC);
    format!("/console/users/{seg}")
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
pub(crate) mod tests {
    use super::super::{Member, Role};

    /// A member for rendering tests.
    pub fn member() -> Member {
        Member {
            project_id: uuid::Uuid::nil(),
            project_name: "Acme <b>".into(),
            email: "owner@example.com".into(),
            role: Role::Owner,
            csrf: "tok\"en".into(),
        }
    }

    /// A response's body as text.
    pub fn body(r: actix_web::HttpResponse) -> String {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        let b = rt
            .block_on(actix_web::body::to_bytes(r.into_body()))
            .unwrap_or_default();
        String::from_utf8(b.to_vec()).unwrap()
    }

    #[test]
    fn a_user_path_is_one_segment() {
        assert_eq!(
            super::user_path("a/b c+é"),
            "/console/users/a%2Fb%20c%2B%C3%A9"
        );
    }

    #[test]
    fn every_template_parses_and_escapes_the_layout() {
        let r = super::failed(
            &member(),
            "/console",
            herald_engine::Error::not_found("notification", "<x>"),
        );
        assert_eq!(r.status().as_u16(), 404);
        let b = body(r);
        assert!(b.contains("Acme &lt;b&gt;"), "{b}");
        assert!(b.contains("notification not found"));
    }
}
