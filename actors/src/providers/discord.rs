//! chat / `discord`: a JSON POST to a Discord webhook URL with `?wait=true`, so
//! Discord answers with the message it created (its `id` is the delivery's
//! message id). `content` is the subject (bold) and body, cut to Discord's
//! 2,000 characters; a link travels as an embed.

use super::{
    answer_json, cfg_str, channel::Fields, classify_status, clip, error_token, transport_error,
    webhook::retry_after, Clients, ConfigField, FieldFormat, HttpTransport, Provider, ProviderSpec,
    SendRequest, SendResult, Sent, HTTP_TIMEOUT,
};
use crate::error::Validator;
use crate::model::ChannelType;
use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use std::time::Duration;

/// Discord's limit for a message's `content`.
const MAX_CONTENT: usize = 2000;
/// Discord's limit for an embed's `title`.
const MAX_TITLE: usize = 256;

pub struct Discord(HttpTransport);

static SPEC: ProviderSpec = ProviderSpec {
    name: "discord",
    channel_type: ChannelType::Chat,
    summary: "POSTs `{\"content\"}` (and an embed for the link) to a Discord webhook.",
    example: || json!({"url": "https://discord.com/api/webhooks/123456789012345678/XXXX"}),
    retry: true,
    fields: &[
        ConfigField {
            name: "url",
            required: true,
            secret: true,
            format: FieldFormat::Url { default: None },
            description: "The webhook URL (`https://discord.com/api/webhooks/{id}/{token}`): it holds the token, so it is a secret.",
        },
        ConfigField {
            name: "username",
            required: false,
            secret: false,
            format: FieldFormat::String,
            description: "Shown as the message's author instead of the webhook's name.",
        },
    ],
    together: &[],
    // the URL is the secret itself
    destinations: &[],
};

/// The message: `content` (the subject in bold above the body, at most 2,000
/// characters), an embed linking `url` when there is one, and no mentions
/// parsed (a rendered `@everyone` pings nobody).
pub fn message(req: &SendRequest) -> Value {
    let d = &req.delivery.data;
    let text = match (d.subject.is_empty(), d.body.is_empty()) {
        (true, _) => d.body.clone(),
        (false, true) => format!("**{}**", d.subject),
        (false, false) => format!("**{}**\n{}", d.subject, d.body),
    };
    let mut m = json!({
        "content": clip(&text, MAX_CONTENT),
        "allowed_mentions": {"parse": []},
    });
    if let Some(u) = &d.url {
        let title = if d.subject.is_empty() {
            u.as_str()
        } else {
            d.subject.as_str()
        };
        m["embeds"] = json!([{"title": clip(title, MAX_TITLE), "url": u}]);
    }
    if let Some(name) = cfg_str(&req.config, "username") {
        m["username"] = json!(clip(name, 80));
    }
    m
}

/// How long Discord asks to wait: `retry_after` (seconds, possibly
/// fractional) of its JSON answer, else the `Retry-After` header.
fn discord_retry_after(v: &Value, header: Option<Duration>) -> Option<Duration> {
    v["retry_after"]
        .as_f64()
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(|s| Duration::from_secs_f64(s.min(86_400.0)))
        .or(header)
}

impl Provider for Discord {
    fn spec() -> &'static ProviderSpec {
        &SPEC
    }

    fn validate(config: &Map<String, Value>, v: &mut Validator) {
        let f = Fields(config);
        f.want_url("url", v);
        f.want_str("username", v);
    }

    fn transport(c: &Clients) -> Option<Arc<dyn Provider>> {
        Some(Arc::new(Discord(c.http_transport())))
    }

    fn send(&self, req: SendRequest) -> BoxFuture<'static, SendResult> {
        let HttpTransport { http, guard } = self.0.clone();
        Box::pin(async move {
            // the URL is the secret: never in a message
            let mut url = guard.url(cfg_str(&req.config, "url").unwrap_or_default())?;
            url.query_pairs_mut().append_pair("wait", "true");
            let resp = http
                .post(url)
                .timeout(HTTP_TIMEOUT)
                .json(&message(&req))
                .send()
                .await
                .map_err(|e| transport_error(HTTP_TIMEOUT, e))?;
            let status = resp.status().as_u16();
            let ra = retry_after(resp.headers());
            let v = answer_json(resp).await;
            if (200..300).contains(&status) {
                let mut o = json!({
                    "identifier": v["channel_id"].as_str().unwrap_or("webhook"),
                    "status": "sent",
                });
                if let Some(id) = v["id"].as_str() {
                    o["message_id"] = json!(id);
                }
                return Ok(Sent {
                    outcomes: Some(json!([o])),
                    expired: vec![],
                    status_code: Some(status),
                });
            }
            // Discord's numeric error code (10015 unknown webhook, 50006 empty
            // message…), never its message text
            let code = v["code"].as_i64().map(|c| c.to_string());
            Err(classify_status(
                status,
                code.as_deref().and_then(error_token),
                discord_retry_after(&v, ra),
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_comes_from_the_body_then_the_header() {
        let h = Some(Duration::from_secs(7));
        assert_eq!(
            discord_retry_after(&json!({"retry_after": 1.5}), h),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(discord_retry_after(&json!({}), h), h);
        assert_eq!(discord_retry_after(&json!({"retry_after": -1}), None), None);
    }
}
