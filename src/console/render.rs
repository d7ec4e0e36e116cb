//! Rendering console pages: one MiniJinja environment holding every page's
//! template (HTML-escaped by default, since each name ends in `.html`), the
//! shared layout with the navigation, and the headers every page carries.

use actix_web::HttpResponse;
use minijinja::Environment;
use std::sync::OnceLock;

/// Every page's headers: scripts, styles and everything else from this
/// server only, forms post only here, no framing.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The navigation, in order: (link name, path).
pub const NAV: &[(&str, &str)] = &[
    ("Overview", "/console"),
    ("Messages", "/console/notifications"),
    ("Flows", "/console/flows"),
    ("Users", "/console/users"),
    ("Channels", "/console/channels"),
    ("Topics", "/console/topics"),
    ("Event endpoints", "/console/endpoints"),
    ("Settings", "/console/settings"),
    ("Audit log", "/console/audit_log"),
];

fn env() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.add_template("layout.html", include_str!("templates/layout.html"))
            .expect("the layout parses");
        for (name, src) in super::auth::TEMPLATES.iter().chain(super::pages::TEMPLATES) {
            env.add_template(name, src)
                .expect("a console template parses");
        }
        env
    })
}

/// A page rendered with its context, as a 200 with the console's headers.
pub fn page(template: &str, ctx: minijinja::Value) -> HttpResponse {
    let body = env()
        .get_template(template)
        .and_then(|t| t.render(ctx))
        .unwrap_or_else(|e| {
            tracing::error!(template, error = %e, "a console template failed to render");
            "<!doctype html><title>Error</title><p>This page could not be shown.</p>".into()
        });
    html(HttpResponse::Ok(), body)
}

/// An HTML body with the console's headers.
pub fn html(mut b: actix_web::HttpResponseBuilder, body: String) -> HttpResponse {
    b.content_type("text/html; charset=utf-8")
        .insert_header(("Content-Security-Policy", CSP))
        .insert_header(("X-Frame-Options", "DENY"))
        .insert_header(("Referrer-Policy", "same-origin"))
        .insert_header(("Cache-Control", "no-store"))
        .body(body)
}

/// A page of the navigation for a signed-in member: the layout's context
/// (`member`, `nav`, `current`) merged with the page's own.
pub fn member_page(
    m: &super::Member, current: &str, template: &str, ctx: minijinja::Value,
) -> HttpResponse {
    use herald_engine::console::Change;
    // What the member may change, so a page offers only those controls (the
    // server refuses the others anyway: src/auth.rs judges each request).
    let can_change = m.role.may(Change::Configuration);
    let can_keys = m.role.may(Change::Keys);
    page(
        template,
        minijinja::context! {
            member => m, nav => NAV, current => current,
            can_change => can_change, can_keys => can_keys, ..ctx
        },
    )
}
