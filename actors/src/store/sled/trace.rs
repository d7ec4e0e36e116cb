//! Decision traces in sled (see `crate::trace`): `trace`: `(project,
//! notification, seq)` -> the entries one commit added, so appending never
//! reads (each part in `trace_codec`'s compact encoding); a trace is read
//! back by one prefix scan, in commit order, and leaves with its notification
//! (`stage_trace_removal`, by the retention purge and the user erasure).
//!
//! A notification stored in a group (settled when accepted, see
//! `records::Grouper`) keeps its trace as accepted in its group's member
//! instead, as a stub of what its record does not hold (`trace_codec::stub`,
//! about 25 bytes; the entries are made from the record when read): a key
//! of its own, and the entries' 200 bytes, cost the 5,000-socket fan-out
//! about a quarter of its rate. That part is read first; it leaves with the
//! member.

use super::super::trace_codec;
use super::keys::Key;
use super::{Store, Writes, T};
use crate::error::Result;
use crate::trace::TraceEntry;
use uuid::Uuid;

impl Store {
    /// Stages `entries` of a notification's trace into `w` (the commit of the
    /// decisions they describe).
    pub(crate) fn stage_trace(
        &self, w: &mut Writes, project: &Uuid, nid: &Uuid, entries: &[TraceEntry],
    ) {
        if entries.is_empty() {
            return;
        }
        let at = trace_codec::project_time(project);
        self.stage_trace_part(w, project, nid, trace_codec::encode(entries, at));
    }

    /// Stages a trace part already encoded (`trace_codec::encode`).
    pub(crate) fn stage_trace_part(
        &self, w: &mut Writes, project: &Uuid, nid: &Uuid, part: Vec<u8>,
    ) {
        if part.is_empty() {
            return;
        }
        let seq = self.next_event_seq();
        w.put(T::trace, Key::new().id(project).id(nid).u64(seq), part);
    }

    /// Stages the removal of a notification's trace into `w` (the batch that
    /// removes the notification); returns the bytes it held. A trace has at
    /// most a few parts per step and attempt (see `crate::trace`), so this
    /// stays within the batch's bounds.
    pub(crate) fn stage_trace_removal(
        &self, w: &mut Writes, project: &Uuid, nid: &Uuid,
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
}
