//! The CLI's client of a running server's operator endpoints (`herald backup`,
//! `herald project …`): one plain HTTP/1.1 request over loopback with the ops
//! token, one connection, the answer's head parsed and its body left to read.
//!
//! Written by hand rather than with an HTTP client crate: the service crate has
//! no client dependency (reqwest lives in the engine, async), these are two
//! blocking requests to this machine, and the backup streams its body straight
//! to a file, which this does in twenty lines.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Why a request got no usable answer.
pub enum Error {
    /// Nothing answered at the address (no server runs there any more).
    Unreachable(String),
    /// Something answered, and the exchange failed.
    Failed(String),
}

/// An answer: its status and `Content-Length`, and the body still to be read.
pub struct Answer {
    pub status: u16,
    pub length: Option<u64>,
    pub body: BufReader<TcpStream>,
}

impl Answer {
    /// The body as text, at most `cap` bytes when no length was sent.
    pub fn text(self, cap: u64) -> std::io::Result<String> {
        let mut text = String::new();
        self.body
            .take(self.length.unwrap_or(cap))
            .read_to_string(&mut text)?;
        Ok(text)
    }

    /// The error object's message of a refusal, or the body itself.
    pub fn refusal(self) -> String {
        let body = self.text(64 * 1024).unwrap_or_default();
        serde_json::from_str::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| {
                v.pointer("/error/message")
                    .and_then(|m| m.as_str())
                    .map(str::to_string)
            })
            .unwrap_or(body)
    }
}

/// Sends `method path` (with a JSON `body`, if any) and reads the answer's head.
/// The read timeout is long: a backup's snapshot or a large project's deletion
/// answers only when it is done.
pub fn request(
    addr: &str, token: &str, method: &str, path: &str, body: Option<&str>,
) -> Result<Answer, Error> {
    let unreachable = |e: std::io::Error| Error::Unreachable(format!("{addr}: {e}"));
    let failed = |e: std::io::Error| Error::Failed(format!("talking to the server at {addr}: {e}"));
    let sa = addr
        .to_socket_addrs()
        .map_err(unreachable)?
        .next()
        .ok_or_else(|| Error::Unreachable(format!("{addr}: no address")))?;
    let mut conn = TcpStream::connect_timeout(&sa, Duration::from_secs(5)).map_err(unreachable)?;
    conn.set_read_timeout(Some(Duration::from_secs(3600)))
        .map_err(failed)?;
    let body = body.unwrap_or_default();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{}: {token}\r\nConnection: close\r\nContent-Length: {}\r\n",
        crate::ops_access::OPS_TOKEN_HEADER,
        body.len()
    );
    if !body.is_empty() {
        head.push_str("Content-Type: application/json\r\n");
    }
    head.push_str("\r\n");
    conn.write_all(head.as_bytes()).map_err(failed)?;
    conn.write_all(body.as_bytes()).map_err(failed)?;
    let mut r = BufReader::with_capacity(1 << 20, conn);
    let mut status_line = String::new();
    r.read_line(&mut status_line).map_err(failed)?;
    let status: u16 = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| Error::Failed(format!("the server at {addr} answered {status_line:?}")))?;
    let mut length: Option<u64> = None;
    loop {
        let mut line = String::new();
        r.read_line(&mut line).map_err(failed)?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.trim().eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().ok();
            }
        }
    }
    Ok(Answer {
        status,
        length,
        body: r,
    })
}
