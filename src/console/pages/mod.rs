//! The console's pages, one module per entry of the navigation
//! (`render::NAV`), and the assets their templates load (`assets`).
//!
//! A page handler reads through the engine (the same methods the Admin
//! API's GET routes call) and renders a template; what a page changes, its
//! script (`assets/console.js`) asks the Admin API for, so every rule and
//! its validation stay in one place.

pub mod assets;
mod audit_log;
mod channels;
mod common;
mod endpoints;
mod flows;
mod messages;
mod overview;
mod settings;
pub mod timeline;
mod topics;
mod users;

use actix_web::web;

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
    (
        "pages/settings.html",
        include_str!("templates/settings.html"),
    ),
    (
        "pages/channels.html",
        include_str!("templates/channels.html"),
    ),
    ("pages/channel.html", include_str!("templates/channel.html")),
    ("pages/topics.html", include_str!("templates/topics.html")),
    ("pages/topic.html", include_str!("templates/topic.html")),
    (
        "pages/endpoints.html",
        include_str!("templates/endpoints.html"),
    ),
    (
        "pages/endpoint.html",
        include_str!("templates/endpoint.html"),
    ),
    (
        "pages/audit_log.html",
        include_str!("templates/audit_log.html"),
    ),
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
        .route("/console/channels", web::get().to(channels::list))
        .route("/console/channels/{id}", web::get().to(channels::one))
        .route("/console/topics", web::get().to(topics::list))
        .route("/console/topics/{key}", web::get().to(topics::one))
        .route("/console/endpoints", web::get().to(endpoints::list))
        .route("/console/endpoints/{id}", web::get().to(endpoints::one))
        .route("/console/settings", web::get().to(settings::page))
        .route("/console/audit_log", web::get().to(audit_log::page))
        .route("/console/assets/{file}", web::get().to(assets::serve));
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
            super::common::user_path("a/b c+é-x_y.z~"),
            "/console/users/a%2Fb%20c%2B%C3%A9-x_y.z~"
        );
    }

    #[test]
    fn every_template_file_is_registered() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/console/pages/templates");
        for f in std::fs::read_dir(dir).expect("the templates") {
            let name = format!("pages/{}", f.expect("a file").file_name().to_string_lossy());
            assert!(
                super::TEMPLATES.iter().any(|(n, _)| *n == name),
                "{name} is not in TEMPLATES"
            );
        }
    }

    #[test]
    fn every_template_parses_and_escapes_the_layout() {
        let r = super::common::failed(
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
