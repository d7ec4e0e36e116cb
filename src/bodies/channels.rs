//! Channel bodies: the create and update requests and the Channel response.
//! Their schemas in the document are one alternative per provider, built from
//! the providers' specs in `openapi/channels.rs`: these types are what the
//! handlers read and write.

use crate::extract::Given;
use herald_engine::egress::EgressPolicy;
use herald_engine::model::{self, ChannelType, Timestamp};
use herald_engine::{providers, Validator};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use uuid::Uuid;

/// What a secret reads back as; sent in an update, it keeps the stored secret.
pub const MASK: &str = "********";

#[derive(Serialize)]
pub struct Channel {
    pub config: Map<String, Value>,
    pub created_at: Timestamp,
    /// Its circuit breaker (docs/API.md "Channel health").
    pub health: model::ChannelHealth,
    pub id: Uuid,
    pub name: String,
    pub provider: String,
    pub sandbox: bool,
    /// `unconfigured`, `active` or `revoked`.
    pub status: &'static str,
    #[serde(rename = "type")]
    pub channel_type: ChannelType,
    pub updated_at: Timestamp,
}

impl From<&model::Channel> for Channel {
    fn from(c: &model::Channel) -> Self {
        Channel {
            config: c.masked_config(),
            created_at: c.created_at,
            health: model::ChannelHealth::ok_since(c.created_at),
            id: c.id,
            name: c.name.clone(),
            provider: c.provider.clone(),
            sandbox: c.sandbox,
            status: c.status().as_str(),
            channel_type: c.channel_type,
            updated_at: c.updated_at,
        }
    }
}

impl Channel {
    /// The channel as shown with its health as known.
    pub fn with_health(c: &model::Channel, health: model::ChannelHealth) -> Self {
        Channel {
            health,
            ..Channel::from(c)
        }
    }
}

/// Merges `patch` into `config` key by key: `null` removes a key, the mask keeps
/// the stored secret.
pub fn merge_config(config: &mut Map<String, Value>, patch: &Map<String, Value>, provider: &str) {
    let secrets = providers::secret_fields(provider);
    for (k, v) in patch {
        match v {
            Value::Null => {
                config.remove(k);
            }
            Value::String(s) if s == MASK && secrets.contains(&k.as_str()) => {}
            other => {
                config.insert(k.clone(), other.clone());
            }
        }
    }
}

/// `config` as given: `None` when absent or null (a wrong type is reported).
fn config_of<'a>(
    given: &'a Given<Map<String, Value>>, v: &mut Validator,
) -> Option<&'a Map<String, Value>> {
    match given {
        Given::Absent | Given::Null => None,
        Given::Value(m) => Some(m),
        Given::Wrong(_) => {
            v.push("config", "format", "must be an object");
            None
        }
    }
}

/// A new channel.
#[derive(Deserialize, Default)]
pub struct ChannelInput {
    #[serde(default, rename = "type")]
    pub channel_type: Given<String>,
    #[serde(default)]
    pub provider: Given<String>,
    #[serde(default)]
    pub name: Given<String>,
    #[serde(default)]
    pub config: Given<Map<String, Value>>,
    #[serde(default)]
    pub sandbox: Given<bool>,
}

/// A checked new channel (its config merged, secrets as given).
pub struct NewChannel {
    pub channel_type: ChannelType,
    pub provider: String,
    pub name: Option<String>,
    pub config: Map<String, Value>,
    pub sandbox: bool,
}

impl ChannelInput {
    pub fn validate(&self, egress: &EgressPolicy) -> herald_engine::Result<NewChannel> {
        let mut v = Validator::new();
        let ctype = match self.channel_type.required_text("type", 64, &mut v) {
            Some(t) => match ChannelType::parse(&t) {
                Some(t) => Some(t),
                None => {
                    v.push(
                        "type",
                        "inclusion",
                        "one of chat, email, in_app, mobile_push, sms, web_push",
                    );
                    None
                }
            },
            None => None,
        };
        let provider = self.provider.required_text("provider", 64, &mut v);
        if let (Some(t), Some(p)) = (ctype, &provider) {
            if providers::provider_type(p) != Some(t) {
                v.push(
                    "provider",
                    "inclusion",
                    format!("not a provider of channel type {}", t.as_str()),
                );
            }
        }
        let name = self.name.text("name", 200, &mut v).flatten();
        let sandbox = self.sandbox.flag("sandbox", &mut v).unwrap_or(false);
        let mut config = Map::new();
        if let Some(c) = config_of(&self.config, &mut v) {
            if let Some(p) = &provider {
                merge_config(&mut config, c, p);
                providers::validate_config(p, &config, egress, &mut v);
            }
        }
        v.finish()?;
        Ok(NewChannel {
            channel_type: ctype.expect("validated"),
            provider: provider.expect("validated"),
            name,
            config,
            sandbox,
        })
    }
}

