//! Admin API users: create/update, read, list, delete; preferences; a user's feed.

use super::endpoint::{Endpoint, Serve};
use super::{created, list as list_page, no_content, ok};
use crate::auth::Admin;
use crate::bodies::bulk::{
    BulkDeleteInput, BulkDeleteResult, BulkErasure, BulkUserResult, BulkUsersInput, BulkUsersResult,
};
use crate::bodies::preferences::{Preferences, PreferencesInput};
use crate::bodies::user_api::FeedPage;
use crate::bodies::users::{Erasure, UserInput};
use crate::errors::ApiResult;
use crate::extract::Given;
use crate::extract::{path_str, typed, Body, Query};
use crate::idempotency::{self, Created};
use crate::openapi::{
    enum_schema, explain_param, external_id_param, feed_category_param, feed_flow_param,
    feed_status_param, query_param, uuid_param, Content, Op,
};
use crate::pagination;
use crate::state::{AppState, State};
use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse};
use herald_engine::actors::FeedFilters;
use herald_engine::model::{Project, User, UserPatch};
use herald_engine::storage::ErasureStatus;
use herald_engine::storage::FeedFilter;
use herald_engine::views::UserView;
use herald_engine::Error;
use herald_engine::{validate, Validator};
use serde_json::Value;
use std::sync::Arc;
use uuid::Uuid;

/// A user as a feed entry's `actor` (the engine's frames carry it as JSON).
pub fn actor_value(u: Option<User>) -> Value {
    UserView::json(u.as_ref())
}

fn ext_id(req: &HttpRequest) -> ApiResult<String> {
    let ext = path_str(req, "external_id")?;
    let mut v = Validator::new();
    validate::external_id(&ext, "external_id", &mut v);
    v.finish()?;
    Ok(ext)
}

/// `PUT /admin/v1/users/{external_id}`
pub fn put_endpoint() -> Endpoint {
    Op::put(
        "/admin/v1/users/{external_id}",
        "putUser",
        "Create or update a user",
    )
    .param(external_id_param())
    .body("UserInput", true)
    .ok(201, "Created", Content::Json("User"))
    .ok(200, "Updated", Content::Json("User"))
    .to(put)
}

pub async fn put(a: Admin, req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let ext = ext_id(&req)?;
    let input: UserInput = typed(&body.object()?)?;
    let mut v = Validator::new();
    let patch = input.validate("", &mut v);
    v.finish()?;
    let pid = a.project.id;
    let (user, was_created) = st.engine.upsert_user(pid, ext, patch).await?;
    Ok(if was_created {
        created(UserView::from(&user))
    } else {
        ok(UserView::from(&user))
    })
}

/// `POST /admin/v1/users/bulk`
pub fn bulk_endpoint() -> Endpoint {
    Op::post(
        "/admin/v1/users/bulk",
        "bulkUpsertUsers",
        "Create or update up to 1,000 users in one durable commit",
    )
    .body("BulkUsersInput", true)
    .idempotent()
    .ok(
        200,
        "One result per item, in order: stored or refused",
        Content::Json("BulkUsersResult"),
    )
    .to(bulk)
    .exclusive()
}

/// `POST /admin/v1/users/bulk`: the good items stored in one durable commit,
/// the bad ones refused each with its 422, one result per item in order.
pub async fn bulk(a: Admin, req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let m = body.object()?;
    let idem = idempotency::prepare(&req, &m)?;
    let input = typed::<BulkUsersInput>(&m)?;
    let checked = input.validate()?;
    let pid = a.project.id;
    let st2 = st.clone();
    st2.once(pid, idem, "users", |_| async move {
        let good: Vec<(String, UserPatch)> = checked
            .iter()
            .filter_map(|c| c.as_ref().ok().cloned())
            .collect();
        let mut stored = st.engine.upsert_users(pid, good).await?.into_iter();
        let items = match &input.users {
            Given::Value(items) => items.as_slice(),
            _ => &[],
        };
        let mut results = Vec::with_capacity(checked.len());
        for (item, c) in items.iter().zip(&checked) {
            results.push(match c {
                Ok(_) => match stored.next() {
                    Some((user, was_created)) => BulkUserResult::stored(user, was_created),
                    None => return Err(Error::internal("a bulk upsert lost an item").into()),
                },
                Err(e) => BulkUserResult::refused(item, e),
            });
        }
        Ok(Created {
            status: StatusCode::OK,
            ..Created::new(&BulkUsersResult { results })
        })
    })
    .await
}

