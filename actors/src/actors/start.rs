//! Starting the engine: the one module that knows every part of it. It
//! makes the engine's handle with the parts the actor modules keep in it
//! (`engine::Parts`), then starts the delivery supervisor, the event
//! sender, the cluster's work sharing or the actors of unfinished runs, and
//! the lifecycle tasks.

use super::engine::{Engine, EngineConfig, Inner, Parts};
use super::flow_run::RunActors;
use super::supervisor::{DeliverySupervisor, SupervisorSlot};
use super::user::UserActors;
use crate::bus::BusSlot;
use crate::error::{Error, Result};
use crate::storage::Storage;
use actix::prelude::*;
use dashmap::DashMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

impl Engine {
    /// Starts the engine inside the current actix system: its arbiters, the
    /// delivery supervisor (which reloads every queued delivery) and an actor for
    /// every run not yet processed. `cursor_key`: the secret that signs page
    /// cursors, which the backend keeps for its data set
    /// (`Store::cursor_key`, `PgStore::cursor_key`).
    pub fn start(
        storage: Arc<dyn Storage>, cursor_key: [u8; 32], mut config: EngineConfig,
    ) -> Result<Engine> {
        // a render with no fuel or no room could never succeed
        config.template_limits.fuel = config.template_limits.fuel.max(1);
        config.template_limits.max_output = config.template_limits.max_output.max(1);
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
        let mut parts = Parts::default();
        parts.insert(SupervisorSlot::default());
        parts.insert(RunActors::default());
        parts.insert(UserActors::default());
        parts.insert(BusSlot::default());
        parts.insert(super::presence::Registry::default());
        parts.insert(super::feed_pages::FeedPages::default());
        parts.insert(super::health::Health::default());
        // SNS signing certificates of `ses` callbacks, fetched with the
        // providers' client (the egress guard's resolver, no redirects)
        parts.insert(crate::feedback::ses::SnsCerts::new(
            http.clone(),
            egress.clone(),
            config.sns_trusted_cert_host.clone(),
        ));
        let engine = Engine {
            inner: Arc::new(Inner {
                storage,
                cursor_key,
                config,
                arbiters,
                transports: crate::providers::transports(&http, &egress),
                egress,
                running: AtomicBool::new(true),
                panicked: DashMap::new(),
                staging: DashMap::new(),
                clocks: Default::default(),
                journal,
                attempt_notes: Default::default(),
                live_reads: tokio::sync::Semaphore::new(super::engine::LIVE_READS_AT_ONCE),
                public_url: Default::default(),
                public_url_given: Default::default(),
                parts,
            }),
        };
        // Before the delivery actors reload the queue: they park on these.
        engine.inner.clocks.load(&engine.inner.storage.projects()?);
        let sup = DeliverySupervisor::start_all(engine.clone());
        let _ = engine.inner.parts.get::<SupervisorSlot>().0.set(sup);
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

    /// Actors running now: flow runs' and users' (the `herald_actors` gauge).
    /// Both fall back once runs are processed and users go idle; a count that
    /// only grows is a leak.
    pub fn actor_counts(&self) -> (usize, usize) {
        (self.run_actors().len(), self.user_actors().len())
    }
}
