//! Console members, sign-in and sessions (docs/CONSOLE.md): who is asking,
//! with which role, and the CSRF token their page must send back.
//!
//! SKELETON: the extractor below signs no one in yet; it is the contract the
//! pages are written against.

use actix_web::{dev::Payload, web, FromRequest, HttpRequest};
use serde::Serialize;
use uuid::Uuid;

/// The templates of the sign-in pages: (name, source).
pub const TEMPLATES: &[(&str, &str)] = &[];

/// What a member may do in their project.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Everything, members and keys included.
    Owner,
    /// Flows, channels, topics, users, endpoints, settings.
    Editor,
    /// Reads only.
    Viewer,
}

/// A signed-in console member, as a page handler receives them. Requests
/// without a live session are redirected to `/console/login`.
#[derive(Clone, Debug, Serialize)]
pub struct Member {
    pub project_id: Uuid,
    pub project_name: String,
    pub email: String,
    pub role: Role,
    /// The session's CSRF token: every state-changing request carries it
    /// (form field `csrf` or header `X-CSRF-Token`).
    pub csrf: String,
}

impl FromRequest for Member {
    type Error = actix_web::Error;
    type Future = std::future::Ready<Result<Self, Self::Error>>;

    fn from_request(_req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(Err(actix_web::error::InternalError::from_response(
            "sign in",
            actix_web::HttpResponse::SeeOther()
                .insert_header(("Location", "/console/login"))
                .finish(),
        )
        .into()))
    }
}

/// Registers the sign-in routes.
pub fn configure(_cfg: &mut web::ServiceConfig) {}
