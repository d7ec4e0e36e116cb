//! `Engine`: the cheap-to-clone handle the HTTP layer uses to reach the actors.

use crate::egress::EgressPolicy;
use crate::model::ChannelType;
use crate::storage::Storage;
use actix::prelude::*;
use dashmap::DashMap;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
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
    /// The bounds of every template render (`template_fuel`,
    /// `template_max_output`; each at least 1).
    pub template_limits: crate::render::Limits,
    /// A host trusted to serve Amazon SNS signing certificates besides
    /// SNS's own (`--sns-trusted-cert-host`; tests only), see
    /// `crate::feedback::ses::SnsCerts`.
    pub sns_trusted_cert_host: Option<String>,
    /// How long a degraded channel's circuit stays open before one probe
    /// attempt goes through (`crate::health`).
    pub channel_cooldown: std::time::Duration,
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
            claim_poll: DEFAULT_CLAIM_POLL,
            journal_dir: None,
            template_limits: crate::render::Limits::default(),
            sns_trusted_cert_host: None,
            channel_cooldown: std::time::Duration::from_millis(
                crate::health::DEFAULT_COOLDOWN_MS as u64,
            ),
        }
    }
}

pub(crate) struct Inner {
    pub storage: Arc<dyn Storage>,
    /// The secret that signs page cursors: the data set's, which its
    /// backend keeps (the same on every node of a cluster).
    pub cursor_key: [u8; 32],
    pub config: EngineConfig,
    pub arbiters: Vec<ArbiterHandle>,
    pub transports: crate::providers::Transports,
    pub egress: Arc<EgressPolicy>,
    pub running: AtomicBool,
    pub panicked: DashMap<ChannelType, ()>,
    /// Per project: recipients it may have being staged (rendered) at once
    /// (see `Engine::staging_permit`).
    pub staging: DashMap<Uuid, Arc<tokio::sync::Semaphore>>,
    /// Project time: the test clocks and the deliveries parked on them.
    pub clocks: crate::delivery::clock::Clocks,
    /// Deliveries in progress, for the crash rule (`super::poison`).
    pub journal: Option<super::poison::Journal>,
    /// What attempts saw beyond their outcome, until their settle writes it
    /// into their trace (`QueueRepo::settle`).
    pub attempt_notes: crate::trace::AttemptNotes,
    /// Live-feed reads running at once (`Engine::run_live`).
    pub live_reads: tokio::sync::Semaphore,
    /// The server's public URL (`--public-url`): where the links a send puts
    /// in `{{ preferences_url }}` point. Set once the server is bound.
    pub public_url: std::sync::OnceLock<String>,
    /// Whether the operator gave that URL (not the default made of the
    /// bound address): only then may a commercial flow be active, as its
    /// unsubscribe link must reach the server from a mailbox provider.
    pub public_url_given: std::sync::atomic::AtomicBool,
    /// What the actor modules keep in the engine (their registries of
    /// actors, the supervisor's address, the bus), each read back by the
    /// module that owns it (`Parts`).
    pub parts: Parts,
}

/// State the engine carries for the modules built on it, by type: the
/// module that owns a part registers it at start (`Engine::start`) and is
/// the only one to read it back. The engine's handle is below the actors
/// in the module graph (they all hold one), so it cannot name their types;
/// a map by `TypeId` (as `http::Extensions` or actix-web's app data) keeps
/// it from doing so. Filled once before the handle is shared, read only
/// after.
#[derive(Default)]
pub(crate) struct Parts(HashMap<TypeId, Box<dyn Any + Send + Sync>>);

impl Parts {
    pub(crate) fn insert<T: Any + Send + Sync>(&mut self, part: T) {
        self.0.insert(TypeId::of::<T>(), Box::new(part));
    }

    /// The part of type `T`. Every part is registered by `Engine::start`
    /// before the handle exists anywhere else: a missing one is a bug of
    /// start's, not a state the engine can be in.
    pub(crate) fn get<T: Any + Send + Sync>(&self) -> &T {
        self.0
            .get(&TypeId::of::<T>())
            .and_then(|p| p.downcast_ref())
            .expect("every engine part is registered at start")
    }
}

/// How often, at least, a node looks for work it was not told of
/// (`HERALD_CLAIM_POLL_MS`; see `super::cluster`).
pub const DEFAULT_CLAIM_POLL: std::time::Duration = std::time::Duration::from_millis(1000);

/// Recipients one project may have being staged at once, by accepted runs
/// (their inline recipients) and topic expansions (a chunk's worth each):
/// two runs of the 1,000-recipient maximum, or four expansions, or hundreds of
/// small runs. Staging renders templates and is CPU work on the blocking pool
/// that every project shares; bounding each project's share keeps one
/// project's huge runs from taking all of it (within the project, its runs
/// wait their turn). A semaphore weighted by recipients rather than a count of
/// runs: the small runs the REST benchmark fires 64 at a time fit in it whole.
pub const PROJECT_STAGING_UNITS: usize = 2000;

/// Live-feed reads on the blocking pool at once (`Engine::run_live`): as
/// many as the PostgreSQL pool has connections, and more than the cores
/// that run the embedded store's.
pub const LIVE_READS_AT_ONCE: usize = 16;

#[derive(Clone)]
pub struct Engine {
    pub(crate) inner: Arc<Inner>,
}

/// The SNS signing certificates of `ses` callbacks (fetched and cached
/// once per engine), for the verifier of `POST /hooks/v1/{channel_id}`.
impl Engine {
    pub fn sns_certs(&self) -> &crate::feedback::ses::SnsCerts {
        self.inner.parts.get()
    }
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

    /// Waits until `project` may stage `recipients` more recipients (at most
    /// `PROJECT_STAGING_UNITS` at once; a larger number counts as that), and
    /// returns the permit that gives them back when dropped. Other projects
    /// never wait for it.
    pub async fn staging_permit(
        &self, project: Uuid, recipients: usize,
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

    /// Stops accepting engine work; queued deliveries stay in sled for next
    /// start. Shared work: this node's leases are given back, so the other
    /// nodes take its work at once rather than when the leases expire.
    pub fn shutdown(&self) {
        self.inner.running.store(false, Ordering::SeqCst);
        for a in &self.inner.arbiters {
            a.stop();
        }
        if let Some(w) = self.inner.storage.work() {
            if let Err(e) = w.release(crate::storage::Release::All) {
                tracing::warn!(error = %e, "cannot hand leases back; they expire instead");
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
            let engine = Engine::start(
                Arc::new(store.clone()),
                *store.cursor_key(),
                EngineConfig::default(),
            )
            .unwrap();
            // Runs that are not stored: each actor finds nothing and stops.
            let actors: Vec<_> = (0..20)
                .map(|_| engine.start_run(Uuid::now_v7(), Uuid::now_v7(), vec![]))
                .collect();
            // A mailbox closes once its actor's `stopped` has returned.
            until("every run actor stopped", || {
                actors.iter().all(|a| !a.connected())
            })
            .await;
            assert_eq!(engine.run_actors().len(), 0, "entries left behind");
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
