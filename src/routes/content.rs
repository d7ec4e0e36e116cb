//! Admin API content (docs/CONTENT.md): partials
//! (`/admin/v1/partials`), email layouts (`/admin/v1/layouts`) and
//! translation catalogs (`/admin/v1/translations`). Each handler parses,
//! calls one engine method (`actors::content`) and shows the record.

use super::endpoint::{Endpoint, Serve};
use super::{created, no_content, ok};
use crate::auth::Admin;
use crate::bodies::content::{
    ContentView, LayoutInput, PartialInput, TranslationInput, TranslationSummary,
};
use crate::errors::ApiResult;
use crate::extract::{path_str, typed, Body};
use crate::openapi::{content_handle_param, locale_param, Content, Op};
use crate::state::State;
use actix_web::{HttpRequest, HttpResponse};
use herald_engine::model::{ContentBody, ContentKind};
use herald_engine::rules::content::{canonical_locale, is_content_handle};
use herald_engine::validate::is_locale;
use herald_engine::Error;

/// The path's key of a record of `kind`: a handle, or a locale (in its
/// usual case); 422 at `handle` / `locale` when it is not one.
fn key_of(req: &HttpRequest, kind: ContentKind) -> ApiResult<String> {
    if kind == ContentKind::Translation {
        let l = path_str(req, "locale")?;
        if !is_locale(&l) {
            return Err(
                Error::field("locale", "format", "must be a BCP 47 tag such as fr-CA").into(),
            );
        }
        return Ok(canonical_locale(&l));
    }
    let h = path_str(req, "handle")?;
    if !is_content_handle(&h) {
        return Err(Error::field(
            "handle",
            "format",
            "a handle is like a flow's: ^[a-z0-9][a-z0-9_-]{0,63}$",
        )
        .into());
    }
    Ok(h)
}

async fn put(
    a: Admin, req: HttpRequest, st: State, kind: ContentKind, body: ContentBody,
) -> ApiResult<HttpResponse> {
    let key = key_of(&req, kind)?;
    let (r, was_created) = st
        .engine
        .put_content(a.project.id, a.actor.clone(), key, body)
        .await?;
    let view = ContentView::from(&r);
    Ok(if was_created { created(view) } else { ok(view) })
}

async fn get(a: Admin, req: HttpRequest, st: State, kind: ContentKind) -> ApiResult<HttpResponse> {
    let key = key_of(&req, kind)?;
    let r = st.engine.content(a.project.id, kind, key).await?;
    Ok(ok(ContentView::from(&r)))
}

async fn delete(
    a: Admin, req: HttpRequest, st: State, kind: ContentKind,
) -> ApiResult<HttpResponse> {
    let key = key_of(&req, kind)?;
    st.engine
        .delete_content(a.project.id, a.actor.clone(), kind, key)
        .await?;
    Ok(no_content())
}

async fn list(a: Admin, st: State, kind: ContentKind) -> ApiResult<HttpResponse> {
    let all = st.engine.contents(a.project.id, kind).await?;
    let data: Vec<serde_json::Value> = all
        .iter()
        .map(|r| match kind {
            ContentKind::Translation => serde_json::to_value(TranslationSummary::new(r)),
            _ => serde_json::to_value(ContentView::from(r)),
        })
        .collect::<Result<_, _>>()
        .map_err(|e| Error::internal(e.to_string()))?;
    Ok(ok(serde_json::json!({ "data": data })))
}

// ---------------------------------------------------------------- partials

/// `PUT /admin/v1/partials/{handle}`
pub fn put_partial_endpoint() -> Endpoint {
    Op::put(
        "/admin/v1/partials/{handle}",
        "putPartial",
        "Declare a partial or replace its content",
    )
    .param(content_handle_param("The partial's handle."))
    .body("PartialInput", true)
    .ok(201, "Created", Content::Json("Partial"))
    .ok(200, "Updated", Content::Json("Partial"))
    .to(put_partial)
}

pub async fn put_partial(
    a: Admin, req: HttpRequest, body: Body, st: State,
) -> ApiResult<HttpResponse> {
    let b = typed::<PartialInput>(&body.object()?)?.validate()?;
    put(a, req, st, ContentKind::Partial, b).await
}

/// `GET /admin/v1/partials`
pub fn list_partials_endpoint() -> Endpoint {
    Op::get("/admin/v1/partials", "listPartials", "Every partial")
        .ok(200, "The partials", Content::Json("PartialList"))
        .to(list_partials)
}

pub async fn list_partials(a: Admin, st: State) -> ApiResult<HttpResponse> {
    list(a, st, ContentKind::Partial).await
}

/// `GET /admin/v1/partials/{handle}`
pub fn get_partial_endpoint() -> Endpoint {
    Op::get("/admin/v1/partials/{handle}", "getPartial", "A partial")
        .param(content_handle_param("The partial's handle."))
        .ok(200, "The partial", Content::Json("Partial"))
        .errors(&[404, 422])
        .to(get_partial)
}

pub async fn get_partial(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    get(a, req, st, ContentKind::Partial).await
}