/// A channel update: `type` and `provider` may only restate the channel's.
#[derive(Deserialize, Default)]
pub struct ChannelUpdate {
    #[serde(default, rename = "type")]
    pub channel_type: Given<Value>,
    #[serde(default)]
    pub provider: Given<Value>,
    #[serde(default)]
    pub name: Given<String>,
    #[serde(default)]
    pub config: Given<Map<String, Value>>,
    #[serde(default)]
    pub sandbox: Given<bool>,
}

impl ChannelUpdate {
    /// Applies the update to `c` (nothing changes on a problem).
    pub fn apply(
        &self, c: &mut model::Channel, egress: &EgressPolicy,
    ) -> herald_engine::Result<()> {
        let mut v = Validator::new();
        let restates = |given: &Given<Value>, current: &str| match given {
            Given::Absent => true,
            Given::Null => false,
            Given::Value(x) | Given::Wrong(x) => x.as_str() == Some(current),
        };
        if !restates(&self.channel_type, c.channel_type.as_str()) {
            v.push("type", "exclusion", "a channel's type cannot change");
        }
        if !restates(&self.provider, &c.provider) {
            v.push(
                "provider",
                "exclusion",
                "a channel's provider cannot change",
            );
        }
        let name = self.name.text("name", 200, &mut v);
        let sandbox = self.sandbox.flag("sandbox", &mut v);
        if let Some(cfg) = config_of(&self.config, &mut v) {
            let mut merged = c.config.clone();
            merge_config(&mut merged, cfg, &c.provider);
            providers::validate_config(&c.provider, &merged, egress, &mut v);
            providers::check_secret_restated(&c.provider, &c.config, &merged, cfg, MASK, &mut v);
            if v.is_empty() {
                c.config = merged;
                c.revoked = false;
            }
        }
        v.finish()?;
        if let Some(Some(n)) = name {
            c.name = n;
        }
        if let Some(b) = sandbox {
            c.sandbox = b;
        }
        Ok(())
    }
}

/// A channel's test send: the user it goes to and, optionally, `data` for
/// its template (`subject` and `body` replace the test's own).
#[derive(Deserialize, utoipa::ToSchema, Default)]
#[schema(example = json!({"user_id": "ada", "data": {"body": "Checking the new channel"}}))]
pub struct ChannelTestInput {
    /// An existing user's external id.
    #[serde(default)]
    #[schema(value_type = crate::bodies::users::ExternalId, required = true)]
    pub user_id: Given<String>,
    /// The run's data, for the templates.
    #[serde(default)]
    #[schema(value_type = Option<Map<String, Value>>)]
    pub data: Given<Map<String, Value>>,
}

impl ChannelTestInput {
    /// The recipient's external id and the data (`{}` when absent); every
    /// problem at once, at its field.
    pub fn validate(&self) -> herald_engine::Result<(String, Value)> {
        let mut v = Validator::new();
        let user = match &self.user_id {
            Given::Value(s) => {
                herald_engine::validate::external_id(s, "user_id", &mut v).then(|| s.clone())
            }
            Given::Absent | Given::Null => {
                v.push("user_id", "required", "is required");
                None
            }
            Given::Wrong(_) => {
                v.push("user_id", "format", "must be a user's external_id");
                None
            }
        };
        let data = match &self.data {
            Given::Absent | Given::Null => Value::Object(Map::new()),
            Given::Value(o) => Value::Object(o.clone()),
            Given::Wrong(_) => {
                v.push("data", "format", "must be an object");
                Value::Null
            }
        };
        v.finish()?;
        Ok((user.unwrap_or_default(), data))
    }
}
