//! docs/API.md §12 and docs/SECURITY.md ("Socket shares"): the live-feed
//! sockets still authenticating (a browser's, until its first frame) are
//! capped per source address and per project as well as in total, so that one
//! client flooding upgrades cannot starve every tenant's browsers (issue 35,
//! item 5). A source or project over its share gets 429 `rate_limited` with
//! `Retry-After`; a full server gets 503.
//!
//! Every server listens on 127.0.0.1; a client from "another address" binds
//! its end to 127.0.0.2 and so on (all of 127.0.0.0/8 is loopback on Linux).
//! The caps belong to one node, so every socket here goes to the first node
//! (`app.address`), on a cluster too.

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::{TcpSocket, TcpStream};
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::WebSocketStream;

use crate::engine_helpers::*;
use crate::helpers::*;

type Ws = WebSocketStream<TcpStream>;

/// How long one connection, handshake or expected frame may take.
const WAIT: Duration = Duration::from_secs(10);

/// The server's default caps: 1,024 in all, an eighth per address.
const DEFAULT_PER_ADDRESS: usize = 1024 / 8;

/// How long the server waits for a socket's auth frame (docs/API.md §12).
const AUTH_TIMEOUT: Duration = Duration::from_secs(10);

/// Raises this process's soft limit of open files to its hard limit, before
/// the server is started (it inherits the limit): the flood holds over a
/// thousand sockets on each side. Returns the limit now in force.
fn raise_open_files() -> libc::rlim_t {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct given.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim), 0);
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim = raised;
            }
        }
    }
    lim.rlim_cur
}

/// Opens a live-feed socket to `base` (a node's `http://` URL) from the local
/// address `from`, with `query`; the refused upgrade's response as the error.
async fn open_from(base: &str, from: &str, query: &str) -> Result<Ws, tungstenite::Error> {
    open_with(base, from, query, &[]).await
}

