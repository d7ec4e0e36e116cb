//! email / `smtp`: one SMTP transaction per delivery (lettre over tokio, TLS by
//! rustls): `tls` `starttls` (default: STARTTLS required), `tls` (implicit TLS,
//! port 465 style) or `none` (plain, for a local relay or test sink). The body is
//! plain text, with an HTML alternative when the template has `html`; the
//! `Message-ID` is `<DELIVERY_ID@herald>` so a retried message is recognisable.

use super::{cfg_str, Provider, SendError, SendRequest, SendResult, Sent};
use futures_util::future::BoxFuture;
use lettre::message::{header::ContentType, Mailbox, MultiPart, SinglePart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{Address, AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use serde_json::{Map, Value};
use std::time::Duration;

/// Timeout of each SMTP command (connect, every reply).
const SMTP_TIMEOUT: Duration = Duration::from_secs(30);

pub struct Smtp;

impl Smtp {
    pub fn new() -> Self {
        Smtp
    }
}

impl Default for Smtp {
    fn default() -> Self {
        Smtp::new()
    }
}

/// The `Message-ID` of a delivery's email.
pub fn message_id(delivery_id: &uuid::Uuid) -> String {
    format!("<{delivery_id}@herald>")
}

fn transport(config: &Map<String, Value>) -> Result<AsyncSmtpTransport<Tokio1Executor>, SendError> {
    let host = cfg_str(config, "host").unwrap_or("localhost").to_string();
    let port = config
        .get("port")
        .and_then(|p| p.as_u64())
        .and_then(|p| u16::try_from(p).ok())
        .unwrap_or(587);
    let tls_params = || {
        TlsParameters::new(host.clone())
            .map_err(|e| super::misconfigured(format!("TLS setup for {host} failed: {e}")))
    };
    let tls = match cfg_str(config, "tls").unwrap_or("starttls") {
        "none" => Tls::None,
        "tls" => Tls::Wrapper(tls_params()?),
        _ => Tls::Required(tls_params()?),
    };
    let mut b = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(host.clone())
        .port(port)
        .tls(tls)
        .timeout(Some(SMTP_TIMEOUT));
    if let Some(user) = cfg_str(config, "username") {
        let pass = cfg_str(config, "password").unwrap_or_default();
        b = b.credentials(Credentials::new(user.to_string(), pass.to_string()));
    }
    Ok(b.build())
}

/// The rendered email of a delivery to `to`.
fn build_message(req: &SendRequest, to: Mailbox) -> Result<Message, SendError> {
    let from: Mailbox = cfg_str(&req.config, "from")
        .unwrap_or_default()
        .parse()
        .map_err(|e| super::misconfigured(format!("config.from is not a mailbox: {e}")))?;
    let d = &req.delivery;
    let builder = Message::builder()
        .from(from)
        .to(to)
        .subject(d.data.subject.clone())
        .message_id(Some(message_id(&d.id)));
    let text = d.data.body.clone();
    let built = match d.data.html.as_deref().filter(|h| !h.is_empty()) {
        Some(html) => builder.multipart(MultiPart::alternative_plain_html(text, html.to_string())),
        None => builder.singlepart(
            SinglePart::builder()
                .header(ContentType::TEXT_PLAIN)
                .body(text),
        ),
    };
    built.map_err(|e| SendError::Rejected {
        code: "provider_rejected",
        message: format!("cannot build the message: {e}"),
    })
}

/// SMTP reply classes (RFC 5321 §4.2.1): 4xx transient, 5xx permanent; 530/534/535
/// (authentication required, mechanism too weak, credentials invalid) unauthorized.
fn classify(e: lettre::transport::smtp::Error) -> SendError {
    let message = format!("SMTP: {e}");
    if let Some(code) = e.status() {
        let n: u16 = code.into();
        return match n {
            530 | 534 | 535 => SendError::Unauthorized { message },
            500..=599 => SendError::Rejected {
                code: "provider_rejected",
                message,
            },
            _ => SendError::Transient {
                message,
                retry_after: None,
            },
        };
    }
    // connection refused or reset, timeouts, TLS handshakes, garbled replies
    SendError::Transient {
        message,
        retry_after: None,
    }
}

impl Provider for Smtp {
    fn send(&self, req: SendRequest) -> BoxFuture<'static, SendResult> {
        Box::pin(async move {
            let user = req.recipient.as_ref();
            let email = user
                .and_then(|u| u.email.as_deref())
                .map(str::trim)
                .filter(|e| !e.is_empty())
                .ok_or_else(|| SendError::NoAddress {
                    message: "the recipient has no email address".into(),
                })?;
            let address: Address = email.parse().map_err(|_| SendError::Rejected {
                code: "invalid_address",
                message: "the recipient's email address is not valid".into(),
            })?;
            let name = user.and_then(|u| {
                let n = [u.first_name.as_deref(), u.last_name.as_deref()]
                    .into_iter()
                    .flatten()
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join(" ");
                (!n.is_empty()).then_some(n)
            });
            let msg = build_message(&req, Mailbox::new(name, address))?;
            let mailer = transport(&req.config)?;
            mailer.send(msg).await.map_err(classify)?;
            Ok(Sent::default())
        })
    }
}
