//! The data lifecycle task: every tick, each project's purge past its
//! retention windows (`retention`) in project time (a test clock's, when the
//! project has one), then a step of every erasure still
//! running (they resume this way after a restart too).
//!
//! Work goes in bounded batches on the blocking pool, one at a time, with a
//! pause between batches: the purge is background work and yields to live
//! traffic rather than competing with it for the store. Its pace adapts
//! (`Pace`): each batch is sized to take about `STEP_TARGET` (one atomic
//! commit: on the embedded store, live writes wait behind it), and the pause
//! after it keeps the purge to a share of one core, a larger share while the
//! project's backlog is older than its window allows. Its progress shows in
//! `/metrics`: records purged by kind, bytes reclaimed (an estimate from the
//! records' sizes), and the age of the oldest notification kept.

use super::engine::Engine;
use crate::error::{ErrorCode, Result};
use crate::model::Timestamp;
use crate::storage::{Erasure, ErasureStatus, PurgeCutoffs, PurgeReport};
use std::time::Duration;
use uuid::Uuid;

/// Seconds between passes; `HERALD_RETENTION_TICK` overrides it (tests use 1).
const DEFAULT_TICK_SECS: u64 = 5;

/// Records of each kind one batch removes at most; `HERALD_PURGE_BATCH`
/// overrides it (tests make it small to see erasures span several steps),
/// and then the purge's batches keep that size too.
const DEFAULT_BATCH: usize = 256;

/// The bounds of an adaptive purge batch.
const MIN_BATCH: usize = 32;
const MAX_BATCH: usize = 4096;

/// How much CPU time one purge batch should take: enough that its fixed
/// costs (the scan's start, the locks, the commit) are spread over several
/// records, little enough that live writes waiting behind it hardly notice.
/// A batch holds its recipients' feed locks while it reads and commits, and
/// on the embedded store its commit is one sled batch, which excludes every
/// other write while it applies. Measured with `--purge-cost 20000`: 2 ms
/// batches cost about 10% more CPU per notification than 10 ms ones (68
/// against 62 µs), for a fifth of the wait.
const STEP_TARGET: Duration = Duration::from_millis(2);

/// The wall time a batch should take: on the embedded store a few
/// `STEP_TARGET`s (its commit excludes every other write while it applies);
/// on PostgreSQL, where a batch's time is mostly its wait for a busy
/// database and other transactions go on beside it (only its recipients'
/// feeds wait), long: there a batch's statements cost about the same for 32
/// records as for 1,000, so a short target shrank batches to `MIN_BATCH`
/// under load, and the purge removed a fraction of what the soak added
/// (docs/PERFORMANCE.md). The pause after a batch still scales with its
/// wall time.
const WALL_TARGET: Duration = Duration::from_millis(8);
const WALL_TARGET_SHARED: Duration = Duration::from_secs(2);
/// On PostgreSQL a batch's own CPU time (decoding the records it removes)
/// holds up nobody either: its target is the database's, not 2 ms.
const STEP_TARGET_SHARED: Duration = Duration::from_millis(50);

/// The share of one core the purge may use: its CPU budget per second of
/// wall time, and a larger one while it catches up (see `Pace::after`).
const DUTY: f64 = 0.4;
const DUTY_CATCHING_UP: f64 = 0.7;

/// The pause between two erasure steps.
const BATCH_PAUSE: Duration = Duration::from_millis(20);

/// CPU time this thread has used so far.
fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        t.tv_sec.max(0) as u64,
        t.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// The purge's pace: the batch size, adapted to the CPU time the last
