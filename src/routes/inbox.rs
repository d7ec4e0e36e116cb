//! `GET /inbox`: a small in-app inbox page (HTML, CSS and JS compiled into the
//! binary, no credentials needed). The page reads `api_key` and `user_id` or
//! `user_key` from its own query string, loads `GET /user/v1/feed` and follows
//! `GET /user/v1/feed/live` (docs/API.md §12).
//! The JS is the bundle of clients/js/inbox/inbox.ts and the herald-client
//! package (clients/js), committed; clients/js/run.sh fails when it is stale.

use actix_web::HttpResponse;

const HTML: &str = include_str!("../inbox/inbox.html");
const CSS: &str = include_str!("../inbox/inbox.css");
const JS: &str = include_str!("../inbox/inbox.js");

fn asset(content_type: &str, body: &'static str) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(content_type)
        .insert_header(("cache-control", "no-cache"))
        .insert_header(("x-content-type-options", "nosniff"))
        // the page URL may carry a user key: never send it on as a referrer
        .insert_header(("referrer-policy", "no-referrer"))
        .body(body)
}

pub async fn page() -> HttpResponse {
    asset("text/html; charset=utf-8", HTML)
}

pub async fn css() -> HttpResponse {
    asset("text/css; charset=utf-8", CSS)
}

pub async fn js() -> HttpResponse {
    asset("application/javascript; charset=utf-8", JS)
}
