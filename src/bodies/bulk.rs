//! The bodies of the bulk endpoints (users: bulk upsert and bulk delete;
//! topics: bulk subscription), up to `MAX_BULK` items per request. A bulk
//! upsert checks each item on its own, so one bad item is refused with the
//! contract's error object at its place in the results while the good ones are
//! stored; the lists of external ids are checked as a whole (docs/API.md §6, §10).

use super::users::RecipientInput;
use crate::errors::{current_request_id, error_object, ErrorBody};
use crate::extract::{Given, Obj};
use herald_engine::model::{User, UserPatch};
use herald_engine::views::UserView;
use herald_engine::{Error, Validator};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// At most this many items per bulk request.
pub const MAX_BULK: usize = 1000;

/// Creates or updates many users: each item is `external_id` plus any user fields.
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"users": [{"external_id": "ada", "email": "ada@example.com"}, {"external_id": "grace", "first_name": "Grace"}]}))]
pub struct BulkUsersInput {
    /// At most 1,000, applied in order (a later item of the same external id
    /// patches what the earlier one left).
    #[serde(default)]
    #[schema(value_type = Vec<RecipientInput>, required = true, max_items = 1000)]
    pub users: Given<Vec<Value>>,
    /// Alternative to the `Idempotency-Key` header.
    // Read with the header by `idempotency::prepare`, before the body is typed.
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 255)]
    pub idempotency_key: Given<String>,
}

/// One item of a bulk request as checked: the user's external id and change, or
/// its 422 (field paths `users.{i}.{field}`).
pub type BulkItem = Result<(String, UserPatch), Error>;

/// The `users` array: a body-level 422 when it is missing, not an array or too long.
fn items<'a>(given: &'a Given<Vec<Value>>, field: &str) -> herald_engine::Result<&'a [Value]> {
    let mut v = Validator::new();
    match given {
        Given::Value(items) if items.len() > MAX_BULK => v.push(
            field,
            "length",
            format!("at most {MAX_BULK} items per request"),
        ),
        Given::Value(items) => return Ok(items),
        Given::Absent | Given::Null => v.push(field, "required", "is required"),
        Given::Wrong(_) => v.push(field, "format", "must be an array"),
    }
    v.finish()?;
    Ok(&[])
}

/// A list of external ids, each problem at `{field}.{i}`.
fn external_ids(given: &Given<Vec<Value>>, field: &str) -> herald_engine::Result<Vec<String>> {
    let mut v = Validator::new();
    let mut exts = vec![];
    for (i, item) in items(given, field)?.iter().enumerate() {
        let p = format!("{field}.{i}");
        match item.as_str() {
            Some(s) if herald_engine::validate::external_id(s, &p, &mut v) => {
                exts.push(s.to_string())
            }
            Some(_) => {}
            None => v.push(p, "format", "must be an external_id"),
        }
    }
    v.finish()?;
    Ok(exts)
}

impl BulkUsersInput {
    /// Every item checked on its own; `Err` only for the body as a whole.
    pub fn validate(&self) -> herald_engine::Result<Vec<BulkItem>> {
        Ok(items(&self.users, "users")?
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let p = format!("users.{i}");
                let mut v = Validator::new();
                let checked = match Given::<Obj<RecipientInput>>::of(Some(item)) {
                    Given::Value(Obj(r)) => r.validate(&p, &mut v),
                    _ => {
                        v.push(p, "format", "must be an object with external_id");
                        None
                    }
                };
                v.finish()?;
                checked.ok_or_else(|| Error::internal("a valid bulk item without external_id"))
            })
            .collect())
    }
}

/// What happened to one item of a bulk upsert.
#[derive(Serialize, ToSchema, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub enum BulkStatus {
    Created,
    Updated,
}

/// One item's result, in the request's order: `status` and `user` when it was
/// stored, `error` (the contract's error object, a 422) when it was refused.
#[derive(Serialize, ToSchema)]
pub struct BulkUserResult {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorBody>,
    /// The item's external id; null when it gave none usable.
    #[schema(required = true)]
    pub external_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<BulkStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<UserView>,
}

impl BulkUserResult {
    pub fn stored(user: User, created: bool) -> Self {
        BulkUserResult {
            error: None,
            external_id: Some(user.external_id.clone()),
            status: Some(if created {
                BulkStatus::Created
            } else {
                BulkStatus::Updated
            }),
            user: Some(UserView::from(&user)),
        }
    }

