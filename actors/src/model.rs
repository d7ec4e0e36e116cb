//! Domain types: what Herald stores and what its APIs speak about.
//!
//! Records are serialised with serde for both the store (MessagePack, see
//! `store::codec`) and the HTTP edge (JSON). Where the two differ (secrets,
//! derived fields), the service's `bodies` build the response; the few response
//! bodies the engine serialises itself (a feed entry in live frames, the feed
//! counts, a delivery in webhooks, a run's 202) are typed here and describe
//! themselves to the OpenAPI document (`ToSchema`).

use chrono::{DateTime, TimeZone, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;
use uuid::Uuid;

/// A UTC instant with millisecond precision, rendered `2026-11-21T10:00:00.123Z`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub DateTime<Utc>);

impl Timestamp {
    pub fn now() -> Self {
        Self::from_millis(Utc::now().timestamp_millis())
    }
    pub fn from_millis(ms: i64) -> Self {
        Timestamp(Utc.timestamp_millis_opt(ms).single().unwrap_or_default())
    }
    pub fn millis(&self) -> i64 {
        self.0.timestamp_millis()
    }
    /// The creation instant encoded in a UUIDv7.
    pub fn of_id(id: &Uuid) -> Self {
        let b = id.as_bytes();
        let ms = u64::from_be_bytes([0, 0, b[0], b[1], b[2], b[3], b[4], b[5]]);
        Self::from_millis(ms as i64)
    }
    pub fn plus_millis(&self, ms: i64) -> Self {
        Self::from_millis(self.millis().saturating_add(ms))
    }
    pub fn to_rfc3339(&self) -> String {
        // `to_rfc3339_opts` writes the fields directly; `format` would parse a
        // format string on every call, which showed in delivery profiles.
        self.0.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    }
}

/// JSON (human-readable formats) gets RFC 3339 text; the store's MessagePack gets
/// the milliseconds as an integer, which is smaller and far cheaper to write and
/// read. Either form is accepted when reading.
impl Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if s.is_human_readable() {
            s.serialize_str(&self.to_rfc3339())
        } else {
            s.serialize_i64(self.millis())
        }
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Timestamp;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an RFC 3339 timestamp or milliseconds since the epoch")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Timestamp, E> {
                DateTime::parse_from_rfc3339(s)
                    .map(|t| Timestamp(t.with_timezone(&Utc)))
                    .map_err(E::custom)
            }
            fn visit_i64<E: serde::de::Error>(self, ms: i64) -> Result<Timestamp, E> {
                Ok(Timestamp::from_millis(ms))
            }
            fn visit_u64<E: serde::de::Error>(self, ms: u64) -> Result<Timestamp, E> {
                Ok(Timestamp::from_millis(ms.min(i64::MAX as u64) as i64))
            }
        }
        if d.is_human_readable() {
            d.deserialize_str(V)
        } else {
            d.deserialize_any(V)
        }
    }
}

/// A new time-ordered id, plus the instant it encodes (so `created_at` and id order agree).
pub fn new_id() -> (Uuid, Timestamp) {
    let id = Uuid::now_v7();
    (id, Timestamp::of_id(&id))
}

/// The last byte of every notification id. A delivery's id is its notification's
/// with that byte replaced by the step index (below `MAX_STEPS`, so never 0xFF):
/// the notification of a delivery is found without an index, and the
/// deliveries sort just before their notification. Notification ids are handed
/// out by `delivery::accept::NotificationIds`.
pub const NOTIFICATION_TAG: u8 = 0xFF;

/// The notification a delivery (or notification) id belongs to.
pub fn notification_of(id: &Uuid) -> Uuid {
    let mut b = *id.as_bytes();
    b[15] = NOTIFICATION_TAG;
    Uuid::from_bytes(b)
}

