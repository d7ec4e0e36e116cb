//! A channel's config as its provider's spec reads it: which fields are
//! required and secret, the checks of a config (shapes, and destinations the
//! egress policy allows), the rule that a new destination needs the secret
//! again, and what a channel's status, usability and masked config follow from.
//! The functions take the provider's name as a channel stores it.

use super::{FieldFormat, ProviderKind};
use crate::egress::EgressPolicy;
use crate::error::{Error, Result, Validator};
use crate::model::{Channel, ChannelStatus, ChannelType, DeliveryErrorCode};
use serde_json::{Map, Value};
use uuid::Uuid;

/// What a secret reads back as.
pub const MASK: &str = "********";

/// The channel type a provider serves (`None`: no such provider).
pub fn provider_type(provider: &str) -> Option<ChannelType> {
    ProviderKind::parse(provider).map(ProviderKind::channel_type)
}

/// The config fields of `provider` stored sealed and shown masked.
pub fn secret_fields(provider: &str) -> &'static [&'static str] {
    ProviderKind::parse(provider).map_or(&[], |k| k.secret_fields())
}

/// See [`super::ProviderSpec::destinations`].
pub fn destination_fields(provider: &str) -> &'static [&'static str] {
    ProviderKind::parse(provider).map_or(&[], |k| k.spec().destinations)
}

/// Required config fields that are absent (or null/empty).
pub fn missing_required(provider: &str, config: &Map<String, Value>) -> Vec<&'static str> {
    let Some(kind) = ProviderKind::parse(provider) else {
        return vec![];
    };
    kind.spec()
        .required()
        .filter(|k| match config.get(*k) {
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => s.is_empty(),
            _ => false,
        })
        .collect()
}

/// The value a secret was given as by `patch`, when it is given anew (not the
/// mask, not absent, not null).
fn restated<'a>(patch: &'a Map<String, Value>, field: &str, mask: &str) -> Option<&'a Value> {
    patch
        .get(field)
        .filter(|v| !v.is_null() && v.as_str() != Some(mask))
}

/// A configuration update that changes a destination field (see
/// `destination_fields`) of a channel holding a secret must send that secret
/// again: 422 `required` on `config.<secret>` otherwise.
pub fn check_secret_restated(
    provider: &str, stored: &Map<String, Value>, merged: &Map<String, Value>,
    patch: &Map<String, Value>, mask: &str, v: &mut Validator,
) {
    let changed: Vec<&str> = destination_fields(provider)
        .iter()
        .copied()
        // A field set to a new value. A field removed is not a redirect: the
        // provider's own default (api.twilio.com, Apple's, Google's hosts) is
        // used, or the channel is unconfigured until the field is set again,
        // and setting it is then a change from nothing.
        .filter(|f| {
            merged
                .get(*f)
                .is_some_and(|m| !m.is_null() && stored.get(*f) != Some(m))
        })
        .collect();
    let Some(first) = changed.first() else {
        return;
    };
    for secret in secret_fields(provider) {
        let held = stored.get(*secret).is_some_and(|x| !x.is_null());
        let kept = merged.get(*secret) == stored.get(*secret);
        if held && kept && restated(patch, secret, mask).is_none() {
            v.push(
                format!("config.{secret}"),
                "required",
                format!(
                    "config.{first} changes where or as whom the channel's secret is used: send config.{secret} again with it (the stored one is never sent to a new destination)"
                ),
            );
        }
    }
}

pub(crate) fn is_http_url(s: &str) -> bool {
    url_like(s, &["http://", "https://"])
        && url::Url::parse(s).is_ok_and(|u| u.host_str().is_some_and(|h| !h.is_empty()))
}

pub(crate) fn url_like(s: &str, schemes: &[&str]) -> bool {
    schemes
        .iter()
        .any(|p| s.len() > p.len() && s[..p.len()].eq_ignore_ascii_case(p))
        && !s.contains(char::is_whitespace)
}

/// A destination field the egress policy refuses: 422 `exclusion` on its path.
fn check_destination(
    egress: &EgressPolicy, field: &str, raw: &str, bare_host: bool, v: &mut Validator,
) {
    let r = if bare_host {
        egress.check_bare_host(raw)
    } else {
        egress.check_url(raw).map(|_| ())
    };
    if let Err(refused) = r {
        v.push(
            field,
            "exclusion",
            format!("destination not allowed: {refused}"),
        );
    }
}

/// Checks the shape of the fields that are present (a partial config is allowed:
/// the channel stays `unconfigured` until every required field is set), and that
/// every destination (URL, base URL, token URL, SMTP host) is one the server's
/// egress policy allows, as far as a literal shows.
pub fn validate_config(
    provider: &str, config: &Map<String, Value>, egress: &EgressPolicy, v: &mut Validator,
) {
    let kind = ProviderKind::parse(provider);
    for f in kind.map_or(&[][..], |k| k.spec().fields) {
        let bare_host = match f.format {
            FieldFormat::Url { .. } => false,
            FieldFormat::Host => true,
            _ => continue,
        };
        if let Some(raw) = config.get(f.name).and_then(|x| x.as_str()) {
            // a masked secret (`********`, a Slack URL kept as it was) is checked as
            // the stored value it stands for: the caller merges before validating
            check_destination(egress, &format!("config.{}", f.name), raw, bare_host, v);
        }
    }
    for (path, raw) in kind.map_or(vec![], |k| k.inner_destinations(config)) {
        check_destination(egress, path, raw, false, v);
    }
    if let Some(r) = config.get("retry") {
        match r {
            Value::Object(m) => {
                if let Some(x) = m.get("max_attempts") {
                    if !x.as_u64().is_some_and(|n| (1..=100).contains(&n)) {
                        v.push(
                            "config.retry.max_attempts",
                            "number",
                            "an integer from 1 to 100",
                        );
                    }
                }
                for k in ["base_seconds", "max_seconds"] {
                    if let Some(x) = m.get(k) {
                        if !x.as_f64().is_some_and(|n| n > 0.0 && n <= 86_400.0) {
                            v.push(
                                format!("config.retry.{k}"),
                                "number",
                                "a number of seconds above 0, at most 86400",
                            );
                        }
                    }
                }
            }
            Value::Null => {}
            _ => v.push("config.retry", "format", "must be an object"),
        }
    }
    if let Some(kind) = kind {
        kind.validate(config, v);
    }
}

