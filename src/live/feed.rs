//! `GET /user/v1/feed/live`: the live in-app feed over WebSocket (docs/API.md §12).
//!
//! The handler checks the upgrade (header credentials, or — for browsers —
//! `api_key` in the query) and answers 101 with the prepared socket attached;
//! the upgrade path (crate::live::upgrade) then takes the connection off the HTTP
//! layer and runs it here as a `Conn`: a plain future over the TCP stream with
//! a small inbox (crate::live::sockets::Inbox), no actor and no per-connection
//! buffers while it is idle (crate::live::ws), since a server holds many idle sockets.
//!
//! Once authenticated (headers before the upgrade, or an auth frame within 10 s)
//! the socket registers with its user's `UserActor`, which sends `hello`,
//! replays missed events (or `reset`), then pushes every live event.
//! Heartbeats: a ping every 30 s, closed after 90 s of silence. Backpressure: a
//! client with more than 1,000 frames not yet written to its connection is
//! closed with 1013 (it resumes with `since_seq`); the frames queued before that
//! still go out, then the close frame.

use crate::auth::{self, UserCtx, API_KEY};
use crate::errors::{error_object, ApiError, ApiResult};
use crate::extract::Query;
use crate::live::sockets::{
    Close, Inbox, PendingPlace, PendingRefused, CLOSE_UNAUTHENTICATED, MAX_UNSENT,
};
use crate::live::ws;
use crate::openapi::{query_param, str_schema, Content, Op};
use crate::routes::endpoint::{Endpoint, Serve};
use crate::state::State;
use actix_web::{HttpMessage, HttpRequest, HttpResponse};
use futures_util::future::LocalBoxFuture;
use herald_engine::actors::{Connect, Disconnect, LiveSink};
use herald_engine::model::Project;
use herald_engine::Error;
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::future::Future;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};
use utoipa::openapi::schema::{ObjectBuilder, Type};

const AUTH_TIMEOUT: Duration = Duration::from_secs(10);
const PING_EVERY: Duration = Duration::from_secs(30);
const SILENCE_LIMIT: Duration = Duration::from_secs(90);
/// How long a closing socket may take to write what is queued before it (a
/// client that stopped reading is then dropped without its close frame).
const CLOSE_DRAIN: Duration = Duration::from_secs(60);
/// How long a socket that has written its close frame keeps reading (and
/// dropping) what the client still sends, waiting for it to close its side.
const CLOSE_LINGER: Duration = Duration::from_secs(10);
/// The largest client message (the auth frame is far smaller).
const MAX_MESSAGE: usize = 64 * 1024;
/// Bytes read from the connection at a time (on the stack, not kept).
const READ_CHUNK: usize = 4096;
/// Frames handed to one vectored write.
const WRITE_BATCH: usize = 32;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Marks a request that came through the upgrade path: only such a request
/// can become a socket (another one has no connection to hand over).
#[derive(Clone, Copy)]
pub struct ViaUpgrade;

/// A socket accepted by the handler, attached to its 101 response for the
/// upgrade path to run (`serve`).
pub struct Accepted {
    st: State,
    project: Arc<Project>,
    user: Option<UserCtx>,
    since: Option<u64>,
    request_id: Option<String>,
    pending: Option<PendingPlace>,
    jwt: bool,
    peer: Option<std::net::IpAddr>,
}

impl Drop for Accepted {
    /// An accepted socket that never ran (the 101 could not be written) gives
    /// back its place among the sockets still authenticating.
    fn drop(&mut self) {
        if let Some(place) = self.pending.take() {
            self.st.live.release_pending(place);
        }
    }
}

/// A frame to write: its header, and its payload where it lives.
struct Out {
    head: [u8; 10],
    head_len: u8,
    body: Body,
}

enum Body {
    /// A feed frame, shared with every other socket it goes to.
    Shared(Arc<str>),
    Own(Vec<u8>),
}

impl Out {
    fn new(opcode: u8, body: Body) -> Out {
        let len = match &body {
            Body::Shared(s) => s.len(),
            Body::Own(v) => v.len(),
        };
        let (head, head_len) = ws::header(opcode, len);
        Out {
            head,
            head_len,
            body,
        }
    }
    fn head(&self) -> &[u8] {
        &self.head[..self.head_len as usize]
    }
    fn body(&self) -> &[u8] {
        match &self.body {
            Body::Shared(s) => s.as_bytes(),
            Body::Own(v) => v,
        }
    }
    fn len(&self) -> usize {
        self.head_len as usize + self.body().len()
    }
    fn is_text(&self) -> bool {
        self.head[0] & 0x0F == ws::TEXT
    }
}