/// The id of the delivery of step `step` of notification `nid`: the notification's
/// id with its last byte replaced by the step index. A notification's deliveries
/// are then one contiguous key range in step order, found without an index, and
/// still ordered by creation time among all deliveries.
pub fn delivery_id(nid: &Uuid, step: usize) -> Uuid {
    let mut b = *nid.as_bytes();
    b[15] = step.min(255) as u8;
    Uuid::from_bytes(b)
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ChannelType {
    Chat,
    Email,
    InApp,
    MobilePush,
    Sms,
    WebPush,
}

impl ChannelType {
    pub const ALL: [ChannelType; 6] = [
        ChannelType::Chat,
        ChannelType::Email,
        ChannelType::InApp,
        ChannelType::MobilePush,
        ChannelType::Sms,
        ChannelType::WebPush,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            ChannelType::Chat => "chat",
            ChannelType::Email => "email",
            ChannelType::InApp => "in_app",
            ChannelType::MobilePush => "mobile_push",
            ChannelType::Sms => "sms",
            ChannelType::WebPush => "web_push",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }
    pub fn index(self) -> u8 {
        self as u8
    }
    pub fn from_index(i: u8) -> Option<Self> {
        Self::ALL.get(i as usize).copied()
    }
}

// ---------------------------------------------------------------- projects

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Project {
    pub id: Uuid,
    pub name: String,
    pub public_key: String,
    /// SHA-256 of the secret key. Secret keys are 256-bit random strings, so a fast
    /// hash is enough: there is nothing to brute-force that a slow KDF would protect.
    pub secret_hash: Vec<u8>,
    pub security_mode: bool,
    /// PEM of the RSA public key that verifies user JWTs.
    pub signing_key: Option<String>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// SHA-256 of the secret key the last rotation replaced: still accepted
    /// until `previous_secret_expires_at`, so clients can switch over.
    #[serde(default)]
    pub previous_secret_hash: Option<Vec<u8>>,
    #[serde(default)]
    pub previous_secret_expires_at: Option<Timestamp>,
    /// When the secret key was last rotated.
    #[serde(default)]
    pub secret_rotated_at: Option<Timestamp>,
    /// The project's test clock: `Some(instant)` while the project is on a
    /// test clock frozen at that instant (it moves only when advanced, see
    /// `delivery::clock`); `None` on the real clock.
    #[serde(default)]
    pub test_clock: Option<Timestamp>,
    /// The IANA timezone of recipients that have none (send windows); UTC
    /// when unset.
    #[serde(default)]
    pub timezone: Option<String>,
    /// How long its notifications and feeds are kept (unset: the server default).
    #[serde(default)]
    pub retention: crate::retention::ProjectRetention,
    /// Its storage quota in bytes (`quota`), 0 for none; `None` is the
    /// server default (`--project-quota-bytes`).
    #[serde(default)]
    pub quota_bytes: Option<u64>,
}

impl Project {
    /// A new project with its keys (the secret already hashed), on the real
    /// clock, with the server's retention and no signing key.
    pub fn new(
        id: Uuid,
        name: &str,
        public_key: &str,
        secret_hash: Vec<u8>,
        now: Timestamp,
    ) -> Project {
        Project {
            id,
            name: name.to_string(),
            public_key: public_key.to_string(),
            secret_hash,
            security_mode: false,
            signing_key: None,
            created_at: now,
            updated_at: now,
            previous_secret_hash: None,
            previous_secret_expires_at: None,
            secret_rotated_at: None,
            test_clock: None,
            timezone: None,
            retention: Default::default(),
            quota_bytes: None,
        }
    }
}

impl Project {
    /// The previous secret's hash while it is still accepted at `now`.
    pub fn previous_secret_live(&self, now: Timestamp) -> Option<&[u8]> {
        match (&self.previous_secret_hash, self.previous_secret_expires_at) {
            (Some(h), Some(until)) if until.millis() > now.millis() => Some(h.as_slice()),
            _ => None,
        }
    }
}

/// What the operator API and `herald project …` tell about a project: never
/// a secret, nor its hash, except a secret key just made (`secret_key`).
// Fields in name order: the bytes the `json!` form of the object wrote.
#[derive(Debug, Clone, Serialize)]
pub struct OperatorProject {
    pub created_at: Timestamp,
    pub id: Uuid,
    pub name: String,
    /// While the secret key a rotation replaced is still accepted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_secret_expires_at: Option<Timestamp>,
    pub public_key: String,
    /// A secret key just created or rotated: shown this once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret_rotated_at: Option<Timestamp>,
    pub security_mode: bool,
}

impl From<&Project> for OperatorProject {
    fn from(p: &Project) -> Self {
        OperatorProject {
            created_at: p.created_at,
            id: p.id,
            name: p.name.clone(),
            previous_secret_expires_at: p
                .previous_secret_live(Timestamp::now())
                .and(p.previous_secret_expires_at),
            public_key: p.public_key.clone(),
            secret_key: None,
            secret_rotated_at: p.secret_rotated_at,
            security_mode: p.security_mode,
        }
    }
}

impl OperatorProject {
    /// With the secret key just made.
    pub fn with_secret(mut self, secret_key: String) -> Self {
        self.secret_key = Some(secret_key);
        self
    }
}

// ---------------------------------------------------------------- users

// The record is the response body too: the HTTP edge, the live feed's actors
// and the webhooks serialise it as it is.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, ToSchema)]
pub struct User {
    pub id: Uuid,
    pub external_id: String,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub email: Option<String>,
    pub phone: Option<String>,
    pub avatar: Option<String>,
    pub locale: Option<String>,
    pub timezone: Option<String>,
    pub custom_fields: Map<String, Value>,
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Timestamp,
    #[schema(value_type = DateTime<Utc>)]
    pub updated_at: Timestamp,
}

/// A user as a subscription names it: its id and external id, all that a
/// topic subscription stores of it (a bulk subscribe reads no user records).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserRef {
    pub id: Uuid,
    pub external_id: String,
}

