//! Secrets at rest: the data directory's secret key (a file outside the sled
//! tree), sealing of channel secret fields with it (AES-256-GCM), the check
//! that a store is opened with the key its secrets were sealed with, and the
//! owner-only file modes of everything Herald keeps on disk.
//!
//! Why these choices:
//! - The key is a file, never a record of the store, so a backup (an export of
//!   the sled trees) or a copy of the sled files alone never carries it.
//! - Each value gets a fresh random 96-bit nonce (values are few and written
//!   rarely, so random nonces are far from the collision bound) and the
//!   project id, channel id and field name as associated data: a ciphertext
//!   copied to another channel or field does not open.
//! - A store remembers a "key check" (a constant sealed with its key) so a wrong
//!   key file is refused at start with a clear message instead of failing at
//!   the first delivery.

use crate::error::{Error, Result};
use aes_gcm::aead::{Aead, Payload};
use aes_gcm::{Aes256Gcm, KeyInit, Nonce};
use std::io::Write;
use std::path::Path;
use uuid::Uuid;
use zeroize::Zeroizing;

/// Name of the key file in the data directory when no other path is given.
pub const DEFAULT_KEY_FILE: &str = "secret.key";

const NONCE_LEN: usize = 12;
const CHECK_AAD: &[u8] = b"herald/key-check/v1";
const CHECK_PLAIN: &[u8] = b"herald secret key check v1";
const CHANNEL_AAD: &[u8] = b"herald/channel-secret/v1\0";

/// Seals and opens values with the data directory's key.
pub(crate) struct Sealer {
    cipher: Aes256Gcm,
}

impl Sealer {
    fn new(key: &[u8; 32]) -> Sealer {
        Sealer {
            cipher: Aes256Gcm::new(key.into()),
        }
    }

    /// `nonce || ciphertext || tag`.
    pub(crate) fn seal(&self, aad: &[u8], plain: &[u8]) -> Vec<u8> {
        let nonce: [u8; NONCE_LEN] = rand::random();
        let ct = self
            .cipher
            .encrypt(&Nonce::from(nonce), Payload { msg: plain, aad })
            // Only fails for inputs over 64 GiB.
            .expect("AES-GCM sealing of a small value");
        let mut out = Vec::with_capacity(NONCE_LEN + ct.len());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&ct);
        out
    }

    /// The plaintext, or `None` when the key, the associated data or the bytes
    /// are not the ones it was sealed with.
    pub(crate) fn open(&self, aad: &[u8], sealed: &[u8]) -> Option<Zeroizing<Vec<u8>>> {
        if sealed.len() < NONCE_LEN {
            return None;
        }
        let (nonce, ct) = sealed.split_at(NONCE_LEN);
        let nonce: [u8; NONCE_LEN] = nonce.try_into().ok()?;
        self.cipher
            .decrypt(&Nonce::from(nonce), Payload { msg: ct, aad })
            .ok()
            .map(Zeroizing::new)
    }

    pub(crate) fn key_check(&self) -> Vec<u8> {
        self.seal(CHECK_AAD, CHECK_PLAIN)
    }

    pub(crate) fn matches(&self, check: &[u8]) -> bool {
        self.open(CHECK_AAD, check)
            .is_some_and(|p| p.as_slice() == CHECK_PLAIN)
    }
}

/// Associated data of a channel's secret field: a ciphertext is bound to its
/// project, channel and field.
pub(crate) fn channel_aad(project: &Uuid, channel: &Uuid, field: &str) -> Vec<u8> {
    let mut a = Vec::with_capacity(CHANNEL_AAD.len() + 32 + field.len());
    a.extend_from_slice(CHANNEL_AAD);
    a.extend_from_slice(project.as_bytes());
    a.extend_from_slice(channel.as_bytes());
    a.extend_from_slice(field.as_bytes());
    a
}

fn bad_key_file(path: &Path) -> Error {
    Error::internal(format!(
        "the secret key file {} must hold 64 hexadecimal digits (32 bytes), e.g. from `openssl rand -hex 32`",
        path.display()
    ))
}

/// Reads the key file: `Ok(None)` when it does not exist.
fn read_key(path: &Path) -> Result<Option<Sealer>> {
    let text = match std::fs::read(path) {
        Ok(t) => Zeroizing::new(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(Error::internal(format!(
                "cannot read the secret key file {}: {e}",
                path.display()
            )))
        }
    };
    let hex = std::str::from_utf8(&text)
        .map_err(|_| bad_key_file(path))?
        .trim();
    if hex.len() != 64 {
        return Err(bad_key_file(path));
    }
    let mut key = Zeroizing::new([0u8; 32]);
    for (i, b) in key.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad_key_file(path))?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(m) = std::fs::metadata(path) {
            if m.permissions().mode() & 0o077 != 0 {
                tracing::warn!(
                    path = %path.display(),
                    "the secret key file is readable by other users; make it 0600"
                );
            }
        }
    }
    Ok(Some(Sealer::new(&key)))
}

