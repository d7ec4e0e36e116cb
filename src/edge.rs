//! The connection edge: gives the contract's error object to the few answers
//! that actix-http's HTTP/1 dispatcher writes by itself, before any application
//! code runs, with an empty body: 431 for a request head that is too large (more
//! than 96 headers or 128 KiB, limits fixed inside actix-http), 400 for a request
//! it cannot parse, 408 for a request head that never finished arriving.
//!
//! actix-http has no hook for these responses, so each connection's stream is
//! wrapped: a write that ends with such a bodiless error head (no content type,
//! nothing after the blank line) is rewritten to the same status with the error
//! object, a request id and `connection: close`. Everything the application
//! answers carries a content type and passes through untouched.

use actix_web::rt::net::TcpStream;
use herald_engine::{Error, ErrorCode};
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A connection whose dispatcher-made error answers get a body.
pub struct ErrorBodies<T> {
    io: T,
    /// Bytes still to write in place of what the dispatcher handed us, and how
    /// many of them are written.
    pending: Option<(Vec<u8>, usize)>,
}

impl<T> ErrorBodies<T> {
    pub fn new(io: T) -> Self {
        ErrorBodies { io, pending: None }
    }

    /// The connection itself, for a WebSocket taken over after its 101 (the
    /// dispatcher writes nothing more on it). `None` while a rewrite is still
    /// being written.
    pub fn into_inner(self) -> Option<T> {
        self.pending.is_none().then_some(self.io)
    }
}

/// Where a bodiless error head starts in `buf`, if `buf` ends with one (the
/// dispatcher writes it last, then closes the connection).
fn bodiless_error_head(buf: &[u8]) -> Option<(usize, u16)> {
    if !buf.ends_with(b"\r\n\r\n") {
        return None;
    }
    // The last status line: a pipelined answer's body may come right before it.
    let start = buf.windows(7).rposition(|w| w == b"HTTP/1.")?;
    let head = &buf[start..];
    // exactly one blank line: the head ends the buffer, no body follows
    if find(head, b"\r\n\r\n")? + 4 != head.len() {
        return None;
    }
    let status: u16 = std::str::from_utf8(head.get(9..12)?).ok()?.parse().ok()?;
    if !(400..=599).contains(&status) {
        return None;
    }
    let lower = head.to_ascii_lowercase();
    if find(&lower, b"\r\ncontent-type:").is_some() {
        return None;
    }
    Some((start, status))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The full response that replaces a bodiless error head of `status`.
fn error_response(status: u16) -> Vec<u8> {
    let (code, reason, why, message) = match status {
        431 => (
            ErrorCode::HeadersTooLarge,
            "Request Header Fields Too Large",
            "headers_too_large",
            "the request head is too large: at most 96 headers and 128 KiB in all",
        ),
        408 => (
            ErrorCode::RequestTimeout,
            "Request Timeout",
            "request_timeout",
            "the request head did not arrive in time",
        ),
        _ => (
            ErrorCode::BadRequest,
            "Bad Request",
            "malformed_request",
            "the request is not valid HTTP/1.1",
        ),
    };
    let rid = uuid::Uuid::now_v7().to_string();
    let e = Error::new(code, message).with("reason", why);
    let body = crate::errors::error_json(&e, Some(&rid));
    let status = code.status();
    format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nx-request-id: {rid}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

impl<T: AsyncWrite + Unpin> ErrorBodies<T> {
    /// Writes what is pending; Ready(Ok) once nothing is.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((bytes, done)) = &mut self.pending {
            if *done == bytes.len() {
                self.pending = None;
                break;
            }
            match Pin::new(&mut self.io).poll_write(cx, &bytes[*done..]) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => *done += n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for ErrorBodies<T> {
    fn poll_read(
        mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for ErrorBodies<T> {
    fn poll_write(
        mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        match this.drain(cx) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending => return Poll::Pending,
        }
        if let Some((start, status)) = bodiless_error_head(buf) {
            let mut bytes = buf[..start].to_vec();
            bytes.extend_from_slice(&error_response(status));
            this.pending = Some((bytes, 0));
            // Everything handed to us is taken; it goes out as the rewrite.
            let _ = this.drain(cx);
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut this.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.drain(cx) {
            Poll::Ready(Ok(())) => Pin::new(&mut self.io).poll_flush(cx),
            other => other,
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.drain(cx) {
            Poll::Ready(Ok(())) => Pin::new(&mut self.io).poll_shutdown(cx),
            other => other,
        }
    }
}

/// A plain TCP connection, wrapped.
pub type Conn = ErrorBodies<TcpStream>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_only_bodiless_error_heads_at_the_end() {
        let h431 =
            b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\ndate: x\r\n\r\n";
        assert_eq!(bodiless_error_head(h431), Some((0, 431)));
        let h400 = b"HTTP/1.1 400 Bad Request\r\ndate: x\r\n\r\n";
        assert_eq!(bodiless_error_head(h400), Some((0, 400)));
        // after a pipelined answer with a body
        let mut two =
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"
                .to_vec();
        let at = two.len();
        two.extend_from_slice(h431);
        assert_eq!(bodiless_error_head(&two), Some((at, 431)));
        // the application's errors carry a content type and a body
        let app = b"HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
        assert_eq!(bodiless_error_head(app), None);
        let app_head = b"HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n";
        assert_eq!(bodiless_error_head(app_head), None);
        // successes and 204s pass
        assert_eq!(
            bodiless_error_head(b"HTTP/1.1 204 No Content\r\n\r\n"),
            None
        );
        assert_eq!(
            bodiless_error_head(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"),
            None
        );
    }

    #[test]
    fn the_replacement_is_the_error_object() {
        let r = String::from_utf8(error_response(431)).unwrap();
        let (head, body) = r.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 431 "));
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["error"]["code"], "headers_too_large");
        assert_eq!(v["error"]["status"], 431);
        assert!(head.contains(&format!("content-length: {}", body.len())));
    }
}
