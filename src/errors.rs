//! The one place where errors become HTTP responses (docs/API.md §3).
//!
//! Handlers return `ApiError`, a thin wrapper of the engine's `Error`; its code
//! decides the status, what the body shows and `Retry-After` through the engine's
//! single code table (`error_codes!`). The request id comes
//! from a task-local set by the request middleware, so every error body carries it.

use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use herald_engine::{Disclosure, Error, RetryAfter};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

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

/// The error object every non-2xx response carries.
#[derive(Serialize, ToSchema)]
#[schema(as = Error, example = json!({"error": {"type": "https://herald.dev/errors#not_found-404",
    "code": "not_found", "message": "user not found", "status": 404,
    "request_id": "0192f6c1-7a2b-7c3d-8e4f-123456789abc",
    "details": {"resource": "user", "id": "alice"}}}))]
pub struct ErrorResponse {
    pub error: ErrorBody,
}

// Fields in name order: the bytes the `json!` form of the object wrote.
#[derive(Serialize, ToSchema)]
pub struct ErrorBody {
    #[schema(value_type = ErrorCode)]
    pub code: &'static str,
    /// Depends on the code: `auth`/`reason` (401), `param`/`reason` (400),
    /// `fields` (422), `resource`/`id` (404), `retry_after`/`limit`/`window` (429)…
    pub details: Map<String, Value>,
    pub message: String,
    /// The request's `x-request-id`.
    pub request_id: Option<String>,
    pub status: u16,
    /// `https://herald.dev/errors#<code>-<status>`.
    #[serde(rename = "type")]
    pub kind: String,
}

/// `ErrorCode` in the document: the names of the engine's code table, in its order.
pub struct ErrorCode;

impl PartialSchema for ErrorCode {
    fn schema() -> RefOr<Schema> {
        let names: Vec<&str> = herald_engine::ErrorCode::ALL
            .iter()
            .map(|c| c.as_str())
            .collect();
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(names))
            .into()
    }
}

impl ToSchema for ErrorCode {}

/// The error object of docs/API.md §3 (also sent in WebSocket error frames). What it
/// shows of the message and details is the code's `Disclosure` in the engine's
/// code table; a hidden message is logged instead.
pub fn error_object(e: &Error, request_id: Option<&str>) -> ErrorBody {
    let (message, details) = match e.code.disclosure() {
        Disclosure::Nothing => {
            tracing::error!(request_id = request_id.unwrap_or(""), error = %e.message, "internal error");
            ("internal server error".to_string(), Map::new())
        }
        // `retry_after` goes in the header (`render`), never in the body.
        Disclosure::MessageOnly => (e.message.clone(), Map::new()),
        Disclosure::All => (e.message.clone(), e.details.clone()),
    };
    ErrorBody {
        code: e.code.as_str(),
        details,
        message,
        request_id: request_id.map(str::to_string),
        status: e.code.status(),
        kind: e.code.type_url(),
    }
}

/// The whole body of an error response, as JSON text.
pub fn error_json(e: &Error, request_id: Option<&str>) -> String {
    let body = ErrorResponse {
        error: error_object(e, request_id),
    };
    serde_json::to_string(&body).expect("an error object serialises")
}

/// Renders an error as the HTTP response: the error object, its status, and the
/// `Retry-After` header the code table asks for.
pub fn render(e: &Error, request_id: Option<String>) -> HttpResponse {
    let body = error_json(e, request_id.as_deref());
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
    b.content_type("application/json").body(body)
}

fn status_of(e: &Error) -> StatusCode {
    StatusCode::from_u16(e.code.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}
