//! Backups and restores of a data directory.
//!
//! A backup is every sled tree, key by key, in one file:
//!
//! ```text
//! HERALD-BACKUP\n
//! {"backup_version":1,"format_version":1,"created_at":"…","herald":"0.1.0"}\n
//! 'T' u32 name_len, name                      a tree starts
//! 'E' u32 key_len, key, u32 value_len, value  one entry of that tree
//! …
//! 'Z' u32 crc32, u64 entries                  the end
//! ```
//!
//! (integers big-endian). Trees come in name order and entries in key order, and
//! the CRC-32 covers tree names, keys and values in that order — exactly what
//! `sled::Db::checksum` computes over a live store. That is what makes a backup
//! of a store that is being written to consistent: `snapshot_to_file` exports
//! every tree (sled's export is not atomic across trees), then takes
//! `Db::checksum`, which scans every tree under sled's global write lock, i.e.
//! at one instant. When the two agree, the file holds exactly the store as it
//! was at that instant; when a write raced with the export they differ and the
//! export is taken again. A restore checks the same CRC, so a truncated or
//! corrupted file is refused too.

use super::{Store, FORMAT_VERSION};
use crate::error::{Error, Result};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::time::Duration;

const MAGIC: &[u8] = b"HERALD-BACKUP\n";
/// Version of the backup file layout (not of the store format it carries).
const BACKUP_VERSION: u32 = 1;
/// Export attempts before a backup of a busy store gives up.
const ATTEMPTS: u32 = 20;
const MAX_HEADER: usize = 4096;

/// What a backup file holds.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct BackupHeader {
    pub backup_version: u32,
    /// The data directory format version (`FORMAT`) of the store it came from.
    pub format_version: u32,
    pub created_at: String,
    /// The Herald (engine crate) version that wrote it.
    pub herald: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupSummary {
    pub trees: u64,
    pub entries: u64,
    pub bytes: u64,
    pub checksum: u32,
    /// Exports taken until one matched the store (1 when nothing raced with it).
    pub attempts: u32,
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::internal(format!("{what} {}: {e}", path.display()))
}

/// Writes the records of a backup and hashes them like `sled::Db::checksum`.
struct Writer<W: Write> {
    out: W,
    crc: crc32fast::Hasher,
    entries: u64,
    trees: u64,
    bytes: u64,
}

impl<W: Write> Writer<W> {
    fn new(mut out: W, header: &BackupHeader) -> std::io::Result<Self> {
        let line = serde_json::to_string(header).map_err(std::io::Error::other)?;
        out.write_all(MAGIC)?;
        out.write_all(line.as_bytes())?;
        out.write_all(b"\n")?;
        let bytes = (MAGIC.len() + line.len() + 1) as u64;
        Ok(Writer {
            out,
            crc: crc32fast::Hasher::new(),
            entries: 0,
            trees: 0,
            bytes,
        })
    }

    fn chunk(&mut self, tag: u8, parts: &[&[u8]]) -> std::io::Result<()> {
        self.out.write_all(&[tag])?;
        self.bytes += 1;
        for p in parts {
            self.out.write_all(&(p.len() as u32).to_be_bytes())?;
            self.out.write_all(p)?;
            self.bytes += 4 + p.len() as u64;
        }
        Ok(())
    }

    fn tree(&mut self, name: &[u8]) -> std::io::Result<()> {
        self.crc.update(name);
        self.trees += 1;
        self.chunk(b'T', &[name])
    }

    fn entry(&mut self, k: &[u8], v: &[u8]) -> std::io::Result<()> {
        self.crc.update(k);
        self.crc.update(v);
        self.entries += 1;
        self.chunk(b'E', &[k, v])
    }

    fn finish(mut self) -> std::io::Result<(W, u32, u64, u64, u64)> {
        let crc = self.crc.clone().finalize();
        self.out.write_all(b"Z")?;
        self.out.write_all(&crc.to_be_bytes())?;
        self.out.write_all(&self.entries.to_be_bytes())?;
        self.bytes += 13;
        self.out.flush()?;
        Ok((self.out, crc, self.trees, self.entries, self.bytes))
    }
}

/// One record read back from a backup.
enum Record {
    Tree(Vec<u8>),
    Entry(Vec<u8>, Vec<u8>),
    End { crc: u32, entries: u64 },
}

