//! Local counterparts of the real channel providers (docs/API.md §7), shared by the
//! `providers_*` tests: an in-process SMTP sink, RFC 8291 decryption of Web Push
//! payloads, JWT checks, and small channel/flow/run helpers.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

use crate::engine_helpers::*;
use crate::helpers::*;

// ================================================================ channels, flows, runs

/// `POST /channels`; asserts 201 and returns the channel.
pub async fn create_channel(app: &TestApp, ctype: &str, provider: &str, config: Value) -> Value {
    let r = app
        .admin(POST, &format!("{A}/channels"))
        .json(&json!({"type": ctype, "provider": provider, "name": provider, "config": config}))
        .go()
        .await;
    let c = r.ok(201);
    assert_eq!(c["provider"], json!(provider), "{r}");
    c
}

/// Like `create_channel`, and asserts the channel is `active`.
pub async fn active_channel(app: &TestApp, ctype: &str, provider: &str, config: Value) -> Value {
    let c = create_channel(app, ctype, provider, config).await;
    assert_eq!(c["status"], json!("active"), "{c}");
    c
}

/// An active flow with one channel step whose template is `template`.
pub async fn template_flow(app: &TestApp, channel_id: &str, template: Value) -> Value {
    active_flow(
        app,
        "prov",
        json!([{"type": "channel", "channel_id": channel_id, "template": template}]),
    )
    .await
}

/// Runs `flow` for `ext` with `data`; returns (run id, the id of its only delivery).
pub async fn run_single(app: &TestApp, flow: &Value, ext: &str, data: Value) -> (String, String) {
    let run = run_flow(
        app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}], "data": data}),
    )
    .await;
    let run_id = s(&run["id"]);
    let ns = run_notifications(app, &run_id).await;
    assert_eq!(ns.len(), 1, "{ns:?}");
    let ds = deliveries(&ns[0]);
    assert_eq!(ds.len(), 1, "{}", ns[0]);
    (run_id, s(&ds[0]["id"]))
}

/// Runs `flow` once for `ext` and waits for the delivery to settle; returns it.
pub async fn deliver_once(app: &TestApp, flow: &Value, ext: &str, data: Value) -> Value {
    let (_, did) = run_single(app, flow, ext, data).await;
    wait_delivery_final(app, &did, 30).await
}

/// A quick retry policy for provider tests: 3 attempts, 50 ms base.
pub fn quick_retry() -> Value {
    json!({"max_attempts": 3, "base_seconds": 0.05, "max_seconds": 0.2})
}

/// `POST /user/v1/channels/{id}/subscriptions` as `ext`.
pub async fn subscribe(app: &TestApp, ext: &str, channel_id: &str, body: Value) -> Resp {
    app.user(
        POST,
        &format!("{U}/channels/{channel_id}/subscriptions"),
        ext,
    )
    .json(&body)
    .go()
    .await
}

/// The identifiers `ext` has registered on the channel.
pub async fn subscription_ids(app: &TestApp, ext: &str, channel_id: &str) -> Vec<String> {
    let r = app
        .user(
            GET,
            &format!("{U}/channels/{channel_id}/subscriptions"),
            ext,
        )
        .go()
        .await;
    r.page()["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| s(&i["identifier"]))
        .collect()
}

// ================================================================ encodings

pub fn b64url_dec(s: &str) -> Vec<u8> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s.trim_end_matches('='))
        .unwrap_or_else(|e| panic!("not base64url ({e}): {s:?}"))
}

/// The parts of a compact JWT: (header, claims, signing input, signature bytes).
pub fn jwt_parts(token: &str) -> (Value, Value, String, Vec<u8>) {
    let parts: Vec<&str> = token.split('.').collect();
    assert_eq!(parts.len(), 3, "a JWT has three parts: {token}");
    let header: Value = serde_json::from_slice(&b64url_dec(parts[0])).expect("JWT header JSON");
    let claims: Value = serde_json::from_slice(&b64url_dec(parts[1])).expect("JWT claims JSON");
    (
        header,
        claims,
        format!("{}.{}", parts[0], parts[1]),
        b64url_dec(parts[2]),
    )
}

