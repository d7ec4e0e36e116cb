//! Erasure in the sled store: a user deleted and their notifications
//! removed in bounded atomic steps (`Removal`), the store itself the cursor,
//! so a crash resumes where the last committed step stopped.

use super::feed::{entry_id, keyed_by_feed_time};
use super::keys::Key;
use super::removal::*;
use super::{Store, Writes, T};
use crate::error::{Error, Result};
use crate::model::{notification_of, Timestamp};
use crate::rules::records;
use crate::storage::Refusal;
use crate::storage::{Erasure, ErasureStatus};
use uuid::Uuid;

impl Store {
    /// Deletes the user and records their erasure in one durable commit. The
    /// user's feed keys (entries and recipient markers, one or more per
    /// notification of theirs) stay: they are the erasure's list of work.
    pub fn start_erasure(&self, project: &Uuid, ext: &str) -> Result<Erasure> {
        let mut job = None;
        self.delete_user_with(project, ext, |w, user| {
            w.ops.retain(|(t, _, _)| *t != T::feed);
            let e = records::new_erasure(project, &user.id);
            w.put_rec(T::erasures, Key::new().id(project).id(&e.id), &e);
            job = Some(e);
            Ok(())
        })?;
        job.ok_or_else(|| Error::internal("erasure not recorded"))
    }

    pub fn erasure(&self, project: &Uuid, id: &Uuid) -> Result<Option<Erasure>> {
        self.get_rec(T::erasures, Key::new().id(project).id(id).as_ref())
    }

    pub fn running_erasures(&self) -> Result<Vec<Erasure>> {
        let mut out = vec![];
        for kv in self.tree(T::erasures).iter() {
            let (_, v) = kv?;
            let e: Erasure = super::codec::dec(&v)?;
            if e.status == ErasureStatus::Running {
                out.push(e);
            }
        }
        Ok(out)
    }

    /// One step of an erasure: up to `max` of the user's settled
    /// notifications removed, with the job's progress, in one durable
    /// commit; the job is complete once the user's feed keys are all gone.
    pub fn erase_step(&self, project: &Uuid, id: &Uuid, max: usize) -> Result<Erasure> {
        let max = max.max(1);
        let _removals = self.removals();
        let mut job = self
            .erasure(project, id)?
            .ok_or_else(|| Refusal::missing("erasure", id))?;
        if job.status == ErasureStatus::Complete {
            return Ok(job);
        }
        let up = Key::new().id(project).id(&job.user_id);
        // The user's notifications, each with its feed keys.
        let mut nids: Vec<(Uuid, Vec<Vec<u8>>)> = vec![];
        let mut seen = 0usize;
        for kv in self.tree(T::feed).scan_prefix(&up) {
            let (k, v) = kv?;
            seen += 1;
            if k.len() != 48 {
                continue;
            }
            let nid = notification_of(&entry_id(&k, &v));
            // A notification's keys are one run, but for entries that
            // entered the feed after acceptance (keyed by their feed time).
            let group = match nids.last_mut() {
                Some((n, _)) if *n == nid => nids.last_mut(),
                _ if keyed_by_feed_time(&v) => nids.iter_mut().find(|(n, _)| *n == nid),
                _ => None,
            };
            match group {
                Some((_, keys)) => keys.push(k.to_vec()),
                None => {
                    if nids.len() >= max || seen > max * SCAN_FACTOR {
                        break;
                    }
                    nids.push((nid, vec![k.to_vec()]));
                }
            }
        }
        let mut w = Writes::new();
        if nids.is_empty() {
            job.status = ErasureStatus::Complete;
            job.completed_at = Some(Timestamp::now());
            w.put_rec(T::erasures, Key::new().id(project).id(id), &job);
            self.commit_durable(w)?;
            return Ok(job);
        }
        let mut removal = Removal::new(self, *project, false);
        for (nid, keys) in &nids {
            match self.notif_rec(project, nid)? {
                // Still pending (its deliveries to a deleted user settle
                // soon): a later step takes it.
                Some(r) if !r.n.processed || !r.d.iter().all(|d| d.status.is_final()) => {}
                Some(r) => removal.remove(&Doomed::of(&r))?,
                // Gone already (purged): only its feed keys are left, and
                // a trace a purge before traces went with notifications
                // may have left.
                None => {
                    for k in keys {
                        removal.w.del(T::feed, k);
                    }
                    self.stage_trace_removal(&mut removal.w, project, nid)?;
                }
            }
        }
        let (mut rw, report, _) = removal.finish(false)?;
        job.notifications_removed += report.notifications;
        rw.put_rec(T::erasures, Key::new().id(project).id(id), &job);
        w.append(rw);
        self.commit_durable(w)?;
        self.take_usage(project, report.usage_bytes)?;
        Ok(job)
    }

    /// Takes what removed records counted off the project's usage.
    pub(super) fn take_usage(&self, project: &Uuid, bytes: u64) -> Result<()> {
        use crate::storage::UsageRepo;
        self.add_usage(project, -(bytes.min(i64::MAX as u64) as i64))
    }
}
