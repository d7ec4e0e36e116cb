//! chat / `slack_webhook`: a JSON POST to a Slack incoming-webhook URL. `text`
//! is the rendered body (what notifications and old clients show); with a
//! subject, Block Kit blocks show it as a header above the body.

use super::{
    cfg_str, channel::Fields, classify_status, read_capped, transport_error, webhook::retry_after,
    Clients, ConfigField, FieldFormat, HttpTransport, Provider, ProviderSpec, SendRequest,
    SendResult, Sent, HTTP_TIMEOUT,
};
use crate::error::Validator;
use crate::model::ChannelType;
use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};
use std::sync::Arc;

pub struct SlackWebhook(HttpTransport);

static SPEC: ProviderSpec = ProviderSpec {
    name: "slack_webhook",
    channel_type: ChannelType::Chat,
    summary: "POSTs `{\"text\"}` (and Block Kit blocks) to a Slack incoming webhook.",
    example: || json!({"url": "https://hooks.slack.com/services/T000/B000/XXXX"}),
    retry: true,
    fields: &[ConfigField {
        name: "url",
        required: true,
        secret: true,
        format: FieldFormat::Url { default: None },
        description: "The incoming-webhook URL (it is the credential, so it is a secret).",
    }],
    together: &[],
    // the URL is the secret itself
    destinations: &[],
};

/// The message: `{"text": body}`, plus blocks when a subject or link is there and
/// everything fits Slack's block limits (header 150 chars, section 3000).
pub fn message(req: &SendRequest) -> Value {
    let d = &req.delivery.data;
    let mut m = json!({ "text": d.body });
    let fits = d.subject.chars().count() <= 150 && d.body.chars().count() <= 3000;
    if fits && (!d.subject.is_empty() || d.url.is_some()) {
        let mut blocks = vec![];
        if !d.subject.is_empty() {
            blocks
                .push(json!({"type": "header", "text": {"type": "plain_text", "text": d.subject}}));
        }
        if !d.body.is_empty() {
            blocks.push(json!({"type": "section", "text": {"type": "mrkdwn", "text": d.body}}));
        }
        if let Some(u) = &d.url {
            blocks.push(json!({"type": "context", "elements": [{"type": "mrkdwn", "text": u}]}));
        }
        m["blocks"] = Value::Array(blocks);
    }
    m
}

impl Provider for SlackWebhook {
    fn spec() -> &'static ProviderSpec {
        &SPEC
    }

    fn validate(config: &Map<String, Value>, v: &mut Validator) {
        Fields(config).want_url("url", v);
    }

    fn transport(c: &Clients) -> Option<Arc<dyn Provider>> {
        Some(Arc::new(SlackWebhook(c.http_transport())))
    }

    fn send(&self, req: SendRequest) -> BoxFuture<'static, SendResult> {
        let HttpTransport { http, guard } = self.0.clone();
        Box::pin(async move {
            // the URL is the secret: never in a message
            let url = guard.url(cfg_str(&req.config, "url").unwrap_or_default())?;
            let resp = http
                .post(url)
                .timeout(HTTP_TIMEOUT)
                .json(&message(&req))
                .send()
                .await
                .map_err(|e| transport_error(HTTP_TIMEOUT, e))?;
            let status = resp.status().as_u16();
            if (200..300).contains(&status) {
                return Ok(Sent::answered(status));
            }
            let ra = retry_after(resp.headers());
            // Slack answers errors as a plain-text token (`invalid_token`,
            // `channel_not_found`…): kept only when it is one
            let text = String::from_utf8_lossy(&read_capped(resp, 256).await).into_owned();
            Err(classify_status(status, Some(&text), ra))
        })
    }
}
