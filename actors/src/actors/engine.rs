//! `Engine`: the cheap-to-clone handle the HTTP layer uses to reach the actors.

use super::flow_run::FlowRunActor;
use super::supervisor::{DeliverySupervisor, Dispatch};
use super::user::UserActor;
use crate::egress::EgressPolicy;
use crate::error::{Error, Result};
use crate::model::ChannelType;
use crate::storage::{QueueItem, Storage, UserFrames};
use actix::prelude::*;
use dashmap::DashMap;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use uuid::Uuid;

#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Engine threads; actors are spread over them by id.
    pub threads: usize,
    /// Concurrent provider calls per channel type.
    pub concurrency: usize,
    /// Concurrent provider calls per channel type of one project (see
    /// `DEFAULT_PROJECT_INFLIGHT`).
    pub project_inflight: usize,
    /// Test hook: the channel types whose actor panics on its first attempt, to
    /// exercise supervision (`HERALD_FAULT_PANIC_ONCE=chat`).
    pub panic_once: Vec<ChannelType>,
    /// Which destinations providers may send to (default: public addresses only).
    pub egress: EgressPolicy,
    /// How long an outbound event is retried before its endpoint is disabled
    /// (`crate::events::DEFAULT_RETRY_HORIZON`; shorter in tests).
    pub event_retry_horizon: std::time::Duration,
    /// Shared work (`super::cluster`): how often a node looks for work it
    /// was not told of (a dead node's, handed back, due later), at least.
    pub claim_poll: std::time::Duration,
    /// Where the crash journal lives (`super::poison`): the data directory.
    /// None: no journal, a delivery that kills the process is retried at
    /// every start.
    pub journal_dir: Option<std::path::PathBuf>,
}

/// Provider calls in flight per channel type, all projects together: four
/// projects' full shares, so a project whose endpoint hangs (holding its whole
/// share) leaves three quarters to the others. An attempt in flight is a small
/// future and, at most, one connection.
pub const DEFAULT_CONCURRENCY: usize = 1024;

/// Provider calls in flight per channel type of one project: as many as the
/// whole channel type had before projects got shares, so a project alone loses
/// no throughput. Measured: with 64, one project's 10,000-recipient webhook
/// pipeline fell from about 30,000 to 20,000 deliveries/s (each attempt holds
/// its slot for the sink's answer and the outcome's commit); with 256 it is
/// back within noise of the unshared engine.
pub const DEFAULT_PROJECT_INFLIGHT: usize = 256;

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            threads: 2,
            concurrency: DEFAULT_CONCURRENCY,
            project_inflight: DEFAULT_PROJECT_INFLIGHT,
            panic_once: vec![],
            egress: EgressPolicy::default(),
            event_retry_horizon: crate::events::DEFAULT_RETRY_HORIZON,
            claim_poll: super::cluster::DEFAULT_CLAIM_POLL,
            journal_dir: None,
        }
    }
}

pub(crate) struct Inner {
    pub storage: Arc<dyn Storage>,
    pub config: EngineConfig,
    pub arbiters: Vec<ArbiterHandle>,
    pub users: DashMap<(Uuid, Uuid), Addr<UserActor>>,
    pub runs: DashMap<Uuid, Addr<FlowRunActor>>,
    pub supervisor: OnceLock<Addr<DeliverySupervisor>>,
    pub transports: crate::providers::Transports,
    pub egress: Arc<EgressPolicy>,
    pub running: AtomicBool,
    pub panicked: DashMap<ChannelType, ()>,
    /// Per project: recipients it may have being staged (rendered) at once
    /// (see `Engine::staging_permit`).
    pub staging: DashMap<Uuid, Arc<tokio::sync::Semaphore>>,
    /// Project time: the test clocks and the deliveries parked on them.
    pub clocks: crate::delivery::clock::Clocks,
    /// The cluster bus, when this node is one of a cluster (`crate::bus`).
    pub bus: OnceLock<crate::bus::Bus>,
    /// Deliveries in progress, for the crash rule (`super::poison`).
    pub journal: Option<super::poison::Journal>,
}

