//! `GET /user/v1/feed/live`: the live in-app feed over WebSocket (docs/API.md §12).
//!
//! Each socket is a `FeedSocket` actor. Once authenticated (headers before the
//! upgrade, or — for browsers — `api_key` in the query and an auth frame within
//! 10 s) it registers with its user's `UserActor`, which sends `hello`, replays
//! missed events (or `reset`), then pushes every live event. Heartbeats: a ping
//! every 30 s, closed after 90 s of silence. Backpressure: the bytes the HTTP layer
//! has pulled from the socket's stream are counted, and a client with more than
//! 1,000 frames not yet taken is closed with 1013 (it resumes with `since_seq`).

use crate::auth::{self, UserCtx, API_KEY};
use crate::errors::{error_object, ApiError, ApiResult};
use crate::extract::Query;
use crate::sockets::{Close, CLOSE_UNAUTHENTICATED};
use crate::state::State;
use actix::prelude::*;
use actix_web::{web, HttpRequest, HttpResponse};
use actix_web_actors::ws;
use futures_util::Stream;
use herald_actors::actors::{Connect, Disconnect, LiveFrame};
use herald_actors::model::Project;
use herald_actors::Error;
use serde_json::{json, Value};
use std::cell::Cell;
use std::collections::VecDeque;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context as TaskCx, Poll};
use std::time::{Duration, Instant};

const AUTH_TIMEOUT: Duration = Duration::from_secs(10);
const PING_EVERY: Duration = Duration::from_secs(30);
const SILENCE_LIMIT: Duration = Duration::from_secs(90);
pub const MAX_UNSENT: usize = 1000;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Size on the wire of an unmasked server frame with `len` payload bytes.
fn frame_size(len: usize) -> u64 {
    (len + if len < 126 {
        2
    } else if len < 65536 {
        4
    } else {
        10
    }) as u64
}

/// The socket's outgoing byte stream, counting what the HTTP layer has taken.
struct Counted<S> {
    inner: S,
    pulled: Rc<Cell<u64>>,
}

impl<S, E> Stream for Counted<S>
where
    S: Stream<Item = Result<web::Bytes, E>> + Unpin,
{
    type Item = Result<web::Bytes, E>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskCx<'_>) -> Poll<Option<Self::Item>> {
        let r = Pin::new(&mut self.inner).poll_next(cx);
        if let Poll::Ready(Some(Ok(b))) = &r {
            self.pulled.set(self.pulled.get() + b.len() as u64);
        }
        r
    }
}

pub struct FeedSocket {
    st: State,
    id: u64,
    project: Arc<Project>,
    user: Option<UserCtx>,
    since: Option<u64>,
    last_heard: Instant,
    /// Bytes written into the socket's stream so far, and where each text frame ends.
    written: u64,
    frame_ends: VecDeque<u64>,
    pulled: Rc<Cell<u64>>,
    closing: bool,
    /// The upgrade request's id, carried by error frames.
    request_id: Option<String>,
    /// Holds a place among the sockets still authenticating.
    pending: bool,
    /// Authenticated by a user JWT (rather than a bare user id).
    jwt: bool,
    /// The client's address, charged for wrong credentials in the auth frame.
    peer: Option<std::net::IpAddr>,
}

impl FeedSocket {
    fn write_text(&mut self, ctx: &mut ws::WebsocketContext<Self>, text: &str) {
        self.written += frame_size(text.len());
        self.frame_ends.push_back(self.written);
        ctx.text(text);
    }

    fn close(&mut self, ctx: &mut ws::WebsocketContext<Self>, code: u16, why: &str) {
        if self.closing {
            return;
        }
        self.closing = true;
        ctx.close(Some(ws::CloseReason {
            code: ws::CloseCode::from(code),
            description: Some(why.to_string()),
        }));
        ctx.stop();
    }

    fn fail_auth(&mut self, ctx: &mut ws::WebsocketContext<Self>, e: &Error) {
        let frame = json!({"type": "error", "error": error_object(e, self.request_id.as_deref())});
        self.write_text(ctx, &frame.to_string());
        self.close(ctx, CLOSE_UNAUTHENTICATED, "unauthenticated");
    }

    fn connect(&mut self, ctx: &mut ws::WebsocketContext<Self>) {
        let Some(u) = &self.user else { return };
        if std::mem::take(&mut self.pending) {
            self.st.live.release_pending();
        }
        self.st.live.join_user(
            self.id,
            u.project.id,
            u.user.id,
            self.jwt,
            self.st.settings.max_user_sockets,
        );
        let msg = Connect {
            id: self.id,
            socket: ctx.address().recipient(),
            since: self.since,
        };
        let (engine, project, user) = (self.st.engine.clone(), u.project.id, u.user.id);
        ctx.wait(
            async move { engine.ask_user(project, user, msg).await }
                .into_actor(self)
                .map(|r, act, ctx| match r {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) | Err(e) => {
                        tracing::warn!(error = %e.message, "live feed: cannot join the user's feed");
                        act.close(ctx, 1011, "internal error");
                    }
                }),
        );
    }

    fn auth_frame(&mut self, text: &str, ctx: &mut ws::WebsocketContext<Self>) {
        let v: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(_) => {
                return self.fail_auth(
                    ctx,
                    &Error::unauthenticated("user_key_jwt", "missing_user_key"),
                )
            }
        };
        if v.get("type").and_then(|t| t.as_str()) != Some("auth") {
            return self.fail_auth(
                ctx,
                &Error::unauthenticated("user_key_jwt", "missing_user_key"),
            );
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
        let (st, project) = (self.st.clone(), self.project.clone());
        if let Some(ApiError(e)) = self.peer.and_then(|ip| auth::refused_address(&st, ip)) {
            return self.fail_auth(ctx, &e);
        }
        ctx.wait(
            async move { auth::user_for(&st, project, key.as_deref(), id.as_deref()).await }
                .into_actor(self)
                .map(|r, act, ctx| match r {
                    Ok(u) => {
                        act.user = Some(u);
                        act.connect(ctx);
                    }
                    Err(ApiError(e)) => {
                        let e = auth::charge(&act.st, act.peer, e);
                        act.fail_auth(ctx, &e)
                    }
                }),
        );
    }
}