impl From<&User> for UserRef {
    fn from(u: &User) -> Self {
        UserRef {
            id: u.id,
            external_id: u.external_id.clone(),
        }
    }
}

/// The profile fields of a user PUT. `None` = not given; `Some(None)` = `null` (clear).
#[derive(Debug, Clone, Default)]
pub struct UserPatch {
    pub first_name: Option<Option<String>>,
    pub last_name: Option<Option<String>>,
    pub email: Option<Option<String>>,
    pub phone: Option<Option<String>>,
    pub avatar: Option<Option<String>>,
    pub locale: Option<Option<String>>,
    pub timezone: Option<Option<String>>,
    pub custom_fields: Option<Option<Map<String, Value>>>,
}

impl UserPatch {
    pub fn is_empty(&self) -> bool {
        self.first_name.is_none()
            && self.last_name.is_none()
            && self.email.is_none()
            && self.phone.is_none()
            && self.avatar.is_none()
            && self.locale.is_none()
            && self.timezone.is_none()
            && self.custom_fields.is_none()
    }

    /// Applies the patch; returns whether anything changed.
    pub fn apply(&self, u: &mut User) -> bool {
        let before = u.clone();
        fn set(dst: &mut Option<String>, v: &Option<Option<String>>) {
            if let Some(v) = v {
                *dst = v.clone();
            }
        }
        set(&mut u.first_name, &self.first_name);
        set(&mut u.last_name, &self.last_name);
        set(&mut u.email, &self.email);
        set(&mut u.phone, &self.phone);
        set(&mut u.avatar, &self.avatar);
        set(&mut u.locale, &self.locale);
        set(&mut u.timezone, &self.timezone);
        if let Some(cf) = &self.custom_fields {
            u.custom_fields = cf.clone().unwrap_or_default();
        }
        *u != before
    }
}

// ---------------------------------------------------------------- preferences

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct FlowPreference {
    pub enabled: Option<bool>,
    pub channel_types: std::collections::BTreeMap<ChannelType, bool>,
}