/// Recipients one project may have being staged at once, by accepted runs
/// (their inline recipients) and topic expansions (a chunk's worth each):
/// two runs of the 1,000-recipient maximum, or four expansions, or hundreds of
/// small runs. Staging renders templates and is CPU work on the blocking pool
/// that every project shares; bounding each project's share keeps one
/// project's huge runs from taking all of it (within the project, its runs
/// wait their turn). A semaphore weighted by recipients rather than a count of
/// runs: the small runs the REST benchmark fires 64 at a time fit in it whole.
pub const PROJECT_STAGING_UNITS: usize = 2000;

#[derive(Clone)]
pub struct Engine {
    pub(crate) inner: Arc<Inner>,
}

/// The crash rule (`super::poison`), for the delivery actors.
impl Engine {
    pub(crate) fn poisoned(&self, q: &crate::storage::QueueItem) -> bool {
        self.inner
            .journal
            .as_ref()
            .is_some_and(|j| j.poisoned(&q.delivery_id))
    }

    pub(crate) fn journal_begin(&self, items: &[crate::storage::QueueItem]) {
        if let Some(j) = &self.inner.journal {
            j.begin(items.iter().map(|q| q.delivery_id));
        }
    }

    pub(crate) fn journal_end(&self, items: &[crate::storage::QueueItem]) {
        if let Some(j) = &self.inner.journal {
            j.end(items.iter().map(|q| q.delivery_id));
        }
    }
}

/// Takes `key` out of one of the engine's maps of actors if it still holds
/// `me`, called by an actor from its `stopped` with its own address. By
/// identity, not by `Addr::connected()`: actix closes a mailbox when the
/// actor's context is dropped, after `stopped` returns, so an entry removed
/// only once it no longer connected was never removed (every run left its
/// entry and its mailbox behind: about 5 MiB a minute at 400 runs/s). A newer
/// actor under the same key stays.
pub(crate) fn forget_actor<K, A>(map: &DashMap<K, Addr<A>>, key: &K, me: &Addr<A>)
where
    K: Eq + std::hash::Hash,
    A: Actor,
{
    map.remove_if(key, |_, a| a == me);
}

fn shard(id: &Uuid, n: usize) -> usize {
    let b = id.as_bytes();
    (u64::from_le_bytes([b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]]) as usize) % n.max(1)
}

impl Engine {
    /// Starts the engine inside the current actix system: its arbiters, the
    /// delivery supervisor (which reloads every queued delivery) and an actor for
    /// every run not yet processed.
    pub fn start(storage: Arc<dyn Storage>, config: EngineConfig) -> Result<Engine> {
        let arbiters = (0..config.threads.max(1))
            .map(|_| Arbiter::new().handle())
            .collect();
        let egress = Arc::new(config.egress.clone());
        let http = crate::egress::client_builder(&egress)
            // Keep a connection per concurrent attempt: with fewer, every attempt
            // beyond the idle limit opened a new connection (a third of the
            // webhook path's time in profiles).
            .pool_max_idle_per_host(config.project_inflight.max(64))
            .build()
            .map_err(|e| Error::internal(format!("http client: {e}")))?;
        let journal = match &config.journal_dir {
            Some(dir) => Some(
                super::poison::Journal::open(dir)
                    .map_err(|e| Error::internal(format!("crash journal: {e}")))?,
            ),
            None => None,
        };
        let engine = Engine {
            inner: Arc::new(Inner {
                storage,
                config,
                arbiters,
                users: DashMap::new(),
                runs: DashMap::new(),
                supervisor: OnceLock::new(),
                transports: crate::providers::transports(&http, &egress),
                egress,
                running: AtomicBool::new(true),
                panicked: DashMap::new(),
                staging: DashMap::new(),
                clocks: Default::default(),
                bus: OnceLock::new(),
                journal,
            }),
        };
        // Before the delivery actors reload the queue: they park on these.
        engine.inner.clocks.load(&engine.inner.storage.projects()?);
        let sup = DeliverySupervisor::start_all(engine.clone());
        let _ = engine.inner.supervisor.set(sup);
        super::events::start(engine.clone());
        if engine.inner.storage.shares_work() {
            // the runs to expand are claimed, not all taken (`cluster`)
            engine.start_cluster();
        } else {
            for (project, run) in engine.inner.storage.active_runs()? {
                engine.start_run(project, run, vec![]);
            }
        }
        engine.start_lifecycle();
        Ok(engine)
    }

    /// The project's time: its test clock's, else real time.
    pub fn project_now(&self, project: &Uuid) -> crate::model::Timestamp {
        self.inner.clocks.now(project)
    }