/// Verifies an ES256 JWT against an uncompressed P-256 point; returns (header, claims).
#[track_caller]
pub fn verify_es256(token: &str, public_point: &[u8]) -> (Value, Value) {
    use p256::ecdsa::signature::Verifier;
    let (header, claims, input, sig) = jwt_parts(token);
    assert_eq!(header["alg"], json!("ES256"), "{header}");
    let key = p256::ecdsa::VerifyingKey::from_sec1_bytes(public_point).expect("P-256 point");
    let sig = p256::ecdsa::Signature::from_slice(&sig).expect("64-byte r||s signature");
    key.verify(input.as_bytes(), &sig)
        .unwrap_or_else(|e| panic!("ES256 signature does not verify: {e}"));
    (header, claims)
}

/// A P-256 key pair: (secret key, uncompressed public point).
pub fn p256_pair() -> (p256::SecretKey, Vec<u8>) {
    use p256::elliptic_curve::sec1::ToEncodedPoint;
    let sk = p256::SecretKey::random(&mut rand::rngs::OsRng);
    let public = sk.public_key().to_encoded_point(false).as_bytes().to_vec();
    (sk, public)
}

// ================================================================ web push (RFC 8291)

/// A browser's push subscription: its ECDH key pair and auth secret.
pub struct Subscriber {
    pub secret: p256::SecretKey,
    pub public: Vec<u8>,
    pub auth: [u8; 16],
}

impl Subscriber {
    pub fn new() -> Subscriber {
        let (secret, public) = p256_pair();
        Subscriber {
            secret,
            public,
            auth: rand::random(),
        }
    }

    /// The `keys` object of the subscription.
    pub fn keys(&self) -> Value {
        json!({"p256dh": b64url(&self.public), "auth": b64url(&self.auth)})
    }

    /// Decrypts an `aes128gcm` body (RFC 8188 framing, RFC 8291 key derivation),
    /// written out here from the RFCs rather than with the sender's crate.
    pub fn decrypt(&self, body: &[u8]) -> Vec<u8> {
        self.try_decrypt(body)
            .expect("the AES-128-GCM tag verifies with this subscription's keys")
    }

    /// `None` when the body was not encrypted for this subscription.
    pub fn try_decrypt(&self, body: &[u8]) -> Option<Vec<u8>> {
        use aes_gcm::aead::{Aead, KeyInit};
        use hkdf::Hkdf;
        use sha2::Sha256;
        assert!(
            body.len() > 21,
            "aes128gcm body too short: {} bytes",
            body.len()
        );
        let salt = &body[..16];
        let rs = u32::from_be_bytes(body[16..20].try_into().unwrap()) as usize;
        let idlen = body[20] as usize;
        let as_public = &body[21..21 + idlen];
        assert_eq!(idlen, 65, "keyid is the sender's uncompressed ECDH key");
        let ciphertext = &body[21 + idlen..];
        assert!(
            ciphertext.len() <= rs,
            "a single record of at most rs bytes"
        );
        let sender = p256::PublicKey::from_sec1_bytes(as_public).expect("sender key");
        let shared =
            p256::ecdh::diffie_hellman(self.secret.to_nonzero_scalar(), sender.as_affine());
        // RFC 8291 §3.3: IKM = HKDF(auth, ecdh_secret, "WebPush: info" 0 ua_public as_public, 32)
        let mut info = b"WebPush: info\0".to_vec();
        info.extend_from_slice(&self.public);
        info.extend_from_slice(as_public);
        let mut ikm = [0u8; 32];
        Hkdf::<Sha256>::new(Some(&self.auth), &shared.raw_secret_bytes()[..])
            .expand(&info, &mut ikm)
            .unwrap();
        // RFC 8188 §2.2/2.3: CEK and NONCE from the salt
        let hk = Hkdf::<Sha256>::new(Some(salt), &ikm);
        let mut cek = [0u8; 16];
        hk.expand(b"Content-Encoding: aes128gcm\0", &mut cek)
            .unwrap();
        let mut nonce = [0u8; 12];
        hk.expand(b"Content-Encoding: nonce\0", &mut nonce).unwrap();
        let cipher = aes_gcm::Aes128Gcm::new_from_slice(&cek).unwrap();
        let mut padded = cipher
            .decrypt(&aes_gcm::Nonce::from(nonce), ciphertext)
            .ok()?;
        // last record: content, 0x02, zero padding
        while padded.last() == Some(&0) {
            padded.pop();
        }
        assert_eq!(padded.pop(), Some(2), "last-record delimiter");
        Some(padded)
    }
}