/// batches took (under half of `STEP_TARGET` doubles the next, over twice
/// halves it, within `MIN_BATCH..=MAX_BATCH`; a batch that took over twice
/// its wall target, waiting on a loaded machine or on PostgreSQL, halves
/// it too, and one over it does not grow), and the pause after each batch, which holds the purge to
/// `DUTY` of one core (`DUTY_CATCHING_UP` while the backlog is old).
/// Measured in CPU time, so the pace a budget allows does not fall when
/// other work slows the machine; a batch counts at least a quarter of its
/// wall time, so a purge waiting on a database still pauses in proportion.
struct Pace {
    batch: usize,
    /// `HERALD_PURGE_BATCH` given: the batch stays that size.
    fixed: bool,
    /// `WALL_TARGET`, or `WALL_TARGET_SHARED` on a shared store.
    wall_target: Duration,
    /// `STEP_TARGET`, or `STEP_TARGET_SHARED` on a shared store.
    cpu_target: Duration,
}

impl Pace {
    fn new(shared: bool) -> Pace {
        let (wall_target, cpu_target) = if shared {
            (WALL_TARGET_SHARED, STEP_TARGET_SHARED)
        } else {
            (WALL_TARGET, STEP_TARGET)
        };
        let fixed = std::env::var("HERALD_PURGE_BATCH").is_ok();
        Pace {
            batch: if fixed { batch_size() } else { DEFAULT_BATCH },
            fixed,
            wall_target,
            cpu_target,
        }
    }

    /// Adapts to a batch that took `cpu` (and `wall`); the pause to make
    /// before the next.
    fn after(&mut self, cpu: Duration, wall: Duration, catching_up: bool) -> Duration {
        if !self.fixed {
            if cpu > self.cpu_target * 2 || wall > self.wall_target * 2 {
                self.batch = (self.batch / 2).max(MIN_BATCH);
            } else if cpu < self.cpu_target / 2 && wall < self.wall_target {
                self.batch = (self.batch * 2).min(MAX_BATCH);
            }
        }
        let duty = if catching_up { DUTY_CATCHING_UP } else { DUTY };
        cpu.max(wall / 4)
            .mul_f64((1.0 - duty) / duty)
            .clamp(Duration::from_millis(1), Duration::from_millis(500))
    }
}

/// Steps an erasure request works through itself before answering 202.
pub const INLINE_ERASURE_STEPS: usize = 4;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// Records per batch (`DEFAULT_BATCH`, or `HERALD_PURGE_BATCH`).
pub fn batch_size() -> usize {
    env_or("HERALD_PURGE_BATCH", DEFAULT_BATCH).max(1)
}

fn record(r: &PurgeReport) {
    for (kind, n) in [
        ("notifications", r.notifications),
        ("deliveries", r.deliveries),
        ("feed_entries", r.feed_entries),
        ("events", r.events),
        ("runs", r.runs),
        ("throttle_counters", r.throttle_counters),
        ("batches", r.batches),
    ] {
        if n > 0 {
            metrics::counter!("herald_retention_purged_total", "kind" => kind).increment(n);
        }
    }
    if r.bytes > 0 {
        metrics::counter!("herald_retention_reclaimed_bytes_total").increment(r.bytes);
    }
}

impl Engine {
    /// Starts the lifecycle task on the first engine arbiter.
    pub(crate) fn start_lifecycle(&self) {
        let engine = self.clone();
        let tick = Duration::from_secs(env_or("HERALD_RETENTION_TICK", DEFAULT_TICK_SECS).max(1));
        self.arbiter(0).spawn(async move {
            let batch = batch_size();
            let mut pace = Pace::new(engine.storage().shares_work());
            while engine.is_running() {
                tokio::time::sleep(tick).await;
                // here too on a node that shares no work (`cluster`)
                metrics::gauge!("herald_node_info", "node" => engine.node_id().to_string())
                    .set(1.0);
                if let Err(e) = engine.purge_pass(&mut pace).await {
                    tracing::warn!(error = %e, "retention purge failed; retrying next pass");
                }
                if let Err(e) = engine.erasure_pass(batch).await {
                    tracing::warn!(error = %e, "erasure step failed; retrying next pass");
                }
            }
        });
    }

