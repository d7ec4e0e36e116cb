//! The OpenAPI 3.1 document of the HTTP API (API.md §9), served at `/openapi.json`
//! and browsable at `/docs`.
//!
//! The schemas are derived from the body types the handlers read and write
//! (`crate::bodies`, and the engine's `model` for the bodies it serialises
//! itself), so a shape is written once; the operations are one table
//! (`operations`) built with utoipa's builder types. A test keeps this table
//! and the route table in `routes/mod.rs` in sync; schemathesis in CI checks that
//! the server answers what the document says.

mod channels;
mod workflow;

use crate::bodies::bulk::{
    BulkDeleteInput, BulkDeleteResult, BulkErasure, BulkStatus, BulkSubscriptionInput,
    BulkSubscriptionResult, BulkUserResult, BulkUsersInput, BulkUsersResult, SubscriptionRequest,
};
use crate::bodies::flows::{
    self, ChannelStep, ChannelStepType, DelayStep, DelayStepType, Flow, FlowInput, FlowStatus,
    FlowUpdate, RecipientSpec, RunInput, Step, StepInput, Template, ThrottleStep, ThrottleStepType,
};
use crate::bodies::flows::{BatchStep, BatchStepType, BatchWindowType};
use crate::bodies::notifications::{FlowRun, Notification, ProcessingStatus};
use crate::bodies::user_api::{
    FeedEntryPatch, FeedPage, MarkAllResult, PushKeys, PushSubscription, PushSubscriptionDelete,
    PushSubscriptionInput, UserChannel,
};
use crate::bodies::users::{
    ChannelTypeFlags, ChannelTypeFlagsInput, Erasure, FlowPreferences, FlowPreferencesInput,
    Preferences, PreferencesInput,
};
use crate::bodies::webhook_endpoints::{
    EventAttemptView, NotificationTrace, ReplayInput, ReplayResult, TraceEntryView,
    WebhookEndpoint, WebhookEndpointInput, WebhookEndpointUpdate, WebhookEndpointWithSecret,
};
use crate::bodies::workflow::{CancelInput, CancelResult, ClockAdvance};
use crate::bodies::{
    ClockKind, Health, Page, Project, ProjectUpdate, Retention, RetentionInput, SigningKeyInput,
    SigningKeyPair, Subscription, SubscriptionInput, Topic, TopicInput, Usage,
};
use crate::errors::{ErrorBody, ErrorCode, ErrorResponse};
use herald_actors::model::{
    ChannelStatus, ChannelType, DeliveryData, DeliveryError, DeliveryStatus, DeliveryView,
    FeedEntry, FeedMeta, FlowRunAccepted, PendingStatus, User,
};
use serde_json::Value;
use std::sync::OnceLock;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::{
    HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn, PathItem, PathsBuilder,
};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::response::{ResponseBuilder, ResponsesBuilder};
use utoipa::openapi::schema::{
    ArrayBuilder, ComponentsBuilder, KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type,
};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityRequirement, SecurityScheme};
use utoipa::openapi::tag::TagBuilder;
use utoipa::openapi::{
    ContentBuilder, InfoBuilder, LicenseBuilder, OpenApi, OpenApiBuilder, Ref, RefOr, Required,
};
use utoipa::{PartialSchema, ToSchema};

pub use crate::bodies::users::{ExternalId, RecipientInput, TimeZone, UserInput, HTTP_URL};

// `Error` (the body of every non-2xx response), `ErrorBody`, `ErrorCode`:
// `crate::errors`.

// ================================================================ the document

/// Lists: `{items: [T], page}`, one named schema per item type.
const LISTS: &[(&str, &str)] = &[
    ("UserList", "User"),
    ("ChannelList", "Channel"),
    ("FlowList", "Flow"),
    ("TopicList", "Topic"),
    ("SubscriptionList", "Subscription"),
    ("NotificationList", "Notification"),
    ("DeliveryList", "Delivery"),
    ("PushSubscriptionList", "PushSubscription"),
    ("WebhookEndpointList", "WebhookEndpoint"),
    ("EventAttemptList", "EventAttemptView"),
];

/// Response schemas whose every property is always present (null when empty).
const ALWAYS_PRESENT: &[&str] = &[
    "Error",
    "ErrorBody",
    "Page",
    "Health",
    "Project",
    "Usage",
    "Retention",
    "Erasure",
    "SigningKeyPair",
    "User",
    "ChannelTypeFlags",
    "FlowPreferences",
    "Preferences",
    "UserChannel",
    "PushSubscription",
    "ChannelStep",
    "DelayStep",
    "Flow",
    "FlowRunAccepted",
    "FlowRun",
    "Topic",
    "Subscription",
    "DeliveryError",
    "Delivery",
    "Notification",
    "FeedEntry",
    "FeedMeta",
    "FeedPage",
    "MarkAllResult",
    "CancelResult",
    "WebhookEndpoint",
    "EventAttemptView",
    "TraceEntryView",
    "NotificationTrace",
];

/// Optional properties of `ALWAYS_PRESENT` schemas (left out when empty).
const SOMETIMES_ABSENT: &[(&str, &str)] = &[
    ("UserChannel", "vapid_public_key"),
    ("ChannelStep", "channel_id"),
    ("ChannelStep", "if"),
    ("ChannelStep", "send_window"),
    ("DelayStep", "if"),
    ("Notification", "batched_into"),
];