/// What a user changed from the defaults (everything else is `true`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Preferences {
    pub channel_types: std::collections::BTreeMap<ChannelType, bool>,
    pub flows: std::collections::BTreeMap<String, FlowPreference>,
}

impl Preferences {
    /// `channel_types[t] && flows[h].enabled && flows[h].channel_types[t]` (docs/API.md §6).
    pub fn allows(&self, flow_handle: &str, t: ChannelType) -> bool {
        if !self.channel_types.get(&t).copied().unwrap_or(true) {
            return false;
        }
        match self.flows.get(flow_handle) {
            None => true,
            Some(f) => {
                f.enabled.unwrap_or(true) && f.channel_types.get(&t).copied().unwrap_or(true)
            }
        }
    }

    pub fn merge(&mut self, patch: &Preferences) {
        for (t, v) in &patch.channel_types {
            self.channel_types.insert(*t, *v);
        }
        for (h, fp) in &patch.flows {
            let cur = self.flows.entry(h.clone()).or_default();
            if fp.enabled.is_some() {
                cur.enabled = fp.enabled;
            }
            for (t, v) in &fp.channel_types {
                cur.channel_types.insert(*t, *v);
            }
        }
    }
}

// ---------------------------------------------------------------- channels

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChannelStatus {
    Unconfigured,
    Active,
    Revoked,
}