/// `open_from` with request headers.
async fn open_with(
    base: &str, from: &str, query: &str, headers: &[(&'static str, &str)],
) -> Result<Ws, tungstenite::Error> {
    let url = format!(
        "{}{U}/feed/live?{query}",
        base.replacen("http://", "ws://", 1)
    );
    let mut req = url.into_client_request().unwrap();
    for (k, v) in headers {
        req.headers_mut().insert(*k, v.parse().unwrap());
    }
    let sock = TcpSocket::new_v4().unwrap();
    sock.bind(format!("{from}:0").parse().unwrap())
        .unwrap_or_else(|e| panic!("bind the client to {from}: {e}"));
    let server = base.trim_start_matches("http://").parse().unwrap();
    let tcp = timeout(WAIT, sock.connect(server))
        .await
        .expect("TCP connect timed out")
        .expect("TCP connect");
    let (ws, _) = timeout(WAIT, tokio_tungstenite::client_async(req, tcp))
        .await
        .expect("WebSocket handshake timed out")?;
    Ok(ws)
}

/// The browser's query: the project's public key.
fn key_query(public_key: &str) -> String {
    format!("api_key={}", enc(public_key))
}

/// The response of a refused upgrade: status, `Retry-After`, `x-request-id`
/// and the body as JSON.
struct Refusal {
    status: u16,
    retry_after: Option<String>,
    request_id: Option<String>,
    body: Value,
}

fn refusal(r: Result<Ws, tungstenite::Error>) -> Refusal {
    let r = match r {
        Ok(_) => panic!("the upgrade was accepted; expected a refusal"),
        Err(tungstenite::Error::Http(r)) => r,
        Err(e) => panic!("expected an HTTP answer before the upgrade, got {e}"),
    };
    let header = |name: &str| {
        r.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    Refusal {
        status: r.status().as_u16(),
        retry_after: header("retry-after"),
        request_id: header("x-request-id"),
        body: serde_json::from_slice(r.body().as_deref().unwrap_or_default())
            .unwrap_or(Value::Null),
    }
}

/// The answer of a source or project over its share: 429 `rate_limited`, the
/// contract's error object with `details` `{retry_after, limit, share}` and a
/// `Retry-After` header that agrees.
#[track_caller]
fn assert_over_share(r: &Refusal, share: &str, limit: usize) {
    let shown = format!("HTTP {} {}", r.status, r.body);
    assert_eq!(r.status, 429, "{shown}");
    let e = &r.body["error"];
    assert_eq!(e["code"], json!("rate_limited"), "{shown}");
    assert_eq!(e["status"], json!(429), "{shown}");
    assert_eq!(
        e["type"],
        json!("https://herald.dev/errors#rate_limited-429"),
        "{shown}"
    );
    assert!(
        e["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{shown}"
    );
    assert_eq!(
        e["details"],
        json!({"retry_after": 1, "limit": limit, "share": share}),
        "{shown}"
    );
    assert_eq!(r.retry_after.as_deref(), Some("1"), "Retry-After: {shown}");
    assert!(
        e["request_id"].as_str().is_some_and(|id| !id.is_empty())
            && e["request_id"].as_str() == r.request_id.as_deref(),
        "request_id and x-request-id: {shown}"
    );
}

/// The next text frame as JSON (pings skipped); panics on anything else.
async fn frame(ws: &mut Ws) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        match tokio::time::timeout_at(deadline, ws.next()).await {
            Err(_) => panic!("no frame within {WAIT:?}"),
            Ok(Some(Ok(Message::Text(t)))) => {
                return serde_json::from_str(t.as_str())
                    .unwrap_or_else(|e| panic!("server frame is not JSON ({e}): {t}"))
            }
            Ok(Some(Ok(Message::Ping(_) | Message::Pong(_)))) => continue,
            other => panic!("expected a text frame, got {other:?}"),
        }
    }
}

/// Sends the browser's auth frame (a user id: security mode is off) and
/// expects `hello`.
async fn sign_in(ws: &mut Ws, ext: &str) {
    let auth = json!({"type": "auth", "user_id": ext}).to_string();
    timeout(WAIT, ws.send(Message::text(auth)))
        .await
        .expect("send timed out")
        .expect("send the auth frame");
    let h = frame(ws).await;
    assert_eq!(h["type"], json!("hello"), "{h}");
}

/// The probe of issue 35: 1,100 silent upgrades from one address, with the
/// server's default caps. The address gets its share (an eighth of 1,024)
/// and 429 for the rest; a browser from another address still connects,
/// signs in with its first frame and receives its feed.
#[tokio::test]
async fn a_flood_of_pending_sockets_from_one_address_leaves_other_browsers_working() {
    let limit = raise_open_files();
    assert!(
        limit >= 2_500,
        "the flood needs about 1,200 open files in this process and its server; the limit is {limit}"
    );
    let app = TestApp::spawn();
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "shares",
        json!([channel_step(&inapp, None, "hello {{ data.n }}")]),
    )
    .await;
    let (ext, _) = app.create_user("shares", json!({})).await;
    let base = app.address.clone();
    let q = key_query(&app.public_key);

    let started = Instant::now();
    let results: Vec<Result<Ws, tungstenite::Error>> = futures_util::stream::iter(0..1_100)
        .map(|_| open_from(&base, "127.0.0.1", &q))
        .buffer_unordered(64)
        .collect()
        .await;
    let flood_took = started.elapsed();
    let mut held = vec![];
    let mut refused = vec![];
    for r in results {
        match r {
            Ok(ws) => held.push(ws),
            Err(e) => refused.push(refusal(Err(e))),
        }
    }
    // A place frees only when its socket ends, at the earliest after the
    // auth timeout: a flood that took longer than that may have had some back.
    if flood_took < AUTH_TIMEOUT {
        assert_eq!(held.len(), DEFAULT_PER_ADDRESS, "flood took {flood_took:?}");
    } else {
        assert!(
            held.len() >= DEFAULT_PER_ADDRESS,
            "flood took {flood_took:?}"
        );
    }
    assert_eq!(held.len() + refused.len(), 1_100);
    assert_over_share(&refused[0], "address", DEFAULT_PER_ADDRESS);
    for r in &refused {
        assert_eq!(
            (r.status, &r.body["error"]["details"]["share"]),
            (429, &json!("address"))
        );
    }

    // a browser on another address: upgrade, first-frame auth, its feed
    let mut browser = open_from(&base, "127.0.0.2", &q)
        .await
        .unwrap_or_else(|e| panic!("the other address's browser socket was refused: {e}"));
    sign_in(&mut browser, &ext).await;
    // the flooding address still holds its whole share meanwhile
    assert_over_share(
        &refusal(open_from(&base, "127.0.0.1", &q).await),
        "address",
        DEFAULT_PER_ADDRESS,
    );
    run_flow(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [{"external_id": ext}], "data": {"n": 7}}),
    )
    .await;
    let ev = frame(&mut browser).await;
    assert_eq!(ev["type"], json!("feed_entry.created"), "{ev}");
    assert_eq!(ev["seq"], json!(1), "{ev}");

    for mut ws in held.into_iter().chain([browser]) {
        let _ = timeout(Duration::from_millis(200), ws.close(None)).await;
    }
}