macro_rules! schemas {
    ($b:expr, $($t:ty),* $(,)?) => {{
        let mut b = $b;
        $( b = b.schema(<$t as ToSchema>::name(), <$t as PartialSchema>::schema()); )*
        b
    }};
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Auth {
    None,
    Admin,
    User,
}

/// What a success response carries.
enum Body {
    Json(&'static str),
    Empty,
    Text(&'static str, &'static str),
}

/// One operation of the table.
struct Op {
    method: HttpMethod,
    path: &'static str,
    id: &'static str,
    summary: &'static str,
    tag: &'static str,
    auth: Auth,
    params: Vec<utoipa::openapi::path::Parameter>,
    body: Option<(&'static str, bool)>,
    idempotent: bool,
    oks: Vec<(u16, &'static str, Body)>,
    errors: Vec<u16>,
}

impl Op {
    fn new(method: HttpMethod, path: &'static str, id: &'static str, summary: &'static str) -> Op {
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
            idempotent: false,
            oks: vec![],
            errors: vec![],
        }
    }
    fn param(mut self, p: utoipa::openapi::path::Parameter) -> Op {
        self.params.push(p);
        self
    }
    fn params(mut self, ps: Vec<utoipa::openapi::path::Parameter>) -> Op {
        self.params.extend(ps);
        self
    }
    /// A JSON object body (`required`: an empty body is a 400).
    fn body(mut self, schema: &'static str, required: bool) -> Op {
        self.body = Some((schema, required));
        self
    }
    /// Takes an `Idempotency-Key` header (POSTs that create).
    fn idempotent(mut self) -> Op {
        self.idempotent = true;
        self
    }
    fn ok(mut self, status: u16, description: &'static str, body: Body) -> Op {
        self.oks.push((status, description, body));
        self
    }
    fn errors(mut self, codes: &[u16]) -> Op {
        self.errors.extend_from_slice(codes);
        self
    }
    /// A paginated list: `limit`/`after`/`before` (400 on a bad one).
    fn paged(self) -> Op {
        self.params(paging_params()).errors(&[400])
    }
}

fn admin_tag(first: &str) -> &'static str {
    match first {
        "project" => "Project",
        "users" | "erasures" => "Users",
        "channels" => "Channels",
        "flows" | "flow_runs" => "Flows",
        "topics" => "Topics",
        "notifications" | "deliveries" => "Notifications",
        "webhook_endpoints" => "Event endpoints",
        _ => "Admin API",
    }
}

fn str_schema() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String)
}

fn uuid_schema() -> Schema {
    str_schema()
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Uuid)))
        .into()
}

fn path_param(name: &str, schema: Schema, description: &str) -> utoipa::openapi::path::Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Path)
        .required(Required::True)
        .description(Some(description))
        .schema(Some(schema))
        .build()
}

fn query_param(name: &str, schema: Schema, description: &str) -> utoipa::openapi::path::Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Query)
        .required(Required::False)
        .description(Some(description))
        .schema(Some(schema))
        .build()
}

fn enum_schema(values: &[&str]) -> Schema {
    str_schema().enum_values(Some(values.to_vec())).into()
}

fn datetime_schema() -> Schema {
    str_schema()
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
        .into()
}

fn external_id_param() -> utoipa::openapi::path::Parameter {
    path_param(
        "external_id",
        str_schema()
            .min_length(Some(1))
            .max_length(Some(255))
            .into(),
        "The user's external id (URL-encoded).",
    )
}

fn uuid_param(name: &str, what: &str) -> utoipa::openapi::path::Parameter {
    path_param(name, uuid_schema(), what)
}

fn topic_key_param() -> utoipa::openapi::path::Parameter {
    path_param(
        "key",
        str_schema()
            .pattern(Some("^[a-z0-9][a-z0-9_-]{0,63}$"))
            .into(),
        "The topic key.",
    )
}

fn flow_param() -> utoipa::openapi::path::Parameter {
    path_param(
        "id",
        str_schema().min_length(Some(1)).into(),
        "The flow's id (a UUID) or handle.",
    )
}

fn paging_params() -> Vec<utoipa::openapi::path::Parameter> {
    vec![
        query_param(
            "limit",
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(1))
                .default(Some(25.into()))
                .into(),
            "Items per page (default 25; values above 1000 answer 1000).",
        ),
        query_param(
            "after",
            str_schema().min_length(Some(1)).into(),
            "Cursor from `page.after`: the next (older) page. Not with `before`.",
        ),
        query_param(
            "before",
            str_schema().min_length(Some(1)).into(),
            "Cursor from `page.before`: the previous (newer) page. Not with `after`.",
        ),
    ]
}

fn created_filters() -> Vec<utoipa::openapi::path::Parameter> {
    vec![
        query_param(
            "created_after",
            datetime_schema(),
            "Exclusive lower bound (RFC 3339 date-time).",
        ),
        query_param(
            "created_before",
            datetime_schema(),
            "Exclusive upper bound (RFC 3339 date-time).",
        ),
    ]
}

const FEED_ACTIONS: &[&str] = &["seen", "read", "clicked", "archive", "unarchive"];

