//! The sign-in pages: `GET/POST /console/login`, `GET/POST
//! /console/invite/{token}` (a one-time link sets the password, then signs
//! in) and `POST /console/logout`. Forms post back to the same page; a
//! failed sign-in says one generic thing whatever was wrong.

use super::{cleared_cookie, live_session, session_cookie, session_token, Member};
use crate::console::render;
use crate::errors::ApiError;
use crate::state::State;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use herald_engine::ErrorCode;
use minijinja::context;
use serde::Deserialize;

/// What a failed sign-in says, whatever failed.
pub const SIGN_IN_FAILED: &str = "Email or password is incorrect.";

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/console/login")
            .route(web::get().to(login_page))
            .route(web::post().to(login)),
    )
    .service(
        web::resource("/console/invite/{token}")
            .route(web::get().to(invite_page))
            .route(web::post().to(accept_invite)),
    )
    .service(web::resource("/console/logout").route(web::post().to(logout)));
}

/// 303 to `path`, with the console's headers.
pub(super) fn see_other(path: &str) -> HttpResponse {
    let mut b = HttpResponse::SeeOther();
    b.insert_header(("Location", path));
    render::html(b, String::new())
}

/// 403 for a state-changing form without this session's CSRF token.
pub fn csrf_refused() -> HttpResponse {
    render::html(
        HttpResponse::Forbidden(),
        "<!doctype html><html lang=\"en\"><meta charset=\"utf-8\"><title>Forbidden · Herald</title><main><h1>Forbidden</h1><p>This form is out of date or was not sent from this console. Reload the page and try again.</p></main></html>".into(),
    )
}

/// A page rendered with a status other than 200.
pub(super) fn page_with(status: StatusCode, template: &str, ctx: minijinja::Value) -> HttpResponse {
    let mut r = render::page(template, ctx);
    *r.status_mut() = status;
    r
}

/// Refuses a form posted from another site (login CSRF): a browser says
/// where a POST comes from in `Origin` or `Sec-Fetch-Site`.
fn cross_site(req: &HttpRequest) -> bool {
    let h = |n: &str| req.headers().get(n).and_then(|v| v.to_str().ok());
    if h("sec-fetch-site").is_some_and(|s| s == "cross-site") {
        return true;
    }
    match h("origin") {
        None => false,
        Some(o) => {
            let ci = req.connection_info();
            o != format!("{}://{}", ci.scheme(), ci.host())
        }
    }
}

fn forbidden() -> HttpResponse {
    page_with(
        StatusCode::FORBIDDEN,
        "login.html",
        context! { error => "This form was not sent from this site." },
    )
}

async fn login_page(req: HttpRequest, st: State) -> Result<HttpResponse, ApiError> {
    if live_session(&st, &req).await?.is_some() {
        return Ok(see_other("/console"));
    }
    Ok(render::page("login.html", context! {}))
}

#[derive(Deserialize)]
struct LoginForm {
    #[serde(default)]
    email: String,
    #[serde(default)]
    password: String,
}

async fn login(
    req: HttpRequest, st: State, form: web::Form<LoginForm>,
) -> Result<HttpResponse, ApiError> {
    if cross_site(&req) {
        return Ok(forbidden());
    }
    let LoginForm { email, password } = form.into_inner();
    let account = email.trim().to_lowercase();
    let ip = crate::auth::client_ip(&req);
    let limits = &st.limits.console;
    let too_many = |secs: u64| {
        let mut r = page_with(
            StatusCode::TOO_MANY_REQUESTS,
            "login.html",
            context! { error => format!("Too many failed sign-ins. Try again in {secs} seconds.") },
        );
        r.headers_mut().insert(
            actix_web::http::header::RETRY_AFTER,
            actix_web::http::header::HeaderValue::from(secs),
        );
        r
    };
    if let Some(secs) = limits.refused(ip, &account) {
        return Ok(too_many(secs));
    }
    match st.engine.console_sign_in(email, password).await? {
        Some((m, s)) => {
            tracing::info!(project_id = %m.project, "console member signed in");
            let mut r = see_other("/console");
            r.add_cookie(&session_cookie(&st, &req, s.token))
                .map_err(|e| herald_engine::Error::internal(e.to_string()))?;
            Ok(r)
        }
        None => {
            limits.failed(ip, &account);
            if let Some(secs) = limits.refused(ip, &account) {
                return Ok(too_many(secs));
            }
            Ok(page_with(
                StatusCode::UNAUTHORIZED,
                "login.html",
                context! { error => SIGN_IN_FAILED },
            ))
        }
    }
}

fn link_gone() -> HttpResponse {
    page_with(
        StatusCode::NOT_FOUND,
        "invite.html",
        context! { gone => true },
    )
}

async fn invite_page(
    req: HttpRequest, st: State, token: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let _ = req;
    match st.engine.console_link(token.into_inner()).await? {
        Some((p, m)) => Ok(render::page(
            "invite.html",
            context! { email => m.email, project_name => p.name },
        )),
        None => Ok(link_gone()),
    }
}

#[derive(Deserialize)]
struct PasswordForm {
    #[serde(default)]
    password: String,
    #[serde(default)]
    password_confirmation: String,
}

async fn accept_invite(
    req: HttpRequest, st: State, token: web::Path<String>, form: web::Form<PasswordForm>,
) -> Result<HttpResponse, ApiError> {
    if cross_site(&req) {
        return Ok(forbidden());
    }
    let token = token.into_inner();
    let f = form.into_inner();
    match st
        .engine
        .console_use_link(token.clone(), f.password, f.password_confirmation)
        .await
    {
        Ok(s) => {
            let mut r = see_other("/console");
            r.add_cookie(&session_cookie(&st, &req, s.token))
                .map_err(|e| herald_engine::Error::internal(e.to_string()))?;
            Ok(r)
        }
        Err(e) if e.code == ErrorCode::NotFound => Ok(link_gone()),
        Err(e) if e.code == ErrorCode::ValidationFailed => {
            let shown = st.engine.console_link(token).await?;
            let Some((p, m)) = shown else {
                return Ok(link_gone());
            };
            let msg = e
                .details
                .get("fields")
                .and_then(|f| f.get(0))
                .and_then(|f| f.get("message"))
                .and_then(|m| m.as_str())
                .unwrap_or("check the password")
                .to_string();
            let field = e
                .details
                .get("fields")
                .and_then(|f| f.get(0))
                .and_then(|f| f.get("field"))
                .and_then(|m| m.as_str())
                .unwrap_or("password");
            let error = if field == "password" {
                format!("The password {msg}.")
            } else {
                "The two passwords differ.".to_string()
            };
            Ok(page_with(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invite.html",
                context! { email => m.email, project_name => p.name, error => error },
            ))
        }
        Err(e) => Err(e.into()),
    }
}

#[derive(Deserialize)]
struct CsrfForm {
    #[serde(default)]
    csrf: String,
}

/// Ends the session on the server and clears the cookie.
async fn logout(
    req: HttpRequest, st: State, form: web::Form<CsrfForm>,
) -> Result<HttpResponse, ApiError> {
    let Some(s) = live_session(&st, &req).await? else {
        let mut r = see_other("/console/login");
        let _ = r.add_cookie(&cleared_cookie(&st, &req));
        return Ok(r);
    };
    let m = Member::of(&s);
    if !m.csrf_ok(&form.csrf) {
        return Ok(csrf_refused());
    }
    if let Some(token) = session_token(&req) {
        st.engine.console_sign_out(token).await?;
    }
    let mut r = see_other("/console/login");
    let _ = r.add_cookie(&cleared_cookie(&st, &req));
    Ok(r)
}
