//! sms / `messagebird`: one JSON POST to MessageBird's Messages resource
//! (`{base_url}/messages`, `Authorization: AccessKey <access_key>`) with the
//! `originator`, the recipient's number (E.164 digits without the `+`) and the
//! body; 201 with the message's `id`, errors as `errors[].code`.

use super::{
    answer_json, answered, cfg_str,
    channel::Fields,
    classify_status, transport_error,
    twilio::{recipient_phone, sms_sender_ok},
    webhook::retry_after,
    Clients, ConfigField, FieldFormat, HttpTransport, Provider, ProviderSpec, SendError,
    SendRequest, SendResult, Sent, HTTP_TIMEOUT,
};
use crate::error::Validator;
use crate::model::{ChannelType, DeliveryErrorCode};
use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};
use std::sync::Arc;

pub const DEFAULT_BASE_URL: &str = "https://rest.messagebird.com";
/// The longest body sent (MessageBird splits it into concatenated parts).
const MAX_BODY_CHARS: usize = 1377;
/// An originator as MessageBird takes it: a number (an optional `+` and
/// digits) or an alphanumeric sender of at most 11 characters.
const ORIGINATOR: &str = r"^(?:\+?[0-9]{1,15}|[A-Za-z0-9 ]{1,11})$";

pub struct MessageBird(HttpTransport);

static SPEC: ProviderSpec = ProviderSpec {
    name: "messagebird",
    channel_type: ChannelType::Sms,
    summary: "MessageBird (Bird) SMS API: one SMS per delivery to the recipient's `phone` (E.164).",
    example: || json!({"access_key": "your-live-access-key", "originator": "Herald"}),
    retry: true,
    fields: &[
        ConfigField {
            name: "access_key",
            required: true,
            secret: true,
            format: FieldFormat::String,
            description: "The access key (`Authorization: AccessKey …`).",
        },
        ConfigField {
            name: "originator",
            required: true,
            secret: false,
            format: FieldFormat::Pattern(ORIGINATOR),
            description: "Sender: a number (`+31612345678`) or an alphanumeric sender of at most 11 characters.",
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
    // the access key goes to `base_url`
    destinations: &["base_url"],
};

/// An error answer: MessageBird's `errors[].code` 2 (request not allowed: a
/// wrong or test key) is unauthorized, 9 (no valid recipient) an invalid
/// address; else the status decides. Only the code is kept, never the
/// description.
fn answer_error(status: u16, v: &Value, ra: Option<std::time::Duration>) -> SendError {
    let codes: Vec<i64> = v["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["code"].as_i64())
        .collect();
    let first = codes.first().map(|c| c.to_string());
    if matches!(status, 408 | 429 | 500..=599) {
        return classify_status(status, first.as_deref(), ra);
    }
    if codes.contains(&2) {
        return SendError::Unauthorized {
            message: answered(status, Some("2")),
        };
    }
    if codes.contains(&9) {
        return SendError::Rejected {
            code: DeliveryErrorCode::InvalidAddress,
            message: format!(
                "{}: MessageBird refused the number",
                answered(status, Some("9"))
            ),
        };
    }
    classify_status(status, first.as_deref(), ra)
}

impl Provider for MessageBird {
    fn spec() -> &'static ProviderSpec {
        &SPEC
    }

    fn validate(config: &Map<String, Value>, v: &mut Validator) {
        let f = Fields(config);
        f.want_str("access_key", v);
        f.want_format(
            "originator",
            sms_sender_ok,
            "a number or an alphanumeric sender of at most 11 characters",
            v,
        );
        f.want_url("base_url", v);
    }

    fn transport(c: &Clients) -> Option<Arc<dyn Provider>> {
        Some(Arc::new(MessageBird(c.http_transport())))
    }

    fn send(&self, req: SendRequest) -> BoxFuture<'static, SendResult> {
        let HttpTransport { http, guard } = self.0.clone();
        Box::pin(async move {
            let phone = recipient_phone(&req)?;
            let msisdn = phone.trim_start_matches('+').to_string();
            let key = cfg_str(&req.config, "access_key").unwrap_or_default();
            let originator = cfg_str(&req.config, "originator").unwrap_or_default();
            let base = cfg_str(&req.config, "base_url")
                .unwrap_or(DEFAULT_BASE_URL)
                .trim_end_matches('/');
            let url = guard.url(&format!("{base}/messages"))?;
            let body: String = req
                .delivery
                .data
                .body
                .chars()
                .take(MAX_BODY_CHARS)
                .collect();
            let resp = http
                .post(url)
                .timeout(HTTP_TIMEOUT)
                .header("authorization", format!("AccessKey {key}"))
                .json(&json!({
                    "originator": originator,
                    "recipients": [msisdn],
                    "body": body,
                    "reference": req.delivery.id.to_string(),
                }))
                .send()
                .await
                .map_err(|e| transport_error(HTTP_TIMEOUT, e))?;
            let status = resp.status().as_u16();
            let ra = retry_after(resp.headers());
            let v: Value = answer_json(resp).await;
            if (200..300).contains(&status) {
                let mut o = json!({"identifier": phone, "status": "sent"});
                if let Some(id) = v["id"].as_str() {
                    o["message_id"] = json!(id);
                }
                return Ok(Sent {
                    outcomes: Some(json!([o])),
                    expired: vec![],
                    status_code: Some(status),
                });
            }
            Err(answer_error(status, &v, ra))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::spec::testing::pattern_agrees;

    #[test]
    fn the_originator_pattern_is_the_check() {
        pattern_agrees::<MessageBird>(
            "originator",
            &[
                ("Herald", true),
                ("31612345678", true),
                ("+31612345678", true),
                ("TwelveChars1", false),
                ("Herald!", false),
                ("", false),
            ],
        );
    }

    #[test]
    fn error_codes_map_to_outcomes() {
        let e = |s, v| answer_error(s, &v, None);
        assert!(matches!(
            e(401, json!({"errors": [{"code": 2}]})),
            SendError::Unauthorized { .. }
        ));
        assert!(matches!(
            e(
                422,
                json!({"errors": [{"code": 9, "parameter": "recipient"}]})
            ),
            SendError::Rejected {
                code: DeliveryErrorCode::InvalidAddress,
                ..
            }
        ));
        assert!(matches!(
            e(422, json!({"errors": [{"code": 25}]})),
            SendError::Rejected {
                code: DeliveryErrorCode::ProviderRejected,
                ..
            }
        ));
        assert!(matches!(
            e(503, json!({"errors": [{"code": 2}]})),
            SendError::Transient { .. }
        ));
    }
}