impl ChannelStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ChannelStatus::Unconfigured => "unconfigured",
            ChannelStatus::Active => "active",
            ChannelStatus::Revoked => "revoked",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Channel {
    pub id: Uuid,
    #[serde(rename = "type")]
    pub channel_type: ChannelType,
    pub name: String,
    pub provider: String,
    /// The full config, secrets included. Never rendered as is: see `masked_config`.
    pub config: Map<String, Value>,
    pub revoked: bool,
    /// The in_app channel every project starts with: cannot be deleted or revoked.
    #[serde(default)]
    pub builtin: bool,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

impl Channel {
    /// The in-app channel every project starts with (it cannot be deleted or revoked).
    pub fn builtin_in_app(id: Uuid, now: Timestamp) -> Channel {
        Channel {
            id,
            channel_type: ChannelType::InApp,
            name: "In-app feed".into(),
            provider: "in_app".into(),
            config: Default::default(),
            revoked: false,
            builtin: true,
            created_at: now,
            updated_at: now,
        }
    }
}

// ---------------------------------------------------------------- flows

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlowStatus {
    Draft,
    Active,
    Archived,
}

impl FlowStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            FlowStatus::Draft => "draft",
            FlowStatus::Active => "active",
            FlowStatus::Archived => "archived",
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Template {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub html: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// One step of a flow. Stored as a flat struct (not a tagged enum) so the record
/// format stays simple; the API shape is the service's response body.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Step {
    /// `channel` or `delay`.
    pub kind: String,
    pub channel_id: Option<Uuid>,
    pub template: Option<Template>,
    pub seconds: Option<u64>,
    /// The step's condition (`if`), see `delivery::conditions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cond: Option<crate::delivery::conditions::Conditions>,
    /// A throttle step: at most `limit` runs per `window` (a duration as
    /// given), per flow, recipient and key; the key's template is the step's
    /// `template.body` (see `delivery::throttle`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<String>,
    /// A channel step's send window (see `delivery::window`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_window: Option<crate::delivery::window::SendWindow>,
    /// A batch step with a sliding window: the longest a batch stays open
    /// from its first activity (a duration as given). `None`: a fixed
    /// window (see `delivery::batch`; a batch step keeps its `window` in
    /// `window`, its `max` in `limit` and its key in `template.body`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_window: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Flow {
    pub id: Uuid,
    pub handle: String,
    pub name: String,
    pub description: Option<String>,
    pub status: FlowStatus,
    pub steps: Vec<Step>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

// ---------------------------------------------------------------- topics

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Topic {
    pub id: Uuid,
    pub key: String,
    pub name: Option<String>,
    pub description: Option<String>,
    pub subscribers_count: u64,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Subscription {
    pub id: Uuid,
    pub topic: String,
    pub user_id: Uuid,
    pub user_external_id: String,
    pub created_at: Timestamp,
}

/// A registered push subscription or device token of one user on one channel
/// (its JSON view is `storage::PushSubscription::view`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PushSubscription {
    pub id: Uuid,
    pub channel_id: Uuid,
    pub identifier: String,
    pub keys: Option<serde_json::Value>,
    pub platform: Option<String>,
    pub created_at: Timestamp,
}

// ---------------------------------------------------------------- runs, notifications, deliveries

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FlowRun {
    pub id: Uuid,
    pub flow_id: Uuid,
    /// The flow as it was when the run was accepted (docs/API.md §9).
    pub flow: Flow,
    pub topic: Option<String>,
    pub data: Value,
    pub actor_id: Option<Uuid>,
    pub processed: bool,
    pub recipients_count: u64,
    pub notifications_count: u64,
    /// Explicit recipients of a run that also names a topic (deduplication).
    #[serde(default)]
    pub explicit_ids: Vec<Uuid>,
    /// Topic expansion: the last subscription id already expanded, and whether done.
    pub expand_cursor: Option<Uuid>,
    pub expanded: bool,
    pub created_at: Timestamp,
    pub processed_at: Option<Timestamp>,
    /// A scheduled run: the project-time instant its steps start from (its
    /// deliveries wait until then).
    #[serde(default)]
    pub send_at: Option<Timestamp>,
    /// The project time the run was accepted at when the project is on a
    /// test clock (its delays count from there); `None` on the real clock.
    #[serde(default)]
    pub clock_at: Option<Timestamp>,
    /// The key `POST /admin/v1/flows/{id}/cancel` stops the run's waiting
    /// deliveries by.
    #[serde(default)]
    pub cancellation_key: Option<String>,
    /// The project's default timezone when the run was accepted (send
    /// windows of recipients without one).
    #[serde(default)]
    pub timezone: Option<String>,
}

impl FlowRun {
    /// The instant (project time) the run's steps start from: its `send_at`,
    /// else the test clock's time at acceptance, else its creation.
    pub fn starts_at(&self) -> Timestamp {
        self.send_at.or(self.clock_at).unwrap_or(self.created_at)
    }

    /// The 202 body of a run; the store keeps its bytes as the idempotent replay.
    pub fn accepted_view(&self) -> FlowRunAccepted {
        FlowRunAccepted {
            created_at: self.created_at,
            flow_id: self.flow_id,
            id: self.id,
            recipients_count: self.recipients_count,
            status: PendingStatus::Pending,
        }
    }
}

/// What a run is when it is accepted: always `pending`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PendingStatus {
    Pending,
}

/// The 202 answer to a run: stored durably, delivered asynchronously.
// Fields in name order: the bytes the `json!` form of the object wrote.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct FlowRunAccepted {
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Timestamp,
    pub flow_id: Uuid,
    pub id: Uuid,
    pub recipients_count: u64,
    pub status: PendingStatus,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Notification {
    pub id: Uuid,
    pub flow_id: Uuid,
    pub flow_run_id: Uuid,
    pub topic: Option<String>,
    pub processed: bool,
    pub actor_id: Option<Uuid>,
    pub recipient_id: Uuid,
    pub processed_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// Why the run ended early for this recipient (its steps after that
    /// point have no deliveries).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<StopReason>,
    /// A run that joined another run's batch (`StopReason::Batched`): the
    /// notification that carries the batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batched_into: Option<Uuid>,
}

/// Why a notification's run stopped at a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// A throttle step's limit was reached.
    Throttled,
    /// The run joined a batch another run opened (`Notification::batched_into`).
    Batched,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryStatus {
    Pending,
    Sent,
    Failed,
    Skipped,
    /// Stopped by a cancellation before it was attempted.
    Canceled,
}

impl DeliveryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Sent => "sent",
            DeliveryStatus::Failed => "failed",
            DeliveryStatus::Skipped => "skipped",
            DeliveryStatus::Canceled => "canceled",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::Pending,
            Self::Sent,
            Self::Failed,
            Self::Skipped,
            Self::Canceled,
        ]
        .into_iter()
        .find(|x| x.as_str() == s)
    }
    pub fn index(self) -> u8 {
        self as u8
    }
    pub fn is_final(self) -> bool {
        self != DeliveryStatus::Pending
    }
}

