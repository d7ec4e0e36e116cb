//! email / `postmark`: one JSON POST to Postmark's Email API
//! (`{base_url}/email`, header `X-Postmark-Server-Token`) with `From`, `To`,
//! `Subject`, `TextBody`, `HtmlBody` and `MessageStream`; Postmark answers 200
//! with `MessageID`, and refusals carry its numeric `ErrorCode`.

use super::{
    answer_json, answered, channel::Fields, classify_status, mail, transport_error,
    webhook::retry_after, Clients, ConfigField, FieldFormat, HttpTransport, Provider, ProviderSpec,
    SendError, SendRequest, SendResult, HTTP_TIMEOUT,
};
use crate::error::Validator;
use crate::model::ChannelType;
use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};
use std::sync::Arc;

pub const DEFAULT_BASE_URL: &str = "https://api.postmarkapp.com";
const DEFAULT_STREAM: &str = "outbound";

pub struct Postmark(HttpTransport);

static SPEC: ProviderSpec = ProviderSpec {
    name: "postmark",
    channel_type: ChannelType::Email,
    summary: "Postmark Email API: one message per delivery to the recipient's `email`.",
    example: || {
        json!({"server_token": "your-server-token", "from": "Herald <noreply@example.com>",
               "message_stream": "outbound"})
    },
    retry: true,
    fields: &[
        ConfigField {
            name: "server_token",
            required: true,
            secret: true,
            format: FieldFormat::String,
            description: "Server API token; sent as `X-Postmark-Server-Token`.",
        },
        mail::FROM,
        ConfigField {
            name: "message_stream",
            required: false,
            secret: false,
            format: FieldFormat::String,
            description: "Message stream id (default `outbound`, the transactional stream).",
        },
        mail::base_url_field(DEFAULT_BASE_URL),
        ConfigField {
            name: "webhook_username",
            required: false,
            secret: false,
            format: FieldFormat::String,
            description: "Basic-auth user name of the webhook URL set in Postmark for delivery feedback (`POST /hooks/v1/{channel_id}`).",
        },
        ConfigField {
            name: "webhook_password",
            required: false,
            secret: true,
            format: FieldFormat::String,
            description: "Basic-auth password of that webhook URL.",
        },
    ],
    together: &[],
    // the token goes to `base_url`
    destinations: &["base_url"],
};

/// Postmark `ErrorCode`s that refuse the recipient's address: 300 invalid
/// email request, 406 inactive recipient (bounced, complained or unsubscribed).
fn is_address_error(code: i64) -> bool {
    matches!(code, 300 | 406)
}

/// Postmark `ErrorCode`s that refuse the credentials: 10 bad or missing server
/// token (whatever the status).
fn is_auth_error(code: i64) -> bool {
    code == 10
}

impl Provider for Postmark {
    fn spec() -> &'static ProviderSpec {
        &SPEC
    }

    fn validate(config: &Map<String, Value>, v: &mut Validator) {
        let f = Fields(config);
        f.want_str("server_token", v);
        f.want_str("message_stream", v);
        mail::validate_from(&f, v);
        f.want_url("base_url", v);
        f.want_str("webhook_username", v);
        f.want_str("webhook_password", v);
    }

    fn transport(c: &Clients) -> Option<Arc<dyn Provider>> {
        Some(Arc::new(Postmark(c.http_transport())))
    }

    fn send(&self, req: SendRequest) -> BoxFuture<'static, SendResult> {
        let HttpTransport { http, guard } = self.0.clone();
        Box::pin(async move {
            let to = mail::recipient(&req)?;
            let c = &req.config;
            let token = super::cfg_str(c, "server_token").unwrap_or_default();
            let from = super::cfg_str(c, "from").unwrap_or_default();
            let stream = super::cfg_str(c, "message_stream").unwrap_or(DEFAULT_STREAM);
            let url = guard.url(&format!("{}/email", mail::base_url(c, DEFAULT_BASE_URL)))?;
            let p = mail::parts(&req);
            let body = json!({
                "From": from, "To": to, "Subject": p.subject,
                "TextBody": p.text, "HtmlBody": p.html, "MessageStream": stream,
                // the delivery id, for matching Postmark's events to the delivery
                "Metadata": {"delivery_id": req.delivery.id.to_string()},
            });
            let resp = http
                .post(url)
                .timeout(HTTP_TIMEOUT)
                .header("X-Postmark-Server-Token", token)
                .header(reqwest::header::ACCEPT, "application/json")
                .json(&body)
                .send()
                .await
                .map_err(|e| transport_error(HTTP_TIMEOUT, e))?;
            let status = resp.status().as_u16();
            let ra = retry_after(resp.headers());
            let v = answer_json(resp).await;
            // Postmark's own code only, never its `Message` text
            let code = v["ErrorCode"].as_i64();
            if (200..300).contains(&status) && code.unwrap_or(0) == 0 {
                return mail::sent(&to, status, v["MessageID"].as_str());
            }
            let code_text = code.map(|c| c.to_string());
            match code {
                Some(c) if is_auth_error(c) => Err(SendError::Unauthorized {
                    message: answered(status, code_text.as_deref()),
                }),
                Some(c) if is_address_error(c) && status < 500 => {
                    Err(mail::invalid_address(format!(
                        "{}: Postmark refused the recipient's address",
                        answered(status, code_text.as_deref())
                    )))
                }
                _ => Err(classify_status(status, code_text.as_deref(), ra)),
            }
        })
    }
}
