//! sms / `twilio`: one form POST to Twilio's Messages resource
//! (`{base_url}/2010-04-01/Accounts/{account_sid}/Messages.json`, basic auth with
//! the account SID and auth token) with `To`, `From` and `Body`.

use super::{
    answer_json, answered, cfg_str, classify_status, transport_error, webhook::retry_after, Guard,
    Provider, SendError, SendRequest, SendResult, Sent, HTTP_TIMEOUT,
};
use futures_util::future::BoxFuture;
use serde_json::{json, Value};

pub const DEFAULT_BASE_URL: &str = "https://api.twilio.com";
/// Twilio's limit for one message body (longer ones are refused).
const MAX_BODY_CHARS: usize = 1600;

pub struct Twilio {
    http: reqwest::Client,
    guard: Guard,
}

impl Twilio {
    pub fn new(http: reqwest::Client, guard: Guard) -> Self {
        Twilio { http, guard }
    }
}

/// Twilio error codes that mean the number itself cannot receive the message.
fn is_address_error(code: i64) -> bool {
    // 21211 invalid 'To', 21614 not a mobile number, 21217 not a valid phone number
    matches!(code, 21211 | 21614 | 21217)
}

impl Provider for Twilio {
    fn send(&self, req: SendRequest) -> BoxFuture<'static, SendResult> {
        let http = self.http.clone();
        let guard = self.guard.clone();
        Box::pin(async move {
            let to = req
                .recipient
                .as_ref()
                .and_then(|u| u.phone.as_deref())
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .ok_or_else(|| SendError::NoAddress {
                    message: "the recipient has no phone number".into(),
                })?
                .to_string();
            if !crate::validate::is_e164(&to) {
                return Err(SendError::Rejected {
                    code: "invalid_address",
                    message:
                        "the recipient's phone number is not in E.164 form (+ and 8–15 digits)"
                            .into(),
                });
            }
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
                .form(&[("To", to.as_str()), ("From", from), ("Body", text.as_str())])
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
                });
            }
            // Twilio's own error code only, never its message text
            let code = v["code"].as_i64();
            if let Some(c) = code {
                if status == 400 && is_address_error(c) {
                    return Err(SendError::Rejected {
                        code: "invalid_address",
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