/// Why a delivery failed, will be retried, or was skipped: `delivery.error.code`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryErrorCode {
    /// Skipped: the recipient's preferences turn the channel type or flow off.
    Preference,
    /// Skipped: the recipient has no address for the channel (no email, no
    /// phone, no push subscription) or was deleted.
    MissingAddress,
    /// Failed: the address the recipient has is one the provider cannot send to.
    InvalidAddress,
    /// Failed: the step's template did not render with the run's data.
    TemplateError,
    /// Failed: the provider answered 401 or 403 (the channel's credentials).
    ProviderUnauthorized,
    /// Failed: the provider refused the message for good (another 4xx).
    ProviderRejected,
    /// Retried, and failed once the attempts are used up: the provider could
    /// not be reached or answered 408, 429 or 5xx.
    ProviderUnavailable,
    /// Failed: the channel's provider access is revoked.
    ProviderRevoked,
    /// Failed: the channel is unconfigured, deleted, or its configuration
    /// cannot be used.
    ProviderNotConfigured,
    /// Failed: every push subscription of the recipient on the channel is gone.
    SubscriptionExpired,
    /// Failed: the egress policy refused the destination; nothing was sent.
    DestinationNotAllowed,
    /// Canceled: the run's cancellation key was canceled while the delivery
    /// waited.
    Canceled,
    /// Skipped: the step's condition (`if`) was false when it was reached.
    ConditionFalse,
    /// Failed: storing it would have taken its project over its storage
    /// quota (`quota`; a topic run's chunk staged after the quota was used).
    QuotaExceeded,
    /// Failed: the process died while the delivery was in progress at two
    /// starts in a row (`actors::poison`); it is not attempted a third time.
    Crashed,
}

impl DeliveryErrorCode {
    pub const ALL: [DeliveryErrorCode; 15] = [
        DeliveryErrorCode::Preference,
        DeliveryErrorCode::MissingAddress,
        DeliveryErrorCode::InvalidAddress,
        DeliveryErrorCode::TemplateError,
        DeliveryErrorCode::ProviderUnauthorized,
        DeliveryErrorCode::ProviderRejected,
        DeliveryErrorCode::ProviderUnavailable,
        DeliveryErrorCode::ProviderRevoked,
        DeliveryErrorCode::ProviderNotConfigured,
        DeliveryErrorCode::SubscriptionExpired,
        DeliveryErrorCode::DestinationNotAllowed,
        DeliveryErrorCode::Canceled,
        DeliveryErrorCode::ConditionFalse,
        DeliveryErrorCode::QuotaExceeded,
        DeliveryErrorCode::Crashed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryErrorCode::Preference => "preference",
            DeliveryErrorCode::MissingAddress => "missing_address",
            DeliveryErrorCode::InvalidAddress => "invalid_address",
            DeliveryErrorCode::TemplateError => "template_error",
            DeliveryErrorCode::ProviderUnauthorized => "provider_unauthorized",
            DeliveryErrorCode::ProviderRejected => "provider_rejected",
            DeliveryErrorCode::ProviderUnavailable => "provider_unavailable",
            DeliveryErrorCode::ProviderRevoked => "provider_revoked",
            DeliveryErrorCode::ProviderNotConfigured => "provider_not_configured",
            DeliveryErrorCode::SubscriptionExpired => "subscription_expired",
            DeliveryErrorCode::DestinationNotAllowed => "destination_not_allowed",
            DeliveryErrorCode::Canceled => "canceled",
            DeliveryErrorCode::ConditionFalse => "condition_false",
            DeliveryErrorCode::QuotaExceeded => "quota_exceeded",
            DeliveryErrorCode::Crashed => "crashed",
        }
    }
}

