//! The operator API, `/ops/v1/projects…`: projects and their keys on a running
//! server (what `herald project …` uses while a server holds the data
//! directory, and what an operator's own tooling may call).
//!
//! It is not part of the tenants' contract and not in `/openapi.json`: every
//! route needs the operator token in `x-herald-ops-token` (see
//! `ops_access::Ops::authorize`: the `ops.json` token from this machine, or
//! `HERALD_OPERATOR_TOKEN` from anywhere), checked before anything else,
//! unknown methods included. Errors are the contract's error object.

use super::{created, no_content, ok, Guarded};
use crate::bodies::ops::{Items, NewConsoleMember, NewProject, RotateSecret};
use crate::errors::{ApiError, ApiResult};
use crate::extract::{path_str, typed, Body, Query};
use crate::ops_access::Ops;
use crate::state::State;
use actix_web::{web, HttpRequest, HttpResponse};
use herald_engine::model::OperatorProject;
use herald_engine::Error;
use std::time::Duration;

/// The grace period of a rotated secret when none is given: 24 h.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(24 * 3600);

fn authorize(req: &HttpRequest, st: &State) -> ApiResult<()> {
    let ops = req
        .app_data::<web::Data<Ops>>()
        .ok_or_else(|| ApiError(Error::internal("ops state missing")))?;
    ops.authorize(req, st)
}

/// Unknown methods of an operator route: 404, after the token check.
async fn fallback(req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    authorize(&req, &st)?;
    Err(ApiError(Error::no_route()))
}

fn resource(path: &str) -> actix_web::Resource {
    web::resource(path).default_service(web::to(fallback))
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    use web::{delete, get, post};
    cfg.service(
        resource("/ops/v1/projects")
            .route(get().to(Guarded(list)))
            .route(post().to(Guarded(create))),
    )
    .service(
        resource("/ops/v1/projects/{name}")
            .route(get().to(Guarded(show)))
            .route(delete().to(Guarded(delete_project))),
    )
    .service(resource("/ops/v1/projects/{name}/rotate_secret").route(post().to(Guarded(rotate))))
    .service(
        resource("/ops/v1/projects/{name}/console_members")
            .route(post().to(Guarded(add_console_member))),
    );
}

/// `GET /ops/v1/projects`: `{items: [project…]}`, in creation order (a server
/// holds few projects: no pagination).
async fn list(req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    authorize(&req, &st)?;
    let projects = st.engine.projects().await?;
    let items: Vec<OperatorProject> = projects.iter().map(OperatorProject::from).collect();
    Ok(ok(Items { items }))
}

/// `POST /ops/v1/projects {name}`: 201 with the project, its `public_key` and
/// its `secret_key` (shown this once; only its hash is kept).
async fn create(req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    authorize(&req, &st)?;
    let name = typed::<NewProject>(&body.object()?)?.validate()?;
    let (p, keys) = st.engine.create_project(name).await?;
    let secret = keys.secret_key;
    tracing::info!(project_id = %p.id, name = %p.name, "project created by an operator");
    Ok(created(OperatorProject::from(&p).with_secret(secret)))
}

/// `GET /ops/v1/projects/{name}`: the project, never a secret.
async fn show(req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    authorize(&req, &st)?;
    let name = path_str(&req, "name")?;
    let p = st.engine.project_named(name).await?;
    Ok(ok(OperatorProject::from(&p)))
}

/// `POST /ops/v1/projects/{name}/rotate_secret {grace_seconds?}`: 200 with the
/// project and its new `secret_key`; the replaced secret keeps working for
/// `grace_seconds` (default 86,400; 0: refused at once; at most 30 days).
async fn rotate(req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    authorize(&req, &st)?;
    let name = path_str(&req, "name")?;
    let grace = typed::<RotateSecret>(&body.object_or_empty()?)?.validate(DEFAULT_GRACE)?;
    let (p, secret) = st
        .engine
        .rotate_secret(name, grace, herald_engine::audit::Actor::Operator)
        .await?;
    tracing::info!(project_id = %p.id, grace_seconds = grace.as_secs(), "project secret key rotated");
    Ok(ok(OperatorProject::from(&p).with_secret(secret)))
}

/// `DELETE /ops/v1/projects/{name}?confirm={name}`: deletes the project and
/// all its data, closes its live sockets; 204.
async fn delete_project(req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    authorize(&req, &st)?;
    let name = path_str(&req, "name")?;
    match Query::of(&req).get("confirm") {
        None | Some("") => {
            return Err(Error::field(
                "confirm",
                "required",
                "deleting a project removes all its data: repeat its name in ?confirm=",
            )
            .into())
        }
        Some(c) if c != name => {
            return Err(Error::field(
                "confirm",
                "format",
                "must be the name of the project being deleted",
            )
            .into())
        }
        Some(_) => {}
    }
    let p = st.engine.delete_project(name).await?;
    crate::live::bus::project_changed(&st, p.id, herald_engine::bus::ProjectNotice::Deleted);
    tracing::info!(project_id = %p.id, name = %p.name, "project deleted by an operator");
    Ok(no_content())
}

/// `POST /ops/v1/projects/{name}/console_members {email, role,
/// valid_for_seconds?}`: adds a console member (or gives an existing one the
/// role and a fresh link); 201 with the one-time sign-in `token` and the
/// server's `public_url` the link starts with (`herald console add-member`).
async fn add_console_member(req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    authorize(&req, &st)?;
    let name = path_str(&req, "name")?;
    let (email, role, ttl) = typed::<NewConsoleMember>(&body.object()?)?.validate()?;
    let inv = st
        .engine
        .console_add_member(
            name,
            email,
            role,
            ttl,
            herald_engine::audit::Actor::Operator,
        )
        .await?;
    tracing::info!(project_id = %inv.project.id, role = inv.member.role.as_str(), "console member added by an operator");
    Ok(created(serde_json::json!({
        "project": inv.project.name,
        "email": inv.member.email,
        "role": inv.member.role.as_str(),
        "token": inv.token,
        "public_url": st.public_url(),
    })))
}