/// Creates a fresh key file, mode 0600, refusing to replace an existing one.
fn create_key(path: &Path) -> Result<Sealer> {
    let key = Zeroizing::new(rand::random::<[u8; 32]>());
    let hex: Zeroizing<String> =
        Zeroizing::new(key.iter().map(|b| format!("{b:02x}")).collect::<String>() + "\n");
    let fail = |e: std::io::Error| {
        Error::internal(format!(
            "cannot create the secret key file {}: {e}",
            path.display()
        ))
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_private_dir(parent).map_err(fail)?;
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(path).map_err(fail)?;
    f.write_all(hex.as_bytes()).map_err(fail)?;
    f.sync_all().map_err(fail)?;
    tracing::info!(path = %path.display(), "created the secret key file (keep a copy apart from backups)");
    Ok(Sealer::new(&key))
}

/// What the store holds, as far as the key is concerned.
pub(crate) struct Holdings {
    /// The key check written when the store first got a key.
    pub check: Option<Vec<u8>>,
    /// Whether any value is sealed (a missing or wrong key then loses data).
    pub sealed: bool,
}

/// The key for a store: read from `path`, or created there when absent and the
/// store holds nothing sealed. A missing or wrong key for a store with sealed
/// values is an error that says so. Returns the sealer and whether the key
/// check must be (re)written.
pub(crate) fn key_for_store(path: &Path, held: &Holdings) -> Result<(Sealer, bool)> {
    let sealer = match read_key(path)? {
        Some(s) => s,
        None if held.sealed => {
            return Err(Error::internal(format!(
                "the secret key file {} does not exist, and this data directory holds channel secrets sealed with a key: put the original key file there (or name it with --secret-key-file / HERALD_SECRET_KEY_FILE); Herald does not start with another key",
                path.display()
            )))
        }
        None => create_key(path)?,
    };
    match &held.check {
        Some(c) if sealer.matches(c) => Ok((sealer, false)),
        Some(_) if held.sealed => Err(Error::internal(format!(
            "the secret key in {} is not the key this data directory's channel secrets were sealed with: start with the original key file (--secret-key-file / HERALD_SECRET_KEY_FILE)",
            path.display()
        ))),
        // A new key for a store that has nothing sealed (say, restored from a
        // backup without its key file): nothing is lost, it is simply adopted.
        _ => Ok((sealer, true)),
    }
}

// ---------------------------------------------------------------- file modes

/// Creates `dir` (and missing parents) with mode 0700.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir)
}

/// Makes a file private to its owner (0600); used for backups, which may be
/// replacing an existing file (whose mode `create` keeps).
pub fn make_private(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Directories 0700 and files 0600 under `dir`, `dir` included: a data
/// directory written by an earlier Herald (or by sled in a process without the
/// binary's umask) is made private. Symbolic links are not followed.
pub fn tighten_modes(dir: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            let set = |p: &Path, mode: u32| {
                if let Err(e) = std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)) {
                    tracing::warn!(path = %p.display(), error = %e, "cannot make private");
                }
            };
            set(&d, 0o700);
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd.flatten() {
                let Ok(ft) = e.file_type() else { continue };
                let p = e.path();
                let mode = e.metadata().map(|m| m.permissions().mode() & 0o777);
                if ft.is_dir() {
                    stack.push(p);
                } else if ft.is_file() && mode.map_or(true, |m| m & 0o077 != 0) {
                    set(&p, 0o600);
                }
            }
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
}

#[cfg(test)]
mod tests {
    use super::*;
    #[allow(unused_imports)]
    use crate::storage::*;

    #[test]
    fn sealed_values_open_only_with_their_key_and_place() {
        let s = Sealer::new(&[7; 32]);
        let (p, c) = (Uuid::now_v7(), Uuid::now_v7());
        let aad = channel_aad(&p, &c, "auth_token");
        let a = s.seal(&aad, b"tok");
        let b = s.seal(&aad, b"tok");
        assert_ne!(a, b, "a fresh nonce per value");
        assert_eq!(s.open(&aad, &a).unwrap().as_slice(), b"tok");
        // another field, channel or key: refused
        assert!(s.open(&channel_aad(&p, &c, "password"), &a).is_none());
        assert!(s
            .open(&channel_aad(&p, &Uuid::now_v7(), "auth_token"), &a)
            .is_none());
        assert!(Sealer::new(&[8; 32]).open(&aad, &a).is_none());
        let mut t = a.clone();
        t[20] ^= 1;
        assert!(s.open(&aad, &t).is_none(), "tampering is detected");
        assert!(s.open(&aad, &a[..5]).is_none());
        assert!(s.matches(&s.key_check()));
        assert!(!Sealer::new(&[8; 32]).matches(&s.key_check()));
    }

    #[test]
    fn key_file_created_private_then_read_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k/secret.key");
        let none = Holdings {
            check: None,
            sealed: false,
        };
        let (s, write) = key_for_store(&path, &none).unwrap();
        assert!(write);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let m = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(m, 0o600);
        }
        let held = Holdings {
            check: Some(s.key_check()),
            sealed: true,
        };
        let (again, write) = key_for_store(&path, &held).unwrap();
        assert!(!write);
        assert!(again.matches(&s.key_check()));
        // another key: refused while something is sealed
        std::fs::write(&path, format!("{}\n", "ab".repeat(32))).unwrap();
        let e = key_for_store(&path, &held).err().unwrap();
        assert!(e.message.contains("not the key"), "{}", e.message);
        // missing: refused, and no new key is made
        std::fs::remove_file(&path).unwrap();
        let e = key_for_store(&path, &held).err().unwrap();
        assert!(e.message.contains("does not exist"), "{}", e.message);
        assert!(!path.exists());
        // malformed
        std::fs::write(&path, "short").unwrap();
        let e = key_for_store(&path, &held).err().unwrap();
        assert!(e.message.contains("64 hexadecimal digits"), "{}", e.message);
    }
}