    /// One purge pass over every project, in batches until each is done.
    async fn purge_pass(&self, pace: &mut Pace) -> Result<()> {
        let projects = self.run(|s| s.projects()).await?;
        let mut oldest_ms = 0i64;
        for p in projects {
            let r = p.retention.effective();
            // Project time: a project on a test clock purges by its clock,
            // so advancing it past a window makes what is older eligible.
            // Feed entries and live-feed events have no project time of
            // their own: their window counts in real time (those of purged
            // notifications go with them).
            let now = self.project_now(&p.id);
            let cut = PurgeCutoffs {
                notifications: now.plus_millis(-r.notifications.millis()),
                feed: Timestamp::now().plus_millis(-r.feed.millis()),
                now,
                test_clock: p.test_clock.is_some(),
            };
            let id = p.id;
            // Catching up: the oldest notification kept is past its window
            // by more than a quarter of the window (30 s at least), so a backlog
            // (a window just shortened, a purge that fell behind) is
            // worked off faster than the traffic adds to it.
            let slack = (r.notifications.millis() / 4).max(30_000);
            let oldest = self.run(move |s| s.oldest_notification(&id)).await;
            let catching_up = matches!(
                oldest,
                Ok(Some(t)) if t.millis() < cut.notifications.millis() - slack
            );
            // The gauge before this project's purge too: a purge that cannot
            // keep pace never ends its pass, and the gauge is what shows it.
            if let Ok(Some(t)) = oldest {
                let age = oldest_ms.max(Timestamp::now().millis() - t.millis());
                metrics::gauge!("herald_retention_oldest_record_age_seconds").set(age as f64 / 1e3);
            }
            // One project's failure (a project deleted meanwhile, a disk
            // error) leaves the others' purge to go on.
            if let Err(e) = self.purge_project(id, cut, pace, catching_up).await {
                tracing::warn!(project = %id, error = %e, "retention purge failed; retrying next pass");
            }
            if let Ok(Some(t)) = self.run(move |s| s.oldest_notification(&id)).await {
                oldest_ms = oldest_ms.max(Timestamp::now().millis() - t.millis());
            }
        }
        metrics::gauge!("herald_retention_oldest_record_age_seconds").set(oldest_ms as f64 / 1e3);
        Ok(())
    }

    /// A project's purge, in batches until it is done.
    async fn purge_project(
        &self, id: Uuid, cut: PurgeCutoffs, pace: &mut Pace, catching_up: bool,
    ) -> Result<()> {
        while self.is_running() {
            let batch = pace.batch;
            let t = std::time::Instant::now();
            let (rep, cpu) = self
                .run(move |s| {
                    let c = thread_cpu();
                    let rep = s.purge(&id, &cut, batch)?;
                    Ok((rep, thread_cpu().saturating_sub(c)))
                })
                .await?;
            let pause = pace.after(cpu, t.elapsed(), catching_up);
            record(&rep);
            if !rep.more {
                break;
            }
            tokio::time::sleep(pause).await;
        }
        Ok(())
    }

    /// One step of every erasure still running.
    async fn erasure_pass(&self, batch: usize) -> Result<()> {
        let running = self.run(|s| s.running_erasures()).await?;
        metrics::gauge!("herald_erasures_running").set(running.len() as f64);
        for e in running {
            let (p, id) = (e.project, e.id);
            if let Err(err) = self.run(move |s| s.erase_step(&p, &id, batch)).await {
                tracing::warn!(erasure = %id, error = %err, "erasure step failed; retrying next pass");
            }
            tokio::time::sleep(BATCH_PAUSE).await;
        }
        Ok(())
    }

    /// Deletes a user and erases their notifications, deliveries, feed
    /// entries and events: the erasure is durable before the first step, and
    /// up to `INLINE_ERASURE_STEPS` steps run here; what is left the
    /// lifecycle task finishes (after a restart too).
    pub async fn erase_user(&self, project: Uuid, ext: String) -> Result<Erasure> {
        let mut e = self.run(move |s| s.start_erasure(&project, &ext)).await?;
        let batch = batch_size();
        for _ in 0..INLINE_ERASURE_STEPS {
            if e.status == ErasureStatus::Complete {
                break;
            }
            let id = e.id;
            e = self
                .run(move |s| s.erase_step(&project, &id, batch))
                .await?;
        }
        Ok(e)
    }

