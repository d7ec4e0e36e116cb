//! Admin API preference categories (`/admin/v1/categories`) and the
//! project's preference defaults (`/admin/v1/preferences/defaults`):
//! what users' preferences are grouped by and start from (docs/API.md §6).

use super::endpoint::{Endpoint, Serve};
use super::users::{preferences_view, update_preferences, PreferencesOf};
use super::{created, no_content, ok};
use crate::auth::Admin;
use crate::bodies::preferences::{is_category_handle, Category, CategoryInput, CategoryList};
use crate::errors::ApiResult;
use crate::extract::{path_str, typed, Body};
use crate::openapi::{category_handle_param, explain_param, Content, Op};
use crate::state::State;
use actix_web::{HttpRequest, HttpResponse};
use herald_engine::Error;

fn handle_of(req: &HttpRequest) -> ApiResult<String> {
    let h = path_str(req, "handle")?;
    if !is_category_handle(&h) {
        return Err(Error::field(
            "handle",
            "format",
            "a category handle is like a flow's: ^[a-z0-9][a-z0-9_-]{0,63}$",
        )
        .into());
    }
    Ok(h)
}

/// `PUT /admin/v1/categories/{handle}`
pub fn put_endpoint() -> Endpoint {
    Op::put(
        "/admin/v1/categories/{handle}",
        "putCategory",
        "Declare or rename a preference category",
    )
    .param(category_handle_param())
    .body("CategoryInput", true)
    .ok(201, "Created", Content::Json("Category"))
    .ok(200, "Updated", Content::Json("Category"))
    .to(put)
}

pub async fn put(a: Admin, req: HttpRequest, body: Body, st: State) -> ApiResult<HttpResponse> {
    let m = body.object()?;
    let handle = handle_of(&req)?;
    let (name, description) = typed::<CategoryInput>(&m)?.validate()?;
    let pid = a.project.id;
    let (c, was_created) = st
        .engine
        .put_category(pid, a.actor.clone(), handle.clone(), name, description)
        .await?;
    let body = Category::new(&handle, &c);
    Ok(if was_created { created(body) } else { ok(body) })
}

/// `GET /admin/v1/categories`
pub fn list_endpoint() -> Endpoint {
    Op::get(
        "/admin/v1/categories",
        "listCategories",
        "Every preference category",
    )
    .ok(200, "The categories", Content::Json("CategoryList"))
    .to(list)
}

pub async fn list(a: Admin, st: State) -> ApiResult<HttpResponse> {
    let all = st.engine.categories(a.project.id).await?;
    Ok(ok(CategoryList::new(&all)))
}

/// `GET /admin/v1/categories/{handle}`
pub fn get_endpoint() -> Endpoint {
    Op::get(
        "/admin/v1/categories/{handle}",
        "getCategory",
        "A preference category",
    )
    .param(category_handle_param())
    .ok(200, "The category", Content::Json("Category"))
    .errors(&[404])
    .to(get)
}

pub async fn get(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let handle = path_str(&req, "handle")?;
    let all = st.engine.categories(a.project.id).await?;
    let c = all
        .get(&handle)
        .ok_or_else(|| Error::not_found("category", &handle))?;
    Ok(ok(Category::new(&handle, c)))
}

/// `DELETE /admin/v1/categories/{handle}`
pub fn delete_endpoint() -> Endpoint {
    Op::delete(
        "/admin/v1/categories/{handle}",
        "deleteCategory",
        "Delete a preference category no flow belongs to",
    )
    .param(category_handle_param())
    .ok(204, "Deleted", Content::Empty)
    .errors(&[404, 409])
    .to(delete)
}

pub async fn delete(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let handle = path_str(&req, "handle")?;
    st.engine
        .delete_category(a.project.id, a.actor.clone(), handle)
        .await?;
    Ok(no_content())
}

/// `GET /admin/v1/preferences/defaults`
pub fn get_defaults_endpoint() -> Endpoint {
    Op::get(
        "/admin/v1/preferences/defaults",
        "getPreferenceDefaults",
        "The project's preference defaults",
    )
    .param(explain_param())
    .ok(200, "The defaults", Content::Json("Preferences"))
    .errors(&[400])
    .to(get_defaults)
}

pub async fn get_defaults(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    Ok(ok(preferences_view(&st, a.project.id, None, &req).await?))
}

/// `PUT /admin/v1/preferences/defaults`
pub fn put_defaults_endpoint() -> Endpoint {
    Op::put(
        "/admin/v1/preferences/defaults",
        "putPreferenceDefaults",
        "Change the project's preference defaults",
    )
    .param(explain_param())
    .body("PreferencesInput", true)
    .ok(200, "The full defaults", Content::Json("Preferences"))
    .to(put_defaults)
}

pub async fn put_defaults(
    a: Admin, req: HttpRequest, body: Body, st: State,
) -> ApiResult<HttpResponse> {
    let input = typed(&body.object()?)?;
    let pid = a.project.id;
    Ok(ok(update_preferences(
        &st,
        pid,
        PreferencesOf::Defaults(a.actor.clone()),
        input,
        &req,
    )
    .await?))
}
