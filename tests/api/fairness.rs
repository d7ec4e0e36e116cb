//! One project cannot stall another. A project whose
//! webhook endpoint hangs with 300 deliveries in flight does not delay another
//! project's webhook (delivery attempts are shared round-robin between projects,
//! each with an in-flight cap), and a run whose templates blow their budget
//! answers its 202 promptly while another project's user writes answer at once
//! (renders are bounded and never run under a lock another project needs).

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use wiremock::matchers::method;
use wiremock::{Mock, ResponseTemplate};

use crate::engine_helpers::*;
use crate::helpers::*;

async fn admin_ok(
    app: &TestApp, keys: &Keys, m: reqwest::Method, path: &str, body: Value,
) -> Value {
    let mut req = app.admin_with(keys, m.clone(), path);
    if !body.is_null() {
        req = req.json(&body);
    }
    let r = req.go().await;
    assert!(r.status / 100 == 2, "{m} {path}: {r}");
    r.json.clone()
}

/// A webhook channel of the project at `url` and an active flow sending one
/// chat step through it; returns the flow id.
async fn webhook_flow(app: &TestApp, keys: &Keys, url: &str) -> String {
    let ch = admin_ok(
        app,
        keys,
        POST,
        &format!("{A}/channels"),
        json!({"type": "chat", "provider": "webhook", "name": "hook",
               "config": {"url": url, "timeout_ms": 60_000, "retry": {"max_attempts": 1}}}),
    )
    .await;
    let flow = admin_ok(
        app,
        keys,
        POST,
        &format!("{A}/flows"),
        json!({"handle": handle("fair"), "name": "Fair", "steps": [
            {"type": "channel", "channel_id": ch["id"], "template": {"body": "Hi {{ recipient.external_id }}"}}]}),
    )
    .await;
    let id = s(&flow["id"]);
    admin_ok(
        app,
        keys,
        POST,
        &format!("{A}/flows/{id}/activate"),
        json!(null),
    )
    .await;
    id
}

