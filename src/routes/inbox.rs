//! `GET /inbox`: a small in-app inbox page (HTML, CSS and JS compiled into the
//! binary, no credentials needed). The page reads `api_key` and `user_id` or
//! `user_key` from its own query string, loads `GET /user/v1/feed` and follows
//! `GET /user/v1/feed/live` (docs/API.md §12).
//! The JS is the bundle of clients/js/inbox/inbox.ts and the herald-client
//! package (clients/js), committed; clients/js/run.sh fails when it is stale.

use super::endpoint::{Endpoint, Serve};
use crate::openapi::{Content, Op};
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

/// `GET /inbox`
pub fn page_endpoint() -> Endpoint {
    Op::get("/inbox", "inbox", "The in-app inbox page")
        .ok(200, "An HTML page", Content::Text("text/html", "string"))
        .to(page)
}

pub async fn page() -> HttpResponse {
    asset("text/html; charset=utf-8", HTML)
}

/// `GET /inbox/inbox.css`
pub fn css_endpoint() -> Endpoint {
    Op::get("/inbox/inbox.css", "inbox_css", "Inbox page stylesheet")
        .ok(200, "CSS", Content::Text("text/css", "string"))
        .to(css)
}

pub async fn css() -> HttpResponse {
    asset("text/css; charset=utf-8", CSS)
}

/// `GET /inbox/inbox.js`
pub fn js_endpoint() -> Endpoint {
    Op::get("/inbox/inbox.js", "inbox_js", "Inbox page script")
        .ok(
            200,
            "JavaScript",
            Content::Text("application/javascript", "string"),
        )
        .to(js)
}

pub async fn js() -> HttpResponse {
    asset("application/javascript; charset=utf-8", JS)
}
