//! `/admin/v1/project`: settings, the user-JWT signing key and the
//! preference-page links' key (`rotate_link_secret`).

use super::endpoint::{Endpoint, Serve};
use super::{created, no_content, ok};
use crate::auth::Admin;
use crate::bodies;
use crate::errors::{ApiError, ApiResult};
use crate::extract::{typed, Body};
use crate::openapi::{Content, Op};
use crate::state::State;
use actix_web::{web, HttpResponse};
use herald_engine::bus::ProjectNotice;
use herald_engine::Error;
use rsa::pkcs1::DecodeRsaPublicKey;
use rsa::pkcs8::{DecodePublicKey, EncodePrivateKey, EncodePublicKey, LineEnding};
use rsa::traits::PublicKeyParts;

/// `GET /admin/v1/project`
pub fn get_endpoint() -> Endpoint {
    Op::get("/admin/v1/project", "getProject", "The project")
        .ok(200, "The project", Content::Json("Project"))
        .to(get)
}

pub async fn get(a: Admin, st: State) -> ApiResult<HttpResponse> {
    let id = a.project.id;
    let (p, bytes) = st.engine.project_with_usage(id).await?;
    Ok(ok(bodies::Project::with_usage(&p, bytes)))
}

/// The project as the routes answer it: with its usage, read after the change.
async fn with_usage(st: &State, p: herald_engine::model::Project) -> ApiResult<HttpResponse> {
    let id = p.id;
    let bytes = st.engine.usage_bytes(id).await?;
    Ok(ok(bodies::Project::with_usage(&p, bytes)))
}

/// `PUT /admin/v1/project`
pub fn update_endpoint() -> Endpoint {
    Op::put(
        "/admin/v1/project",
        "updateProject",
        "Update the project's settings",
    )
    .body("ProjectUpdate", true)
    .ok(200, "The project", Content::Json("Project"))
    .errors(&[409])
    .to(update)
}

pub async fn update(a: Admin, body: Body, st: State) -> ApiResult<HttpResponse> {
    let bodies::ProjectChange {
        security_mode: security,
        name,
        clock,
        timezone,
        retention,
        quota_bytes,
        sandbox,
        branding,
        default_locale,
        default_layout,
    } = typed::<bodies::ProjectUpdate>(&body.object()?)?.validate()?;
    let id = a.project.id;
    let was_secure = a.project.security_mode;
    // Security mode marks a project in production use: no test clock there,
    // and none left behind when it is turned on.
    let secure_after = security.unwrap_or(was_secure);
    let on_test = a.project.test_clock.is_some() || clock == Some(bodies::ClockKind::Test);
    if secure_after && on_test && clock != Some(bodies::ClockKind::Real) {
        // Say which move was refused: taking a test clock, or turning
        // security mode on while on one (and how to get there).
        let message = if clock == Some(bodies::ClockKind::Test) && was_secure {
            "a project with security mode on is in production use and cannot take a test clock"
        } else if clock == Some(bodies::ClockKind::Test) {
            "security mode cannot be turned on together with a test clock: a project in \
             production use runs on the real clock"
        } else {
            "the project is on a test clock, so security mode cannot be turned on: set \
             \"clock\": \"real\" first (or in the same request)"
        };
        return Err(ApiError(Error::conflict(
            "project",
            None,
            "production_project",
            message,
        )));
    }
    // The content defaults key the compiled content: set by the engine,
    // which checks the layout exists and bumps the content version.
    if default_locale.is_some() || default_layout.is_some() {
        st.engine
            .set_content_defaults(id, a.actor.clone(), default_locale, default_layout)
            .await?;
    }
    if let Some(c) = clock {
        st.engine
            .set_test_clock(
                id,
                a.actor.clone(),
                c == bodies::ClockKind::Test,
                secure_after,
            )
            .await?;
    }
    let p = st
        .engine
        .update_project(id, a.actor.clone(), "project.updated", move |p| {
            if let Some(b) = security {
                p.security_mode = b;
            }
            if let Some(n) = name {
                p.name = n;
            }
            if let Some(tz) = timezone {
                p.timezone = tz;
            }
            retention.apply(&mut p.retention);
            if let Some(q) = quota_bytes {
                p.quota_bytes = q;
            }
            if let Some(b) = sandbox {
                p.sandbox = b;
            }
            if let Some(b) = branding {
                p.branding = b;
            }
        })
        .await?;
    if p.security_mode && !was_secure {
        crate::live::bus::project_changed(&st, id, ProjectNotice::SecurityOn);
    }
    with_usage(&st, p).await
}