/// `POST /admin/v1/users/bulk_delete`
pub fn bulk_delete_endpoint() -> Endpoint {
    Op::post(
        "/admin/v1/users/bulk_delete",
        "bulkDeleteUsers",
        "Delete (or erase) up to 1,000 users",
    )
    .param(query_param(
        "erase",
        enum_schema(&["true", "false"]),
        "`true`: erase each user as `erase` in the body does.",
    ))
    .body("BulkDeleteInput", true)
    .idempotent()
    .ok(
        200,
        "How many were deleted; the external ids that named no user; with `erase`, the erasures",
        Content::Json("BulkDeleteResult"),
    )
    .to(bulk_delete)
    .exclusive()
}

/// `POST /admin/v1/users/bulk_delete`: every listed user deleted as `delete`
/// does, in one durable commit; unknown external ids are listed, not errors.
pub async fn bulk_delete(
    a: Admin, req: HttpRequest, body: Body, st: State,
) -> ApiResult<HttpResponse> {
    let m = body.object()?;
    let idem = idempotency::prepare(&req, &m)?;
    let (exts, erase_body) = typed::<BulkDeleteInput>(&m)?.validate()?;
    // `?erase=true` as the single DELETE takes it, or `"erase": true` in the body.
    let erase_query = Query::of(&req).choice("erase", |s| match s {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    })?;
    let erase = erase_body || erase_query == Some(true);
    let pid = a.project.id;
    let st2 = st.clone();
    st2.once(pid, idem, "users", |_| async move {
        // an external id listed twice is one user deleted
        let mut deleted = std::collections::HashSet::new();
        let mut not_found = vec![];
        let erasures = if erase {
            let jobs = st.engine.erase_users(pid, exts.clone()).await?;
            let mut erasures = vec![];
            for (ext, job) in exts.into_iter().zip(jobs) {
                match job {
                    Some(e) => {
                        if deleted.insert(ext.clone()) {
                            erasures.push(BulkErasure {
                                external_id: ext,
                                erasure: Erasure::from(&e),
                            });
                        }
                    }
                    None => not_found.push(ext),
                }
            }
            Some(erasures)
        } else {
            let found = st.engine.delete_users(pid, exts.clone()).await?;
            for (ext, f) in exts.into_iter().zip(found) {
                if f {
                    deleted.insert(ext);
                } else {
                    not_found.push(ext);
                }
            }
            None
        };
        let deleted = deleted.len();
        Ok(Created {
            status: StatusCode::OK,
            ..Created::new(&BulkDeleteResult {
                deleted,
                not_found,
                erasures,
            })
        })
    })
    .await
}

/// `GET /admin/v1/users/{external_id}`
pub fn get_endpoint() -> Endpoint {
    Op::get("/admin/v1/users/{external_id}", "getUser", "A user")
        .param(external_id_param())
        .ok(200, "The user", Content::Json("User"))
        .errors(&[404])
        .to(get)
}

pub async fn get(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let ext = path_str(&req, "external_id")?;
    let pid = a.project.id;
    let u = st.engine.user(pid, ext).await?;
    Ok(ok(UserView::from(&u)))
}

/// `DELETE /admin/v1/users/{external_id}`
pub fn delete_endpoint() -> Endpoint {
    Op::delete(
        "/admin/v1/users/{external_id}",
        "deleteUser",
        "Delete a user with its preferences, feed and subscriptions",
    )
    .param(external_id_param())
    .param(query_param(
        "erase",
        enum_schema(&["true", "false"]),
        "`true`: also erase the user's notifications, deliveries, feed entries and events.",
    ))
    .ok(
        204,
        "Deleted (and, with `erase=true`, erased)",
        Content::Empty,
    )
    .ok(
        202,
        "Deleted; the erasure continues in the background (`Location`: the erasure to poll)",
        Content::Json("Erasure"),
    )
    .errors(&[400, 404])
    .to(delete)
}

