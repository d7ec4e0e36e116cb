//! What a provider is: the [`Provider`] trait every provider implements (its
//! spec, the checks of its config, its transport) and the spec's types, which
//! say what a channel's `config` takes field by field, so that validation, the
//! masking of secrets, a channel's status and the API's schema all read one
//! description. The spec also carries what the API document says of the
//! provider (summary, example, each field's JSON schema and meaning), so a
//! provider's file is the one place that describes it.

use super::{Guard, SendRequest, SendResult};
use crate::error::Validator;
use crate::model::ChannelType;
use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};
use std::sync::Arc;

/// One provider: its name, the channel type it serves, and its config fields.
#[derive(Debug)]
pub struct ProviderSpec {
    /// The `provider` of a channel.
    pub name: &'static str,
    pub channel_type: ChannelType,
    /// What it does, in one sentence (for the API's documentation).
    pub summary: &'static str,
    /// A config for the API's documentation; the provider's tests check that
    /// its checks take it. (A function: a static cannot hold a JSON value.)
    pub example: fn() -> Value,
    /// Whether its config takes `retry`: deliveries it sends over a transport
    /// are attempted again after a transient failure.
    pub retry: bool,
    /// Every field its `config` takes besides `retry`.
    pub fields: &'static [ConfigField],
    /// Pairs of fields given together or not at all (`null`, `""` and the
    /// mask count as not given), which the provider's `validate` enforces.
    pub together: &'static [[&'static str; 2]],
    /// The fields that decide where the provider's secret (or what it signs or
    /// obtains) is sent, over what, or as whom: changing one keeps the stored
    /// secret only when the secret is sent again (`check_secret_restated`),
    /// else a caller who cannot read the secret could redirect it to a host of
    /// theirs. In the order a refusal names the first that changed.
    pub destinations: &'static [&'static str],
}

impl ProviderSpec {
    /// The fields a channel needs before it is `active`.
    pub fn required(&self) -> impl Iterator<Item = &'static str> {
        self.fields.iter().filter(|f| f.required).map(|f| f.name)
    }

    /// The fields stored sealed and shown masked.
    pub fn secrets(&self) -> impl Iterator<Item = &'static str> {
        self.fields.iter().filter(|f| f.secret).map(|f| f.name)
    }

    pub fn field(&self, name: &str) -> Option<&'static ConfigField> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// Its example config as a JSON object.
    pub fn example(&self) -> Map<String, Value> {
        match (self.example)() {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }
}

/// One field of a provider's `config`.
#[derive(Debug)]
pub struct ConfigField {
    pub name: &'static str,
    /// The channel stays `unconfigured` until it is set (not null, not "").
    pub required: bool,
    /// Stored sealed, never shown: it reads back as `********`.
    pub secret: bool,
    pub format: FieldFormat,
    /// What it means (for the API's documentation).
    pub description: &'static str,
}

