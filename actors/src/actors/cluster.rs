//! Work wake-ups between the nodes of a cluster: a node that committed work
//! (deliveries queued, a delay due) announces it over the bus, and the
//! other nodes wake their queue for it instead of waiting for their slow
//! poll. Nodes share the work through leases on the queue's rows in
//! PostgreSQL; the bus only says when to look.

use super::engine::Engine;
use crate::model::ChannelType;

impl Engine {
    /// Tells the other nodes that work of `ct` was queued, due at `due_ms`
    /// (milliseconds since the epoch). Called after the commit that queued
    /// it; a no-op without a bus (a single node wakes its own actors).
    pub fn announce_work(&self, ct: ChannelType, due_ms: i64) {
        if let Some(bus) = self.bus() {
            bus.publish_work(ct, due_ms);
        }
    }

    /// What a node does when another one announced work of `ct` due at
    /// `due_ms`.
    pub fn wake_queue(&self, ct: ChannelType, due_ms: i64) {
        // Deliberately empty here: claiming the announced work belongs to the
        // queue's lease-based sharing (the channel actor claims due rows of
        // `ct` from PostgreSQL), which fills this in.
        let _ = (ct, due_ms);
    }
}
