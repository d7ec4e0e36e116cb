//! Event endpoints (docs/API.md, "Event endpoints"): CRUD and validation,
//! Standard Webhooks signatures checked with an implementation written here
//! from the specification, order per delivery, retries after 500s with the
//! same `webhook-id`, secret rotation (both signatures valid), replay,
//! disabling after the retry horizon, the egress guard, and `kill -9`
//! between the commit and the send.
//!
//! The receiver is a tiny HTTP/1.1 server on 127.0.0.1 written here (it
//! records every request, can answer 500 a number of times, and can be
//! stopped and started again on the same port).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU16, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::{json, Value};
use sha2::Sha256;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::engine_helpers::*;
use crate::helpers::*;

const E: &str = "/admin/v1/webhook_endpoints";

/// One request the receiver got, and what it answered.
#[derive(Debug, Clone)]
struct Got {
    headers: HashMap<String, String>,
    body: Vec<u8>,
    answered: u16,
}

impl Got {
    fn id(&self) -> String {
        self.headers.get("webhook-id").cloned().unwrap_or_default()
    }
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
    fn event_type(&self) -> String {
        s(&self.json()["type"])
    }
}

/// A local event receiver.
struct Receiver {
    port: u16,
    got: Arc<Mutex<Vec<Got>>>,
    /// Requests still to answer 500.
    fail: Arc<AtomicUsize>,
    /// The status every other request gets.
    status: Arc<AtomicU16>,
    reply: Arc<String>,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    async fn start(fail_first: usize) -> Receiver {
        Receiver::start_on(0, fail_first, 200, String::new()).await
    }

    async fn start_on(port: u16, fail_first: usize, status: u16, reply: String) -> Receiver {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("bind the receiver");
        let port = listener.local_addr().unwrap().port();
        let got: Arc<Mutex<Vec<Got>>> = Arc::default();
        let fail = Arc::new(AtomicUsize::new(fail_first));
        let status = Arc::new(AtomicU16::new(status));
        let reply = Arc::new(reply);
        let (g, f, st, rp) = (got.clone(), fail.clone(), status.clone(), reply.clone());
        let task = tokio::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                let (g, f, st, rp) = (g.clone(), f.clone(), st.clone(), rp.clone());
                tokio::spawn(async move {
                    let Some((headers, body)) = read_request(&mut sock).await else {
                        return;
                    };
                    let failing = f
                        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                        .is_ok();
                    let answered = if failing {
                        500
                    } else {
                        st.load(Ordering::SeqCst)
                    };
                    g.lock().unwrap().push(Got {
                        headers,
                        body,
                        answered,
                    });
                    let resp = format!(
                        "HTTP/1.1 {answered} X\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{}",
                        rp.len(),
                        rp
                    );
                    let _ = sock.write_all(resp.as_bytes()).await;
                    let _ = sock.shutdown().await;
                });
            }
        });
        Receiver {
            port,
            got,
            fail,
            status,
            reply,
            task,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/events", self.port)
    }

    fn got(&self) -> Vec<Got> {
        self.got.lock().unwrap().clone()
    }

    /// Requests answered 2xx.
    fn delivered(&self) -> Vec<Got> {
        self.got()
            .into_iter()
            .filter(|g| (200..300).contains(&g.answered))
            .collect()
    }

    fn stop(self) -> u16 {
        self.task.abort();
        let _ = (self.fail, self.status, self.reply);
        self.port
    }
}

/// Reads one HTTP/1.1 request: lower-cased headers and the body.
async fn read_request(
    sock: &mut tokio::net::TcpStream,
) -> Option<(HashMap<String, String>, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut headers = HashMap::new();
    for line in head.lines().skip(1) {
        if let Some((k, v)) = line.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some((headers, body))
}

/// The Standard Webhooks check, from the specification: the key is the
/// base64 part of `whsec_…` decoded; the signed content is
/// `{webhook-id}.{webhook-timestamp}.{body}`; `webhook-signature` holds
/// space-separated `v1,<base64 HMAC-SHA256>` values, one of which must match.
fn verifies(g: &Got, secret: &str) -> bool {
    let b64 = secret.strip_prefix("whsec_").expect("whsec_ prefix");
    let key = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .expect("base64 secret");
    let (Some(id), Some(ts), Some(sig)) = (
        g.headers.get("webhook-id"),
        g.headers.get("webhook-timestamp"),
        g.headers.get("webhook-signature"),
    ) else {
        return false;
    };
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{ts}.").as_bytes());
    mac.update(&g.body);
    let want = format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    );
    sig.split(' ').any(|s| s == want)
}

/// `POST /webhook_endpoints`; asserts 201 and returns `(endpoint, secret)`.
async fn create_endpoint(app: &TestApp, body: Value) -> (Value, String) {
    let r = app.admin(POST, E).json(&body).go().await;
    let ep = r.ok(201);
    let secret = s(&ep["secret"]);
    assert!(secret.starts_with("whsec_"), "{r}");
    (ep, secret)
}

/// A flow with one chat step on a webhook channel to `hook_url`.
async fn chat_flow(app: &TestApp, hook_url: &str) -> Value {
    let ch = create_webhook_channel(app, hook_url, None).await;
    active_flow(
        app,
        "ev",
        json!([channel_step(&s(&ch["id"]), Some("S"), "Hello")]),
    )
    .await
}

/// Waits until `pred` holds for what the receiver got (2xx answers only).
async fn wait_for(rx: &Receiver, what: &str, pred: impl Fn(&[Got]) -> bool) -> Vec<Got> {
    let d = Deadline::new(what, 30);
    loop {
        let got = rx.delivered();
        if pred(&got) {
            return got;
        }
        let types: Vec<String> = got.iter().map(|g| g.event_type()).collect();
        d.tick(format!("{types:?}")).await;
    }
}

fn has(got: &[Got], t: &str, id: &str) -> bool {
    got.iter()
        .any(|g| g.event_type() == t && g.json()["data"]["id"] == json!(id))
}

mod events;
mod lifecycle;
