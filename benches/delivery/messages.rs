//! `messages`: the console's Messages page (`GET /console/notifications`)
//! of a project with N notifications (`--messages-size`, default 1,000,000).
//!
//! Seeded as a product would: 10,000 users on one topic, topic runs to all
//! of them through in_app-only flows (`activity`, `comments`, `digest` in
//! turn; `security` only for the first, oldest run: a flow with 1% of the
//! notifications), and, before them all, one run to 100 users through a
//! flow whose 7-day delay keeps its notifications pending. Then a console
//! owner is made (`herald console add-member`), sets a password through the
//! sign-in link, and the page is timed, one request at a time: the first
//! page, a deep page (by the cursor of a walk to the middle of the set), and
//! each filter (status, flow, recipient, time), 50 samples each (fewer
//! when they take over 20 s: a query that scans takes seconds). The same
//! queries on `GET /admin/v1/notifications` stand beside them, and the
//! server's own time per query is read from `/metrics` (the request
//! duration histogram's sum and buckets before and after each query).
//! Last, the project goes on a test clock two hours ahead, so "last hour"
//! is an empty window over the whole set.
//!
//! On the embedded store by default; `--messages-pg` runs it again on a
//! single node on a fresh PostgreSQL database (the smoke does both).

use crate::herald::Server;
use crate::load::{n0, n1, num, Stats};
use crate::report::{f, Target};
use reqwest::Method;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// Users on the topic (each run's recipients).
const USERS: usize = 10_000;
/// Recipients of the run that stays pending.
const PENDING: usize = 100;
/// Runs not yet processed at once while seeding.
const IN_FLIGHT: usize = 4;
/// A query's samples stop after this long (at least `MIN_SAMPLES` taken):
/// a query that scans takes seconds each.
const QUERY_BUDGET: Duration = Duration::from_secs(20);
const MIN_SAMPLES: usize = 3;
/// The console route's and the Admin API's patterns in `/metrics`.
const CONSOLE_ROUTE: &str = "/console/notifications";
const ADMIN_ROUTE: &str = "/admin/v1/notifications";
/// The Messages page's target: its server time at 1,000,000 notifications.
pub const TARGET_MS: f64 = 200.0;

/// The notifications to seed: tiny in a smoke run.
pub fn size(smoke: bool, asked: Option<usize>) -> usize {
    if smoke {
        400
    } else {
        asked.unwrap_or(1_000_000)
    }
}

/// Samples per query.
pub fn samples(smoke: bool) -> usize {
    if smoke {
        3
    } else {
        50
    }
}

/// The scenario on the embedded store.
pub async fn sled(n: usize, samples: usize) -> Value {
    let srv = Server::start();
    let mut v = run(&srv, None, n, samples).await;
    v["store"] = json!("sled");
    v["data_dir_mib"] = num(dir_bytes(srv.data_dir()) as f64 / 1048576.0);
    v
}

/// The scenario on one node on a fresh PostgreSQL database (skipped, with
/// why, when PostgreSQL is not reachable).
pub async fn pg(n: usize, samples: usize) -> Value {
    if let Err(why) = crate::cluster::pg_reachable() {
        println!("messages  postgresql: skipped, {why}");
        return json!({"scenario": "messages", "store": "postgresql", "skipped": why});
    }
    let db = match crate::cluster::Database::create() {
        Ok(db) => db,
        Err(e) => return json!({"scenario": "messages", "store": "postgresql", "skipped": e}),
    };
    let srv = Server::start_pg(&db.url);
    let mut v = run(&srv, Some(&db.url), n, samples).await;
    v["store"] = json!("postgresql");
    v["database_mib"] = num(db.bytes() as f64 / 1048576.0);
    drop(srv);
    // Where the bytes are: per table, and the largest indexes.
    match crate::soak_store::pg_spaces(&db) {
        Ok(sp) => {
            crate::soak_store::print_spaces(true, &sp.rows);
            v["tables"] = sp.rows;
        }
        Err(e) => println!("messages  postgresql: cannot read the tables' sizes: {e}"),
    }
    if let Ok(ix) = crate::soak_store::pg_indexes(&db) {
        for i in ix.as_array().into_iter().flatten() {
            println!(
                "  index {:<40} {:>12}",
                format!(
                    "{}.{}",
                    i["table"].as_str().unwrap_or(""),
                    i["index"].as_str().unwrap_or("")
                ),
                i["bytes"]
            );
        }
        v["indexes"] = ix;
    }
    v
}

