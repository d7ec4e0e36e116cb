//! Sockets under pressure and change: backpressure (1013), shutdown (1001),
//! delayed entries, the socket caps, security changes, raw upgrades and
//! actions on the live feed.

use super::*;

#[tokio::test]
async fn a_client_that_never_reads_is_closed_with_1013_and_resumes() {
    let f = fixture().await;
    let app = &f.app;
    let (ext, _) = app.create_user("slow", json!({})).await;
    // the entry carries 32 KiB, so every event frame does too
    let pad = "x".repeat(32 * 1024);
    run_flow(
        app,
        &f.flow_id,
        json!({"recipients": [{"external_id": ext}], "data": {"i": 1, "pad": pad}}),
    )
    .await;
    let feed = wait_feed(app, &ext, 1).await;
    let id = s(&feed["items"][0]["id"]);

    // a small receive buffer, and this socket is not read from until the end
    let (mut slow, _) = open_with(
        app,
        "",
        &[
            ("x-service-api-key", &app.public_key),
            ("x-service-user-id", &ext),
        ],
        Some(4096),
    )
    .await
    .unwrap_or_else(|e| panic!("upgrade: {}", describe_err(e)));
    // let it register (hello is queued for it)
    tokio::time::sleep(Duration::from_millis(300)).await;

    // 1,500 events: archive/unarchive toggles of the entry
    const EVENTS: u64 = 1500;
    let started = Instant::now();
    let path_a = format!("{U}/feed/{id}/archive");
    let path_u = format!("{U}/feed/{id}/unarchive");
    for k in 0..EVENTS {
        let p = if k % 2 == 0 { &path_a } else { &path_u };
        let r = app.user(POST, p, &ext).go().await;
        assert_eq!(r.status, 200, "{r}");
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "producing {EVENTS} events took too long ({k} done)"
        );
    }
    let produced = started.elapsed();
    let latest = 1 + EVENTS; // created + toggles

    // now read everything the server kept for this socket, up to its close frame
    let (frames, code, why) = read_until_close(&mut slow, Duration::from_secs(30)).await;
    assert!(
        !frames.is_empty() && frames[0]["type"] == json!("hello"),
        "hello first: {:?}",
        frames.first()
    );
    // the entry's created event (seq 1) came before this socket joined
    assert_eq!(seq_of(&frames[0]), 1, "hello: {}", frames[0]);
    let events = &frames[1..];
    for (k, e) in events.iter().enumerate() {
        assert_eq!(
            seq_of(e),
            k as u64 + 2,
            "frames before the close are in order"
        );
    }
    let last = events.last().map(seq_of).unwrap_or(1);
    assert_eq!(
        code,
        Some(1013),
        "close code after {} events of {latest} (reason {why:?}, produced in {produced:?})",
        events.len()
    );
    assert!(
        last < latest,
        "the slow client was cut off before the end ({last} of {latest})"
    );
    assert!(
        events.len() >= 1000,
        "the frames queued before the limit are sent before the close ({})",
        events.len()
    );

    // it resumes with since_seq and gets exactly the rest
    let mut ws = connect_user(app, &ext, &format!("since_seq={last}")).await;
    hello(&mut ws, latest).await;
    for seq in last + 1..=latest {
        let e = match next_got(&mut ws, WAIT).await {
            Got::Text(v) => v,
            other => panic!("replay: expected seq {seq}, got {other:?}"),
        };
        assert_eq!(seq_of(&e), seq, "replay after 1013");
    }
    silence(&mut ws, 300).await;
}

