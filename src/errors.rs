//! The one place where errors become HTTP responses (API.md §3).
//!
//! Handlers return `ApiError`, a thin wrapper of the engine's `Error`; its code
//! decides the status, what the body shows and `Retry-After` through the engine's
//! single code table (`error_codes!`). The request id comes
//! from a task-local set by the request middleware, so every error body carries it.

use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use herald_actors::{Disclosure, Error, RetryAfter};
use serde_json::json;

tokio::task_local! {
    /// The current request's id (set by the request middleware in `startup`).
    pub static REQUEST_ID: String;
}

pub fn current_request_id() -> Option<String> {
    REQUEST_ID.try_with(|r| r.clone()).ok()
}

#[derive(Debug)]
pub struct ApiError(pub Error);

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.0.code.as_str(), self.0.message)
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        ApiError(e)
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        status_of(&self.0)
    }
    fn error_response(&self) -> HttpResponse {
        render(&self.0, current_request_id())
    }
}

/// The error object of API.md §3 (also sent in WebSocket error frames). What it
/// shows of the message and details is the code's `Disclosure` in the engine's
/// code table; a hidden message is logged instead.
pub fn error_object(e: &Error, request_id: Option<&str>) -> serde_json::Value {
    let (message, details) = match e.code.disclosure() {
        Disclosure::Nothing => {
            tracing::error!(request_id = request_id.unwrap_or(""), error = %e.message, "internal error");
            ("internal server error".to_string(), json!({}))
        }
        Disclosure::RetryAfterOnly => {
            let mut d = serde_json::Map::new();
            if let Some(ra) = e.details.get("retry_after") {
                d.insert("retry_after".into(), ra.clone());
            }
            (e.message.clone(), serde_json::Value::Object(d))
        }
        Disclosure::All => (
            e.message.clone(),
            serde_json::Value::Object(e.details.clone()),
        ),
    };
    json!({
        "type": e.code.type_url(),
        "code": e.code.as_str(),
        "message": message,
        "status": e.code.status(),
        "request_id": request_id,
        "details": details,
    })
}

/// Renders an error as the HTTP response: the error object, its status, and the
/// `Retry-After` header the code table asks for.
pub fn render(e: &Error, request_id: Option<String>) -> HttpResponse {
    let body = json!({ "error": error_object(e, request_id.as_deref()) });
    let mut b = HttpResponse::build(status_of(e));
    let given = e.details.get("retry_after").and_then(|v| v.as_u64());
    let retry_after = match e.code.retry_after() {
        RetryAfter::Never => None,
        RetryAfter::WhenGiven => given,
        RetryAfter::Always(default) => Some(given.unwrap_or(default)),
    };
    if let Some(ra) = retry_after {
        b.insert_header((header::RETRY_AFTER, ra.to_string()));
    }
    b.content_type("application/json").body(body.to_string())
}

fn status_of(e: &Error) -> StatusCode {
    StatusCode::from_u16(e.code.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}