/// Letters and digits only (or nothing), the pattern of the ids the
/// providers check with `want_chars(k, char::is_ascii_alphanumeric, …)`.
pub(crate) const ALPHANUMERIC: &str = "^[A-Za-z0-9]*$";

/// Fills in what `provider` makes itself when a channel's config is stored (see
/// [`super::Provider::complete`]).
pub fn complete_config(provider: &str, config: &mut Map<String, Value>) {
    if let Some(kind) = ProviderKind::parse(provider) {
        kind.complete(config);
    }
}

/// A config as the providers' `validate` reads it.
pub(crate) struct Fields<'a>(pub &'a Map<String, Value>);

impl Fields<'_> {
    /// The field's string value (not a string or absent: `None`).
    pub fn str(&self, k: &str) -> Option<&str> {
        self.0.get(k).and_then(|x| x.as_str())
    }

    /// Set and not null.
    pub fn present(&self, k: &str) -> bool {
        self.0.get(k).is_some_and(|x| !x.is_null())
    }

    /// Set to something other than a string: 422 `format`.
    pub fn want_str(&self, k: &str, v: &mut Validator) {
        if self.present(k) && self.str(k).is_none() {
            v.push(format!("config.{k}"), "format", "must be a string");
        }
    }

    /// Set to something other than a string of characters `ok` takes: 422
    /// `format` with `message`.
    pub fn want_chars(&self, k: &str, ok: impl Fn(char) -> bool, message: &str, v: &mut Validator) {
        self.want_format(k, |s| s.chars().all(&ok), message, v);
    }

    /// Required, and `ok` of its value: missing is `required`, a value `ok`
    /// refuses 422 `format` with `message`.
    pub fn want_format(
        &self, k: &str, ok: impl Fn(&str) -> bool, message: &str, v: &mut Validator,
    ) {
        match self.str(k) {
            Some(s) if !ok(s) => v.push(format!("config.{k}"), "format", message),
            Some(_) => {}
            None => self.want_str(k, v),
        }
    }

    /// Set to something other than an http(s) URL: 422 `format`.
    pub fn want_url(&self, k: &str, v: &mut Validator) {
        match self.str(k) {
            Some(u) if !is_http_url(u) => {
                v.push(format!("config.{k}"), "format", "must be an http(s) URL")
            }
            Some(_) => {}
            None => self.want_str(k, v),
        }
    }

    /// Set to an integer outside `range` (or not an integer): 422 `number`.
    pub fn want_integer(
        &self, k: &str, range: std::ops::RangeInclusive<u64>, message: &str, v: &mut Validator,
    ) {
        if self.present(k) && !self.0[k].as_u64().is_some_and(|n| range.contains(&n)) {
            v.push(format!("config.{k}"), "number", message);
        }
    }

    /// Set to anything but one of `values`: 422 `inclusion`.
    pub fn want_one_of(&self, k: &str, values: &[&str], v: &mut Validator) {
        if self.present(k) && !self.str(k).is_some_and(|s| values.contains(&s)) {
            v.push(
                format!("config.{k}"),
                "inclusion",
                format!("one of {}", values.join(", ")),
            );
        }
    }
}

/// Implemented here rather than in the model: they follow from the provider's
/// spec, and the model does not depend on the providers.
impl Channel {
    pub fn status(&self) -> ChannelStatus {
        if self.provider == ProviderKind::InApp.as_str() {
            ChannelStatus::Active
        } else if self.revoked {
            ChannelStatus::Revoked
        } else if missing_required(&self.provider, &self.config).is_empty() {
            ChannelStatus::Active
        } else {
            ChannelStatus::Unconfigured
        }
    }

    /// Ok when the channel can be used now; else the 409 the contract gives for
    /// a channel that is `revoked` (`provider_revoked`) or `unconfigured`
    /// (`provider_not_configured`).
    pub fn usable(&self) -> Result<()> {
        match Channel::unusable(&self.id, self.status()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The 409 of channel `id` in `status` when that status cannot send
    /// (`None` when it can).
    pub fn unusable(id: &Uuid, status: ChannelStatus) -> Option<Error> {
        let (reason, message) = match status {
            ChannelStatus::Active => return None,
            ChannelStatus::Revoked => (
                DeliveryErrorCode::ProviderRevoked,
                "the channel's provider access is revoked",
            ),
            ChannelStatus::Unconfigured => (
                DeliveryErrorCode::ProviderNotConfigured,
                "the channel's provider is not configured",
            ),
        };
        Some(
            Error::conflict("channel", Some(id.to_string()), reason.as_str(), message)
                .with("current_status", status.as_str()),
        )
    }

    /// The config as shown: every secret field set reads `********`.
    pub fn masked_config(&self) -> Map<String, Value> {
        let secrets = secret_fields(&self.provider);
        self.config
            .iter()
            .map(|(k, v)| {
                let shown = if secrets.contains(&k.as_str()) {
                    Value::String(MASK.into())
                } else {
                    v.clone()
                };
                (k.clone(), shown)
            })
            .collect()
    }
}
