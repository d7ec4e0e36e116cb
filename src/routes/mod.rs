//! Route table: every endpoint (a handler with its route and its OpenAPI
//! operation, declared beside the handler: `endpoint`) in matching order,
//! and the helpers handlers answer with. Every resource answers unknown
//! methods like unknown routes (404, after authentication for `/admin/` and
//! `/user/` paths: docs/API.md §3).

mod audit_log;
mod categories;
mod channels;
mod content;
mod docs;
pub mod endpoint;
mod flow_preview;
mod flows;
mod health;
mod hooks;
mod inbox;
mod notifications;
pub mod ops;
mod preference_page;
mod project;
mod suppressions;
mod topics;
mod unsubscribe;
mod user_api;
mod users;
mod webhook_endpoints;

use crate::errors::{ApiError, ApiResult};
use crate::pagination::Paging;
use actix_web::{web, HttpRequest, HttpResponse};
use herald_engine::Error;

/// Unknown route or method (authentication already ran in the middleware).
async fn fallback(_req: HttpRequest) -> ApiResult<HttpResponse> {
    Err(ApiError(Error::no_route()))
}

/// Wraps a handler so a panic inside it becomes a 500 `internal_error` response
/// (with the request id and no stack trace) instead of a dropped connection.
#[derive(Clone)]
pub struct Guarded<F>(pub F);

impl<F, Args> actix_web::Handler<Args> for Guarded<F>
where
    F: actix_web::Handler<Args>,
    F::Future: 'static,
    F::Output: 'static,
{
    type Output = Result<F::Output, ApiError>;
    type Future = futures_util::future::LocalBoxFuture<'static, Self::Output>;

    fn call(&self, args: Args) -> Self::Future {
        use futures_util::FutureExt;
        let fut = self.0.call(args);
        Box::pin(async move {
            std::panic::AssertUnwindSafe(fut)
                .catch_unwind()
                .await
                .map_err(|_| ApiError(Error::internal("request handler panicked")))
        })
    }
}

pub fn ok(v: impl serde::Serialize) -> HttpResponse {
    json_response(HttpResponse::Ok(), &v)
}

pub fn created(v: impl serde::Serialize) -> HttpResponse {
    json_response(HttpResponse::Created(), &v)
}

pub fn accepted(v: impl serde::Serialize) -> HttpResponse {
    json_response(HttpResponse::Accepted(), &v)
}

fn json_response(mut b: actix_web::HttpResponseBuilder, v: &impl serde::Serialize) -> HttpResponse {
    b.content_type("application/json")
        .body(serde_json::to_string(v).expect("a response body serialises"))
}

pub fn no_content() -> HttpResponse {
    HttpResponse::NoContent().finish()
}

/// `{items, page}` for a page of records rendered by `view`.
pub fn list<T, V: serde::Serialize>(
    paging: &Paging, page: &herald_engine::storage::Page<T>, view: impl Fn(&T) -> V,
) -> HttpResponse {
    ok(paging.respond(page, page.items.iter().map(view).collect()))
}

