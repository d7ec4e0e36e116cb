//! Issue 35's crash loop, ended by the crash rule (docs/SECURITY.md, "Poison
//! jobs"): a delivery whose processing kills the process is attempted at most
//! three times across starts; the third start fails it with `crashed`
//! (decision trace, `delivery.failed` event) and stays up.
//!
//! The test build's fault (`HERALD_FAULT_ABORT_ON_MARKER`, debug builds only)
//! aborts the process when a render's output holds `HERALD_FAULT_ABORT`: a
//! digest whose template prints a batch activity's data aborts when the batch
//! closes, after the run's 202, as issue 35's template did before renders were
//! bounded in memory.

use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::engine_helpers::*;
use crate::helpers::*;

const FAULT: (&str, &str) = ("HERALD_FAULT_ABORT_ON_MARKER", "1");

fn start(dir: &Path, keys: &Keys) -> TestApp {
    try_start(dir, keys).unwrap_or_else(|e| panic!("{e}"))
}

fn try_start(dir: &Path, keys: &Keys) -> Result<TestApp, String> {
    TestApp::start(ServeOptions {
        data_dir: dir,
        bootstrap: Some(keys),
        args: &[],
        env: &[FAULT],
        default_flags: true,
    })
}

/// A start that dies of the fault, before it listens or soon after; what it
/// printed if it did not.
fn start_and_die(dir: &Path, keys: &Keys) -> Result<(), String> {
    match try_start(dir, keys) {
        Err(e) if e.contains("injected fault") => Ok(()),
        Err(e) => Err(e),
        Ok(mut app) => {
            if died_within(&mut app, 30) {
                return Ok(());
            }
            let out = app.output.tail(40);
            app.stop();
            Err(out)
        }
    }
}

/// Waits for the server to die by itself (its process a zombie, not yet
/// reaped), then reaps it; false if it was still running after `secs`.
fn died_within(app: &mut TestApp, secs: u64) -> bool {
    let pid = app.pid();
    let until = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < until {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // the state is the field after the command's closing parenthesis
        let state = stat.rsplit_once(") ").map(|(_, r)| r.chars().next());
        if matches!(state, Some(Some('Z')) | None) {
            let status = app.kill9();
            assert!(!status.success(), "{status:?}");
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[tokio::test]
async fn a_delivery_that_kills_the_process_is_failed_at_the_third_start() {
    if single_node_only("restarts one embedded data directory") || pg_mode() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let keys = Keys::random();
    let mut app = start(dir.path(), &keys);
    let rx = Receiver::start().await;
    let r = app
        .admin(POST, "/admin/v1/webhook_endpoints")
        .json(&json!({"url": rx.url(), "events": ["delivery.failed"]}))
        .go()
        .await;
    r.ok(201);
    let inapp = in_app_channel(&app).await;
    let flow = active_flow(
        &app,
        "poison",
        json!([
            {"type": "batch", "window": "1s"},
            channel_step(
                &inapp,
                None,
                "{{ batch.activities[0].data.marker if batch else 'none' }}"
            ),
        ]),
    )
    .await;
    let ext = new_ext("poison");
    let run = run_flow(
        &app,
        &s(&flow["id"]),
        json!({"recipients": [ext], "data": {"marker": "HERALD_FAULT_ABORT"}}),
    )
    .await;
    let run_id = s(&run["id"]);

    // first start: the batch closes about 1 s after the 202 and the render aborts
    assert!(died_within(&mut app, 30), "the fault did not fire");
    // second start: attempted again (one crash counted), aborts again
    if let Err(out) = start_and_die(dir.path(), &keys) {
        panic!("the second start survived:\n{out}");
    }
    // third start: failed without an attempt, and the node stays up
    let app = start(dir.path(), &keys);
    let ns = {
        let d = Deadline::new("the poisoned run to be processed", 30);
        loop {
            let ns = run_notifications(&app, &run_id).await;
            if ns.len() == 1 && ns[0]["status"] == json!("processed") {
                break ns;
            }
            d.tick(format!("{ns:?}")).await;
        }
    };
    let d = delivery_of(&ns[0], "in_app");
    assert_eq!(d["status"], json!("failed"), "{d}");
    assert_eq!(d["error"]["code"], json!("crashed"), "{d}");
    let r = app.request(GET, "/healthz").go().await;
    assert_eq!(r.status, 200, "{r}");
    let trace = app
        .admin(
            GET,
            &format!("/admin/v1/notifications/{}/trace", s(&ns[0]["id"])),
        )
        .go()
        .await
        .ok(200);
    let crashed = trace["entries"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e.to_string().contains("crashed"));
    assert!(crashed, "no trace entry says crashed: {trace}");
    let got = rx
        .wait_for("the delivery.failed event", |got: &[Value]| {
            got.iter().any(|e| {
                e["type"] == json!("delivery.failed")
                    && e["data"]["error"]["code"] == json!("crashed")
            })
        })
        .await;
    assert!(!got.is_empty());
    // nothing was sent twice: the feed has no entry
    let feed = app.user(GET, "/user/v1/feed", &ext).go().await.ok(200);
    assert_eq!(feed["items"], json!([]), "{feed}");
}

/// A local event endpoint that records every event's JSON body.
struct Receiver {
    server: wiremock::MockServer,
}

impl Receiver {
    async fn start() -> Receiver {
        let server = mock_server().await;
        mock_always(&server, 200).await;
        Receiver { server }
    }

    fn url(&self) -> String {
        hook_url(&self.server)
    }

    async fn wait_for(&self, what: &str, pred: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let d = Deadline::new(what, 30);
        loop {
            let got: Vec<Value> = received(&self.server).await.iter().map(req_json).collect();
            if pred(&got) {
                return got;
            }
            d.tick(format!("{} events", got.len())).await;
        }
    }
}
