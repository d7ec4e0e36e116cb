//! sms / `twilio`: one form POST to Twilio's Messages resource
//! (`{base_url}/2010-04-01/Accounts/{account_sid}/Messages.json`, basic auth with
//! the account SID and auth token) with `To`, `From` and `Body`.

use super::{
    answer_json, answered, cfg_str,
    channel::{Fields, ALPHANUMERIC},
    classify_status, transport_error,
    webhook::retry_after,
    Clients, ConfigField, FieldFormat, HttpTransport, Provider, ProviderSpec, SendError,
    SendRequest, SendResult, Sent, HTTP_TIMEOUT,
};
use crate::error::Validator;
use crate::model::{ChannelType, DeliveryErrorCode};
use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};
use std::sync::Arc;

pub const DEFAULT_BASE_URL: &str = "https://api.twilio.com";
/// A sending number as `validate::is_e164` takes it.
const E164: &str = r"^\+[1-9][0-9]{7,14}$";
/// Twilio's limit for one message body (longer ones are refused).
const MAX_BODY_CHARS: usize = 1600;

/// The form of one message: `StatusCallback` names Herald's callback URL
/// of the channel when the server has a public URL, so Twilio reports the
/// message's delivery (`feedback::twilio`).
fn form<'a>(
    to: &'a str, from: &'a str, body: &'a str, callback: Option<&'a str>,
) -> Vec<(&'static str, &'a str)> {
    let mut f = vec![("To", to), ("From", from), ("Body", body)];
    if let Some(url) = callback {
        f.push(("StatusCallback", url));
    }
    f
}

pub struct Twilio(HttpTransport);