/// Bytes of the files under `dir`.
fn dir_bytes(dir: &std::path::Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    rd.flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// What was seeded, in how long, and when.
struct Seeded {
    notifications: usize,
    users: usize,
    setup_s: f64,
    seed_s: f64,
    processed: bool,
    /// Wall-clock instants (ms) of the first and last run's 202.
    first_ms: i64,
    last_ms: i64,
}

async fn seed(api: &crate::herald::Api, n: usize) -> Seeded {
    // Ten runs at least, so each flow has some.
    let users = (n / 10).clamp(1, USERS);
    let runs = n.div_ceil(users).max(1);
    let ch = api.in_app_channel().await;
    let body = |f: &str| json!([{"type": "channel", "channel_id": ch, "template": {"body": format!("{f} for {{{{ recipient.external_id }}}}")}}]);
    for f in ["security", "activity", "comments", "digest"] {
        api.flow(f, body(f)).await;
    }
    let mut steps = vec![json!({"type": "delay", "seconds": 7 * 86_400})];
    steps.extend(body("reminder").as_array().cloned().unwrap_or_default());
    api.flow("reminder", json!(steps)).await;
    let t = Instant::now();
    api.users("m", users).await;
    api.subscribe_all("m", users, "all").await;
    let setup_s = t.elapsed().as_secs_f64();
    let now_ms = || chrono::Utc::now().timestamp_millis();
    let t = Instant::now();
    let first_ms = now_ms();
    // The pending ones, oldest of all: what a scan for them would cross.
    let pending = PENDING.min(users);
    let recipients: Vec<Value> = (0..pending)
        .map(|i| json!({"external_id": format!("m-{i}")}))
        .collect();
    let (s, v, _) = api
        .run("reminder", json!({ "recipients": recipients }))
        .await;
    assert_eq!(s, 202, "reminder run: {v}");
    let mut open: std::collections::VecDeque<String> = Default::default();
    let mut processed = true;
    let mut last_ms = first_ms;
    for i in 0..runs {
        let flow = match i {
            0 => "security",
            _ => ["activity", "comments", "digest"][i % 3],
        };
        let (s, v, _) = api.run(flow, json!({"topic": "all"})).await;
        assert_eq!(s, 202, "run {i}: {v}");
        last_ms = now_ms();
        open.push_back(v["id"].as_str().expect("run id").to_string());
        while open.len() >= IN_FLIGHT || (i + 1 == runs && !open.is_empty()) {
            let id = open.pop_front().expect("a run");
            processed &= api
                .wait_processed(&id, Duration::from_secs(600))
                .await
                .is_some();
        }
        if (i + 1) % 10 == 0 {
            eprintln!(
                "  (messages: {} of {runs} runs in {:.0} s)",
                i + 1,
                t.elapsed().as_secs_f64()
            );
        }
    }
    Seeded {
        notifications: runs * users + pending,
        users,
        setup_s,
        seed_s: t.elapsed().as_secs_f64(),
        processed,
        first_ms,
        last_ms,
    }
}

/// A console session's cookie: `herald console add-member`, then the
/// password set through its link.
async fn sign_in(srv: &Server, store: Option<&str>, http: &reqwest::Client) -> String {
    let bin = std::env::var("HERALD_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_herald").into());
    let mut cmd = std::process::Command::new(bin);
    cmd.args([
        "console",
        "add-member",
        "bench@example.com",
        "--project",
        "default",
        "--role",
        "owner",
    ]);
    match store {
        Some(url) => cmd.args(["--store", url]),
        None => cmd.arg("--data-dir").arg(srv.data_dir()),
    };
    let out = cmd
        .env_remove("HERALD_STORE")
        .env("RUST_LOG", "warn")
        .output()
        .expect("herald console add-member");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "add-member: {text}");
    let token = text
        .lines()
        .find_map(|l| l.strip_prefix("sign_in_link: "))
        .and_then(|l| l.rsplit_once("/console/invite/"))
        .map(|(_, t)| t.trim().to_string())
        .unwrap_or_else(|| panic!("no sign-in link: {text}"));
    let pw = "bench password, long enough";
    let r = http
        .post(format!("{}/console/invite/{token}", srv.base))
        .form(&[("password", pw), ("password_confirmation", pw)])
        .send()
        .await
        .expect("set the password");
    assert_eq!(r.status().as_u16(), 303, "set the password");
    r.headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|c| c.strip_prefix("herald_console="))
        .map(|c| c.split(';').next().unwrap_or("").to_string())
        .expect("a session cookie")
}