#[tokio::test]
async fn sigterm_closes_open_sockets_with_1001_and_exits_0() {
    let f = fixture().await;
    let Fixture { mut app, .. } = f;
    let (ext, _) = app.create_user("term", json!({})).await;
    let mut ws = connect_user(&app, &ext, "").await;
    hello(&mut ws, 0).await;
    let mut b = connect_browser(&app, json!({"type": "auth", "user_id": ext}), "").await;
    hello(&mut b, 0).await;

    let stopper = tokio::task::spawn_blocking(move || {
        let t = Instant::now();
        let st = app.stop();
        (st, t.elapsed(), app)
    });
    let (fa, ca, wa) = read_until_close(&mut ws, Duration::from_secs(15)).await;
    let (fb, cb, wb) = read_until_close(&mut b, Duration::from_secs(15)).await;
    let (status, took, app) = stopper.await.unwrap();
    assert!(fa.is_empty() && fb.is_empty(), "no frames: {fa:?} {fb:?}");
    assert_eq!(ca, Some(1001), "close code (reason {wa:?})");
    assert_eq!(cb, Some(1001), "close code (reason {wb:?})");
    assert_eq!(
        status.code(),
        Some(0),
        "exit status {status:?}; output:\n{}",
        app.output.tail(20)
    );
    assert!(took <= Duration::from_secs(10), "exit took {took:?}");
}

#[tokio::test]
async fn delayed_in_app_entries_arrive_after_the_delay_interleaved_in_seq_order_with_rest_changes()
{
    // In-app deliveries due at once are settled with the run; delayed ones go
    // through the in-app delivery actor's batches. Both writers share one seq.
    let f = fixture().await;
    let inapp = in_app_channel(&f.app).await;
    let delayed = active_flow(
        &f.app,
        "later",
        json!([
            delay_step(1),
            channel_step(&inapp, None, "late {{ data.i }}")
        ]),
    )
    .await;
    let (ext, _) = f.app.create_user("delayed", json!({})).await;
    let (other, _) = f.app.create_user("delayed-other", json!({})).await;
    let mut ws = connect_user(&f.app, &ext, "").await;
    hello(&mut ws, 0).await;
    let mut ows = connect_user(&f.app, &other, "").await;
    hello(&mut ows, 0).await;

    let accepted = Instant::now();
    run_flow(
        &f.app,
        &s(&delayed["id"]),
        json!({"recipients": [{"external_id": ext}, {"external_id": other}], "data": {"i": 1}}),
    )
    .await;
    // an immediate entry and a REST change while the delayed one waits
    f.run(&ext, 2).await;
    let now_ev = frame(&mut ws).await;
    assert_event(&now_ev, "feed_entry.created", 1);
    assert_eq!(now_ev["entry"]["data"]["body"], json!("B2"), "{now_ev}");
    post_user(
        &f.app,
        &ext,
        &format!("/feed/{}/read", s(&now_ev["entry"]["id"])),
    )
    .await;
    assert_event(&frame(&mut ws).await, "feed_entry.updated", 2);

    let late = match next_got(&mut ws, Duration::from_secs(10)).await {
        Got::Text(v) => v,
        other => panic!("the delayed entry never arrived: {other:?}"),
    };
    assert!(
        accepted.elapsed() >= Duration::from_millis(900),
        "delivered before its delay: after {:?}",
        accepted.elapsed()
    );
    assert_event(&late, "feed_entry.created", 3);
    assert_eq!(late["entry"]["data"]["body"], json!("late 1"), "{late}");
    assert_eq!(
        late["meta"],
        json!({"unread_count": 1, "unseen_count": 1}),
        "{late}"
    );
    let oev = frame(&mut ows).await;
    assert_event(&oev, "feed_entry.created", 1);
    assert_eq!(oev["entry"]["data"]["body"], json!("late 1"), "{oev}");
    // the delivery behind it is sent, and the feed agrees with the frame
    let r = f
        .app
        .user(GET, &format!("{U}/feed/{}", s(&late["entry"]["id"])), &ext)
        .go()
        .await;
    assert_eq!(&r.ok(200), &late["entry"]);
    let d = wait_delivery_final(&f.app, &s(&late["entry"]["id"]), 10).await;
    assert_eq!(d["status"], json!("sent"), "{d}");
    assert_eq!(d["attempts"], json!(1), "{d}");
    silence(&mut ws, 300).await;
    silence(&mut ows, 100).await;
}

// ================================================================ caps and authentication changes

