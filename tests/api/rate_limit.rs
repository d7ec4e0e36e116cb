//! docs/API.md §5 rate limits: per project on the Admin API, per user on the
//! User API, burst twice the rate, 429 with Retry-After; the environment flags.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::helpers::*;

/// Checks a 429 and returns its Retry-After seconds.
#[track_caller]
fn assert_rate_limited(r: &Resp, limit: u64) -> u64 {
    let d = assert_error(r, 429, "rate_limited");
    let ra = r
        .header("retry-after")
        .unwrap_or_else(|| panic!("a 429 carries Retry-After: {r}"));
    let secs: u64 = ra
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("Retry-After must be whole seconds: {r}"));
    assert!(secs >= 1, "Retry-After >= 1: {r}");
    assert_eq!(
        d["retry_after"],
        json!(secs),
        "details.retry_after = Retry-After: {r}"
    );
    assert_eq!(
        d["limit"],
        json!(limit),
        "details.limit = the configured rate: {r}"
    );
    assert_eq!(d["window"], json!("1s"), "details.window: {r}");
    secs
}

/// Sends `n` requests made by `make` as fast as possible; returns the responses
/// and the time it took.
async fn burst<F>(n: usize, make: F) -> (Vec<Resp>, Duration)
where
    F: Fn() -> reqwest::RequestBuilder,
{
    let start = Instant::now();
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(make().go().await);
    }
    (out, start.elapsed())
}

/// The burst allows `2 * rate` at once, then about `rate` per second.
#[track_caller]
fn check_burst(resps: &[Resp], took: Duration, rate: u64) -> usize {
    let burst = (2 * rate) as usize;
    for (i, r) in resps.iter().take(burst).enumerate() {
        assert_eq!(
            r.status, 200,
            "request {i} of the burst of {burst} must pass: {r}"
        );
    }
    for r in resps {
        assert!(
            r.status == 200 || r.status == 429,
            "only 200 or 429 expected: {r}"
        );
    }
    let passed = resps.iter().filter(|r| r.status == 200).count();
    let allowed = burst as f64 + rate as f64 * took.as_secs_f64() + 2.0;
    assert!(
        (passed as f64) <= allowed,
        "{passed} requests passed in {took:?}; at most {allowed:.0} expected at rate {rate}"
    );
    let first = resps
        .iter()
        .position(|r| r.status == 429)
        .unwrap_or_else(|| panic!("no 429 in a burst of {} requests in {took:?}", resps.len()));
    assert!(first >= burst, "a 429 within the burst allowance");
    first
}

