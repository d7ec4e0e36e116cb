//! The console's script and stylesheet, compiled into the binary and served
//! at `/console/assets/{file}`. They are small and change with the binary,
//! so they are sent `no-cache` with an ETag of their content: a browser
//! revalidates (a 304) instead of keeping a stale script after an upgrade.

use actix_web::{HttpRequest, HttpResponse};

const JS: &str = include_str!("assets/console.js");
const CSS: &str = include_str!("assets/console.css");

fn etag(s: &str) -> String {
    use sha2::{Digest, Sha256};
    let d = Sha256::digest(s.as_bytes());
    let hex: String = d[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("\"{hex}\"")
}

pub async fn serve(req: HttpRequest) -> HttpResponse {
    let (body, ty) = match req.match_info().get("file") {
        Some("console.js") => (JS, "text/javascript; charset=utf-8"),
        Some("console.css") => (CSS, "text/css; charset=utf-8"),
        // no such asset: the server's 404 for a path it does not serve
        _ => {
            return actix_web::ResponseError::error_response(&crate::errors::ApiError(
                herald_engine::Error::no_route(),
            ))
        }
    };
    let tag = etag(body);
    let fresh = req
        .headers()
        .get("If-None-Match")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == tag);
    let mut b = if fresh {
        HttpResponse::NotModified()
    } else {
        HttpResponse::Ok()
    };
    b.insert_header(("Cache-Control", "no-cache"))
        .insert_header(("ETag", tag))
        .insert_header(("X-Content-Type-Options", "nosniff"));
    if fresh {
        b.finish()
    } else {
        b.content_type(ty).body(body)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_script_is_small() {
        assert!(super::JS.len() + super::CSS.len() < 300 * 1024);
    }
}