/// The request duration histogram of one route (GET): sum (s), count, and
/// the cumulative bucket counts by upper bound (s).
#[derive(Default, Clone)]
struct Hist {
    sum: f64,
    count: f64,
    buckets: Vec<(f64, f64)>,
}

async fn hist(http: &reqwest::Client, base: &str, route: &str) -> Hist {
    let text = match http.get(format!("{base}/metrics")).send().await {
        Ok(r) => r.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    };
    let mut h = Hist::default();
    let label = format!("route=\"{route}\"");
    for l in text.lines() {
        if !l.starts_with("herald_http_request_duration_seconds")
            || !l.contains(&label)
            || !l.contains("method=\"GET\"")
        {
            continue;
        }
        let Some(v) = l.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()) else {
            continue;
        };
        if l.starts_with("herald_http_request_duration_seconds_sum") {
            h.sum = v;
        } else if l.starts_with("herald_http_request_duration_seconds_count") {
            h.count = v;
        } else if let Some(le) = l.split("le=\"").nth(1).and_then(|x| x.split('"').next()) {
            h.buckets.push((le.parse().unwrap_or(f64::INFINITY), v));
        }
    }
    h
}

/// The server's side of the requests between two readings: mean ms, and the
/// smallest bucket bound (ms) that holds them all.
fn server_side(a: &Hist, b: &Hist) -> (f64, f64) {
    let n = b.count - a.count;
    let mean = (b.sum - a.sum) / n * 1000.0;
    let at = |h: &Hist, le: f64| {
        h.buckets
            .iter()
            .find(|(x, _)| *x == le)
            .map_or(0.0, |(_, c)| *c)
    };
    let all = b
        .buckets
        .iter()
        .map(|(le, _)| *le)
        .find(|le| at(b, *le) - at(a, *le) >= n)
        .unwrap_or(f64::INFINITY);
    (mean, all * 1000.0)
}

/// One GET: status, body, time to the whole body.
async fn get(http: &reqwest::Client, url: &str, cookie: Option<&str>) -> (u16, String, f64) {
    let t = Instant::now();
    let mut rb = http.get(url);
    if let Some(c) = cookie {
        rb = rb.header("cookie", format!("herald_console={c}"));
    }
    let r = rb.send().await.expect("request");
    let s = r.status().as_u16();
    let body = r.text().await.unwrap_or_default();
    (s, body, t.elapsed().as_secs_f64() * 1000.0)
}

/// The rows of a Messages page.
fn rows(html: &str) -> usize {
    html.matches("<a href=\"/console/notifications/").count()
}

