//! `DeliverySupervisor`: one `ChannelActor` per channel type, each under an actix
//! `Supervisor`, so a channel actor that stops after a crash is restarted and
//! reloads its queue from sled.

use super::channel::{ChannelActor, Dispatch, Wake};
use super::engine::Engine;
use crate::model::ChannelType;
use crate::storage::QueueItem;
use actix::prelude::*;
use std::collections::HashMap;
use std::sync::OnceLock;

pub struct DeliverySupervisor {
    channels: HashMap<ChannelType, Addr<ChannelActor>>,
    store: std::sync::Arc<dyn crate::storage::Storage>,
}

impl Actor for DeliverySupervisor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        // Housekeeping rides on the supervisor: expired idempotency records go.
        let store = self.store.clone();
        ctx.run_interval(std::time::Duration::from_secs(600), move |_, _| match store
            .sweep(crate::storage::Sweep::Idempotency, 10_000)
        {
            Ok(0) => {}
            Ok(n) => tracing::info!(removed = n, "expired idempotency records removed"),
            Err(e) => tracing::warn!(error = %e, "idempotency sweep failed"),
        });
    }
}

impl DeliverySupervisor {
    pub fn start_all(engine: Engine) -> Addr<DeliverySupervisor> {
        let mut channels = HashMap::new();
        for (i, ct) in ChannelType::ALL.into_iter().enumerate() {
            let e = engine.clone();
            let addr =
                Supervisor::start_in_arbiter(engine.arbiter(i), move |_| ChannelActor::new(e, ct));
            channels.insert(ct, addr);
        }
        let sup = DeliverySupervisor {
            channels,
            store: engine.storage().clone(),
        };
        DeliverySupervisor::start_in_arbiter(engine.arbiter(0), move |_| sup)
    }
}

impl Handler<Dispatch> for DeliverySupervisor {
    type Result = ();
    fn handle(&mut self, msg: Dispatch, _: &mut Context<Self>) {
        if let Some(first) = msg.0.first() {
            if let Some(a) = self.channels.get(&first.channel_type) {
                a.do_send(msg);
            }
        }
    }
}

/// Work of a channel type is due at `.1` (real ms): its actor claims then
/// at the latest (shared work, `Engine::wake_queue`).
#[derive(Message, Debug, Clone, Copy)]
#[rtype(result = "()")]
pub struct WakeQueue(pub ChannelType, pub i64);

impl Handler<WakeQueue> for DeliverySupervisor {
    type Result = ();
    fn handle(&mut self, WakeQueue(ct, at): WakeQueue, _: &mut Context<Self>) {
        if let Some(a) = self.channels.get(&ct) {
            a.do_send(Wake(at));
        }
    }
}

/// The supervisor's address, once started: an engine part (`engine::Parts`).
#[derive(Default)]
pub(crate) struct SupervisorSlot(pub(crate) OnceLock<Addr<DeliverySupervisor>>);

impl Engine {
    /// The delivery supervisor, once started.
    pub(crate) fn supervisor(&self) -> Option<&Addr<DeliverySupervisor>> {
        self.inner.parts.get::<SupervisorSlot>().0.get()
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
        if let Some(sup) = self.supervisor() {
            for (_, v) in by_type {
                sup.do_send(Dispatch(v));
            }
        }
    }
}
