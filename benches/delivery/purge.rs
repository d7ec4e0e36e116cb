//! The soak's restart measurement (`--soak-restart`) and the purge's cost
//! in isolation (`--purge-cost RUNS`), beside the soak (`soak`) that uses
//! their pieces.

use crate::herald::{proc_cpu_split_ms, Api};
use crate::load::num;
use crate::scenarios::sink;
use crate::soak::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `--soak-restart DIR`: three restarts on an existing data dir (one of
/// `--soak-dir`), each timed to listening and to ready.
pub(crate) async fn restarts(dir: &Path) {
    let keys =
        std::fs::read_to_string(dir.join("soak-keys.txt")).expect("soak-keys.txt in the dir");
    let mut l = keys.lines();
    let (pk, sk) = (l.next().unwrap_or(""), l.next().unwrap_or(""));
    let http = reqwest::Client::new();
    let (disk, _) = dir_bytes(dir);
    let mut rows = vec![];
    for i in 0..3 {
        let h = Herald::start(dir, pk, sk, false, None);
        let listening = h.listening.as_secs_f64();
        let ready = h.ready(&http).await.map(|d| d.as_secs_f64());
        let (exit_s, code) = h.stop();
        println!(
            "restart {i}: {:.1} MiB, listening in {listening:.3} s, ready in {}, SIGTERM exit {code:?} in {exit_s:.2} s",
            mib(disk),
            ready.map_or("never".into(), |r| format!("{r:.3} s"))
        );
        rows.push(json!({"listening_s": num(listening), "ready_s": ready.map(num), "exit_s": num(exit_s), "exit_code": code}));
    }
    let out =
        json!({"run": {"commit": git_commit()}, "restart": {"data_dir_bytes": disk, "runs": rows}});
    std::fs::create_dir_all("bench-results").ok();
    let _ = std::fs::write(
        "bench-results/soak-restart.json",
        serde_json::to_string_pretty(&out).expect("json"),
    );
}

/// `herald_retention_purged_total` by kind.
pub(crate) async fn purged_by_kind(http: &reqwest::Client, base: &str) -> BTreeMap<String, f64> {
    let text = match http.get(format!("{base}/metrics")).send().await {
        Ok(r) => r.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    };
    let mut out = BTreeMap::new();
    for l in text.lines() {
        let Some(rest) = l.strip_prefix("herald_retention_purged_total{") else {
            continue;
        };
        let kind = rest
            .split("kind=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap_or("")
            .to_string();
        let v: f64 = l
            .rsplit(' ')
            .next()
            .and_then(|x| x.parse().ok())
            .unwrap_or(0.0);
        *out.entry(kind).or_default() += v;
    }
    out
}

/// `--purge-cost RUNS`: the purge's cost in isolation. Stores RUNS runs of the
/// soak's shape (`--recipients`, an in_app and a webhook step, to `--users`
/// users) with a retention of 90 days, as fast as 64 requests in flight
/// allow, waits until every delivery is sent, measures the idle server's CPU
/// for 5 s, then sets the retention to 1 s (through
/// `HERALD_RETENTION_TEST_SECONDS`, with a 1 s lifecycle tick) and measures
/// the server's CPU time (user, system) and the wall time until the purge has
/// removed everything: per notification purged, and the pace. With `--perf`,
/// `perf record -g` follows the server during the purge
/// (`bench-results/purge.perf.data`). Writes `bench-results/purge-cost.json`.
pub async fn purge_cost(runs: usize) {
    let o = Opts::parse(false);
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().to_path_buf();
    let pk = format!("pk_soak_{:032x}", rand::random::<u128>());
    let sk = format!("sk_soak_{:032x}", rand::random::<u128>());
    let srv = Herald::start(&dir, &pk, &sk, true, None);
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(72)
        .build()
        .expect("client");
    let api = Api {
        http: http.clone(),
        base: srv.base.clone(),
        pk,
        sk,
    };
    set_retention(&api, "90d").await;
    let hooks = sink(0).await;
    soak_flow(&api, &hooks.url).await;
    api.users("live", o.users).await;
    let rec = o.recipients;
    let users = o.users.max(1);
    let t = Instant::now();
    {
        let api = api.clone();
        crate::herald::parallel(runs, 64, move |k| {
            let api = api.clone();
            async move {
                let recipients: Vec<Value> = (0..rec)
                    .map(|j| json!({"external_id": format!("live-{}", (k * rec + j) % users)}))
                    .collect();
                let (s, v, _) = api.run("soak", json!({"recipients": recipients})).await;
                assert_eq!(s, 202, "run: {v}");
            }
        })
        .await;
    }
    let notifications = (runs * rec) as f64;
    // Every delivery sent: an in_app and a webhook one per notification.
    let deadline = Instant::now() + Duration::from_secs(1800);
    while scrape(&http, &srv.base).await.sent < 2.0 * notifications && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let load_s = t.elapsed().as_secs_f64();
    let (disk_before, _) = dir_bytes(&dir);
    println!(
        "purge-cost: {runs} runs x {rec} recipients stored and sent in {load_s:.1} s; data dir {:.1} MiB",
        mib(disk_before)
    );
    // The idle server's own CPU (flusher, lifecycle ticks), for reference.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let pid = srv.pid();
    let i0 = proc_cpu_split_ms(pid);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let i1 = proc_cpu_split_ms(pid);
    let idle_ms_per_s = (i1.0 + i1.1 - i0.0 - i0.1) / 5.0;

    let perf = crate::flag("--perf").then(|| {
        std::fs::create_dir_all("bench-results").ok();
        Command::new("perf")
            .args([
                "record",
                "-g",
                "-F",
                "999",
                "-o",
                "bench-results/purge.perf.data",
                "-p",
            ])
            .arg(pid.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("perf")
    });
    let before = purged_by_kind(&http, &srv.base).await;
    let c0 = proc_cpu_split_ms(pid);
    let t0 = Instant::now();
    set_retention(&api, "1s").await;
    // Done once every notification and run is gone and nothing more was
    // purged for 3 s; the measure ends at the last change seen.
    let mut last = (before.clone(), t0.elapsed(), c0);
    let mut rows = vec![];
    loop {
        tokio::time::sleep(Duration::from_millis(250)).await;
        let now = purged_by_kind(&http, &srv.base).await;
        let c = proc_cpu_split_ms(pid);
        if now != last.0 {
            last = (now.clone(), t0.elapsed(), c);
            let n = now.get("notifications").copied().unwrap_or(0.0)
                - before.get("notifications").copied().unwrap_or(0.0);
            rows.push(
                json!({"t_s": num(t0.elapsed().as_secs_f64()), "notifications": n,
                "cpu_ms": num(c.0 + c.1 - c0.0 - c0.1)}),
            );
        }
        let n = now.get("notifications").copied().unwrap_or(0.0)
            - before.get("notifications").copied().unwrap_or(0.0);
        let r =
            now.get("runs").copied().unwrap_or(0.0) - before.get("runs").copied().unwrap_or(0.0);
        let quiet = t0.elapsed() - last.1 > Duration::from_secs(3);
        if (n >= notifications && r >= runs as f64 && quiet)
            || t0.elapsed() > Duration::from_secs(3600)
        {
            break;
        }
    }
    if let Some(mut p) = perf {
        let _ = Command::new("kill")
            .arg("-INT")
            .arg(p.id().to_string())
            .status();
        let _ = p.wait();
    }
    let (done, wall, c1) = last;
    let wall_s = wall.as_secs_f64();
    let (user_ms, sys_ms) = (c1.0 - c0.0, c1.1 - c0.1);
    let kinds: BTreeMap<String, f64> = done
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0.0)))
        .collect();
    let purged = kinds.get("notifications").copied().unwrap_or(0.0);
    let per_us = (user_ms + sys_ms) * 1000.0 / purged.max(1.0);
    let net_us = (user_ms + sys_ms - idle_ms_per_s * wall_s).max(0.0) * 1000.0 / purged.max(1.0);
    let (disk_after, _) = dir_bytes(&dir);
    println!("purged: {kinds:?}");
    println!(
        "purge: {purged:.0} notifications in {wall_s:.2} s wall ({:.0}/s); server CPU user {:.2} s + sys {:.2} s = {per_us:.1} us per notification ({net_us:.1} us less the idle server's {idle_ms_per_s:.1} ms/s); data dir {:.1} -> {:.1} MiB",
        purged / wall_s.max(1e-9),
        user_ms / 1000.0,
        sys_ms / 1000.0,
        mib(disk_before),
        mib(disk_after)
    );
    let out = json!({
        "run": {"runs": runs, "recipients": rec, "users": o.users,
                "cores": std::thread::available_parallelism().map_or(0, |n| n.get()),
                "commit": git_commit(), "purge_batch": std::env::var("HERALD_PURGE_BATCH").ok()},
        "purge": {"load_s": num(load_s), "wall_s": num(wall_s), "user_ms": num(user_ms), "sys_ms": num(sys_ms),
                  "idle_cpu_ms_per_s": num(idle_ms_per_s), "purged": kinds,
                  "cpu_us_per_notification": num(per_us), "net_cpu_us_per_notification": num(net_us),
                  "notifications_per_s": num(purged / wall_s.max(1e-9)),
                  "disk_before_bytes": disk_before, "disk_after_bytes": disk_after,
                  "progress": rows},
    });
    std::fs::create_dir_all("bench-results").ok();
    let _ = std::fs::write(
        "bench-results/purge-cost.json",
        serde_json::to_string_pretty(&out).expect("json"),
    );
    let _ = srv.stop();
}

/// Sets the project's retention window (notifications and feed) to `w`.
pub(crate) async fn set_retention(api: &Api, w: &str) {
    let body = json!({"retention": {"notifications": w, "feed": w}});
    let (s, v) = api
        .admin(reqwest::Method::PUT, "/admin/v1/project", Some(body))
        .await;
    assert_eq!(s, 200, "retention: {v}");
}