/// The `after` cursor of a Messages page's "Next page" link.
fn next_cursor(html: &str) -> Option<String> {
    let link = html.split("rel=\"next\"").next()?;
    if link.len() == html.len() {
        return None;
    }
    let at = link.rfind("after=")?;
    Some(link[at + 6..].split('"').next()?.to_string())
}

struct Client<'a> {
    http: reqwest::Client,
    srv: &'a Server,
    cookie: String,
    samples: usize,
}

impl Client<'_> {
    /// `samples` requests of `path` (console with the session, else the
    /// Admin API with the keys): client-side stats, the server's own, and
    /// the first answer's item count.
    async fn time(&self, name: &str, console: bool, path: &str) -> Value {
        let route = if console { CONSOLE_ROUTE } else { ADMIN_ROUTE };
        let url = format!("{}{path}", self.srv.base);
        let before = hist(&self.http, &self.srv.base, route).await;
        let (mut ms, mut items, mut errors) = (vec![], None, 0);
        let t0 = Instant::now();
        for i in 0..self.samples {
            if i >= MIN_SAMPLES && t0.elapsed() > QUERY_BUDGET {
                break;
            }
            let (s, body, t) = if console {
                get(&self.http, &url, Some(&self.cookie)).await
            } else {
                let t = Instant::now();
                let r = self
                    .http
                    .get(&url)
                    .header("x-service-api-key", &self.srv.pk)
                    .header("x-service-secret-key", &self.srv.sk)
                    .send()
                    .await
                    .expect("request");
                let s = r.status().as_u16();
                let b = r.text().await.unwrap_or_default();
                (s, b, t.elapsed().as_secs_f64() * 1000.0)
            };
            if s != 200 {
                errors += 1;
                if errors == 1 {
                    eprintln!("messages: {path}: {s} {}", &body[..body.len().min(300)]);
                }
                continue;
            }
            ms.push(t);
            items.get_or_insert_with(|| {
                if console {
                    rows(&body)
                } else {
                    serde_json::from_str::<Value>(&body)
                        .ok()
                        .and_then(|v| v["items"].as_array().map(Vec::len))
                        .unwrap_or(0)
                }
            });
        }
        let after = hist(&self.http, &self.srv.base, route).await;
        let (mean, all) = server_side(&before, &after);
        let st = Stats::of(&mut ms);
        let mut v = st.json();
        let o = v.as_object_mut().expect("object");
        o.insert("query".into(), json!(name));
        o.insert(
            "page".into(),
            json!(if console { "console" } else { "admin" }),
        );
        o.insert("path".into(), json!(path));
        o.insert("samples".into(), json!(st.n));
        o.insert("errors".into(), json!(errors));
        o.insert("items".into(), json!(items));
        o.insert("server_mean_ms".into(), num(mean));
        o.insert("server_all_within_ms".into(), num(all));
        println!(
            "messages  {:<8} {:<28} items={:>4}  p50={:>7.1} ms  p99={:>7.1} ms  max={:>7.1} ms  server mean={:>6.1} ms (all <= {} ms)",
            if console { "console" } else { "admin" },
            name,
            items.map_or("-".into(), |i| i.to_string()),
            st.p50,
            st.p99,
            st.max,
            mean,
            n0(all)
        );
        v
    }
}