    /// `erase_user` for many external ids (a bulk delete with erasure): each
    /// user's deletion and erasure record is its own durable commit, made
    /// before the answer; per external id, its erasure, or `None` when it
    /// names no user (an id listed twice shares the erasure of its first
    /// place). Up to `INLINE_ERASURE_STEPS` steps run here in all, the first
    /// erasures first; what is left the lifecycle task finishes.
    pub async fn erase_users(
        &self, project: Uuid, exts: Vec<String>,
    ) -> Result<Vec<Option<Erasure>>> {
        let mut jobs = self
            .run(move |s| {
                let mut first: std::collections::HashMap<&str, Option<Erasure>> =
                    Default::default();
                let mut out = Vec::with_capacity(exts.len());
                for ext in &exts {
                    if let Some(e) = first.get(ext.as_str()) {
                        out.push(e.clone());
                        continue;
                    }
                    let e = match s.start_erasure(&project, ext) {
                        Ok(e) => Some(e),
                        Err(e) if e.code == ErrorCode::NotFound => None,
                        Err(e) => return Err(e),
                    };
                    first.insert(ext, e.clone());
                    out.push(e);
                }
                Ok(out)
            })
            .await?;
        let batch = batch_size();
        let mut steps = 0;
        let mut done: std::collections::HashMap<Uuid, Erasure> = Default::default();
        for e in jobs.iter().flatten() {
            let mut e = done.get(&e.id).cloned().unwrap_or_else(|| e.clone());
            while e.status != ErasureStatus::Complete && steps < INLINE_ERASURE_STEPS {
                let id = e.id;
                e = self
                    .run(move |s| s.erase_step(&project, &id, batch))
                    .await?;
                steps += 1;
            }
            done.insert(e.id, e);
        }
        for e in jobs.iter_mut().flatten() {
            if let Some(d) = done.get(&e.id) {
                *e = d.clone();
            }
        }
        Ok(jobs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pace(shared: bool) -> Pace {
        let p = Pace::new(shared);
        Pace {
            batch: DEFAULT_BATCH,
            fixed: false,
            ..p
        }
    }

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_batch_waiting_on_the_embedded_store_shrinks() {
        let mut p = pace(false);
        p.after(MS / 2, 20 * MS, false);
        assert_eq!(p.batch, DEFAULT_BATCH / 2);
        p.after(MS / 2, 5 * MS, false);
        assert_eq!(p.batch, DEFAULT_BATCH, "quick again: it grows back");
    }

    #[test]
    fn on_a_database_a_batch_grows_until_it_takes_the_wall_target() {
        let mut p = pace(true);
        // the process's own time is little (decoding what goes): the
        // database does the work
        for _ in 0..3 {
            p.after(10 * MS, 400 * MS, false);
        }
        assert_eq!(p.batch, DEFAULT_BATCH * 8);
        p.after(MS / 2, 3000 * MS, false);
        assert_eq!(p.batch, DEFAULT_BATCH * 8, "within the target: kept");
        p.after(MS / 2, 5000 * MS, false);
        assert_eq!(p.batch, DEFAULT_BATCH * 4, "over twice the target: halved");
        for _ in 0..10 {
            p.after(MS / 2, MS, false);
        }
        assert_eq!(p.batch, MAX_BATCH);
    }

    #[test]
    fn the_pause_keeps_the_purge_to_its_share() {
        let mut p = pace(true);
        // 40% of a core: 60 ms of pause after 40 ms of work (counted as a
        // quarter of its 160 ms on the database)
        let pause = p.after(MS, 160 * MS, false);
        assert_eq!(pause, 60 * MS);
        let pause = p.after(40 * MS, 160 * MS, true);
        assert!(pause < 20 * MS, "{pause:?}");
    }
}
