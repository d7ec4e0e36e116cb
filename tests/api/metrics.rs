//! `/metrics`: Prometheus exposition after real traffic and a delivered run.

use crate::engine_helpers::*;
use crate::helpers::*;
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn metrics_expose_http_and_delivery_counters_after_a_run() {
    if single_node_only("/metrics counts one node's requests and deliveries") {
        return;
    }
    let app = TestApp::spawn();
    let channels = app
        .admin(GET, &format!("{A}/channels"))
        .send()
        .await
        .unwrap();
    let channels: serde_json::Value = channels.json().await.unwrap();
    let in_app = channels["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "in_app")
        .unwrap()["id"]
        .clone();
    let r = app
        .admin(POST, &format!("{A}/flows"))
        .json(&json!({"handle": "m", "name": "M", "steps": [{"type": "channel", "channel_id": in_app, "template": {"body": "hi"}}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    assert_eq!(
        app.admin(POST, &format!("{A}/flows/m/activate"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    let r = app
        .admin(POST, &format!("{A}/flows/m/run"))
        .json(&json!({"recipients": ["met-a", "met-b"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let run: serde_json::Value = r.json().await.unwrap();
    let mut processed = false;
    for _ in 0..100 {
        let v: serde_json::Value = app
            .admin(
                GET,
                &format!("{A}/flow_runs/{}", run["id"].as_str().unwrap()),
            )
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if v["status"] == "processed" {
            processed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(processed, "run not processed");
    // An unauthenticated request is counted too, under its route pattern.
    let r = app
        .request(GET, &format!("{A}/users"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);

    let r = app.request(GET, "/metrics").send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/plain; version=0.0.4");
    let text = r.text().await.unwrap();
    let value = |prefix: &str| -> f64 {
        metric_value(&text, prefix)
            .unwrap_or_else(|| panic!("no line starting with {prefix} in:\n{text}"))
    };
    assert_eq!(
        value(r#"herald_deliveries_total{channel_type="in_app",status="sent"}"#),
        2.0
    );
    assert!(
        value(
            r#"herald_http_requests_total{route="/admin/v1/flows/{id}/run",method="POST",status="202"}"#
        ) >= 1.0
    );
    assert!(
        value(r#"herald_http_requests_total{route="/admin/v1/users",method="GET",status="401"}"#)
            >= 1.0
    );
    assert_eq!(
        value(r#"herald_flow_run_delivery_seconds_count{channel_type="in_app"}"#),
        2.0
    );
    assert!(text.contains("herald_http_request_duration_seconds_bucket"));
    assert!(text.contains(r#"herald_delivery_queue_depth{channel_type="in_app"}"#));
    assert!(
        text.contains("herald_websocket_connections"),
        "gauge described even with no socket open:\n{text}"
    );
    // Memory: the allocator's live bytes are below the process's resident
    // set, and both are more than the few MiB of an empty process.
    let rss = value("process_resident_memory_bytes");
    let allocated = value(r#"herald_allocator_bytes{kind="allocated"}"#);
    let resident = value(r#"herald_allocator_bytes{kind="resident"}"#);
    assert!(rss > 4e6, "rss {rss}");
    assert!(
        allocated > 1e5 && allocated <= resident,
        "allocated {allocated}, resident {resident}"
    );
    assert!(resident <= rss * 1.05, "resident {resident}, rss {rss}");
}

/// `herald_actors`: a run with a delay has an actor while it waits, and the
/// count falls back to zero once the run is processed (every processed run
/// used to leave its actor's entry behind, so the count only grew).
#[tokio::test]
async fn the_run_actors_gauge_falls_back_to_zero_once_runs_are_processed() {
    if single_node_only("/metrics shows the actors of the node it is asked") {
        return;
    }
    let app = TestApp::spawn();
    let in_app = in_app_channel(&app).await;
    let steps = json!([delay_step(2), channel_step(&in_app, None, "later")]);
    let flow = s(&active_flow(&app, "actors", steps).await["id"]);
    let mut runs = vec![];
    for i in 0..3 {
        let body = json!({"recipients": [format!("actors-{i}")]});
        runs.push(s(&run_flow(&app, &flow, body).await["id"]));
    }
    let scrape = || async {
        let r = app.request(GET, "/metrics").send().await.unwrap();
        assert_eq!(r.status(), 200);
        r.text().await.unwrap()
    };
    let run_actors = |text: &str| -> f64 {
        metric_value(text, r#"herald_actors{kind="flow_run"}"#)
            .unwrap_or_else(|| panic!("no herald_actors flow_run line in:\n{text}"))
    };
    // While the delay waits, each run has its actor.
    let text = scrape().await;
    assert!(
        run_actors(&text) >= 1.0,
        "no run actor while the runs wait:\n{text}"
    );
    assert!(
        text.contains(r#"herald_actors{kind="user"}"#),
        "user actors counted too:\n{text}"
    );
    // Once every run is processed, no run actor is left.
    for id in &runs {
        wait_run_processed(&app, id, 20).await;
    }
    let d = Deadline::new("no run actor left once every run is processed", 20);
    loop {
        let left = run_actors(&scrape().await);
        if left == 0.0 {
            break;
        }
        d.tick(format!("{left} run actors left")).await;
    }
}