// ================================================================ SMTP sink

/// One message the sink accepted.
#[derive(Clone, Debug, Default)]
pub struct Mail {
    pub ehlo: String,
    pub auth: Option<(String, String)>,
    pub mail_from: String,
    pub rcpt_to: Vec<String>,
    pub data: String,
}

impl Mail {
    /// The value of a header of the top-level part (unfolded).
    pub fn header(&self, name: &str) -> Option<String> {
        let head = self.data.split("\r\n\r\n").next().unwrap_or_default();
        let unfolded = head.replace("\r\n ", " ").replace("\r\n\t", " ");
        unfolded.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }
}

/// How the sink answers.
#[derive(Clone, Debug, Default)]
pub struct SinkScript {
    /// Advertise AUTH and accept only these credentials (AUTH PLAIN).
    pub auth: Option<(String, String)>,
    /// Replies to RCPT TO, one per command in order; then `250 OK`.
    pub rcpt_replies: Vec<String>,
}

/// A minimal SMTP server on 127.0.0.1 (RFC 5321: EHLO/HELO, AUTH PLAIN, MAIL,
/// RCPT, DATA, RSET, NOOP, QUIT) that records every message it accepts.
pub struct SmtpSink {
    pub port: u16,
    pub mails: Arc<Mutex<Vec<Mail>>>,
    /// Every command line received, in order, for protocol assertions.
    pub commands: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl SmtpSink {
    pub async fn start(script: SinkScript) -> SmtpSink {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind smtp sink");
        let port = listener.local_addr().unwrap().port();
        let mails = Arc::new(Mutex::new(Vec::new()));
        let commands = Arc::new(Mutex::new(Vec::new()));
        let rcpt_replies = Arc::new(Mutex::new(script.rcpt_replies.clone()));
        let (m, c) = (mails.clone(), commands.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((sock, _)) = listener.accept().await else {
                    return;
                };
                let (m, c, r, auth) = (
                    m.clone(),
                    c.clone(),
                    rcpt_replies.clone(),
                    script.auth.clone(),
                );
                tokio::spawn(async move {
                    let _ = tokio::time::timeout(
                        Duration::from_secs(30),
                        serve_smtp(sock, m, c, r, auth),
                    )
                    .await;
                });
            }
        });
        SmtpSink {
            port,
            mails,
            commands,
            task,
        }
    }

    pub fn mails(&self) -> Vec<Mail> {
        self.mails.lock().unwrap().clone()
    }

    pub fn commands(&self) -> Vec<String> {
        self.commands.lock().unwrap().clone()
    }
}

