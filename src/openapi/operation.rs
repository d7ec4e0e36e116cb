//! One operation of the document: its method, path, id, summary, parameters,
//! body and responses, as the endpoint that serves it declares them
//! (`routes::endpoint`). What every operation of a kind has in common (the
//! error responses of an authenticated route, of a body, of an idempotency
//! key; the security requirements; the tag) is added here, so a declaration
//! only says what is particular to its route.

use super::params::str_schema;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::{HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::response::{ResponseBuilder, ResponsesBuilder};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{ContentBuilder, Ref, RefOr, Required};

pub use utoipa::openapi::path::Parameter;

/// Who may call an operation: decided by its path's prefix, as the
/// authentication middleware decides it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Auth {
    None,
    Admin,
    User,
}

/// What a success response carries.
pub enum Content {
    /// A JSON body of the named schema.
    Json(&'static str),
    /// No body.
    Empty,
    /// A body of this content type whose schema is this type (`"object"` or
    /// `"string"`): the pages, scripts and the document itself.
    Text(&'static str, &'static str),
}

/// One documented operation.
pub struct Op {
    pub(crate) method: HttpMethod,
    pub(crate) path: &'static str,
    id: &'static str,
    summary: &'static str,
    tag: &'static str,
    auth: Auth,
    params: Vec<Parameter>,
    body: Option<(&'static str, bool)>,
    /// The body's media type: JSON but for the preference page's form.
    body_type: &'static str,
    idempotent: bool,
    oks: Vec<(u16, &'static str, Content)>,
    errors: Vec<u16>,
}

impl Op {
    pub fn new(
        method: HttpMethod, path: &'static str, id: &'static str, summary: &'static str,
    ) -> Op {
        let (tag, auth) = if path.starts_with("/admin/") {
            let tag = path
                .trim_start_matches("/admin/v1/")
                .trim_start_matches("/admin/")
                .split('/')
                .next()
                .unwrap_or("");
            (admin_tag(tag), Auth::Admin)
        } else if path.starts_with("/user/") {
            ("User API", Auth::User)
        } else {
            ("Service", Auth::None)
        };
        Op {
            method,
            path,
            id,
            summary,
            tag,
            auth,
            params: vec![],
            body: None,
            body_type: "application/json",
            idempotent: false,
            oks: vec![],
            errors: vec![],
        }
    }
    pub fn get(path: &'static str, id: &'static str, summary: &'static str) -> Op {
        Op::new(HttpMethod::Get, path, id, summary)
    }
    pub fn put(path: &'static str, id: &'static str, summary: &'static str) -> Op {
        Op::new(HttpMethod::Put, path, id, summary)
    }
    pub fn post(path: &'static str, id: &'static str, summary: &'static str) -> Op {
        Op::new(HttpMethod::Post, path, id, summary)
    }
    pub fn delete(path: &'static str, id: &'static str, summary: &'static str) -> Op {
        Op::new(HttpMethod::Delete, path, id, summary)
    }
    pub fn patch(path: &'static str, id: &'static str, summary: &'static str) -> Op {
        Op::new(HttpMethod::Patch, path, id, summary)
    }
    pub fn method(&self) -> &HttpMethod {
        &self.method
    }
    pub fn path(&self) -> &'static str {
        self.path
    }
    pub fn param(mut self, p: Parameter) -> Op {
        self.params.push(p);
        self
    }
    pub fn params(mut self, ps: Vec<Parameter>) -> Op {
        self.params.extend(ps);
        self
    }
    /// A JSON object body (`required`: an empty body is a 400).
    pub fn body(mut self, schema: &'static str, required: bool) -> Op {
        self.body = Some((schema, required));
        self
    }
    /// A required HTML form body (`application/x-www-form-urlencoded`).
    pub fn form_body(mut self, schema: &'static str) -> Op {
        self.body = Some((schema, true));
        self.body_type = "application/x-www-form-urlencoded";
        self
    }
    /// An optional HTML form body (`application/x-www-form-urlencoded`).
    pub fn optional_form_body(mut self, schema: &'static str) -> Op {
        self.body = Some((schema, false));
        self.body_type = "application/x-www-form-urlencoded";
        self
    }
    /// Takes an `Idempotency-Key` header (POSTs that create).
    pub fn idempotent(mut self) -> Op {
        self.idempotent = true;
        self
    }
    pub fn ok(mut self, status: u16, description: &'static str, body: Content) -> Op {
        self.oks.push((status, description, body));
        self
    }
    pub fn errors(mut self, codes: &[u16]) -> Op {
        self.errors.extend_from_slice(codes);
        self
    }
    /// A paginated list: `limit`/`after`/`before` (400 on a bad one).
    pub fn paged(self) -> Op {
        self.params(super::params::paging_params()).errors(&[400])
    }

    /// The operation as the document holds it.
    pub(crate) fn build(&self) -> utoipa::openapi::path::Operation {
        let mut b = OperationBuilder::new()
            .operation_id(Some(self.id))
            .summary(Some(self.summary))
            .tag(self.tag);
        for p in &self.params {
            b = b.parameter(p.clone());
        }
        if self.idempotent {
            b = b.parameter(
                ParameterBuilder::new()
                    .name("Idempotency-Key")
                    .parameter_in(ParameterIn::Header)
                    .required(Required::False)
                    .description(Some(
                        "Same key, endpoint and payload within 24 h: the original answer is replayed \
                         (header idempotent-replayed: true); another payload: 409.",
                    ))
                    .schema(Some(str_schema().min_length(Some(1)).max_length(Some(255))))
                    .build(),
            );
        }
        if let Some((schema, required)) = self.body {
            b = b.request_body(Some(
                RequestBodyBuilder::new()
                    .required(Some(if required {
                        Required::True
                    } else {
                        Required::False
                    }))
                    .content(
                        self.body_type,
                        ContentBuilder::new()
                            .schema(Some(Ref::from_schema_name(schema)))
                            .build(),
                    )
                    .build(),
            ));
        }
        let mut responses = ResponsesBuilder::new();
        for (status, description, body) in &self.oks {
            let mut r = ResponseBuilder::new()
                .description(*description)
                .header("x-request-id", request_id_header());
            match body {
                Content::Json(schema) => {
                    r = r.content(
                        "application/json",
                        ContentBuilder::new()
                            .schema(Some(Ref::from_schema_name(*schema)))
                            .build(),
                    )
                }
                Content::Text(ct, ty) => {
                    let t = if *ty == "object" {
                        Type::Object
                    } else {
                        Type::String
                    };
                    r = r.content(
                        *ct,
                        ContentBuilder::new()
                            .schema(Some(ObjectBuilder::new().schema_type(t)))
                            .build(),
                    )
                }
                Content::Empty => {}
            }
            responses = responses.response(status.to_string(), r.build());
        }
        // Every non-2xx is the error object: a reference to one shared
        // response per status (`components`).
        let mut errors: Vec<u16> = self.errors.clone();
        if self.auth != Auth::None {
            // 503: the store cannot write for now (e.g. a full disk), retry later
            errors.extend([401, 429, 500, 503]);
        }
        if self.body.is_some() {
            // 400: malformed JSON or not an object; 422: validation, or a body over 1 MiB.
            errors.extend([400, 422]);
        }
        if self.idempotent {
            // a reused key with another payload, or a bad key
            errors.extend([409, 422]);
        }
        errors.sort_unstable();
        errors.dedup();
        for code in errors {
            responses = responses.response(
                code.to_string(),
                RefOr::Ref(Ref::from_response_name(reason_phrase(code))),
            );
        }
        b = b.responses(responses.build());
        match self.auth {
            Auth::None => b.securities(Some(Vec::<SecurityRequirement>::new())),
            Auth::Admin => b.security(
                SecurityRequirement::new("api_key", Vec::<String>::new())
                    .add("secret_key", Vec::<String>::new()),
            ),
            Auth::User => b
                .security(
                    SecurityRequirement::new("api_key", Vec::<String>::new())
                        .add("user_key", Vec::<String>::new()),
                )
                .security(
                    SecurityRequirement::new("api_key", Vec::<String>::new())
                        .add("user_id", Vec::<String>::new()),
                ),
        }
        .build()
    }
}

fn admin_tag(first: &str) -> &'static str {
    match first {
        "project" => "Project",
        "users" | "erasures" => "Users",
        "channels" => "Channels",
        "flows" | "flow_runs" => "Flows",
        "topics" => "Topics",
        "suppressions" => "Suppressions",
        "audit_log" => "Audit log",
        "notifications" | "deliveries" => "Notifications",
        "webhook_endpoints" => "Event endpoints",
        _ => "Admin API",
    }
}

/// The name of the shared error response of a status (`components`).
pub(crate) fn reason_phrase(code: u16) -> &'static str {
    match code {
        400 => "BadRequest",
        401 => "Unauthenticated",
        404 => "NotFound",
        409 => "Conflict",
        422 => "ValidationFailed",
        429 => "RateLimited",
        500 => "InternalError",
        503 => "ServiceUnavailable",
        _ => "Error",
    }
}

pub(crate) fn request_id_header() -> utoipa::openapi::header::Header {
    HeaderBuilder::new()
        .schema(Some(str_schema()))
        .description(Some(
            "The request id: the request's own x-request-id when valid, else a generated one.",
        ))
        .build()
}
