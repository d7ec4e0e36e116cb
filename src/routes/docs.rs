//! `GET /openapi.json` (the OpenAPI 3.1 document, see `crate::openapi`) and
//! `GET /docs`, a small self-contained viewer of it (HTML, CSS and JS compiled
//! into the binary; no CDN, no external URL). Neither needs credentials.

use super::endpoint::{Endpoint, Serve};
use crate::openapi::{Content, Op};
use actix_web::HttpResponse;

const PAGE: &str = include_str!("docs.html");

/// `GET /openapi.json`
pub fn openapi_endpoint() -> Endpoint {
    Op::get("/openapi.json", "openapi", "This OpenAPI document")
        .ok(
            200,
            "The document",
            Content::Text("application/json", "object"),
        )
        .to(openapi)
}

pub async fn openapi() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .insert_header(("cache-control", "no-cache"))
        .body(super::openapi_json())
}

/// `GET /docs`
pub fn page_endpoint() -> Endpoint {
    Op::get("/docs", "docs", "Browsable API documentation")
        .ok(200, "An HTML page", Content::Text("text/html", "string"))
        .to(page)
}

pub async fn page() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .insert_header(("cache-control", "no-cache"))
        .insert_header(("x-content-type-options", "nosniff"))
        .insert_header(("referrer-policy", "no-referrer"))
        .insert_header((
            "content-security-policy",
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
             connect-src 'self'; img-src data:",
        ))
        .body(PAGE)
}
