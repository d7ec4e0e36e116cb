//! Bodies of the User API (`/user/v1`) beyond the user and preferences: a
//! channel as its user sees it, push subscriptions, the feed page, a feed
//! entry's change and the mark-all result. The feed entry and the feed counts
//! are the engine's (`model::FeedEntry`, `model::FeedMeta`): the live feed
//! sends them too.

use crate::bodies::users::UserInput;
use crate::bodies::Page;
use crate::extract::Given;
use herald_engine::egress::EgressPolicy;
use herald_engine::model::{self, ChannelStatus, ChannelType, Timestamp};
use herald_engine::storage::FeedUpdate;
use herald_engine::views::{FeedEntry, FeedMeta};
use herald_engine::{validate, Validator};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;
use uuid::Uuid;

/// The longest push subscription identifier (a web push endpoint URL).
const MAX_IDENTIFIER: usize = 4096;

/// `PUT /user/v1/me`: the profile fields (`UserInput` in the document); an
/// `external_id` may only restate the caller's.
#[derive(Deserialize, Default)]
pub struct MeInput {
    #[serde(default)]
    pub external_id: Given<Value>,
    #[serde(flatten)]
    pub profile: UserInput,
}

impl MeInput {
    pub fn validate(&self, external_id: &str) -> herald_engine::Result<model::UserPatch> {
        let mut v = Validator::new();
        let restated = match &self.external_id {
            Given::Absent => true,
            Given::Null => false,
            Given::Value(x) | Given::Wrong(x) => x.as_str() == Some(external_id),
        };
        if !restated {
            v.push("external_id", "exclusion", "external_id cannot change");
        }
        let patch = self.profile.validate("", &mut v);
        v.finish()?;
        Ok(patch)
    }
}

/// A channel as a user sees it (no config except a web push public key).
#[derive(Serialize, ToSchema)]
pub struct UserChannel {
    pub id: Uuid,
    pub name: String,
    pub provider: String,
    pub status: ChannelStatus,
    #[serde(rename = "type")]
    pub kind: ChannelType,
    /// Web push channels only.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub vapid_public_key: Option<Value>,
}

impl From<&model::Channel> for UserChannel {
    fn from(c: &model::Channel) -> Self {
        UserChannel {
            id: c.id,
            name: c.name.clone(),
            provider: c.provider.clone(),
            status: c.status(),
            kind: c.channel_type,
            // present (null until configured) on web push channels, absent on others
            vapid_public_key: (c.channel_type == ChannelType::WebPush).then(|| {
                c.config
                    .get("vapid_public_key")
                    .cloned()
                    .unwrap_or(Value::Null)
            }),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct PushSubscription {
    pub channel_id: Uuid,
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Timestamp,
    pub id: Uuid,
    pub identifier: String,
    pub platform: Option<String>,
}

impl From<&model::PushSubscription> for PushSubscription {
    fn from(s: &model::PushSubscription) -> Self {
        PushSubscription {
            channel_id: s.channel_id,
            created_at: s.created_at,
            id: s.id,
            identifier: s.identifier.clone(),
            platform: s.platform.clone(),
        }
    }
}

/// The keys of a web push subscription (the browser's `PushSubscription.getKey`).
// Read to check them; the object is stored as given.
#[derive(Deserialize, ToSchema, Default)]
pub struct PushKeys {
    #[serde(default)]
    #[schema(value_type = String, required = true)]
    pub p256dh: Given<String>,
    #[serde(default)]
    #[schema(value_type = String, required = true)]
    pub auth: Given<String>,
}

/// A device or browser subscription; web push needs the endpoint URL as
/// `identifier` and `keys`.
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"identifier": "device-token-1", "platform": "ios"}))]
pub struct PushSubscriptionInput {
    #[serde(default)]
    #[schema(value_type = String, required = true, min_length = 1, max_length = 4096)]
    pub identifier: Given<String>,
    #[serde(default)]
    #[schema(value_type = Option<PushKeys>)]
    pub keys: Given<Map<String, Value>>,
    #[serde(default)]
    #[schema(value_type = Option<String>, max_length = 64)]
    pub platform: Given<String>,
}

/// A checked push subscription.
pub struct NewPushSubscription {
    pub identifier: String,
    pub keys: Option<Value>,
    pub platform: Option<String>,
}