/// What an awaited step (authentication, joining the user's feed) came to.
enum Step {
    /// Boxed: a user is far larger than the other outcomes.
    Authed(Box<Result<UserCtx, ApiError>>),
    Joined(Result<(), Error>),
}

/// One open socket. Idle, it holds its identity, a timer and the stream: the
/// read and write buffers exist only while a frame is partly read or written.
struct Conn<T> {
    io: T,
    inbox: Arc<Inbox>,
    st: State,
    id: u64,
    /// The project, until authenticated (then let go: a copy per socket of
    /// an idle hundred thousand is memory for nothing).
    project: Option<Arc<Project>>,
    /// (project, user) once authenticated.
    user: Option<(uuid::Uuid, uuid::Uuid)>,
    since: Option<u64>,
    /// The upgrade request's id, carried by error frames (until authenticated).
    request_id: Option<String>,
    /// Holds a place among the sockets still authenticating.
    pending: Option<PendingPlace>,
    /// Authenticated by a user JWT (rather than a bare user id).
    jwt: bool,
    /// The client's address, charged for wrong credentials in the auth frame.
    peer: Option<std::net::IpAddr>,
    /// Client bytes of a frame not fully arrived (or not yet handled).
    inbuf: Vec<u8>,
    /// A fragmented client message: its opcode and the payload so far.
    message: Option<(u8, Vec<u8>)>,
    /// Frames to write, oldest first; `sent` bytes of the first are written.
    out: VecDeque<Out>,
    sent: usize,
    /// Text frames in `out`.
    unsent: usize,
    last_heard: Instant,
    next_ping: Instant,
    auth_deadline: Option<Instant>,
    /// When a closing socket gives up writing.
    drain_deadline: Option<Instant>,
    timer: Pin<Box<Sleep>>,
    /// An awaited step; reading waits for it (as frames are handled in order).
    busy: Option<LocalBoxFuture<'static, Step>>,
    /// The close frame is queued: write what is queued, then end.
    closing: bool,
    /// The close frame is written and our side shut: only lingering now.
    shut: bool,
}

/// Runs an accepted socket on its connection until it ends. `early`: bytes
/// the client sent right behind its upgrade request.
pub async fn serve<T>(a: Accepted, io: T, early: Vec<u8>)
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    Conn::start(a, io, early).await
}

impl<T: AsyncRead + AsyncWrite + Unpin> Conn<T> {
    fn start(mut a: Accepted, io: T, early: Vec<u8>) -> Conn<T> {
        let now = Instant::now();
        let inbox = Arc::new(Inbox::default());
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        a.st.live.insert(id, a.project.id, inbox.clone());
        metrics::gauge!("herald_websocket_connections").set(a.st.live.len() as f64);
        let user = a.user.take();
        let mut c = Conn {
            io,
            inbox,
            st: a.st.clone(),
            id,
            project: Some(a.project.clone()),
            user: None,
            since: a.since,
            request_id: a.request_id.take(),
            pending: a.pending.take(),
            jwt: a.jwt,
            peer: a.peer,
            inbuf: early,
            message: None,
            out: VecDeque::new(),
            sent: 0,
            unsent: 0,
            last_heard: now,
            next_ping: now + PING_EVERY,
            auth_deadline: None,
            drain_deadline: None,
            timer: Box::pin(tokio::time::sleep_until(now + PING_EVERY)),
            busy: None,
            closing: false,
            shut: false,
        };
        match user {
            Some(u) => c.connect(u),
            None => {
                c.auth_deadline = Some(now + AUTH_TIMEOUT);
                // an auth frame that came with the request
                c.handle_input();
            }
        }
        c
    }

    fn queue(&mut self, opcode: u8, body: Body) {
        let o = Out::new(opcode, body);
        if o.is_text() {
            self.unsent += 1;
        }
        self.out.push_back(o);
    }

    fn write_text(&mut self, text: String) {
        self.queue(ws::TEXT, Body::Own(text.into_bytes()));
    }

