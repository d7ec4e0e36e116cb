//! sms / `vonage`: one form POST to Vonage's SMS API (`{base_url}/sms/json`)
//! with `api_key`, `api_secret`, `from`, `to` (E.164 digits without the `+`)
//! and `text`. Vonage answers HTTP 200 for refusals too: the outcome is
//! `messages[0].status` ("0" accepted, with its `message-id`).

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
use crate::feedback::vonage as vonage_hooks;
use crate::model::{ChannelType, DeliveryErrorCode};
use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};
use std::sync::Arc;

pub const DEFAULT_BASE_URL: &str = "https://rest.nexmo.com";
/// The longest text sent (Vonage splits it into concatenated parts).
const MAX_TEXT_CHARS: usize = 1600;
/// A sender as Vonage takes it: a number (an optional `+` and digits) or an
/// alphanumeric sender id of at most 11 characters.
const SENDER: &str = r"^(?:\+?[0-9]{1,15}|[A-Za-z0-9 ]{1,11})$";

pub struct Vonage(HttpTransport);

static SPEC: ProviderSpec = ProviderSpec {
    name: "vonage",
    channel_type: ChannelType::Sms,
    summary: "Vonage (Nexmo) SMS API: one SMS per delivery to the recipient's `phone` (E.164).",
    example: || json!({"api_key": "abcd1234", "api_secret": "your-api-secret", "from": "Herald"}),
    retry: true,
    fields: &[
        ConfigField {
            name: "api_key",
            required: true,
            secret: false,
            format: FieldFormat::Pattern(super::channel::ALPHANUMERIC),
            description: "The account's API key.",
        },
        ConfigField {
            name: "api_secret",
            required: true,
            secret: true,
            format: FieldFormat::String,
            description: "The account's API secret.",
        },
        ConfigField {
            name: "from",
            required: true,
            secret: false,
            format: FieldFormat::Pattern(SENDER),
            description: "Sender: a number (`+447700900000` or `447700900000`) or an alphanumeric sender id of at most 11 characters.",
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
        ConfigField {
            name: vonage_hooks::SECRET_FIELD,
            required: false,
            secret: true,
            format: FieldFormat::String,
            description: "The account's signature secret (Vonage's dashboard, API settings): delivery receipts at `/hooks/v1/{channel_id}` must be signed with it. Not needed to send.",
        },
        ConfigField {
            name: vonage_hooks::METHOD_FIELD,
            required: false,
            secret: false,
            format: FieldFormat::OneOf {
                values: vonage_hooks::METHODS,
                default: "md5hash",
            },
            description: "The signature method chosen with the secret in Vonage's dashboard: `md5hash` (Vonage's default), or the HMAC `md5`, `sha1`, `sha256`, `sha512`.",
        },
    ],
    together: &[],
    // the secret goes to `base_url`, for `api_key`
    destinations: &["base_url", "api_key"],
};

/// A non-zero `messages[].status` of Vonage's answer as an error.
fn status_error(http: u16, code: &str) -> SendError {
    let message = answered(http, Some(&format!("status-{code}")));
    match code {
        // 1 throttled, 5 internal error, 9 partner quota exceeded
        "1" | "5" | "9" => SendError::Transient {
            message,
            retry_after: None,
        },
        // 4 invalid credentials, 8 partner account barred
        "4" | "8" => SendError::Unauthorized { message },
        // 6 invalid (unroutable) message, 7 number barred, 29 non-whitelisted destination
        "6" | "7" | "29" => SendError::Rejected {
            code: DeliveryErrorCode::InvalidAddress,
            message,
        },
        // 2 missing parameters, 3 invalid parameters, others
        _ => SendError::Rejected {
            code: DeliveryErrorCode::ProviderRejected,
            message,
        },
    }
}

impl Provider for Vonage {
    fn spec() -> &'static ProviderSpec {
        &SPEC
    }

    fn validate(config: &Map<String, Value>, v: &mut Validator) {
        let f = Fields(config);
        f.want_chars(
            "api_key",
            |c| c.is_ascii_alphanumeric(),
            "an API key: letters and digits",
            v,
        );
        f.want_str("api_secret", v);
        f.want_format(
            "from",
            sms_sender_ok,
            "a number or an alphanumeric sender id of at most 11 characters",
            v,
        );
        f.want_url("base_url", v);
        f.want_str(vonage_hooks::SECRET_FIELD, v);
        f.want_one_of(vonage_hooks::METHOD_FIELD, vonage_hooks::METHODS, v);
    }

    fn transport(c: &Clients) -> Option<Arc<dyn Provider>> {
        Some(Arc::new(Vonage(c.http_transport())))
    }

    fn send(&self, req: SendRequest) -> BoxFuture<'static, SendResult> {
        let HttpTransport { http, guard } = self.0.clone();
        Box::pin(async move {
            let phone = recipient_phone(&req)?;
            let to = phone.trim_start_matches('+');
            let key = cfg_str(&req.config, "api_key").unwrap_or_default();
            let secret = cfg_str(&req.config, "api_secret").unwrap_or_default();
            let from = cfg_str(&req.config, "from").unwrap_or_default();
            let from = from.strip_prefix('+').unwrap_or(from);
            let base = cfg_str(&req.config, "base_url")
                .unwrap_or(DEFAULT_BASE_URL)
                .trim_end_matches('/');
            let url = guard.url(&format!("{base}/sms/json"))?;
            let text: String = req
                .delivery
                .data
                .body
                .chars()
                .take(MAX_TEXT_CHARS)
                .collect();
            let client_ref = req.delivery.id.to_string();
            let mut form = vec![
                ("api_key", key),
                ("api_secret", secret),
                ("from", from),
                ("to", to),
                ("text", text.as_str()),
                ("client-ref", client_ref.as_str()),
            ];
            if !text.is_ascii() {
                // beyond ASCII the GSM alphabet may not hold it: UCS-2 always does
                form.push(("type", "unicode"));
            }
            let resp = http
                .post(url)
                .timeout(HTTP_TIMEOUT)
                .form(&form)
                .send()
                .await
                .map_err(|e| transport_error(HTTP_TIMEOUT, e))?;
            let status = resp.status().as_u16();
            let ra = retry_after(resp.headers());
            let v: Value = answer_json(resp).await;
            if !(200..300).contains(&status) {
                return Err(classify_status(status, None, ra));
            }
            let first = &v["messages"][0];
            // the status is a string of digits in the answer; a number is read too
            let code = first["status"]
                .as_str()
                .map(str::to_string)
                .or_else(|| first["status"].as_u64().map(|n| n.to_string()));
            match code.as_deref() {
                Some("0") => {
                    let mut o = json!({"identifier": phone, "status": "sent"});
                    if let Some(id) = first["message-id"].as_str() {
                        o["message_id"] = json!(id);
                    }
                    Ok(Sent {
                        outcomes: Some(json!([o])),
                        expired: vec![],
                        status_code: Some(status),
                    })
                }
                Some(c) if c.bytes().all(|b| b.is_ascii_digit()) => Err(status_error(status, c)),
                _ => Err(SendError::Transient {
                    message: format!(
                        "{}: no message status in the answer",
                        answered(status, None)
                    ),
                    retry_after: None,
                }),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::spec::testing::pattern_agrees;

    #[test]
    fn the_sender_pattern_is_the_check() {
        pattern_agrees::<Vonage>(
            "from",
            &[
                ("Herald", true),
                ("My Shop", true),
                ("447700900000", true),
                ("+447700900000", true),
                ("TwelveChars1", false),
                ("+Herald", false),
                ("Herald!", false),
                ("", false),
            ],
        );
    }

    #[test]
    fn statuses_map_to_outcomes() {
        assert!(matches!(
            status_error(200, "1"),
            SendError::Transient { .. }
        ));
        assert!(matches!(
            status_error(200, "9"),
            SendError::Transient { .. }
        ));
        assert!(matches!(
            status_error(200, "4"),
            SendError::Unauthorized { .. }
        ));
        for c in ["6", "29"] {
            assert!(matches!(
                status_error(200, c),
                SendError::Rejected {
                    code: DeliveryErrorCode::InvalidAddress,
                    ..
                }
            ));
        }
        for c in ["2", "3", "15"] {
            assert!(matches!(
                status_error(200, c),
                SendError::Rejected {
                    code: DeliveryErrorCode::ProviderRejected,
                    ..
                }
            ));
        }
    }
}
