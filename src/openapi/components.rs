//! The document's components: every named schema (derived from the body
//! types the handlers read and write, `crate::bodies`, and the engine's
//! `model` for the bodies it serialises itself), the list schemas, the shared
//! error responses (every non-2xx is the error object) and the security
//! schemes.

use super::operation::{reason_phrase, request_id_header};
use crate::bodies::audit_log::AuditEntry;
use crate::bodies::bulk::{
    BulkDeleteInput, BulkDeleteResult, BulkErasure, BulkStatus, BulkSubscriptionInput,
    BulkSubscriptionResult, BulkUserResult, BulkUsersInput, BulkUsersResult, SubscriptionRequest,
};
use crate::bodies::channels::ChannelTestInput;
use crate::bodies::content::{
    Layout, LayoutInput, LayoutList, Partial, PartialInput, PartialList, Translation,
    TranslationInput, TranslationList, TranslationSummary,
};
use crate::bodies::flows::{
    self, ChannelStep, ChannelStepType, DelayStep, DelayStepType, Flow, FlowInput, FlowStatus,
    FlowUpdate, RecipientSpec, RouteChannel, RouteStep, RouteStepType, RouteSuccessType, RunInput,
    Step, StepInput, Template, TemplateAction, ThrottleStep, ThrottleStepType,
};
use crate::bodies::flows::{BatchStep, BatchStepType, BatchWindowType};
use crate::bodies::flows::{
    FlowPreview, PreviewBody, StepPreview, StepPreviewError, UnsavedFlowPreview,
};
use crate::bodies::hooks::CallbackResult;
use crate::bodies::notifications::{FlowRun, Notification, ProcessingStatus};
use crate::bodies::preference_link::{
    PreferenceForm, PreferenceLink, PreferenceLinkInput, UnsubscribeForm,
};
use crate::bodies::preferences::{
    Category, CategoryInput, CategoryList, CategoryPreferences, ChannelTypeFlags,
    ChannelTypeFlagsInput, ChannelTypeSources, FlowPreferences, FlowPreferencesInput,
    PreferenceSource, Preferences, PreferencesExplain, PreferencesInput, SettingSources,
};
use crate::bodies::suppressions::{
    ManualReason, Suppression, SuppressionChannelType, SuppressionInput,
};
use crate::bodies::user_api::{
    FeedEntryInteract, FeedEntryPatch, FeedPage, MarkAllResult, PushKeys, PushSubscription,
    PushSubscriptionDelete, PushSubscriptionInput, UserChannel,
};
use crate::bodies::users::Erasure;
use crate::bodies::webhook_endpoints::{
    EventAttemptView, NotificationTrace, ReplayInput, ReplayResult, TraceEntryView,
    WebhookEndpoint, WebhookEndpointInput, WebhookEndpointUpdate, WebhookEndpointWithSecret,
};
use crate::bodies::workflow::{CancelInput, CancelResult, ClockAdvance};
use crate::bodies::{
    Branding, ClockKind, Health, Page, Project, ProjectUpdate, Retention, RetentionInput,
    SigningKeyInput, SigningKeyPair, Subscription, SubscriptionInput, Topic, TopicInput, Usage,
};
use crate::errors::{ErrorBody, ErrorCode, ErrorResponse};
use herald_engine::model::{
    BounceKind, ChannelStatus, ChannelType, DeliveryError, DeliveryStatus, RenderedAction,
    SuppressionReason,
};
use herald_engine::views::{
    CategoryMeta, ChannelTestAccepted, DeliveryData, DeliveryView, FeedEntry, FeedMeta,
    FlowRunAccepted, PendingStatus, UserView,
};
use serde_json::Value;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::schema::{ArrayBuilder, ComponentsBuilder, ObjectBuilder, Schema, Type};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::openapi::{ContentBuilder, Ref};
use utoipa::{PartialSchema, ToSchema};

use crate::bodies::users::{ExternalId, RecipientInput, TimeZone, UserInput};

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
    ("SuppressionList", "Suppression"),
    ("AuditEntryList", "AuditEntry"),
];

