//! Decision traces in sled (see `crate::trace`): `trace`: `(project,
//! notification, seq)` -> the entries one commit added, so appending never
//! reads (each part in `trace_codec`'s compact encoding); a trace is read back by one prefix scan, in commit order, and
//! leaves with its notification (`stage_trace_removal`, by the retention
//! purge and the user erasure).

use super::keys::Key;
use super::{trace_codec, Store, Writes, T};
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
        w.put(
            T::trace,
            Key::new().id(project).id(nid).u64(seq),
            trace_codec::encode(entries),
        );
    }

    /// Stages the removal of a notification's trace into `w` (the batch that
    /// removes the notification); returns the bytes it held. A trace has at
    /// most a few parts per step and attempt (see `crate::trace`), so this
    /// stays within the batch's bounds.
    pub(crate) fn stage_trace_removal(
        &self,
        w: &mut Writes,
        project: &Uuid,
        nid: &Uuid,
    ) -> Result<u64> {
        let mut bytes = 0u64;
        for kv in self
            .tree(T::trace)
            .scan_prefix(Key::new().id(project).id(nid))
        {
            let (k, v) = kv?;
            bytes += (k.len() + v.len()) as u64;
            w.del(T::trace, k);
        }
        Ok(bytes)
    }

    /// A notification's trace, in order (empty when it has none).
    pub fn notification_trace(&self, project: &Uuid, nid: &Uuid) -> Result<Vec<TraceEntry>> {
        let mut out = vec![];
        for kv in self
            .tree(T::trace)
            .scan_prefix(Key::new().id(project).id(nid))
        {
            let part = trace_codec::decode(&kv?.1)?;
            out.extend(part);
        }
        Ok(out)
    }
}