    /// Queues the close frame; what is queued before it still goes out.
    fn close(&mut self, code: u16, why: &str) {
        if self.closing {
            return;
        }
        self.closing = true;
        self.busy = None;
        self.inbox.end();
        self.queue(ws::CLOSE, Body::Own(ws::close_payload(code, why)));
        self.drain_deadline = Some(Instant::now() + CLOSE_DRAIN);
    }

    fn fail_auth(&mut self, e: &Error) {
        let frame = json!({"type": "error", "error": error_object(e, self.request_id.as_deref())});
        self.write_text(frame.to_string());
        self.close(CLOSE_UNAUTHENTICATED, "unauthenticated");
    }

    fn connect(&mut self, u: UserCtx) {
        if let Some(place) = self.pending.take() {
            self.st.live.release_pending(place);
        }
        let (project, user) = (u.project.id, u.user.id);
        self.user = Some((project, user));
        self.project = None;
        self.request_id = None;
        self.auth_deadline = None;
        self.st.live.join_user(
            self.id,
            project,
            user,
            self.jwt,
            self.st.settings.max_user_sockets,
        );
        let socket: Arc<dyn LiveSink> = self.inbox.clone();
        let msg = Connect {
            id: self.id,
            socket,
            since: self.since,
        };
        let engine = self.st.engine.clone();
        self.busy = Some(Box::pin(async move {
            Step::Joined(engine.ask_user(project, user, msg).await.and_then(|r| r))
        }));
    }

