//! The channel schemas of `/openapi.json`, one alternative per provider: what
//! each provider's `config` takes (every field, its type and format, required
//! or optional, secret or not), for the create body (`ChannelInput`, a `oneOf`
//! by `provider`), the update body (`ChannelUpdate`) and the response
//! (`Channel`, a `oneOf` by `provider`).
//!
//! They are written as JSON rather than derived: the config is one JSON object
//! whose shape depends on the provider. Nothing of a provider is written here:
//! its summary, example and fields (each one's schema, meaning, and whether it
//! is required or secret) come from its spec in the engine
//! (`providers::specs()`), the same table the handlers validate with. This
//! module only assembles them into the document's alternatives.

use herald_engine::providers::{self, ProviderSpec, MASK};
use serde_json::{json, Map, Value};

/// `SmtpConfig` for `smtp`…
fn config_name(provider: &str) -> String {
    let camel: String = provider
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect();
    format!("{camel}Config")
}

/// `schema` that also takes `null` (a config field given as `null` counts as
/// absent): the type widened where there is one (so its format and pattern
/// stay beside it), else an `anyOf`.
fn nullable(schema: &Value) -> Value {
    let mut s = schema.clone();
    // a format of the service's own (a key) stays on a plain string, where
    // generators and validators look for it
    let own_format = s
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| f != "uri" && f != "email");
    match s.get("type").and_then(Value::as_str) {
        Some(t) if !own_format => {
            s["type"] = json!([t, "null"]);
            if let Some(Value::Array(e)) = s.get_mut("enum") {
                e.push(Value::Null);
            }
            s
        }
        _ => json!({"anyOf": [s, {"type": "null"}]}),
    }
}

/// `schema` with a description (and `writeOnly` for a secret); a `$ref` is
/// wrapped in `allOf`, as some tools drop the siblings of a `$ref`.
fn described(schema: Value, description: String, secret: bool) -> Value {
    let mut s = if schema.get("$ref").is_some() {
        json!({"allOf": [schema]})
    } else {
        schema
    };
    s["description"] = json!(description);
    if secret {
        s["writeOnly"] = json!(true);
    }
    s
}

fn secret_note() -> &'static str {
    "Secret: write-only, sealed at rest, reads back as `********`; send `********` in an update to keep it."
}

/// `<Provider>Config`: the config of a create request (and the fields an
/// update may set).
fn request_config(p: &ProviderSpec) -> Value {
    let mut props = Map::new();
    for f in p.fields {
        let d = if f.secret {
            format!("{} {}", f.description, secret_note())
        } else {
            f.description.to_string()
        };
        props.insert(f.name.into(), described(nullable(&f.schema()), d, f.secret));
    }
    let mut description = p.summary.to_string();
    if p.retry {
        props.insert(
            "retry".into(),
            json!({"anyOf": [{"$ref": "#/components/schemas/ChannelRetry"}, {"type": "null"}]}),
        );
    }
    let required: Vec<&str> = p.required().collect();
    if !required.is_empty() {
        description.push_str(
            " The required fields make the channel `active`; a config without them creates it `unconfigured`.",
        );
    }
    // `null` is taken as no config at all
    let mut config = json!({
        "type": ["object", "null"],
        "title": config_name(p.name),
        "description": description,
        "properties": props,
        "required": required,
        "examples": [(p.example)()],
    });
    if !p.together.is_empty() {
        let mut dependent = Map::new();
        for [a, b] in p.together {
            dependent.extend(both_or_neither(a, b));
        }
        config["dependentSchemas"] = Value::Object(dependent);
    }
    config
}

/// Two keys given together or not at all, where `null`, `""` and the mask
/// count as not given: each one given requires the other given.
fn both_or_neither(a: &str, b: &str) -> Map<String, Value> {
    let given = json!({"type": "string", "minLength": 1, "not": {"const": MASK}});
    let needs = |this: &str, other: &str| {
        json!({"anyOf": [
            {"properties": {this: {"not": given}}},
            {"required": [other], "properties": {other: given}},
        ]})
    };
    Map::from_iter([(a.into(), needs(a, b)), (b.into(), needs(b, a))])
}

/// An update's config: any field, `null` to remove it, `********` to keep a secret.
fn patch_config(p: &ProviderSpec) -> Value {
    let mut props = Map::new();
    for f in p.fields {
        let mut alts = vec![f.schema()];
        if f.secret {
            alts.push(json!({"const": MASK}));
        }
        alts.push(json!({"type": "null"}));
        let mut s = json!({"anyOf": alts, "description": f.description});
        if f.secret {
            s["writeOnly"] = json!(true);
            s["description"] = json!(format!("{} {}", f.description, secret_note()));
        }
        props.insert(f.name.into(), s);
    }
    if p.retry {
        props.insert(
            "retry".into(),
            json!({"anyOf": [{"$ref": "#/components/schemas/ChannelRetry"}, {"type": "null"}]}),
        );
    }
    json!({
        "type": ["object", "null"],
        "description": format!(
            "Merged key by key into the stored config of a `{}` channel: `null` removes a key, `********` keeps a stored secret. \
             Changing where or as whom a secret is used requires sending the secret again.",
            p.name
        ),
        "properties": props,
    })
}

