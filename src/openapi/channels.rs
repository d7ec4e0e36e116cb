//! The channel schemas of `/openapi.json`, one alternative per provider: what
//! each provider's `config` takes (every field, its type and format, required
//! or optional, secret or not), for the create body (`ChannelInput`, a `oneOf`
//! by `provider`), the update body (`ChannelUpdate`) and the response
//! (`Channel`, a `oneOf` by `provider`).
//!
//! They are written as JSON rather than derived: the config is one JSON object
//! whose shape depends on the provider. Which fields are required and which are
//! secret is not restated here but read from the engine
//! (`providers::missing_required`, `providers::secret_fields`), the same table
//! the handlers validate with; a test checks that every such field is described.

use herald_actors::providers;
use serde_json::{json, Map, Value};

/// What a secret reads back as.
const MASK: &str = "********";

/// One config field: its name, its schema in a request (type, format, limits,
/// default) and what it means.
struct Field {
    name: &'static str,
    schema: Value,
    description: &'static str,
}

fn field(name: &'static str, schema: Value, description: &'static str) -> Field {
    Field {
        name,
        schema,
        description,
    }
}

fn text() -> Value {
    json!({"type": "string"})
}

/// A sender: an email address as `validate::is_email` reads it, or a
/// `Name <address>` form (anything with a `<`).
fn sender() -> Value {
    json!({"type": "string",
           "pattern": "^([\\s\\S]*<[\\s\\S]*|[^\\s\\x00-\\x1f\\x7f-\\x9f@]+@[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)+)$"})
}

fn url(default: Option<&str>) -> Value {
    let mut s = json!({"type": "string", "format": "uri", "pattern": super::HTTP_URL});
    if let Some(d) = default {
        s["default"] = json!(d);
    }
    s
}

/// One provider: its name, channel type, what it is, a config example and its fields.
struct ProviderDoc {
    name: &'static str,
    summary: &'static str,
    example: Value,
    fields: Vec<Field>,
}

