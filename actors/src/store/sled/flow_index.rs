//! The packed index of each flow's notifications (`runs::flow_index`) for
//! notifications written before it existed: built once per data directory
//! when the store opens, from the notification records, and marked done in
//! the meta space. New notifications are indexed as they are stored
//! (`stage_run_indexes`) and leave it as they are removed (`Removal`).

use super::keys::Key;
use super::page::packed_chunk;
use super::records::group_members;
use super::removal::{skim, CHUNK_SPAN_MS};
use super::runs::flow_index;
use super::{Store, Writes, T};
use crate::error::{Error, Result};
use crate::model::Timestamp;
use std::collections::{HashMap, HashSet};
use uuid::Uuid;

/// The meta key saying every stored notification is in the flow index.
const BUILT: &[u8] = b"flow_index_built";
/// Ids per chunk while building.
const CHUNK: usize = 1000;
/// Chunks per commit while building.
const CHUNKS_PER_COMMIT: usize = 64;

impl Store {
    /// Indexes by flow the notifications stored before the flow index was
    /// (once; at open, before anything else writes). A build stopped half
    /// way is started again from nothing.
    pub(super) fn backfill_flow_index(&self) -> Result<()> {
        let meta = self.tree(T::meta);
        if meta.get(BUILT)?.is_some() {
            return Ok(());
        }
        let mut w = Writes::new();
        for kv in self.tree(T::flow_index).iter() {
            w.del(T::flow_index, kv?.0);
        }
        self.commit_now(w)?;
        let n = Key::new().id(&Uuid::nil()).0.len();
        let mut b = Builder::default();
        // The ids of the current 14-byte group: a record stored alone takes
        // the place of its copy in the group, which sorts just before it.
        let (mut group, mut seen) = (Vec::new(), HashSet::new());
        for kv in self.tree(T::notifications).iter() {
            let (k, v) = kv?;
            let corrupt = || Error::internal("corrupt notification key");
            if k.len() < n + 14 {
                return Err(corrupt());
            }
            if k[..n + 14] != group[..] {
                group = k[..n + 14].to_vec();
                seen.clear();
            }
            let project = Uuid::from_slice(&k[..n]).map_err(|_| corrupt())?;
            let recs: Vec<&[u8]> = match k.len() - n {
                14 => group_members(&v)?.into_iter().map(|m| m.rec).collect(),
                16 => vec![&v[..]],
                _ => return Err(corrupt()),
            };
            for rec in recs {
                let r = skim(rec)?;
                if seen.insert(r.n.i) {
                    b.add(self, project, r.n.f, r.n.i)?;
                }
            }
        }
        b.flush_all(self)?;
        let mut w = Writes::new();
        w.put(T::meta, BUILT, b"1");
        self.commit_now(w)
    }
}

/// Chunks being gathered per (project, flow), and the ones full.
#[derive(Default)]
struct Builder {
    open: HashMap<(Uuid, Uuid), Vec<Uuid>>,
    w: Writes,
    staged: usize,
}

impl Builder {
    fn add(&mut self, s: &Store, project: Uuid, flow: Uuid, id: Uuid) -> Result<()> {
        let ids = self.open.entry((project, flow)).or_default();
        // A chunk spans moments, as one commit's would (what removal
        // assumes when it strips chunks: `CHUNK_SPAN_MS`).
        let t = |id: &Uuid| Timestamp::of_id(id).millis();
        if ids
            .first()
            .is_some_and(|f| t(&id) - t(f) >= CHUNK_SPAN_MS / 2)
        {
            let mut full = std::mem::take(ids);
            self.stage(s, project, flow, &mut full)?;
        }
        let ids = self.open.entry((project, flow)).or_default();
        ids.push(id);
        if ids.len() >= CHUNK {
            let mut ids = std::mem::take(ids);
            self.stage(s, project, flow, &mut ids)?;
        }
        Ok(())
    }

    fn stage(&mut self, s: &Store, project: Uuid, flow: Uuid, ids: &mut [Uuid]) -> Result<()> {
        if let Some((k, v)) = packed_chunk(&flow_index(&project, &flow), ids) {
            self.w.put(T::flow_index, k, v);
            self.staged += 1;
        }
        if self.staged >= CHUNKS_PER_COMMIT {
            s.commit_now(std::mem::take(&mut self.w))?;
            self.staged = 0;
        }
        Ok(())
    }

    fn flush_all(&mut self, s: &Store) -> Result<()> {
        for ((project, flow), mut ids) in std::mem::take(&mut self.open) {
            self.stage(s, project, flow, &mut ids)?;
        }
        s.commit_now(std::mem::take(&mut self.w))
    }
}

#[cfg(test)]
#[path = "tests/flow_index.rs"]
mod tests;
