//! A response, fully read, and the assertions on it (statuses, the error
//! object, validation fields, timestamps).

use super::*;

use reqwest::header::HeaderMap;
use serde_json::{json, Value};

// ================================================================ responses

/// A received response, fully read.
pub struct Resp {
    pub method: Method,
    pub url: String,
    pub status: u16,
    pub headers: HeaderMap,
    pub text: String,
    /// Parsed body, `Value::Null` when empty or not JSON.
    pub json: Value,
}

impl std::fmt::Display for Resp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let body: String = self.text.chars().take(1500).collect();
        write!(
            f,
            "{} {} -> {} {:?} body: {}",
            self.method, self.url, self.status, self.headers, body
        )
    }
}

impl std::fmt::Debug for Resp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

#[allow(async_fn_in_trait)]
pub trait Go {
    /// Sends the request and reads the whole response (panics on transport errors).
    async fn go(self) -> Resp;
}

impl Go for reqwest::RequestBuilder {
    async fn go(self) -> Resp {
        let (client, req) = self.build_split();
        let req = req.expect("build request");
        let (method, url) = (req.method().clone(), req.url().to_string());
        let resp = client
            .execute(req)
            .await
            .unwrap_or_else(|e| panic!("{method} {url}: transport error: {e:?}"));
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let bytes = resp
            .bytes()
            .await
            .unwrap_or_else(|e| panic!("{method} {url}: reading body: {e:?}"));
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let json = serde_json::from_str(&text).unwrap_or(Value::Null);
        Resp {
            method,
            url,
            status,
            headers,
            text,
            json,
        }
    }
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    }

    /// Asserts the status (and a JSON body when the status is not 204); returns the body.
    #[track_caller]
    pub fn ok(&self, status: u16) -> Value {
        assert_eq!(self.status, status, "expected status {status}: {self}");
        if status != 204 {
            let ct = self.header("content-type").unwrap_or_default();
            assert!(
                ct.starts_with("application/json"),
                "expected a JSON content type: {self}"
            );
            assert!(!self.json.is_null(), "expected a JSON body: {self}");
        }
        self.json.clone()
    }

    /// Asserts a list response `{items: [...], page: {...}}`; returns it.
    #[track_caller]
    pub fn page(&self) -> Value {
        let body = self.ok(200);
        assert!(body["items"].is_array(), "items: expected an array: {self}");
        let page = &body["page"];
        assert!(page["limit"].is_u64(), "page.limit: {self}");
        for k in ["after", "before"] {
            assert!(
                page[k].is_null() || page[k].as_str().is_some_and(|s| !s.is_empty()),
                "page.{k}: expected null or a non-empty string: {self}"
            );
        }
        for k in ["has_more_after", "has_more_before"] {
            assert!(page[k].is_boolean(), "page.{k}: expected a boolean: {self}");
        }
        body
    }
}

// ================================================================ error assertions

/// Asserts the whole error object; returns `error.details`.
#[track_caller]
pub fn assert_error(r: &Resp, status: u16, code: &str) -> Value {
    assert_eq!(r.status, status, "expected {status} {code}: {r}");
    let ct = r.header("content-type").unwrap_or_default();
    assert!(
        ct.starts_with("application/json"),
        "error content type must be application/json: {r}"
    );
    let err = &r.json["error"];
    assert!(err.is_object(), "expected {{\"error\": {{...}}}}: {r}");
    assert_eq!(err["code"], json!(code), "error.code: {r}");
    assert_eq!(err["status"], json!(status), "error.status: {r}");
    assert_eq!(
        err["type"],
        json!(format!("https://herald.dev/errors#{code}-{status}")),
        "error.type: {r}"
    );
    assert!(
        err["message"].as_str().is_some_and(|m| !m.is_empty()),
        "error.message must be a non-empty string: {r}"
    );
    let rid = err["request_id"].as_str().unwrap_or_default();
    assert!(
        !rid.is_empty(),
        "error.request_id must be a non-empty string: {r}"
    );
    assert_eq!(
        r.header("x-request-id").as_deref(),
        Some(rid),
        "x-request-id header must equal error.request_id: {r}"
    );
    let details = &err["details"];
    assert!(details.is_object(), "error.details must be an object: {r}");
    // the contract: a 500 or 503 has empty details (a 503's wait is in `Retry-After`)
    if status == 500 || status == 503 {
        assert_eq!(details, &json!({}), "details of a {status}: {r}");
    }
    details.clone()
}

/// 401 unauthenticated with the given `auth` and `reason`.
#[track_caller]
pub fn assert_unauth(r: &Resp, auth: &str, reason: &str) {
    let d = assert_error(r, 401, "unauthenticated");
    assert_eq!(d["auth"], json!(auth), "details.auth: {r}");
    assert_eq!(d["reason"], json!(reason), "details.reason: {r}");
}

/// 400 bad_request reason invalid_param naming `param`.
#[track_caller]
pub fn assert_invalid_param(r: &Resp, param: &str) {
    let d = assert_error(r, 400, "bad_request");
    assert_eq!(d["reason"], json!("invalid_param"), "details.reason: {r}");
    assert_eq!(d["param"], json!(param), "details.param: {r}");
}

/// 400 bad_request reason invalid_json.
#[track_caller]
pub fn assert_invalid_json(r: &Resp) {
    let d = assert_error(r, 400, "bad_request");
    assert_eq!(d["reason"], json!("invalid_json"), "details.reason: {r}");
}

/// 404 not_found naming `resource` and `id`.
#[track_caller]
pub fn assert_not_found(r: &Resp, resource: &str, id: &str) {
    let d = assert_error(r, 404, "not_found");
    assert_eq!(d["resource"], json!(resource), "details.resource: {r}");
    assert_eq!(d["id"], json!(id), "details.id: {r}");
}

/// Each (field, reason) pair must appear in `details.fields`, whose entries
/// must all be `{field, reason, message}` with string values.
#[track_caller]
pub fn assert_fields(details: &Value, want: &[(&str, &str)]) {
    let fields = details["fields"]
        .as_array()
        .unwrap_or_else(|| panic!("details.fields must be an array: {details}"));
    assert!(!fields.is_empty(), "details.fields must not be empty");
    for f in fields {
        for k in ["field", "reason", "message"] {
            assert!(
                f[k].as_str().is_some_and(|s| !s.is_empty()),
                "details.fields entries need a non-empty string {k}: {f}"
            );
        }
        let reason = f["reason"].as_str().unwrap();
        assert!(
            [
                "required",
                "format",
                "inclusion",
                "exclusion",
                "length",
                "number",
                "unique"
            ]
            .contains(&reason),
            "unknown validation reason {reason:?} in {f}"
        );
    }
    for (field, reason) in want {
        assert!(
            fields
                .iter()
                .any(|f| f["field"] == json!(field) && f["reason"] == json!(reason)),
            "details.fields: expected {{field: {field:?}, reason: {reason:?}}}, got {details}"
        );
    }
}

/// 422 validation_failed listing every pair of `want`; returns details.
#[track_caller]
pub fn assert_validation(r: &Resp, want: &[(&str, &str)]) -> Value {
    let d = assert_error(r, 422, "validation_failed");
    assert_fields(&d, want);
    d
}
