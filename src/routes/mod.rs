//! Route table. Every resource answers unknown methods like unknown routes (404,
//! after authentication for `/admin/` and `/user/` paths: docs/API.md §3).

mod channels;
mod docs;
mod flows;
mod health;
mod inbox;
pub mod live;
mod notifications;
pub mod ops;
mod project;
mod topics;
mod user_api;
mod users;
mod webhook_endpoints;

use crate::errors::{ApiError, ApiResult};
use crate::pagination::Paging;
use actix_web::{web, HttpRequest, HttpResponse};
use herald_actors::Error;

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

fn res(path: &str) -> actix_web::Resource {
    web::resource(path).default_service(web::to(fallback))
}

pub fn ok(v: impl serde::Serialize) -> HttpResponse {
    json_response(HttpResponse::Ok(), &v)
}

pub fn created(v: impl serde::Serialize) -> HttpResponse {
    json_response(HttpResponse::Created(), &v)
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
    paging: &Paging,
    page: &herald_actors::store::Page<T>,
    view: impl Fn(&T) -> V,
) -> HttpResponse {
    ok(paging.respond(page, page.items.iter().map(view).collect()))
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    use web::{delete, get, patch, post, put};
    cfg.service(res("/healthz").route(get().to(Guarded(health::healthz))))
        .service(res("/readyz").route(get().to(Guarded(health::readyz))))
        .service(res("/openapi.json").route(get().to(Guarded(docs::openapi))))
        .service(res("/docs").route(get().to(Guarded(docs::page))))
        .service(res("/metrics").route(get().to(Guarded(crate::metrics::handler))))
        .service(res("/inbox").route(get().to(Guarded(inbox::page))))
        .service(res("/inbox/inbox.css").route(get().to(Guarded(inbox::css))))
        .service(res("/inbox/inbox.js").route(get().to(Guarded(inbox::js))))
        // ---- Admin API
        .service(
            res("/admin/v1/project")
                .route(get().to(Guarded(project::get)))
                .route(put().to(Guarded(project::update))),
        )
        .service(
            res("/admin/v1/project/clock/advance")
                .route(post().to(Guarded(project::advance_clock))),
        )
        .service(
            res("/admin/v1/project/signing_key")
                .route(put().to(Guarded(project::put_signing_key)))
                .route(post().to(Guarded(project::generate_signing_key)))
                .route(delete().to(Guarded(project::delete_signing_key))),
        )
        .service(res("/admin/v1/users").route(get().to(Guarded(users::list))))
        // Guarded by method: other methods on these paths skip them and reach
        // `{external_id}`, so users whose external id is `bulk` or
        // `bulk_delete` stay reachable.
        .service(
            res("/admin/v1/users/bulk")
                .guard(actix_web::guard::Post())
                .route(post().to(Guarded(users::bulk))),
        )
        .service(
            res("/admin/v1/users/bulk_delete")
                .guard(actix_web::guard::Post())
                .route(post().to(Guarded(users::bulk_delete))),
        )
        .service(
            res("/admin/v1/users/{external_id}")
                .route(put().to(Guarded(users::put)))
                .route(get().to(Guarded(users::get)))
                .route(delete().to(Guarded(users::delete))),
        )
        .service(
            res("/admin/v1/users/{external_id}/preferences")
                .route(get().to(Guarded(users::get_preferences)))
                .route(put().to(Guarded(users::put_preferences))),
        )
        .service(res("/admin/v1/users/{external_id}/feed").route(get().to(Guarded(users::feed))))
        .service(res("/admin/v1/erasures/{id}").route(get().to(Guarded(users::get_erasure))))
        .service(
            res("/admin/v1/channels")
                .route(post().to(Guarded(channels::create)))
                .route(get().to(Guarded(channels::list))),
        )
        .service(
            res("/admin/v1/channels/{channel_id}")
                .route(get().to(Guarded(channels::get)))
                .route(put().to(Guarded(channels::update)))
                .route(delete().to(Guarded(channels::delete))),
        )
        .service(
            res("/admin/v1/channels/{channel_id}/revoke")
                .route(post().to(Guarded(channels::revoke))),
        )
        .service(
            res("/admin/v1/flows")
                .route(post().to(Guarded(flows::create)))
                .route(get().to(Guarded(flows::list))),
        )
        .service(
            res("/admin/v1/flows/{id}")
                .route(get().to(Guarded(flows::get)))
                .route(put().to(Guarded(flows::update))),
        )
        .service(res("/admin/v1/flows/{id}/activate").route(post().to(Guarded(flows::activate))))
        .service(
            res("/admin/v1/flows/{id}/deactivate").route(post().to(Guarded(flows::deactivate))),
        )
        .service(res("/admin/v1/flows/{id}/archive").route(post().to(Guarded(flows::archive))))
        .service(res("/admin/v1/flows/{id}/run").route(post().to(Guarded(flows::run))))
        .service(res("/admin/v1/flows/{id}/cancel").route(post().to(Guarded(flows::cancel))))
        .service(res("/admin/v1/flow_runs/{id}").route(get().to(Guarded(notifications::flow_run))))
        .service(res("/admin/v1/topics").route(get().to(Guarded(topics::list))))
        .service(
            res("/admin/v1/topics/{key}")
                .route(put().to(Guarded(topics::put)))
                .route(get().to(Guarded(topics::get)))
                .route(delete().to(Guarded(topics::delete))),
        )
        .service(
            res("/admin/v1/topics/{key}/subscriptions")
                .route(get().to(Guarded(topics::subscriptions)))
                .route(post().to(Guarded(topics::subscribe))),
        )
        .service(
            res("/admin/v1/topics/{key}/subscriptions/{external_id}")
                .route(delete().to(Guarded(topics::unsubscribe))),
        )
        .service(res("/admin/v1/notifications").route(get().to(Guarded(notifications::list))))
        .service(res("/admin/notifications").route(get().to(Guarded(notifications::list))))
        .service(res("/admin/v1/notifications/{id}").route(get().to(Guarded(notifications::get))))
        .service(
            res("/admin/v1/notifications/{id}/trace")
                .route(get().to(Guarded(webhook_endpoints::trace))),
        )
        .service(res("/admin/v1/deliveries").route(get().to(Guarded(notifications::deliveries))))
        .service(res("/admin/v1/deliveries/{id}").route(get().to(Guarded(notifications::delivery))))
        .service(
            res("/admin/v1/webhook_endpoints")
                .route(post().to(Guarded(webhook_endpoints::create)))
                .route(get().to(Guarded(webhook_endpoints::list))),
        )
        .service(
            res("/admin/v1/webhook_endpoints/{id}")
                .route(get().to(Guarded(webhook_endpoints::get)))
                .route(put().to(Guarded(webhook_endpoints::update)))
                .route(delete().to(Guarded(webhook_endpoints::delete))),
        )
        .service(
            res("/admin/v1/webhook_endpoints/{id}/rotate_secret")
                .route(post().to(Guarded(webhook_endpoints::rotate_secret))),
        )
        .service(
            res("/admin/v1/webhook_endpoints/{id}/attempts")
                .route(get().to(Guarded(webhook_endpoints::attempts))),
        )
        .service(
            res("/admin/v1/webhook_endpoints/{id}/replay")
                .route(post().to(Guarded(webhook_endpoints::replay))),
        )
        // ---- User API
        .service(
            res("/user/v1/me")
                .route(get().to(Guarded(user_api::me)))
                .route(put().to(Guarded(user_api::update_me))),
        )
        .service(
            res("/user/v1/preferences")
                .route(get().to(Guarded(user_api::preferences)))
                .route(put().to(Guarded(user_api::put_preferences))),
        )
        .service(res("/user/v1/feed").route(get().to(Guarded(user_api::feed))))
        .service(res("/user/v1/feed/seen_all").route(post().to(Guarded(user_api::seen_all))))
        .service(res("/user/v1/feed/read_all").route(post().to(Guarded(user_api::read_all))))
        .service(res("/user/v1/feed/live").route(get().to(Guarded(live::live))))
        .service(
            res("/user/v1/feed/{id}")
                .route(get().to(Guarded(user_api::entry)))
                .route(patch().to(Guarded(user_api::patch_entry))),
        )
        .service(
            res("/user/v1/feed/{id}/{action}").route(post().to(Guarded(user_api::entry_action))),
        )
        .service(res("/user/v1/channels/{channel_id}").route(get().to(Guarded(user_api::channel))))
        .service(
            res("/user/v1/channels/{channel_id}/subscriptions")
                .route(get().to(Guarded(user_api::push_subscriptions)))
                .route(post().to(Guarded(user_api::add_push_subscription)))
                .route(delete().to(Guarded(user_api::remove_push_subscription))),
        )
        .service(
            res("/user/v1/subscriptions").route(get().to(Guarded(user_api::topic_subscriptions))),
        )
        .service(
            res("/user/v1/topics/{key}/subscriptions")
                .route(post().to(Guarded(user_api::subscribe)))
                .route(delete().to(Guarded(user_api::unsubscribe))),
        )
        .default_service(web::to(fallback));
}
