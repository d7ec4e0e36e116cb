//! The contract the console's pages are written against: `Member`, the
//! signed-in member a handler receives, an extractor that redirects to
//! `/console/login` when the request has no live session.

use super::{live_session, state};
use actix_web::{dev::Payload, FromRequest, HttpRequest, HttpResponse};
use futures_util::future::LocalBoxFuture;
use herald_engine::console::{LiveSession, Role};
use serde::Serialize;
use uuid::Uuid;

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

impl Member {
    pub(super) fn of(s: &LiveSession) -> Member {
        Member {
            project_id: s.project.id,
            project_name: s.project.name.clone(),
            email: s.member.email.clone(),
            role: s.member.role,
            csrf: s.session.csrf.clone(),
        }
    }

    /// Whether a form's (or header's) CSRF token is this session's.
    pub fn csrf_ok(&self, given: &str) -> bool {
        herald_engine::console::csrf_matches(given, &self.csrf)
    }
}

impl FromRequest for Member {
    type Error = actix_web::Error;
    type Future = LocalBoxFuture<'static, Result<Self, Self::Error>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let req = req.clone();
        Box::pin(async move {
            let st = state(&req);
            match live_session(&st, &req).await {
                Ok(Some(s)) => Ok(Member::of(&s)),
                Ok(None) => Err(actix_web::error::InternalError::from_response(
                    "sign in",
                    HttpResponse::SeeOther()
                        .insert_header(("Location", "/console/login"))
                        .insert_header(("Cache-Control", "no-store"))
                        .finish(),
                )
                .into()),
                Err(e) => Err(e.into()),
            }
        })
    }
}