struct Reader<R: Read> {
    inp: R,
}

impl<R: Read> Reader<R> {
    fn header(inp: &mut R) -> Result<BackupHeader> {
        let bad = || Error::internal("not a Herald backup file (bad header)");
        let mut magic = [0u8; MAGIC.len()];
        inp.read_exact(&mut magic).map_err(|_| bad())?;
        if magic != MAGIC {
            return Err(bad());
        }
        let mut line = Vec::new();
        let mut b = [0u8; 1];
        loop {
            inp.read_exact(&mut b).map_err(|_| bad())?;
            if b[0] == b'\n' {
                break;
            }
            line.push(b[0]);
            if line.len() > MAX_HEADER {
                return Err(bad());
            }
        }
        let h: BackupHeader = serde_json::from_slice(&line).map_err(|_| bad())?;
        if h.backup_version != BACKUP_VERSION {
            return Err(Error::internal(format!(
                "backup file layout version {} is not supported by this Herald (it reads {BACKUP_VERSION})",
                h.backup_version
            )));
        }
        Ok(h)
    }

    fn part(&mut self) -> Result<Vec<u8>> {
        let mut len = [0u8; 4];
        self.inp.read_exact(&mut len).map_err(truncated)?;
        let len = u32::from_be_bytes(len) as usize;
        let mut v = vec![0u8; len];
        self.inp.read_exact(&mut v).map_err(truncated)?;
        Ok(v)
    }

    fn next(&mut self) -> Result<Record> {
        let mut tag = [0u8; 1];
        self.inp.read_exact(&mut tag).map_err(truncated)?;
        match tag[0] {
            b'T' => Ok(Record::Tree(self.part()?)),
            b'E' => {
                let k = self.part()?;
                let v = self.part()?;
                Ok(Record::Entry(k, v))
            }
            b'Z' => {
                let mut crc = [0u8; 4];
                let mut n = [0u8; 8];
                self.inp.read_exact(&mut crc).map_err(truncated)?;
                self.inp.read_exact(&mut n).map_err(truncated)?;
                Ok(Record::End {
                    crc: u32::from_be_bytes(crc),
                    entries: u64::from_be_bytes(n),
                })
            }
            _ => Err(Error::internal(
                "the backup file is corrupted (unknown record)",
            )),
        }
    }
}

fn truncated(_: std::io::Error) -> Error {
    Error::internal("the backup file is truncated")
}

fn header_now() -> BackupHeader {
    BackupHeader {
        backup_version: BACKUP_VERSION,
        format_version: FORMAT_VERSION,
        created_at: crate::model::Timestamp::now().to_rfc3339(),
        herald: env!("CARGO_PKG_VERSION").to_string(),
    }
}

impl Store {
    /// Writes one export of every tree to `out` (not atomic across trees).
    fn export_once<W: Write>(&self, out: W) -> std::io::Result<(W, u32, u64, u64, u64)> {
        let mut w = Writer::new(out, &header_now())?;
        let handles = self
            .handles()
            .map_err(|e| std::io::Error::other(e.message))?;
        let mut collections = handles.db.export();
        collections.sort_by(|a, b| a.1.cmp(&b.1));
        for (kind, name, entries) in collections {
            if kind != b"tree" {
                continue;
            }
            w.tree(&name)?;
            for mut kv in entries {
                let v = kv.pop().unwrap_or_default();
                let k = kv.pop().unwrap_or_default();
                w.entry(&k, &v)?;
            }
        }
        w.finish()
    }