/// The shape of a config field's value.
#[derive(Debug)]
pub enum FieldFormat {
    /// Any string.
    String,
    /// A non-empty string.
    Text,
    /// An http(s) URL, which the egress policy must allow; `default` is used
    /// when the field is absent.
    Url { default: Option<&'static str> },
    /// A host name or IP address (no scheme, no port), which the egress policy
    /// must allow.
    Host,
    /// An integer from `min` to `max`.
    Integer {
        min: u64,
        max: u64,
        default: Option<u64>,
    },
    /// One of `values`; `default` when absent.
    OneOf {
        values: &'static [&'static str],
        default: &'static str,
    },
    /// A string matching the regular expression (ECMA-262 syntax, as JSON
    /// Schema reads it). The provider's `validate` checks the same rule in
    /// code; the constant lives beside that check.
    Pattern(&'static str),
    /// A string in a format of the service's own (a key the provider parses),
    /// named for the API's documentation.
    Format(&'static str),
    /// A JSON object, described by the schema `schema` returns, which the
    /// document holds under `name`.
    Object {
        name: &'static str,
        schema: fn() -> Value,
    },
}

impl ConfigField {
    /// The JSON schema of its value in a request (type, format, pattern,
    /// limits, default): what the API document says the field takes.
    pub fn schema(&self) -> Value {
        match self.format {
            FieldFormat::String | FieldFormat::Text | FieldFormat::Host => {
                json!({"type": "string"})
            }
            FieldFormat::Url { default } => {
                let mut s = json!({"type": "string", "format": "uri",
                                   "pattern": crate::validate::HTTP_URL});
                if let Some(d) = default {
                    s["default"] = json!(d);
                }
                s
            }
            FieldFormat::Integer { min, max, default } => {
                let mut s = json!({"type": "integer", "minimum": min, "maximum": max});
                if let Some(d) = default {
                    s["default"] = json!(d);
                }
                s
            }
            FieldFormat::OneOf { values, default } => {
                json!({"type": "string", "enum": values, "default": default})
            }
            FieldFormat::Pattern(p) => json!({"type": "string", "pattern": p}),
            FieldFormat::Format(f) => json!({"type": "string", "format": f}),
            FieldFormat::Object { name, .. } => {
                json!({"$ref": format!("#/components/schemas/{name}")})
            }
        }
    }
}

/// What the transports of one engine share: the HTTP clients (built by
/// [`crate::egress::client_builder`]: the guarded resolver, no redirects) and
/// the egress policy as checked at send time.
pub struct Clients {
    pub http: reqwest::Client,
    /// HTTP/2 only (APNs): h2 by ALPN over TLS, by prior knowledge over plain http.
    pub h2: reqwest::Client,
    pub guard: Guard,
}

impl Clients {
    /// The plain HTTP transport of the providers that need nothing else.
    pub fn http_transport(&self) -> HttpTransport {
        HttpTransport {
            http: self.http.clone(),
            guard: self.guard.clone(),
        }
    }
}

/// The shared HTTP client and the egress guard: what webhook, Slack, Twilio
/// and Web Push send with.
#[derive(Clone)]
pub struct HttpTransport {
    pub http: reqwest::Client,
    pub guard: Guard,
}

/// A provider. The associated functions describe it and check configs without
/// a transport (the API validates with them); one transport value serves every
/// channel of its provider for the life of the process (so it may cache, e.g.
/// OAuth tokens per channel), does its I/O on the runtime of the calling
/// delivery actor and must not block.
///
/// Adding a provider: a module implementing this trait, declared in
/// `providers/mod.rs` with its line in the registry (`registry!` there).
pub trait Provider: Send + Sync {
    /// Its name, channel type and config fields.
    fn spec() -> &'static ProviderSpec
    where
        Self: Sized;

    /// Checks of a config beyond the destinations the egress policy judges
    /// (fields that are present only: a partial config is allowed), each
    /// problem pushed at `config.<field>`.
    fn validate(config: &Map<String, Value>, v: &mut Validator)
    where
        Self: Sized,
    {
        let _ = (config, v);
    }

    /// Destinations inside the objects of a config, as (path, URL): the
    /// egress policy judges them as it judges the `Url` fields.
    fn inner_destinations(config: &Map<String, Value>) -> Vec<(&'static str, &str)>
    where
        Self: Sized,
    {
        let _ = config;
        vec![]
    }

    /// Fills in what the provider makes itself when a channel's config is
    /// stored (created or updated), e.g. a key pair the caller did not give.
    fn complete(config: &mut Map<String, Value>)
    where
        Self: Sized,
    {
        let _ = config;
    }

    /// Its transport in an engine, `None` when it has none.
    fn transport(clients: &Clients) -> Option<Arc<dyn Provider>>
    where
        Self: Sized;

    /// One attempt at a delivery.
    fn send(&self, req: SendRequest) -> BoxFuture<'static, SendResult>;
}

/// What the providers' tests share.
#[cfg(test)]
pub(crate) mod testing {
    use super::{FieldFormat, Provider};
    use crate::error::Validator;
    use serde_json::json;

    /// The documented pattern of `P`'s `field` and `P`'s checks agree on each
    /// sample (`true`: taken by both), the sample set into `P`'s example.
    pub(crate) fn pattern_agrees<P: Provider>(field: &str, samples: &[(&str, bool)]) {
        let spec = P::spec();
        let Some(FieldFormat::Pattern(pattern)) = spec.field(field).map(|f| &f.format) else {
            panic!("{}: {field} has no pattern", spec.name);
        };
        let re = regex::Regex::new(pattern).expect("a valid pattern");
        for &(value, ok) in samples {
            assert_eq!(
                re.is_match(value),
                ok,
                "{}: the pattern of {field} on {value:?}",
                spec.name
            );
            let mut config = spec.example();
            config.insert(field.into(), json!(value));
            let mut v = Validator::new();
            P::validate(&config, &mut v);
            let refused = v
                .fields
                .iter()
                .any(|e| e.field == format!("config.{field}"));
            assert_eq!(
                !refused, ok,
                "{}: the check of {field} on {value:?}: {:?}",
                spec.name, v.fields
            );
        }
    }
}
