//! Work shared by the nodes of one database (PostgreSQL): which node does
//! what, exactly once.
//!
//! Each `serve` process is a node with a random id (`Engine::node_id`, in
//! the log at start and in `/metrics` as `herald_node_info`). The work that
//! outlives a request lives in the database, and a node works on a piece of
//! it only while it holds the piece's lease (`storage::WorkRepo`):
//!
//! - deliveries: a node leases the deliveries of the runs it accepts in the
//!   run's own commit and keeps them in its timers; everything else due
//!   (another node's after it died, deliveries handed back) it claims, up
//!   to the room it has, when woken and at least every `claim_poll`
//!   (`channel`);
//! - topic expansions: the node that accepts a topic run expands it; a run
//!   whose expansion nobody holds (its node died) is claimed here every
//!   `claim_poll` and continues from the cursor of its last chunk (a chunk
//!   commits only under its node's lease, so none is stored twice);
//! - the event outbox: entries are leased as they are taken
//!   (`EventRepo::due_events`);
//! - retention purges run under a per-project lock, erasure steps under
//!   their record's row lock: one node at a time.
//!
//! A node renews its leases while it works (a third of the lease apart); a
//! node that dies stops renewing, and the others take its work once the
//! leases expire. One that stops cleanly gives them back at once.
//!
//! Without a bus a node finds work it was not told of by polling; a bus
//! between the nodes turns that into a wake-up: `announce_work` after a
//! commit that queued work another node may take, `wake_queue` on a node
//! told so.

use super::engine::Engine;
use super::flow_run::Expand;
use super::supervisor::WakeQueue;
use crate::model::{ChannelType, Timestamp};
use crate::storage::{Leased, RunClaim};
use std::time::Duration;
use uuid::Uuid;

/// Runs claimed for expansion per look.
const RUNS_PER_CLAIM: usize = 16;

impl Engine {
    /// This process's node id.
    pub fn node_id(&self) -> Uuid {
        self.inner.storage.node_id()
    }

    /// Whether this node shares its work with others (claims and leases).
    pub fn shares_work(&self) -> bool {
        self.inner.storage.shares_work()
    }

    /// Called after a commit that queued work of `ct` due at `due_ms` (real
    /// milliseconds; now for work already due) that any node may take: work
    /// this node handed back, or a test clock moved. Nothing to do without a
    /// bus (the other nodes find the work by polling); a bus publishes it so
    /// that they claim it at once (`wake_queue` on each of them).
    pub fn announce_work(&self, ct: ChannelType, due_ms: i64) {
        if let Some(bus) = self.bus() {
            bus.publish_work(ct, due_ms);
        }
    }

    /// Queued deliveries a settle made due sooner (`storage::Finished`'s
    /// third part: route hops, steps after a route): handed to this node's
    /// channel actors; when nodes share the work, their rows were freed by
    /// the settle, so every node is told to claim them instead.
    pub(crate) fn pulled(&self, items: Vec<crate::storage::QueueItem>) {
        if items.is_empty() {
            return;
        }
        if !self.shares_work() {
            return self.dispatch(items);
        }
        let now = Timestamp::now().millis();
        let mut types: Vec<ChannelType> = items.iter().map(|q| q.channel_type).collect();
        types.sort();
        types.dedup();
        for ct in types {
            self.wake_queue(ct, now);
            self.announce_work(ct, now);
        }
    }

    /// Work of `ct` is due at `due_ms` (real milliseconds): this node's
    /// delivery actor of that type claims then at the latest, at once when
    /// it is due already.
    pub fn wake_queue(&self, ct: ChannelType, due_ms: i64) {
        if !self.shares_work() {
            return;
        }
        if let Some(sup) = self.supervisor() {
            sup.do_send(WakeQueue(ct, due_ms));
        }
    }

    /// Every channel type's work may be due now (a test clock moved): this
    /// node claims at once and the others are told.
    pub(crate) fn work_due_now(&self) {
        if !self.shares_work() {
            return;
        }
        let now = Timestamp::now().millis();
        for ct in ChannelType::ALL {
            self.wake_queue(ct, now);
            self.announce_work(ct, now);
        }
    }

    /// Test clocks set or moved on other nodes: this node stages runs and
    /// retries by the clocks stored with the projects (claims read those
    /// directly). With a bus a moved clock is also announced at once
    /// (`bus::ProjectNotice::Clock`); this poll is the safety net.
    async fn follow_clocks(&self) {
        let projects = match self.run(|s| s.projects()).await {
            Ok(p) => p,
            Err(e) => return tracing::debug!(error = %e, "cannot read the projects' clocks"),
        };
        for p in projects {
            let known = self.inner.clocks.test_now(&p.id).map(|t| t.millis());
            if known != p.test_clock.map(|t| t.millis()) {
                // nothing is parked on a node that shares its work
                let _ = self.inner.clocks.set(p.id, p.test_clock);
            }
        }
    }

    /// Starts the node's cluster task on the first engine arbiter: claims
    /// the topic expansions nobody holds (at once, then every poll) and
    /// renews this node's leases of runs and events.
    pub(crate) fn start_cluster(&self) {
        let engine = self.clone();
        let node = self.node_id();
        let lease = self.inner.storage.lease();
        tracing::info!(node = %node, lease_ms = lease.as_millis() as u64, "node started; work shared through the database");
        let poll = self.inner.config.claim_poll.max(Duration::from_millis(10));
        let renew_every = (lease / 3).max(Duration::from_millis(200));
        self.arbiter(0).spawn(async move {
            let mut next_renew = std::time::Instant::now();
            while engine.is_running() {
                metrics::gauge!("herald_node_info", "node" => node.to_string()).set(1.0);
                if std::time::Instant::now() >= next_renew {
                    next_renew = std::time::Instant::now() + renew_every;
                    let now = Timestamp::now().millis();
                    if let Err(e) = engine
                        .run(move |s| s.shared_work()?.renew(Leased::RunsAndEvents, now))
                        .await {
                        tracing::warn!(error = %e, "cannot renew leases");
                    }
                }
                engine.follow_clocks().await;
                let now = Timestamp::now().millis();
                match engine
                    .run(move |s| {
                        s.shared_work()?
                            .claim_runs(RunClaim::Any { limit: RUNS_PER_CLAIM }, now)
                    })
                    .await
                {
                    Ok(runs) => {
                        for (project, run) in runs {
                            match engine.run_actors().get(&run).map(|a| a.clone()) {
                                Some(a) if a.connected() => a.do_send(Expand),
                                _ => {
                                    tracing::info!(flow_run_id = %run, "expanding a run no node holds");
                                    engine.start_run(project, run, vec![]);
                                }
                            }
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "cannot claim topic expansions"),
                }
                tokio::time::sleep(poll).await;
            }
        });
    }
}