    /// Writes a consistent snapshot of the whole store to `path` (created or
    /// truncated), while other threads keep writing: the export is repeated
    /// until it matches the store's checksum taken right after it (see the
    /// module doc). Blocking; gives up with 503 `service_unavailable` when the
    /// store never stays still long enough.
    pub fn snapshot_to_file(&self, path: &Path) -> Result<BackupSummary> {
        let mut pause = Duration::from_millis(20);
        for attempt in 1..=ATTEMPTS {
            let file = File::create(path).map_err(|e| io_err("cannot create", path, e))?;
            // Private whatever the umask, and also when replacing an older file.
            super::secrets::make_private(path).map_err(|e| io_err("cannot create", path, e))?;
            // Commits wait while the export runs (`Store::commit` holds the gate
            // shared), so the export normally matches the checksum at once; the
            // few writes that bypass `commit` are caught by the comparison.
            let gate = self
                .inner
                .commit_gate
                .write()
                .unwrap_or_else(|p| p.into_inner());
            let exported = self.export_once(BufWriter::with_capacity(1 << 20, file));
            let now = self.handles()?.db.checksum();
            drop(gate);
            let (out, crc, trees, entries, bytes) =
                exported.map_err(|e| io_err("cannot write", path, e))?;
            let now = now?;
            let file = out
                .into_inner()
                .map_err(|e| io_err("cannot write", path, e.into_error()))?;
            if now == crc {
                file.sync_all()
                    .map_err(|e| io_err("cannot write", path, e))?;
                return Ok(BackupSummary {
                    trees,
                    entries,
                    bytes,
                    checksum: crc,
                    attempts: attempt,
                });
            }
            tracing::debug!(
                attempt,
                "backup: the store changed during the export; again"
            );
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(500));
        }
        let _ = std::fs::remove_file(path);
        Err(Error::unavailable(
            "the store kept changing during the backup; try again when it is less busy",
        ))
    }
}

/// Whether `dir` looks like a Herald data directory (it has a `FORMAT` file).
pub fn is_data_dir(dir: &Path) -> bool {
    dir.join("FORMAT").is_file()
}

/// Backs up the data directory `dir` (no server running: the store is opened
/// here, which also refuses a newer format or a directory in use) to `to`.
/// The store is opened without its secret key: sealed secrets are copied
/// sealed, and the key file (outside the sled tree) is never part of a backup.
pub fn backup_dir(dir: &Path, to: &Path) -> Result<BackupSummary> {
    if !is_data_dir(dir) {
        return Err(Error::internal(format!(
            "{} is not a Herald data directory (no FORMAT file)",
            dir.display()
        )));
    }
    let store = Store::open_without_key(dir)?;
    store.snapshot_to_file(to)
}

/// Reads a whole backup file and checks its structure and checksum.
pub fn verify_backup(path: &Path) -> Result<(BackupHeader, BackupSummary)> {
    let file = File::open(path).map_err(|e| io_err("cannot open", path, e))?;
    let bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut inp = BufReader::with_capacity(1 << 20, file);
    let header = Reader::header(&mut inp)?;
    let mut r = Reader { inp };
    let mut crc = crc32fast::Hasher::new();
    let (mut trees, mut entries) = (0u64, 0u64);
    let mut in_tree = false;
    loop {
        match r.next()? {
            Record::Tree(name) => {
                crc.update(&name);
                trees += 1;
                in_tree = true;
            }
            Record::Entry(k, v) => {
                if !in_tree {
                    return Err(Error::internal(
                        "the backup file is corrupted (entry outside a tree)",
                    ));
                }
                crc.update(&k);
                crc.update(&v);
                entries += 1;
            }
            Record::End {
                crc: want,
                entries: n,
            } => {
                let got = crc.finalize();
                if got != want || n != entries {
                    return Err(Error::internal(
                        "the backup file is corrupted (checksum mismatch)",
                    ));
                }
                return Ok((
                    header,
                    BackupSummary {
                        trees,
                        entries,
                        bytes,
                        checksum: got,
                        attempts: 1,
                    },
                ));
            }
        }
    }
}

