//! `GET /openapi.json` (the OpenAPI 3.1 document, see `crate::openapi`) and
//! `GET /docs`, a small self-contained viewer of it (HTML, CSS and JS compiled
//! into the binary; no CDN, no external URL). Neither needs credentials.

use actix_web::HttpResponse;

const PAGE: &str = include_str!("docs.html");

pub async fn openapi() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .insert_header(("cache-control", "no-cache"))
        .body(crate::openapi::json())
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
