//! Request parsing with the contract's errors: the JSON body (size, content type,
//! syntax, object), query parameters and path parameters.

use crate::errors::{ApiError, ApiResult};
use actix_web::dev::Payload;
use actix_web::{web, FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;
use futures_util::StreamExt;
use herald_engine::Error;
use serde_json::{Map, Value};
use uuid::Uuid;

pub const MAX_BODY: usize = 1024 * 1024;
/// Past this we stop draining an oversized body and let the connection close.
const DRAIN_LIMIT: usize = 64 * 1024 * 1024;

/// The raw request body, read up to 1 MiB (docs/API.md §5: more is a 422 `length`).
pub struct Body {
    bytes: web::Bytes,
    json_type: bool,
}

impl FromRequest for Body {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let ct = req
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let essence = ct.split(';').next().unwrap_or("").trim().to_string();
        let json_type = essence == "application/json"
            || (essence.starts_with("application/") && essence.ends_with("+json"));
        let mut payload = payload.take();
        Box::pin(async move {
            let mut buf = web::BytesMut::new();
            let mut total = 0usize;
            while let Some(chunk) = payload.next().await {
                let chunk = chunk
                    .map_err(|e| ApiError(Error::invalid_json(format!("cannot read body: {e}"))))?;
                total += chunk.len();
                if total <= MAX_BODY {
                    buf.extend_from_slice(&chunk);
                } else if total > DRAIN_LIMIT {
                    break;
                }
            }
            if total > MAX_BODY {
                return Err(ApiError(Error::field(
                    "body",
                    "length",
                    "the body is larger than 1 MiB",
                )));
            }
            Ok(Body {
                bytes: buf.freeze(),
                json_type,
            })
        })
    }
}

impl Body {
    pub fn is_empty(&self) -> bool {
        self.bytes.iter().all(|b| b.is_ascii_whitespace())
    }

    /// The body as a JSON object: content type, syntax (depth ≤ 128, serde_json's
    /// recursion limit) and top-level object are checked, each a 400 `invalid_json`.
    pub fn object(&self) -> ApiResult<Map<String, Value>> {
        if !self.json_type {
            return Err(Error::invalid_json(
                "the body must be JSON with Content-Type: application/json",
            )
            .into());
        }
        if self.is_empty() {
            return Err(Error::invalid_json("a JSON object body is required").into());
        }
        match serde_json::from_slice::<Value>(&self.bytes) {
            Ok(Value::Object(m)) => Ok(m),
            Ok(_) => Err(Error::invalid_json("the body must be a JSON object").into()),
            Err(e) => Err(Error::invalid_json(format!("malformed JSON: {e}")).into()),
        }
    }

