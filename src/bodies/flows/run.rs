//! The run request: whom a run reaches (explicit recipients, a topic, or
//! both), its data and actor, when it starts and the key that cancels it,
//! checked and turned into what the engine accepts.

use crate::bodies::users::RecipientInput;
use crate::extract::{Given, Obj};
use herald_engine::model;
use herald_engine::storage::RunTiming;
use herald_engine::storage::{AcceptInput, ActorSpec, RunRecipient};
use herald_engine::{validate, Validator};
use serde::Deserialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

pub use herald_engine::model::MAX_RECIPIENTS;

/// An explicit recipient: an external_id, or a user object identified inline.
#[derive(Deserialize, ToSchema)]
#[serde(untagged)]
pub enum RecipientSpec {
    #[schema(value_type = crate::bodies::users::ExternalId)]
    ExternalId(String),
    #[schema(value_type = Box<RecipientInput>)]
    User(Box<Obj<RecipientInput>>),
}

/// A run: whom it reaches (`recipients`, a `topic`, or both: at least one of
/// them), its `data` and `actor`, and optionally when it starts (`send_at`) and
/// the key that cancels it (`cancellation_key`).
#[derive(Deserialize, ToSchema, Default)]
#[schema(example = json!({"recipients": ["st-user", {"external_id": "ada", "email": "ada@example.com"}], "actor": "st-user", "data": {"n": 1}}))]
pub struct RunInput {
    /// At most 1,000; recipients plus topic must not be empty.
    #[serde(default)]
    #[schema(value_type = Option<Vec<RecipientSpec>>, max_items = 1000)]
    pub recipients: Given<Vec<Given<RecipientSpec>>>,
    /// A topic key: its subscribers are recipients too.
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1)]
    pub topic: Given<String>,
    /// An existing user's external_id, or a user object identified inline.
    #[serde(default)]
    #[schema(value_type = Option<RecipientSpec>)]
    pub actor: Given<RecipientSpec>,
    #[serde(default)]
    #[schema(value_type = Option<Map<String, Value>>)]
    pub data: Given<Map<String, Value>>,
    /// Alternative to the `Idempotency-Key` header.
    // Read with the header by `idempotency::prepare`, before the body is typed.
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 255)]
    pub idempotency_key: Given<String>,
    /// Schedules the run: accepted now, its steps start at this instant
    /// (project time; RFC 3339). Cancelable meanwhile by `cancellation_key`.
    #[serde(default)]
    #[schema(value_type = Option<DateTime<Utc>>)]
    pub send_at: Given<String>,
    /// A key `POST /admin/v1/flows/{id}/cancel` stops the run's waiting
    /// deliveries by (delays, a schedule).
    #[serde(default)]
    #[schema(value_type = Option<String>, min_length = 1, max_length = 255)]
    pub cancellation_key: Given<String>,
}

impl RunInput {
    /// The engine's input for a run of `flow` (every problem reported at once).
    pub fn validate(&self, flow: model::Flow) -> herald_engine::Result<AcceptInput> {
        let mut v = Validator::new();
        let mut recipients = vec![];
        match &self.recipients {
            Given::Absent | Given::Null => {}
            Given::Value(items) if items.len() > MAX_RECIPIENTS => v.push(
                "recipients",
                "length",
                format!("at most {MAX_RECIPIENTS} recipients per run"),
            ),
            Given::Value(items) => {
                for (i, item) in items.iter().enumerate() {
                    let p = format!("recipients.{i}");
                    match item {
                        Given::Value(RecipientSpec::ExternalId(ext)) => {
                            if validate::external_id(ext, &format!("{p}.external_id"), &mut v) {
                                recipients.push(RunRecipient {
                                    external_id: ext.clone(),
                                    patch: Default::default(),
                                });
                            }
                        }
                        Given::Value(RecipientSpec::User(user)) => {
                            let Obj(r) = user.as_ref();
                            if let Some((external_id, patch)) = r.validate(&p, &mut v) {
                                recipients.push(RunRecipient { external_id, patch });
                            }
                        }
                        _ => v.push(p, "format", "must be an object with external_id"),
                    }
                }
            }
            Given::Wrong(_) => v.push("recipients", "format", "must be an array"),
        }
        let topic = match &self.topic {
            Given::Absent | Given::Null => None,
            Given::Value(t) if !t.is_empty() => Some(t.clone()),
            _ => {
                v.push("topic", "format", "must be a topic key");
                None
            }
        };
        let actor = actor_of(&self.actor, &mut v);
        let data = data_of(&self.data, &mut v);
        let send_at = match &self.send_at {
            Given::Absent | Given::Null => None,
            Given::Value(s) => crate::bodies::workflow::rfc3339(s, "send_at", &mut v),
            Given::Wrong(_) => {
                v.push("send_at", "format", "must be an RFC 3339 date-time");
                None
            }
        };
        let cancellation_key = match &self.cancellation_key {
            Given::Absent | Given::Null => None,
            _ => self
                .cancellation_key
                .required_text("cancellation_key", 255, &mut v),
        };
        if recipients.is_empty()
            && topic.is_none()
            && !v.fields.iter().any(|f| f.field.starts_with("recipients"))
        {
            v.push(
                "recipients",
                "required",
                "give recipients, a topic, or both",
            );
        }
        v.finish()?;
        Ok(AcceptInput {
            flow,
            recipients,
            actor,
            topic,
            data,
            idempotency: None,
            timing: RunTiming {
                send_at,
                cancellation_key,
                clock_at: None,
                timezone: None,
                quota_bytes: None,
            },
            test_channel_id: None,
        })
    }
}

/// A run's (or a preview's) `actor`: an existing user's external_id, or a
/// user identified inline with fields.
pub(super) fn actor_of(actor: &Given<RecipientSpec>, v: &mut Validator) -> Option<ActorSpec> {
    match actor {
        Given::Absent | Given::Null => None,
        Given::Value(RecipientSpec::ExternalId(s)) => {
            validate::external_id(s, "actor", v).then(|| ActorSpec::Existing(s.clone()))
        }
        Given::Value(RecipientSpec::User(user)) => {
            let Obj(r) = user.as_ref();
            let patch = r.profile.validate("actor", v);
            match &r.external_id {
                Given::Value(s) if validate::external_id(s, "actor.external_id", v) => {
                    Some(ActorSpec::Inline(s.clone(), patch))
                }
                Given::Value(_) => None,
                _ => {
                    v.push("actor.external_id", "required", "is required");
                    None
                }
            }
        }
        Given::Wrong(_) => {
            v.push("actor", "format", "must be an external_id or a user object");
            None
        }
    }
}

/// A run's (or a preview's) `data`: an object, `{}` when absent.
pub(super) fn data_of(data: &Given<Map<String, Value>>, v: &mut Validator) -> Value {
    match data {
        Given::Absent | Given::Null => Value::Object(Map::new()),
        Given::Value(o) => Value::Object(o.clone()),
        Given::Wrong(_) => {
            v.push("data", "format", "must be an object");
            Value::Null
        }
    }
}