    /// A refused item; its external id when the item gave a string.
    pub fn refused(item: &Value, e: &Error) -> Self {
        BulkUserResult {
            error: Some(error_object(e, current_request_id().as_deref())),
            external_id: item
                .get("external_id")
                .and_then(Value::as_str)
                .map(str::to_string),
            status: None,
            user: None,
        }
    }
}

/// The answer of `POST /admin/v1/users/bulk`.
#[derive(Serialize, ToSchema)]
pub struct BulkUsersResult {
    pub results: Vec<BulkUserResult>,
}

// ================================================================ topic subscriptions

/// Subscribes many users to a topic, by external id.
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"users": ["ada", "grace"]}))]
pub struct BulkSubscriptionInput {
    /// At most 1,000 external ids of existing users.
    #[serde(default)]
    #[schema(value_type = Vec<super::users::ExternalId>, required = true, max_items = 1000)]
    pub users: Given<Vec<Value>>,
    /// Alternative to the `Idempotency-Key` header.
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 255)]
    pub idempotency_key: Given<String>,
}

impl BulkSubscriptionInput {
    /// Whether a subscription body is this form (it has `users`) rather than
    /// the single `{external_id}`.
    pub fn is_bulk(body: &serde_json::Map<String, Value>) -> bool {
        body.contains_key("users")
    }

    /// The external ids, each problem at `users.{i}`.
    pub fn validate(&self) -> herald_engine::Result<Vec<String>> {
        external_ids(&self.users, "users")
    }
}

/// `SubscriptionRequest` in the document: one user (`SubscriptionInput`) or
/// many (`BulkSubscriptionInput`); a body with `users` is the latter.
pub struct SubscriptionRequest;

impl utoipa::PartialSchema for SubscriptionRequest {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::AnyOfBuilder;
        use utoipa::openapi::Ref;
        AnyOfBuilder::new()
            .item(Ref::from_schema_name("SubscriptionInput"))
            .item(Ref::from_schema_name("BulkSubscriptionInput"))
            .into()
    }
}

impl ToSchema for SubscriptionRequest {}

/// The answer of a bulk subscription: the topic (its `subscribers_count` after
/// the change) and how many subscriptions were new; users already subscribed
/// are left as they are.
#[derive(Serialize, ToSchema)]
pub struct BulkSubscriptionResult {
    pub created: usize,
    pub topic: super::Topic,
}

// ================================================================ bulk delete

/// Deletes many users, by external id.
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"external_ids": ["ada", "grace"]}))]
pub struct BulkDeleteInput {
    /// At most 1,000.
    #[serde(default)]
    #[schema(value_type = Vec<super::users::ExternalId>, required = true, max_items = 1000)]
    pub external_ids: Given<Vec<Value>>,
    /// `true`: each user is erased as `DELETE /admin/v1/users/{external_id}?erase=true`
    /// does (their notifications, deliveries, feed entries and events go too);
    /// the answer lists the erasures. Default `false`.
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub erase: Given<bool>,
    /// Alternative to the `Idempotency-Key` header.
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 255)]
    pub idempotency_key: Given<String>,
}

impl BulkDeleteInput {
    /// The external ids, each problem at `external_ids.{i}`, and whether to
    /// erase (`erase`, a boolean when given).
    pub fn validate(&self) -> herald_engine::Result<(Vec<String>, bool)> {
        let mut v = Validator::new();
        let erase = self.erase.flag("erase", &mut v);
        v.finish()?;
        let exts = external_ids(&self.external_ids, "external_ids")?;
        Ok((exts, erase == Some(true)))
    }
}

/// The answer of `POST /admin/v1/users/bulk_delete`: how many users were
/// deleted, and the external ids that named no user (in the request's order).
#[derive(Serialize, ToSchema)]
pub struct BulkDeleteResult {
    pub deleted: usize,
    pub not_found: Vec<String>,
    /// With `erase`: one per user deleted, in the request's order (absent
    /// without `erase`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub erasures: Option<Vec<BulkErasure>>,
}

/// One user's erasure in a bulk delete with `erase`: poll
/// `GET /admin/v1/erasures/{id}` while it is `running`.
#[derive(Serialize, ToSchema)]
pub struct BulkErasure {
    pub external_id: String,
    pub erasure: super::users::Erasure,
}
