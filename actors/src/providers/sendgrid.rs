//! email / `sendgrid`: one JSON POST to SendGrid's Mail Send API
//! (`{base_url}/v3/mail/send`, `Authorization: Bearer <api_key>`) with the
//! recipient in `personalizations`, a `text/plain` and a `text/html` part;
//! SendGrid answers 202 with the message id in `X-Message-Id`.

use super::{
    answer_json, answered, channel::Fields, classify_status, error_token, mail, transport_error,
    webhook::retry_after, Clients, ConfigField, FieldFormat, HttpTransport, Provider, ProviderSpec,
    SendRequest, SendResult, HTTP_TIMEOUT,
};
use crate::error::Validator;
use crate::feedback::sendgrid as sendgrid_hooks;
use crate::model::ChannelType;
use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};
use std::sync::Arc;

pub const DEFAULT_BASE_URL: &str = "https://api.sendgrid.com";

pub struct Sendgrid(HttpTransport);

static SPEC: ProviderSpec = ProviderSpec {
    name: "sendgrid",
    channel_type: ChannelType::Email,
    summary: "SendGrid Mail Send API (v3): one message per delivery to the recipient's `email`.",
    example: || json!({"api_key": "SG.your-api-key", "from": "Herald <noreply@example.com>"}),
    retry: true,
    fields: &[
        ConfigField {
            name: "api_key",
            required: true,
            secret: true,
            format: FieldFormat::String,
            description: "API key with the Mail Send permission; sent as a Bearer token.",
        },
        mail::FROM,
        mail::base_url_field(DEFAULT_BASE_URL),
        ConfigField {
            name: sendgrid_hooks::KEY_FIELD,
            required: false,
            secret: false,
            format: FieldFormat::Format("base64-der-p256-public-key"),
            description: "The verification key of SendGrid's Signed Event Webhook (base64 DER, as SendGrid's settings show it): event callbacks at `/hooks/v1/{channel_id}` must be signed with its key. Not needed to send.",
        },
    ],
    together: &[],
    // the key is a Bearer token to `base_url`
    destinations: &["base_url"],
};

/// The Mail Send body of one message from `from` to `to`.
fn body(req: &SendRequest, from: (String, Option<String>), to: &str) -> Value {
    let p = mail::parts(req);
    let mut sender = json!({"email": from.0});
    if let Some(n) = from.1 {
        sender["name"] = json!(n);
    }
    let mut b = json!({
        "personalizations": [{"to": [{"email": to}]}],
        "from": sender,
        "subject": p.subject,
        "content": [
            {"type": "text/plain", "value": p.text},
            {"type": "text/html", "value": p.html},
        ],
        // the delivery id, for matching SendGrid's events to the delivery
        "custom_args": {"delivery_id": req.delivery.id.to_string()},
    });
    // a commercial flow's one-click unsubscribe
    let headers: Map<String, Value> = mail::unsubscribe_headers(req)
        .into_iter()
        .map(|(n, v)| (n.to_string(), json!(v)))
        .collect();
    if !headers.is_empty() {
        b["headers"] = Value::Object(headers);
    }
    b
}

impl Provider for Sendgrid {
    fn spec() -> &'static ProviderSpec {
        &SPEC
    }

    fn validate(config: &Map<String, Value>, v: &mut Validator) {
        let f = Fields(config);
        f.want_str("api_key", v);
        mail::validate_from(&f, v);
        f.want_url("base_url", v);
        if let Some(key) = f.str(sendgrid_hooks::KEY_FIELD).filter(|k| !k.is_empty()) {
            if let Err(e) = sendgrid_hooks::parse_key(key) {
                v.push(
                    format!("config.{}", sendgrid_hooks::KEY_FIELD),
                    "format",
                    format!("SendGrid's verification key: {e}"),
                );
            }
        } else {
            f.want_str(sendgrid_hooks::KEY_FIELD, v);
        }
    }

    fn transport(c: &Clients) -> Option<Arc<dyn Provider>> {
        Some(Arc::new(Sendgrid(c.http_transport())))
    }

    fn send(&self, req: SendRequest) -> BoxFuture<'static, SendResult> {
        let HttpTransport { http, guard } = self.0.clone();
        Box::pin(async move {
            let to = mail::recipient(&req)?;
            let from = mail::sender(&req.config)?;
            let key = super::cfg_str(&req.config, "api_key").unwrap_or_default();
            let base = mail::base_url(&req.config, DEFAULT_BASE_URL);
            let url = guard.url(&format!("{base}/v3/mail/send"))?;
            let resp = http
                .post(url)
                .timeout(HTTP_TIMEOUT)
                .bearer_auth(key)
                .json(&body(&req, from, &to))
                .send()
                .await
                .map_err(|e| transport_error(HTTP_TIMEOUT, e))?;
            let status = resp.status().as_u16();
            let ra = retry_after(resp.headers());
            if (200..300).contains(&status) {
                let id = resp
                    .headers()
                    .get("x-message-id")
                    .and_then(|h| h.to_str().ok())
                    .map(str::to_string);
                return mail::sent(&to, status, id.as_deref());
            }
            // SendGrid's errors: `{"errors": [{"message", "field", "help"}]}`;
            // only the field a refusal names is kept, never its message
            let v = answer_json(resp).await;
            let field = v["errors"]
                .as_array()
                .into_iter()
                .flatten()
                .find_map(|e| e["field"].as_str().and_then(error_token))
                .map(str::to_string);
            if status == 400 {
                if let Some(f) = field.as_deref() {
                    // `personalizations.0.to.0.email`: the recipient's address
                    if f.starts_with("personalizations") && f.split('.').any(|p| p == "to") {
                        return Err(mail::invalid_address(format!(
                            "{}: SendGrid refused the recipient's address",
                            answered(status, Some(f))
                        )));
                    }
                }
            }
            Err(classify_status(status, field.as_deref(), ra))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::spec::testing::pattern_agrees;

    #[test]
    fn the_verification_key_is_checked() {
        use p256::pkcs8::EncodePublicKey;
        let sk = p256::SecretKey::random(&mut rand::rngs::OsRng);
        let der = sk.public_key().to_public_key_der().unwrap();
        let key =
            base64::Engine::encode(&base64::engine::general_purpose::STANDARD, der.as_bytes());
        let field = sendgrid_hooks::KEY_FIELD;
        for (value, ok) in [
            (json!(key), true),
            (json!(""), true),
            (json!("bm90IGEga2V5"), false),
            (json!("not base64!"), false),
            (json!(1), false),
        ] {
            let mut config = SPEC.example();
            config.insert(field.into(), value.clone());
            let mut v = Validator::new();
            Sendgrid::validate(&config, &mut v);
            let refused = v
                .fields
                .iter()
                .any(|e| e.field == format!("config.{field}"));
            assert_eq!(!refused, ok, "{value}");
        }
    }

    #[test]
    fn the_sender_pattern_is_the_check() {
        pattern_agrees::<Sendgrid>(
            "from",
            &[
                ("noreply@example.com", true),
                ("Herald <noreply@example.com>", true),
                ("noreply", false),
                ("", false),
            ],
        );
    }
}
