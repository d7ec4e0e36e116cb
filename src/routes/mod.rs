//! Route table. Every resource answers unknown methods like unknown routes (404,
//! after authentication for `/admin/` and `/user/` paths: API.md §3).

mod channels;
mod flows;
mod health;
mod notifications;
mod project;
mod topics;
mod user_api;
mod users;

use crate::errors::{ApiError, ApiResult};
use crate::pagination::Paging;
use actix_web::{web, HttpRequest, HttpResponse};
use herald_actors::Error;
use serde_json::Value;

/// Unknown route or method: authenticate as the path's API would, then 404.
async fn fallback(req: HttpRequest) -> ApiResult<HttpResponse> {
    let p = req.path();
    if p.starts_with("/admin/") || p == "/admin" {
        crate::auth::admin(&req).await?;
    } else if p.starts_with("/user/") || p == "/user" {
        crate::auth::user(&req).await?;
    }
    Err(ApiError(Error::no_route()))
}

fn res(path: &str) -> actix_web::Resource {
    web::resource(path).default_service(web::to(fallback))
}

pub fn ok(v: Value) -> HttpResponse {
    HttpResponse::Ok().content_type("application/json").body(v.to_string())
}

pub fn created(v: Value) -> HttpResponse {
    HttpResponse::Created().content_type("application/json").body(v.to_string())
}

pub fn no_content() -> HttpResponse {
    HttpResponse::NoContent().finish()
}

/// `{items, page}` for a page of records rendered by `view`.
pub fn list<T>(paging: &Paging, page: &herald_actors::store::Page<T>, view: impl Fn(&T) -> Value) -> HttpResponse {
    ok(paging.respond(page, page.items.iter().map(view).collect()))
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    use web::{delete, get, patch, post, put};
    cfg.service(res("/healthz").route(get().to(health::healthz)))
        .service(res("/readyz").route(get().to(health::readyz)))
        // ---- Admin API
        .service(res("/admin/v1/project").route(get().to(project::get)).route(put().to(project::update)))
        .service(
            res("/admin/v1/project/signing_key")
                .route(put().to(project::put_signing_key))
                .route(post().to(project::generate_signing_key))
                .route(delete().to(project::delete_signing_key)),
        )
        .service(res("/admin/v1/users").route(get().to(users::list)))
        .service(
            res("/admin/v1/users/{external_id}")
                .route(put().to(users::put))
                .route(get().to(users::get))
                .route(delete().to(users::delete)),
        )
        .service(
            res("/admin/v1/users/{external_id}/preferences")
                .route(get().to(users::get_preferences))
                .route(put().to(users::put_preferences)),
        )
        .service(res("/admin/v1/users/{external_id}/feed").route(get().to(users::feed)))
        .service(res("/admin/v1/channels").route(post().to(channels::create)).route(get().to(channels::list)))
        .service(
            res("/admin/v1/channels/{channel_id}")
                .route(get().to(channels::get))
                .route(put().to(channels::update))
                .route(delete().to(channels::delete)),
        )
        .service(res("/admin/v1/channels/{channel_id}/revoke").route(post().to(channels::revoke)))
        .service(res("/admin/v1/flows").route(post().to(flows::create)).route(get().to(flows::list)))
        .service(res("/admin/v1/flows/{id}").route(get().to(flows::get)).route(put().to(flows::update)))
        .service(res("/admin/v1/flows/{id}/activate").route(post().to(flows::activate)))
        .service(res("/admin/v1/flows/{id}/deactivate").route(post().to(flows::deactivate)))
        .service(res("/admin/v1/flows/{id}/archive").route(post().to(flows::archive)))
        .service(res("/admin/v1/flows/{id}/run").route(post().to(flows::run)))
        .service(res("/admin/v1/flow_runs/{id}").route(get().to(notifications::flow_run)))
        .service(res("/admin/v1/topics").route(get().to(topics::list)))
        .service(
            res("/admin/v1/topics/{key}")
                .route(put().to(topics::put))
                .route(get().to(topics::get))
                .route(delete().to(topics::delete)),
        )
        .service(
            res("/admin/v1/topics/{key}/subscriptions")
                .route(get().to(topics::subscriptions))
                .route(post().to(topics::subscribe)),
        )
        .service(res("/admin/v1/topics/{key}/subscriptions/{external_id}").route(delete().to(topics::unsubscribe)))
        .service(res("/admin/v1/notifications").route(get().to(notifications::list)))
        .service(res("/admin/notifications").route(get().to(notifications::list)))
        .service(res("/admin/v1/notifications/{id}").route(get().to(notifications::get)))
        .service(res("/admin/v1/deliveries").route(get().to(notifications::deliveries)))
        .service(res("/admin/v1/deliveries/{id}").route(get().to(notifications::delivery)))
        // ---- User API
        .service(res("/user/v1/me").route(get().to(user_api::me)).route(put().to(user_api::update_me)))
        .service(
            res("/user/v1/preferences")
                .route(get().to(user_api::preferences))
                .route(put().to(user_api::put_preferences)),
        )
        .service(res("/user/v1/feed").route(get().to(user_api::feed)))
        .service(res("/user/v1/feed/seen_all").route(post().to(user_api::seen_all)))
        .service(res("/user/v1/feed/read_all").route(post().to(user_api::read_all)))
        .service(res("/user/v1/feed/{id}").route(get().to(user_api::entry)).route(patch().to(user_api::patch_entry)))
        .service(res("/user/v1/feed/{id}/{action}").route(post().to(user_api::entry_action)))
        .service(res("/user/v1/channels/{channel_id}").route(get().to(user_api::channel)))
        .service(
            res("/user/v1/channels/{channel_id}/subscriptions")
                .route(get().to(user_api::push_subscriptions))
                .route(post().to(user_api::add_push_subscription))
                .route(delete().to(user_api::remove_push_subscription)),
        )
        .service(res("/user/v1/subscriptions").route(get().to(user_api::topic_subscriptions)))
        .service(
            res("/user/v1/topics/{key}/subscriptions")
                .route(post().to(user_api::subscribe))
                .route(delete().to(user_api::unsubscribe)),
        )
        .default_service(web::to(fallback));
}