/// Restores the backup `from` into `dir`, which must be absent or empty. The
/// result is a data directory any Herald of the backup's format version serves
/// (with the original data directory's secret key file, when channel secrets
/// are sealed in it: the backup never carries the key).
/// On failure nothing is left behind in `dir`.
pub fn restore(from: &Path, dir: &Path) -> Result<(BackupHeader, BackupSummary)> {
    let existed = dir.exists();
    if existed {
        let mut entries = std::fs::read_dir(dir).map_err(|e| io_err("cannot read", dir, e))?;
        if entries.next().is_some() {
            return Err(Error::internal(format!(
                "refusing to restore into {}: the directory is not empty (restore into a new or empty directory)",
                dir.display()
            )));
        }
    }
    let file = File::open(from).map_err(|e| io_err("cannot open", from, e))?;
    let mut inp = BufReader::with_capacity(1 << 20, file);
    let header = Reader::header(&mut inp)?;
    if header.format_version > FORMAT_VERSION {
        return Err(Error::internal(format!(
            "the backup has data format version {}, newer than this Herald understands ({FORMAT_VERSION}); restore it with a newer Herald",
            header.format_version
        )));
    }
    if header.format_version < FORMAT_VERSION {
        return Err(Error::internal(format!(
            "the backup has data format version {}, older than this Herald's ({FORMAT_VERSION}); restore it with the Herald that wrote it ({}), start that once, then upgrade",
            header.format_version, header.herald
        )));
    }
    super::secrets::create_private_dir(dir).map_err(|e| io_err("cannot create", dir, e))?;
    let result = restore_into(Reader { inp }, dir, header.clone());
    if result.is_ok() {
        super::secrets::tighten_modes(dir);
    }
    if result.is_err() {
        // leave the directory as it was: absent, or empty
        if existed {
            if let Ok(rd) = std::fs::read_dir(dir) {
                for e in rd.flatten() {
                    let p = e.path();
                    let _ = if p.is_dir() {
                        std::fs::remove_dir_all(&p)
                    } else {
                        std::fs::remove_file(&p)
                    };
                }
            }
        } else {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
    result
}

fn restore_into<R: Read>(
    mut r: Reader<R>, dir: &Path, header: BackupHeader,
) -> Result<(BackupHeader, BackupSummary)> {
    let path = dir.join(format!("v{}", header.format_version));
    let db = sled::Config::new().path(&path).open().map_err(|e| {
        Error::internal(format!("cannot create the store in {}: {e}", dir.display()))
    })?;
    let mut crc = crc32fast::Hasher::new();
    let (mut trees, mut entries) = (0u64, 0u64);
    let mut tree: Option<sled::Tree> = None;
    let mut batch = sled::Batch::default();
    let mut pending = 0usize;
    let flush_batch = |tree: &Option<sled::Tree>, batch: &mut sled::Batch, pending: &mut usize| {
        if let Some(t) = tree {
            if *pending > 0 {
                t.apply_batch(std::mem::take(batch))?;
                *pending = 0;
            }
        }
        Ok::<(), Error>(())
    };
    let summary = loop {
        match r.next()? {
            Record::Tree(name) => {
                flush_batch(&tree, &mut batch, &mut pending)?;
                crc.update(&name);
                trees += 1;
                tree = Some(db.open_tree(&name)?);
            }
            Record::Entry(k, v) => {
                if tree.is_none() {
                    return Err(Error::internal(
                        "the backup file is corrupted (entry outside a tree)",
                    ));
                }
                crc.update(&k);
                crc.update(&v);
                entries += 1;
                batch.insert(k, v);
                pending += 1;
                if pending >= 10_000 {
                    flush_batch(&tree, &mut batch, &mut pending)?;
                }
            }
            Record::End {
                crc: want,
                entries: n,
            } => {
                flush_batch(&tree, &mut batch, &mut pending)?;
                let got = crc.clone().finalize();
                if got != want || n != entries {
                    return Err(Error::internal(
                        "the backup file is corrupted (checksum mismatch)",
                    ));
                }
                if db.checksum()? != want {
                    return Err(Error::internal(
                        "the restored store does not match the backup's checksum",
                    ));
                }
                break BackupSummary {
                    trees,
                    entries,
                    bytes: 0,
                    checksum: got,
                    attempts: 1,
                };
            }
        }
    };
    db.flush()?;
    drop(tree);
    drop(db);
    let fmt = dir.join("FORMAT");
    std::fs::write(&fmt, format!("{}\n", header.format_version))
        .map_err(|e| io_err("cannot write", &fmt, e))?;
    Ok((header, summary))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[allow(unused_imports)]
    use crate::storage::*;
    use crate::store::{Writes, T};

    #[test]
    fn backup_restore_roundtrip_and_checks() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src");
        let store = Store::open(&src).unwrap();
        let mut w = Writes::new();
        for i in 0..500u32 {
            w.put(T::users, i.to_be_bytes(), format!("user {i}"));
        }
        w.put(T::flows, b"f", b"flow");
        store.commit(w).unwrap();
        let file = tmp.path().join("b.herald");
        let s = store.snapshot_to_file(&file).unwrap();
        assert_eq!(s.attempts, 1);
        assert_eq!(s.checksum, store.handles().unwrap().db.checksum().unwrap());
        let (h, v) = verify_backup(&file).unwrap();
        assert_eq!(h.format_version, FORMAT_VERSION);
        assert_eq!(v.entries, s.entries);

        let dst = tmp.path().join("dst");
        let (_, r) = restore(&file, &dst).unwrap();
        assert_eq!(r.checksum, s.checksum);
        // with the original key file, as a restored store is served (a new
        // key would be adopted and its key check written: another checksum)
        let restored = Store::open_with(&dst, Some(&src.join("secret.key"))).unwrap();
        assert_eq!(
            restored.handles().unwrap().db.checksum().unwrap(),
            s.checksum
        );
        assert_eq!(restored.cursor_key(), store.cursor_key());
        assert_eq!(
            restored
                .tree(T::users)
                .get(7u32.to_be_bytes())
                .unwrap()
                .as_deref(),
            Some(&b"user 7"[..])
        );
        drop(restored);

        // a non-empty target is refused and left alone
        let err = restore(&file, &dst).unwrap_err();
        assert!(err.message.contains("not empty"), "{}", err.message);
        assert!(dst.join("FORMAT").exists());

        // a corrupted file is refused and leaves nothing behind
        let mut bytes = std::fs::read(&file).unwrap();
        let n = bytes.len();
        bytes[n - 20] ^= 0xff;
        let bad = tmp.path().join("bad.herald");
        std::fs::write(&bad, &bytes).unwrap();
        assert!(verify_backup(&bad).is_err());
        let dst2 = tmp.path().join("dst2");
        assert!(restore(&bad, &dst2).is_err());
        assert!(!dst2.exists());
        // so is a truncated one
        std::fs::write(&bad, &bytes[..n / 2]).unwrap();
        assert!(restore(&bad, &dst2)
            .unwrap_err()
            .message
            .contains("truncated"));
    }

    #[test]
    fn snapshot_of_a_store_that_never_pauses_is_taken_at_once() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&tmp.path().join("d")).unwrap();
        let mut w = Writes::new();
        for i in 0..20_000u32 {
            w.put(T::users, i.to_be_bytes(), [7u8; 64]);
        }
        store.commit(w).unwrap();
        // A writer that never pauses for 300 ms: commits wait at the gate while
        // the export runs, so the first export already matches the checksum.
        let writer = {
            let store = store.clone();
            std::thread::spawn(move || {
                let t = std::time::Instant::now();
                let mut i = 0u64;
                while t.elapsed() < Duration::from_millis(300) {
                    let mut w = Writes::new();
                    w.put(T::users, (1_000_000 + i).to_be_bytes(), b"x");
                    w.put(T::flows, i.to_be_bytes(), b"y");
                    store.commit(w).unwrap();
                    i += 1;
                }
                i
            })
        };
        std::thread::sleep(Duration::from_millis(20));
        let file = tmp.path().join("b");
        let s = store.snapshot_to_file(&file).unwrap();
        let written = writer.join().unwrap();
        assert_eq!(s.attempts, 1, "{s:?}");
        let dst = tmp.path().join("r");
        restore(&file, &dst).unwrap();
        let r = Store::open(&dst).unwrap();
        assert_eq!(r.tree(T::users).len(), 20_000 + r.tree(T::flows).len());
        assert!(r.tree(T::flows).len() as u64 <= written);
    }

    #[test]
    fn snapshot_while_writing_is_consistent() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(&tmp.path().join("d")).unwrap();
        // Two trees always written together: a consistent snapshot has them equal.
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let (store, stop) = (store.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut i = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let mut w = Writes::new();
                    w.put(T::users, i.to_be_bytes(), b"x");
                    w.put(T::flows, i.to_be_bytes(), b"y");
                    store.commit(w).unwrap();
                    i += 1;
                    if i.is_multiple_of(64) {
                        std::thread::sleep(Duration::from_millis(30));
                    }
                }
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        let file = tmp.path().join("b");
        let s = store.snapshot_to_file(&file).unwrap();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        writer.join().unwrap();
        let dst = tmp.path().join("r");
        restore(&file, &dst).unwrap();
        let r = Store::open(&dst).unwrap();
        assert_eq!(r.tree(T::users).len(), r.tree(T::flows).len(), "{s:?}");
    }
}
