//! The web console at `/console`: server-rendered pages for the people who
//! run a project (docs/CONSOLE.md).
//!
//! Pages read through the engine and render HTML (`render`); changes are made
//! by the page's script calling the Admin API with the member's session
//! cookie and CSRF token, so a rule and its validation are written once, for
//! the API and the console alike. `auth` signs members in and tells who is
//! asking; `pages` holds one module per page of the navigation.

pub mod auth;
pub mod pages;
pub mod render;

pub use auth::{Member, Role};

use actix_web::web;

/// Registers every `/console` route.
pub fn configure(cfg: &mut web::ServiceConfig) {
    auth::configure(cfg);
    pages::configure(cfg);
}
