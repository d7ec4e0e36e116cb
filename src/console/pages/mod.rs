//! The console's pages, one module per entry of the navigation
//! (`render::NAV`).
//!
//! SKELETON: no page yet.

use actix_web::web;

/// The pages' templates: (name, source).
pub const TEMPLATES: &[(&str, &str)] = &[];

/// Registers the pages' routes.
pub fn configure(_cfg: &mut web::ServiceConfig) {}