/// Seeds `n` notifications on `srv` (its store `store` for the CLI: a
/// PostgreSQL URL, else its data dir), signs in and times the queries.
async fn run(srv: &Server, store: Option<&str>, n: usize, samples: usize) -> Value {
    let api = srv.api();
    let seeded = seed(&api, n).await;
    println!(
        "messages  seeded {} notifications ({} users) in {:.1} s (users and topic {:.1} s), processed={}",
        seeded.notifications, seeded.users, seeded.seed_s, seeded.setup_s, seeded.processed
    );
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let cookie = sign_in(srv, store, &http).await;
    let c = Client {
        http,
        srv,
        cookie,
        samples,
    };
    // The deep page: the cursor of a walk, 1,000 a page, to the middle.
    let t = Instant::now();
    let step = (seeded.notifications / 4).clamp(1, 1000);
    let (mut cursor, mut walked, mut walk_ms) = (None::<String>, 0usize, vec![]);
    while walked < seeded.notifications / 2 {
        let path = match &cursor {
            Some(a) => format!("{CONSOLE_ROUTE}?limit={step}&after={a}"),
            None => format!("{CONSOLE_ROUTE}?limit={step}"),
        };
        let (s, body, ms) = get(&c.http, &format!("{}{path}", srv.base), Some(&c.cookie)).await;
        assert_eq!(s, 200, "walk: {}", &body[..body.len().min(300)]);
        walked += rows(&body);
        walk_ms.push(ms);
        match next_cursor(&body) {
            Some(a) => cursor = Some(a),
            None => break,
        }
    }
    let walk = Stats::of(&mut walk_ms);
    eprintln!(
        "  (messages: walked {walked} in {:.1} s, {step}-row pages p50 {:.0} ms)",
        t.elapsed().as_secs_f64(),
        walk.p50
    );
    let deep = cursor.map(|a| format!("{CONSOLE_ROUTE}?after={a}"));
    // A window in the middle of the seeding, for the Admin API's range.
    let iso = |ms: i64| {
        chrono::DateTime::from_timestamp_millis(ms)
            .expect("time")
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    };
    let span = seeded.last_ms - seeded.first_ms;
    let (lo, hi) = (
        iso(seeded.first_ms + span * 2 / 5),
        iso(seeded.first_ms + span * 3 / 5),
    );
    let who = format!("m-{}", seeded.users / 2);
    let console: Vec<(&str, Option<String>)> = vec![
        ("first page", Some("".into())),
        ("deep page (cursor)", deep),
        ("status=pending", Some("?status=pending".into())),
        ("status=processed", Some("?status=processed".into())),
        ("flow=activity (1/3)", Some("?flow=activity".into())),
        ("flow=security (1%, oldest)", Some("?flow=security".into())),
        ("recipient", Some(format!("?recipient={who}"))),
        ("since=24h", Some("?since=24h".into())),
    ];
    let admin: Vec<(&str, String)> = vec![
        ("first page", "".into()),
        ("status=pending", "?status=pending".into()),
        ("flow=security (1%, oldest)", "?flow_id=security".into()),
        ("recipient", format!("?recipient={who}")),
        (
            "time range (middle fifth)",
            format!(
                "?created_after={}&created_before={}",
                urlencode(&lo),
                urlencode(&hi)
            ),
        ),
    ];
    let mut out = vec![];
    for (name, q) in console {
        if let Some(q) = q {
            let path = match q.strip_prefix('/') {
                Some(_) => q.clone(),
                None => format!("{CONSOLE_ROUTE}{q}"),
            };
            out.push(c.time(name, true, &path).await);
        }
    }
    for (name, q) in admin {
        out.push(
            c.time(
                name,
                false,
                &format!("{ADMIN_ROUTE}?limit=25{}", q.replacen('?', "&", 1)),
            )
            .await,
        );
    }
    // Two hours ahead on a test clock: "last hour" holds nothing.
    let (s, v) = api
        .admin(
            Method::PUT,
            "/admin/v1/project",
            Some(json!({"clock": "test"})),
        )
        .await;
    let (s2, v2) = api
        .admin(
            Method::POST,
            "/admin/v1/project/clock/advance",
            Some(json!({"by": "2h"})),
        )
        .await;
    if s == 200 && s2 == 200 {
        out.push(
            c.time(
                "since=1h (empty window)",
                true,
                &format!("{CONSOLE_ROUTE}?since=1h"),
            )
            .await,
        );
    } else {
        eprintln!("messages: no test clock ({s} {v}; {s2} {v2}): the empty window is not timed");
    }
    let worst = out
        .iter()
        .filter(|r| r["page"] == "console")
        .map(|r| f(&r["p99_ms"]))
        .fold(0.0, f64::max);
    json!({
        "scenario": "messages",
        "notifications": seeded.notifications,
        "users": seeded.users,
        "processed": seeded.processed,
        "setup_s": num(seeded.setup_s),
        "seed_s": num(seeded.seed_s),
        "notifications_per_s": num(seeded.notifications as f64 / seeded.seed_s),
        "walked": walked,
        "walk_page_rows": step,
        "walk_page": walk.json(),
        "samples": samples,
        "queries": out,
        "console_worst_p99_ms": num(worst),
    })
}

fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// Whether every query of a row answered, the console's with the rows
/// expected (the Admin API's time range may be empty at smoke sizes).
pub fn ok(v: &Value) -> bool {
    if v["skipped"].is_string() {
        return true;
    }
    v["processed"] == true
        && v["queries"].as_array().is_some_and(|q| {
            q.iter().all(|r| {
                let rows = r["items"].as_u64() > Some(0);
                let empty = r["query"] == "since=1h (empty window)";
                r["errors"] == 0
                    && r["samples"].as_u64() > Some(0)
                    && (r["page"] == "admin" || rows != empty)
            })
        })
}

/// The report's section: each store's queries.
pub fn table(rows: &[Value], s: &mut String) {
    if rows.is_empty() {
        return;
    }
    s.push_str("Messages page (GET /console/notifications, one request at a time; server mean from /metrics)\n");
    for r in rows {
        if let Some(why) = r["skipped"].as_str() {
            s.push_str(&format!(
                "  {}: skipped, {why}\n",
                r["store"].as_str().unwrap_or("")
            ));
            continue;
        }
        let disk = match r["data_dir_mib"].as_f64() {
            Some(m) => format!("data dir {} MiB", n1(m)),
            None => format!("database {} MiB", n1(f(&r["database_mib"]))),
        };
        s.push_str(&format!(
            "  {} notifications on {}: seeded in {} s ({} /s), {disk}\n",
            n0(f(&r["notifications"])),
            r["store"].as_str().unwrap_or(""),
            n1(f(&r["seed_s"])),
            n0(f(&r["notifications_per_s"])),
        ));
        s.push_str(&format!(
            "    {:<8} {:<28} {:>6} {:>8} {:>8} {:>8} {:>12}\n",
            "page", "query", "items", "p50 ms", "p99 ms", "max ms", "server mean"
        ));
        for q in r["queries"].as_array().into_iter().flatten() {
            s.push_str(&format!(
                "    {:<8} {:<28} {:>6} {:>8} {:>8} {:>8} {:>12}\n",
                q["page"].as_str().unwrap_or(""),
                q["query"].as_str().unwrap_or(""),
                n0(f(&q["items"])),
                n1(f(&q["p50_ms"])),
                n1(f(&q["p99_ms"])),
                n1(f(&q["max_ms"])),
                n1(f(&q["server_mean_ms"])),
            ));
        }
    }
    s.push('\n');
}

/// The target: every console query's p99 (client side, an upper bound on
/// the server's time) within 200 ms at 1,000,000 notifications or more.
pub fn target(rows: &[Value]) -> Target {
    let row = rows
        .iter()
        .find(|r| r["store"] == "sled" && !r["skipped"].is_string());
    let full = row.filter(|r| f(&r["notifications"]) >= 1_000_000.0);
    Target {
        name: "Messages page at 1M notifications: worst query p99",
        measured: row.map_or("not measured".into(), |r| {
            format!(
                "{} ms ({} notifications)",
                n1(f(&r["console_worst_p99_ms"])),
                n0(f(&r["notifications"]))
            )
        }),
        goal: "<= 200 ms",
        met: full.map(|r| f(&r["console_worst_p99_ms"]) <= TARGET_MS),
    }
}
