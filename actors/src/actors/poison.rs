//! The crash journal: work that was in progress when the process died is
//! retried at most twice across restarts, then failed (`crashed`).
//!
//! A delivery whose processing kills the process (a render, a batch close or
//! a provider call that aborts) would otherwise be taken up again at every
//! start and kill the node again, for every project on it. So the delivery
//! actors note each delivery they start and finish in an append-only file
//! (`inflight.log` in the data directory), one `write(2)` per batch of
//! deliveries and no fsync: a process that dies (abort, `kill -9`, the OOM
//! killer) leaves what it wrote in the kernel's page cache, and only a crash
//! of the machine loses it, which no delivery causes.
//!
//! At start, `Journal::open` reads the log: a delivery started and not
//! finished was in progress at the crash, and its count (`crashes`, rewritten
//! atomically) goes up by one. A delivery whose count reached `MAX_CRASHES`
//! is not attempted again: the actor settles it failed with code `crashed`,
//! through the same settle as any failure (trace entry, `delivery.failed`
//! event). A delivery that finishes leaves the counts at the next start.
//!
//! Only the embedded store has a journal: nodes on PostgreSQL may share a
//! data directory, and a node's work is taken up by another node, whose
//! journal never saw it (a count of claims on the queue row is the rule
//! that would fit there).

use dashmap::DashMap;
use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use uuid::Uuid;

/// Starts that may die in a delivery before it is failed: the third start
/// fails it without attempting it.
pub const MAX_CRASHES: u32 = 2;

/// The outcome of a delivery the process died in at `MAX_CRASHES` starts in
/// a row: failed without another attempt.
pub(crate) fn crashed() -> crate::storage::Outcome {
    crate::storage::Outcome::Failed(crate::model::DeliveryError::new(
        crate::model::DeliveryErrorCode::Crashed,
        format!(
            "the process died while this delivery was in progress at {MAX_CRASHES} starts in a row; it is not attempted again"
        ),
    ))
}

const LOG: &str = "inflight.log";
const COUNTS: &str = "crashes";

pub struct Journal {
    log: Mutex<File>,
    /// Deliveries in progress at an earlier crash, and how many times.
    counts: DashMap<Uuid, u32>,
}

impl Journal {
    /// Reads what the last process left in `dir`, counts its crashes, and
    /// starts a new log.
    pub fn open(dir: &Path) -> std::io::Result<Journal> {
        let log_path = dir.join(LOG);
        let counts_path = dir.join(COUNTS);
        let mut counts: HashMap<Uuid, u32> = std::fs::read_to_string(&counts_path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| {
                let (id, n) = l.split_once(' ')?;
                Some((Uuid::parse_str(id).ok()?, n.parse().ok()?))
            })
            .collect();
        let mut open: HashSet<Uuid> = HashSet::new();
        for line in std::fs::read_to_string(&log_path)
            .unwrap_or_default()
            .lines()
        {
            let mut words = line.split(' ');
            let kind = words.next();
            for id in words.filter_map(|w| Uuid::parse_str(w).ok()) {
                match kind {
                    Some("S") => {
                        open.insert(id);
                    }
                    Some("E") => {
                        open.remove(&id);
                        counts.remove(&id);
                    }
                    _ => {}
                }
            }
        }
        for id in open {
            let n = counts.entry(id).or_default();
            *n += 1;
            tracing::warn!(delivery_id = %id, crashes = *n, "a delivery was in progress when the process died");
        }
        write_atomically(&counts_path, &counts)?;
        let log = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&log_path)?;
        Ok(Journal {
            log: Mutex::new(log),
            counts: counts.into_iter().collect(),
        })
    }

    /// How many earlier processes died while this delivery was in progress.
    pub fn crashes(&self, id: &Uuid) -> u32 {
        if self.counts.is_empty() {
            return 0;
        }
        self.counts.get(id).map(|n| *n).unwrap_or(0)
    }

    /// Whether the delivery is to be failed rather than attempted.
    pub fn poisoned(&self, id: &Uuid) -> bool {
        self.crashes(id) >= MAX_CRASHES
    }

    /// Notes deliveries as started (before any of their work).
    pub fn begin(&self, ids: impl IntoIterator<Item = Uuid>) {
        self.append('S', ids);
    }

    /// Notes deliveries as finished (whatever their outcome).
    pub fn end(&self, ids: impl IntoIterator<Item = Uuid>) {
        self.append('E', ids);
    }

    fn append(&self, kind: char, ids: impl IntoIterator<Item = Uuid>) {
        let mut line = String::with_capacity(64);
        line.push(kind);
        for id in ids {
            line.push(' ');
            line.push_str(&id.to_string());
        }
        if line.len() == 1 {
            return;
        }
        line.push('\n');
        let mut f = self.log.lock().unwrap_or_else(|e| e.into_inner());
        // A full disk loses the note, not the delivery: at worst a delivery
        // that crashes the process is retried more often.
        let _ = f.write_all(line.as_bytes());
    }
}

fn write_atomically(path: &PathBuf, counts: &HashMap<Uuid, u32>) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    let mut f = File::create(&tmp)?;
    for (id, n) in counts {
        writeln!(f, "{id} {n}")?;
    }
    f.sync_all()?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delivery_started_and_not_finished_counts_a_crash_per_start() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (Uuid::now_v7(), Uuid::now_v7());
        for start in 1..=3u32 {
            let j = Journal::open(dir.path()).unwrap();
            assert_eq!(j.crashes(&a), start - 1);
            assert_eq!(j.poisoned(&a), start > MAX_CRASHES);
            assert_eq!(j.crashes(&b), 0, "b finished every time");
            j.begin([a, b]);
            j.end([b]);
            // the process dies here: nothing closes the journal
        }
        let j = Journal::open(dir.path()).unwrap();
        assert_eq!(j.crashes(&a), 3);
        j.begin([a]);
        j.end([a]);
        drop(j);
        let j = Journal::open(dir.path()).unwrap();
        assert_eq!(j.crashes(&a), 0, "a finished delivery leaves the counts");
    }
}
