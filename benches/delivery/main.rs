//! Herald's delivery benchmark harness (`cargo bench --bench delivery`).
//!
//! Starts the real `herald` binary (release build) on a temporary data dir for
//! each scenario and drives it over HTTP and WebSockets from this process, like a
//! product would. In one run (default: all, in this order):
//!
//! - `ceilings`: raw sled batched inserts of delivery-sized records, and a minimal
//!   actix-web JSON handler under the same load client as `rest`;
//! - `rest`: `GET /user/v1/feed`, `PUT /admin/v1/users/{id}` and
//!   `POST /admin/v1/flows/{id}/run` (10 recipients) under 64 connections for a
//!   fixed time: requests/s and p50/p99/max latency;
//! - `live`: C users each with an open WebSocket; one topic run to all of them;
//!   time from the run's 202 to each socket's `feed_entry.created`, events/s, and
//!   the server's resident memory per open socket;
//! - `peer`: soketi receiving the same fan-out (C Pusher sockets, one event per
//!   user through the signed batch API, batches of 100), interleaved with `live`;
//!   skipped with one line when it cannot be installed or started;
//! - `pipeline`: one run with an in_app and a webhook step (answered by a sink in
//!   this process) to N recipients (through a topic when N > 1,000); deliveries/s
//!   from the 202 to the run being processed, latency from the 202 to each webhook,
//!   the run's memory peak, and the 202 latency of 1,000-recipient runs;
//! - `batch`: 100,000 single-recipient runs spread over 1,000 recipients
//!   through a flow with a batch step (1 s window) then an in_app step: runs/s
//!   accepted, digests/s until the last one is out, and the server's resident
//!   memory with 1,000 open batches;
//! - `content`: runs of 1,000 recipients through a sandboxed email channel,
//!   a plain template alternating with one using a layout (CSS inlined), a
//!   partial and translations: the 202 of each, per delivery, and the ratio;
//! - `route`: one topic run to 10,000 recipients through a route of three
//!   webhook channels (`success: sent`) whose first counterpart refuses
//!   half of them for good: deliveries/s and attempts/s from the 202 to the
//!   run being processed, against the pipeline's of the same size;
//! - `messages`: the console's Messages page (`GET /console/notifications`)
//!   of a project with 1,000,000 notifications (topic runs of 10,000
//!   recipients through four in_app flows, 100 held pending by a delay):
//!   the first page, a deep page by its cursor and each filter (status,
//!   flow, recipient, time), 50 requests each, p50/p99/max on the client
//!   and the server's mean from `/metrics`, beside the same queries on
//!   `GET /admin/v1/notifications`; the seeding's time and the data dir's
//!   size;
//! - `trigger-1` and `trigger-100` (`--scenario trigger` selects both):
//!   transactional runs to 5,000 users each holding a live socket, one recipient
//!   per run with 32 requests in flight, or 100 with 16; latency from before each
//!   POST to the frame on its user's socket, events/s and server CPU per event;
//!   beside the same events published to soketi when the peer runs.
//!
//! Prints a table with the ratios to the ceilings and the peer and Herald's
//! performance targets, writes `bench-results/delivery.json` and renders
//! `bench-results/delivery.png`. Only 127.0.0.1 is used; every loop is bounded.
//!
//! Options: `--scenario a,b` (ceilings, rest, live, peer, pipeline, batch, content,
//! route, messages, trigger-1, trigger-100, trigger; default all),
//! `--sizes 1000,5000` (live/peer and pipeline sizes), `--live-sizes`,
//! `--pipeline-sizes`, `--trigger-sockets N` (default 5,000; the runs scale with
//! it), `--duration SECS` (REST and actix, default 5),
//! `--connections N` (default 64), `--sled-inserts N` (default 300,000),
//! `--messages-size N` (default 1,000,000), `--messages-pg` (`messages` again
//! on one node on a fresh PostgreSQL database),
//! `--no-peer`, `--chart-from FILE.json` (table and chart of an earlier run), and
//! `--events` (each pipeline size again with an event endpoint subscribed to
//! every type, and the ratio to the run without), and
//! `--smoke` (tiny sizes, no peer, no target judged, `--events` on; CI keeps the harness
//! alive with it; writes `bench-results/delivery-smoke.*`).
//!
//! Live sizes over 15,000 sockets (`--live-per-process N`; 10 in the smoke
//! run) are held by client processes of this
//! harness (the binary run again with `--live-clients`, up to 15,000 each,
//! under the machine's per-process open-files limit) and, on a cluster,
//! spread over the nodes; each node's memory per idle socket is reported
//! (`fanout`). 100,000 sockets take `--cluster 7` here, each node then
//! holding about 14,300.
//!
//! `--cluster N` adds the cluster leg (`cluster`): the PostgreSQL ceiling
//! (`--pg-inserts N` rows, default 300,000), then each live and pipeline size
//! again on N nodes sharing one fresh PostgreSQL database and a nats-server
//! of the run's own. Without `--scenario` and sizes it runs `ceilings`,
//! `live` 5,000 and `pipeline` 10,000, so the single-node sled figures of
//! the same scenarios stand beside the cluster's. `--smoke` runs a tiny
//! 3-node leg when PostgreSQL and nats-server are found (skipped with a
//! printed note otherwise).
//!
//! CI runs the smoke with `cargo test --bench delivery -- --smoke`: the test
//! profile reuses the debug `herald` that `cargo test --workspace` just built
//! (`cargo bench` would first build the whole service in release, about six
//! minutes on two cores, for a few seconds of tiny load).

