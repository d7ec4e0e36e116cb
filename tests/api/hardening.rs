//! Hardening of the HTTP edge (each test reproduces a finding of an attacker's
//! probe and shows it fixed): authentication on the path the router matches,
//! bytes that are not UTF-8 in a path, the error object on answers the HTTP
//! layer makes itself (431, 400), cursors bound to their project, wrong
//! credentials rate-limited per client address, weak bootstrap keys refused,
//! and idempotency keys that do not serialise two projects. (The live-feed caps
//! and 4401 closes are in `live.rs`, the egress guard in `egress.rs`, the full
//! disk in `disk_full.rs`, secrets in `secrets_at_rest.rs`, fairness and
//! template bounds in `fairness.rs` and `templates_bounded.rs`.)

use std::io::{Read, Write};
use std::time::Duration;

use serde_json::{json, Value};

use crate::helpers::*;

/// Sends raw bytes on a fresh connection and reads the answer until the server
/// closes it (or 5 s pass): what a hand-written client sees, no normalisation.
fn raw(app: &TestApp, request: &[u8]) -> (u16, String, Value) {
    let addr = app.address.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    // The server may answer and close before it has read everything we send.
    let _ = s.write_all(request);
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .get(9..12)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    (
        status,
        head.to_ascii_lowercase(),
        serde_json::from_str(body).unwrap_or(Value::Null),
    )
}

/// Asserts the error object of docs/API.md §3 in a raw answer.
#[track_caller]
fn assert_raw_error(answer: &(u16, String, Value), status: u16, code: &str) {
    let (got, head, body) = answer;
    assert_eq!(*got, status, "status: {head} {body}");
    assert!(
        head.contains("content-type: application/json"),
        "a JSON body: {head}"
    );
    let e = &body["error"];
    assert_eq!(e["code"], json!(code), "{body}");
    assert_eq!(e["status"], json!(status), "{body}");
    assert_eq!(
        e["type"],
        json!(format!("https://herald.dev/errors#{code}-{status}")),
        "{body}"
    );
    let rid = e["request_id"].as_str().expect("request_id");
    assert!(
        head.contains(&format!("x-request-id: {}", rid.to_ascii_lowercase())),
        "the header carries the body's request id: {head}"
    );
    assert!(e["details"].is_object(), "{body}");
}

#[tokio::test]
async fn percent_encoded_paths_are_authenticated_as_the_router_matches_them() {
    let app = TestApp::spawn();
    for path in [
        "/%61dmin/v1/users",
        "/%61%64%6d%69%6e/v1/users",
        "/admin/v1/%75sers",
        "/%75ser/v1/me",
    ] {
        // no credentials: 401 (it was a 500 when the middleware read the raw path)
        let r = app.request(GET, path).go().await;
        assert_unauth(&r, "api_key", "missing_api_key");
        // a wrong secret: 401 too
        let r = app
            .request(GET, path)
            .header("x-service-api-key", &app.public_key)
            .header("x-service-secret-key", format!("sk_test_{}", random_hex()))
            .header("x-service-user-id", "nobody")
            .go()
            .await;
        assert_eq!(r.status, 401, "{r}");
    }
    // with credentials the decoded path is the route it names
    let r = app.admin(GET, "/%61dmin/v1/users").go().await;
    r.ok(200);
    // an encoded slash does not dodge authentication either
    let r = app.request(GET, "/admin%2Fv1/users").go().await;
    assert_unauth(&r, "api_key", "missing_api_key");
    let r = app.request(GET, "/user%2Fv1/me").go().await;
    assert_unauth(&r, "api_key", "missing_api_key");
}

#[tokio::test]
async fn bytes_that_are_not_utf8_in_a_path_are_400_not_another_id() {
    let app = TestApp::spawn();
    for bad in ["%FF", "%FE", "a%C3", "%C0%AF"] {
        let r = app.admin(GET, &format!("{A}/users/{bad}")).go().await;
        assert_invalid_param(&r, "path");
        let r = app
            .admin(PUT, &format!("{A}/users/{bad}"))
            .json(&json!({"first_name": "X"}))
            .go()
            .await;
        assert_invalid_param(&r, "path");
    }
    // nothing was created under U+FFFD
    let r = app.admin(GET, &format!("{A}/users/%EF%BF%BD")).go().await;
    assert_not_found(&r, "user", "\u{FFFD}");
    // authentication still comes first
    let r = app.request(GET, &format!("{A}/users/%FF")).go().await;
    assert_unauth(&r, "api_key", "missing_api_key");
    // valid multi-byte UTF-8 still works
    let r = app
        .admin(PUT, &format!("{A}/users/%C3%A9l%C3%A8ve"))
        .json(&json!({"first_name": "É"}))
        .go()
        .await;
    r.ok(201);
    let r = app
        .admin(GET, &format!("{A}/users/{}", enc("élève")))
        .go()
        .await;
    assert_eq!(r.ok(200)["external_id"], json!("élève"));
}

