//! Console members, sign-in and sessions (docs/CONSOLE.md): who is asking,
//! with which role, and the CSRF token their page must send back.
//!
//! The session is a cookie (`COOKIE`: `HttpOnly`, `SameSite=Lax`, `Secure`
//! over TLS) holding a token whose hash the store keeps with the session's
//! CSRF token; the engine checks it (`Engine::console_session`). The same
//! cookie, with the CSRF token in `X-CSRF-Token`, authenticates the Admin
//! API for the page's scripts (`crate::auth::admin`). `pages` has the
//! sign-in pages, `members` the owners' Settings → Members, `limits` the
//! budgets of failed sign-ins.

pub mod limits;
mod member;
mod members;
mod pages;

pub use member::Member;

use crate::errors::ApiError;
use crate::state::State;
use actix_web::cookie::{Cookie, SameSite};
use actix_web::{web, HttpRequest};
use herald_engine::console::LiveSession;
use std::time::Duration;

pub use herald_engine::console::Role;

/// The session cookie's name.
pub const COOKIE: &str = "herald_console";
/// The header a page's script sends the session's CSRF token in.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// The templates of the sign-in pages: (name, source).
pub const TEMPLATES: &[(&str, &str)] = &[
    (
        "signin_base.html",
        include_str!("../templates/signin_base.html"),
    ),
    ("login.html", include_str!("../templates/login.html")),
    ("invite.html", include_str!("../templates/invite.html")),
    ("members.html", include_str!("../templates/members.html")),
];

pub(super) fn state(req: &HttpRequest) -> State {
    req.app_data::<State>()
        .cloned()
        .expect("app state registered")
}

/// The session cookie's token, if the request has one.
pub fn session_token(req: &HttpRequest) -> Option<String> {
    req.cookie(COOKIE)
        .map(|c| c.value().to_string())
        .filter(|v| !v.is_empty())
}

/// The live session of the request's cookie, if any.
pub async fn live_session(st: &State, req: &HttpRequest) -> Result<Option<LiveSession>, ApiError> {
    let Some(token) = session_token(req) else {
        return Ok(None);
    };
    let idle = Duration::from_secs(st.settings.console_idle_timeout);
    Ok(st.engine.console_session(token, idle).await?)
}

/// Whether cookies set for this request carry `Secure`: over TLS (as the
/// connection or a proxy's `Forwarded` header says), behind an `https`
/// `--public-url`, or always with `--console-secure-cookies`.
fn secure(st: &State, req: &HttpRequest) -> bool {
    st.settings.console_secure_cookies
        || req.connection_info().scheme() == "https"
        || st.public_url().starts_with("https://")
}

/// The session cookie for a new session's token (a browser session cookie:
/// the server ends it after 12 hours idle or at sign-out).
pub fn session_cookie(st: &State, req: &HttpRequest, token: String) -> Cookie<'static> {
    Cookie::build(COOKIE, token)
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .secure(secure(st, req))
        .finish()
}

/// The cookie that clears the session cookie.
pub fn cleared_cookie(st: &State, req: &HttpRequest) -> Cookie<'static> {
    let mut c = session_cookie(st, req, String::new());
    c.make_removal();
    c
}

/// Registers the sign-in routes.
pub fn configure(cfg: &mut web::ServiceConfig) {
    pages::configure(cfg);
    members::configure(cfg);
}
