//! The embedded store shares no work: one process owns its directory, so
//! `WorkRepo` answers as if this node held everything (claims hand out the
//! whole queue, as a start's recovery does; leases need no renewal). The
//! engine does not claim on it (`shares_work` is false), so the delivery
//! path stays as it was.

use super::Store;
use crate::error::Result;
use crate::model::ChannelType;
use crate::storage::{QueueItem, WorkRepo};
use std::sync::OnceLock;
use std::time::Duration;
use uuid::Uuid;

/// The process's node id, for logs and metrics.
fn node() -> Uuid {
    static NODE: OnceLock<Uuid> = OnceLock::new();
    *NODE.get_or_init(|| uuid::Builder::from_random_bytes(rand::random()).into_uuid())
}

impl WorkRepo for Store {
    fn node_id(&self) -> Uuid {
        node()
    }

    fn shares_work(&self) -> bool {
        false
    }

    fn lease(&self) -> Duration {
        Duration::MAX
    }

    fn claim_queue(&self, ct: ChannelType, _now_ms: i64, _limit: usize) -> Result<Vec<QueueItem>> {
        self.queue_items(ct)
    }

    fn renew_queue_leases(&self, _ct: ChannelType, _now_ms: i64) -> Result<()> {
        Ok(())
    }

    fn release_queue(&self, _ct: ChannelType, _items: Option<&[QueueItem]>) -> Result<()> {
        Ok(())
    }

    fn claim_runs(&self, _now_ms: i64, _limit: usize) -> Result<Vec<(Uuid, Uuid)>> {
        self.active_runs()
    }

    fn claim_run(&self, project: &Uuid, run: &Uuid, _now_ms: i64) -> Result<bool> {
        Ok(self
            .flow_run(project, run)?
            .is_some_and(|r| !r.processed && !r.expanded))
    }

    fn renew_leases(&self, _now_ms: i64) -> Result<()> {
        Ok(())
    }

    fn release_all(&self) -> Result<()> {
        Ok(())
    }
}