// A delivery's error as stored and shown. `code` stays a string in the record
// (a code a later version adds still reads); it is written from a
// [`DeliveryErrorCode`] through [`DeliveryError::new`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, ToSchema)]
pub struct DeliveryError {
    /// `preference`, `missing_address`, `invalid_address`, `provider_unauthorized`,
    /// `provider_rejected`, `provider_unavailable`, `provider_revoked`,
    /// `provider_not_configured`, `subscription_expired`, `destination_not_allowed`
    /// (the egress guard refused the address; nothing was sent)…
    pub code: String,
    pub message: String,
}

impl DeliveryError {
    pub fn new(code: DeliveryErrorCode, message: impl Into<String>) -> Self {
        DeliveryError {
            code: code.as_str().into(),
            message: message.into(),
        }
    }
}

/// An in_app delivery as its recipient sees it (id = delivery id).
// docs/API.md §11. Borrowed from the record: the live feed and the feed pages
// serialise it without an intermediate JSON tree. Fields in the order a JSON
// object of the same keys would print them.
#[derive(Debug, Serialize, ToSchema)]
pub struct FeedEntry<'a> {
    #[schema(value_type = Option<User>)]
    pub actor: &'a Value,
    pub archived: bool,
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub archived_at: Option<Timestamp>,
    pub clicked: bool,
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub clicked_at: Option<Timestamp>,
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Timestamp,
    #[schema(value_type = DeliveryData)]
    pub data: &'a Rendered,
    pub flow_id: Uuid,
    pub id: Uuid,
    pub notification_id: Uuid,
    pub read: bool,
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub read_at: Option<Timestamp>,
    pub seen: bool,
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub seen_at: Option<Timestamp>,
    #[schema(value_type = Option<String>)]
    pub topic: &'a Option<String>,
}

/// Rendered content of one delivery.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Rendered {
    pub subject: String,
    pub body: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub html: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub url: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Delivery {
    pub id: Uuid,
    pub notification_id: Uuid,
    pub flow_run_id: Uuid,
    pub flow_id: Uuid,
    pub channel_id: Uuid,
    pub channel_type: ChannelType,
    pub topic: Option<String>,
    pub status: DeliveryStatus,
    pub data: Rendered,
    /// Per-device outcomes and other provider facts, shown under `data.outcomes`.
    #[serde(default)]
    pub outcomes: Option<Value>,
    pub actor_id: Option<Uuid>,
    pub recipient_id: Uuid,
    pub attempts: u32,
    pub error: Option<DeliveryError>,
    /// When the delivery may first be attempted (after `delay` steps).
    pub due_at: Timestamp,
    pub next_attempt_at: Option<Timestamp>,
    pub sent_at: Option<Timestamp>,
    pub seen_at: Option<Timestamp>,
    pub read_at: Option<Timestamp>,
    pub clicked_at: Option<Timestamp>,
    pub archived_at: Option<Timestamp>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
    /// What is left of the step's condition to decide when the delivery
    /// comes due (rules over earlier steps, see `delivery::conditions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<crate::delivery::conditions::Conditions>,
    /// A step after a batch step, of the run that opened the batch: it is
    /// rendered when it comes due, with the batch in its context, once the
    /// batch is closed (see `delivery::batch`); false once rendered.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub batch: bool,
}