/// Every provider of `providers::TABLE`, in the README's order.
fn provider_docs() -> Vec<ProviderDoc> {
    vec![
        ProviderDoc {
            name: "in_app",
            summary: "The in-app feed (built in, one per project): no settings.",
            example: json!({}),
            fields: vec![],
        },
        ProviderDoc {
            name: "webhook",
            summary: "POSTs `{\"delivery\", \"recipient\"}` as JSON with Standard Webhooks headers \
                      (`webhook-id`, `webhook-timestamp`, and `webhook-signature` with a secret).",
            example: json!({"url": "https://example.com/herald", "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "timeout_ms": 5000}),
            fields: vec![
                field("url", url(None), "Where each delivery is POSTed (http or https)."),
                field(
                    "secret",
                    json!({"type": "string",
                           "pattern": "^whsec_(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{4}|[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)$"}),
                    "Signing secret: `whsec_` + base64 of random bytes (e.g. `echo whsec_$(openssl rand -base64 32)`); \
                     each request then carries `webhook-signature: v1,<base64 HMAC-SHA256 of \"id.timestamp.body\">`.",
                ),
                field(
                    "timeout_ms",
                    json!({"type": "integer", "minimum": 1, "maximum": 120000, "default": 10000}),
                    "How long to wait for the receiver's answer; a timeout is retried.",
                ),
            ],
        },
        ProviderDoc {
            name: "slack_webhook",
            summary: "POSTs `{\"text\"}` (and Block Kit blocks) to a Slack incoming webhook.",
            example: json!({"url": "https://hooks.slack.com/services/T000/B000/XXXX"}),
            fields: vec![field(
                "url",
                url(None),
                "The incoming-webhook URL (it is the credential, so it is a secret).",
            )],
        },
        ProviderDoc {
            name: "smtp",
            summary: "One SMTP transaction per delivery to the recipient's `email`.",
            example: json!({"host": "smtp.example.com", "port": 587, "tls": "starttls", "username": "herald",
                            "password": "app-password", "from": "Herald <noreply@example.com>"}),
            fields: vec![
                field("host", text(), "SMTP server host name or address (no scheme, no port)."),
                field(
                    "port",
                    json!({"type": "integer", "minimum": 1, "maximum": 65535}),
                    "587 (STARTTLS), 465 (implicit TLS), 25 or a local relay's port.",
                ),
                field("from", sender(), "Sender: `addr@example.com` or `Name <addr@example.com>`."),
                field(
                    "tls",
                    json!({"type": "string", "enum": ["none", "starttls", "tls"], "default": "starttls"}),
                    "`starttls` (required, usually port 587), `tls` (implicit, port 465), `none` (plain, a local relay only).",
                ),
                field("username", json!({"type": "string"}), "SMTP AUTH user (no AUTH without it)."),
                field("password", json!({"type": "string"}), "SMTP AUTH password."),
            ],
        },
        ProviderDoc {
            name: "twilio",
            summary: "Twilio Programmable Messaging: one SMS per delivery to the recipient's `phone` (E.164).",
            example: json!({"account_sid": "AC0123456789abcdef0123456789abcdef", "auth_token": "your-auth-token",
                            "from": "+15005550006"}),
            fields: vec![
                field(
                    "account_sid",
                    json!({"type": "string", "pattern": "^[A-Za-z0-9]*$"}),
                    "Account SID (`AC…`); basic-auth user.",
                ),
                field("auth_token", json!({"type": "string"}), "Auth token; basic-auth password."),
                field(
                    "from",
                    json!({"type": "string", "pattern": "^\\+[1-9][0-9]{7,14}$"}),
                    "Sending number in E.164 form (`+15005550006`).",
                ),
                field(
                    "base_url",
                    url(Some(providers::twilio::DEFAULT_BASE_URL)),
                    "API base URL (a mock or a proxy).",
                ),
            ],
        },
        ProviderDoc {
            name: "web_push",
            summary: "RFC 8030 web push (RFC 8291 encryption, RFC 8292 VAPID) to each browser subscription.",
            example: json!({"subject": "mailto:ops@example.com"}),
            fields: vec![
                field(
                    "subject",
                    json!({"type": "string", "pattern": "^(mailto:[\\s\\S]*|[Hh][Tt][Tt][Pp][Ss]://\\S+)$"}),
                    "VAPID `sub`: a `mailto:` address or an https URL push services can reach you at.",
                ),
                field(
                    "vapid_public_key",
                    json!({"type": "string", "format": "vapid-public-key"}),
                    "base64url uncompressed P-256 point (65 bytes). Give both keys or neither: Herald then generates the pair.",
                ),
                field(
                    "vapid_private_key",
                    json!({"type": "string", "format": "vapid-private-key"}),
                    "base64url P-256 private scalar (32 bytes), the `web-push generate-vapid-keys` format.",
                ),
            ],
        },
        ProviderDoc {
            name: "fcm",
            summary: "Firebase Cloud Messaging HTTP v1 to each device token registered as a subscription.",
            // without the service account: an example cannot hold a real key
            example: json!({"project_id": "my-app"}),
            fields: vec![
                field(
                    "project_id",
                    json!({"type": "string", "pattern": "^[A-Za-z0-9._:-]*$"}),
                    "The Firebase project id.",
                ),
                field(
                    "service_account",
                    json!({"$ref": "#/components/schemas/FcmServiceAccount"}),
                    "The service account's JSON key file, as an object.",
                ),
                field(
                    "base_url",
                    url(Some(providers::fcm::DEFAULT_BASE_URL)),
                    "FCM API base URL (a mock or a proxy).",
                ),
                field(
                    "token_url",
                    url(Some(providers::fcm::DEFAULT_TOKEN_URL)),
                    "OAuth 2 token endpoint (else the account's `token_uri`, else Google's).",
                ),
            ],
        },
        ProviderDoc {
            name: "apns",
            summary: "Apple Push Notification service, token-based (ES256 .p8 key) over HTTP/2.",
            // without the private key: an example cannot hold a real key
            example: json!({"team_id": "ABCDE12345", "key_id": "KEY1234567", "topic": "com.example.app",
                "environment": "sandbox"}),
            fields: vec![
                field(
                    "team_id",
                    json!({"type": "string", "pattern": "^[A-Za-z0-9]*$"}),
                    "Apple developer team id (the provider token's `iss`).",
                ),
                field(
                    "key_id",
                    json!({"type": "string", "pattern": "^[A-Za-z0-9]*$"}),
                    "Id of the .p8 key (the provider token's `kid`).",
                ),
                field(
                    "private_key",
                    json!({"type": "string", "format": "pem-p256-private-key"}),
                    "The .p8 file's PEM (a P-256 key).",
                ),
                field("topic", text(), "The app's bundle id (`apns-topic`)."),
                field(
                    "environment",
                    json!({"type": "string", "enum": ["production", "sandbox"], "default": "production"}),
                    "Picks Apple's host when `base_url` is not set.",
                ),
                field(
                    "base_url",
                    url(Some(providers::apns::PRODUCTION_URL)),
                    "APNs base URL; a plain `http://` one is spoken as HTTP/2 with prior knowledge (a local test server).",
                ),
            ],
        },
    ]
}

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

fn channel_type(provider: &str) -> &'static str {
    providers::provider_type(provider)
        .map(|t| t.as_str())
        .expect("a provider of the table")
}

fn is_secret(provider: &str, field: &str) -> bool {
    providers::secret_fields(provider).contains(&field)
}

fn required(provider: &str) -> Vec<&'static str> {
    providers::missing_required(provider, &Map::new())
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
fn request_config(p: &ProviderDoc) -> Value {
    let mut props = Map::new();
    for f in &p.fields {
        let secret = is_secret(p.name, f.name);
        let d = if secret {
            format!("{} {}", f.description, secret_note())
        } else {
            f.description.to_string()
        };
        props.insert(f.name.into(), described(nullable(&f.schema), d, secret));
    }
    let mut description = p.summary.to_string();
    if p.name != "in_app" {
        props.insert(
            "retry".into(),
            json!({"anyOf": [{"$ref": "#/components/schemas/ChannelRetry"}, {"type": "null"}]}),
        );
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
        "required": required(p.name),
        "examples": [p.example],
    });
    if p.name == "web_push" {
        config["dependentSchemas"] = both_or_neither("vapid_public_key", "vapid_private_key");
    }
    config
}