/// `POST /admin/v1/project/clock/advance`
pub fn advance_clock_endpoint() -> Endpoint {
    Op::post(
        "/admin/v1/project/clock/advance",
        "advanceProjectClock",
        "Move the project's test clock forward; what became due runs",
    )
    .body("ClockAdvance", true)
    .ok(200, "The project", Content::Json("Project"))
    .errors(&[409])
    .to(advance_clock)
}

/// `POST /admin/v1/project/clock/advance`: moves the test clock `by` a
/// duration or `to` an instant; what became due runs now.
pub async fn advance_clock(a: Admin, body: Body, st: State) -> ApiResult<HttpResponse> {
    let (by, to) = typed::<bodies::workflow::ClockAdvance>(&body.object()?)?.validate()?;
    let p = st
        .engine
        .advance_clock(a.project.id, a.actor.clone(), by, to)
        .await?;
    with_usage(&st, p).await
}

/// Closes the project's sockets that a user JWT authenticated, with 4401 (on
/// every node of a cluster): the key that verified their tokens is gone.
fn signing_key_changed(st: &State, project: uuid::Uuid) {
    crate::live::bus::project_changed(st, project, ProjectNotice::SigningKey);
}

/// Parses an RSA public key (SPKI or PKCS#1 PEM) of at least 2048 bits; returns SPKI PEM.
fn parse_public_key(pem: &str) -> Result<String, Error> {
    let bad = |m: &str| Error::field("public_key", "format", m.to_string());
    let key = rsa::RsaPublicKey::from_public_key_pem(pem.trim())
        .or_else(|_| rsa::RsaPublicKey::from_pkcs1_pem(pem.trim()))
        .map_err(|_| bad("must be an RSA public key in PEM (PUBLIC KEY or RSA PUBLIC KEY)"))?;
    if key.size() * 8 < 2048 {
        return Err(bad("the RSA key must have at least 2048 bits"));
    }
    key.to_public_key_pem(LineEnding::LF)
        .map_err(|_| bad("cannot encode the key"))
}

/// `PUT /admin/v1/project/signing_key`
pub fn put_signing_key_endpoint() -> Endpoint {
    Op::put(
        "/admin/v1/project/signing_key",
        "putSigningKey",
        "Store the RSA public key that verifies user JWTs",
    )
    .body("SigningKeyInput", true)
    .ok(200, "The project", Content::Json("Project"))
    .to(put_signing_key)
}

pub async fn put_signing_key(a: Admin, body: Body, st: State) -> ApiResult<HttpResponse> {
    let pem = typed::<bodies::SigningKeyInput>(&body.object()?)?.validate()?;
    let pem = parse_public_key(&pem)?;
    let id = a.project.id;
    let p = st
        .engine
        .update_project(id, a.actor.clone(), "signing_key.put", move |p| {
            p.signing_key = Some(pem)
        })
        .await?;
    if p.signing_key != a.project.signing_key {
        signing_key_changed(&st, id);
    }
    with_usage(&st, p).await
}

/// `POST /admin/v1/project/signing_key`
pub fn generate_signing_key_endpoint() -> Endpoint {
    Op::post(
        "/admin/v1/project/signing_key",
        "generateSigningKey",
        "Generate an RSA-2048 key pair; the private key is returned once",
    )
    .ok(201, "The key pair", Content::Json("SigningKeyPair"))
    .to(generate_signing_key)
}