mod batch;
mod ceilings;
mod chart;
mod cluster;
mod content;
mod fanout;
mod herald;
mod load;
mod messages;
mod peer;
mod purge;
mod report;
mod route;
mod scenarios;
mod soak;
mod soak_store;
mod trigger;

use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn flag(name: &str) -> bool {
    std::env::args().any(|a| a == name)
}

fn list(name: &str) -> Option<Vec<usize>> {
    arg(name).map(|s| {
        s.split(',')
            .filter_map(|x| x.trim().replace('_', "").parse().ok())
            .collect()
    })
}

/// The soft limit on open files of this process (inherited by Herald and soketi).
fn open_files_limit() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/limits").ok()?;
    let l = s.lines().find(|l| l.starts_with("Max open files"))?;
    l.split_whitespace().nth(3)?.parse().ok()
}

fn phase(name: &str, t0: Instant, phases: &mut Vec<Value>) {
    let s = t0.elapsed().as_secs_f64();
    eprintln!("  ({name}: {s:.1} s)");
    phases.push(json!({"phase": name, "seconds": load::num(s)}));
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    if flag("--live-clients") {
        // A child of this harness holding live sockets (see `fanout`).
        fanout::child_main().await;
        return;
    }
    let started = Instant::now();
    let smoke = flag("--smoke");
    if let Some(n) = arg("--live-per-process").and_then(|n| n.parse().ok()) {
        fanout::set_per_process(n);
    } else if smoke {
        // The smoke's 20 live sockets go through two client processes.
        fanout::set_per_process(10);
    }
    if let Some(runs) = arg("--purge-cost") {
        // The purge's cost in isolation (see `purge::purge_cost`).
        purge::purge_cost(runs.replace('_', "").parse().expect("--purge-cost RUNS")).await;
        return;
    }
    if flag("--soak") || flag("--soak-restart") {
        // The soak and restart measurements (see `soak`), on their own.
        soak::main(smoke).await;
        return;
    }
    if cfg!(debug_assertions) && !smoke {
        println!(
            "warning: an unoptimised build (cargo test --bench): numbers are not representative; use cargo bench"
        );
    }
    if let Some(from) = arg("--chart-from") {
        // Re-render the table and chart of an earlier run.
        let j: Value = serde_json::from_str(&std::fs::read_to_string(&from).expect("read"))
            .expect("results json");
        let r = report::Results::from_json(&j);
        let png = std::path::Path::new(&from).with_extension("png");
        let sub = format!("{} cores, re-rendered from {from}", j["run"]["cores"]);
        match chart::chart(&r, &png, &sub) {
            Ok(()) => println!("chart: {}", png.display()),
            Err(e) => println!("chart: not rendered ({e})"),
        }
        print!("{}", r.table());
        return;
    }
    // `--cluster N`: the cluster leg on N nodes (and, unless told otherwise,
    // only the single-node scenarios it is compared with).
    let cluster_nodes: Option<usize> = if smoke {
        Some(3)
    } else {
        arg("--cluster")
            .and_then(|n| n.parse().ok())
            .filter(|&n| n > 0)
    };
    if flag("--cluster") && cluster_nodes.is_none() {
        eprintln!("--cluster takes a number of nodes (1 or more)");
        std::process::exit(2);
    }
    if let Some(n) = cluster_nodes {
        // Each node opens up to 16 connections; past what PostgreSQL's
        // default `max_connections` (100) holds beside the harness's own,
        // the nodes share 90 (the nodes inherit this environment).
        if n * 16 > 90 && std::env::var_os("HERALD_PG_MAX_CONNECTIONS").is_none() {
            std::env::set_var("HERALD_PG_MAX_CONNECTIONS", (90 / n).max(2).to_string());
        }
    }
    let compare_only = cluster_nodes.is_some() && !smoke;
    let scenarios: Vec<String> = arg("--scenario")
        .unwrap_or_else(|| {
            if compare_only {
                "ceilings,live,pipeline".into()
            } else {
                "all".into()
            }
        })
        .split(',')
        .map(|s| s.trim().to_string())
        .collect();
    let on = |s: &str| {
        scenarios
            .iter()
            .any(|x| x == "all" || x == s || (x == "trigger" && s.starts_with("trigger-")))
    };
    let trigger_sockets = arg("--trigger-sockets").and_then(|c| c.parse().ok());
    let triggers: Vec<trigger::Shape> = [
        trigger::Shape::one(smoke, trigger_sockets),
        trigger::Shape::hundred(smoke, trigger_sockets),
    ]
    .into_iter()
    .filter(|t| on(t.name))
    .collect();
    let sizes = list("--sizes");
    let live_sizes = if smoke {
        vec![20]
    } else {
        list("--live-sizes").or(sizes.clone()).unwrap_or_else(|| {
            if compare_only {
                vec![5000]
            } else {
                vec![1000, 5000, 10000]
            }
        })
    };
    let pipeline_sizes = if smoke {
        vec![20]
    } else {
        list("--pipeline-sizes").or(sizes).unwrap_or_else(|| {
            if compare_only {
                vec![10000]
            } else {
                vec![1000, 10000, 100000]
            }
        })
    };
    let secs = |d: f64| Duration::from_secs_f64(d);
    let duration = if smoke {
        secs(0.3)
    } else {
        secs(
            arg("--duration")
                .and_then(|d| d.parse().ok())
                .unwrap_or(5.0),
        )
    };
    let warmup = if smoke { secs(0.1) } else { secs(1.0) };
    let conns: usize = if smoke {
        8
    } else {
        arg("--connections")
            .and_then(|c| c.parse().ok())
            .unwrap_or(64)
    };
    let sled_inserts: usize = if smoke {
        2_000
    } else {
        arg("--sled-inserts")
            .and_then(|c| c.parse().ok())
            .unwrap_or(300_000)
    };
    let pg_inserts: usize = if smoke {
        2_000
    } else {
        arg("--pg-inserts")
            .and_then(|c| c.parse().ok())
            .unwrap_or(300_000)
    };
    let most_sockets = live_sizes
        .iter()
        .copied()
        .filter(|_| on("live"))
        .chain(triggers.iter().map(|t| t.sockets))
        .max();
    // Past what one process may hold, live sockets are held by client
    // processes of their own and spread over the nodes (`fanout`): then each
    // node, not this process, holds a share.
    let most_sockets = most_sockets.map(|max| {
        if fanout::needs_processes(max) {
            max.div_ceil(cluster_nodes.unwrap_or(1))
        } else {
            max
        }
    });
    if let Some(max) = most_sockets {
        // Each side of every socket holds a descriptor (the server inherits this).
        scenarios::raise_open_files(max as u64 + 10_000);
    }
    if let (Some(limit), Some(max)) = (open_files_limit(), most_sockets) {
        if limit < max as u64 + 1000 {
            println!(
                "warning: open files limit {limit} is low for {max} sockets (ulimit -n 20000)"
            );
        }
    }
    let mut r = report::Results {
        smoke,
        ..Default::default()
    };
    let mut phases = vec![];

    if on("ceilings") {
        let t = Instant::now();
        let s = tokio::task::spawn_blocking(move || ceilings::sled_inserts(sled_inserts))
            .await
            .expect("sled ceiling");
        println!(
            "ceiling   sled      {:>10.0} inserts/s ({} x {} B, batches of {}, flushed)",
            s.inserts_per_s,
            s.inserts,
            ceilings::RECORD_BYTES,
            ceilings::BATCH
        );
        r.sled = Some(s.json());
        let a = ceilings::actix_json(conns, warmup, duration).await;
        println!(
            "ceiling   actix     {:>10.0} requests/s  p50={:.2} ms  p99={:.2} ms  errors={}",
            a.rps, a.latency.p50, a.latency.p99, a.errors
        );
        r.actix = Some(a.json());
        phase("ceilings", t, &mut phases);
    }

    if on("rest") {
        let t = Instant::now();
        let v = scenarios::rest(conns, warmup, duration).await;
        for (k, e) in v["endpoints"].as_object().expect("endpoints") {
            println!(
                "rest      {:<18} {:>9.0} requests/s  p50={:.2} ms  p99={:.2} ms  max={:.2} ms  errors={}",
                k,
                e["rps"].as_f64().unwrap_or(0.0),
                e["p50_ms"].as_f64().unwrap_or(f64::NAN),
                e["p99_ms"].as_f64().unwrap_or(f64::NAN),
                e["max_ms"].as_f64().unwrap_or(f64::NAN),
                e["errors"]
            );
        }
        r.rest = Some(v);
        phase("rest", t, &mut phases);
    }

    let want_peer = (on("peer") || !triggers.is_empty()) && !flag("--no-peer");
    let soketi = if want_peer && smoke {
        r.soketi_skipped = Some("not run in --smoke".into());
        println!("soketi peer: skipped (not run in --smoke)");
        None
    } else if want_peer {
        let t = Instant::now();
        let s = tokio::task::spawn_blocking(peer::Soketi::start)
            .await
            .expect("soketi start");
        phase("peer start", t, &mut phases);
        match s {
            Ok(s) => {
                println!("soketi peer: {} on 127.0.0.1:6001", s.version);
                r.soketi_version = Some(s.version.clone());
                Some(s)
            }
            Err(why) => {
                println!("soketi peer: skipped, it cannot be installed or started here: {why}");
                r.soketi_skipped = Some(why);
                None
            }
        }
    } else {
        None
    };
    let peer_live = soketi.as_ref().filter(|_| on("peer"));
    if on("live") || peer_live.is_some() {
        for &c in &live_sizes {
            // One node holds one descriptor per socket: past its limit the
            // size is the cluster leg's alone (its nodes share the sockets).
            let one_node_limit = open_files_limit().filter(|&l| c as u64 + 1000 > l);
            if let (true, Some(l)) = (on("live"), one_node_limit) {
                println!("live      sockets={c:>6}  skipped on one node (over its {l} open files; the cluster leg spreads them)");
            } else if on("live") {
                let t = Instant::now();
                let v = scenarios::live(c).await;
                println!(
                    "live      sockets={:>6}  received={:>6}  p50={:>7.1} ms  p99={:>7.1} ms  max={:>7.1} ms  events/s={:>8.0}  rss/socket={:>5.1} KiB  server cpu/event={:>5.1} µs",
                    c, v["received"], v["p50_ms"].as_f64().unwrap_or(f64::NAN), v["p99_ms"].as_f64().unwrap_or(f64::NAN),
                    v["max_ms"].as_f64().unwrap_or(f64::NAN), v["events_per_s"].as_f64().unwrap_or(0.0),
                    v["rss_per_socket_kib"].as_f64().unwrap_or(0.0),
                    v["server_cpu_us_per_event"].as_f64().unwrap_or(f64::NAN)
                );
                r.live.push(v);
                phase(&format!("live {c}"), t, &mut phases);
            }
            if let Some(s) = peer_live {
                let t = Instant::now();
                let v = s.fanout(c).await;
                println!(
                    "soketi    sockets={:>6}  received={:>6}  p50={:>7.1} ms  p99={:>7.1} ms  max={:>7.1} ms  events/s={:>8.0}  rss/socket={:>5.1} KiB",
                    c, v["received"], v["p50_ms"].as_f64().unwrap_or(f64::NAN), v["p99_ms"].as_f64().unwrap_or(f64::NAN),
                    v["max_ms"].as_f64().unwrap_or(f64::NAN), v["events_per_s"].as_f64().unwrap_or(0.0),
                    v["rss_per_socket_kib"].as_f64().unwrap_or(0.0)
                );
                r.soketi.push(v);
                phase(&format!("soketi {c}"), t, &mut phases);
            }
        }
    }
    if !triggers.is_empty() {
        let t = Instant::now();
        let mut rows = trigger::herald(&triggers).await;
        phase("trigger herald", t, &mut phases);
        if let Some(s) = &soketi {
            let t = Instant::now();
            rows.extend(s.trigger(&triggers).await);
            phase("trigger soketi", t, &mut phases);
        }
        for v in &rows {
            println!(
                "{:<11} {:<6}  sockets={:>6}  events={:>7}  received={:>7}  errors={}  p50={:>7.1} ms  p99={:>7.1} ms  events/s={:>8.0}  server cpu/event={:>6.1} µs",
                v["scenario"].as_str().unwrap_or(""), v["server"].as_str().unwrap_or(""),
                v["sockets"], v["events"], v["received"], v["errors"],
                v["p50_ms"].as_f64().unwrap_or(f64::NAN), v["p99_ms"].as_f64().unwrap_or(f64::NAN),
                v["events_per_s"].as_f64().unwrap_or(0.0),
                v["server_cpu_us_per_event"].as_f64().unwrap_or(f64::NAN)
            );
        }
        r.trigger = rows;
    }
    drop(soketi);

    // `--events` (and the smoke run) measures each size again with an event
    // endpoint subscribed to every type, reporting the ratio to the run without.
    let with_events = flag("--events") || smoke;
    if on("pipeline") {
        for &n in &pipeline_sizes {
            let t = Instant::now();
            let v = scenarios::pipeline(n, scenarios::accept_samples(smoke), false).await;
            println!(
                "pipeline  recipients={:>6}  202={:>7.1} ms  total={:>8.0} ms  deliveries/s={:>8.0}  p99={:>7.1} ms  peak={:>6.0} MiB  processed={}",
                n, v["accept_ms"].as_f64().unwrap_or(f64::NAN), v["total_ms"].as_f64().unwrap_or(f64::NAN),
                v["deliveries_per_s"].as_f64().unwrap_or(0.0), v["p99_ms"].as_f64().unwrap_or(f64::NAN),
                v["server_peak_mib"].as_f64().unwrap_or(0.0), v["processed"]
            );
            let base = v["deliveries_per_s"].as_f64();
            r.pipeline.push(v);
            phase(&format!("pipeline {n}"), t, &mut phases);
            if with_events {
                let t = Instant::now();
                let mut v = scenarios::pipeline(n, 0, true).await;
                let ratio = v["deliveries_per_s"].as_f64().zip(base).map(|(e, b)| e / b);
                v["ratio_to_no_events"] = load::num(ratio.unwrap_or(f64::NAN));
                println!(
                    "pipeline  recipients={:>6}  with events: deliveries/s={:>8.0} ({:.2}x of without)  events received={}/{} in {} ms",
                    n,
                    v["deliveries_per_s"].as_f64().unwrap_or(0.0),
                    ratio.unwrap_or(f64::NAN),
                    v["events_received"],
                    v["events_expected"],
                    v["events_done_ms"]
                );
                r.pipeline.push(v);
                phase(&format!("pipeline {n} with events"), t, &mut phases);
            }
        }
    }

    if on("batch") {
        let t = Instant::now();
        let (runs, recipients) = batch::sizes(smoke);
        let v = batch::batch(runs, recipients).await;
        println!(
            "batch     runs={:>7}  recipients={:>5}  runs/s={:>8.0}  digests={:>6}  digests/s={:>7.0}  runs/digest={:>6.1}  rss idle={:>6.0} MiB  with {} open batches={:>6.0} MiB  errors={}",
            runs, recipients,
            v["runs_per_s"].as_f64().unwrap_or(0.0), v["digests"],
            v["digests_per_s"].as_f64().unwrap_or(0.0),
            v["runs_per_digest"].as_f64().unwrap_or(f64::NAN),
            v["server_rss_idle_mib"].as_f64().unwrap_or(f64::NAN),
            recipients,
            v["server_rss_open_batches_mib"].as_f64().unwrap_or(f64::NAN),
            v["errors"]
        );
        r.batch.push(v);
        phase("batch", t, &mut phases);
    }

    if on("content") {
        let t = Instant::now();
        let (n, runs) = content::sizes(smoke);
        let v = content::content(n, runs).await;
        println!(
            "content   recipients={:>5}  202 p50: plain={:>7.1} ms  content={:>7.1} ms (no CSS {:>7.1} ms)  per delivery: {:>6.1} vs {:>6.1} µs  ratio={:.2} (no CSS {:.2})  inlined style={}",
            n,
            v["plain_202_p50_ms"].as_f64().unwrap_or(f64::NAN),
            v["content_202_p50_ms"].as_f64().unwrap_or(f64::NAN),
            v["no_css_202_p50_ms"].as_f64().unwrap_or(f64::NAN),
            v["plain_us_per_delivery"].as_f64().unwrap_or(f64::NAN),
            v["content_us_per_delivery"].as_f64().unwrap_or(f64::NAN),
            v["ratio"].as_f64().unwrap_or(f64::NAN),
            v["no_css_ratio"].as_f64().unwrap_or(f64::NAN),
            v["sample_styled"]
        );
        r.content.push(v);
        phase("content", t, &mut phases);
    }

    if on("route") {
        let t = Instant::now();
        let n = route::size(smoke);
        let v = route::route(n).await;
        println!(
            "route     recipients={:>6}  202={:>7.1} ms  total={:>8.0} ms  deliveries/s={:>8.0}  attempts/s={:>8.0}  accepted={}/{}/{}  processed={}",
            n, v["accept_ms"].as_f64().unwrap_or(f64::NAN), v["total_ms"].as_f64().unwrap_or(f64::NAN),
            v["deliveries_per_s"].as_f64().unwrap_or(0.0), v["attempts_per_s"].as_f64().unwrap_or(0.0),
            v["accepted_first"], v["accepted_second"], v["accepted_third"], v["processed"]
        );
        r.route.push(v);
        phase("route", t, &mut phases);
    }

    if on("messages") {
        let n = messages::size(
            smoke,
            list("--messages-size").and_then(|v| v.first().copied()),
        );
        let samples = messages::samples(smoke);
        let t = Instant::now();
        r.messages.push(messages::sled(n, samples).await);
        phase("messages sled", t, &mut phases);
        if flag("--messages-pg") || smoke {
            let t = Instant::now();
            r.messages.push(messages::pg(n, samples).await);
            phase("messages postgresql", t, &mut phases);
        }
    }

    if let Some(n) = cluster_nodes {
        // The same sizes as the single-node scenarios (the smoke's tiny ones).
        let t = Instant::now();
        let live: &[usize] = if on("live") { &live_sizes } else { &[] };
        let pipe: &[usize] = if on("pipeline") { &pipeline_sizes } else { &[] };
        r.cluster = Some(cluster::run(n, pg_inserts, live, pipe).await);
        phase(&format!("cluster {n}"), t, &mut phases);
    }

    let wall = started.elapsed().as_secs_f64();
    let stem = if smoke { "delivery-smoke" } else { "delivery" };
    std::fs::create_dir_all("bench-results").ok();
    let png = std::path::PathBuf::from(format!("bench-results/{stem}.png"));
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    match chart::chart(
        &r,
        &png,
        &format!(
            "{cores} cores, {}",
            if smoke { "smoke sizes" } else { "one run" }
        ),
    ) {
        Ok(()) => println!("chart: {}", png.display()),
        Err(e) => println!("chart: not rendered ({e})"),
    }
    println!();
    print!("{}", r.table());
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = git(&["rev-parse", "--short", "HEAD"]);
    let dirty = git(&["status", "--porcelain", "--", "src", "actors"]).map(|s| !s.is_empty());
    let out = r.json(json!({
        "commit": commit, "engine_tree_dirty": dirty,
        "smoke": smoke, "cores": cores, "wall_s": load::num(wall),
        "connections": conns, "duration_s": duration.as_secs_f64(), "phases": phases,
    }));
    let path = format!("bench-results/{stem}.json");
    match std::fs::write(&path, serde_json::to_string_pretty(&out).expect("json")) {
        Ok(()) => println!("\nresults: {path}"),
        Err(e) => println!("\nresults: cannot write {path}: {e}"),
    }
    println!("wall time: {wall:.1} s");
    if smoke {
        let ok_rest = r.rest.as_ref().is_none_or(|v| {
            v["endpoints"].as_object().is_some_and(|m| {
                m.values()
                    .all(|e| e["errors"] == 0 && e["requests"].as_u64() > Some(0))
            })
        });
        let ok = r.live.iter().all(|v| v["received"] == v["sockets"])
            && r.trigger
                .iter()
                .all(|v| v["received"] == v["events"] && v["errors"] == 0)
            && r.pipeline.iter().all(|v| v["processed"] == true)
            && r.batch.iter().all(|v| v["processed"] == true)
            && r.messages.iter().all(messages::ok)
            && r.pipeline
                .iter()
                .filter(|v| v["events"] == true)
                .all(|v| v["events_received"].as_u64() >= v["events_expected"].as_u64())
            && ok_rest
            && r.sled
                .as_ref()
                .is_none_or(|s| s["inserts_per_s"].as_f64() > Some(0.0))
            && r.actix
                .as_ref()
                .is_none_or(|a| a["errors"] == 0 && a["requests"].as_u64() > Some(0))
            && r.cluster.as_ref().is_none_or(|c| {
                // Skipped (no PostgreSQL or nats-server here), or all of it worked.
                c["skipped"].is_string()
                    || (c["pg_ceiling"]["rows_per_s"].as_f64() > Some(0.0)
                        && c["live"].as_array().is_some_and(|a| {
                            a.iter().all(|v| {
                                v["sockets"].as_u64().is_some() && v["received"] == v["sockets"]
                            })
                        })
                        && c["pipeline"].as_array().is_some_and(|a| {
                            a.iter().all(|v| {
                                v["processed"] == true && v["webhooks_received"] == v["recipients"]
                            })
                        }))
            });
        if !ok {
            eprintln!("smoke run failed: {out}");
            std::process::exit(1);
        }
        println!("smoke run ok");
    }
}