    fn auth_frame(&mut self, text: &str) {
        let missing = || Error::unauthenticated("user_key_jwt", "missing_user_key");
        let v: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(_) => return self.fail_auth(&missing()),
        };
        if v.get("type").and_then(|t| t.as_str()) != Some("auth") {
            return self.fail_auth(&missing());
        }
        let s = |k: &str| {
            v.get(k)
                .and_then(|x| x.as_str())
                .filter(|x| !x.is_empty())
                .map(str::to_string)
        };
        let (key, id) = (s("user_key"), s("user_id"));
        self.jwt = key.is_some();
        if let Some(n) = v.get("since_seq").and_then(|x| x.as_u64()) {
            self.since = Some(n);
        }
        if let Some(ApiError(e)) = self.peer.and_then(|ip| auth::refused_address(&self.st, ip)) {
            return self.fail_auth(&e);
        }
        let Some(project) = self.project.clone() else {
            return; // authenticated already
        };
        let st = self.st.clone();
        self.busy = Some(Box::pin(async move {
            Step::Authed(Box::new(
                auth::user_for(&st, project, key.as_deref(), id.as_deref()).await,
            ))
        }));
    }

    /// Polls the step in progress, if any; when it is done, applies it and
    /// handles the frames that came behind it. Whether one was done.
    fn poll_busy(&mut self, cx: &mut Context<'_>) -> bool {
        let Some(f) = &mut self.busy else {
            return false;
        };
        let Poll::Ready(step) = f.as_mut().poll(cx) else {
            return false;
        };
        self.busy = None;
        self.step_done(step);
        self.handle_input();
        true
    }

    fn step_done(&mut self, step: Step) {
        match step {
            Step::Authed(r) => match *r {
                Ok(u) => self.connect(u),
                Err(ApiError(e)) => {
                    let e = auth::charge(&self.st, self.peer, e);
                    self.fail_auth(&e)
                }
            },
            Step::Joined(Ok(())) => {}
            Step::Joined(Err(e)) => {
                tracing::warn!(error = %e.message, "live feed: cannot join the user's feed");
                self.close(1011, "internal error");
            }
        }
    }

    /// Handles one complete client message or control frame.
    fn message(&mut self, opcode: u8, payload: Vec<u8>) {
        match opcode {
            ws::PING => self.queue(ws::PONG, Body::Own(payload)),
            ws::PONG => {}
            ws::CLOSE => {
                // Answered with the client's code (none when it gave none).
                let code =
                    (payload.len() >= 2).then(|| u16::from_be_bytes([payload[0], payload[1]]));
                if self.closing {
                    return;
                }
                self.closing = true;
                self.busy = None;
                self.inbox.end();
                let body = code.map(|c| c.to_be_bytes().to_vec()).unwrap_or_default();
                self.queue(ws::CLOSE, Body::Own(body));
                self.drain_deadline = Some(Instant::now() + CLOSE_DRAIN);
            }
            ws::TEXT if self.user.is_none() => match std::str::from_utf8(&payload) {
                Ok(t) => self.auth_frame(t),
                Err(_) => self.close(1007, "text frames must be UTF-8"),
            },
            ws::BINARY if self.user.is_none() => {
                self.fail_auth(&Error::unauthenticated("user_key_jwt", "missing_user_key"))
            }
            // Once authenticated, client messages are ignored (docs/API.md §12).
            _ => {}
        }
    }

    /// Handles the complete frames in `inbuf`, in order, until a step must be
    /// awaited or the socket closes.
    fn handle_input(&mut self) {
        let mut at = 0;
        while self.busy.is_none() && !self.closing {
            let (f, used) = match ws::parse(&self.inbuf[at..], MAX_MESSAGE) {
                Ok(Some(x)) => x,
                Ok(None) => break,
                Err(v) => {
                    self.close(v.code, v.reason);
                    break;
                }
            };
            at += used;
            if f.opcode & 0x8 != 0 {
                self.message(f.opcode, f.payload);
                continue;
            }
            let (opcode, payload) = match (self.message.take(), f.opcode) {
                (None, ws::CONTINUATION) | (Some(_), ws::TEXT | ws::BINARY) => {
                    self.close(1002, "unexpected continuation");
                    break;
                }
                (None, op) => (op, f.payload),
                (Some((op, mut so_far)), _) => {
                    so_far.extend_from_slice(&f.payload);
                    (op, so_far)
                }
            };
            if payload.len() > MAX_MESSAGE {
                self.close(1009, "message too large");
                break;
            }
            if f.fin {
                self.message(opcode, payload);
            } else {
                self.message = Some((opcode, payload));
            }
        }
        self.inbuf.drain(..at);
        if self.inbuf.is_empty() {
            self.inbuf = Vec::new();
        }
    }

    /// Reads what the client sent until the stream has nothing more (or a
    /// step must be awaited). Ready(true): the connection has ended.
    fn poll_input(&mut self, cx: &mut Context<'_>) -> bool {
        let mut chunk = [0u8; READ_CHUNK];
        while self.busy.is_none() && !self.closing {
            let mut rb = ReadBuf::new(&mut chunk);
            match Pin::new(&mut self.io).poll_read(cx, &mut rb) {
                Poll::Pending => return false,
                Poll::Ready(Err(_)) => return true,
                Poll::Ready(Ok(())) if rb.filled().is_empty() => return true,
                Poll::Ready(Ok(())) => {
                    self.last_heard = Instant::now();
                    self.inbuf.extend_from_slice(rb.filled());
                    self.handle_input();
                }
            }
        }
        false
    }

    /// After the close: reads and drops what the client sends. True once it
    /// has closed its side (or the connection failed).
    fn poll_discard(&mut self, cx: &mut Context<'_>) -> bool {
        let mut chunk = [0u8; READ_CHUNK];
        loop {
            let mut rb = ReadBuf::new(&mut chunk);
            match Pin::new(&mut self.io).poll_read(cx, &mut rb) {
                Poll::Pending => return false,
                Poll::Ready(Err(_)) => return true,
                Poll::Ready(Ok(())) if rb.filled().is_empty() => return true,
                Poll::Ready(Ok(())) => {}
            }
        }
    }

    /// Writes queued frames until none is left (Ready) or the stream is full.
    fn poll_output(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.out.is_empty() {
            let mut bufs = [IoSlice::new(&[]); 2 * WRITE_BATCH];
            let mut n = 0;
            for (i, o) in self.out.iter().take(WRITE_BATCH).enumerate() {
                let (head, body) = (o.head(), o.body());
                let skip = if i == 0 { self.sent } else { 0 };
                if skip < head.len() {
                    bufs[n] = IoSlice::new(&head[skip..]);
                    n += 1;
                }
                let body = &body[skip.saturating_sub(head.len())..];
                if !body.is_empty() {
                    bufs[n] = IoSlice::new(body);
                    n += 1;
                }
            }
            let mut wrote = match Pin::new(&mut self.io).poll_write_vectored(cx, &bufs[..n]) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(k)) => k,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            };
            while wrote > 0 {
                let left = self.out[0].len() - self.sent;
                if wrote < left {
                    self.sent += wrote;
                    break;
                }
                wrote -= left;
                self.sent = 0;
                if self.out.pop_front().is_some_and(|o| o.is_text()) {
                    self.unsent -= 1;
                }
            }
        }
        // Nothing in flight: no queue memory is kept.
        self.out = VecDeque::new();
        Pin::new(&mut self.io).poll_flush(cx)
    }

    /// Takes what other threads sent: frames (past the unsent limit, the
    /// socket closes with 1013) and close requests.
    fn take_inbox(&mut self, cx: &mut Context<'_>) {
        let mut frames = VecDeque::new();
        let close = self.inbox.take(cx, &mut frames);
        for f in frames {
            if self.closing {
                break;
            }
            if self.unsent >= MAX_UNSENT {
                self.close(1013, "client too slow; resume with since_seq");
                break;
            }
            self.queue(ws::TEXT, Body::Shared(f));
        }
        if let Some(Close { code, reason }) = close {
            self.close(code, reason);
        }
    }

    /// Fires what is due (auth timeout, ping, silence, end of draining).
    /// Ready: the socket gave up draining and ends now.
    fn poll_timer(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            let now = Instant::now();
            if self.drain_deadline.is_some_and(|d| now >= d) {
                return Poll::Ready(());
            }
            if self.auth_deadline.is_some_and(|d| now >= d) {
                self.auth_deadline = None;
                if self.user.is_none() {
                    self.close(CLOSE_UNAUTHENTICATED, "authentication timed out");
                }
            }
            if now >= self.next_ping {
                self.next_ping = now + PING_EVERY;
                if self.last_heard.elapsed() > SILENCE_LIMIT {
                    self.close(1001, "no answer to pings");
                } else if !self.closing {
                    self.queue(ws::PING, Body::Own(Vec::new()));
                }
            }
            let next = [self.auth_deadline, self.drain_deadline]
                .into_iter()
                .flatten()
                .fold(self.next_ping, Instant::min);
            if self.timer.deadline() != next {
                self.timer.as_mut().reset(next);
            }
            if self.timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
        }
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> Future for Conn<T> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        loop {
            if this.poll_busy(cx) {
                continue;
            }
            this.take_inbox(cx);
            if this.poll_timer(cx).is_ready() {
                return Poll::Ready(());
            }
            if this.poll_input(cx) {
                // The client has gone (or shut its side): nothing more can be
                // delivered, and a close frame would have no reader.
                return Poll::Ready(());
            }
            // a step started while reading: poll it (registers its waker)
            if !this.closing && this.poll_busy(cx) {
                continue;
            }
            match this.poll_output(cx) {
                Poll::Ready(Err(_)) => return Poll::Ready(()),
                Poll::Ready(Ok(())) if this.closing => {
                    // Everything, the close frame last, is written: shut our
                    // side, then read and drop what the client still sends
                    // until it closes its side (or the linger ends). Closing
                    // the socket with the client's answer (a pong, its close
                    // frame) unread would make the kernel send a reset, and a
                    // reset throws away what the client has not read yet: the
                    // last frames and the close frame itself.
                    if !this.shut {
                        if Pin::new(&mut this.io).poll_shutdown(cx).is_pending() {
                            return Poll::Pending;
                        }
                        this.shut = true;
                        this.drain_deadline = Some(Instant::now() + CLOSE_LINGER);
                        // a lingering socket counts for no user's cap
                        this.st.live.leave(this.id, this.user);
                        continue;
                    }
                    return if this.poll_discard(cx) {
                        Poll::Ready(())
                    } else {
                        Poll::Pending
                    };
                }
                _ => return Poll::Pending,
            }
        }
    }
}