/// The rendered content of a delivery.
// The schema of a delivery's `data`: the stored `Rendered` plus the provider's
// outcomes (a feed entry's `data` is the stored `Rendered`, without them).
// Fields in name order: the bytes the `json!` form of the object wrote.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(as = Rendered)]
pub struct DeliveryData {
    pub body: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub html: Option<String>,
    /// Per-device outcomes and other provider facts (push channels).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcomes: Option<Value>,
    pub subject: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// A delivery as the Admin API and the webhooks show it.
// Fields in name order: the bytes the `json!` form of the object wrote.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(as = Delivery)]
pub struct DeliveryView {
    pub actor_id: Option<Uuid>,
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub archived_at: Option<Timestamp>,
    pub attempts: u32,
    pub channel_id: Uuid,
    pub channel_type: ChannelType,
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub clicked_at: Option<Timestamp>,
    #[schema(value_type = DateTime<Utc>)]
    pub created_at: Timestamp,
    pub data: DeliveryData,
    pub error: Option<DeliveryError>,
    pub flow_id: Uuid,
    pub flow_run_id: Uuid,
    pub id: Uuid,
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub next_attempt_at: Option<Timestamp>,
    pub notification_id: Uuid,
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub read_at: Option<Timestamp>,
    pub recipient_id: Uuid,
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub seen_at: Option<Timestamp>,
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub sent_at: Option<Timestamp>,
    pub status: DeliveryStatus,
    pub topic: Option<String>,
    #[schema(value_type = DateTime<Utc>)]
    pub updated_at: Timestamp,
}

impl Delivery {
    pub fn view(&self) -> DeliveryView {
        DeliveryView {
            actor_id: self.actor_id,
            archived_at: self.archived_at,
            attempts: self.attempts,
            channel_id: self.channel_id,
            channel_type: self.channel_type,
            clicked_at: self.clicked_at,
            created_at: self.created_at,
            data: DeliveryData {
                body: self.data.body.clone(),
                html: self.data.html.clone(),
                outcomes: self.outcomes.clone(),
                subject: self.data.subject.clone(),
                url: self.data.url.clone(),
            },
            error: self.error.clone(),
            flow_id: self.flow_id,
            flow_run_id: self.flow_run_id,
            id: self.id,
            next_attempt_at: self.next_attempt_at,
            notification_id: self.notification_id,
            read_at: self.read_at,
            recipient_id: self.recipient_id,
            seen_at: self.seen_at,
            sent_at: self.sent_at,
            status: self.status,
            topic: self.topic.clone(),
            updated_at: self.updated_at,
        }
    }

    /// The in-app feed entry state: `unseen`, `seen` or `read`.
    pub fn feed_state(&self) -> &'static str {
        if self.read_at.is_some() {
            "read"
        } else if self.seen_at.is_some() {
            "seen"
        } else {
            "unseen"
        }
    }

    /// The feed entry as the user sees it, serialised straight from the record
    /// (no intermediate JSON tree on the hot paths).
    pub fn feed_entry<'a>(&'a self, actor: &'a Value) -> FeedEntry<'a> {
        FeedEntry {
            actor,
            archived: self.archived_at.is_some(),
            archived_at: self.archived_at,
            clicked: self.clicked_at.is_some(),
            clicked_at: self.clicked_at,
            created_at: self.created_at,
            data: &self.data,
            flow_id: self.flow_id,
            id: self.id,
            notification_id: self.notification_id,
            read: self.read_at.is_some(),
            read_at: self.read_at,
            seen: self.seen_at.is_some(),
            seen_at: self.seen_at,
            topic: &self.topic,
        }
    }
}

/// Unread and unseen counts of a user's feed (archived entries left out).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct FeedCounts {
    pub unread: u64,
    pub unseen: u64,
    /// The user's latest live-feed event sequence number (0 before any event).
    #[serde(default)]
    pub seq: u64,
}

impl FeedCounts {
    pub fn view(&self) -> FeedMeta {
        FeedMeta {
            unread_count: self.unread,
            unseen_count: self.unseen,
        }
    }
}

/// Counts of the feed, archived entries left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct FeedMeta {
    pub unread_count: u64,
    pub unseen_count: u64,
}
