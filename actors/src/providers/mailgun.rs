//! email / `mailgun`: one form POST to Mailgun's Messages API
//! (`{base_url}/v3/{domain}/messages`, basic auth `api:<api_key>`) with
//! `from`, `to`, `subject`, `text` and `html`; Mailgun answers 200 with the
//! message `id`. The EU region is `base_url: https://api.eu.mailgun.net`.

use super::{
    answer_json, answered, channel::Fields, classify_status, mail, transport_error,
    webhook::retry_after, Clients, ConfigField, FieldFormat, HttpTransport, Provider, ProviderSpec,
    SendRequest, SendResult, HTTP_TIMEOUT,
};
use crate::error::Validator;
use crate::model::ChannelType;
use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};
use std::sync::Arc;

pub const DEFAULT_BASE_URL: &str = "https://api.mailgun.net";
/// A sending domain as the provider's `validate` takes it (it is a path segment).
const DOMAIN: &str = "^[A-Za-z0-9.-]*$";

pub struct Mailgun(HttpTransport);

static SPEC: ProviderSpec = ProviderSpec {
    name: "mailgun",
    channel_type: ChannelType::Email,
    summary: "Mailgun Messages API: one message per delivery to the recipient's `email`.",
    example: || {
        json!({"api_key": "your-api-key", "domain": "mg.example.com",
               "from": "Herald <noreply@mg.example.com>"})
    },
    retry: true,
    fields: &[
        ConfigField {
            name: "api_key",
            required: true,
            secret: true,
            format: FieldFormat::String,
            description: "Private API key (or a domain sending key); basic-auth password of user `api`.",
        },
        ConfigField {
            name: "domain",
            required: true,
            secret: false,
            format: FieldFormat::Pattern(DOMAIN),
            description: "The sending domain (`mg.example.com`).",
        },
        mail::FROM,
        ConfigField {
            name: "base_url",
            required: false,
            secret: false,
            format: FieldFormat::Url {
                default: Some(DEFAULT_BASE_URL),
            },
            description: "API base URL: `https://api.eu.mailgun.net` for a domain in the EU region (or a mock, a proxy).",
        },
        ConfigField {
            name: "webhook_signing_key",
            required: false,
            secret: true,
            format: FieldFormat::String,
            description: "HTTP webhook signing key of the domain, which checks the webhooks of delivery feedback (`POST /hooks/v1/{channel_id}`).",
        },
    ],
    together: &[],
    // the key is basic auth to `base_url`, for `domain`
    destinations: &["base_url", "domain"],
};

impl Provider for Mailgun {
    fn spec() -> &'static ProviderSpec {
        &SPEC
    }

    fn validate(config: &Map<String, Value>, v: &mut Validator) {
        let f = Fields(config);
        f.want_str("api_key", v);
        f.want_chars(
            "domain",
            |c| c.is_ascii_alphanumeric() || c == '.' || c == '-',
            "a domain name: letters, digits, dots and hyphens",
            v,
        );
        mail::validate_from(&f, v);
        f.want_url("base_url", v);
        f.want_str("webhook_signing_key", v);
    }

    fn transport(c: &Clients) -> Option<Arc<dyn Provider>> {
        Some(Arc::new(Mailgun(c.http_transport())))
    }

    fn send(&self, req: SendRequest) -> BoxFuture<'static, SendResult> {
        let HttpTransport { http, guard } = self.0.clone();
        Box::pin(async move {
            let to = mail::recipient(&req)?;
            let c = &req.config;
            let key = super::cfg_str(c, "api_key").unwrap_or_default();
            let domain = super::cfg_str(c, "domain").unwrap_or_default();
            let from = super::cfg_str(c, "from").unwrap_or_default();
            let url = guard.url(&format!(
                "{}/v3/{domain}/messages",
                mail::base_url(c, DEFAULT_BASE_URL)
            ))?;
            let p = mail::parts(&req);
            let id = req.delivery.id.to_string();
            let resp = http
                .post(url)
                .timeout(HTTP_TIMEOUT)
                .basic_auth("api", Some(key))
                .form(&[
                    ("from", from),
                    ("to", to.as_str()),
                    ("subject", p.subject.as_str()),
                    ("text", p.text.as_str()),
                    ("html", p.html.as_str()),
                    // the delivery id, for matching Mailgun's events to the delivery
                    ("v:delivery_id", id.as_str()),
                ])
                .send()
                .await
                .map_err(|e| transport_error(HTTP_TIMEOUT, e))?;
            let status = resp.status().as_u16();
            let ra = retry_after(resp.headers());
            let v = answer_json(resp).await;
            if (200..300).contains(&status) {
                return mail::sent(&to, status, v["id"].as_str());
            }
            // Mailgun has no error codes, only `{"message": text}`: the text is
            // looked at for a refused `to` and never kept
            let text = v["message"]
                .as_str()
                .unwrap_or_default()
                .to_ascii_lowercase();
            if status == 400 && text.starts_with("to parameter is not a valid address") {
                return Err(mail::invalid_address(format!(
                    "{}: Mailgun refused the recipient's address",
                    answered(status, None)
                )));
            }
            Err(classify_status(status, None, ra))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::spec::testing::pattern_agrees;

    #[test]
    fn the_domain_pattern_is_the_check() {
        pattern_agrees::<Mailgun>(
            "domain",
            &[
                ("mg.example.com", true),
                ("", true),
                ("mg.example.com/x", false),
                ("a b", false),
            ],
        );
    }
}
