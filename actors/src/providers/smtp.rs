//! email / `smtp`: one SMTP transaction per delivery (lettre over tokio, TLS by
//! rustls): `tls` `starttls` (default: STARTTLS required), `tls` (implicit TLS,
//! port 465 style) or `none` (plain, for a local relay or test sink). The body is
//! plain text, with an HTML alternative when the template has `html`; the
//! `Message-ID` is `<DELIVERY_ID@herald>` so a retried message is recognisable.

use super::{
    cfg_str, channel::Fields, Clients, ConfigField, FieldFormat, Guard, Provider, ProviderSpec,
    SendError, SendRequest, SendResult, Sent,
};
use crate::error::Validator;
use crate::model::{ChannelType, DeliveryErrorCode};
use futures_util::future::BoxFuture;
use lettre::message::header::{ContentType, HeaderName, HeaderValue};
use lettre::message::{Mailbox, MultiPart, SinglePart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{Address, AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use serde_json::{json, Map, Value};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

/// A sender as [`is_sender`] takes it: an email address as
/// `validate::is_email` reads it, or a `Name <address>` form (anything with a
/// `<`, which lettre parses when sending).
pub(crate) const SENDER: &str =
    r"^([\s\S]*<[\s\S]*|[^\s\x00-\x1f\x7f-\x9f@]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+)$";

/// The rule [`SENDER`] states.
pub(crate) fn is_sender(from: &str) -> bool {
    crate::validate::is_email(from) || from.contains('<')
}

/// Timeout of each SMTP command (connect, every reply).
const SMTP_TIMEOUT: Duration = Duration::from_secs(30);

pub struct Smtp {
    guard: Guard,
}

static SPEC: ProviderSpec = ProviderSpec {
    name: "smtp",
    channel_type: ChannelType::Email,
    summary: "One SMTP transaction per delivery to the recipient's `email`.",
    example: || {
        json!({"host": "smtp.example.com", "port": 587, "tls": "starttls", "username": "herald",
               "password": "app-password", "from": "Herald <noreply@example.com>"})
    },
    retry: true,
    fields: &[
        ConfigField {
            name: "host",
            required: true,
            secret: false,
            format: FieldFormat::Host,
            description: "SMTP server host name or address (no scheme, no port).",
        },
        ConfigField {
            name: "port",
            required: true,
            secret: false,
            format: FieldFormat::Integer {
                min: 1,
                max: 65535,
                default: None,
            },
            description: "587 (STARTTLS), 465 (implicit TLS), 25 or a local relay's port.",
        },
        ConfigField {
            name: "from",
            required: true,
            secret: false,
            format: FieldFormat::Pattern(SENDER),
            description: "Sender: `addr@example.com` or `Name <addr@example.com>`.",
        },
        ConfigField {
            name: "tls",
            required: false,
            secret: false,
            format: FieldFormat::OneOf {
                values: TLS_MODES,
                default: "starttls",
            },
            description: "`starttls` (required, usually port 587), `tls` (implicit, port 465), `none` (plain, a local relay only).",
        },
        ConfigField {
            name: "username",
            required: false,
            secret: false,
            format: FieldFormat::String,
            description: "SMTP AUTH user (no AUTH without it).",
        },
        ConfigField {
            name: "password",
            required: false,
            secret: true,
            format: FieldFormat::String,
            description: "SMTP AUTH password.",
        },
    ],
    together: &[],
    // the password goes to `host`:`port` over `tls` (`none` sends it in clear)
    // as `username`
    destinations: &["host", "port", "tls", "username"],
};

const TLS_MODES: &[&str] = &["none", "starttls", "tls"];

/// The `Message-ID` of a delivery's email.
pub fn message_id(delivery_id: &uuid::Uuid) -> String {
    format!("<{delivery_id}@herald>")
}

/// The server's host and port as configured.
fn server(config: &Map<String, Value>) -> (String, u16) {
    let host = cfg_str(config, "host")
        .unwrap_or("localhost")
        .trim()
        .to_string();
    let port = config
        .get("port")
        .and_then(|p| p.as_u64())
        .and_then(|p| u16::try_from(p).ok())
        .unwrap_or(587);
    (host, port)
}

/// The address to connect to: the host resolved here and checked by the egress
/// policy (lettre would resolve it itself, out of the guard's sight). The first
/// allowed address is used: an SMTP transaction is not retried on another address
/// (it may have been accepted), the delivery's retry does that.
async fn checked_address(guard: &Guard, host: &str, port: u16) -> Result<IpAddr, SendError> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match guard.policy().resolve(bare, port).await {
        Ok(addrs) => addrs
            .first()
            .map(|a| a.ip())
            .ok_or_else(|| super::misconfigured(format!("{host} has no address"))),
        Err(e) => Err(
            match crate::egress::find_cause::<crate::egress::Refused>(&*e) {
                Some(r) => super::refused_error(r),
                None => SendError::Transient {
                    message: format!("DNS lookup failed for {host}:{port}"),
                    retry_after: None,
                },
            },
        ),
    }
}

/// The transport to `ip`, TLS verified against the configured host name (so SNI
/// and the certificate check are the name's, the connection the checked address).
fn transport(
    config: &Map<String, Value>, host: &str, port: u16, ip: IpAddr,
) -> Result<AsyncSmtpTransport<Tokio1Executor>, SendError> {
    let tls_name = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let tls_params = || {
        TlsParameters::new(tls_name.clone())
            .map_err(|e| super::misconfigured(format!("TLS setup for {host} failed: {e}")))
    };
    let tls = match cfg_str(config, "tls").unwrap_or("starttls") {
        "none" => Tls::None,
        "tls" => Tls::Wrapper(tls_params()?),
        _ => Tls::Required(tls_params()?),
    };
    let mut b = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(ip.to_string())
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
    let mut builder = Message::builder()
        .from(from)
        .to(to)
        .subject(d.data.subject.clone())
        .message_id(Some(message_id(&d.id)));
    // a commercial flow's one-click unsubscribe (RFC 8058)
    if let Some(url) = req.unsubscribe_url.as_deref() {
        for (name, value) in crate::rules::unsubscribe_link::headers(url) {
            let name = HeaderName::new_from_ascii_str(name);
            builder = builder.raw_header(HeaderValue::new(name, value));
        }
    }
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
        code: DeliveryErrorCode::ProviderRejected,
        message: format!("cannot build the message: {e}"),
    })
}