/// Each answer with small caps (6 in all, 2 per address, 3 per project) and
/// two projects: an address at its share gets 429 `share: address` for any
/// project, a project at its share gets 429 `share: project` from any
/// address, a full server 503 with `Retry-After`; a socket that signs in gives
/// its place back, and sockets signed in by headers need none.
#[tokio::test]
async fn over_its_share_a_source_or_project_gets_429_and_a_full_server_503() {
    let dir = tempfile::tempdir().unwrap();
    let b = create_project_keys("other", dir.path());
    let a = Keys::random();
    let app = spawn_with_dir(
        dir,
        &a,
        &[
            "--max-pending-sockets",
            "6",
            "--max-pending-per-address",
            "2",
            "--max-pending-per-project",
            "3",
        ],
    );
    let (ext, _) = app.create_user("share", json!({})).await;
    let base = app.address.clone();
    let (qa, qb) = (key_query(&a.public_key), key_query(&b.public_key));
    let open = |from: &'static str, q: &String| {
        let (base, q) = (base.clone(), q.clone());
        async move { open_from(&base, from, &q).await }
    };

    let mut first = open("127.0.0.1", &qa).await.expect("1st socket of .1");
    let _second = open("127.0.0.1", &qa).await.expect("2nd socket of .1");
    // the address's share is taken, for the other project too
    assert_over_share(&refusal(open("127.0.0.1", &qa).await), "address", 2);
    assert_over_share(&refusal(open("127.0.0.1", &qb).await), "address", 2);
    // project A's third place, then its share is taken, from any address
    let _third = open("127.0.0.2", &qa).await.expect("A's 3rd socket");
    assert_over_share(&refusal(open("127.0.0.3", &qa).await), "project", 3);
    // project B is not concerned: it fills the rest of the total
    let mut held_b = vec![];
    for from in ["127.0.0.2", "127.0.0.3", "127.0.0.4"] {
        held_b.push(open(from, &qb).await.expect("B's sockets"));
    }
    // every place is taken: the server is busy for everyone
    let full = refusal(open("127.0.0.5", &qb).await);
    assert_eq!(full.status, 503, "{}", full.body);
    assert_eq!(full.body["error"]["code"], json!("service_unavailable"));
    // the contract: a 503's details are empty, its wait is in Retry-After
    assert_eq!(full.body["error"]["details"], json!({}));
    assert_eq!(full.retry_after.as_deref(), Some("1"));

    // a socket signed in by headers takes no place, even from .1
    let headers = [
        ("x-service-api-key", a.public_key.as_str()),
        ("x-service-user-id", ext.as_str()),
    ];
    let mut by_headers = open_with(&base, "127.0.0.1", "", &headers)
        .await
        .expect("a socket signed in by headers");
    assert_eq!(frame(&mut by_headers).await["type"], json!("hello"));

    // signing in gives the place back to its address, its project and the total
    sign_in(&mut first, &ext).await;
    let mut again = open("127.0.0.1", &qa).await.expect("the place given back");
    sign_in(&mut again, &ext).await;
}