/// `DELETE /admin/v1/users/{external_id}`; with `?erase=true` the user's
/// notifications, deliveries, feed entries and events go too: 204 when that
/// finished within the request, else 202 with the erasure to poll
/// (`Location: /admin/v1/erasures/{id}`), which completes in the background
/// (after a restart too).
pub async fn delete(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let ext = path_str(&req, "external_id")?;
    let erase = Query::of(&req).choice("erase", |s| match s {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    })?;
    let pid = a.project.id;
    if erase != Some(true) {
        st.engine.delete_user(pid, ext).await?;
        return Ok(no_content());
    }
    let e = st.engine.erase_user(pid, ext).await?;
    if e.status == ErasureStatus::Complete {
        return Ok(no_content());
    }
    let body =
        serde_json::to_string(&Erasure::from(&e)).map_err(|e| Error::internal(e.to_string()))?;
    Ok(HttpResponse::Accepted()
        .insert_header(("location", format!("/admin/v1/erasures/{}", e.id)))
        .content_type("application/json")
        .body(body))
}

/// `GET /admin/v1/erasures/{id}`
pub fn get_erasure_endpoint() -> Endpoint {
    Op::get(
        "/admin/v1/erasures/{id}",
        "getErasure",
        "Where a user's erasure stands",
    )
    .param(uuid_param("id", "The erasure's id."))
    .ok(200, "The erasure", Content::Json("Erasure"))
    .errors(&[400, 404])
    .to(get_erasure)
}

/// `GET /admin/v1/erasures/{id}`: where an erasure stands.
pub async fn get_erasure(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let id = crate::extract::path_uuid(&req, "id")?;
    let pid = a.project.id;
    let e = st
        .engine
        .erasure(pid, id)
        .await?
        .ok_or_else(|| Error::not_found("erasure", id))?;
    Ok(ok(Erasure::from(&e)))
}

/// `GET /admin/v1/users`
pub fn list_endpoint() -> Endpoint {
    Op::get("/admin/v1/users", "listUsers", "List users")
        .paged()
        .ok(200, "A page of users", Content::Json("UserList"))
        .to(list)
}

pub async fn list(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let q = Query::of(&req);
    let paging = pagination::parse(&q, st.cursor_key(), &a.project.id, "users", &[])?;
    let pid = a.project.id;
    let page = st.engine.list_users(pid, paging.req.clone()).await?;
    Ok(list_page(&paging, &page, |u| UserView::from(u)))
}

/// The full preferences object of a user (every category and live flow
/// listed), or of the project's defaults (`None`); with the sources of its
/// values when `?explain=true`.
pub async fn preferences_view(
    st: &AppState, project: Uuid, user: Option<Uuid>, req: &HttpRequest,
) -> ApiResult<Preferences> {
    let explain = explain_of(req)?;
    let setting = st.engine.preference_setting(project, user).await?;
    Ok(Preferences::new(&setting, explain))
}

/// `?explain=true|false` (false when absent).
fn explain_of(req: &HttpRequest) -> ApiResult<bool> {
    let q = Query::of(req);
    let parse = |s: &str| match s {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    };
    Ok(q.choice("explain", parse)?.unwrap_or(false))
}

/// Whose preferences a PUT changes: a user's, or the project's defaults (a
/// change of its settings, which the audit log names the actor of).
pub enum PreferencesOf {
    User(Box<User>),
    Defaults(herald_engine::audit::Actor),
}

/// Validates and applies a preferences PUT for a user or for the
/// project's defaults; the full object after it.
pub async fn update_preferences(
    st: &AppState, project: Uuid, of: PreferencesOf, input: PreferencesInput, req: &HttpRequest,
) -> ApiResult<Preferences> {
    let explain = explain_of(req)?;
    // The flows and categories the patch is checked against are those the
    // answer lists; only the changed layer is read back from the update.
    let mut setting = st.engine.preference_setting(project, None).await?;
    let patch = input.validate(&setting.flows, &setting.categories)?;
    match of {
        PreferencesOf::User(user) => {
            setting.user = st.engine.update_preferences(project, *user, patch).await?
        }
        PreferencesOf::Defaults(actor) => {
            setting.defaults = st
                .engine
                .update_preference_defaults(project, actor, patch)
                .await?
        }
    }
    Ok(Preferences::new(&setting, explain))
}

/// `GET /admin/v1/users/{external_id}/preferences`
pub fn get_preferences_endpoint() -> Endpoint {
    Op::get(
        "/admin/v1/users/{external_id}/preferences",
        "getUserPreferences",
        "A user's preferences",
    )
    .param(external_id_param())
    .param(explain_param())
    .ok(200, "The preferences", Content::Json("Preferences"))
    .errors(&[400, 404])
    .to(get_preferences)
}

