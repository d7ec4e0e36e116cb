//! Live fan-out to more sockets than one process may hold: the client
//! sockets of a live scenario held by child processes of this harness (the
//! bench binary run again with `--live-clients`), each under this machine's
//! per-process open-files limit, each spreading its sockets over the nodes
//! and over the loopback source addresses as `scenarios::live_on` does. The
//! harness creates the users and the topic, posts the run, and gathers from
//! each child when each of its sockets received the run's frame.
//!
//! The child's protocol, one line each on its stdout: `ready CONNECTED
//! FAILED FIRST_ERROR` once its sockets are open (or given up on), then
//! `times [MICROS, …]` (the wall-clock arrival of each socket's
//! `feed_entry.created`, in microseconds since the epoch) once every open
//! socket has one, or when the harness writes `report` on its stdin. Its
//! stdin closing ends it, and its sockets with it. Wall-clock times are
//! compared across processes of one machine, so they share the clock.

use crate::herald::Server;
use crate::load::{num, Stats};
use crate::scenarios::hold_live_socket;
use crate::soak::{Scrape, BUS_COUNTERS};
use serde_json::{json, Value};
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::{mpsc, Semaphore};

/// Most sockets one client process holds: under the 20,000 open files a
/// process gets here, with room for what else it opens. `--live-per-process
/// N` changes it (the smoke run sets it low, so its tiny live sizes go
/// through client processes too).
const PER_PROCESS: usize = 15_000;
static PER_PROCESS_SET: AtomicUsize = AtomicUsize::new(PER_PROCESS);

/// How long the nodes idle after the connection storm before their memory
/// is read and the run posted.
const SETTLE: Duration = Duration::from_secs(12);

/// Sets how many sockets one client process holds at most.
pub fn set_per_process(n: usize) {
    PER_PROCESS_SET.store(n.max(1), Ordering::Relaxed);
}

fn per_process() -> usize {
    PER_PROCESS_SET.load(Ordering::Relaxed)
}

/// How long the harness waits for every socket's frame after the 202.
const DEADLINE: Duration = Duration::from_secs(120);

/// Whether `c` sockets need client processes of their own (more than one
/// process may hold beside what the harness itself opens).
pub fn needs_processes(c: usize) -> bool {
    c > per_process()
}

fn micros_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

/// The child: `--live-clients URL,URL… FIRST COUNT` holds the sockets of
/// users `live-FIRST…` (user i on the i-th URL modulo their number).
pub async fn child_main() {
    let args: Vec<String> = std::env::args().collect();
    let at = args
        .iter()
        .position(|a| a == "--live-clients")
        .expect("--live-clients");
    let (Some(urls), Some(first), Some(count)) =
        (args.get(at + 1), args.get(at + 2), args.get(at + 3))
    else {
        eprintln!("usage: --live-clients URL,URL… FIRST COUNT");
        std::process::exit(2);
    };
    let urls: Vec<String> = urls.split(',').map(str::to_string).collect();
    let first: usize = first.parse().expect("FIRST");
    let count: usize = count.parse().expect("COUNT");
    crate::scenarios::raise_open_files(count as u64 + 1000);

    let (ready_tx, mut ready_rx) = mpsc::unbounded_channel::<Result<(), String>>();
    let (got_tx, mut got_rx) = mpsc::unbounded_channel::<u64>();
    let sem = Arc::new(Semaphore::new(256));
    let mut sockets = tokio::task::JoinSet::new();
    for i in first..first + count {
        let (url, ready_tx, got_tx, sem) = (
            urls[i % urls.len()].clone(),
            ready_tx.clone(),
            got_tx.clone(),
            sem.clone(),
        );
        // Held open until the harness closes this process's stdin.
        sockets.spawn(hold_live_socket(url, i, sem, ready_tx, got_tx, |_| {
            micros_now()
        }));
    }
    drop((ready_tx, got_tx));
    let (mut connected, mut failed, mut first_error) = (0usize, 0usize, None::<String>);
    while connected + failed < count {
        match ready_rx.recv().await {
            Some(Ok(())) => connected += 1,
            Some(Err(e)) => {
                failed += 1;
                first_error.get_or_insert(e);
            }
            None => break,
        }
    }
    let error = json!(first_error.unwrap_or_default()).to_string();
    println!("ready {connected} {failed} {error}");

    let mut stdin = BufReader::new(tokio::io::stdin()).lines();
    let mut times = Vec::with_capacity(connected);
    let mut reported = false;
    loop {
        tokio::select! {
            t = got_rx.recv(), if times.len() < connected => {
                if let Some(t) = t { times.push(t) }
                if times.len() == connected && !reported {
                    println!("times {}", json!(times));
                    reported = true;
                }
            }
            line = stdin.next_line() => match line {
                Ok(Some(l)) if l.trim() == "report" && !reported => {
                    println!("times {}", json!(times));
                    reported = true;
                }
                Ok(Some(_)) => {}
                // The harness is done with us: the sockets close on exit.
                _ => break,
            },
        }
    }
    sockets.abort_all();
}