/// Response schemas whose every property is always present (null when empty).
const ALWAYS_PRESENT: &[&str] = &[
    "Error",
    "FlowPreview",
    "StepPreviewError",
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
    "CategoryPreferences",
    "Category",
    "CategoryList",
    "Partial",
    "PartialList",
    "Layout",
    "LayoutList",
    "Translation",
    "TranslationSummary",
    "TranslationList",
    "PreferencesExplain",
    "SettingSources",
    "ChannelTypeSources",
    "UserChannel",
    "PushSubscription",
    "ChannelStep",
    "DelayStep",
    "Flow",
    "FlowRunAccepted",
    "ChannelTestAccepted",
    "FlowRun",
    "Topic",
    "Subscription",
    "DeliveryError",
    "Delivery",
    "Notification",
    "FeedEntry",
    "FeedMeta",
    "CategoryMeta",
    "FeedPage",
    "MarkAllResult",
    "CancelResult",
    "WebhookEndpoint",
    "EventAttemptView",
    "TraceEntryView",
    "NotificationTrace",
    "Suppression",
    "AuditEntry",
];

/// Optional properties of `ALWAYS_PRESENT` schemas (left out when empty).
const SOMETIMES_ABSENT: &[(&str, &str)] = &[
    ("UserChannel", "vapid_public_key"),
    ("ChannelStep", "channel_id"),
    ("ChannelStep", "if"),
    ("ChannelStep", "send_window"),
    ("ChannelStep", "layout"),
    ("DelayStep", "if"),
    ("FlowPreferences", "critical"),
    ("Preferences", "explain"),
    ("Notification", "batched_into"),
    ("Notification", "test_channel_id"),
    ("Delivery", "bounce"),
    ("FeedMeta", "by_category"),
];

macro_rules! schemas {
    ($b:expr, $($t:ty),* $(,)?) => {{
        let mut b = $b;
        $( b = b.schema(<$t as ToSchema>::name(), <$t as PartialSchema>::schema()); )*
        b
    }};
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

pub fn components() -> utoipa::openapi::schema::Components {
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
        Branding,
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
        UserView,
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
        Category,
        CategoryInput,
        CategoryList,
        Partial,
        PartialInput,
        PartialList,
        Layout,
        LayoutInput,
        LayoutList,
        Translation,
        TranslationInput,
        TranslationSummary,
        TranslationList,
        CategoryPreferences,
        PreferenceSource,
        ChannelTypeSources,
        SettingSources,
        PreferencesExplain,
        PreferenceLinkInput,
        PreferenceLink,
        crate::bodies::ops::RotateSecret,
        crate::bodies::ops::RotatedSecret,
        PreferenceForm,
        UnsubscribeForm,
        CallbackResult,
        ChannelStatus,
        UserChannel,
        PushSubscription,
        PushKeys,
        PushSubscriptionInput,
        PushSubscriptionDelete,
        FlowStatus,
        Template,
        TemplateAction,
        RenderedAction,
        ChannelStepType,
        DelayStepType,
        ChannelStep,
        DelayStep,
        ThrottleStepType,
        ThrottleStep,
        BatchStepType,
        BatchWindowType,
        BatchStep,
        RouteStepType,
        RouteSuccessType,
        RouteChannel,
        RouteStep,
        Step,
        StepInput,
        Flow,
        FlowInput,
        FlowUpdate,
        RecipientSpec,
        RunInput,
        PreviewBody,
        UnsavedFlowPreview,
        FlowPreview,
        StepPreview,
        StepPreviewError,
        PendingStatus,
        ProcessingStatus,
        FlowRunAccepted,
        ChannelTestAccepted,
        ChannelTestInput,
        FlowRun,
        Topic,
        TopicInput,
        Subscription,
        SubscriptionInput,
        Suppression,
        AuditEntry,
        SuppressionInput,
        SuppressionChannelType,
        ManualReason,
        SuppressionReason,
        DeliveryStatus,
        BounceKind,
        DeliveryError,
        DeliveryData,
        DeliveryView,
        Notification,
        FeedEntry<'static>,
        FeedMeta,
        CategoryMeta,
        FeedPage<'static>,
        FeedEntryPatch,
        FeedEntryInteract,
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

/// Marks every property of the always-present response schemas as required.
pub fn require_present(doc: &mut Value) {
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