    /// The storage backend the engine persists through.
    pub fn storage(&self) -> &Arc<dyn Storage> {
        &self.inner.storage
    }

    /// The egress policy in force (config-time checks use the same one).
    pub fn egress(&self) -> &Arc<EgressPolicy> {
        &self.inner.egress
    }

    pub fn is_running(&self) -> bool {
        self.inner.running.load(Ordering::SeqCst)
    }

    pub(crate) fn arbiter_for(&self, id: &Uuid) -> &ArbiterHandle {
        &self.inner.arbiters[shard(id, self.inner.arbiters.len())]
    }

    pub(crate) fn arbiter(&self, i: usize) -> &ArbiterHandle {
        &self.inner.arbiters[i % self.inner.arbiters.len()]
    }

    /// Hands queued deliveries to their channel actors.
    pub fn dispatch(&self, items: Vec<QueueItem>) {
        if items.is_empty() {
            return;
        }
        let mut by_type: HashMap<ChannelType, Vec<QueueItem>> = HashMap::new();
        for q in items {
            by_type.entry(q.channel_type).or_default().push(q);
        }
        if let Some(sup) = self.inner.supervisor.get() {
            for (_, v) in by_type {
                sup.do_send(Dispatch(v));
            }
        }
    }

    /// Waits until `project` may stage `recipients` more recipients (at most
    /// `PROJECT_STAGING_UNITS` at once; a larger number counts as that), and
    /// returns the permit that gives them back when dropped. Other projects
    /// never wait for it.
    pub async fn staging_permit(
        &self,
        project: Uuid,
        recipients: usize,
    ) -> tokio::sync::OwnedSemaphorePermit {
        let sem = self
            .inner
            .staging
            .entry(project)
            .or_insert_with(|| Arc::new(tokio::sync::Semaphore::new(PROJECT_STAGING_UNITS)))
            .clone();
        let n = recipients.clamp(1, PROJECT_STAGING_UNITS) as u32;
        sem.acquire_many_owned(n)
            .await
            .expect("the staging semaphore is never closed")
    }

    /// Starts the actor of an accepted (durable) run; it dispatches `queued`.
    /// Its address is in `runs` before it starts, so it is there before the
    /// actor can stop and take it out (a run processed at acceptance stops
    /// within its first round trip to the store).
    pub fn start_run(
        &self,
        project: Uuid,
        run: Uuid,
        queued: Vec<QueueItem>,
    ) -> Addr<FlowRunActor> {
        let engine = self.clone();
        FlowRunActor::start_in_arbiter(self.arbiter_for(&run), move |ctx| {
            engine.inner.runs.insert(run, ctx.address());
            FlowRunActor::new(engine, project, run, queued)
        })
    }

    /// Actors running now: flow runs' and users' (the `herald_actors` gauge).
    /// Both fall back once runs are processed and users go idle; a count that
    /// only grows is a leak.
    pub fn actor_counts(&self) -> (usize, usize) {
        (self.inner.runs.len(), self.inner.users.len())
    }

    /// The user's actor, started on first use.
    pub fn user_actor(&self, project: Uuid, user: Uuid) -> Addr<UserActor> {
        if let Some(a) = self.inner.users.get(&(project, user)) {
            if a.connected() {
                return a.clone();
            }
        }
        let start = || {
            let engine = self.clone();
            UserActor::start_in_arbiter(self.arbiter_for(&user), move |_| {
                UserActor::new(engine, project, user)
            })
        };
        // Under the entry's lock, so two callers never start two actors for one user.
        match self.inner.users.entry((project, user)) {
            dashmap::mapref::entry::Entry::Occupied(o) if o.get().connected() => o.get().clone(),
            dashmap::mapref::entry::Entry::Occupied(mut o) => {
                let a = start();
                o.insert(a.clone());
                a
            }
            dashmap::mapref::entry::Entry::Vacant(v) => v.insert(start()).clone(),
        }
    }

    /// The user's actor if one is running (never starts one).
    pub fn user_actor_if_running(&self, project: Uuid, user: Uuid) -> Option<Addr<UserActor>> {
        self.inner
            .users
            .get(&(project, user))
            .map(|a| a.clone())
            .filter(|a| a.connected())
    }