static SPEC: ProviderSpec = ProviderSpec {
    name: "twilio",
    channel_type: ChannelType::Sms,
    summary:
        "Twilio Programmable Messaging: one SMS per delivery to the recipient's `phone` (E.164).",
    example: || {
        json!({"account_sid": "AC0123456789abcdef0123456789abcdef", "auth_token": "your-auth-token",
               "from": "+15005550006"})
    },
    retry: true,
    fields: &[
        ConfigField {
            name: "account_sid",
            required: true,
            secret: false,
            format: FieldFormat::Pattern(ALPHANUMERIC),
            description: "Account SID (`AC…`); basic-auth user.",
        },
        ConfigField {
            name: "auth_token",
            required: true,
            secret: true,
            format: FieldFormat::String,
            description: "Auth token; basic-auth password.",
        },
        ConfigField {
            name: "from",
            required: true,
            secret: false,
            format: FieldFormat::Pattern(E164),
            description: "Sending number in E.164 form (`+15005550006`).",
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
    // the token is basic auth to `base_url`, as `account_sid`
    destinations: &["base_url", "account_sid"],
};

/// Twilio error codes that mean the number itself cannot receive the message.
fn is_address_error(code: i64) -> bool {
    // 21211 invalid 'To', 21614 not a mobile number, 21217 not a valid phone number
    matches!(code, 21211 | 21614 | 21217)
}

/// A sender of the SMS providers that take one by name (Vonage,
/// MessageBird): a number of up to 15 digits (`+` optional) or an
/// alphanumeric sender id of at most 11 characters.
pub(crate) fn sms_sender_ok(s: &str) -> bool {
    let digits = s.strip_prefix('+').unwrap_or(s);
    let number = (1..=15).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit());
    let alnum =
        (1..=11).contains(&s.len()) && s.chars().all(|c| c.is_ascii_alphanumeric() || c == ' ');
    number || alnum
}

/// The recipient's `phone`, checked to be E.164: none is `NoAddress` (the
/// delivery is skipped), another form `invalid_address`. Every SMS provider
/// reads it this way.
pub(crate) fn recipient_phone(req: &SendRequest) -> Result<String, SendError> {
    let to = req
        .recipient
        .as_ref()
        .and_then(|u| u.phone.as_deref())
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .ok_or_else(|| SendError::NoAddress {
            message: "the recipient has no phone number".into(),
        })?;
    if !crate::validate::is_e164(to) {
        return Err(SendError::Rejected {
            code: DeliveryErrorCode::InvalidAddress,
            message: "the recipient's phone number is not in E.164 form (+ and 8–15 digits)".into(),
        });
    }
    Ok(to.to_string())
}

impl Provider for Twilio {
    fn spec() -> &'static ProviderSpec {
        &SPEC
    }

    fn validate(config: &Map<String, Value>, v: &mut Validator) {
        let f = Fields(config);
        f.want_chars(
            "account_sid",
            |c| c.is_ascii_alphanumeric(),
            "an account SID: letters and digits (AC…)",
            v,
        );
        f.want_str("auth_token", v);
        f.want_format(
            "from",
            crate::validate::is_e164,
            "must be an E.164 phone number",
            v,
        );
        f.want_url("base_url", v);
    }

    fn transport(c: &Clients) -> Option<Arc<dyn Provider>> {
        Some(Arc::new(Twilio(c.http_transport())))
    }

    fn send(&self, req: SendRequest) -> BoxFuture<'static, SendResult> {
        let HttpTransport { http, guard } = self.0.clone();
        Box::pin(async move {
            let to = recipient_phone(&req)?;
            let sid = cfg_str(&req.config, "account_sid").unwrap_or_default();
            let token = cfg_str(&req.config, "auth_token").unwrap_or_default();
            let from = cfg_str(&req.config, "from").unwrap_or_default();
            let base = cfg_str(&req.config, "base_url")
                .unwrap_or(DEFAULT_BASE_URL)
                .trim_end_matches('/');
            let url = guard.url(&format!("{base}/2010-04-01/Accounts/{sid}/Messages.json"))?;
            let text: String = req
                .delivery
                .data
                .body
                .chars()
                .take(MAX_BODY_CHARS)
                .collect();
            let resp = http
                .post(url)
                .timeout(HTTP_TIMEOUT)
                .basic_auth(sid, Some(token))
                // Twilio does not deduplicate, but the id travels for the logs
                .header("idempotency-key", req.delivery.id.to_string())
                .form(&form(&to, from, &text, req.callback_url.as_deref()))
                .send()
                .await
                .map_err(|e| transport_error(HTTP_TIMEOUT, e))?;
            let status = resp.status().as_u16();
            let ra = retry_after(resp.headers());
            let v: Value = answer_json(resp).await;
            if (200..300).contains(&status) {
                let mut o = json!({"identifier": to, "status": "sent"});
                if let Some(sid) = v["sid"].as_str() {
                    o["message_id"] = json!(sid);
                }
                if let Some(st) = v["status"].as_str() {
                    o["provider_status"] = json!(st);
                }
                return Ok(Sent {
                    outcomes: Some(json!([o])),
                    expired: vec![],
                    status_code: Some(status),
                });
            }
            // Twilio's own error code only, never its message text
            let code = v["code"].as_i64();
            if let Some(c) = code {
                if status == 400 && is_address_error(c) {
                    return Err(SendError::Rejected {
                        code: DeliveryErrorCode::InvalidAddress,
                        message: format!(
                            "{}: Twilio refused the number",
                            answered(status, Some(&c.to_string()))
                        ),
                    });
                }
            }
            Err(classify_status(
                status,
                code.map(|c| c.to_string()).as_deref(),
                ra,
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::spec::testing::pattern_agrees;

    #[test]
    fn the_sid_and_number_patterns_are_the_checks() {
        pattern_agrees::<Twilio>(
            "account_sid",
            &[
                ("AC0123456789abcdef", true),
                ("", true),
                ("AC-1", false),
                ("AC 1", false),
            ],
        );
        pattern_agrees::<Twilio>(
            "from",
            &[
                ("+15005550006", true),
                ("+123456789012345", true),
                ("15005550006", false),
                ("+0123456789", false),
                ("+1234567", false),
                ("+1234567890123456", false),
                ("+1500555000a", false),
                ("", false),
            ],
        );
    }
}