#[tokio::test]
async fn answers_of_the_http_layer_itself_carry_the_error_object() {
    let app = TestApp::spawn();
    // more headers than the HTTP layer takes
    let mut many = b"GET /healthz HTTP/1.1\r\nhost: x\r\n".to_vec();
    for i in 0..120 {
        many.extend_from_slice(format!("x-h{i}: v\r\n").as_bytes());
    }
    many.extend_from_slice(b"\r\n");
    let a = raw(&app, &many);
    assert_raw_error(&a, 431, "headers_too_large");
    assert_eq!(
        a.2["error"]["details"]["reason"],
        json!("headers_too_large")
    );
    // a path longer than the head buffer
    let mut long = b"GET /admin/v1/users/".to_vec();
    long.extend(std::iter::repeat_n(b'a', 140_000));
    long.extend_from_slice(b" HTTP/1.1\r\nhost: x\r\n\r\n");
    assert_raw_error(&raw(&app, &long), 431, "headers_too_large");
    // one header too large
    let mut big = b"GET /healthz HTTP/1.1\r\nhost: x\r\nx-big: ".to_vec();
    big.extend(std::iter::repeat_n(b'b', 140_000));
    big.extend_from_slice(b"\r\n\r\n");
    assert_raw_error(&raw(&app, &big), 431, "headers_too_large");
    // not HTTP at all
    let a = raw(&app, b"GARBAGE\x01\x02 / HTTP/1.1\r\n\r\n");
    assert_raw_error(&a, 400, "bad_request");
    // the application's own errors are untouched, and the server still serves
    let a = raw(
        &app,
        b"GET /nope HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
    );
    assert_raw_error(&a, 404, "not_found");
    app.request(GET, "/healthz").go().await.ok(200);
}

#[tokio::test]
async fn a_cursor_of_one_project_is_refused_on_another() {
    // project B made with the CLI before the first start; A is `default`
    let (app, a, b) = spawn_two_projects();
    for (keys, tag) in [(&a, "a"), (&b, "b")] {
        for i in 0..3 {
            app.admin_with(keys, PUT, &format!("{A}/users/{tag}-{i}"))
                .json(&json!({"first_name": "X"}))
                .go()
                .await
                .ok(201);
        }
    }
    let r = app
        .admin_with(&a, GET, &format!("{A}/users?limit=1"))
        .go()
        .await;
    let after = r.page()["page"]["after"].as_str().unwrap().to_string();
    // the cursor works where it came from
    app.admin_with(&a, GET, &format!("{A}/users?limit=1&after={}", enc(&after)))
        .go()
        .await
        .ok(200);
    // and is refused on the same list of another project (it read as an empty page)
    let r = app
        .admin_with(&b, GET, &format!("{A}/users?limit=1&after={}", enc(&after)))
        .go()
        .await;
    assert_invalid_param(&r, "after");
    let r = app
        .admin_with(
            &b,
            GET,
            &format!("{A}/users?limit=1&before={}", enc(&after)),
        )
        .go()
        .await;
    assert_invalid_param(&r, "before");
}