/// Two keys given together or not at all, where `null`, `""` and the mask
/// count as not given: each one given requires the other given.
fn both_or_neither(a: &str, b: &str) -> Value {
    let given = json!({"type": "string", "minLength": 1, "not": {"const": MASK}});
    let needs = |this: &str, other: &str| {
        json!({"anyOf": [
            {"properties": {this: {"not": given}}},
            {"required": [other], "properties": {other: given}},
        ]})
    };
    json!({a: needs(a, b), b: needs(b, a)})
}

/// An update's config: any field, `null` to remove it, `********` to keep a secret.
fn patch_config(p: &ProviderDoc) -> Value {
    let mut props = Map::new();
    for f in &p.fields {
        let mut alts = vec![f.schema.clone()];
        if is_secret(p.name, f.name) {
            alts.push(json!({"const": MASK}));
        }
        alts.push(json!({"type": "null"}));
        let mut s = json!({"anyOf": alts, "description": f.description});
        if is_secret(p.name, f.name) {
            s["writeOnly"] = json!(true);
            s["description"] = json!(format!("{} {}", f.description, secret_note()));
        }
        props.insert(f.name.into(), s);
    }
    if p.name != "in_app" {
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
fn response_config(p: &ProviderDoc) -> Value {
    let mut props = Map::new();
    for f in &p.fields {
        let s = if is_secret(p.name, f.name) {
            json!({"const": MASK, "description": format!("{} Secret: set, shown masked.", f.description)})
        } else {
            // formats and patterns are what a request must meet; a stored value met them
            let mut s = f.schema.clone();
            if let Some(o) = s.as_object_mut() {
                for k in ["format", "pattern", "minLength", "default"] {
                    o.remove(k);
                }
            }
            described(s, f.description.to_string(), false)
        };
        props.insert(f.name.into(), s);
    }
    if p.name != "in_app" {
        props.insert(
            "retry".into(),
            json!({"$ref": "#/components/schemas/ChannelRetry"}),
        );
    }
    json!({"type": "object", "properties": props})
}

fn type_and_provider(p: &ProviderDoc) -> (Value, Value) {
    (
        json!({"type": "string", "enum": [channel_type(p.name)]}),
        json!({"type": "string", "const": p.name}),
    )
}

fn channel_input(docs: &[ProviderDoc]) -> Value {
    let alts: Vec<Value> = docs
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
                },
                "required": ["type", "provider"],
            })
        })
        .collect();
    json!({
        "description": "A new channel: `type` and the `provider` of that type, with the provider's `config` \
                        (plus `retry`). A missing or partial `config` creates the channel `unconfigured`.",
        "oneOf": alts,
        "examples": [{"type": "chat", "provider": "webhook", "name": "Ops hook",
                      "config": {"url": "https://example.com/herald"}}],
    })
}

