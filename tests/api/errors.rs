//! docs/API.md §3 (error object, routing errors, JSON bodies, parameters, request
//! ids) and §14 (health endpoints).

use reqwest::header::HeaderValue;
use serde_json::{json, Value};

use crate::helpers::*;

fn user_path(ext: &str) -> String {
    format!("{A}/users/{}", enc(ext))
}

/// `{"a": {"a": ... {"a": 1}}}` with `depth` objects.
fn nested(depth: usize) -> String {
    let mut s = String::new();
    for _ in 0..depth {
        s.push_str("{\"a\":");
    }
    s.push('1');
    for _ in 0..depth {
        s.push('}');
    }
    s
}

#[tokio::test]
async fn health_readiness_and_unknown_routes() {
    let app = TestApp::spawn();
    // /healthz and /readyz need no credentials
    let r = app.request(GET, "/healthz").go().await;
    assert_eq!(r.ok(200), json!({"status": "ok"}), "{r}");
    assert!(
        r.header("x-request-id").is_some_and(|v| !v.is_empty()),
        "x-request-id on every response: {r}"
    );
    let r = app.request(GET, "/readyz").go().await;
    assert_eq!(r.status, 200, "{r}");

    // unknown routes and wrong methods: 404 not_found with empty details
    let (ext, _) = app.create_user("routes", json!({})).await;
    let cases = vec![
        app.admin(GET, &format!("{A}/no-such-route")),
        app.admin(GET, "/admin/v2/users"),
        app.admin(GET, &format!("{A}/users/{ext}/no-such-thing")),
        app.admin(PATCH, &format!("{A}/users")).json(&json!({})),
        app.admin(DELETE, &format!("{A}/users")),
        app.admin(POST, &format!("{A}/project/no-such-route")),
        app.user(GET, &format!("{U}/no-such-route"), &ext),
        app.user(DELETE, &format!("{U}/me"), &ext),
        app.request(GET, "/no-such-route"),
        app.request(POST, "/healthz"),
        app.request(DELETE, "/readyz"),
    ];
    for rb in cases {
        let r = rb.go().await;
        let d = assert_error(&r, 404, "not_found");
        assert_eq!(
            d,
            json!({}),
            "an unknown route or method has empty details: {r}"
        );
    }
    // a real resource that is missing names itself
    let r = app.admin(GET, &user_path("nobody-here")).go().await;
    assert_not_found(&r, "user", "nobody-here");
}

