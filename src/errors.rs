//! The one place where errors become HTTP responses (API.md §3).
//!
//! Handlers return `ApiError`, a thin wrapper of the engine's `Error`; its code
//! decides the status through the engine's single code table. The request id comes
//! from a task-local set by the request middleware, so every error body carries it.

use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use herald_actors::{Error, ErrorCode};
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
        StatusCode::from_u16(self.0.code.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }
    fn error_response(&self) -> HttpResponse {
        render(&self.0, current_request_id())
    }
}

/// The error object of API.md §3 (also sent in WebSocket error frames). 500 and
/// 503 hide their details (a 503 keeps only `retry_after`), and a 500 its
/// message, which is logged instead.
pub fn error_object(e: &Error, request_id: Option<&str>) -> serde_json::Value {
    let status = e.code.status();
    let (message, details) = match e.code {
        ErrorCode::Internal => {
            tracing::error!(request_id = request_id.unwrap_or(""), error = %e.message, "internal error");
            ("internal server error".to_string(), json!({}))
        }
        ErrorCode::ServiceUnavailable => {
            let mut d = serde_json::Map::new();
            if let Some(ra) = e.details.get("retry_after") {
                d.insert("retry_after".into(), ra.clone());
            }
            (e.message.clone(), serde_json::Value::Object(d))
        }
        _ => (
            e.message.clone(),
            serde_json::Value::Object(e.details.clone()),
        ),
    };
    json!({
        "type": format!("https://herald.dev/errors#{}-{}", e.code.as_str(), status),
        "code": e.code.as_str(),
        "message": message,
        "status": status,
        "request_id": request_id,
        "details": details,
    })
}

/// Renders an error as the HTTP response: the error object, its status, and
/// `Retry-After` for a 429 or a 503 that says when to retry.
pub fn render(e: &Error, request_id: Option<String>) -> HttpResponse {
    let status = e.code.status();
    let body = json!({ "error": error_object(e, request_id.as_deref()) });
    let mut b = HttpResponse::build(
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
    );
    let retry_after = e.details.get("retry_after").and_then(|v| v.as_u64());
    match (e.code, retry_after) {
        (ErrorCode::RateLimited, Some(ra)) => {
            b.insert_header((header::RETRY_AFTER, ra.to_string()));
        }
        // A 503 is always worth retrying: when is up to the cause (1 s unless said).
        (ErrorCode::ServiceUnavailable, ra) => {
            b.insert_header((header::RETRY_AFTER, ra.unwrap_or(1).to_string()));
        }
        _ => {}
    }
    b.content_type("application/json").body(body.to_string())
}