/// Every operation, in route-table order (`routes::configure`).
fn operations() -> Vec<Op> {
    use Body::{Empty, Json, Text};
    use HttpMethod::{Delete, Get, Patch, Post, Put};
    vec![
        // ---- service
        Op::new(Get, "/healthz", "healthz", "Liveness").ok(200, "Alive", Json("Health")),
        Op::new(Get, "/readyz", "readyz", "Readiness: the store is open and the engine runs")
            .ok(200, "Ready", Json("Health"))
            .errors(&[503]),
        Op::new(Get, "/metrics", "metrics", "Prometheus metrics")
            .ok(200, "Metrics in the Prometheus text format", Text("text/plain", "string")),
        Op::new(Get, "/openapi.json", "openapi", "This OpenAPI document")
            .ok(200, "The document", Text("application/json", "object")),
        Op::new(Get, "/docs", "docs", "Browsable API documentation")
            .ok(200, "An HTML page", Text("text/html", "string")),
        Op::new(Get, "/inbox", "inbox", "The in-app inbox page")
            .ok(200, "An HTML page", Text("text/html", "string")),
        Op::new(Get, "/inbox/inbox.css", "inbox_css", "Inbox page stylesheet")
            .ok(200, "CSS", Text("text/css", "string")),
        Op::new(Get, "/inbox/inbox.js", "inbox_js", "Inbox page script")
            .ok(200, "JavaScript", Text("application/javascript", "string")),
        // ---- project
        Op::new(Get, "/admin/v1/project", "getProject", "The project")
            .ok(200, "The project", Json("Project")),
        Op::new(Put, "/admin/v1/project", "updateProject", "Update the project's settings")
            .body("ProjectUpdate", true)
            .ok(200, "The project", Json("Project"))
            .errors(&[409]),
        Op::new(
            Post,
            "/admin/v1/project/clock/advance",
            "advanceProjectClock",
            "Move the project's test clock forward; what became due runs",
        )
        .body("ClockAdvance", true)
        .ok(200, "The project", Json("Project"))
        .errors(&[409]),
        Op::new(
            Put,
            "/admin/v1/project/signing_key",
            "putSigningKey",
            "Store the RSA public key that verifies user JWTs",
        )
        .body("SigningKeyInput", true)
        .ok(200, "The project", Json("Project")),
        Op::new(
            Post,
            "/admin/v1/project/signing_key",
            "generateSigningKey",
            "Generate an RSA-2048 key pair; the private key is returned once",
        )
        .ok(201, "The key pair", Json("SigningKeyPair")),
        Op::new(
            Delete,
            "/admin/v1/project/signing_key",
            "deleteSigningKey",
            "Remove the signing key",
        )
        .ok(204, "Removed", Empty),
        // ---- users
        Op::new(Get, "/admin/v1/users", "listUsers", "List users")
            .paged()
            .ok(200, "A page of users", Json("UserList")),
        Op::new(
            Post,
            "/admin/v1/users/bulk",
            "bulkUpsertUsers",
            "Create or update up to 1,000 users in one durable commit",
        )
        .body("BulkUsersInput", true)
        .idempotent()
        .ok(
            200,
            "One result per item, in order: stored or refused",
            Json("BulkUsersResult"),
        ),
        Op::new(
            Post,
            "/admin/v1/users/bulk_delete",
            "bulkDeleteUsers",
            "Delete (or erase) up to 1,000 users",
        )
        .param(query_param(
            "erase",
            enum_schema(&["true", "false"]),
            "`true`: erase each user as `erase` in the body does.",
        ))
        .body("BulkDeleteInput", true)
        .idempotent()
        .ok(
            200,
            "How many were deleted; the external ids that named no user; with `erase`, the erasures",
            Json("BulkDeleteResult"),
        ),
        Op::new(Put, "/admin/v1/users/{external_id}", "putUser", "Create or update a user")
            .param(external_id_param())
            .body("UserInput", true)
            .ok(201, "Created", Json("User"))
            .ok(200, "Updated", Json("User")),
        Op::new(Get, "/admin/v1/users/{external_id}", "getUser", "A user")
            .param(external_id_param())
            .ok(200, "The user", Json("User"))
            .errors(&[404]),
        Op::new(
            Delete,
            "/admin/v1/users/{external_id}",
            "deleteUser",
            "Delete a user with its preferences, feed and subscriptions",
        )
        .param(external_id_param())
        .param(query_param(
            "erase",
            enum_schema(&["true", "false"]),
            "`true`: also erase the user's notifications, deliveries, feed entries and events.",
        ))
        .ok(204, "Deleted (and, with `erase=true`, erased)", Empty)
        .ok(
            202,
            "Deleted; the erasure continues in the background (`Location`: the erasure to poll)",
            Json("Erasure"),
        )
        .errors(&[400, 404]),
        Op::new(Get, "/admin/v1/erasures/{id}", "getErasure", "Where a user's erasure stands")
            .param(uuid_param("id", "The erasure's id."))
            .ok(200, "The erasure", Json("Erasure"))
            .errors(&[400, 404]),
        Op::new(
            Get,
            "/admin/v1/users/{external_id}/preferences",
            "getUserPreferences",
            "A user's preferences",
        )
        .param(external_id_param())
        .ok(200, "The preferences", Json("Preferences"))
        .errors(&[404]),
        Op::new(
            Put,
            "/admin/v1/users/{external_id}/preferences",
            "putUserPreferences",
            "Update a user's preferences",
        )
        .param(external_id_param())
        .body("PreferencesInput", true)
        .ok(200, "The full preferences", Json("Preferences"))
        .errors(&[404]),
        Op::new(
            Get,
            "/admin/v1/users/{external_id}/feed",
            "getUserFeed",
            "A user's feed, as the User API shows it",
        )
        .param(external_id_param())
        .param(feed_status_param())
        .paged()
        .ok(200, "A page of feed entries", Json("FeedPage"))
        .errors(&[404]),
        // ---- channels
        Op::new(Post, "/admin/v1/channels", "createChannel", "Create a channel")
            .body("ChannelInput", true)
            .idempotent()
            .ok(201, "Created", Json("Channel")),
        Op::new(Get, "/admin/v1/channels", "listChannels", "List channels")
            .paged()
            .ok(200, "A page of channels", Json("ChannelList")),
        Op::new(Get, "/admin/v1/channels/{channel_id}", "getChannel", "A channel")
            .param(uuid_param("channel_id", "The channel's id."))
            .ok(200, "The channel", Json("Channel"))
            .errors(&[400, 404]),
        Op::new(
            Put,
            "/admin/v1/channels/{channel_id}",
            "updateChannel",
            "Update a channel (config merged key by key)",
        )
        .param(uuid_param("channel_id", "The channel's id."))
        .body("ChannelUpdate", true)
        .ok(200, "The channel", Json("Channel"))
        .errors(&[404]),
        Op::new(Delete, "/admin/v1/channels/{channel_id}", "deleteChannel", "Delete a channel")
            .param(uuid_param("channel_id", "The channel's id."))
            .ok(204, "Deleted", Empty)
            .errors(&[400, 404, 409]),
        Op::new(
            Post,
            "/admin/v1/channels/{channel_id}/revoke",
            "revokeChannel",
            "Revoke a channel's provider credentials",
        )
        .param(uuid_param("channel_id", "The channel's id."))
        .ok(200, "The channel", Json("Channel"))
        .errors(&[400, 404, 409]),
        // ---- flows
        Op::new(Post, "/admin/v1/flows", "createFlow", "Create a flow (status draft)")
            .body("FlowInput", true)
            .idempotent()
            .ok(201, "Created", Json("Flow")),
        Op::new(Get, "/admin/v1/flows", "listFlows", "List flows")
            .paged()
            .ok(200, "A page of flows", Json("FlowList")),
        Op::new(Get, "/admin/v1/flows/{id}", "getFlow", "A flow, by id or handle")
            .param(flow_param())
            .ok(200, "The flow", Json("Flow"))
            .errors(&[404]),
        Op::new(Put, "/admin/v1/flows/{id}", "updateFlow", "Update a flow")
            .param(flow_param())
            .body("FlowUpdate", true)
            .ok(200, "The flow", Json("Flow"))
            .errors(&[404, 409]),
        Op::new(Post, "/admin/v1/flows/{id}/activate", "activateFlow", "Activate a flow")
            .param(flow_param())
            .ok(200, "The flow", Json("Flow"))
            .errors(&[404, 409, 422]),
        Op::new(
            Post,
            "/admin/v1/flows/{id}/deactivate",
            "deactivateFlow",
            "Return a flow to draft",
        )
        .param(flow_param())
        .ok(200, "The flow", Json("Flow"))
        .errors(&[404, 409]),
        Op::new(Post, "/admin/v1/flows/{id}/archive", "archiveFlow", "Archive a flow (final)")
            .param(flow_param())
            .ok(200, "The flow", Json("Flow"))
            .errors(&[404, 409]),
        Op::new(Post, "/admin/v1/flows/{id}/run", "runFlow", "Run a flow for recipients")
            .param(flow_param())
            .body("RunInput", true)
            .idempotent()
            .ok(202, "Accepted and stored durably", Json("FlowRunAccepted"))
            .errors(&[404, 409]),
        Op::new(
            Post,
            "/admin/v1/flows/{id}/cancel",
            "cancelFlowRuns",
            "Stop the waiting deliveries of the flow's runs with a cancellation key",
        )
        .param(flow_param())
        .body("CancelInput", true)
        .ok(200, "What was canceled", Json("CancelResult"))
        .errors(&[404]),
        Op::new(Get, "/admin/v1/flow_runs/{id}", "getFlowRun", "A flow run")
            .param(uuid_param("id", "The flow run's id."))
            .ok(200, "The flow run", Json("FlowRun"))
            .errors(&[400, 404]),
        // ---- topics
        Op::new(Get, "/admin/v1/topics", "listTopics", "List topics")
            .paged()
            .ok(200, "A page of topics", Json("TopicList")),
        Op::new(Put, "/admin/v1/topics/{key}", "putTopic", "Create or update a topic")
            .param(topic_key_param())
            .body("TopicInput", false)
            .ok(201, "Created", Json("Topic"))
            .ok(200, "Updated", Json("Topic")),
        Op::new(Get, "/admin/v1/topics/{key}", "getTopic", "A topic")
            .param(topic_key_param())
            .ok(200, "The topic", Json("Topic"))
            .errors(&[404]),
        Op::new(Delete, "/admin/v1/topics/{key}", "deleteTopic", "Delete a topic")
            .param(topic_key_param())
            .ok(204, "Deleted", Empty)
            .errors(&[404]),
        Op::new(
            Get,
            "/admin/v1/topics/{key}/subscriptions",
            "listTopicSubscriptions",
            "A topic's subscriptions",
        )
        .param(topic_key_param())
        .paged()
        .ok(200, "A page of subscriptions", Json("SubscriptionList"))
        .errors(&[404]),
        Op::new(
            Post,
            "/admin/v1/topics/{key}/subscriptions",
            "subscribeUser",
            "Subscribe a user to a topic",
        )
        .param(topic_key_param())
        .body("SubscriptionRequest", true)
        .idempotent()
        .ok(201, "Subscribed (one user)", Json("Subscription"))
        .ok(
            200,
            "Up to 1,000 users subscribed in one durable commit",
            Json("BulkSubscriptionResult"),
        )
        .errors(&[404, 409]),
        Op::new(
            Delete,
            "/admin/v1/topics/{key}/subscriptions/{external_id}",
            "unsubscribeUser",
            "Unsubscribe a user from a topic",
        )
        .param(topic_key_param())
        .param(external_id_param())
        .ok(204, "Unsubscribed", Empty)
        .errors(&[404]),
        // ---- notifications and deliveries
        Op::new(Get, "/admin/v1/notifications", "listNotifications", "List notifications")
            .params(notification_filters())
            .paged()
            .ok(200, "A page of notifications", Json("NotificationList")),
        Op::new(
            Get,
            "/admin/notifications",
            "listNotificationsAlias",
            "List notifications (alias of /admin/v1/notifications)",
        )
        .params(notification_filters())
        .paged()
        .ok(200, "A page of notifications", Json("NotificationList")),
        Op::new(Get, "/admin/v1/notifications/{id}", "getNotification", "A notification")
            .param(uuid_param("id", "The notification's id."))
            .ok(200, "The notification", Json("Notification"))
            .errors(&[400, 404]),
        Op::new(
            Get,
            "/admin/v1/notifications/{id}/trace",
            "getNotificationTrace",
            "Every decision the engine took for a notification, in order",
        )
        .param(uuid_param("id", "The notification's id."))
        .ok(200, "The trace", Json("NotificationTrace"))
        .errors(&[400, 404]),
        Op::new(Get, "/admin/v1/deliveries", "listDeliveries", "List deliveries")
            .params(delivery_filters())
            .paged()
            .ok(200, "A page of deliveries", Json("DeliveryList")),
        Op::new(Get, "/admin/v1/deliveries/{id}", "getDelivery", "A delivery")
            .param(uuid_param("id", "The delivery's id."))
            .ok(200, "The delivery", Json("Delivery"))
            .errors(&[400, 404]),
        // ---- event endpoints
        Op::new(
            Post,
            "/admin/v1/webhook_endpoints",
            "createWebhookEndpoint",
            "Create an event endpoint (its signing secret is shown this once)",
        )
        .body("WebhookEndpointInput", true)
        .ok(201, "Created, with its secret", Json("WebhookEndpointWithSecret")),
        Op::new(
            Get,
            "/admin/v1/webhook_endpoints",
            "listWebhookEndpoints",
            "List event endpoints",
        )
        .paged()
        .ok(200, "A page of event endpoints", Json("WebhookEndpointList")),
        Op::new(
            Get,
            "/admin/v1/webhook_endpoints/{id}",
            "getWebhookEndpoint",
            "An event endpoint",
        )
        .param(uuid_param("id", "The endpoint's id."))
        .ok(200, "The endpoint", Json("WebhookEndpoint"))
        .errors(&[400, 404]),
        Op::new(
            Put,
            "/admin/v1/webhook_endpoints/{id}",
            "updateWebhookEndpoint",
            "Change an event endpoint (enabling it clears disabled_reason)",
        )
        .param(uuid_param("id", "The endpoint's id."))
        .body("WebhookEndpointUpdate", true)
        .ok(200, "The endpoint", Json("WebhookEndpoint"))
        .errors(&[404]),
        Op::new(
            Delete,
            "/admin/v1/webhook_endpoints/{id}",
            "deleteWebhookEndpoint",
            "Delete an event endpoint with its pending events and attempts",
        )
        .param(uuid_param("id", "The endpoint's id."))
        .ok(204, "Deleted", Empty)
        .errors(&[400, 404]),
        Op::new(
            Post,
            "/admin/v1/webhook_endpoints/{id}/rotate_secret",
            "rotateWebhookEndpointSecret",
            "A new signing secret (shown this once); the old one signs too for 24 h",
        )
        .param(uuid_param("id", "The endpoint's id."))
        .ok(200, "The endpoint with its new secret", Json("WebhookEndpointWithSecret"))
        .errors(&[400, 404]),
        Op::new(
            Get,
            "/admin/v1/webhook_endpoints/{id}/attempts",
            "listWebhookEndpointAttempts",
            "An event endpoint's delivery attempts, newest first",
        )
        .param(uuid_param("id", "The endpoint's id."))
        .paged()
        .ok(200, "A page of attempts", Json("EventAttemptList"))
        .errors(&[404]),
        Op::new(
            Post,
            "/admin/v1/webhook_endpoints/{id}/replay",
            "replayWebhookEndpoint",
            "Send again the events written since a time",
        )
        .param(uuid_param("id", "The endpoint's id."))
        .body("ReplayInput", true)
        .ok(200, "How many events were queued", Json("ReplayResult"))
        .errors(&[404]),
        // ---- User API
        Op::new(Get, "/user/v1/me", "getMe", "The calling user")
            .ok(200, "The user", Json("User")),
        Op::new(Put, "/user/v1/me", "updateMe", "Update one's own profile")
            .body("UserInput", true)
            .ok(200, "The user", Json("User")),
        Op::new(Get, "/user/v1/preferences", "getMyPreferences", "One's preferences")
            .ok(200, "The preferences", Json("Preferences")),
        Op::new(Put, "/user/v1/preferences", "putMyPreferences", "Update one's preferences")
            .body("PreferencesInput", true)
            .ok(200, "The full preferences", Json("Preferences")),
        Op::new(Get, "/user/v1/feed", "getFeed", "One's feed")
            .param(feed_status_param())
            .paged()
            .ok(200, "A page of feed entries", Json("FeedPage")),
        Op::new(Post, "/user/v1/feed/seen_all", "seenAll", "Mark every entry seen")
            .ok(200, "How many entries changed", Json("MarkAllResult")),
        Op::new(Post, "/user/v1/feed/read_all", "readAll", "Mark every entry read")
            .ok(200, "How many entries changed", Json("MarkAllResult")),
        Op::new(
            Get,
            "/user/v1/feed/live",
            "liveFeed",
            "Live feed over a WebSocket (see the README, \"Live feed\")",
        )
        .param(query_param(
            "api_key",
            str_schema().into(),
            "The public key, for browsers that cannot set headers (the user key then comes in the first frame).",
        ))
        .param(query_param(
            "since_seq",
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(0))
                .into(),
            "Resume after this event sequence number.",
        ))
        .ok(101, "Switching to the WebSocket protocol", Empty)
        // 503: too many sockets still authenticating (`--max-pending-sockets`);
        // 429, as on every authenticated route, also for an address or a
        // project over its share of them (`--max-pending-per-*`)
        .errors(&[400, 503]),
        Op::new(Get, "/user/v1/feed/{id}", "getFeedEntry", "A feed entry")
            .param(uuid_param("id", "The entry's (delivery) id."))
            .ok(200, "The entry", Json("FeedEntry"))
            .errors(&[400, 404]),
        Op::new(Patch, "/user/v1/feed/{id}", "patchFeedEntry", "Change a feed entry's state")
            .param(uuid_param("id", "The entry's (delivery) id."))
            .body("FeedEntryPatch", true)
            .ok(200, "The entry", Json("FeedEntry"))
            .errors(&[404, 409]),
        Op::new(
            Post,
            "/user/v1/feed/{id}/{action}",
            "feedEntryAction",
            "Shortcut: mark an entry seen, read, clicked, archived or unarchived",
        )
        .param(uuid_param("id", "The entry's (delivery) id."))
        .param(path_param(
            "action",
            enum_schema(FEED_ACTIONS),
            "What to do with the entry.",
        ))
        .ok(200, "The entry", Json("FeedEntry"))
        .errors(&[400, 404, 409]),
        Op::new(
            Get,
            "/user/v1/channels/{channel_id}",
            "getMyChannel",
            "A channel as a user sees it (e.g. the web push public key)",
        )
        .param(uuid_param("channel_id", "The channel's id."))
        .ok(200, "The channel", Json("UserChannel"))
        .errors(&[400, 404]),
        Op::new(
            Get,
            "/user/v1/channels/{channel_id}/subscriptions",
            "listPushSubscriptions",
            "One's push subscriptions on a channel",
        )
        .param(uuid_param("channel_id", "The channel's id."))
        .ok(200, "The subscriptions", Json("PushSubscriptionList"))
        .errors(&[400, 404, 422]),
        Op::new(
            Post,
            "/user/v1/channels/{channel_id}/subscriptions",
            "addPushSubscription",
            "Register a device or browser push subscription",
        )
        .param(uuid_param("channel_id", "The channel's id."))
        .body("PushSubscriptionInput", true)
        .ok(201, "Registered", Json("PushSubscription"))
        .ok(200, "Already registered", Json("PushSubscription"))
        .errors(&[404, 409]),
        Op::new(
            Delete,
            "/user/v1/channels/{channel_id}/subscriptions",
            "removePushSubscription",
            "Remove a push subscription",
        )
        .param(uuid_param("channel_id", "The channel's id."))
        .body("PushSubscriptionDelete", true)
        .ok(204, "Removed", Empty)
        .errors(&[404]),
        Op::new(Get, "/user/v1/subscriptions", "listMySubscriptions", "One's topic subscriptions")
            .paged()
            .ok(200, "A page of subscriptions", Json("SubscriptionList")),
        Op::new(
            Post,
            "/user/v1/topics/{key}/subscriptions",
            "subscribeMe",
            "Subscribe to a topic",
        )
        .param(topic_key_param())
        .body("TopicSubscribeInput", false)
        .idempotent()
        .ok(201, "Subscribed", Json("Subscription"))
        .errors(&[404, 409]),
        Op::new(
            Delete,
            "/user/v1/topics/{key}/subscriptions",
            "unsubscribeMe",
            "Unsubscribe from a topic",
        )
        .param(topic_key_param())
        .ok(204, "Unsubscribed", Empty)
        .errors(&[404]),
    ]
}