pub async fn generate_signing_key(a: Admin, st: State) -> ApiResult<HttpResponse> {
    // RSA key generation is CPU work of a few hundred ms: keep it off the workers.
    let (private, public) = web::block(|| -> Result<(String, String), Error> {
        let key = rsa::RsaPrivateKey::new(&mut rand::thread_rng(), 2048)
            .map_err(|e| Error::internal(format!("rsa keygen: {e}")))?;
        let private = key
            .to_pkcs8_pem(LineEnding::LF)
            .map_err(|e| Error::internal(format!("rsa encode: {e}")))?
            .to_string();
        let public = key
            .to_public_key()
            .to_public_key_pem(LineEnding::LF)
            .map_err(|e| Error::internal(format!("rsa encode: {e}")))?;
        Ok((private, public))
    })
    .await
    .map_err(|e| ApiError(Error::internal(e.to_string())))??;
    let id = a.project.id;
    let pem = public.clone();
    st.engine
        .update_project(id, a.actor.clone(), "signing_key.generated", move |p| {
            p.signing_key = Some(pem)
        })
        .await?;
    signing_key_changed(&st, id);
    Ok(created(bodies::SigningKeyPair {
        private_key: private,
        public_key: public,
    }))
}

/// `DELETE /admin/v1/project/signing_key`
pub fn delete_signing_key_endpoint() -> Endpoint {
    Op::delete(
        "/admin/v1/project/signing_key",
        "deleteSigningKey",
        "Remove the signing key",
    )
    .ok(204, "Removed", Content::Empty)
    .to(delete_signing_key)
}

pub async fn delete_signing_key(a: Admin, st: State) -> ApiResult<HttpResponse> {
    let id = a.project.id;
    st.engine
        .update_project(id, a.actor.clone(), "signing_key.deleted", |p| {
            p.signing_key = None
        })
        .await?;
    if a.project.signing_key.is_some() {
        signing_key_changed(&st, id);
    }
    Ok(no_content())
}

/// `POST /admin/v1/project/rotate_secret`
pub fn rotate_secret_endpoint() -> Endpoint {
    Op::post(
        "/admin/v1/project/rotate_secret",
        "rotateSecretKey",
        "Replace the project's secret key (shown once); the old one works for a grace period",
    )
    .body("RotateSecret", false)
    .ok(200, "The new secret key", Content::Json("RotatedSecret"))
    .errors(&[422])
    .to(rotate_secret)
}

/// `POST /admin/v1/project/rotate_secret {grace_seconds?}`: the same
/// rotation as the operator's (`herald project rotate-secret`), by the
/// caller (a console owner, or the holder of the key itself), recorded in
/// the audit log as theirs.
pub async fn rotate_secret(a: Admin, body: Body, st: State) -> ApiResult<HttpResponse> {
    let grace = typed::<crate::bodies::ops::RotateSecret>(&body.object_or_empty()?)?
        .validate(super::ops::DEFAULT_GRACE)?;
    let (p, secret_key) = st
        .engine
        .rotate_secret(a.project.name.clone(), grace, a.actor.clone())
        .await?;
    tracing::info!(project_id = %p.id, grace_seconds = grace.as_secs(), "project secret key rotated");
    Ok(ok(crate::bodies::ops::RotatedSecret {
        secret_key,
        previous_secret_expires_at: p.previous_secret_expires_at,
    }))
}

/// `POST /admin/v1/project/rotate_link_secret`
pub fn rotate_link_secret_endpoint() -> Endpoint {
    Op::post(
        "/admin/v1/project/rotate_link_secret",
        "rotateLinkSecret",
        "Revoke every preference-page link issued so far",
    )
    .ok(
        204,
        "Rotated: links issued before no longer open",
        Content::Empty,
    )
    .to(rotate_link_secret)
}

/// `POST /admin/v1/project/rotate_link_secret`: the project's links are
/// signed with a key derived from its `link_epoch`; raising it revokes every
/// link issued before (on every node: the epoch is stored with the project).
pub async fn rotate_link_secret(a: Admin, st: State) -> ApiResult<HttpResponse> {
    st.engine
        .update_project(a.project.id, a.actor.clone(), "link_secret.rotated", |p| {
            p.link_epoch += 1
        })
        .await?;
    Ok(no_content())
}
