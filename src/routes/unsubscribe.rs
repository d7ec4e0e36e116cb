//! One-click unsubscribe (RFC 8058, docs/API.md §6 "One-click
//! unsubscribe"): `GET /u/{token}` shows a confirmation page with one
//! button, `POST /u/{token}` turns the token's flow's email off for its
//! user (`Engine::unsubscribe_by_link`). The token, from a commercial flow's
//! `List-Unsubscribe` header or `{{ unsubscribe_url }}`, is the only
//! credential: it is verified before anything is looked up
//! (`Engine::unsubscribe_target`), then the user goes through the User
//! API's limit, as on the preference page.

use super::endpoint::{Endpoint, Serve};
use super::preference_page::{link_token_param, page_headers};
use crate::auth::{rate_limited, wait_secs};
use crate::errors::{ApiError, ApiResult};
use crate::extract::{path_str, Body};
use crate::openapi::{Content, Op};
use crate::preference_page::unsubscribe;
use crate::state::{AppState, State};
use actix_web::{HttpRequest, HttpResponse};
use herald_engine::actors::UnsubscribeTarget;
use herald_engine::{Error, ErrorCode};

/// 404 for any token that does not unsubscribe: forged, altered, expired,
/// of another server, or naming a user or flow since deleted, alike.
fn link_not_found() -> ApiError {
    ApiError(
        Error::new(
            ErrorCode::NotFound,
            "unsubscribe link not found: it may have expired or been revoked",
        )
        .with("resource", "unsubscribe_link"),
    )
}

/// The path's token verified and what it names, the request charged to
/// the user's User API limit. A forged token costs one HMAC and no lookup,
/// and is not charged to the address's budget of wrong credentials (see
/// `routes::preference_page`).
async fn open(st: &AppState, req: &HttpRequest) -> ApiResult<UnsubscribeTarget> {
    let token = path_str(req, "token")?;
    let t = st
        .engine
        .unsubscribe_target(token)
        .await?
        .ok_or_else(link_not_found)?;
    st.limits.housekeeping();
    if let Err(nu) = st.limits.user.check_key(&(t.project.id, t.user.id)) {
        return Err(rate_limited(wait_secs(&nu), st.limits.user_rate));
    }
    Ok(t)
}

/// A page's headers: those of the preference page (never cached, never
/// framed, no referrer as the token is in the URL, nothing loaded from
/// elsewhere, no script).
fn page_answer(html: String) -> HttpResponse {
    page_headers(HttpResponse::Ok())
        .content_type("text/html; charset=utf-8")
        .body(html)
}

fn token_param() -> crate::openapi::Parameter {
    link_token_param(
        "The token of a commercial flow's unsubscribe link (`List-Unsubscribe`, `{{ unsubscribe_url }}`).",
    )
}

/// `GET /u/{token}`
pub fn page_endpoint() -> Endpoint {
    Op::get(
        "/u/{token}",
        "unsubscribePage",
        "The one-click unsubscribe link's confirmation page",
    )
    .param(token_param())
    .ok(200, "An HTML page", Content::Text("text/html", "string"))
    .errors(&[404, 429])
    .to(show)
}

/// Shows the confirmation only: a GET changes nothing (link scanners and
/// mail previews fetch links).
pub async fn show(req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let t = open(&st, &req).await?;
    Ok(page_answer(unsubscribe::confirm(&t.flow.name)))
}

/// `POST /u/{token}`
pub fn unsubscribe_endpoint() -> Endpoint {
    Op::post(
        "/u/{token}",
        "unsubscribe",
        "One-click unsubscribe (RFC 8058): turns the flow's email off for the user",
    )
    .param(token_param())
    .optional_form_body("UnsubscribeForm")
    .ok(
        200,
        "Unsubscribed (again, if it was): with `Accept: text/html`, a page saying so; else no body",
        Content::Text("text/html", "string"),
    )
    .errors(&[404, 429])
    .to(unsubscribe_post)
}

/// Unsubscribes, whatever the body (RFC 8058's is
/// `List-Unsubscribe=One-Click`; none is as good).
///
/// No CSRF token, no origin check: the unguessable token in the URL is the
/// credential, so a cross-site page cannot forge this post for a user
/// without already holding their link; the action is idempotent and only
/// turns one flow's email off; and RFC 8058 mail clients POST from their
/// servers without any cookie or page of ours to carry a CSRF value.
pub async fn unsubscribe_post(req: HttpRequest, _body: Body, st: State) -> ApiResult<HttpResponse> {
    let t = open(&st, &req).await?;
    st.engine.unsubscribe_by_link(&t).await?;
    // A person's form post asks for a page; a mailbox provider's POST gets
    // a bare 200.
    let wants_html = req
        .headers()
        .get("accept")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.to_ascii_lowercase().contains("text/html"));
    Ok(match wants_html {
        true => page_answer(unsubscribe::done(&t.flow.name)),
        false => HttpResponse::Ok()
            .insert_header(("cache-control", "no-store"))
            .finish(),
    })
}
