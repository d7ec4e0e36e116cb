//! mobile_push / `expo`: Expo's push service
//! (`{base_url}/--/api/v2/push/send`). One JSON array of messages
//! `{to, title, body, data}` per request (at most 100), one per Expo push token
//! the recipient registered on the channel; the answer's `data[]` holds one
//! ticket per message, in order: `ok` with its `id`, or an `error` whose
//! `details.error` `DeviceNotRegistered` means the token is gone.

use super::{
    answer_json, answered, cfg_str, channel::Fields, classify_status, error_token, settle,
    transport_error, webhook::retry_after, Clients, ConfigField, Device, FieldFormat,
    HttpTransport, Provider, ProviderSpec, SendError, SendRequest, SendResult, HTTP_TIMEOUT,
};
use crate::error::Validator;
use crate::model::{ChannelType, DeliveryErrorCode};
use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};
use std::sync::Arc;

pub const DEFAULT_BASE_URL: &str = "https://exp.host";
/// Expo's limit of messages in one request.
const BATCH: usize = 100;

pub struct Expo(HttpTransport);

static SPEC: ProviderSpec = ProviderSpec {
    name: "expo",
    channel_type: ChannelType::MobilePush,
    summary: "Expo push notifications: one message per Expo push token the recipient registered on the channel.",
    example: || json!({"access_token": "your-expo-access-token"}),
    retry: true,
    fields: &[
        ConfigField {
            name: "access_token",
            required: false,
            secret: true,
            format: FieldFormat::String,
            description: "An Expo access token, sent as `Authorization: Bearer …` (needed when the project enforces push security).",
        },
        ConfigField {
            name: "base_url",
            required: false,
            secret: false,
            format: FieldFormat::Url {
                default: Some(DEFAULT_BASE_URL),
            },
            description: "Push API base URL (a mock or a proxy).",
        },
    ],
    together: &[],
    // the access token goes to `base_url`
    destinations: &["base_url"],
};

/// An Expo push token as the app gets it: `ExponentPushToken[…]` or `ExpoPushToken[…]`.
fn is_push_token(t: &str) -> bool {
    ["ExponentPushToken[", "ExpoPushToken["].iter().any(|p| {
        t.strip_prefix(p)
            .and_then(|r| r.strip_suffix(']'))
            .is_some_and(|inner| !inner.is_empty() && !inner.contains(char::is_whitespace))
    })
}

fn message(req: &SendRequest, token: &str) -> Value {
    let d = &req.delivery;
    let mut data = Map::new();
    data.insert("delivery_id".into(), Value::String(d.id.to_string()));
    if let Some(u) = &d.data.url {
        data.insert("url".into(), Value::String(u.clone()));
    }
    json!({"to": token, "title": d.data.subject, "body": d.data.body, "data": data})
}

/// One ticket of Expo's answer as a device's outcome.
fn ticket(status: u16, t: &Value) -> Device {
    if t["status"] == json!("ok") {
        let mut extra = Map::new();
        extra.insert("status_code".into(), status.into());
        if let Some(id) = t["id"].as_str() {
            extra.insert("message_id".into(), Value::String(id.to_string()));
        }
        return Device::Sent(extra);
    }
    // Expo's own code only, never its message text
    let code = t["details"]["error"].as_str().and_then(error_token);
    let message = answered(status, code);
    Device::Failed(match code.unwrap_or_default() {
        "DeviceNotRegistered" => return Device::Expired(message),
        "MessageRateExceeded" => SendError::Transient {
            message,
            retry_after: None,
        },
        "InvalidCredentials" => SendError::Unauthorized { message },
        _ => SendError::Rejected {
            code: DeliveryErrorCode::ProviderRejected,
            message,
        },
    })
}

