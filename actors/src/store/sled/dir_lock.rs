//! The data directory's own lock: `herald serve` takes it before it binds
//! its port or says `listening on`, so a second server on a directory in
//! use stops at once with a message naming the directory, instead of
//! serving 503s while sled waits for its own lock (it is taken deep in
//! `sled::open`, after the port is served when opening takes a while).
//!
//! An exclusive `flock` on `LOCK` in the directory, held by an open file
//! for the process's life (released by the kernel when the process ends,
//! however it ends; the file itself stays). sled's lock stays what keeps
//! every other opener out (`herald project`, `herald backup` on a stopped
//! server): this one only makes the refusal come first.

use crate::error::{Error, Result};
use std::fs::File;
use std::path::Path;

/// The data directory's lock, held while this value lives.
#[derive(Debug)]
pub struct DirLock {
    _file: File,
}

/// The error of a directory another Herald process holds.
pub(crate) fn in_use(dir: &Path) -> Error {
    Error::internal(format!(
        "data directory {} is in use by another Herald process",
        dir.display()
    ))
}

impl DirLock {
    /// Takes the lock of `dir` (created, private to the owner, when absent),
    /// without waiting: a directory another process holds is an error that
    /// names it.
    pub fn take(dir: &Path) -> Result<DirLock> {
        super::secrets::create_private_dir(dir)
            .map_err(|e| Error::internal(format!("cannot create {}: {e}", dir.display())))?;
        let path = dir.join("LOCK");
        let mut o = std::fs::OpenOptions::new();
        o.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(0o600);
        }
        let file = o
            .open(&path)
            .map_err(|e| Error::internal(format!("cannot open {}: {e}", path.display())))?;
        #[cfg(unix)]
        {
            use rustix::fs::{flock, FlockOperation};
            match flock(&file, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => {}
                Err(rustix::io::Errno::WOULDBLOCK) => return Err(in_use(dir)),
                Err(e) => {
                    return Err(Error::internal(format!(
                        "cannot lock {}: {e}",
                        path.display()
                    )))
                }
            }
        }
        Ok(DirLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[allow(unused_imports)]
    use crate::storage::*;

    #[test]
    fn a_second_lock_of_a_directory_is_refused_until_the_first_goes() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("data");
        let first = DirLock::take(&dir).unwrap();
        let err = DirLock::take(&dir).unwrap_err();
        assert!(err.message.contains("in use"), "{}", err.message);
        assert!(err.message.contains(&dir.display().to_string()));
        drop(first);
        DirLock::take(&dir).unwrap();
    }
}