impl<T> Drop for Conn<T> {
    fn drop(&mut self) {
        self.inbox.end();
        if let Some(place) = self.pending.take() {
            self.st.live.release_pending(place);
        }
        self.st.live.leave(self.id, self.user);
        metrics::gauge!("herald_websocket_connections").set(self.st.live.len() as f64);
        if let Some((project, user)) = self.user {
            if let Some(a) = self.st.engine.user_actor_if_running(project, user) {
                a.do_send(Disconnect { id: self.id });
            }
        }
    }
}

/// `GET /user/v1/feed/live`
pub fn live_endpoint() -> Endpoint {
    Op::get(
            "/user/v1/feed/live",
            "liveFeed",
            "Live feed over a WebSocket (see the README, \"Live feed\")",
        )
        .param(query_param(
            "api_key",
            str_schema().into(),
            "The public key, for browsers that cannot set headers (the user key then comes in the first frame).",
        ))
        .param(query_param(
            "since_seq",
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(0))
                .into(),
            "Resume after this event sequence number.",
        ))
        .ok(101, "Switching to the WebSocket protocol", Content::Empty)
        // 503: too many sockets still authenticating (`--max-pending-sockets`);
        // 429, as on every authenticated route, also for an address or a
        // project over its share of them (`--max-pending-per-*`)
        .errors(&[400, 503])