impl Provider for Expo {
    fn spec() -> &'static ProviderSpec {
        &SPEC
    }

    fn validate(config: &Map<String, Value>, v: &mut Validator) {
        let f = Fields(config);
        f.want_str("access_token", v);
        f.want_url("base_url", v);
    }

    fn transport(c: &Clients) -> Option<Arc<dyn Provider>> {
        Some(Arc::new(Expo(c.http_transport())))
    }

    fn send(&self, req: SendRequest) -> BoxFuture<'static, SendResult> {
        let HttpTransport { http, guard } = self.0.clone();
        Box::pin(async move {
            if req.subscriptions.is_empty() {
                return settle(vec![]);
            }
            let base = cfg_str(&req.config, "base_url")
                .unwrap_or(DEFAULT_BASE_URL)
                .trim_end_matches('/');
            let url = guard.url(&format!("{base}/--/api/v2/push/send"))?;
            let token = cfg_str(&req.config, "access_token");
            let mut results = Vec::with_capacity(req.subscriptions.len());
            let mut tokens = vec![];
            for sub in &req.subscriptions {
                if is_push_token(&sub.identifier) {
                    tokens.push(sub.identifier.clone());
                } else {
                    results.push((
                        sub.identifier.clone(),
                        Device::Failed(SendError::Rejected {
                            code: DeliveryErrorCode::InvalidAddress,
                            message: "not an Expo push token (ExponentPushToken[…])".into(),
                        }),
                    ));
                }
            }
            for batch in tokens.chunks(BATCH) {
                let body: Vec<Value> = batch.iter().map(|t| message(&req, t)).collect();
                let mut rb = http.post(url.clone()).timeout(HTTP_TIMEOUT).json(&body);
                if let Some(t) = token {
                    rb = rb.bearer_auth(t);
                }
                let resp = match rb.send().await {
                    Ok(r) => r,
                    Err(e) => {
                        let e = transport_error(HTTP_TIMEOUT, e);
                        results
                            .extend(batch.iter().map(|t| (t.clone(), Device::Failed(e.clone()))));
                        continue;
                    }
                };
                let status = resp.status().as_u16();
                let ra = retry_after(resp.headers());
                let v = answer_json(resp).await;
                let tickets = v["data"].as_array().filter(|d| d.len() == batch.len());
                match tickets {
                    Some(tickets) if (200..300).contains(&status) => {
                        for (t, tk) in batch.iter().zip(tickets) {
                            results.push((t.clone(), ticket(status, tk)));
                        }
                    }
                    _ => {
                        // the whole request refused: `errors[].code`, else the status
                        let code = v["errors"][0]["code"].as_str().and_then(error_token);
                        let e = if (200..300).contains(&status) {
                            SendError::Transient {
                                message: format!(
                                    "{}: no ticket per message in the answer",
                                    answered(status, None)
                                ),
                                retry_after: None,
                            }
                        } else {
                            classify_status(status, code, ra)
                        };
                        results
                            .extend(batch.iter().map(|t| (t.clone(), Device::Failed(e.clone()))));
                    }
                }
            }
            settle(results)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_tokens_are_recognised() {
        assert!(is_push_token("ExponentPushToken[xxxxxxxxxxxxxxxxxxxxxx]"));
        assert!(is_push_token("ExpoPushToken[abc]"));
        assert!(!is_push_token("ExponentPushToken[]"));
        assert!(!is_push_token("ExponentPushToken[a b]"));
        assert!(!is_push_token("fcm-token"));
    }

    #[test]
    fn tickets_map_to_device_outcomes() {
        assert!(matches!(
            ticket(200, &json!({"status": "ok", "id": "x"})),
            Device::Sent(_)
        ));
        assert!(matches!(
            ticket(
                200,
                &json!({"status": "error", "details": {"error": "DeviceNotRegistered"}})
            ),
            Device::Expired(_)
        ));
        assert!(matches!(
            ticket(
                200,
                &json!({"status": "error", "details": {"error": "MessageTooBig"}})
            ),
            Device::Failed(SendError::Rejected { .. })
        ));
        assert!(matches!(
            ticket(
                200,
                &json!({"status": "error", "details": {"error": "MessageRateExceeded"}})
            ),
            Device::Failed(SendError::Transient { .. })
        ));
    }
}
