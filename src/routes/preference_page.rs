//! The hosted preference page (docs/API.md §6, "Preference page"):
//! `POST /admin/v1/users/{external_id}/preference_link` issues a signed
//! link, `GET /p/{token}` shows the user's preferences as a form, `POST
//! /p/{token}` saves it through the same path as `PUT
//! /admin/v1/users/{external_id}/preferences`. The token is the only
//! credential of the page: it is verified (`preference_page::token`) before
//! anything is looked up, then the user goes through the User API's limit.

use super::endpoint::{Endpoint, Serve};
use super::ok;
use super::users::{update_preferences, PreferencesOf};
use crate::auth::{rate_limited, wait_secs, Admin};
use crate::bodies::preference_link::{PreferenceLink, PreferenceLinkInput};
use crate::bodies::preferences::{Preferences, PreferencesInput};
use crate::errors::{ApiError, ApiResult};
use crate::extract::{path_str, typed, Body, Query};
use crate::openapi::{external_id_param, path_param, str_schema, Content, Op};
use crate::preference_page::page;
use crate::state::{AppState, State};
use actix_web::{HttpRequest, HttpResponse};
use herald_engine::model::{Project, Timestamp, User};
use herald_engine::rules::preference_link::{self as token, Link};
use herald_engine::{Error, ErrorCode};

/// The most a form post may carry (a page of a hundred categories and
/// flows is a few KiB).
pub const MAX_FORM_BYTES: usize = 64 * 1024;

/// `POST /admin/v1/users/{external_id}/preference_link`
pub fn link_endpoint() -> Endpoint {
    Op::post(
        "/admin/v1/users/{external_id}/preference_link",
        "createPreferenceLink",
        "A signed link to the user's hosted preference page",
    )
    .param(external_id_param())
    .body("PreferenceLinkInput", false)
    .ok(200, "The link", Content::Json("PreferenceLink"))
    .errors(&[404])
    .to(create_link)
}

pub async fn create_link(
    a: Admin, req: HttpRequest, body: Body, st: State,
) -> ApiResult<HttpResponse> {
    let ext = path_str(&req, "external_id")?;
    let lifetime_ms = typed::<PreferenceLinkInput>(&body.object_or_empty()?)?.validate()?;
    let pid = a.project.id;
    let user = st.engine.user(pid, ext).await?;
    // Links expire on the real clock, whatever clock the project runs on:
    // they are credentials, not deliveries.
    let expires_at = (Timestamp::now().millis() + lifetime_ms).div_euclid(1000);
    let link = Link {
        project: pid,
        user: user.id,
        epoch: a.project.link_epoch,
        expires_at,
    };
    let token = token::issue(st.cursor_key(), &link);
    Ok(ok(PreferenceLink {
        expires_at: Timestamp::from_millis(expires_at * 1000),
        url: format!("{}/p/{token}", st.public_url()),
        token,
    }))
}

/// 404 for any token that does not open a page: forged, expired, issued
/// before a rotation, or of a user since deleted, alike.
fn link_not_found() -> ApiError {
    ApiError(
        Error::new(
            ErrorCode::NotFound,
            "preference link not found: it may have expired or been revoked",
        )
        .with("resource", "preference_link"),
    )
}

/// A token that opened its page: what it names, as stored now.
struct Opened {
    token: String,
    link: Link,
    project: Project,
    user: User,
}

/// Verifies the path's token, then finds its project (at the token's epoch)
/// and user, and charges the request to the user's User API limit. A forged
/// token costs one HMAC and no lookup; it is not charged to the address's
/// budget of wrong credentials: a 256-bit MAC is not guessed, and that
/// budget, shared by every API, would let a scanner of pages lock out the
/// API clients behind the same address.
async fn open(st: &AppState, req: &HttpRequest) -> ApiResult<Opened> {
    let token = path_str(req, "token")?;
    let now = Timestamp::now().millis().div_euclid(1000);
    // forged or expired: the same answer (`Refused` says which only to tests)
    let link = token::verify(st.cursor_key(), &token, now).map_err(|_| link_not_found())?;
    let project = st
        .engine
        .project(link.project)
        .await?
        .filter(|p| p.link_epoch == link.epoch)
        .ok_or_else(link_not_found)?;
    let user = st
        .engine
        .user_by_id(project.id, link.user)
        .await?
        .ok_or_else(link_not_found)?;
    st.limits.housekeeping();
    if let Err(nu) = st.limits.user.check_key(&(project.id, user.id)) {
        return Err(rate_limited(wait_secs(&nu), st.limits.user_rate));
    }
    Ok(Opened {
        token,
        link,
        project,
        user,
    })
}

/// An answer of the page: never cached, never framed, no referrer (the
/// token is in its URL), nothing loaded from elsewhere.
pub(super) fn page_headers(
    mut b: actix_web::HttpResponseBuilder,
) -> actix_web::HttpResponseBuilder {
    b.insert_header(("content-security-policy", page::CSP))
        .insert_header(("cache-control", "no-store"))
        .insert_header(("referrer-policy", "no-referrer"))
        .insert_header(("x-content-type-options", "nosniff"))
        .insert_header(("x-frame-options", "DENY"));
    b
}

fn token_param() -> crate::openapi::Parameter {
    link_token_param(
        "The token of a link from `POST /admin/v1/users/{external_id}/preference_link`.",
    )
}

/// The `{token}` of a signed link's path (this page's, an unsubscribe
/// link's), described as `what`.
pub(super) fn link_token_param(what: &str) -> crate::openapi::Parameter {
    path_param(
        "token",
        str_schema()
            .min_length(Some(1))
            .max_length(Some(200))
            .into(),
        what,
    )
}