async fn serve_smtp(
    sock: tokio::net::TcpStream, mails: Arc<Mutex<Vec<Mail>>>, commands: Arc<Mutex<Vec<String>>>,
    rcpt_replies: Arc<Mutex<Vec<String>>>, auth: Option<(String, String)>,
) -> std::io::Result<()> {
    let (rd, mut wr) = sock.into_split();
    let mut rd = BufReader::new(rd);
    wr.write_all(b"220 sink.local ESMTP test sink\r\n").await?;
    let mut cur = Mail::default();
    let mut line = String::new();
    loop {
        line.clear();
        if rd.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        let cmd = line.trim_end().to_string();
        commands.lock().unwrap().push(cmd.clone());
        let upper = cmd.to_ascii_uppercase();
        let reply: String = if upper.starts_with("EHLO") {
            cur.ehlo = cmd[4..].trim().to_string();
            if auth.is_some() {
                "250-sink.local\r\n250-AUTH PLAIN LOGIN\r\n250 8BITMIME".into()
            } else {
                "250-sink.local\r\n250 8BITMIME".into()
            }
        } else if upper.starts_with("HELO") {
            cur.ehlo = cmd[4..].trim().to_string();
            "250 sink.local".into()
        } else if upper.starts_with("AUTH PLAIN") {
            let b64 = cmd[10..].trim();
            let raw = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap_or_default();
            let parts: Vec<String> = raw
                .split(|b| *b == 0)
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect();
            let given = (
                parts.get(1).cloned().unwrap_or_default(),
                parts.get(2).cloned().unwrap_or_default(),
            );
            if auth.as_ref() == Some(&given) {
                cur.auth = Some(given);
                "235 2.7.0 Authentication successful".into()
            } else {
                "535 5.7.8 Authentication credentials invalid".into()
            }
        } else if upper.starts_with("MAIL FROM:") {
            if auth.is_some() && cur.auth.is_none() {
                "530 5.7.0 Authentication required".into()
            } else {
                cur.mail_from = addr_of(&cmd[10..]);
                "250 2.1.0 OK".into()
            }
        } else if upper.starts_with("RCPT TO:") {
            let scripted = {
                let mut r = rcpt_replies.lock().unwrap();
                (!r.is_empty()).then(|| r.remove(0))
            };
            match scripted {
                Some(reply) => reply,
                None => {
                    cur.rcpt_to.push(addr_of(&cmd[8..]));
                    "250 2.1.5 OK".into()
                }
            }
        } else if upper == "DATA" {
            wr.write_all(b"354 End data with <CR><LF>.<CR><LF>\r\n")
                .await?;
            let mut data = String::new();
            loop {
                line.clear();
                if rd.read_line(&mut line).await? == 0 {
                    return Ok(());
                }
                if line == ".\r\n" || line == ".\n" {
                    break;
                }
                // RFC 5321 §4.5.2: remove dot-stuffing
                let l = line.strip_prefix('.').unwrap_or(&line);
                data.push_str(l);
            }
            cur.data = data;
            let done = std::mem::take(&mut cur);
            cur.ehlo = done.ehlo.clone();
            cur.auth = done.auth.clone();
            mails.lock().unwrap().push(done);
            "250 2.0.0 queued".into()
        } else if upper == "RSET" {
            let (ehlo, a) = (cur.ehlo.clone(), cur.auth.clone());
            cur = Mail::default();
            cur.ehlo = ehlo;
            cur.auth = a;
            "250 2.0.0 OK".into()
        } else if upper == "NOOP" {
            "250 2.0.0 OK".into()
        } else if upper == "QUIT" {
            wr.write_all(b"221 2.0.0 Bye\r\n").await?;
            return Ok(());
        } else {
            "502 5.5.2 Command not recognized".into()
        };
        wr.write_all(format!("{reply}\r\n").as_bytes()).await?;
    }
}

/// `<a@b> SIZE=…` → `a@b`.
fn addr_of(arg: &str) -> String {
    let a = arg.trim();
    let a = a.split_whitespace().next().unwrap_or_default();
    a.trim_start_matches('<').trim_end_matches('>').to_string()
}

/// The decoded parts of a `multipart/alternative` body: (content type, body).
pub fn mime_parts(data: &str) -> Vec<(String, String)> {
    let boundary = data
        .split("boundary=")
        .nth(1)
        .map(|b| {
            b.trim_start_matches('"')
                .split(['"', '\r', '\n', ';'])
                .next()
                .unwrap()
                .to_string()
        })
        .expect("multipart boundary");
    let sep = format!("--{boundary}");
    let (_, body) = data.split_once("\r\n\r\n").unwrap();
    body.split(&sep)
        .skip(1)
        .filter(|p| !p.starts_with("--"))
        .map(|p| {
            let p = p.trim_start_matches("\r\n");
            let (head, content) = p.split_once("\r\n\r\n").unwrap_or((p, ""));
            let ct = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-type:")
                        .map(|v| v.trim().to_string())
                })
                .unwrap_or_default();
            (ct, content.trim_end_matches("\r\n").to_string())
        })
        .collect()
}

/// An SMTP channel's config sending to `sink` (plain, quick retries).
pub fn smtp_config(sink: &SmtpSink) -> Value {
    json!({"host": "127.0.0.1", "port": sink.port, "tls": "none",
        "from": "Herald <noreply@herald.test>", "retry": quick_retry()})
}
