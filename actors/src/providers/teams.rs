//! chat / `teams`: a JSON POST of an Adaptive Card message to a Microsoft
//! Teams incoming webhook or Workflows URL: the subject as a bold TextBlock
//! above the body, the link as an `Action.OpenUrl`. Teams answers 200 or 202
//! without a message id.

use super::{
    cfg_str, channel::Fields, classify_status, transport_error, webhook::retry_after, Clients,
    ConfigField, FieldFormat, HttpTransport, Provider, ProviderSpec, SendRequest, SendResult, Sent,
    HTTP_TIMEOUT,
};
use crate::error::Validator;
use crate::model::ChannelType;
use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};
use std::sync::Arc;

pub struct Teams(HttpTransport);

static SPEC: ProviderSpec = ProviderSpec {
    name: "teams",
    channel_type: ChannelType::Chat,
    summary:
        "POSTs an Adaptive Card message to a Microsoft Teams incoming webhook or Workflows URL.",
    example: || json!({"url": "https://prod-00.westus.logic.azure.com/workflows/0123/triggers/manual/paths/invoke?sig=XXXX"}),
    retry: true,
    fields: &[ConfigField {
        name: "url",
        required: true,
        secret: true,
        format: FieldFormat::Url { default: None },
        description:
            "The incoming-webhook or Workflows URL (it is the credential, so it is a secret).",
    }],
    together: &[],
    // the URL is the secret itself
    destinations: &[],
};

/// The message: one Adaptive Card (schema 1.4) with TextBlocks of the subject
/// and the body, and a button opening the link when there is one.
pub fn message(req: &SendRequest) -> Value {
    let d = &req.delivery.data;
    let mut body = vec![];
    if !d.subject.is_empty() {
        body.push(
            json!({"type": "TextBlock", "text": d.subject, "weight": "Bolder",
                         "size": "Medium", "wrap": true}),
        );
    }
    if !d.body.is_empty() {
        body.push(json!({"type": "TextBlock", "text": d.body, "wrap": true}));
    }
    let mut card = json!({
        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
        "type": "AdaptiveCard",
        "version": "1.4",
        "body": body,
    });
    if let Some(u) = &d.url {
        card["actions"] = json!([{"type": "Action.OpenUrl", "title": "Open", "url": u}]);
    }
    json!({
        "type": "message",
        "attachments": [{
            "contentType": "application/vnd.microsoft.card.adaptive",
            "contentUrl": null,
            "content": card,
        }],
    })
}

impl Provider for Teams {
    fn spec() -> &'static ProviderSpec {
        &SPEC
    }

    fn validate(config: &Map<String, Value>, v: &mut Validator) {
        Fields(config).want_url("url", v);
    }

    fn transport(c: &Clients) -> Option<Arc<dyn Provider>> {
        Some(Arc::new(Teams(c.http_transport())))
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
            // Teams answers errors in free text: only the status is kept
            Err(classify_status(status, None, retry_after(resp.headers())))
        })
    }
}