#[tokio::test]
async fn a_user_over_the_socket_cap_loses_the_oldest_socket_with_4408() {
    if single_node_only("the socket cap is per node") {
        return;
    }
    let app = TestApp::spawn_with(&["--max-user-sockets", "3", "--user-rate", "100000"], &[]);
    let (ext, _) = app.create_user("many", json!({})).await;
    let (other, _) = app.create_user("other", json!({})).await;
    let mut socks = vec![];
    for _ in 0..3 {
        let mut ws = connect_user(&app, &ext, "").await;
        hello(&mut ws, 0).await;
        socks.push(ws);
    }
    // another user's socket does not count against this one
    let mut theirs = connect_user(&app, &other, "").await;
    hello(&mut theirs, 0).await;
    // the fourth pushes out the first (oldest), by header or by auth frame
    let mut fourth = connect_user(&app, &ext, "").await;
    hello(&mut fourth, 0).await;
    let (frames, code, why) = read_until_close(&mut socks[0], WAIT).await;
    assert!(frames.is_empty(), "{frames:?}");
    assert_eq!(code, Some(4408), "close code (reason {why:?})");
    let mut fifth = connect_browser(&app, json!({"type": "auth", "user_id": ext}), "").await;
    hello(&mut fifth, 0).await;
    let (_, code, why) = read_until_close(&mut socks[1], WAIT).await;
    assert_eq!(code, Some(4408), "close code (reason {why:?})");
    // the others stay open and keep receiving
    for ws in [&mut socks[2], &mut fourth, &mut fifth, &mut theirs] {
        silence(ws, 200).await;
    }
    let r = post_user(&app, &ext, "/feed/read_all").await;
    assert!(r.is_object(), "{r}");
}

#[tokio::test]
async fn sockets_still_authenticating_are_capped() {
    if single_node_only("the cap on sockets still authenticating is per node") {
        return;
    }
    let app = TestApp::spawn_with(&["--max-pending-sockets", "2"], &[]);
    let (ext, _) = app.create_user("pend", json!({})).await;
    let q = format!("api_key={}", enc(&app.public_key));
    // two silent browser sockets hold both places
    let mut a = open(&app, &q, &[]).await;
    let _b = open(&app, &q, &[]).await;
    match open_with(&app, &q, &[], None).await {
        Ok(_) => panic!("a third unauthenticated socket was accepted"),
        Err(tungstenite::Error::Http(r)) => {
            assert_eq!(r.status().as_u16(), 503);
            let body: Value =
                serde_json::from_slice(r.body().as_deref().unwrap_or_default()).unwrap();
            assert_eq!(
                body["error"]["code"],
                json!("service_unavailable"),
                "{body}"
            );
            assert!(r.headers().get("retry-after").is_some(), "{r:?}");
        }
        Err(e) => panic!("{}", describe_err(e)),
    }
    // header-authenticated sockets need no place
    let mut h = connect_user(&app, &ext, "").await;
    hello(&mut h, 0).await;
    // once one of them authenticates, its place is free again
    send(&mut a, json!({"type": "auth", "user_id": ext}).to_string()).await;
    hello(&mut a, 0).await;
    let mut c = open(&app, &q, &[]).await;
    send(&mut c, json!({"type": "auth", "user_id": ext}).to_string()).await;
    hello(&mut c, 0).await;
}