fn channel_update(docs: &[ProviderDoc]) -> Value {
    let alts: Vec<Value> = docs
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
                },
            })
        })
        .collect();
    json!({
        "description": "A channel update. `type` and `provider` cannot change (they may be sent, equal to the \
                        channel's); the alternative of the channel's provider says what `config` takes. \
                        (`anyOf`, not `oneOf`: an update need not name its provider.)",
        "anyOf": alts,
        "examples": [{"name": "Renamed", "config": {"timeout_ms": 2000}}],
    })
}

fn channel(docs: &[ProviderDoc]) -> Value {
    let alts: Vec<Value> = docs
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
                    "created_at": {"type": "string", "format": "date-time"},
                    "updated_at": {"type": "string", "format": "date-time"},
                },
                "required": ["id", "type", "name", "provider", "config", "status", "created_at", "updated_at"],
            })
        })
        .collect();
    json!({
        "description": "A channel. Its `config` is what was stored, secrets reading back as `********`; \
                        `status` is `active` once every required field is set.",
        "oneOf": alts,
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

fn service_account() -> Value {
    json!({
        "type": "object",
        "description": "A Google service account key file (JSON), as downloaded from the console; \
                        other keys of the file are kept.",
        "properties": {
            "type": {"description": "`service_account` in a downloaded key file; kept as given."},
            "project_id": {"description": "Kept as given (the channel's own `project_id` is used)."},
            "private_key_id": {"description": "Kept as given."},
            "private_key": {"type": "string", "format": "pem-rsa-private-key",
                            "description": "The RSA private key (PEM: PKCS#8 or PKCS#1)."},
            "client_email": {"type": "string", "format": "email", "description": "The JWT's `iss`."},
            "token_uri": {"type": "string", "pattern": super::HTTP_URL,
                          "description": "Token endpoint, used when the channel has no `token_url`."},
        },
        "required": ["client_email", "private_key"],
    })
}

/// Puts the channel schemas into `components.schemas` (replacing the
/// free-form `ChannelInput`, `ChannelUpdate` and `Channel`).
pub fn insert(schemas: &mut Map<String, Value>) {
    let docs = provider_docs();
    for p in &docs {
        schemas.insert(config_name(p.name), request_config(p));
    }
    schemas.insert("ChannelRetry".into(), retry());
    schemas.insert("FcmServiceAccount".into(), service_account());
    schemas.insert("ChannelInput".into(), channel_input(&docs));
    schemas.insert("ChannelUpdate".into(), channel_update(&docs));
    schemas.insert("Channel".into(), channel(&docs));
}

#[cfg(test)]
mod tests {
    use super::*;
    use herald_actors::model::ChannelType;

    /// Every provider of the engine's table is described, and every field the
    /// engine requires or keeps secret is one of its described fields.
    #[test]
    fn every_provider_and_every_required_or_secret_field_is_described() {
        let docs = provider_docs();
        for t in ChannelType::ALL {
            assert!(
                docs.iter().any(|p| channel_type(p.name) == t.as_str()),
                "no provider of {t:?} described"
            );
        }
        for p in &docs {
            assert!(providers::provider_type(p.name).is_some(), "{}", p.name);
            let names: Vec<&str> = p.fields.iter().map(|f| f.name).collect();
            for f in required(p.name)
                .iter()
                .chain(providers::secret_fields(p.name))
            {
                assert!(names.contains(f), "{}: {f} is not described", p.name);
            }
        }
        for name in [
            "smtp",
            "twilio",
            "slack_webhook",
            "webhook",
            "web_push",
            "fcm",
            "apns",
        ] {
            assert!(docs.iter().any(|p| p.name == name), "{name}");
        }
    }

    /// The example of each config passes the engine's own validation (guard off:
    /// examples use public names anyway).
    #[test]
    fn every_config_example_is_valid_for_the_engine() {
        let egress = herald_actors::egress::EgressPolicy {
            allow_private: false,
            allow: Default::default(),
        };
        for p in provider_docs() {
            let cfg = p.example.as_object().cloned().unwrap_or_default();
            let mut v = herald_actors::Validator::new();
            providers::validate_config(p.name, &cfg, &egress, &mut v);
            assert!(v.is_empty(), "{}: {:?}", p.name, v.finish().err());
        }
    }
}