/// One client process as the harness holds it.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl Client {
    fn start(urls: &[String], first: usize, count: usize) -> Client {
        let exe = std::env::current_exe().expect("the bench binary's path");
        let mut child = Command::new(exe)
            .args([
                "--live-clients",
                &urls.join(","),
                &first.to_string(),
                &count.to_string(),
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start a client process");
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        Client {
            child,
            stdin,
            lines,
        }
    }

    /// The next line starting with `word`, without it (None: ended or timed out).
    async fn line(&mut self, word: &str, until: Instant) -> Option<String> {
        loop {
            let l = tokio::time::timeout_at(until.into(), self.lines.next_line()).await;
            match l {
                Ok(Ok(Some(l))) => {
                    if let Some(rest) = l.strip_prefix(word) {
                        return Some(rest.trim().to_string());
                    }
                }
                _ => return None,
            }
        }
    }

    async fn say(&mut self, what: &str) {
        if let Some(s) = self.stdin.as_mut() {
            let _ = s.write_all(format!("{what}\n").as_bytes()).await;
            let _ = s.flush().await;
        }
    }

    async fn end(mut self) {
        drop(self.stdin.take());
        if tokio::time::timeout(Duration::from_secs(30), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

/// Live fan-out on `nodes` with the sockets held by client processes of
/// their own (`c` over what one process may hold): the figures of
/// `live_on`, and each node's memory per idle socket.
pub async fn live_spread(nodes: &[Server], c: usize) -> Value {
    let (api, urls) = crate::scenarios::live_setup(nodes, c).await;
    let rss_before: Vec<u64> = nodes.iter().map(Server::rss_kib).collect();
    let kib_allocated =
        |s: Vec<Scrape>| s.iter().map(|s| s.allocated / 1024.0).collect::<Vec<f64>>();
    let alloc_before = kib_allocated(scrapes(nodes).await);
    let processes = c.div_ceil(per_process());
    let per = c.div_ceil(processes);
    let t_open = Instant::now();
    let mut clients: Vec<Client> = (0..processes)
        .map(|p| Client::start(&urls, p * per, per.min(c - p * per)))
        .collect();
    let (mut connected, mut first_error) = (0usize, None::<String>);
    let until = Instant::now() + Duration::from_secs(600);
    for cl in clients.iter_mut() {
        match cl.line("ready", until).await {
            Some(rest) => {
                let mut it = rest.splitn(3, ' ');
                connected += it.next().and_then(|n| n.parse::<usize>().ok()).unwrap_or(0);
                let _failed = it.next();
                let e: String = it
                    .next()
                    .and_then(|e| serde_json::from_str(e).ok())
                    .unwrap_or_default();
                if !e.is_empty() {
                    first_error.get_or_insert(e);
                }
            }
            None => {
                first_error.get_or_insert("a client process did not get ready".into());
            }
        }
    }
    let open_s = t_open.elapsed().as_secs_f64();
    eprintln!(
        "  (live {c}: {connected} sockets open in {open_s:.1} s over {processes} client processes, run in {} s)",
        SETTLE.as_secs()
    );
    // Let the nodes settle after the connection storm before reading memory:
    // the allocator hands freed pages back to the system after its decay
    // time (jemalloc's default is 10 s), and idle sockets are a steady state.
    tokio::time::sleep(SETTLE).await;
    let rss_sockets: Vec<u64> = nodes.iter().map(Server::rss_kib).collect();
    // Threads hold resident memory the allocator does not count (stacks).
    let threads: Vec<u64> = nodes
        .iter()
        .map(|n| crate::herald::proc_status_kib(n.pid(), "Threads:"))
        .collect();
    let settled = scrapes(nodes).await;
    let bus0 = bus_sum(&settled);
    let alloc_sockets = kib_allocated(settled);
    let cpu0: f64 = nodes.iter().map(Server::cpu_ms).sum();
    let (s, run, accept) = api.run("live", json!({"topic": "everyone"})).await;
    let t202 = micros_now();
    assert_eq!(s, 202, "run: {run}");
    let deadline = Instant::now() + DEADLINE;
    let mut lat = Vec::with_capacity(connected);
    for cl in clients.iter_mut() {
        let times = match cl.line("times", deadline).await {
            Some(t) => Some(t),
            None => {
                // Past the deadline: what this process has so far.
                cl.say("report").await;
                cl.line("times", Instant::now() + Duration::from_secs(10))
                    .await
            }
        };
        let times: Vec<u64> = times
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        lat.extend(
            times
                .iter()
                .map(|&t| t.saturating_sub(t202) as f64 / 1000.0),
        );
    }
    let cpu = nodes.iter().map(Server::cpu_ms).sum::<f64>() - cpu0;
    let bus_end = bus_sum(&scrapes(nodes).await);
    for cl in clients {
        cl.end().await;
    }
    let received = lat.len();
    let stats = Stats::of(&mut lat);
    // Each node's memory per socket it held (user i on node i mod n): what
    // the system counts resident, and what the allocator holds (the
    // difference is pages the allocator keeps, and threads' stacks).
    let per_socket = |after: &[f64], before: &[f64]| -> Vec<Value> {
        after
            .iter()
            .zip(before)
            .enumerate()
            .map(|(i, (a, b))| {
                let held = (0..c).filter(|u| u % nodes.len() == i).count().max(1);
                num((a - b).max(0.0) / held as f64)
            })
            .collect()
    };
    let kib = |v: &[u64]| v.iter().map(|&k| k as f64).collect::<Vec<f64>>();
    let per_node = per_socket(&kib(&rss_sockets), &kib(&rss_before));
    let alloc_per_node = per_socket(&alloc_sockets, &alloc_before);
    let worst = per_node
        .iter()
        .filter_map(Value::as_f64)
        .fold(0.0, f64::max);
    let mut v = stats.json();
    let o = v.as_object_mut().expect("object");
    o.insert("scenario".into(), json!("live"));
    o.insert("nodes".into(), json!(nodes.len()));
    o.insert("sockets".into(), json!(c));
    o.insert("connected".into(), json!(connected));
    o.insert("received".into(), json!(received));
    o.insert("client_processes".into(), json!(processes));
    o.insert("open_s".into(), num(open_s));
    o.insert("accept_ms".into(), num(accept.as_secs_f64() * 1000.0));
    o.insert(
        "events_per_s".into(),
        num(received as f64 / (stats.max / 1000.0)),
    );
    o.insert("rss_per_socket_kib".into(), num(worst));
    o.insert("rss_per_socket_kib_by_node".into(), json!(per_node));
    o.insert("threads_by_node".into(), json!(threads));
    o.insert(
        "allocated_per_socket_kib_by_node".into(),
        json!(alloc_per_node),
    );
    o.insert(
        "server_cpu_us_per_event".into(),
        num(cpu * 1000.0 / received.max(1) as f64),
    );
    for ((name, end), start) in BUS_COUNTERS.iter().zip(bus_end).zip(bus0) {
        o.insert(format!("bus_{name}"), num(end - start));
    }
    if let Some(e) = first_error {
        o.insert("first_error".into(), json!(e));
    }
    v
}

/// Each node's counters from `/metrics`.
async fn scrapes(nodes: &[Server]) -> Vec<Scrape> {
    let http = reqwest::Client::new();
    let mut out = Vec::with_capacity(nodes.len());
    for n in nodes {
        out.push(crate::soak::scrape(&http, &n.base).await);
    }
    out
}

/// The bus's counters (`soak::BUS_COUNTERS`: frames dropped on the way to
/// the bus, and the actors' reads of the event log for frames it did not
/// bring), summed over the nodes.
fn bus_sum(s: &[Scrape]) -> [f64; 3] {
    let mut sum = [0.0; 3];
    for sc in s {
        for (t, v) in sum.iter_mut().zip(sc.bus) {
            *t += v;
        }
    }
    sum
}