pub async fn get_preferences(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let ext = path_str(&req, "external_id")?;
    let pid = a.project.id;
    let u = st.engine.user(pid, ext).await?;
    Ok(ok(preferences_view(&st, pid, Some(u.id), &req).await?))
}

/// `PUT /admin/v1/users/{external_id}/preferences`
pub fn put_preferences_endpoint() -> Endpoint {
    Op::put(
        "/admin/v1/users/{external_id}/preferences",
        "putUserPreferences",
        "Update a user's preferences",
    )
    .param(external_id_param())
    .param(explain_param())
    .body("PreferencesInput", true)
    .ok(200, "The full preferences", Content::Json("Preferences"))
    .errors(&[404])
    .to(put_preferences)
}

pub async fn put_preferences(
    a: Admin, req: HttpRequest, body: Body, st: State,
) -> ApiResult<HttpResponse> {
    let ext = path_str(&req, "external_id")?;
    let input = typed(&body.object()?)?;
    let pid = a.project.id;
    let u = st.engine.user(pid, ext).await?;
    Ok(ok(update_preferences(
        &st,
        pid,
        PreferencesOf::User(Box::new(u)),
        input,
        &req,
    )
    .await?))
}

/// The parsed query of a feed page (`status` filter and paging).
pub struct FeedQuery {
    filters: FeedFilters,
    paging: pagination::Paging,
    /// The plain first page (no status, no cursor): the one inboxes poll, cached.
    first_page: bool,
}

/// Parses a feed page's query. The cursor binds to the feed's owner by project
/// and external id, which the path or the credentials give before any lookup, so
/// query problems (400) are found before an unknown user (404).
pub fn feed_query(
    st: &AppState, project: Uuid, ext: &str, req: &HttpRequest,
) -> ApiResult<FeedQuery> {
    let q = Query::of(req);
    let filter = q.choice("status", FeedFilter::parse)?.unwrap_or_default();
    let status = q.get("status").map(str::to_string);
    let flow = q.get("flow").map(str::to_string);
    let category = q.get("category").map(str::to_string);
    let first_page = status.is_none() && flow.is_none() && category.is_none();
    let paging = pagination::parse(
        &q,
        st.cursor_key(),
        &project,
        &format!("feed:{project}:{ext}"),
        &[
            ("status", status),
            ("flow", flow.clone()),
            ("category", category.clone()),
        ],
    )?;
    let first_page = first_page && paging.req.after.is_none() && paging.req.before.is_none();
    Ok(FeedQuery {
        filters: FeedFilters {
            status: filter,
            flow,
            category,
        },
        paging,
        first_page,
    })
}

/// A page of a user's feed with the meta counts, as the User API shows it: the
/// response itself, serialised straight from the records (the hottest read). The
/// plain first page is served from the store's feed-page cache when current.
pub async fn feed_page(
    st: &AppState, project: &Arc<Project>, user: Uuid, fq: FeedQuery,
) -> ApiResult<HttpResponse> {
    let FeedQuery {
        filters,
        paging,
        first_page,
    } = fq;
    let req = paging.req.clone();
    let body = st
        .engine
        .feed_page(project.clone(), user, filters, req, first_page, move |r| {
            let body = FeedPage {
                items: r
                    .page
                    .items
                    .iter()
                    .map(|d| d.feed_entry(r.actor_of(d)))
                    .collect(),
                meta: r.meta(),
                page: paging.page_object(&r.page),
            };
            serde_json::to_vec(&body).map_err(|e| herald_engine::Error::internal(e.to_string()))
        })
        .await?;
    Ok(HttpResponse::Ok()
        .content_type("application/json")
        .body(body.to_vec()))
}

/// `GET /admin/v1/users/{external_id}/feed`
pub fn feed_endpoint() -> Endpoint {
    Op::get(
        "/admin/v1/users/{external_id}/feed",
        "getUserFeed",
        "A user's feed, as the User API shows it",
    )
    .param(external_id_param())
    .param(feed_status_param())
    .param(feed_flow_param())
    .param(feed_category_param())
    .paged()
    .ok(200, "A page of feed entries", Content::Json("FeedPage"))
    .errors(&[404])
    .to(feed)
}

pub async fn feed(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let ext = path_str(&req, "external_id")?;
    let pid = a.project.id;
    let fq = feed_query(&st, pid, &ext, &req)?;
    let u = st.engine.user(pid, ext).await?;
    feed_page(&st, &a.project, u.id, fq).await
}