/// `DELETE /admin/v1/partials/{handle}`
pub fn delete_partial_endpoint() -> Endpoint {
    Op::delete(
        "/admin/v1/partials/{handle}",
        "deletePartial",
        "Delete a partial nothing includes",
    )
    .param(content_handle_param("The partial's handle."))
    .ok(204, "Deleted", Content::Empty)
    .errors(&[404, 409, 422])
    .to(delete_partial)
}

pub async fn delete_partial(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    delete(a, req, st, ContentKind::Partial).await
}

// ---------------------------------------------------------------- layouts

/// `PUT /admin/v1/layouts/{handle}`
pub fn put_layout_endpoint() -> Endpoint {
    Op::put(
        "/admin/v1/layouts/{handle}",
        "putLayout",
        "Declare an email layout or replace it",
    )
    .param(content_handle_param("The layout's handle."))
    .body("LayoutInput", true)
    .ok(201, "Created", Content::Json("Layout"))
    .ok(200, "Updated", Content::Json("Layout"))
    .to(put_layout)
}

pub async fn put_layout(
    a: Admin, req: HttpRequest, body: Body, st: State,
) -> ApiResult<HttpResponse> {
    let b = typed::<LayoutInput>(&body.object()?)?.validate()?;
    put(a, req, st, ContentKind::Layout, b).await
}

/// `GET /admin/v1/layouts`
pub fn list_layouts_endpoint() -> Endpoint {
    Op::get("/admin/v1/layouts", "listLayouts", "Every email layout")
        .ok(200, "The layouts", Content::Json("LayoutList"))
        .to(list_layouts)
}

pub async fn list_layouts(a: Admin, st: State) -> ApiResult<HttpResponse> {
    list(a, st, ContentKind::Layout).await
}

/// `GET /admin/v1/layouts/{handle}`
pub fn get_layout_endpoint() -> Endpoint {
    Op::get("/admin/v1/layouts/{handle}", "getLayout", "An email layout")
        .param(content_handle_param("The layout's handle."))
        .ok(200, "The layout", Content::Json("Layout"))
        .errors(&[404, 422])
        .to(get_layout)
}

pub async fn get_layout(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    get(a, req, st, ContentKind::Layout).await
}

/// `DELETE /admin/v1/layouts/{handle}`
pub fn delete_layout_endpoint() -> Endpoint {
    Op::delete(
        "/admin/v1/layouts/{handle}",
        "deleteLayout",
        "Delete a layout no flow uses and that is not the project's default",
    )
    .param(content_handle_param("The layout's handle."))
    .ok(204, "Deleted", Content::Empty)
    .errors(&[404, 409, 422])
    .to(delete_layout)
}

pub async fn delete_layout(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    delete(a, req, st, ContentKind::Layout).await
}

// ---------------------------------------------------------------- translations

/// `PUT /admin/v1/translations/{locale}`
pub fn put_translation_endpoint() -> Endpoint {
    Op::put(
        "/admin/v1/translations/{locale}",
        "putTranslation",
        "Set a locale's translation catalog (replaced whole)",
    )
    .param(locale_param())
    .body("TranslationInput", true)
    .ok(201, "Created", Content::Json("Translation"))
    .ok(200, "Updated", Content::Json("Translation"))
    .to(put_translation)
}

pub async fn put_translation(
    a: Admin, req: HttpRequest, body: Body, st: State,
) -> ApiResult<HttpResponse> {
    let b = typed::<TranslationInput>(&body.object()?)?.validate()?;
    put(a, req, st, ContentKind::Translation, b).await
}

/// `GET /admin/v1/translations`
pub fn list_translations_endpoint() -> Endpoint {
    Op::get(
        "/admin/v1/translations",
        "listTranslations",
        "The locales that have a catalog",
    )
    .ok(200, "The catalogs", Content::Json("TranslationList"))
    .to(list_translations)
}

pub async fn list_translations(a: Admin, st: State) -> ApiResult<HttpResponse> {
    list(a, st, ContentKind::Translation).await
}

/// `GET /admin/v1/translations/{locale}`
pub fn get_translation_endpoint() -> Endpoint {
    Op::get(
        "/admin/v1/translations/{locale}",
        "getTranslation",
        "A locale's translation catalog",
    )
    .param(locale_param())
    .ok(200, "The catalog", Content::Json("Translation"))
    .errors(&[404, 422])
    .to(get_translation)
}

pub async fn get_translation(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    get(a, req, st, ContentKind::Translation).await
}

/// `DELETE /admin/v1/translations/{locale}`
pub fn delete_translation_endpoint() -> Endpoint {
    Op::delete(
        "/admin/v1/translations/{locale}",
        "deleteTranslation",
        "Delete a locale's translation catalog",
    )
    .param(locale_param())
    .ok(204, "Deleted", Content::Empty)
    .errors(&[404, 422])
    .to(delete_translation)
}

pub async fn delete_translation(a: Admin, req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    delete(a, req, st, ContentKind::Translation).await
}