#[tokio::test]
async fn admin_api_is_limited_per_project() {
    if single_node_only("rate limits are per node") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let b = create_project_keys("other", dir.path());
    let a = Keys::random();
    let app = TestApp::start(ServeOptions {
        data_dir: dir.path(),
        bootstrap: Some(&a),
        args: &["--admin-rate", "5", "--user-rate", "2"],
        env: &[],
        default_flags: true,
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let (ext, _) = app.create_user("rl", json!({})).await;
    // let the bucket refill completely (burst 10 at 5/s)
    tokio::time::sleep(Duration::from_millis(2500)).await;

    let users = format!("{A}/users");
    let (resps, took) = burst(40, || app.admin(GET, &users)).await;
    let first = check_burst(&resps, took, 5);
    let retry = assert_rate_limited(&resps[first], 5);

    // while project A is limited:
    // routes without credentials are never limited
    for _ in 0..20 {
        let r = app.request(GET, "/healthz").go().await;
        assert_eq!(r.ok(200), json!({"status": "ok"}), "{r}");
    }
    let r = app.request(GET, "/readyz").go().await;
    assert_eq!(r.status, 200, "{r}");
    // another project has its own budget
    let r = app.admin_with(&b, GET, &users).go().await;
    r.page();
    // authentication comes before the rate limit
    let r = app
        .api(GET, &users)
        .header("x-service-secret-key", "sk_test_wrong")
        .go()
        .await;
    assert_unauth(&r, "secret_key", "invalid_secret_key");
    // the User API has its own (per-user) budget
    let r = app.user(GET, &format!("{U}/me"), &ext).go().await;
    assert_eq!(r.ok(200)["external_id"], json!(ext), "{r}");
    // every limited response is well-formed
    let r = app.admin(GET, &users).go().await;
    if r.status == 429 {
        assert_rate_limited(&r, 5);
    }
    // writes count too, and a limited write does nothing
    let mut limited_write = None;
    for _ in 0..20 {
        let ext = new_ext("limited");
        let r = app
            .admin(PUT, &format!("{A}/users/{ext}"))
            .json(&json!({}))
            .go()
            .await;
        if r.status == 429 {
            assert_rate_limited(&r, 5);
            limited_write = Some(ext);
            break;
        }
        assert_eq!(r.status, 201, "{r}");
    }
    let limited_write = limited_write.expect("a write while over the limit is limited too");

    // after Retry-After, requests pass again
    tokio::time::sleep(Duration::from_secs(retry) + Duration::from_millis(300)).await;
    let r = app
        .admin(GET, &format!("{A}/users/{limited_write}"))
        .go()
        .await;
    assert_not_found(&r, "user", &limited_write);
    let r = app.admin(GET, &users).go().await;
    r.page();
}

#[tokio::test]
async fn user_api_is_limited_per_user() {
    if single_node_only("rate limits are per node") {
        return;
    }
    let app = TestApp::spawn_with(&["--admin-rate", "5", "--user-rate", "2"], &[]);
    let (ua, _) = app.create_user("rl-a", json!({})).await;
    let (ub, _) = app.create_user("rl-b", json!({})).await;
    let me = format!("{U}/me");

    let (resps, took) = burst(20, || app.user(GET, &me, &ua)).await;
    let first = check_burst(&resps, took, 2);
    let retry = assert_rate_limited(&resps[first], 2);

    // user B is not limited by A's traffic
    let r = app.user(GET, &me, &ub).go().await;
    assert_eq!(r.ok(200)["external_id"], json!(ub), "{r}");
    // nor is the Admin API
    let r = app.admin(GET, &format!("{A}/users")).go().await;
    r.page();
    // B has its own budget, limited the same way
    // (B spent one of its 4 burst requests above)
    let (resps_b, _) = burst(20, || app.user(GET, &format!("{U}/preferences"), &ub)).await;
    for r in &resps_b[..3] {
        assert_eq!(r.status, 200, "B's remaining burst: {r}");
    }
    let first_b = resps_b
        .iter()
        .position(|r| r.status == 429)
        .expect("B is limited too");
    assert_rate_limited(&resps_b[first_b], 2);

    // A passes again after Retry-After
    tokio::time::sleep(Duration::from_secs(retry) + Duration::from_millis(300)).await;
    let r = app.user(GET, &me, &ua).go().await;
    assert_eq!(r.ok(200)["external_id"], json!(ua), "{r}");
}

#[tokio::test]
async fn rates_and_bind_come_from_the_environment() {
    if single_node_only("rate limits are per node") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let data_dir = dir.path().to_str().unwrap().to_string();
    let app = TestApp::start(ServeOptions {
        data_dir: dir.path(),
        bootstrap: Some(&keys),
        args: &[],
        env: &[
            ("HERALD_BIND", "127.0.0.1:0"),
            ("HERALD_DATA_DIR", &data_dir),
            ("HERALD_ADMIN_RATE", "3"),
            ("HERALD_USER_RATE", "1"),
        ],
        default_flags: false,
    })
    .unwrap_or_else(|e| panic!("{e}"));
    // the data dir from the environment is the one used
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_some(),
        "HERALD_DATA_DIR: the store must be created in {data_dir}"
    );
    let (ext, _) = app.create_user("env", json!({})).await;
    tokio::time::sleep(Duration::from_millis(2500)).await;

    let (resps, took) = burst(30, || app.admin(GET, &format!("{A}/users"))).await;
    let first = check_burst(&resps, took, 3);
    assert_rate_limited(&resps[first], 3);

    let (resps, took) = burst(15, || app.user(GET, &format!("{U}/me"), &ext)).await;
    let first = check_burst(&resps, took, 1);
    assert_rate_limited(&resps[first], 1);
}