/// SMTP reply classes (RFC 5321 §4.2.1): 4xx transient, 5xx permanent; 530/534/535
/// (authentication required, mechanism too weak, credentials invalid) unauthorized.
/// Only the reply code and its enhanced status code (`5.1.1`, RFC 3463) are kept,
/// never the server's text; failures without a reply are said in plain words.
fn classify(e: lettre::transport::smtp::Error, host: &str, port: u16) -> SendError {
    if let Some(code) = e.status() {
        let n: u16 = code.into();
        let message = match enhanced_code(&e) {
            Some(x) => format!("SMTP server answered {n} ({x})"),
            None => format!("SMTP server answered {n}"),
        };
        return match n {
            530 | 534 | 535 => SendError::Unauthorized { message },
            500..=599 => SendError::Rejected {
                code: DeliveryErrorCode::ProviderRejected,
                message,
            },
            _ => SendError::Transient {
                message,
                retry_after: None,
            },
        };
    }
    let io_kind = crate::egress::find_cause::<std::io::Error>(&e).map(|io| io.kind());
    let message = if e.is_timeout() || io_kind == Some(std::io::ErrorKind::TimedOut) {
        format!(
            "timed out after {} s waiting for {host}:{port}",
            SMTP_TIMEOUT.as_secs()
        )
    } else if io_kind == Some(std::io::ErrorKind::ConnectionRefused) {
        format!("connection refused by {host}:{port}")
    } else if e.is_tls() {
        format!("TLS handshake with {host}:{port} failed")
    } else if io_kind == Some(std::io::ErrorKind::ConnectionReset) {
        format!("connection reset by {host}:{port}")
    } else {
        format!("the SMTP session with {host}:{port} failed")
    };
    // connection refused or reset, timeouts, TLS handshakes, garbled replies
    SendError::Transient {
        message,
        retry_after: None,
    }
}

/// The enhanced status code at the start of a reply's text (`5.1.1 user unknown`).
fn enhanced_code(e: &lettre::transport::smtp::Error) -> Option<String> {
    let text = std::error::Error::source(e)?.to_string();
    let first = text.split_whitespace().next()?;
    let parts: Vec<&str> = first.split('.').collect();
    (parts.len() == 3
        && matches!(parts[0], "2" | "4" | "5")
        && parts[1..]
            .iter()
            .all(|p| (1..=3).contains(&p.len()) && p.chars().all(|c| c.is_ascii_digit())))
    .then(|| first.to_string())
}

impl Provider for Smtp {
    fn spec() -> &'static ProviderSpec {
        &SPEC
    }

    fn validate(config: &Map<String, Value>, v: &mut Validator) {
        let f = Fields(config);
        for k in ["host", "from", "username", "password"] {
            f.want_str(k, v);
        }
        f.want_integer("port", 1..=65535, "a port number from 1 to 65535", v);
        if let Some(from) = f.str("from") {
            if !is_sender(from) {
                v.push("config.from", "format", "must be an email address");
            }
        }
        f.want_one_of("tls", TLS_MODES, v);
    }

    fn transport(c: &Clients) -> Option<Arc<dyn Provider>> {
        Some(Arc::new(Smtp {
            guard: c.guard.clone(),
        }))
    }

    fn send(&self, req: SendRequest) -> BoxFuture<'static, SendResult> {
        let guard = self.guard.clone();
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
                code: DeliveryErrorCode::InvalidAddress,
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
            let (host, port) = server(&req.config);
            let ip = checked_address(&guard, &host, port).await?;
            let mailer = transport(&req.config, &host, port, ip)?;
            let reply = mailer
                .send(msg)
                .await
                .map_err(|e| classify(e, &host, port))?;
            Ok(Sent::answered(reply.code().into()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::spec::testing::pattern_agrees;

    #[test]
    fn the_sender_pattern_is_the_check() {
        pattern_agrees::<Smtp>(
            "from",
            &[
                ("noreply@example.com", true),
                ("Herald <noreply@example.com>", true),
                ("<", true),
                ("noreply", false),
                ("a b@example.com", false),
                ("a@example", false),
                ("a@ex_ample.com", false),
                ("", false),
            ],
        );
    }
}
