//! The parameters that several operations share (ids in paths, paging,
//! filters) and the small schemas they are made of, so each endpoint's
//! declaration names them rather than spelling them again.

use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::openapi::Required;

pub fn str_schema() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String)
}

pub fn uuid_schema() -> Schema {
    str_schema()
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Uuid)))
        .into()
}

pub fn path_param(name: &str, schema: Schema, description: &str) -> Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Path)
        .required(Required::True)
        .description(Some(description))
        .schema(Some(schema))
        .build()
}

pub fn query_param(name: &str, schema: Schema, description: &str) -> Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Query)
        .required(Required::False)
        .description(Some(description))
        .schema(Some(schema))
        .build()
}

pub fn enum_schema(values: &[&str]) -> Schema {
    str_schema().enum_values(Some(values.to_vec())).into()
}

pub fn datetime_schema() -> Schema {
    str_schema()
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
        .into()
}

pub fn external_id_param() -> Parameter {
    path_param(
        "external_id",
        str_schema()
            .min_length(Some(1))
            .max_length(Some(255))
            .into(),
        "The user's external id (URL-encoded).",
    )
}

pub fn uuid_param(name: &str, what: &str) -> Parameter {
    path_param(name, uuid_schema(), what)
}

pub fn topic_key_param() -> Parameter {
    path_param(
        "key",
        str_schema()
            .pattern(Some("^[a-z0-9][a-z0-9_-]{0,63}$"))
            .into(),
        "The topic key.",
    )
}

pub fn category_handle_param() -> Parameter {
    path_param(
        "handle",
        str_schema()
            .pattern(Some("^[a-z0-9][a-z0-9_-]{0,63}$"))
            .into(),
        "The category's handle.",
    )
}

pub fn content_handle_param(what: &'static str) -> Parameter {
    path_param(
        "handle",
        str_schema()
            .pattern(Some("^[a-z0-9][a-z0-9_-]{0,63}$"))
            .into(),
        what,
    )
}

/// A translation catalog's locale.
pub fn locale_param() -> Parameter {
    path_param(
        "locale",
        str_schema()
            .format(Some(SchemaFormat::Custom("bcp47".into())))
            .max_length(Some(64))
            .into(),
        "A BCP 47 language tag, such as fr-CA.",
    )
}

/// `?explain=true` on a preferences answer.
pub fn explain_param() -> Parameter {
    query_param(
        "explain",
        enum_schema(&["true", "false"]),
        "With true, the answer adds `explain`: where each value comes from (`user`, `default`, `critical`).",
    )
}

pub fn flow_param() -> Parameter {
    path_param(
        "id",
        str_schema().min_length(Some(1)).into(),
        "The flow's id (a UUID) or handle.",
    )
}

pub fn paging_params() -> Vec<Parameter> {
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

pub fn created_filters() -> Vec<Parameter> {
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

pub const FEED_ACTIONS: &[&str] = &["seen", "read", "clicked", "archive", "unarchive"];

pub fn feed_status_param() -> Parameter {
    query_param(
        "status",
        enum_schema(&["all", "unread", "unseen", "read", "archived"]),
        "`all` (default: every entry not archived), `unread`, `unseen`, `read` or `archived`.",
    )
}

pub fn feed_flow_param() -> Parameter {
    query_param(
        "flow",
        str_schema().into(),
        "Only the entries of this flow: its id or handle (as in the paths); an unknown one matches nothing.",
    )
}

pub fn feed_category_param() -> Parameter {
    query_param(
        "category",
        str_schema().into(),
        "Only the entries of flows in this preference category (its handle), as the flows name it now; an unknown one matches nothing.",
    )
}

pub fn notification_filters() -> Vec<Parameter> {
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

pub fn delivery_filters() -> Vec<Parameter> {
    let mut v = vec![
        query_param(
            "status",
            enum_schema(&herald_engine::model::DeliveryStatus::ALL.map(|s| s.as_str())),
            "Delivery status.",
        ),
        query_param(
            "channel_type",
            enum_schema(&herald_engine::model::ChannelType::ALL.map(|t| t.as_str())),
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
