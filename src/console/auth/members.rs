//! Settings → Members (`/console/settings/members`), for owners only: the
//! project's members and their roles, inviting a member (the new sign-in
//! link is shown once), changing a role, removing a member. Editors and
//! viewers get 403. Plain forms, each carrying the session's CSRF token.

use super::Member;
use crate::console::render;
use crate::errors::ApiError;
use crate::state::State;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use herald_engine::audit::Actor;
use herald_engine::console::{self, Change, Role};
use herald_engine::ErrorCode;
use minijinja::context;
use serde::Deserialize;

const PATH: &str = "/console/settings/members";

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource(PATH)
            .route(web::get().to(list))
            .route(web::post().to(invite)),
    )
    .service(web::resource("/console/settings/members/role").route(web::post().to(set_role)))
    .service(web::resource("/console/settings/members/remove").route(web::post().to(remove)));
}

fn actor(m: &Member) -> Actor {
    Actor::Member {
        email: m.email.clone(),
    }
}

/// The page, with what the last action left to say.
async fn show(
    st: &State, m: &Member, status: StatusCode, extra: minijinja::Value,
) -> Result<HttpResponse, ApiError> {
    if console::require(m.role, Change::Members).is_err() {
        let mut r = render::member_page(
            m,
            "/console/settings",
            "members.html",
            context! { forbidden => true },
        );
        *r.status_mut() = StatusCode::FORBIDDEN;
        return Ok(r);
    }
    let members: Vec<_> = st
        .engine
        .console_members(m.project_id)
        .await?
        .into_iter()
        .map(|x| {
            context! {
                email => x.email,
                role => x.role.as_str(),
                pending => x.password_hash.is_none(),
            }
        })
        .collect();
    let roles: Vec<&str> = Role::ALL.iter().map(|r| r.as_str()).collect();
    let mut r = render::member_page(
        m,
        "/console/settings",
        "members.html",
        context! { members => members, roles => roles, ..extra },
    );
    *r.status_mut() = status;
    Ok(r)
}

async fn list(st: State, m: Member) -> Result<HttpResponse, ApiError> {
    show(&st, &m, StatusCode::OK, context! {}).await
}

/// The page again with a refused change's message.
async fn refused(
    st: &State, m: &Member, e: herald_engine::Error,
) -> Result<HttpResponse, ApiError> {
    let status = StatusCode::from_u16(e.code.status()).unwrap_or(StatusCode::BAD_REQUEST);
    let msg = e
        .details
        .get("fields")
        .and_then(|f| f.get(0))
        .map(|f| {
            format!(
                "{}: {}",
                f.get("field").and_then(|x| x.as_str()).unwrap_or(""),
                f.get("message").and_then(|x| x.as_str()).unwrap_or("")
            )
        })
        .unwrap_or_else(|| e.message.clone());
    show(st, m, status, context! { error => msg }).await
}

/// The gate of every change here: the CSRF token, then the role.
fn gate(m: &Member, csrf: &str) -> Option<HttpResponse> {
    if !m.csrf_ok(csrf) {
        return Some(super::pages::csrf_refused());
    }
    None
}

#[derive(Deserialize)]
struct InviteForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    email: String,
    #[serde(default)]
    role: String,
}

/// The start of a sign-in link: `--public-url`, else the address the
/// request came to.
pub fn link_base(st: &State, req: &HttpRequest) -> String {
    let p = st.public_url();
    if !p.is_empty() {
        return p.to_string();
    }
    let ci = req.connection_info();
    format!("{}://{}", ci.scheme(), ci.host())
}

async fn invite(
    req: HttpRequest, st: State, m: Member, form: web::Form<InviteForm>,
) -> Result<HttpResponse, ApiError> {
    if let Some(r) = gate(&m, &form.csrf) {
        return Ok(r);
    }
    if let Err(e) = console::require(m.role, Change::Members) {
        return refused(&st, &m, e).await;
    }
    let role = match Role::parse(&form.role, "role") {
        Ok(r) => r,
        Err(e) => return refused(&st, &m, e).await,
    };
    match st
        .engine
        .console_add_member(
            m.project_name.clone(),
            form.email.clone(),
            role,
            console::LINK_TTL,
            actor(&m),
        )
        .await
    {
        Ok(inv) => {
            let link = format!("{}/console/invite/{}", link_base(&st, &req), inv.token);
            show(
                &st,
                &m,
                StatusCode::OK,
                context! { invited => inv.member.email, link => link },
            )
            .await
        }
        Err(e) if e.code != ErrorCode::Internal => refused(&st, &m, e).await,
        Err(e) => Err(e.into()),
    }
}

#[derive(Deserialize)]
struct RoleForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    email: String,
    #[serde(default)]
    role: String,
}

async fn set_role(
    st: State, m: Member, form: web::Form<RoleForm>,
) -> Result<HttpResponse, ApiError> {
    if let Some(r) = gate(&m, &form.csrf) {
        return Ok(r);
    }
    if let Err(e) = console::require(m.role, Change::Members) {
        return refused(&st, &m, e).await;
    }
    let role = match Role::parse(&form.role, "role") {
        Ok(r) => r,
        Err(e) => return refused(&st, &m, e).await,
    };
    match st
        .engine
        .console_set_role(m.project_id, form.email.clone(), role, actor(&m))
        .await
    {
        Ok(_) => Ok(super::pages::see_other(PATH)),
        Err(e) if e.code != ErrorCode::Internal => refused(&st, &m, e).await,
        Err(e) => Err(e.into()),
    }
}

#[derive(Deserialize)]
struct RemoveForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    email: String,
}

async fn remove(
    st: State, m: Member, form: web::Form<RemoveForm>,
) -> Result<HttpResponse, ApiError> {
    if let Some(r) = gate(&m, &form.csrf) {
        return Ok(r);
    }
    if let Err(e) = console::require(m.role, Change::Members) {
        return refused(&st, &m, e).await;
    }
    match st
        .engine
        .console_remove_member(m.project_id, form.email.clone(), actor(&m))
        .await
    {
        Ok(()) => Ok(super::pages::see_other(PATH)),
        Err(e) if e.code != ErrorCode::Internal => refused(&st, &m, e).await,
        Err(e) => Err(e.into()),
    }
}