impl PushSubscriptionInput {
    /// Checks the body for a channel of type `kind`: a web push subscription
    /// is an endpoint URL the egress policy allows, with both keys.
    pub fn validate(
        &self, kind: ChannelType, egress: &EgressPolicy,
    ) -> herald_engine::Result<NewPushSubscription> {
        let mut v = Validator::new();
        let identifier = self
            .identifier
            .required_text("identifier", MAX_IDENTIFIER, &mut v);
        let keys = match &self.keys {
            Given::Absent | Given::Null => None,
            Given::Value(m) => Some(m),
            Given::Wrong(_) => {
                v.push("keys", "format", "must be an object");
                None
            }
        };
        let platform = self.platform.text("platform", 64, &mut v).flatten();
        if kind == ChannelType::WebPush {
            if let Some(id) = &identifier {
                if !validate::is_http_url(id) {
                    v.push(
                        "identifier",
                        "format",
                        "a web push subscription is its push endpoint URL",
                    );
                } else if let Err(refused) = egress.check_url(id) {
                    // Herald would send to it: the server's egress policy decides
                    v.push(
                        "identifier",
                        "exclusion",
                        format!("push endpoint not allowed: {refused}"),
                    );
                }
            }
            match keys {
                Some(k) => {
                    // any object reads as `PushKeys` (its fields are `Given`)
                    let parsed: PushKeys =
                        serde_json::from_value(Value::Object(k.clone())).unwrap_or_default();
                    for (part, given) in [("p256dh", &parsed.p256dh), ("auth", &parsed.auth)] {
                        if !matches!(given, Given::Value(_)) {
                            v.push(
                                format!("keys.{part}"),
                                "required",
                                "is required for web push",
                            );
                        }
                    }
                }
                None => v.push(
                    "keys",
                    "required",
                    "web push subscriptions need keys.p256dh and keys.auth",
                ),
            }
        }
        v.finish()?;
        Ok(NewPushSubscription {
            identifier: identifier.unwrap_or_default(),
            keys: keys.map(|k| Value::Object(k.clone())),
            platform,
        })
    }
}

#[derive(Deserialize, ToSchema, Default)]
pub struct PushSubscriptionDelete {
    #[serde(default)]
    #[schema(value_type = String, required = true, min_length = 1, max_length = 4096)]
    pub identifier: Given<String>,
}

impl PushSubscriptionDelete {
    /// The identifier.
    pub fn validate(&self) -> herald_engine::Result<String> {
        self.identifier
            .only_required_text("identifier", MAX_IDENTIFIER)
    }
}

/// A page of a user's feed with its counts.
// Borrowed from the records: the hottest read is serialised without a JSON
// tree. Fields in name order: the bytes the `json!` form of the object wrote.
#[derive(Serialize, ToSchema)]
pub struct FeedPage<'a> {
    pub items: Vec<FeedEntry<'a>>,
    pub meta: FeedMeta,
    pub page: Page,
}

/// `read` implies `seen`; un-reading or un-seeing is a 409.
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"seen": true, "read": true}))]
pub struct FeedEntryPatch {
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub seen: Given<bool>,
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub read: Given<bool>,
    /// Only `true`.
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub clicked: Given<bool>,
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub archived: Given<bool>,
}

impl FeedEntryPatch {
    pub fn validate(&self) -> herald_engine::Result<FeedUpdate> {
        let mut v = Validator::new();
        let update = FeedUpdate {
            seen: self.seen.flag("seen", &mut v),
            read: self.read.flag("read", &mut v),
            clicked: self.clicked.flag("clicked", &mut v),
            archived: self.archived.flag("archived", &mut v),
            interact: None,
        };
        if update.clicked == Some(false) {
            v.push("clicked", "inclusion", "clicked can only be set to true");
        }
        v.finish()?;
        Ok(update)
    }
}

/// A press of one of the entry's action buttons.
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"action": 0}))]
pub struct FeedEntryInteract {
    /// The action's index in the entry's `data.actions` (from 0).
    #[serde(default)]
    #[schema(value_type = u8, required = true, minimum = 0, maximum = 1)]
    pub action: Given<u64>,
}

impl FeedEntryInteract {
    /// The update pressing the action is; an index past the entry's
    /// actions is the engine's 422 (`rules::feed::update_entry`).
    pub fn validate(&self) -> herald_engine::Result<FeedUpdate> {
        let mut v = Validator::new();
        let action = match &self.action {
            Given::Value(n) => Some(u8::try_from(*n).unwrap_or(u8::MAX)),
            Given::Absent | Given::Null => {
                v.push("action", "required", "is required");
                None
            }
            Given::Wrong(_) => {
                v.push("action", "format", "must be a non-negative integer");
                None
            }
        };
        v.finish()?;
        Ok(FeedUpdate {
            interact: action,
            ..FeedUpdate::default()
        })
    }
}

#[derive(Serialize, ToSchema)]
pub struct MarkAllResult {
    pub meta: FeedMeta,
    #[schema(value_type = u64)]
    pub updated: usize,
}
