//! chat / `slack`: a Slack app's bot posts with `chat.postMessage`
//! (`{base_url}/api/chat.postMessage`, `Authorization: Bearer <token>`) to the
//! channel or user id the recipient keeps in a custom field (named by
//! `recipient_field`, `slack_user_id` by default). Slack answers HTTP 200 with
//! `{"ok": false, "error": "…"}` on errors; the message id is the answer's `ts`.

use super::{
    answer_json, answered, cfg_str, channel::Fields, classify_status, error_token, slack::message,
    transport_error, webhook::retry_after, Clients, ConfigField, FieldFormat, HttpTransport,
    Provider, ProviderSpec, SendError, SendRequest, SendResult, Sent, HTTP_TIMEOUT,
};
use crate::error::Validator;
use crate::model::{ChannelType, DeliveryErrorCode};
use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};
use std::sync::Arc;

pub const DEFAULT_BASE_URL: &str = "https://slack.com";
/// The custom field read when the config names none.
pub const DEFAULT_RECIPIENT_FIELD: &str = "slack_user_id";
/// A custom field's name as `recipient_field` takes it.
const FIELD_NAME: &str = r"^[A-Za-z0-9_.-]{1,64}$";

pub struct SlackBot(HttpTransport);

static SPEC: ProviderSpec = ProviderSpec {
    name: "slack",
    channel_type: ChannelType::Chat,
    summary: "A Slack app's bot posts to the recipient's Slack user or channel id (a custom field) with `chat.postMessage`.",
    example: || json!({"token": "xoxb-0000-0000-XXXX", "recipient_field": "slack_user_id"}),
    retry: true,
    fields: &[
        ConfigField {
            name: "token",
            required: true,
            secret: true,
            format: FieldFormat::String,
            description: "The bot token (`xoxb-…`) of a Slack app with the `chat:write` scope.",
        },
        ConfigField {
            name: "recipient_field",
            required: false,
            secret: false,
            format: FieldFormat::Pattern(FIELD_NAME),
            description: "The recipient's custom field holding the Slack user or channel id to post to (default `slack_user_id`).",
        },
        ConfigField {
            name: "base_url",
            required: false,
            secret: false,
            format: FieldFormat::Url {
                default: Some(DEFAULT_BASE_URL),
            },
            description: "API base URL (a mock or a proxy).",
        },
    ],
    together: &[],
    // the token goes to `base_url`
    destinations: &["base_url"],
};

fn field_name_ok(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

/// Slack's `error` of an `ok: false` answer as an outcome.
fn slack_error(status: u16, error: Option<&str>) -> SendError {
    let message = answered(status, error);
    match error.unwrap_or_default() {
        "invalid_auth" | "not_authed" | "token_revoked" | "token_expired" | "account_inactive"
        | "missing_scope" | "no_permission" | "org_login_required" | "ekm_access_denied" => {
            SendError::Unauthorized { message }
        }
        "channel_not_found"
        | "user_not_found"
        | "is_archived"
        | "not_in_channel"
        | "cannot_dm_bot"
        | "user_disabled"
        | "messages_tab_disabled" => SendError::Rejected {
            code: DeliveryErrorCode::InvalidAddress,
            message,
        },
        "ratelimited"
        | "rate_limited"
        | "internal_error"
        | "fatal_error"
        | "service_unavailable"
        | "request_timeout" => SendError::Transient {
            message,
            retry_after: None,
        },
        _ => SendError::Rejected {
            code: DeliveryErrorCode::ProviderRejected,
            message,
        },
    }
}

impl Provider for SlackBot {
    fn spec() -> &'static ProviderSpec {
        &SPEC
    }

    fn validate(config: &Map<String, Value>, v: &mut Validator) {
        let f = Fields(config);
        f.want_str("token", v);
        f.want_format(
            "recipient_field",
            field_name_ok,
            "a custom field's name: 1 to 64 letters, digits, _ . -",
            v,
        );
        f.want_url("base_url", v);
    }

    fn transport(c: &Clients) -> Option<Arc<dyn Provider>> {
        Some(Arc::new(SlackBot(c.http_transport())))
    }

    fn send(&self, req: SendRequest) -> BoxFuture<'static, SendResult> {
        let HttpTransport { http, guard } = self.0.clone();
        Box::pin(async move {
            let field = cfg_str(&req.config, "recipient_field").unwrap_or(DEFAULT_RECIPIENT_FIELD);
            let channel = req
                .recipient
                .as_ref()
                .and_then(|u| u.custom_fields.get(field))
                .and_then(|v| v.as_str())
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .ok_or_else(|| SendError::NoAddress {
                    message: format!("the recipient has no Slack id in custom_fields.{field}"),
                })?
                .to_string();
            let token = cfg_str(&req.config, "token").unwrap_or_default();
            let base = cfg_str(&req.config, "base_url")
                .unwrap_or(DEFAULT_BASE_URL)
                .trim_end_matches('/');
            let url = guard.url(&format!("{base}/api/chat.postMessage"))?;
            let mut body = message(&req);
            body["channel"] = json!(channel);
            let resp = http
                .post(url)
                .timeout(HTTP_TIMEOUT)
                .bearer_auth(token)
                .header("content-type", "application/json; charset=utf-8")
                .body(body.to_string())
                .send()
                .await
                .map_err(|e| transport_error(HTTP_TIMEOUT, e))?;
            let status = resp.status().as_u16();
            let ra = retry_after(resp.headers());
            let v = answer_json(resp).await;
            let error = v["error"].as_str().and_then(error_token);
            if !(200..300).contains(&status) {
                return Err(classify_status(status, error, ra));
            }
            if v["ok"] != json!(true) {
                return Err(slack_error(status, error));
            }
            let mut o = json!({"identifier": channel, "status": "sent"});
            if let Some(ts) = v["ts"].as_str() {
                o["message_id"] = json!(ts);
            }
            Ok(Sent {
                outcomes: Some(json!([o])),
                expired: vec![],
                status_code: Some(status),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::spec::testing::pattern_agrees;

    #[test]
    fn the_field_name_pattern_is_the_check() {
        pattern_agrees::<SlackBot>(
            "recipient_field",
            &[
                ("slack_user_id", true),
                ("slack.id-2", true),
                ("", false),
                ("slack id", false),
                ("slack/id", false),
            ],
        );
    }

    #[test]
    fn slack_errors_map_to_outcomes() {
        for e in ["invalid_auth", "not_authed", "token_revoked"] {
            assert!(matches!(
                slack_error(200, Some(e)),
                SendError::Unauthorized { .. }
            ));
        }
        for e in ["channel_not_found", "user_not_found", "is_archived"] {
            assert!(matches!(
                slack_error(200, Some(e)),
                SendError::Rejected {
                    code: DeliveryErrorCode::InvalidAddress,
                    ..
                }
            ));
        }
        assert!(matches!(
            slack_error(200, Some("ratelimited")),
            SendError::Transient { .. }
        ));
        assert!(matches!(
            slack_error(200, Some("msg_too_long")),
            SendError::Rejected {
                code: DeliveryErrorCode::ProviderRejected,
                ..
            }
        ));
    }
}
