//! The engine's error type: every failure carries a stable code, a message and
//! structured details. The HTTP crate renders it; this crate decides what it means.
//!
//! One table (`error_codes!`) gives each code its name, HTTP status and rendering
//! rules, so the code a client matches on and the status it sees can never drift apart.

use serde_json::{json, Map, Value};

/// What an error object shows of an error's `details` and message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disclosure {
    /// Message and details as they are.
    All,
    /// The message, and `{}` for details, as the contract has it for 503:
    /// the wait goes in the `Retry-After` header only (an error's
    /// `retry_after` detail feeds that header and is not shown).
    MessageOnly,
    /// A generic message and `{}`: the real message goes to the log.
    Nothing,
}

/// When an error response carries a `Retry-After` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryAfter {
    Never,
    /// When the error's details give `retry_after`.
    WhenGiven,
    /// Always: the details' `retry_after`, else this many seconds.
    Always(u64),
}

/// The error code table: every code with its wire name, HTTP status, what the
/// error object discloses and when a `Retry-After` header goes with it. The enum,
/// `as_str`, `status`, the type URL, the rendering rules of the HTTP crate and the
/// OpenAPI enum all come from these rows, so none of them can drift from another.
macro_rules! error_codes {
    ($($(#[$doc:meta])* $variant:ident = $name:literal, $status:literal, $disclose:ident, $retry:expr;)*) => {
        /// Stable, machine-readable error codes (docs/API.md §3). Clients match on these.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum ErrorCode {
            $($(#[$doc])* $variant,)*
        }

        impl ErrorCode {
            /// Every code, in table order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant),*];

            /// The name clients see in `code`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $name,)*
                }
            }

            /// The HTTP status answered with this code.
            pub fn status(self) -> u16 {
                match self {
                    $(ErrorCode::$variant => $status,)*
                }
            }

            /// What the error object shows of an error with this code.
            pub fn disclosure(self) -> Disclosure {
                match self {
                    $(ErrorCode::$variant => Disclosure::$disclose,)*
                }
            }

            /// Whether (and with what default) the response says `Retry-After`.
            pub fn retry_after(self) -> RetryAfter {
                use RetryAfter::*;
                match self {
                    $(ErrorCode::$variant => $retry,)*
                }
            }
        }
    };
}

error_codes! {
    BadRequest = "bad_request", 400, All, Never;
    Unauthenticated = "unauthenticated", 401, All, Never;
    Forbidden = "forbidden", 403, All, Never;
    NotFound = "not_found", 404, All, Never;
    Conflict = "conflict", 409, All, Never;
    IdempotencyKeyReused = "idempotency_key_reused", 409, All, Never;
    ValidationFailed = "validation_failed", 422, All, Never;
    RateLimited = "rate_limited", 429, All, WhenGiven;
    Internal = "internal_error", 500, Nothing, Never;
    /// A 503 is always worth retrying: when is up to the cause (1 s unless said).
    ServiceUnavailable = "service_unavailable", 503, MessageOnly, Always(1);
    /// The request head is over the HTTP layer's limits (answered at the edge).
    HeadersTooLarge = "headers_too_large", 431, All, Never;
    /// The request head did not arrive in time (answered at the edge).
    RequestTimeout = "request_timeout", 408, All, Never;
}

impl ErrorCode {
    /// The error object's `type`: `https://herald.dev/errors#<code>-<status>`.
    pub fn type_url(self) -> String {
        format!(
            "https://herald.dev/errors#{}-{}",
            self.as_str(),
            self.status()
        )
    }
}

/// One problem found while validating a request body.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FieldError {
    /// Dot-path of the offending field, e.g. `recipients.0.external_id`.
    pub field: String,
    /// One of required, format, inclusion, exclusion, length, number, unique.
    pub reason: &'static str,
    pub message: String,
}

/// The `reason` of `Error::idempotency_race`.
const IDEMPOTENCY_RACE: &str = "idempotency_race";
const STALE_CHUNK: &str = "stale_chunk";