/// A config as it reads back: what was stored (a channel may be partly
/// configured, so nothing is required), secrets masked.
fn response_config(p: &ProviderSpec) -> Value {
    let mut props = Map::new();
    for f in p.fields {
        let s = if f.secret {
            json!({"const": MASK, "description": format!("{} Secret: set, shown masked.", f.description)})
        } else {
            // formats and patterns are what a request must meet; a stored value met them
            let mut s = f.schema();
            if let Some(o) = s.as_object_mut() {
                for k in ["format", "pattern", "minLength", "default"] {
                    o.remove(k);
                }
            }
            described(s, f.description.to_string(), false)
        };
        props.insert(f.name.into(), s);
    }
    if p.retry {
        props.insert(
            "retry".into(),
            json!({"$ref": "#/components/schemas/ChannelRetry"}),
        );
    }
    json!({"type": "object", "properties": props})
}

fn type_and_provider(p: &ProviderSpec) -> (Value, Value) {
    (
        json!({"type": "string", "enum": [p.channel_type.as_str()]}),
        json!({"type": "string", "const": p.name}),
    )
}

/// The provider the bodies' examples show: the first that takes settings.
fn example_provider(specs: &[&'static ProviderSpec]) -> Option<&'static ProviderSpec> {
    specs
        .iter()
        .find(|p| p.required().next().is_some())
        .copied()
}

/// The fields of `p`'s example config that `keep` takes.
fn example_fields(p: &ProviderSpec, keep: impl Fn(&providers::ConfigField) -> bool) -> Value {
    let mut example = p.example();
    example.retain(|k, _| p.field(k).is_some_and(&keep));
    Value::Object(example)
}

fn channel_input(specs: &[&'static ProviderSpec]) -> Value {
    let alts: Vec<Value> = specs
        .iter()
        .map(|p| {
            let (t, pr) = type_and_provider(p);
            json!({
                "title": p.name,
                "type": "object",
                "properties": {
                    "type": t,
                    "provider": pr,
                    "name": {"type": ["string", "null"], "maxLength": 200},
                    "config": {"$ref": format!("#/components/schemas/{}", config_name(p.name))},
                    "sandbox": {"type": ["boolean", "null"], "description": "Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it)."},
                },
                "required": ["type", "provider"],
            })
        })
        .collect();
    let mut s = json!({
        "description": "A new channel: `type` and the `provider` of that type, with the provider's `config` \
                        (plus `retry`). A missing or partial `config` creates the channel `unconfigured`.",
        "oneOf": alts,
    });
    // a channel of the first provider that takes settings, with the required ones
    if let Some(p) = example_provider(specs) {
        s["examples"] = json!([{"type": p.channel_type.as_str(), "provider": p.name, "name": "Ops hook",
                                "config": example_fields(p, |f| f.required)}]);
    }
    s
}

fn channel_update(specs: &[&'static ProviderSpec]) -> Value {
    let alts: Vec<Value> = specs
        .iter()
        .map(|p| {
            let (t, pr) = type_and_provider(p);
            json!({
                "title": p.name,
                "type": "object",
                "properties": {
                    "type": t,
                    "provider": pr,
                    "name": {"type": ["string", "null"], "maxLength": 200},
                    "config": patch_config(p),
                    "sandbox": {"type": ["boolean", "null"], "description": "Sandbox: the channel calls no provider; its deliveries are rendered, stored and `sent` with `sandbox: true`. False when absent (an update without it keeps it)."},
                },
            })
        })
        .collect();
    let mut s = json!({
        "description": "A channel update. `type` and `provider` cannot change (they may be sent, equal to the \
                        channel's); the alternative of the channel's provider says what `config` takes. \
                        (`anyOf`, not `oneOf`: an update need not name its provider.)",
        "anyOf": alts,
    });
    // a rename of such a channel that also sets its optional, non-secret settings
    if let Some(p) = example_provider(specs) {
        s["examples"] = json!([{"name": "Renamed",
                                "config": example_fields(p, |f| !f.required && !f.secret)}]);
    }
    s
}

fn channel(specs: &[&'static ProviderSpec]) -> Value {
    let alts: Vec<Value> = specs
        .iter()
        .map(|p| {
            let (t, pr) = type_and_provider(p);
            json!({
                "title": p.name,
                "type": "object",
                "properties": {
                    "id": {"type": "string", "format": "uuid"},
                    "type": t,
                    "name": {"type": "string"},
                    "provider": pr,
                    "config": response_config(p),
                    "status": {"$ref": "#/components/schemas/ChannelStatus"},
                    "sandbox": {"type": "boolean", "description": "Sandbox: the channel calls no provider (its deliveries are `sent` with `sandbox: true`)."},
                    "health": {"$ref": "#/components/schemas/ChannelHealth"},
                    "created_at": {"type": "string", "format": "date-time"},
                    "updated_at": {"type": "string", "format": "date-time"},
                },
                "required": ["id", "type", "name", "provider", "config", "status", "sandbox", "health", "created_at", "updated_at"],
            })
        })
        .collect();
    json!({
        "description": "A channel. Its `config` is what was stored, secrets reading back as `********`; \
                        `status` is `active` once every required field is set.",
        "oneOf": alts,
    })
}

fn health() -> Value {
    json!({
        "type": "object",
        "description": "The channel's circuit breaker: `degraded` after 5 failures in a row (the provider \
                        unreachable, 408, 429, 5xx) or at least half of 20 or more attempts in a minute; \
                        a probe after the cool-down closes it again (`ok`).",
        "properties": {
            "state": {"type": "string", "enum": ["ok", "degraded"]},
            "since": {"type": "string", "format": "date-time", "description": "When it entered this state (the channel's creation when it never changed)."},
            "last_error": {"type": ["string", "null"], "description": "What the provider last said when it failed; null before any failure."},
        },
        "required": ["state", "since", "last_error"],
    })
}

fn retry() -> Value {
    json!({
        "type": "object",
        "description": "Retries of a delivery that failed transiently (connection errors, timeouts, 408, 429, 5xx): \
                        jittered exponential backoff from `base_seconds` up to `max_seconds`, `Retry-After` honoured \
                        up to `max_seconds`.",
        "properties": {
            "max_attempts": {"type": "integer", "minimum": 1, "maximum": 100, "default": 8},
            "base_seconds": {"type": "number", "exclusiveMinimum": 0, "maximum": 86400, "default": 1},
            "max_seconds": {"type": "number", "exclusiveMinimum": 0, "maximum": 86400, "default": 300},
        },
    })
}

/// Puts the channel schemas into `components.schemas` (replacing the
/// free-form `ChannelInput`, `ChannelUpdate` and `Channel`).
pub fn insert(schemas: &mut Map<String, Value>) {
    let specs: Vec<&'static ProviderSpec> = providers::specs().collect();
    for p in &specs {
        schemas.insert(config_name(p.name), request_config(p));
        // the schemas its fields name (`$ref`)
        for f in p.fields {
            if let providers::FieldFormat::Object { name, schema } = f.format {
                schemas.insert(name.into(), schema());
            }
        }
    }
    schemas.insert("ChannelRetry".into(), retry());
    schemas.insert("ChannelInput".into(), channel_input(&specs));
    schemas.insert("ChannelUpdate".into(), channel_update(&specs));
    schemas.insert("Channel".into(), channel(&specs));
    schemas.insert("ChannelHealth".into(), health());
}

#[cfg(test)]
mod tests {
    use super::*;
    use herald_engine::model::ChannelType;

    fn document() -> Map<String, Value> {
        let mut schemas = Map::new();
        insert(&mut schemas);
        schemas
    }

    /// Every provider of the engine's table is described, with every field
    /// the engine requires or keeps secret among its config's properties.
    #[test]
    fn every_provider_and_every_required_or_secret_field_is_described() {
        let schemas = document();
        let titles: Vec<&str> = schemas["ChannelInput"]["oneOf"]
            .as_array()
            .expect("alternatives")
            .iter()
            .filter_map(|a| a["title"].as_str())
            .collect();
        for t in ChannelType::ALL {
            assert!(
                providers::specs().any(|p| p.channel_type == t && titles.contains(&p.name)),
                "no provider of {t:?} described"
            );
        }
        for p in providers::specs() {
            assert!(providers::provider_type(p.name).is_some(), "{}", p.name);
            let config = &schemas[&config_name(p.name)];
            for f in providers::missing_required(p.name, &Map::new())
                .iter()
                .chain(providers::secret_fields(p.name))
            {
                assert!(
                    config["properties"].get(*f).is_some(),
                    "{}: {f} is not described",
                    p.name
                );
            }
        }
        for name in [
            "smtp",
            "sendgrid",
            "postmark",
            "mailgun",
            "resend",
            "ses",
            "twilio",
            "slack_webhook",
            "slack",
            "discord",
            "teams",
            "vonage",
            "messagebird",
            "expo",
            "webhook",
            "web_push",
            "fcm",
            "apns",
        ] {
            assert!(titles.contains(&name), "{name}");
        }
    }

    /// The example of each config passes the engine's own validation (guard off:
    /// examples use public names anyway), and so does the create body's.
    #[test]
    fn every_config_example_is_valid_for_the_engine() {
        let egress = herald_engine::egress::EgressPolicy {
            allow_private: false,
            allow: Default::default(),
        };
        let schemas = document();
        let body = &schemas["ChannelInput"]["examples"][0];
        let mut examples = vec![(
            body["provider"].as_str().unwrap_or_default().to_string(),
            body["config"].clone(),
        )];
        for p in providers::specs() {
            examples.push((
                p.name.to_string(),
                schemas[&config_name(p.name)]["examples"][0].clone(),
            ));
        }
        for (provider, example) in examples {
            let cfg = example.as_object().cloned().unwrap_or_default();
            let mut v = herald_engine::Validator::new();
            providers::validate_config(&provider, &cfg, &egress, &mut v);
            assert!(v.is_empty(), "{provider}: {:?}", v.finish().err());
        }
    }
}