fn feed_status_param() -> utoipa::openapi::path::Parameter {
    query_param(
        "status",
        enum_schema(&["all", "unread", "unseen", "read", "archived"]),
        "`all` (default: every entry not archived), `unread`, `unseen`, `read` or `archived`.",
    )
}

fn notification_filters() -> Vec<utoipa::openapi::path::Parameter> {
    let mut v = vec![
        query_param(
            "status",
            enum_schema(&["pending", "processed"]),
            "Notification status.",
        ),
        query_param("topic", str_schema().into(), "Topic key."),
        query_param(
            "flow_id",
            str_schema().into(),
            "The flow's id or handle (as in the paths); an unknown one matches nothing.",
        ),
        query_param("flow_run_id", uuid_schema(), "Flow run id."),
        query_param(
            "recipient",
            str_schema().into(),
            "The recipient's external id.",
        ),
    ];
    v.extend(created_filters());
    v
}

fn delivery_filters() -> Vec<utoipa::openapi::path::Parameter> {
    let mut v = vec![
        query_param(
            "status",
            enum_schema(&["pending", "sent", "failed", "skipped"]),
            "Delivery status.",
        ),
        query_param(
            "channel_type",
            enum_schema(&herald_actors::model::ChannelType::ALL.map(|t| t.as_str())),
            "Channel type.",
        ),
        query_param("channel_id", uuid_schema(), "Channel id."),
        query_param("notification_id", uuid_schema(), "Notification id."),
        query_param(
            "recipient",
            str_schema().into(),
            "The recipient's external id.",
        ),
    ];
    v.extend(created_filters());
    v
}