#[derive(Debug, Clone, thiserror::Error)]
#[error("{code:?}: {message}")]
pub struct Error {
    pub code: ErrorCode,
    pub message: String,
    pub details: Map<String, Value>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
            details: Map::new(),
        }
    }

    /// Adds one entry to `details`.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_string(), value.into());
        self
    }

    pub fn not_found(resource: &str, id: impl std::fmt::Display) -> Self {
        Error::new(ErrorCode::NotFound, format!("{resource} not found"))
            .with("resource", resource)
            .with("id", id.to_string())
    }

    /// 404 for an unknown route or method: no details at all.
    pub fn no_route() -> Self {
        Error::new(ErrorCode::NotFound, "no such route")
    }

    pub fn bad_request(reason: &str, param: Option<&str>, message: impl Into<String>) -> Self {
        let e = Error::new(ErrorCode::BadRequest, message).with("reason", reason);
        match param {
            Some(p) => e.with("param", p),
            None => e,
        }
    }

    pub fn invalid_param(param: &str, message: impl Into<String>) -> Self {
        Error::bad_request("invalid_param", Some(param), message)
    }

    pub fn invalid_json(message: impl Into<String>) -> Self {
        Error::bad_request("invalid_json", None, message)
    }

    pub fn invalid_uuid(param: &str) -> Self {
        Error::bad_request(
            "invalid_uuid",
            Some(param),
            format!("path parameter {param} must be a UUID"),
        )
    }

    pub fn unauthenticated(auth: &str, reason: &str) -> Self {
        Error::new(
            ErrorCode::Unauthenticated,
            format!("authentication failed: {reason}"),
        )
        .with("auth", auth)
        .with("reason", reason)
    }

    pub fn conflict(
        resource: &str, id: Option<String>, reason: &str, message: impl Into<String>,
    ) -> Self {
        let e = Error::new(ErrorCode::Conflict, message)
            .with("resource", resource)
            .with("reason", reason);
        match id {
            Some(id) => e.with("id", id),
            None => e,
        }
    }

    pub fn validation(fields: Vec<FieldError>) -> Self {
        let msg = match fields.first() {
            Some(f) if fields.len() == 1 => {
                format!("validation failed: {}: {}", f.field, f.message)
            }
            _ => format!("validation failed: {} problems", fields.len()),
        };
        Error::new(ErrorCode::ValidationFailed, msg).with("fields", json!(fields))
    }

    pub fn field(
        field: impl Into<String>, reason: &'static str, message: impl Into<String>,
    ) -> Self {
        Error::validation(vec![FieldError {
            field: field.into(),
            reason,
            message: message.into(),
        }])
    }

    /// 500: the message is for the log only; the client sees a generic text and `{}`.
    /// A request with an idempotency key found, as it committed, that a
    /// request with the same key committed first (on another node): the
    /// caller answers as that one did.
    pub fn idempotency_race() -> Self {
        Error::conflict(
            "idempotency_key",
            None,
            IDEMPOTENCY_RACE,
            "a request with the same idempotency key was processed meanwhile",
        )
    }

    /// Whether this is `idempotency_race`.
    pub fn is_idempotency_race(&self) -> bool {
        self.code == ErrorCode::Conflict
            && self.details.get("reason").and_then(|r| r.as_str()) == Some(IDEMPOTENCY_RACE)
    }

    /// A topic chunk's decisions made while it was staged (a batch opened
    /// or joined, a throttle's count) no longer hold as it commits: another
    /// run changed that batch or counter meanwhile. Nothing was stored; the
    /// expansion stages the chunk again (`delivery::expand`).
    pub fn stale_chunk() -> Self {
        Error::conflict(
            "flow_run",
            None,
            STALE_CHUNK,
            "a batch or throttle counter changed while a topic chunk was staged",
        )
    }

    /// Whether this is `stale_chunk`.
    pub fn is_stale_chunk(&self) -> bool {
        self.code == ErrorCode::Conflict
            && self.details.get("reason").and_then(|r| r.as_str()) == Some(STALE_CHUNK)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::Internal, message)
    }

    pub fn unavailable(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::ServiceUnavailable, message)
    }

    /// 503 for a store that cannot write now (disk full, I/O error): the client
    /// retries after `retry_after` seconds (sent as `Retry-After`; the error
    /// object's details stay empty), by which time the store has usually
    /// recovered by itself (see `store::health`).
    pub fn storage_unavailable(message: impl Into<String>) -> Self {
        Error::unavailable(message).with("retry_after", STORAGE_RETRY_AFTER_SECS)
    }
}

/// What a 503 for an unwritable store tells the client to wait, in seconds.
pub const STORAGE_RETRY_AFTER_SECS: u64 = 3;

impl From<sled::Error> for Error {
    /// An I/O error (ENOSPC, EDQUOT, EIO…) is the disk's state, not a bug: 503
    /// with `Retry-After`. Anything else sled reports (corruption, a bug) is 500.
    fn from(e: sled::Error) -> Self {
        match &e {
            sled::Error::Io(io) => Error::storage_unavailable(format!(
                "the store cannot use its disk now ({}); try again later",
                io_reason(io)
            )),
            _ => Error::internal(format!("storage error: {e}")),
        }
    }
}

/// A short reason for an I/O error, such as "no space left on device".
pub fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::StorageFull => "no space left on device".into(),
        std::io::ErrorKind::QuotaExceeded => "disk quota exceeded".into(),
        _ => {
            // sled wraps the OS error in a custom one whose text is the original's
            // Debug form; keep the message part.
            let t = e.to_string();
            match t
                .split("message: \"")
                .nth(1)
                .and_then(|r| r.split('"').next())
            {
                Some(m) => m.to_lowercase(),
                None => t,
            }
        }
    }
}

/// Collects every problem in a request body before answering (docs/API.md §3: all of them at once).
#[derive(Debug, Default)]
pub struct Validator {
    pub fields: Vec<FieldError>,
}

impl Validator {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(
        &mut self, field: impl Into<String>, reason: &'static str, message: impl Into<String>,
    ) {
        self.fields.push(FieldError {
            field: field.into(),
            reason,
            message: message.into(),
        });
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    pub fn finish(self) -> Result<()> {
        if self.fields.is_empty() {
            Ok(())
        } else {
            Err(Error::validation(self.fields))
        }
    }
}