/// Every endpoint of the API, in matching order: a literal path comes before
/// a `{param}` path that would also take it (`users/bulk` before
/// `users/{external_id}`, `feed/seen_all` and `feed/live` before
/// `feed/{id}`), since the first resource whose path matches answers.
/// The document (`/openapi.json`) lists the same operations in this order.
pub fn endpoints() -> Vec<endpoint::Endpoint> {
    vec![
        health::healthz_endpoint(),
        health::readyz_endpoint(),
        crate::metrics::handler_endpoint(),
        docs::openapi_endpoint(),
        docs::page_endpoint(),
        inbox::page_endpoint(),
        inbox::css_endpoint(),
        inbox::js_endpoint(),
        preference_page::css_endpoint(),
        preference_page::page_endpoint(),
        preference_page::save_endpoint(),
        unsubscribe::page_endpoint(),
        unsubscribe::unsubscribe_endpoint(),
        hooks::callback_endpoint(),
        project::get_endpoint(),
        project::update_endpoint(),
        project::advance_clock_endpoint(),
        project::put_signing_key_endpoint(),
        project::generate_signing_key_endpoint(),
        project::delete_signing_key_endpoint(),
        project::rotate_link_secret_endpoint(),
        project::rotate_secret_endpoint(),
        users::list_endpoint(),
        users::bulk_endpoint(),
        users::bulk_delete_endpoint(),
        users::put_endpoint(),
        users::get_endpoint(),
        users::delete_endpoint(),
        users::get_erasure_endpoint(),
        users::get_preferences_endpoint(),
        users::put_preferences_endpoint(),
        preference_page::link_endpoint(),
        users::feed_endpoint(),
        content::put_partial_endpoint(),
        content::list_partials_endpoint(),
        content::get_partial_endpoint(),
        content::delete_partial_endpoint(),
        content::put_layout_endpoint(),
        content::list_layouts_endpoint(),
        content::get_layout_endpoint(),
        content::delete_layout_endpoint(),
        content::put_translation_endpoint(),
        content::list_translations_endpoint(),
        content::get_translation_endpoint(),
        content::delete_translation_endpoint(),
        categories::put_endpoint(),
        categories::list_endpoint(),
        categories::get_endpoint(),
        categories::delete_endpoint(),
        categories::get_defaults_endpoint(),
        categories::put_defaults_endpoint(),
        channels::create_endpoint(),
        channels::list_endpoint(),
        channels::get_endpoint(),
        channels::update_endpoint(),
        channels::delete_endpoint(),
        channels::revoke_endpoint(),
        channels::test_endpoint(),
        // before `/admin/v1/flows/{id}`, which would take the path
        flow_preview::preview_unsaved_endpoint(),
        flows::create_endpoint(),
        flows::list_endpoint(),
        flows::get_endpoint(),
        flows::update_endpoint(),
        flows::activate_endpoint(),
        flows::deactivate_endpoint(),
        flows::archive_endpoint(),
        flows::run_endpoint(),
        flows::cancel_endpoint(),
        flow_preview::preview_endpoint(),
        notifications::flow_run_endpoint(),
        topics::list_endpoint(),
        topics::put_endpoint(),
        topics::get_endpoint(),
        topics::delete_endpoint(),
        topics::subscriptions_endpoint(),
        topics::subscribe_endpoint(),
        topics::unsubscribe_endpoint(),
        suppressions::list_endpoint(),
        suppressions::create_endpoint(),
        suppressions::delete_endpoint(),
        audit_log::list_endpoint(),
        notifications::list_endpoint(),
        notifications::list_alias_endpoint(),
        notifications::get_endpoint(),
        webhook_endpoints::trace_endpoint(),
        notifications::deliveries_endpoint(),
        notifications::delivery_endpoint(),
        webhook_endpoints::create_endpoint(),
        webhook_endpoints::list_endpoint(),
        webhook_endpoints::get_endpoint(),
        webhook_endpoints::update_endpoint(),
        webhook_endpoints::delete_endpoint(),
        webhook_endpoints::rotate_secret_endpoint(),
        webhook_endpoints::attempts_endpoint(),
        webhook_endpoints::replay_endpoint(),
        user_api::me_endpoint(),
        user_api::update_me_endpoint(),
        user_api::preferences_endpoint(),
        user_api::put_preferences_endpoint(),
        user_api::feed_endpoint(),
        user_api::seen_all_endpoint(),
        user_api::read_all_endpoint(),
        user_api::archive_all_endpoint(),
        crate::live::feed::live_endpoint(),
        user_api::entry_endpoint(),
        user_api::patch_entry_endpoint(),
        user_api::interact_endpoint(),
        user_api::entry_action_endpoint(),
        user_api::channel_endpoint(),
        user_api::push_subscriptions_endpoint(),
        user_api::add_push_subscription_endpoint(),
        user_api::remove_push_subscription_endpoint(),
        user_api::topic_subscriptions_endpoint(),
        user_api::subscribe_endpoint(),
        user_api::unsubscribe_endpoint(),
    ]
}

/// `/openapi.json`: the document of every endpoint, built once.
pub fn openapi_json() -> &'static str {
    static DOC: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DOC.get_or_init(|| crate::openapi::render(endpoints().iter().map(|e| &e.op)))
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    endpoint::register(cfg, endpoints());
    cfg.default_service(web::to(fallback));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Each route is declared once, and the document holds each of them: the
    /// paths merge their methods, none is lost or doubled.
    #[test]
    fn every_endpoint_is_declared_once_and_documented() {
        let eps = endpoints();
        let mut keys = BTreeSet::new();
        for e in &eps {
            let m = serde_json::to_value(e.op.method()).unwrap();
            let key = (m.as_str().unwrap().to_string(), e.op.path().to_string());
            assert!(keys.insert(key.clone()), "declared twice: {key:?}");
        }
        let doc: serde_json::Value = serde_json::from_str(openapi_json()).unwrap();
        let mut documented = BTreeSet::new();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for m in item.as_object().unwrap().keys() {
                if ["get", "put", "post", "delete", "patch"].contains(&m.as_str()) {
                    documented.insert((m.clone(), path.clone()));
                }
            }
        }
        assert_eq!(keys, documented);
    }
}
