//! The OpenAPI 3.1 document of the HTTP API (API.md §9), served at `/openapi.json`
//! and browsable at `/docs`.
//!
//! Nothing here lists the routes: each endpoint declares its operation beside
//! its handler (`routes::endpoint`), and the route table hands the operations
//! of what it registers to `render`, so a route cannot be served undocumented
//! or documented unserved. The schemas are derived from the body types the
//! handlers read and write (`components`), so a shape is written once;
//! schemathesis in CI checks that the server answers what the document says.

mod channels;
mod components;
mod operation;
mod params;
mod workflow;

pub use operation::{Content, Op, Parameter};
pub use params::*;

use serde_json::Value;
use utoipa::openapi::path::{PathItem, PathsBuilder};
use utoipa::openapi::tag::TagBuilder;
use utoipa::openapi::{InfoBuilder, LicenseBuilder, OpenApi, OpenApiBuilder};

/// The document as utoipa builds it.
pub fn document<'a>(ops: impl IntoIterator<Item = &'a Op>) -> OpenApi {
    let mut paths = PathsBuilder::new();
    let mut items: Vec<(&'static str, PathItem)> = vec![];
    for op in ops {
        let operation = op.build();
        match items.iter_mut().find(|(p, _)| *p == op.path) {
            Some((_, item)) => item.merge_operations(PathItem::new(op.method.clone(), operation)),
            None => items.push((op.path, PathItem::new(op.method.clone(), operation))),
        }
    }
    for (p, item) in items {
        paths = paths.path(p, item);
    }
    let tags = [
        (
            "Service",
            "Health, readiness, metrics, documentation and the inbox page (no credentials).",
        ),
        ("Project", "Project settings and the user-JWT signing key."),
        ("Users", "Users, their preferences and feeds."),
        ("Channels", "Delivery channels and their providers."),
        ("Flows", "Flows, their status and runs."),
        ("Topics", "Topics and their subscribers."),
        ("Suppressions", "Addresses the project no longer sends to."),
        ("Notifications", "Notifications and deliveries."),
        (
            "Event endpoints",
            "Where Herald POSTs events (Standard Webhooks), their attempts and replay.",
        ),
        ("User API", "What a signed-in user may do for themselves."),
    ];
    OpenApiBuilder::new()
        .info(
            InfoBuilder::new()
                .title("Herald")
                .version(env!("CARGO_PKG_VERSION"))
                .description(Some(
                    "Self-hostable notification delivery service. Admin API (`/admin/v1`): api key + \
                     secret key. User API (`/user/v1`): api key + user key (RS256 JWT) or, while the \
                     project's security mode is off, user id. Every error is the error object with \
                     the request id; lists are keyset-paginated newest first.",
                ))
                .license(Some(LicenseBuilder::new().name("MIT").build())),
        )
        .paths(paths.build())
        .components(Some(components::components()))
        .tags(Some(
            tags.iter()
                .map(|(n, d)| TagBuilder::new().name(*n).description(Some(*d)).build()),
        ))
        .build()
}

/// The document of these operations as JSON, with what the derives cannot
/// say added to its schemas.
pub fn render<'a>(ops: impl IntoIterator<Item = &'a Op>) -> String {
    {
        let mut v = serde_json::to_value(document(ops)).expect("the OpenAPI document serialises");
        components::require_present(&mut v);
        if let Some(schemas) = v
            .pointer_mut("/components/schemas")
            .and_then(Value::as_object_mut)
        {
            channels::insert(schemas);
            workflow::insert(schemas);
            if let Some(Value::Object(run)) = schemas.get_mut("RunInput") {
                // a run needs someone to reach: recipients, a topic, or both
                run.insert(
                    "anyOf".into(),
                    serde_json::json!([
                        {"required": ["recipients"], "properties": {"recipients": {"type": "array", "minItems": 1}}},
                        {"required": ["topic"], "properties": {"topic": {"type": "string"}}},
                    ]),
                );
            }
        }
        v.to_string()
    }
}