    /// Like `object`, but an empty body is an empty object.
    pub fn object_or_empty(&self) -> ApiResult<Map<String, Value>> {
        if self.is_empty() {
            Ok(Map::new())
        } else {
            self.object()
        }
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// Query parameters, parsed leniently (unknown ones are ignored).
pub struct Query(pub Vec<(String, String)>);

impl Query {
    pub fn of(req: &HttpRequest) -> Query {
        Query(
            url::form_urlencoded::parse(req.query_string().as_bytes())
                .into_owned()
                .collect(),
        )
    }
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
    pub fn timestamp(&self, name: &str) -> ApiResult<Option<herald_engine::model::Timestamp>> {
        match self.get(name) {
            None => Ok(None),
            Some(s) => chrono::DateTime::parse_from_rfc3339(s)
                .map(|t| {
                    Some(herald_engine::model::Timestamp(
                        t.with_timezone(&chrono::Utc),
                    ))
                })
                .map_err(|_| {
                    ApiError(Error::invalid_param(
                        name,
                        format!("{name} must be an RFC 3339 date-time"),
                    ))
                }),
        }
    }
    pub fn uuid(&self, name: &str) -> ApiResult<Option<Uuid>> {
        match self.get(name) {
            None => Ok(None),
            Some(s) => Uuid::parse_str(s).map(Some).map_err(|_| {
                ApiError(Error::invalid_param(name, format!("{name} must be a UUID")))
            }),
        }
    }
    /// A value from a fixed set, else 400 `invalid_param`.
    pub fn choice<T>(&self, name: &str, parse: impl Fn(&str) -> Option<T>) -> ApiResult<Option<T>> {
        match self.get(name) {
            None => Ok(None),
            Some(s) => parse(s).map(Some).ok_or_else(|| {
                ApiError(Error::invalid_param(
                    name,
                    format!("unknown value for {name}"),
                ))
            }),
        }
    }
}

/// A path parameter, fully percent-decoded (the router leaves reserved characters
/// such as `%2B` and `%2F` encoded, but external ids may contain them).
/// Bytes that are not UTF-8 (`%FF`) are 400 `invalid_param` naming the parameter:
/// decoding them lossily would make `%FF` and `%FE` the same id.
pub fn path_str(req: &HttpRequest, name: &str) -> ApiResult<String> {
    let raw = req.match_info().get(name).unwrap_or("");
    percent_encoding::percent_decode_str(raw)
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| {
            ApiError(Error::invalid_param(
                name,
                format!("{name} must be percent-encoded UTF-8"),
            ))
        })
}

/// A path parameter that must be a UUID (400 `invalid_uuid` naming it otherwise).
pub fn path_uuid(req: &HttpRequest, name: &str) -> ApiResult<Uuid> {
    Uuid::parse_str(req.match_info().get(name).unwrap_or(""))
        .map_err(|_| ApiError(Error::invalid_uuid(name)))
}

/// A typed request body from the body's object. A type of `Given` fields reads
/// any object; anything else would be a bug, answered as a 500.
pub fn typed<T: serde::de::DeserializeOwned>(m: &Map<String, Value>) -> ApiResult<T> {
    serde_json::from_value(Value::Object(m.clone()))
        .map_err(|e| ApiError(Error::internal(format!("body type: {e}"))))
}

/// One field of a typed request body as the JSON gave it. Serde reads any JSON
/// into it without failing, so a body type made of `Given` fields always
/// deserialises and its `validate` reports every problem at once, at its path,
/// in the contract's words (serde's derive would stop at the first, in its own).
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Given<T> {
    #[default]
    Absent,
    Null,
    Value(T),
    /// Present, but not a `T`.
    Wrong(Value),
}

impl<T: serde::de::DeserializeOwned> Given<T> {
    pub fn of(v: Option<&Value>) -> Self {
        match v {
            None => Given::Absent,
            Some(Value::Null) => Given::Null,
            Some(x) => serde_json::from_value(x.clone())
                .map(Given::Value)
                .unwrap_or_else(|_| Given::Wrong(x.clone())),
        }
    }
}

impl<'de, T: serde::de::DeserializeOwned> serde::Deserialize<'de> for Given<T> {
    /// Only called for a present key (absent is `Default`), `null` included.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(Given::of(Some(&v)))
    }
}

impl Given<bool> {
    /// `None`: absent or null.
    pub fn flag(&self, path: &str, v: &mut herald_engine::Validator) -> Option<bool> {
        match self {
            Given::Absent | Given::Null => None,
            Given::Value(b) => Some(*b),
            Given::Wrong(_) => {
                v.push(path, "format", "must be a boolean");
                None
            }
        }
    }
}

impl Given<String> {
    /// `None`: absent; `Some(None)`: null; `Some(Some(s))`: a string of at most `max` chars.
    pub fn text(
        &self, path: &str, max: usize, v: &mut herald_engine::Validator,
    ) -> Option<Option<String>> {
        match self {
            Given::Absent => None,
            Given::Null => Some(None),
            Given::Value(s) if s.chars().count() > max => {
                v.push(path, "length", format!("at most {max} characters"));
                None
            }
            Given::Value(s) => Some(Some(s.clone())),
            Given::Wrong(_) => {
                v.push(path, "format", "must be a string");
                None
            }
        }
    }

    /// A body's only field, a required text: the text, or the 422.
    pub fn only_required_text(&self, path: &str, max: usize) -> herald_engine::Result<String> {
        let mut v = herald_engine::Validator::new();
        let s = self.required_text(path, max, &mut v);
        v.finish()?;
        Ok(s.unwrap_or_default())
    }

    /// A required non-empty string of at most `max` chars.
    pub fn required_text(
        &self, path: &str, max: usize, v: &mut herald_engine::Validator,
    ) -> Option<String> {
        match self.text(path, max, v) {
            Some(Some(s)) if !s.is_empty() => Some(s),
            Some(Some(_)) => {
                v.push(path, "length", "must not be empty");
                None
            }
            Some(None) | None => {
                // Only absent or null is "required"; a present value that failed
                // its own check (type, length) was reported already.
                if matches!(self, Given::Absent | Given::Null) {
                    v.push(path, "required", "is required");
                }
                None
            }
        }
    }
}

/// A JSON object read as `T`. Serde reads a struct from an array as well, by
/// position; in a body only an object is one, so `Given<Obj<T>>` is `Wrong` for
/// anything else.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Obj<T>(pub T);

impl<'de, T: serde::de::DeserializeOwned> serde::Deserialize<'de> for Obj<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            v @ Value::Object(_) => serde_json::from_value(v)
                .map(Obj)
                .map_err(serde::de::Error::custom),
            _ => Err(serde::de::Error::custom("must be an object")),
        }
    }
}