#[tokio::test]
async fn switching_security_mode_on_or_changing_the_signing_key_closes_sockets_with_4401() {
    let app = TestApp::spawn();
    let (ext, _) = app.create_user("sec", json!({})).await;
    // development mode: a bare user id authenticates, by header or auth frame
    let mut dev = connect_user(&app, &ext, "").await;
    hello(&mut dev, 0).await;
    let mut dev2 = connect_browser(&app, json!({"type": "auth", "user_id": ext}), "").await;
    hello(&mut dev2, 0).await;
    // a JWT socket, by header and by auth frame
    let pair = RsaPair::generate(2048);
    app.put_signing_key(&pair.public_pem).await;
    let token = pair.sign(&json!({"sub": ext, "exp": now_secs() + 600}));
    let jwt_headers = [
        ("x-service-api-key", app.public_key.as_str()),
        ("x-service-user-key", token.as_str()),
    ];
    let mut jwt = open(&app, "", &jwt_headers).await;
    hello(&mut jwt, 0).await;
    let mut jwt2 = connect_browser(&app, json!({"type": "auth", "user_key": token}), "").await;
    hello(&mut jwt2, 0).await;
    // setting a key while security mode is off does not concern id sockets
    silence(&mut dev, 200).await;

    // security mode on: the id sockets are closed, the JWT ones stay
    app.set_security_mode(true).await;
    for ws in [&mut dev, &mut dev2] {
        let (frames, code, why) = read_until_close(ws, WAIT).await;
        assert!(frames.is_empty(), "{frames:?}");
        assert_eq!(code, Some(4401), "close code (reason {why:?})");
    }
    silence(&mut jwt, 200).await;
    // and a bare user id no longer opens one
    match open_with(
        &app,
        "",
        &[
            ("x-service-api-key", &app.public_key),
            ("x-service-user-id", &ext),
        ],
        None,
    )
    .await
    {
        Ok(_) => panic!("a user id opened a socket in security mode"),
        Err(e) => assert_refused(e, 401, "user_key_jwt", "missing_user_key"),
    }
    // an unrelated change (the name) leaves them open
    app.put_project(&json!({"name": "renamed"})).await.ok(200);
    silence(&mut jwt, 200).await;

    // a new signing key: every JWT socket is closed (its token no longer verifies)
    let other = RsaPair::generate(2048);
    app.put_signing_key(&other.public_pem).await;
    for ws in [&mut jwt, &mut jwt2] {
        let (frames, code, why) = read_until_close(ws, WAIT).await;
        assert!(frames.is_empty(), "{frames:?}");
        assert_eq!(code, Some(4401), "close code (reason {why:?})");
    }
    // the old token is refused, a token of the new key opens one; deleting the
    // key closes that one too
    match open_with(&app, "", &jwt_headers, None).await {
        Ok(_) => panic!("a token of the old key opened a socket"),
        Err(e) => assert_refused(e, 401, "user_key_jwt", "invalid_signature"),
    }
    let fresh = other.sign(&json!({"sub": ext, "exp": now_secs() + 600}));
    let mut jwt3 = open(
        &app,
        "",
        &[
            ("x-service-api-key", &app.public_key),
            ("x-service-user-key", &fresh),
        ],
    )
    .await;
    hello(&mut jwt3, 0).await;
    app.admin(DELETE, &format!("{A}/project/signing_key"))
        .go()
        .await
        .ok(204);
    let (_, code, why) = read_until_close(&mut jwt3, WAIT).await;
    assert_eq!(code, Some(4401), "close code (reason {why:?})");
}

/// The auth frame written in the same packet as the upgrade request (bytes the
/// server reads together with the request head) is not lost when the socket
/// leaves the HTTP layer; client pings get pongs with their payload.
#[tokio::test]
async fn an_auth_frame_right_behind_the_upgrade_request_is_read() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio_tungstenite::tungstenite::protocol::Role;
    let f = fixture().await;
    let app = &f.app;
    let (ext, _) = app.create_user("eager", json!({})).await;

    let addr: std::net::SocketAddr = app.address.trim_start_matches("http://").parse().unwrap();
    let mut tcp = timeout(WAIT, tokio::net::TcpStream::connect(addr))
        .await
        .expect("TCP connect timed out")
        .expect("TCP connect");
    let mut bytes = format!(
        "GET {U}/feed/live?api_key={} HTTP/1.1\r\nhost: {addr}\r\nupgrade: websocket\r\nconnection: upgrade\r\nsec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
        enc(&app.public_key)
    )
    .into_bytes();
    // one masked text frame: the auth frame
    let auth = json!({"type": "auth", "user_id": ext}).to_string();
    let mask = [0x11u8, 0x22, 0x33, 0x44];
    assert!(auth.len() < 126);
    bytes.extend_from_slice(&[0x81, 0x80 | auth.len() as u8]);
    bytes.extend_from_slice(&mask);
    bytes.extend(auth.bytes().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    tcp.write_all(&bytes).await.unwrap();

    // the response head, a byte at a time (what follows is WebSocket frames)
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let b = timeout(WAIT, tcp.read_u8())
            .await
            .expect("response head timed out")
            .expect("response head");
        head.push(b);
        assert!(head.len() < 8192, "response head too long");
    }
    let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 101"), "{head}");
    assert!(
        head.contains("sec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo="),
        "{head}"
    );
    let mut ws: Ws =
        WebSocketStream::from_raw_socket(MaybeTlsStream::Plain(tcp), Role::Client, None).await;
    hello(&mut ws, 0).await;

    timeout(
        WAIT,
        ws.send(Message::Ping(b"are you there".to_vec().into())),
    )
    .await
    .expect("ping timed out")
    .expect("ping");
    let pong = timeout(WAIT, ws.next())
        .await
        .expect("pong timed out")
        .expect("a frame")
        .expect("a frame");
    assert_eq!(pong, Message::Pong(b"are you there".to_vec().into()));

    f.run(&ext, 1).await;
    let e = expect_type(&mut ws, "feed_entry.created").await;
    assert_eq!(seq_of(&e), 1, "{e}");
}