#[tokio::test]
async fn json_body_errors_give_invalid_json() {
    let app = TestApp::spawn();
    let ext = new_ext("json");
    let path = user_path(&ext);
    let json_ct = "application/json";
    let raw = |body: Vec<u8>, ct: Option<&str>| {
        let mut rb = app.admin(PUT, &path).body(body);
        if let Some(ct) = ct {
            rb = rb.header("content-type", ct);
        }
        rb
    };
    let cases: Vec<(&str, reqwest::RequestBuilder)> = vec![
        (
            "truncated JSON",
            raw(b"{\"first_name\": ".to_vec(), Some(json_ct)),
        ),
        (
            "trailing garbage",
            raw(b"{\"first_name\": \"a\"} x".to_vec(), Some(json_ct)),
        ),
        (
            "single quotes",
            raw(b"{'first_name': 'a'}".to_vec(), Some(json_ct)),
        ),
        (
            "invalid UTF-8",
            raw(b"{\"first_name\": \"\xff\xfe\"}".to_vec(), Some(json_ct)),
        ),
        (
            "text/plain content type",
            raw(b"{\"first_name\": \"a\"}".to_vec(), Some("text/plain")),
        ),
        (
            "form content type",
            raw(
                b"{\"first_name\": \"a\"}".to_vec(),
                Some("application/x-www-form-urlencoded"),
            ),
        ),
        (
            "no content type",
            raw(b"{\"first_name\": \"a\"}".to_vec(), None),
        ),
        ("empty body", raw(Vec::new(), Some(json_ct))),
        ("empty body, no content type", raw(Vec::new(), None)),
        ("top-level array", raw(b"[]".to_vec(), Some(json_ct))),
        (
            "top-level array of objects",
            raw(b"[{\"first_name\": \"a\"}]".to_vec(), Some(json_ct)),
        ),
        (
            "top-level string",
            raw(b"\"hello\"".to_vec(), Some(json_ct)),
        ),
        ("top-level number", raw(b"42".to_vec(), Some(json_ct))),
        ("top-level null", raw(b"null".to_vec(), Some(json_ct))),
        (
            "nested 200 levels",
            raw(
                format!("{{\"custom_fields\": {}}}", nested(200)).into_bytes(),
                Some(json_ct),
            ),
        ),
        (
            "nested 129 levels",
            raw(nested(129).into_bytes(), Some(json_ct)),
        ),
    ];
    for (what, rb) in cases {
        let r = rb.go().await;
        assert_eq!(r.status, 400, "{what}: {r}");
        assert_invalid_json(&r);
    }
    // nothing was created by any of them
    assert_not_found(&app.admin(GET, &path).go().await, "user", &ext);

    // 400 (JSON syntax) comes before 404 (resource in the path)
    let r = app
        .admin(
            PUT,
            &format!("{}/preferences", user_path(&new_ext("ghost"))),
        )
        .header("content-type", "application/json")
        .body("{\"channel_types\": ")
        .go()
        .await;
    assert_invalid_json(&r);

    // accepted forms: charset parameter, a +json type, unknown fields,
    // nesting well within the limit
    let r = raw(
        br#"{"first_name": "Cs"}"#.to_vec(),
        Some("application/json; charset=utf-8"),
    )
    .go()
    .await;
    assert_eq!(r.ok(201)["first_name"], json!("Cs"), "{r}");
    let r = app
        .admin(PUT, &user_path(&new_ext("plusjson")))
        .header("content-type", "application/vnd.herald+json")
        .body(r#"{"first_name": "Plus"}"#)
        .go()
        .await;
    assert_eq!(r.ok(201)["first_name"], json!("Plus"), "+json: {r}");
    let r = app
        .admin(PUT, &user_path(&new_ext("unknown-field")))
        .json(&json!({"first_name": "U", "no_such_field": [1, 2, 3], "another": {"x": 1}}))
        .go()
        .await;
    assert_eq!(
        r.ok(201)["first_name"],
        json!("U"),
        "unknown fields ignored: {r}"
    );
    let deep: Value = serde_json::from_str(&nested(100)).unwrap();
    let r = app
        .admin(PUT, &user_path(&new_ext("deep")))
        .json(&json!({"custom_fields": deep}))
        .go()
        .await;
    assert_eq!(r.status, 201, "100 levels of nesting are fine: {r}");
    assert_eq!(r.json["custom_fields"], deep, "{r}");
}

#[tokio::test]
async fn bodies_over_one_mib_are_a_length_error() {
    const MIB: usize = 1024 * 1024;
    let app = TestApp::spawn();
    let padded = |len: usize| {
        let mut b = br#"{"first_name": "Big"}"#.to_vec();
        b.resize(len, b' ');
        b
    };
    let put = |ext: &str, body: Vec<u8>| {
        app.admin(PUT, &user_path(ext))
            .header("content-type", "application/json")
            .body(body)
    };

    // exactly 1 MiB is allowed (trailing whitespace is valid JSON)
    let ok_ext = new_ext("mib");
    let r = put(&ok_ext, padded(MIB)).go().await;
    assert_eq!(r.ok(201)["first_name"], json!("Big"), "exactly 1 MiB: {r}");

    // one byte more, and far more: 422 field body reason length
    for len in [MIB + 1, 4 * MIB] {
        let ext = new_ext("big");
        let r = put(&ext, padded(len)).go().await;
        assert_eq!(r.status, 422, "{len} bytes: {r}");
        assert_validation(&r, &[("body", "length")]);
        assert_not_found(&app.admin(GET, &user_path(&ext)).go().await, "user", &ext);
    }
    // an over-long body that is not even JSON: the size check comes first
    let r = app
        .admin(PUT, &user_path(&new_ext("big")))
        .header("content-type", "application/json")
        .body(vec![b'['; 2 * MIB])
        .go()
        .await;
    assert_validation(&r, &[("body", "length")]);

    // under the body limit but custom_fields over 64 KiB: custom_fields length
    let pad = "x".repeat(100 * 1024);
    let r = app
        .admin(PUT, &user_path(&new_ext("cf")))
        .json(&json!({"custom_fields": {"pad": pad}}))
        .go()
        .await;
    let d = assert_validation(&r, &[("custom_fields", "length")]);
    assert!(
        !d["fields"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["field"] == json!("body")),
        "a body under 1 MiB is not a body length error: {r}"
    );

    // the server is fine afterwards
    let r = app.admin(GET, &user_path(&ok_ext)).go().await;
    assert_eq!(r.ok(200)["external_id"], json!(ok_ext), "{r}");
}

#[tokio::test]
async fn bad_path_and_query_parameters() {
    let app = TestApp::spawn();
    let (ext, _) = app.create_user("params", json!({})).await;

    // path ids that must be UUIDs
    let invalid_uuid = |r: &Resp, param: &str| {
        let d = assert_error(r, 400, "bad_request");
        assert_eq!(d["reason"], json!("invalid_uuid"), "{r}");
        assert_eq!(d["param"], json!(param), "{r}");
    };
    invalid_uuid(
        &app.admin(GET, &format!("{A}/channels/not-a-uuid"))
            .go()
            .await,
        "channel_id",
    );
    invalid_uuid(
        &app.admin(DELETE, &format!("{A}/channels/1234")).go().await,
        "channel_id",
    );
    invalid_uuid(
        &app.admin(PUT, &format!("{A}/channels/not-a-uuid"))
            .json(&json!({"name": "x"}))
            .go()
            .await,
        "channel_id",
    );
    invalid_uuid(
        &app.admin(GET, &format!("{A}/notifications/not-a-uuid"))
            .go()
            .await,
        "id",
    );
    invalid_uuid(
        &app.admin(GET, &format!("{A}/deliveries/not-a-uuid"))
            .go()
            .await,
        "id",
    );
    invalid_uuid(
        &app.admin(GET, &format!("{A}/flow_runs/not-a-uuid"))
            .go()
            .await,
        "id",
    );
    invalid_uuid(
        &app.user(
            DELETE,
            &format!("{U}/channels/not-a-uuid/subscriptions"),
            &ext,
        )
        .json(&json!({"identifier": "https://push.example.invalid/1"}))
        .go()
        .await,
        "channel_id",
    );
    invalid_uuid(
        &app.user(GET, &format!("{U}/feed/not-a-uuid"), &ext)
            .go()
            .await,
        "id",
    );
    // a well-formed UUID that names nothing is a 404 of the resource
    let id = uuid::Uuid::now_v7().to_string();
    let r = app.admin(GET, &format!("{A}/channels/{id}")).go().await;
    assert_not_found(&r, "channel", &id);

    // malformed query parameters
    let users = format!("{A}/users");
    for limit in ["abc", "1.5", "0", "-5", "1e3"] {
        let r = app.admin(GET, &users).query(&[("limit", limit)]).go().await;
        assert_invalid_param(&r, "limit");
    }
    let notes = format!("{A}/notifications");
    for (param, value) in [
        ("created_after", "yesterday"),
        ("created_after", "2026-01-01"),
        ("created_before", "2026-13-45T00:00:00Z"),
        ("status", "bogus"),
    ] {
        let r = app.admin(GET, &notes).query(&[(param, value)]).go().await;
        assert_invalid_param(&r, param);
    }
    let r = app
        .admin(GET, &format!("{A}/deliveries"))
        .query(&[("channel_type", "pigeon")])
        .go()
        .await;
    assert_invalid_param(&r, "channel_type");
    let r = app
        .user(GET, &format!("{U}/feed"), &ext)
        .query(&[("status", "bogus")])
        .go()
        .await;
    assert_invalid_param(&r, "status");

    // accepted: unknown parameters are ignored; RFC 3339 with any offset
    let r = app
        .admin(GET, &users)
        .query(&[("no_such_param", "1")])
        .go()
        .await;
    assert_eq!(r.page()["items"].as_array().unwrap().len(), 1, "{r}");
    let r = app
        .admin(GET, &notes)
        .query(&[
            ("created_after", "2020-01-01T00:00:00+02:00"),
            ("created_before", "2999-01-01T00:00:00.5Z"),
        ])
        .go()
        .await;
    r.page();

    // 400 (query) comes before 404 (resource in the path)
    let r = app
        .admin(GET, &format!("{A}/users/{}/feed", new_ext("ghost")))
        .query(&[("limit", "abc")])
        .go()
        .await;
    assert_invalid_param(&r, "limit");
}

#[tokio::test]
async fn request_ids_are_echoed_replaced_or_generated() {
    let app = TestApp::spawn();
    let users = format!("{A}/users");
    let echoed = |r: &Resp, want: &str| {
        assert_eq!(
            r.header("x-request-id").as_deref(),
            Some(want),
            "x-request-id must be echoed: {r}"
        );
        if r.status >= 400 {
            assert_eq!(r.json["error"]["request_id"], json!(want), "{r}");
        }
    };
    // given and valid: echoed on successes and errors alike
    let id = "abc-123";
    let r = app
        .request(GET, "/healthz")
        .header("x-request-id", id)
        .go()
        .await;
    assert_eq!(r.status, 200, "{r}");
    echoed(&r, id);
    let r = app.admin(GET, &users).header("x-request-id", id).go().await;
    assert_eq!(r.status, 200, "{r}");
    echoed(&r, id);
    let r = app
        .admin(GET, &format!("{A}/no-such-route"))
        .header("x-request-id", id)
        .go()
        .await;
    assert_error(&r, 404, "not_found");
    echoed(&r, id);
    let r = app
        .request(GET, &users)
        .header("x-request-id", id)
        .go()
        .await;
    assert_unauth(&r, "api_key", "missing_api_key");
    echoed(&r, id);
    let r = app
        .admin(PUT, &format!("{users}/{}", new_ext("rid")))
        .header("x-request-id", id)
        .header("content-type", "application/json")
        .body("{")
        .go()
        .await;
    assert_invalid_json(&r);
    echoed(&r, id);
    let r = app
        .admin(PUT, &format!("{users}/{}", new_ext("rid")))
        .header("x-request-id", id)
        .json(&json!({"email": "nope"}))
        .go()
        .await;
    assert_validation(&r, &[("email", "format")]);
    echoed(&r, id);
    // 200 printable ASCII characters, punctuation included, are still valid
    let long: String = "!~azAZ09-_.:/".chars().cycle().take(200).collect();
    let r = app
        .admin(GET, &format!("{A}/no-such-route"))
        .header("x-request-id", &long)
        .go()
        .await;
    assert_error(&r, 404, "not_found");
    echoed(&r, &long);

    // invalid: too long (201, 300), non-ASCII, control characters → replaced
    let invalid: Vec<(&str, HeaderValue)> = vec![
        (
            "201 chars",
            HeaderValue::from_str(&"a".repeat(201)).unwrap(),
        ),
        (
            "300 chars",
            HeaderValue::from_str(&"r".repeat(300)).unwrap(),
        ),
        (
            "non-ASCII",
            HeaderValue::from_bytes("café-ü".as_bytes()).unwrap(),
        ),
        ("tab", HeaderValue::from_str("a\tb").unwrap()),
    ];
    for (what, value) in invalid {
        let sent = String::from_utf8_lossy(value.as_bytes()).into_owned();
        for rb in [
            app.request(GET, "/healthz"),
            app.admin(GET, &format!("{A}/no-such-route")),
        ] {
            let r = rb.header("x-request-id", value.clone()).go().await;
            let got = r.header("x-request-id").unwrap_or_default();
            assert!(!got.is_empty(), "{what}: a replacement id is expected: {r}");
            assert_ne!(got, sent, "{what}: an invalid id must be replaced: {r}");
            assert!(
                got.len() <= 200 && got.bytes().all(|b| (0x21..=0x7e).contains(&b)),
                "{what}: the replacement must itself be valid: {r}"
            );
            if r.status >= 400 {
                assert_error(&r, 404, "not_found");
            }
        }
    }

    // absent: generated, and different per request
    let mut seen = std::collections::HashSet::new();
    for rb in [
        app.request(GET, "/healthz"),
        app.request(GET, "/healthz"),
        app.admin(GET, &users),
        app.admin(GET, &format!("{A}/no-such-route")),
        app.request(GET, &users),
    ] {
        let r = rb.go().await;
        let got = r.header("x-request-id").unwrap_or_default();
        assert!(!got.is_empty(), "a generated x-request-id is expected: {r}");
        if r.status >= 400 {
            assert_eq!(r.json["error"]["request_id"], json!(got), "{r}");
        }
        assert!(
            seen.insert(got.clone()),
            "generated ids must differ: {got} twice"
        );
    }
}