/// Project A's endpoint holds each request for 30 s and A runs 300 deliveries
/// to it; then project B runs one delivery to a fast endpoint. The channel type
/// has 256 slots (`--delivery-concurrency`), as the whole engine had before
/// projects got shares. Returns how long B's webhook took (None: not within
/// `wait`) and how many of A's requests reached A's endpoint.
async fn slow_neighbour(project_inflight: &str, wait: Duration) -> (Option<Duration>, usize) {
    let dir = tempfile::tempdir().unwrap();
    let b = create_project_keys("other", dir.path());
    let a = Keys::random();
    let app = spawn_with_dir(
        dir,
        &a,
        &[
            "--delivery-concurrency",
            "256",
            "--project-inflight",
            project_inflight,
        ],
    );
    let slow = mock_server().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(30)))
        .mount(&slow)
        .await;
    let fast = mock_server().await;
    mock_always(&fast, 200).await;
    let flow_a = webhook_flow(&app, &a, &hook_url(&slow)).await;
    let flow_b = webhook_flow(&app, &b, &hook_url(&fast)).await;

    let exts: Vec<String> = (0..300).map(|i| format!("slow-{i}")).collect();
    admin_ok(
        &app,
        &a,
        POST,
        &format!("{A}/flows/{flow_a}/run"),
        json!({"recipients": exts}),
    )
    .await;
    // A's attempts are hanging at its endpoint: as many as it may have
    let cap: usize = project_inflight.parse::<usize>().unwrap().min(256);
    let d = Deadline::new("project A's deliveries to reach its slow endpoint", 20);
    loop {
        let n = received(&slow).await.len();
        if n >= cap {
            break;
        }
        d.tick(format!("{n} requests at the slow endpoint")).await;
    }

    let start = Instant::now();
    admin_ok(
        &app,
        &b,
        POST,
        &format!("{A}/flows/{flow_b}/run"),
        json!({"recipients": ["b-user"]}),
    )
    .await;
    let took = loop {
        if !received(&fast).await.is_empty() {
            break Some(start.elapsed());
        }
        if start.elapsed() > wait {
            break None;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    (took, received(&slow).await.len())
}

#[tokio::test]
async fn a_slow_endpoint_of_one_project_does_not_delay_another_projects_webhook() {
    // A's share is 64 of the 256 slots: B's webhook goes out at once
    let (took, at_slow) = slow_neighbour("64", Duration::from_secs(2)).await;
    let took = took.expect(
        "project B's webhook was not delivered within 2 s while project A's endpoint hangs",
    );
    eprintln!("project B's webhook arrived {took:?} after its run was posted");
    assert!(
        at_slow <= 64,
        "project A had {at_slow} attempts in flight (cap 64)"
    );
}

#[tokio::test]
async fn without_a_share_per_project_the_slow_endpoint_holds_everyone() {
    if single_node_only("delivery slots are per node: the other nodes' slots are free") {
        return;
    }
    // The finding reproduced: when one project may take every slot (its share
    // as large as the channel type), A's 256 hanging attempts hold B's webhook
    // back. This is what the share (the test above) prevents.
    let (took, at_slow) = slow_neighbour("256", Duration::from_secs(3)).await;
    assert_eq!(at_slow, 256, "A filled the channel type");
    assert_eq!(
        took, None,
        "B's webhook could not go out while A held every slot"
    );
}

#[tokio::test]
async fn runaway_templates_fail_fast_and_do_not_hold_other_projects_writes() {
    let (app, a, b) = spawn_two_projects();

    // A's flow: one step loops forever, one renders 100 MB (both depend on the
    // run's data, so they pass the check at save time)
    let in_app = s(&app
        .admin_with(&a, GET, &format!("{A}/channels"))
        .go()
        .await
        .page()["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == json!("in_app"))
        .expect("the built-in in_app channel")["id"]);
    let flow = admin_ok(
        &app,
        &a,
        POST,
        &format!("{A}/flows"),
        json!({"handle": handle("runaway"), "name": "Runaway", "steps": [
            {"type": "channel", "channel_id": in_app, "template": {"subject": "loop",
              "body": "{% for i in range(data.n) %}{% for j in range(10) %}{% endfor %}{% endfor %}"}},
            {"type": "channel", "channel_id": in_app, "template": {"subject": "big",
              "body": "{{ \"x\" * data.big }}"}}]}),
    )
    .await;
    let fid = s(&flow["id"]);
    admin_ok(
        &app,
        &a,
        POST,
        &format!("{A}/flows/{fid}/activate"),
        json!(null),
    )
    .await;

    // B writes users while A's run is being accepted
    let writer = {
        let client = app.client.clone();
        let url = app.url(&format!("{A}/users/"));
        let b = b.clone();
        tokio::spawn(async move {
            let mut worst = Duration::ZERO;
            let mut n = 0;
            let until = Instant::now() + Duration::from_secs(4);
            while Instant::now() < until {
                let t = Instant::now();
                let r = client
                    .put(format!("{url}b-{n}"))
                    .header("x-service-api-key", &b.public_key)
                    .header("x-service-secret-key", &b.secret_key)
                    .json(&json!({"first_name": "B"}))
                    .send()
                    .await
                    .expect("PUT user");
                assert_eq!(r.status().as_u16(), 201);
                worst = worst.max(t.elapsed());
                n += 1;
            }
            (n, worst)
        })
    };
    let exts: Vec<String> = (0..300).map(|i| format!("victim-{i}")).collect();
    let start = Instant::now();
    let run = admin_ok(
        &app,
        &a,
        POST,
        &format!("{A}/flows/{fid}/run"),
        json!({"recipients": exts, "data": {"n": 100000, "big": 100000000}}),
    )
    .await;
    let accept = start.elapsed();
    assert!(accept < Duration::from_secs(5), "the 202 took {accept:?}");
    let (writes, worst) = writer.await.unwrap();
    eprintln!("the 202 took {accept:?}; project B's {writes} PUTs took at most {worst:?}");
    assert!(writes > 0);
    assert!(
        worst < Duration::from_secs(1),
        "project B's PUT /users took up to {worst:?} ({writes} calls)"
    );

    // every delivery failed with template_error naming the limit it broke
    let run_id = s(&run["id"]);
    let failed = list_all_with(
        &app,
        &a,
        &format!("{A}/deliveries"),
        &[("status", "failed")],
    )
    .await;
    assert_eq!(
        failed.len(),
        600,
        "both steps failed for all 300 recipients"
    );
    let mut by_limit = (0, 0);
    for dl in &failed {
        assert_eq!(dl["flow_run_id"], json!(run_id), "{dl}");
        assert_eq!(dl["error"]["code"], json!("template_error"), "{dl}");
        let msg = s(&dl["error"]["message"]);
        assert!(msg.starts_with("template body: "), "{msg}");
        if msg.contains("(template_fuel)") {
            by_limit.0 += 1;
        } else if msg.contains("(template_max_output)") || msg.contains("(template_max_memory)") {
            // a 100 MB repetition is refused by the render's memory budget
            // before it is built (issue 35), where the output cap once
            // refused it after
            by_limit.1 += 1;
        } else {
            panic!("the message names no limit: {msg}");
        }
    }
    assert_eq!(
        by_limit,
        (300, 300),
        "(out of fuel, over the output cap or the memory budget)"
    );

    // nothing of 100 MB was stored
    let size = dir_size(&app.data_dir);
    assert!(size < 64 << 20, "the data directory holds {size} bytes");
}

/// Every item of a list, walking the `after` cursors, as `keys`' project.
async fn list_all_with(
    app: &TestApp, keys: &Keys, path: &str, query: &[(&str, &str)],
) -> Vec<Value> {
    let mut out = vec![];
    let mut after: Option<String> = None;
    for _ in 0..100 {
        let mut q: Vec<(&str, &str)> = query.to_vec();
        q.push(("limit", "1000"));
        if let Some(c) = &after {
            q.push(("after", c));
        }
        let r = app.admin_with(keys, GET, path).query(&q).go().await;
        let body = r.page();
        out.extend(body["items"].as_array().unwrap().iter().cloned());
        match body["page"]["after"].as_str() {
            Some(c) if body["page"]["has_more_after"] == json!(true) => after = Some(c.to_string()),
            _ => return out,
        }
    }
    panic!("{path}: more than 100 pages");
}

fn dir_size(p: &std::path::Path) -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir(p).unwrap().flatten() {
        let m = e.metadata().unwrap();
        total += if m.is_dir() {
            dir_size(&e.path())
        } else {
            m.len()
        };
    }
    total
}
