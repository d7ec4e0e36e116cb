//! Decision traces in sled (see `crate::trace`): `trace`: `(project,
//! notification, seq)` -> the entries one commit added, so appending never
//! reads; a trace is read back by one prefix scan, in commit order.

use super::keys::Key;
use super::{codec, Store, Writes, T};
use crate::error::Result;
use crate::trace::TraceEntry;
use uuid::Uuid;

impl Store {
    /// Stages `entries` of a notification's trace into `w` (the commit of the
    /// decisions they describe).
    pub(crate) fn stage_trace(
        &self,
        w: &mut Writes,
        project: &Uuid,
        nid: &Uuid,
        entries: &[TraceEntry],
    ) {
        if entries.is_empty() {
            return;
        }
        let seq = self.next_event_seq();
        w.put_rec(T::trace, Key::new().id(project).id(nid).u64(seq), &entries);
    }

    /// A notification's trace, in order (empty when it has none).
    pub fn notification_trace(&self, project: &Uuid, nid: &Uuid) -> Result<Vec<TraceEntry>> {
        let mut out = vec![];
        for kv in self
            .tree(T::trace)
            .scan_prefix(Key::new().id(project).id(nid))
        {
            let part: Vec<TraceEntry> = codec::dec(&kv?.1)?;
            out.extend(part);
        }
        Ok(out)
    }
}
