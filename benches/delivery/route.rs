//! `route`: a flow whose one step is a route of three webhook channels
//! with `success: sent`, run through a topic to N recipients, half of whom
//! the first channel's counterpart refuses (400, a permanent failure): for
//! them the route moves on at once to the second channel, which accepts;
//! the third is never needed. Every recipient's notification has three
//! deliveries (one per hop: sent, or failed then sent, and the rest
//! skipped as `route_satisfied`). Reports deliveries/s and attempts/s from
//! the 202 to the run being processed, and the ratio to the `pipeline`
//! scenario's deliveries/s for the same size when that ran too.

use crate::herald::Server;
use crate::load::{n0, num};
use crate::report::{by, f, Target};
use crate::scenarios::{sink, sink_refusing};
use reqwest::Method;
use serde_json::{json, Value};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The recipients of the measured run.
pub fn size(smoke: bool) -> usize {
    if smoke {
        40
    } else {
        10_000
    }
}

pub async fn route(n: usize) -> Value {
    let srv = Server::start();
    let api = srv.api();
    // The first hop refuses the "rb-" half of the recipients for good.
    let first = sink_refusing(0, Some("rb-")).await;
    let second = sink(0).await;
    let third = sink(0).await;
    let mut ids = vec![];
    for s in [&first, &second, &third] {
        let (st, ch) = api
            .admin(
                Method::POST,
                "/admin/v1/channels",
                Some(json!({"type": "chat", "provider": "webhook", "config": {"url": s.url}})),
            )
            .await;
        assert_eq!(st, 201, "webhook channel: {ch}");
        ids.push(ch["id"].clone());
    }
    let hop = |id: &Value| json!({"channel_id": id, "template": {"body": "Hi {{ recipient.external_id }}"}});
    api.flow(
        "route",
        json!([{"type": "route", "success": "sent",
                "channels": [hop(&ids[0]), hop(&ids[1]), hop(&ids[2])]}]),
    )
    .await;
    let half = n / 2;
    let t = Instant::now();
    for prefix in ["ra", "rb"] {
        api.users(prefix, half).await;
        api.subscribe_all(prefix, half, "route").await;
    }
    let setup_s = t.elapsed().as_secs_f64();
    let (s, run, accept) = api.run("route", json!({"topic": "route"})).await;
    let t202 = Instant::now();
    assert_eq!(s, 202, "run: {run}");
    let done = api
        .wait_processed(
            run["id"].as_str().expect("run id"),
            Duration::from_secs(600),
        )
        .await;
    let total = done.map(|d| d.duration_since(t202).as_secs_f64());
    // Hops that reached a counterpart: every recipient's first, and the
    // refused half's second.
    let accepted = [&first, &second, &third].map(|s| s.count.load(Ordering::Relaxed));
    let recipients = 2 * half;
    let t = total.unwrap_or(f64::NAN);
    json!({
        "scenario": "route",
        "recipients": recipients,
        "processed": done.is_some(),
        "accept_ms": num(accept.as_secs_f64() * 1000.0),
        "total_ms": num(t * 1000.0),
        // three deliveries per notification, one per hop
        "deliveries_per_s": num((3 * recipients) as f64 / t),
        // provider calls: one per recipient, and one more for the refused half
        "attempts_per_s": num((recipients + half) as f64 / t),
        "accepted_first": accepted[0],
        "accepted_second": accepted[1],
        "accepted_third": accepted[2],
        "setup_s": num(setup_s),
    })
}

/// The route's target: its deliveries/s within 20% of the pipeline's of
/// the same size (`pipeline`: the run's pipeline rows).
pub fn target(row: Option<&Value>, pipeline: &[Value]) -> Target {
    let size = |r: &Value| r["recipients"].as_u64().unwrap_or(0) as usize;
    let pipe = row.and_then(|r| by(pipeline, "recipients", size(r)));
    let rate = |r: &Value| f(&r["deliveries_per_s"]);
    Target {
        name: "route: 3 channels, half moved on, deliveries/s vs the pipeline's",
        measured: row.map_or("not measured".into(), |r| {
            format!(
                "{} vs {} deliveries/s ({} recipients)",
                n0(rate(r)),
                pipe.map_or("not measured".into(), |p| n0(rate(p))),
                n0(f(&r["recipients"]))
            )
        }),
        goal: ">= 0.80x the pipeline's",
        met: row.zip(pipe).map(|(r, p)| rate(r) >= 0.8 * rate(p)),
    }
}