    /// Sends to the user's actor, restarting it once if it stopped meanwhile.
    pub async fn ask_user<M>(&self, project: Uuid, user: Uuid, msg: M) -> Result<M::Result>
    where
        M: Message + Send + Clone + 'static,
        M::Result: Send,
        UserActor: Handler<M>,
    {
        for _ in 0..3 {
            let a = self.user_actor(project, user);
            match a.send(msg.clone()).await {
                Ok(r) => return Ok(r),
                Err(_) => {
                    self.inner
                        .users
                        .remove_if(&(project, user), |_, v| !v.connected());
                }
            }
        }
        Err(Error::unavailable("user actor unavailable"))
    }

    /// Stops accepting engine work; queued deliveries stay in sled for next
    /// start. Shared work: this node's leases are given back, so the other
    /// nodes take its work at once rather than when the leases expire.
    pub fn shutdown(&self) {
        self.inner.running.store(false, Ordering::SeqCst);
        for a in &self.inner.arbiters {
            a.stop();
        }
        if let Some(w) = self.inner.storage.work() {
            if let Err(e) = w.release_all() {
                tracing::warn!(error = %e, "cannot hand leases back; they expire instead");
            }
        }
    }
}

impl Engine {
    /// Hands durable live-feed frames to the actors of users that are running
    /// (a user without one has no socket to push to), and, in a cluster, to
    /// the other nodes over the bus.
    pub fn push_frames(&self, frames: UserFrames) {
        if let Some(bus) = self.bus() {
            bus.publish_frames(&frames);
        }
        self.push_frames_local(frames);
    }

    /// `push_frames` on this node only (frames the bus brought).
    pub fn push_frames_local(&self, frames: UserFrames) {
        for (p, u, f) in frames {
            if let Some(a) = self.user_actor_if_running(p, u) {
                a.do_send(super::user::PushFrames(f));
            }
        }
    }

    /// Tells the actors of runs that just became processed to stop.
    pub(crate) fn runs_processed(&self, runs: Vec<(Uuid, Uuid)>) {
        for (_, run) in runs {
            if let Some(a) = self.inner.runs.get(&run) {
                a.do_send(super::flow_run::RunProcessed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use std::time::{Duration, Instant};

    /// Stops when told to.
    struct Stoppable;
    impl Actor for Stoppable {
        type Context = Context<Self>;
    }
    #[derive(Message)]
    #[rtype(result = "()")]
    struct Stop;
    impl Handler<Stop> for Stoppable {
        type Result = ();
        fn handle(&mut self, _: Stop, ctx: &mut Context<Self>) {
            ctx.stop();
        }
    }

    async fn until(what: &str, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !done() {
            assert!(Instant::now() < deadline, "{what}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// A run's actor takes its entry with it when it stops: every run left
    /// one (and its mailbox) behind while entries went only once their
    /// mailbox was closed, which actix does after `stopped`.
    #[test]
    fn a_stopped_run_actor_leaves_no_entry_behind() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        actix::System::new().block_on(async move {
            let engine = Engine::start(Arc::new(store), EngineConfig::default()).unwrap();
            // Runs that are not stored: each actor finds nothing and stops.
            let actors: Vec<_> = (0..20)
                .map(|_| engine.start_run(Uuid::now_v7(), Uuid::now_v7(), vec![]))
                .collect();
            // A mailbox closes once its actor's `stopped` has returned.
            until("every run actor stopped", || {
                actors.iter().all(|a| !a.connected())
            })
            .await;
            assert_eq!(engine.inner.runs.len(), 0, "entries left behind");
            engine.shutdown();
        });
    }

    /// `forget_actor` takes out the stopping actor's own entry, never a
    /// newer actor's under the same key.
    #[test]
    fn forget_actor_removes_only_the_actor_itself() {
        actix::System::new().block_on(async {
            let map: Arc<DashMap<u32, Addr<Stoppable>>> = Arc::new(DashMap::new());
            let (old, new) = (Stoppable.start(), Stoppable.start());
            map.insert(1, new.clone());
            forget_actor(&map, &1, &old);
            assert!(map.get(&1).is_some_and(|a| *a == new));
            forget_actor(&map, &1, &new);
            assert!(map.is_empty());
            // A stopped actor's address no longer matches a live one's.
            map.insert(2, new.clone());
            old.do_send(Stop);
            until("the old actor stopped", || !old.connected()).await;
            forget_actor(&map, &2, &old);
            assert_eq!(map.len(), 1);
        });
    }
}