fn reason_phrase(code: u16) -> &'static str {
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

fn request_id_header() -> utoipa::openapi::header::Header {
    HeaderBuilder::new()
        .schema(Some(str_schema()))
        .description(Some(
            "The request id: the request's own x-request-id when valid, else a generated one.",
        ))
        .build()
}

fn error_response(code: u16, description: &str) -> utoipa::openapi::response::Response {
    let mut b = ResponseBuilder::new()
        .description(description)
        .header("x-request-id", request_id_header())
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("Error")))
                .build(),
        );
    if code == 429 {
        b = b.header(
            "Retry-After",
            HeaderBuilder::new()
                .schema(Some(
                    ObjectBuilder::new()
                        .schema_type(Type::Integer)
                        .minimum(Some(1)),
                ))
                .description(Some("Seconds to wait (at least 1)."))
                .build(),
        );
    }
    b.build()
}

fn build_operation(op: &Op) -> utoipa::openapi::path::Operation {
    let mut b = OperationBuilder::new()
        .operation_id(Some(op.id))
        .summary(Some(op.summary))
        .tag(op.tag);
    for p in &op.params {
        b = b.parameter(p.clone());
    }
    if op.idempotent {
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
    if let Some((schema, required)) = op.body {
        b = b.request_body(Some(
            RequestBodyBuilder::new()
                .required(Some(if required {
                    Required::True
                } else {
                    Required::False
                }))
                .content(
                    "application/json",
                    ContentBuilder::new()
                        .schema(Some(Ref::from_schema_name(schema)))
                        .build(),
                )
                .build(),
        ));
    }
    let mut responses = ResponsesBuilder::new();
    for (status, description, body) in &op.oks {
        let mut r = ResponseBuilder::new()
            .description(*description)
            .header("x-request-id", request_id_header());
        match body {
            Body::Json(schema) => {
                r = r.content(
                    "application/json",
                    ContentBuilder::new()
                        .schema(Some(Ref::from_schema_name(*schema)))
                        .build(),
                )
            }
            Body::Text(ct, ty) => {
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
            Body::Empty => {}
        }
        responses = responses.response(status.to_string(), r.build());
    }
    let mut errors: Vec<u16> = op.errors.clone();
    if op.auth != Auth::None {
        // 503: the store cannot write for now (e.g. a full disk), retry later
        errors.extend([401, 429, 500, 503]);
    }
    if op.body.is_some() {
        // 400: malformed JSON or not an object; 422: validation, or a body over 1 MiB.
        errors.extend([400, 422]);
    }
    if op.idempotent {
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
    match op.auth {
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

fn list_schema(item: &str) -> Schema {
    ObjectBuilder::new()
        .property(
            "items",
            ArrayBuilder::new().items(Ref::from_schema_name(item)),
        )
        .required("items")
        .property("page", Ref::from_schema_name("Page"))
        .required("page")
        .into()
}

fn components() -> utoipa::openapi::schema::Components {
    let mut b = schemas!(
        ComponentsBuilder::new(),
        ErrorResponse,
        ErrorBody,
        ErrorCode,
        TimeZone,
        ExternalId,
        Page,
        ChannelType,
        Health,
        Project,
        ProjectUpdate,
        ClockKind,
        ClockAdvance,
        CancelInput,
        CancelResult,
        Retention,
        RetentionInput,
        Usage,
        Erasure,
        SigningKeyInput,
        SigningKeyPair,
        User,
        UserInput,
        RecipientInput,
        BulkUsersInput,
        BulkStatus,
        BulkUserResult,
        BulkUsersResult,
        BulkSubscriptionInput,
        BulkDeleteInput,
        BulkDeleteResult,
        BulkErasure,
        SubscriptionRequest,
        BulkSubscriptionResult,
        ChannelTypeFlags,
        ChannelTypeFlagsInput,
        FlowPreferences,
        Preferences,
        FlowPreferencesInput,
        PreferencesInput,
        ChannelStatus,
        UserChannel,
        PushSubscription,
        PushKeys,
        PushSubscriptionInput,
        PushSubscriptionDelete,
        FlowStatus,
        Template,
        ChannelStepType,
        DelayStepType,
        ChannelStep,
        DelayStep,
        ThrottleStepType,
        ThrottleStep,
        BatchStepType,
        BatchWindowType,
        BatchStep,
        Step,
        StepInput,
        Flow,
        FlowInput,
        FlowUpdate,
        RecipientSpec,
        RunInput,
        PendingStatus,
        ProcessingStatus,
        FlowRunAccepted,
        FlowRun,
        Topic,
        TopicInput,
        Subscription,
        SubscriptionInput,
        DeliveryStatus,
        DeliveryError,
        DeliveryData,
        DeliveryView,
        Notification,
        FeedEntry<'static>,
        FeedMeta,
        FeedPage<'static>,
        FeedEntryPatch,
        MarkAllResult,
        WebhookEndpoint,
        WebhookEndpointWithSecret,
        WebhookEndpointInput,
        WebhookEndpointUpdate,
        EventAttemptView,
        ReplayInput,
        ReplayResult,
        TraceEntryView,
        NotificationTrace,
    );
    b = b.schema("ChannelStepInput", flows::channel_step_input());
    b = b.schema(
        "TopicSubscribeInput",
        ObjectBuilder::new().description(Some(
            "No fields needed (an optional idempotency_key is accepted).",
        )),
    );
    for (name, item) in LISTS {
        b = b.schema(*name, list_schema(item));
    }
    for (code, description) in [
        (400, "Malformed request: bad JSON, query or path parameter (`details.param`, `details.reason`)"),
        (401, "Missing or invalid credentials (`details.auth`, `details.reason`)"),
        (404, "No such resource (`details.resource`, `details.id`) or route"),
        (409, "The resource's state forbids this (`details.reason`), or an idempotency key was reused with another payload"),
        (422, "The body failed validation (`details.fields`: `{field, reason, message}`)"),
        (429, "Rate limited: retry after `Retry-After` seconds"),
        (500, "Internal error (details are logged, not returned)"),
        (503, "Unavailable for now (not ready, or the store cannot write): retry after `Retry-After` seconds"),
    ] {
        b = b.response(reason_phrase(code), error_response(code, description));
    }
    let key = |name: &str, description: &str| {
        SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
            name,
            description,
        )))
    };
    b.security_scheme(
        "api_key",
        key(
            "x-service-api-key",
            "The project's public key (pk_…): every Admin and User API request.",
        ),
    )
    .security_scheme(
        "secret_key",
        key(
            "x-service-secret-key",
            "The project's secret key (sk_…): the Admin API.",
        ),
    )
    .security_scheme(
        "user_key",
        key(
            "x-service-user-key",
            "An RS256 JWT whose `sub` is the user's external id, signed with the project's signing key: the User API.",
        ),
    )
    .security_scheme(
        "user_id",
        key(
            "x-service-user-id",
            "The user's external id: the User API while the project's security mode is off (development).",
        ),
    )
    .build()
}

/// The document as utoipa builds it.
pub fn document() -> OpenApi {
    let mut paths = PathsBuilder::new();
    let mut items: Vec<(&'static str, PathItem)> = vec![];
    for op in operations() {
        let operation = build_operation(&op);
        match items.iter_mut().find(|(p, _)| *p == op.path) {
            Some((_, item)) => item.merge_operations(PathItem::new(op.method, operation)),
            None => items.push((op.path, PathItem::new(op.method, operation))),
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
        .components(Some(components()))
        .tags(Some(
            tags.iter()
                .map(|(n, d)| TagBuilder::new().name(*n).description(Some(*d)).build()),
        ))
        .build()
}

/// Marks every property of the always-present response schemas as required.
fn require_present(doc: &mut Value) {
    let Some(schemas) = doc
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    for name in ALWAYS_PRESENT {
        let Some(Value::Object(s)) = schemas.get_mut(*name) else {
            continue;
        };
        let Some(Value::Object(props)) = s.get("properties") else {
            continue;
        };
        let required: Vec<Value> = props
            .keys()
            .filter(|k| !SOMETIMES_ABSENT.contains(&(*name, k.as_str())))
            .map(|k| Value::String(k.clone()))
            .collect();
        s.insert("required".into(), Value::Array(required));
    }
}

/// The document as JSON, built once.
pub fn json() -> &'static str {
    static DOC: OnceLock<String> = OnceLock::new();
    DOC.get_or_init(|| {
        let mut v = serde_json::to_value(document()).expect("the OpenAPI document serialises");
        require_present(&mut v);
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
    })
}

/// `(method, path)` of every documented operation (for tests and tooling).
pub fn operation_keys() -> Vec<(String, String)> {
    operations()
        .iter()
        .map(|op| {
            let m = match op.method {
                HttpMethod::Get => "GET",
                HttpMethod::Post => "POST",
                HttpMethod::Put => "PUT",
                HttpMethod::Delete => "DELETE",
                HttpMethod::Patch => "PATCH",
                _ => "OTHER",
            };
            (m.to_string(), op.path.to_string())
        })
        .collect()
}
