//! How a socket authenticates: browser-style auth, refusals before the
//! upgrade (401) and after it (error frame and 4401), the auth timeout.

use super::*;

#[tokio::test]
async fn browser_auth_with_api_key_query_and_auth_frame() {
    let f = fixture().await;
    let app = &f.app;
    let (ext, _) = app.create_user("browser", json!({})).await;

    // user id in the auth frame (security mode off)
    let mut ws = connect_browser(app, json!({"type": "auth", "user_id": ext}), "").await;
    hello(&mut ws, 0).await;

    // a JWT user key, signed with a generated signing key
    let r = app
        .admin(POST, &format!("{A}/project/signing_key"))
        .go()
        .await;
    let pair = r.ok(201);
    let private = s(&pair["private_key"]);
    let token = sign_with(
        &private,
        jsonwebtoken::Algorithm::RS256,
        &json!({"sub": ext, "exp": now_secs() + 300}),
    );
    let mut jwt = connect_browser(app, json!({"type": "auth", "user_key": token}), "").await;
    hello(&mut jwt, 0).await;
    // and the same token in the header
    let mut hdr = open(
        app,
        "",
        &[
            ("x-service-api-key", &app.public_key),
            ("x-service-user-key", &token),
        ],
    )
    .await;
    hello(&mut hdr, 0).await;

    // once authenticated, unknown client frames are ignored
    send(&mut jwt, json!({"type": "subscribe", "x": 1}).to_string()).await;
    send(&mut jwt, "not json".to_string()).await;
    f.run(&ext, 1).await;
    for s in [&mut ws, &mut jwt, &mut hdr] {
        assert_event(&frame(s).await, "feed_entry.created", 1);
    }

    // security mode on: a user id frame is refused, a JWT still works
    app.set_security_mode(true).await;
    let mut refused = connect_browser(app, json!({"type": "auth", "user_id": ext}), "").await;
    assert_frame_auth_failure(&mut refused, Some("missing_user_key")).await;
    let mut jwt2 = connect_browser(app, json!({"type": "auth", "user_key": token}), "").await;
    hello(&mut jwt2, 1).await;
    // an expired token is refused
    let expired = sign_with(
        &private,
        jsonwebtoken::Algorithm::RS256,
        &json!({"sub": ext, "exp": now_secs() - 600}),
    );
    let mut old = connect_browser(app, json!({"type": "auth", "user_key": expired}), "").await;
    assert_frame_auth_failure(&mut old, Some("token_expired")).await;
}

#[tokio::test]
async fn failed_auth_before_the_upgrade_is_a_401_error_body() {
    let f = fixture().await;
    let app = &f.app;
    let (ext, _) = app.create_user("fail", json!({})).await;

    let refused = |r: Result<(Ws, Response), tungstenite::Error>| match r {
        Ok(_) => panic!("the upgrade must be refused"),
        Err(e) => e,
    };
    // bad api_key query parameter
    let e = refused(open_with(app, "api_key=pk_test_nope", &[], None).await);
    assert_refused(e, 401, "api_key", "invalid_api_key");
    // no credentials at all
    let e = refused(open_with(app, "", &[], None).await);
    assert_refused(e, 401, "api_key", "missing_api_key");
    // header auth: unknown api key, unknown user, no user
    let e = refused(
        open_with(
            app,
            "",
            &[
                ("x-service-api-key", "pk_test_nope"),
                ("x-service-user-id", &ext),
            ],
            None,
        )
        .await,
    );
    assert_refused(e, 401, "api_key", "invalid_api_key");
    let e = refused(
        open_with(
            app,
            "",
            &[
                ("x-service-api-key", &app.public_key),
                ("x-service-user-id", "nobody-here"),
            ],
            None,
        )
        .await,
    );
    assert_refused(e, 401, "user_key_jwt", "user_not_found");
    let e = refused(open_with(app, "", &[("x-service-api-key", &app.public_key)], None).await);
    assert_refused(e, 401, "user_key_jwt", "missing_user_key");
    let e = refused(
        open_with(
            app,
            "",
            &[
                ("x-service-api-key", &app.public_key),
                ("x-service-user-key", "not.a.jwt"),
            ],
            None,
        )
        .await,
    );
    assert_refused(e, 401, "user_key_jwt", "invalid_signature");
    // a malformed since_seq
    let e = refused(
        open_with(
            app,
            "since_seq=abc",
            &[
                ("x-service-api-key", &app.public_key),
                ("x-service-user-id", &ext),
            ],
            None,
        )
        .await,
    );
    assert_refused(e, 400, "since_seq", "");
}

#[tokio::test]
async fn a_first_frame_that_is_not_an_auth_frame_gets_an_error_frame_and_4401() {
    let f = fixture().await;
    let app = &f.app;
    let (ext, _) = app.create_user("frame", json!({})).await;
    let q = format!("api_key={}", enc(&app.public_key));

    for first in [
        json!({"type": "subscribe", "user_id": ext}).to_string(),
        "hello there".to_string(),
        json!(["auth"]).to_string(),
    ] {
        let mut ws = open(app, &q, &[]).await;
        send(&mut ws, first.clone()).await;
        assert_frame_auth_failure(&mut ws, None).await;
    }
    // an auth frame naming nobody, or with a bad key
    let mut ws = connect_browser(app, json!({"type": "auth", "user_id": "nobody-here"}), "").await;
    assert_frame_auth_failure(&mut ws, Some("user_not_found")).await;
    let mut ws = connect_browser(app, json!({"type": "auth"}), "").await;
    assert_frame_auth_failure(&mut ws, Some("missing_user_key")).await;
    let mut ws = connect_browser(app, json!({"type": "auth", "user_key": "x.y.z"}), "").await;
    assert_frame_auth_failure(&mut ws, Some("invalid_signature")).await;
}

#[tokio::test]
async fn the_error_frame_carries_the_upgrade_request_id() {
    // §3: the error object's request_id is the request's id, as in its x-request-id header
    let f = fixture().await;
    let app = &f.app;
    let q = format!("api_key={}", enc(&app.public_key));
    let (mut ws, resp) = open_with(app, &q, &[("x-request-id", "live-rid-123")], None)
        .await
        .unwrap_or_else(|e| panic!("upgrade: {}", describe_err(e)));
    assert_eq!(
        resp.headers()
            .get("x-request-id")
            .and_then(|v| v.to_str().ok()),
        Some("live-rid-123"),
        "the 101 carries the request id"
    );
    send(
        &mut ws,
        json!({"type": "auth", "user_id": "nobody-here"}).to_string(),
    )
    .await;
    let err = assert_frame_auth_failure(&mut ws, Some("user_not_found")).await;
    assert_eq!(
        err["request_id"],
        json!("live-rid-123"),
        "error.request_id of the error frame: {err}"
    );
}

#[tokio::test]
async fn no_auth_frame_within_10_seconds_closes_with_4401() {
    let f = fixture().await;
    let q = format!("api_key={}", enc(&f.app.public_key));
    let mut ws = open(&f.app, &q, &[]).await;
    let t = Instant::now();
    let (frames, code, why) = read_until_close(&mut ws, Duration::from_secs(15)).await;
    let took = t.elapsed();
    assert!(frames.is_empty(), "no frame before the close: {frames:?}");
    assert_eq!(code, Some(4401), "close code (reason {why:?})");
    assert!(
        took >= Duration::from_millis(9_000) && took <= Duration::from_secs(13),
        "closed after {took:?}, expected about 10 s"
    );
}