/// A WebSocket upgrade to another route gets that route's usual answer, with
/// the error object.
#[tokio::test]
async fn an_upgrade_to_another_route_gets_that_routes_answer() {
    let f = fixture().await;
    let app = &f.app;
    let base = app.address.replacen("http://", "ws://", 1);
    let r = timeout(
        WAIT,
        tokio_tungstenite::connect_async(format!("{base}/admin/v1/flows")),
    )
    .await
    .expect("upgrade timed out");
    match r {
        Ok(_) => panic!("the upgrade must be refused"),
        Err(e) => assert_refused(e, 401, "api_key", "missing_api_key"),
    }
    // and the server goes on serving
    let mut ws = connect_user(app, &app.create_user("after", json!({})).await.0, "").await;
    hello(&mut ws, 0).await;
}

/// Issue 41: an entry's rendered action buttons come in its
/// `feed_entry.created` frame, a press (`interact`) comes as
/// `feed_entry.updated`, and `archive_all` sends one per entry it archived.
#[tokio::test]
async fn actions_interactions_and_archive_all_arrive_on_the_live_feed() {
    let app = TestApp::spawn_with(&["--user-rate", "100000"], &[]);
    let inapp = in_app_channel(&app).await;
    let mut step = channel_step(&inapp, None, "B{{ data.i }}");
    step["template"]["actions"] =
        json!([{"label": "Open {{ data.i }}", "url": "https://x/{{ data.i }}"}]);
    let flow = active_flow(&app, "live-act", json!([step])).await;
    let (ext, _) = app.create_user("act", json!({})).await;
    let mut ws = connect_user(&app, &ext, "").await;
    hello(&mut ws, 0).await;
    let mut ids = vec![];
    for i in 1..=2u64 {
        run_flow(
            &app,
            &s(&flow["id"]),
            json!({"recipients": [{"external_id": ext}], "data": {"i": i}}),
        )
        .await;
        let ev = frame(&mut ws).await;
        assert_event(&ev, "feed_entry.created", i);
        assert_eq!(
            ev["entry"]["data"]["actions"],
            json!([{"label": format!("Open {i}"), "url": format!("https://x/{i}")}]),
            "{ev}"
        );
        ids.push(s(&ev["entry"]["id"]));
    }
    let mut seq = 2;
    let rest = app
        .interact(&ext, &ids[0], &json!({"action": 0}))
        .await
        .ok(200);
    let ev = next(&mut ws, &mut seq).await;
    assert_eq!(ev["type"], json!("feed_entry.updated"), "{ev}");
    assert_eq!(ev["entry"], rest, "event entry vs interact response");
    assert_eq!(ev["entry"]["interacted_action"], json!(0));
    assert_eq!(ev["meta"], json!({"unread_count": 1, "unseen_count": 1}));

    let r = app.archive_all(&ext, &[]).await.ok(200);
    assert_eq!(r["updated"], json!(2), "{r}");
    let mut archived = vec![];
    for _ in 0..2 {
        let ev = next(&mut ws, &mut seq).await;
        assert_eq!(ev["type"], json!("feed_entry.updated"), "{ev}");
        assert_eq!(ev["entry"]["archived"], json!(true), "{ev}");
        archived.push(s(&ev["entry"]["id"]));
    }
    archived.sort();
    ids.sort();
    assert_eq!(archived, ids);
    let ev_meta = json!({"unread_count": 0, "unseen_count": 0});
    assert_eq!(r["meta"], ev_meta, "{r}");
}