.to(live)
}

/// The upgrade: header credentials are checked before it (a failure is the usual
/// 401 body); a browser's `api_key` query parameter is checked before it too, and
/// its user key comes in the first frame.
pub async fn live(req: HttpRequest, st: State) -> ApiResult<HttpResponse> {
    let q = Query::of(&req);
    let since = match q.get("since_seq") {
        None => None,
        Some(s) => Some(s.parse::<u64>().map_err(|_| {
            ApiError(Error::invalid_param(
                "since_seq",
                "since_seq must be a non-negative integer",
            ))
        })?),
    };
    let header_key = req
        .headers()
        .get(API_KEY)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|s| !s.trim().is_empty());
    let peer = auth::client_ip(&req);
    if let Some(e) = peer.and_then(|ip| auth::refused_address(&st, ip)) {
        return Err(e);
    }
    let (project, user) = if header_key {
        let u = match auth::user(&req).await {
            Ok(u) => u,
            Err(e) => return Err(ApiError(auth::charge(&st, peer, e.0))),
        };
        (u.project.clone(), Some(u))
    } else {
        let Some(pk) = q
            .get("api_key")
            .map(str::to_string)
            .filter(|s| !s.is_empty())
        else {
            return Err(Error::unauthenticated("api_key", "missing_api_key").into());
        };
        let p = st.engine.project_by_api_key(pk).await?;
        let Some(p) = p else {
            let e = Error::unauthenticated("api_key", "invalid_api_key");
            return Err(ApiError(auth::charge(&st, peer, e)));
        };
        (p, None)
    };
    let mut res = actix_web_actors::ws::handshake(&req).map_err(|e| {
        ApiError(Error::invalid_param(
            "upgrade",
            format!("expected a WebSocket upgrade: {e}"),
        ))
    })?;
    // Only a connection taken over by the upgrade path can carry the socket
    // (a request whose body is chunked stays with the HTTP layer).
    if req.extensions().get::<ViaUpgrade>().is_none() {
        return Err(Error::invalid_param(
            "upgrade",
            "expected a WebSocket upgrade: a request without a body",
        )
        .into());
    }
    // A socket without its user yet holds one of a bounded number of places
    // (an auth frame may take 10 s to come; thousands of silent sockets must
    // not pile up), within its address's and its project's shares of them.
    // Taken only once the upgrade is certain to be answered.
    let pending = match user {
        Some(_) => None,
        None => Some(
            st.live
                .reserve_pending(peer, project.id, st.settings.pending_caps())
                .map_err(pending_refused)?,
        ),
    };
    let accepted = Accepted {
        st: st.clone(),
        project,
        user,
        since,
        request_id: crate::errors::current_request_id(),
        pending,
        peer,
        jwt: req
            .headers()
            .get(auth::USER_KEY)
            .is_some_and(|v| !v.is_empty()),
    };
    let mut res = res.finish();
    res.extensions_mut().insert(accepted);
    Ok(res)
}

/// The answer to an upgrade that found no place among the sockets still
/// authenticating (docs/API.md §12). A full server is 503, as it is for
/// everyone; a source address or a project at its share gets 429
/// `rate_limited` naming which share and its size: it is the one to slow down
/// (a second's wait is enough, as a socket's place frees once it signs in).
fn pending_refused(r: PendingRefused) -> ApiError {
    let (share, limit) = match r {
        PendingRefused::Full => {
            return ApiError(
                Error::new(
                    herald_engine::ErrorCode::ServiceUnavailable,
                    "too many live-feed sockets are still authenticating; retry shortly",
                )
                .with("retry_after", 1),
            )
        }
        PendingRefused::Address(n) => ("address", n),
        PendingRefused::Project(n) => ("project", n),
    };
    ApiError(
        Error::new(
            herald_engine::ErrorCode::RateLimited,
            format!(
                "this {share} has {limit} live-feed sockets still authenticating, its share; \
                 sign one in or close it, then retry"
            ),
        )
        .with("retry_after", 1)
        .with("limit", limit)
        .with("share", share),
    )
}
