//! email / `resend`: one JSON POST to Resend's Emails API
//! (`{base_url}/emails`, `Authorization: Bearer <api_key>`) with `from`, `to`,
//! `subject`, `text` and `html`, the delivery id as `Idempotency-Key`; Resend
//! answers 200 with the email's `id`, refusals with an error `name`.

use super::{
    answer_json, answered, channel::Fields, classify_status, error_token, mail, transport_error,
    webhook::retry_after, Clients, ConfigField, FieldFormat, HttpTransport, Provider, ProviderSpec,
    SendRequest, SendResult, HTTP_TIMEOUT,
};
use crate::error::Validator;
use crate::model::ChannelType;
use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};
use std::sync::Arc;

pub const DEFAULT_BASE_URL: &str = "https://api.resend.com";

pub struct Resend(HttpTransport);

static SPEC: ProviderSpec = ProviderSpec {
    name: "resend",
    channel_type: ChannelType::Email,
    summary: "Resend Emails API: one message per delivery to the recipient's `email`.",
    example: || json!({"api_key": "re_your_api_key", "from": "Herald <noreply@example.com>"}),
    retry: true,
    fields: &[
        ConfigField {
            name: "api_key",
            required: true,
            secret: true,
            format: FieldFormat::String,
            description: "API key (`re_…`) with sending access; sent as a Bearer token.",
        },
        mail::FROM,
        mail::base_url_field(DEFAULT_BASE_URL),
    ],
    together: &[],
    // the key is a Bearer token to `base_url`
    destinations: &["base_url"],
};

impl Provider for Resend {
    fn spec() -> &'static ProviderSpec {
        &SPEC
    }

    fn validate(config: &Map<String, Value>, v: &mut Validator) {
        let f = Fields(config);
        f.want_str("api_key", v);
        mail::validate_from(&f, v);
        f.want_url("base_url", v);
    }

    fn transport(c: &Clients) -> Option<Arc<dyn Provider>> {
        Some(Arc::new(Resend(c.http_transport())))
    }

    fn send(&self, req: SendRequest) -> BoxFuture<'static, SendResult> {
        let HttpTransport { http, guard } = self.0.clone();
        Box::pin(async move {
            let to = mail::recipient(&req)?;
            let c = &req.config;
            let key = super::cfg_str(c, "api_key").unwrap_or_default();
            let from = super::cfg_str(c, "from").unwrap_or_default();
            let url = guard.url(&format!("{}/emails", mail::base_url(c, DEFAULT_BASE_URL)))?;
            let p = mail::parts(&req);
            let mut body = json!({"from": from, "to": [to], "subject": p.subject,
                              "text": p.text, "html": p.html});
            // a commercial flow's one-click unsubscribe
            let headers: Map<String, Value> = mail::unsubscribe_headers(&req)
                .into_iter()
                .map(|(n, v)| (n.to_string(), json!(v)))
                .collect();
            if !headers.is_empty() {
                body["headers"] = Value::Object(headers);
            }
            let resp = http
                .post(url)
                .timeout(HTTP_TIMEOUT)
                .bearer_auth(key)
                // Resend deduplicates on it for 24 hours: a retry is not sent twice
                .header("idempotency-key", req.delivery.id.to_string())
                .json(&body)
                .send()
                .await
                .map_err(|e| transport_error(HTTP_TIMEOUT, e))?;
            let status = resp.status().as_u16();
            let ra = retry_after(resp.headers());
            let v = answer_json(resp).await;
            if (200..300).contains(&status) {
                return mail::sent(&to, status, v["id"].as_str());
            }
            // Resend's error `name` is kept; its `message` is only looked at
            // for a refused `to` field
            let name = v["name"].as_str().and_then(error_token);
            let text = v["message"].as_str().unwrap_or_default();
            if (400..500).contains(&status)
                && !matches!(status, 401 | 403 | 408 | 429)
                && text.contains("`to`")
            {
                return Err(mail::invalid_address(format!(
                    "{}: Resend refused the recipient's address",
                    answered(status, name)
                )));
            }
            Err(classify_status(status, name, ra))
        })
    }
}
