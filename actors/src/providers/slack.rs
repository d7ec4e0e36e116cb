//! chat / `slack_webhook`: a JSON POST to a Slack incoming-webhook URL. `text`
//! is the rendered body (what notifications and old clients show); with a
//! subject, Block Kit blocks show it as a header above the body.

use super::{
    cfg_str, classify_status, transport_error, webhook::retry_after, Provider, SendRequest,
    SendResult, Sent, HTTP_TIMEOUT,
};
use futures_util::future::BoxFuture;
use serde_json::{json, Value};

pub struct SlackWebhook {
    http: reqwest::Client,
}

impl SlackWebhook {
    pub fn new(http: reqwest::Client) -> Self {
        SlackWebhook { http }
    }
}

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
    fn send(&self, req: SendRequest) -> BoxFuture<'static, SendResult> {
        let http = self.http.clone();
        Box::pin(async move {
            // the URL is the secret: never in a message
            let url = cfg_str(&req.config, "url").unwrap_or_default().to_string();
            let resp = http
                .post(url)
                .timeout(HTTP_TIMEOUT)
                .json(&message(&req))
                .send()
                .await
                .map_err(|e| transport_error("Slack", e))?;
            let status = resp.status().as_u16();
            if (200..300).contains(&status) {
                return Ok(Sent::default());
            }
            let ra = retry_after(resp.headers());
            let text = resp.text().await.unwrap_or_default();
            Err(classify_status(status, &text, ra))
        })
    }
}