/// `GET /p/preferences.css`
pub fn css_endpoint() -> Endpoint {
    Op::get(
        "/p/preferences.css",
        "preferencePageCss",
        "Preference page stylesheet",
    )
    .ok(200, "CSS", Content::Text("text/css", "string"))
    .to(css)
}

pub async fn css() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/css; charset=utf-8")
        .insert_header(("cache-control", "no-cache"))
        .insert_header(("x-content-type-options", "nosniff"))
        .body(page::CSS)
}

/// `GET /p/{token}`
pub fn page_endpoint() -> Endpoint {
    Op::get(
        "/p/{token}",
        "preferencePage",
        "The user's hosted preference page",
    )
    .param(token_param())
    .param(crate::openapi::query_param(
        "saved",
        crate::openapi::enum_schema(&["1"]),
        "`1` after a save: the page shows that it saved.",
    ))
    .ok(200, "An HTML page", Content::Text("text/html", "string"))
    .errors(&[400, 404, 429])
    .to(show)
}

pub async fn show(req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let o = open(&st, &req).await?;
    // `saved` other than `1` is a 400 `invalid_param` (after the token: a
    // bad link is a 404 whatever its query)
    let saved = Query::of(&req).choice("saved", |s| (s == "1").then_some(true))?;
    let saved = saved.unwrap_or(false);
    let setting = st
        .engine
        .preference_setting(o.project.id, Some(o.user.id))
        .await?;
    let view = Preferences::new(&setting, false);
    let csrf = token::csrf(st.cursor_key(), &o.link, &o.token);
    Ok(page_headers(HttpResponse::Ok())
        .content_type("text/html; charset=utf-8")
        .body(page::render(&view, &csrf, saved)))
}

/// `POST /p/{token}`
pub fn save_endpoint() -> Endpoint {
    Op::post(
        "/p/{token}",
        "savePreferencePage",
        "Save the hosted preference page's form",
    )
    .param(token_param())
    .form_body("PreferenceForm")
    .ok(
        303,
        "Saved: `Location` is the page with `?saved=1`",
        Content::Empty,
    )
    .errors(&[404, 429])
    .to(save)
}

/// A refused form post (400 `bad_request`, `details.reason` says which check).
fn refused(reason: &str, message: &str) -> ApiError {
    ApiError(Error::bad_request(reason, None, message))
}

/// The form's own checks: a form body, posted from the page's origin (when
/// the browser says where from), carrying the page's CSRF value.
fn check_form(
    st: &AppState, req: &HttpRequest, o: &Opened, body: &Body,
) -> ApiResult<Vec<(String, String)>> {
    if body.bytes().len() > MAX_FORM_BYTES {
        return Err(ApiError(Error::field(
            "body",
            "length",
            format!("the form is larger than {} KiB", MAX_FORM_BYTES / 1024),
        )));
    }
    let header = |name: &str| {
        req.headers()
            .get(name)
            .map(|v| v.to_str().unwrap_or("").trim().to_ascii_lowercase())
    };
    let essence = header("content-type").unwrap_or_default();
    let essence = essence.split(';').next().unwrap_or("").trim();
    if essence != "application/x-www-form-urlencoded" {
        return Err(refused(
            "invalid_form",
            "the body must be a form with Content-Type: application/x-www-form-urlencoded",
        ));
    }
    let fetch_site = header("sec-fetch-site");
    if fetch_site.as_deref() == Some("cross-site") {
        return Err(refused(
            "cross_site",
            "the form was posted from another site",
        ));
    }
    // The page's `Referrer-Policy: no-referrer` makes a browser send
    // `Origin: null` on the page's own post; it says where from in
    // `Sec-Fetch-Site`, which a page cannot set.
    let own_post = fetch_site.as_deref() == Some("same-origin");
    if let Some(origin) = header("origin").filter(|o| !(o == "null" && own_post)) {
        let ours = url::Url::parse(st.public_url()).map(|u| u.origin().ascii_serialization());
        let theirs = url::Url::parse(&origin).map(|u| u.origin().ascii_serialization());
        let same = matches!((ours, theirs), (Ok(a), Ok(b)) if a == b);
        if !same {
            return Err(refused(
                "cross_site",
                "the form was posted from another origin",
            ));
        }
    }
    let form: Vec<(String, String)> = url::form_urlencoded::parse(body.bytes())
        .into_owned()
        .collect();
    let given = form
        .iter()
        .find(|(k, _)| k == "csrf")
        .map(|(_, v)| v.as_str())
        .unwrap_or("");
    if !token::csrf_matches(st.cursor_key(), &o.link, &o.token, given) {
        return Err(refused(
            "invalid_csrf",
            "the form's csrf value is missing or wrong: reload the page and save again",
        ));
    }
    Ok(form)
}

pub async fn save(req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let o = open(&st, &req).await?;
    let form = check_form(&st, &req, &o, &body)?;
    // What the page showed is what the form can change: read as it stands
    // now, so a category or flow gone since is left out, not refused.
    let setting = st
        .engine
        .preference_setting(o.project.id, Some(o.user.id))
        .await?;
    let patch = page::patch_from_form(&Preferences::new(&setting, false), &form);
    let input: PreferencesInput = typed(&patch)?;
    let pid = o.project.id;
    update_preferences(&st, pid, PreferencesOf::User(Box::new(o.user)), input, &req).await?;
    Ok(page_headers(HttpResponse::SeeOther())
        .insert_header((
            "location",
            format!("{}/p/{}?saved=1", st.public_url(), o.token),
        ))
        .finish())
}