impl Actor for FeedSocket {
    type Context = ws::WebsocketContext<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        self.st
            .live
            .insert(self.id, self.project.id, ctx.address().recipient());
        metrics::gauge!("herald_websocket_connections").set(self.st.live.len() as f64);
        if self.user.is_some() {
            self.connect(ctx);
        } else {
            ctx.run_later(AUTH_TIMEOUT, |act, ctx| {
                if act.user.is_none() {
                    act.close(ctx, CLOSE_UNAUTHENTICATED, "authentication timed out");
                }
            });
        }
        ctx.run_interval(PING_EVERY, |act, ctx| {
            if act.last_heard.elapsed() > SILENCE_LIMIT {
                act.close(ctx, 1001, "no answer to pings");
            } else {
                act.written += frame_size(0);
                ctx.ping(b"");
            }
        });
    }

    fn stopped(&mut self, _: &mut Self::Context) {
        if std::mem::take(&mut self.pending) {
            self.st.live.release_pending();
        }
        self.st.live.leave(
            self.id,
            self.user.as_ref().map(|u| (u.project.id, u.user.id)),
        );
        metrics::gauge!("herald_websocket_connections").set(self.st.live.len() as f64);
        if let Some(u) = &self.user {
            if let Some(a) = self
                .st
                .engine
                .user_actor_if_running(u.project.id, u.user.id)
            {
                a.do_send(Disconnect { id: self.id });
            }
        }
    }
}

impl Handler<LiveFrame> for FeedSocket {
    type Result = ();
    fn handle(&mut self, LiveFrame(f): LiveFrame, ctx: &mut Self::Context) {
        if self.closing {
            return;
        }
        let pulled = self.pulled.get();
        while self.frame_ends.front().is_some_and(|e| *e <= pulled) {
            self.frame_ends.pop_front();
        }
        if self.frame_ends.len() >= MAX_UNSENT {
            return self.close(ctx, 1013, "client too slow; resume with since_seq");
        }
        self.write_text(ctx, &f);
    }
}

impl Handler<Close> for FeedSocket {
    type Result = ();
    fn handle(&mut self, c: Close, ctx: &mut Self::Context) {
        self.close(ctx, c.code, c.reason);
    }
}

impl StreamHandler<Result<ws::Message, ws::ProtocolError>> for FeedSocket {
    fn handle(&mut self, msg: Result<ws::Message, ws::ProtocolError>, ctx: &mut Self::Context) {
        self.last_heard = Instant::now();
        match msg {
            Ok(ws::Message::Ping(p)) => {
                self.written += frame_size(p.len());
                ctx.pong(&p);
            }
            Ok(ws::Message::Pong(_)) => {}
            Ok(ws::Message::Text(t)) => {
                if self.user.is_none() {
                    self.auth_frame(&t, ctx);
                }
                // Once authenticated, client frames are ignored (docs/API.md §12).
            }
            Ok(ws::Message::Binary(_)) => {
                if self.user.is_none() {
                    self.fail_auth(
                        ctx,
                        &Error::unauthenticated("user_key_jwt", "missing_user_key"),
                    );
                }
            }
            Ok(ws::Message::Close(_)) | Err(_) => ctx.stop(),
            Ok(ws::Message::Continuation(_)) | Ok(ws::Message::Nop) => {}
        }
    }
}

/// The upgrade: header credentials are checked before it (a failure is the usual
/// 401 body); a browser's `api_key` query parameter is checked before it too, and
/// its user key comes in the first frame.
pub async fn live(req: HttpRequest, stream: web::Payload, st: State) -> ApiResult<HttpResponse> {
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
        let p = st.run(move |s| s.project_by_api_key(&pk)).await?;
        let Some(p) = p else {
            let e = Error::unauthenticated("api_key", "invalid_api_key");
            return Err(ApiError(auth::charge(&st, peer, e)));
        };
        (p, None)
    };
    // A socket without its user yet holds one of a bounded number of places
    // (an auth frame may take 10 s to come; thousands of silent sockets must
    // not pile up). Taken only once the upgrade is certain to be answered.
    let pending = user.is_none();
    let mut res = ws::handshake(&req).map_err(|e| {
        ApiError(Error::invalid_param(
            "upgrade",
            format!("expected a WebSocket upgrade: {e}"),
        ))
    })?;
    if pending && !st.live.reserve_pending(st.settings.max_pending_sockets) {
        return Err(Error::new(
            herald_actors::ErrorCode::ServiceUnavailable,
            "too many live-feed sockets are still authenticating; retry shortly",
        )
        .with("retry_after", 1)
        .into());
    }
    let pulled = Rc::new(Cell::new(0u64));
    let socket = FeedSocket {
        st: st.clone(),
        id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        project,
        user,
        since,
        last_heard: Instant::now(),
        written: 0,
        frame_ends: VecDeque::new(),
        pulled: pulled.clone(),
        closing: false,
        request_id: crate::errors::current_request_id(),
        pending,
        peer,
        jwt: req
            .headers()
            .get(auth::USER_KEY)
            .is_some_and(|v| !v.is_empty()),
    };
    let body = ws::WebsocketContext::create(socket, stream);
    Ok(res.streaming(Counted {
        inner: Box::pin(body),
        pulled,
    }))
}