#[tokio::test]
async fn wrong_credentials_are_rate_limited_per_client_address() {
    if single_node_only("the wrong-credentials budget is per node") {
        return;
    }
    let app = TestApp::spawn_with(&["--auth-failures-per-minute", "5"], &[]);
    let wrong = || format!("sk_test_{}", random_hex());
    // missing credentials are not guesses: they cost nothing
    for _ in 0..10 {
        let r = app.request(GET, &format!("{A}/users")).go().await;
        assert_unauth(&r, "api_key", "missing_api_key");
    }
    for _ in 0..5 {
        let r = app
            .request(GET, &format!("{A}/users"))
            .header("x-service-api-key", &app.public_key)
            .header("x-service-secret-key", wrong())
            .go()
            .await;
        assert_unauth(&r, "secret_key", "invalid_secret_key");
    }
    // the sixth guess is refused before it is checked
    let r = app
        .request(GET, &format!("{A}/users"))
        .header("x-service-api-key", &app.public_key)
        .header("x-service-secret-key", wrong())
        .go()
        .await;
    assert_error(&r, 429, "rate_limited");
    assert_eq!(r.json["error"]["details"]["window"], json!("1m"), "{r}");
    let ra: u64 = r
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .unwrap();
    assert!((1..=60).contains(&ra), "{r}");
    // and so is the right key from that address while it waits
    let r = app.admin(GET, &format!("{A}/users")).go().await;
    assert_error(&r, 429, "rate_limited");
    // requests that need no credentials still work
    app.request(GET, "/healthz").go().await.ok(200);
    // an unknown api key and a bad JWT are guesses too (and blocked now)
    let r = app
        .request(GET, &format!("{U}/me"))
        .header("x-service-api-key", "pk_nope")
        .go()
        .await;
    assert_error(&r, 429, "rate_limited");
}

#[tokio::test]
async fn weak_bootstrap_secret_keys_are_refused_at_start() {
    for weak in ["sk_test_y", "sk_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"] {
        let dir = tempfile::tempdir().unwrap();
        let keys = Keys {
            public_key: format!("pk_test_{}", random_hex()),
            secret_key: weak.to_string(),
        };
        let r = TestApp::start(ServeOptions {
            data_dir: dir.path(),
            bootstrap: Some(&keys),
            args: &[],
            env: &[],
            default_flags: true,
        });
        let err = match r {
            Ok(_) => panic!("started with the weak secret key {weak}"),
            Err(e) => e,
        };
        assert!(err.contains("too weak"), "{weak}: {err}");
        assert!(!err.contains(weak), "the key is not echoed: {err}");
    }
}

#[tokio::test]
async fn the_same_idempotency_key_in_two_projects_does_not_serialise_them() {
    use crate::engine_helpers::*;
    // project B made with the CLI before the first start; A is `default`
    let (app, a, b) = spawn_two_projects();
    // project A: a run that takes a while to accept (1,000 recipients, each
    // rendering a long loop within the template budget)
    let slow_body = "{% for i in range(1500) %}{{ i }},{% endfor %}";
    for keys in [&a, &b] {
        let inapp = {
            let r = app
                .admin_with(keys, GET, &format!("{A}/channels"))
                .go()
                .await;
            let items = r.page()["items"].as_array().unwrap().clone();
            s(&items.iter().find(|c| c["type"] == "in_app").unwrap()["id"])
        };
        let r = app
            .admin_with(keys, POST, &format!("{A}/flows"))
            .json(&json!({"handle": "idem", "name": "Idem",
                "steps": [channel_step(&inapp, None, slow_body)]}))
            .go()
            .await;
        let id = s(&r.ok(201)["id"]);
        app.admin_with(keys, POST, &format!("{A}/flows/{id}/activate"))
            .go()
            .await
            .ok(200);
    }
    let recipients: Vec<Value> = (0..1000)
        .map(|i| json!({"external_id": format!("r{i}")}))
        .collect();
    let key = format!("same-{}", random_hex());
    let slow = {
        let req = app
            // the same path in both projects (by handle): the same method, path
            // and key, which is what a replay is keyed by within a project
            .admin_with(&a, POST, &format!("{A}/flows/idem/run"))
            .header("idempotency-key", &key)
            .json(&json!({"recipients": recipients}));
        tokio::spawn(async move {
            let r = req.go().await;
            (r, std::time::Instant::now())
        })
    };
    // B uses the same key a moment later, while A's request holds its lock
    tokio::time::sleep(Duration::from_millis(300)).await;
    let r = app
        .admin_with(&b, POST, &format!("{A}/flows/idem/run"))
        .header("idempotency-key", &key)
        .json(&json!({"recipients": [{"external_id": "only"}]}))
        .go()
        .await;
    let b_done = std::time::Instant::now();
    r.ok(202);
    let (ra, a_done) = slow.await.unwrap();
    ra.ok(202);
    assert!(
        b_done < a_done,
        "project B's request waited for project A's, which used the same key"
    );
    // each project replays its own run
    let again = app
        .admin_with(&b, POST, &format!("{A}/flows/idem/run"))
        .header("idempotency-key", &key)
        .json(&json!({"recipients": [{"external_id": "only"}]}))
        .go()
        .await;
    assert_eq!(again.header("idempotent-replayed").as_deref(), Some("true"));
    assert_eq!(again.json["id"], r.json["id"]);
}
