//! Projects' credentials: how a secret is kept (its hash), how a new key is
//! made, what a project may be named, and secret rotation, the same on every
//! backend.

use crate::audit::{Actor, AuditChange};
use crate::error::{Error, Result};
use crate::model::{Project, Timestamp};
use crate::storage::{AuditRepo, ProjectRepo};
use sha2::{Digest, Sha256};
use std::time::Duration;

/// The longest grace period a rotated secret may keep: past it a leaked old
/// secret would outlive the point of rotating it.
pub const MAX_SECRET_GRACE: Duration = Duration::from_secs(30 * 24 * 3600);

/// A new project's name: 1 to 100 letters, digits, `-`, `_` or `.`, starting
/// with a letter or digit, so it needs no quoting in a shell or a URL.
pub fn check_project_name(name: &str) -> Result<()> {
    let ok = (1..=100).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(Error::field(
            "name",
            "format",
            "a project name is 1 to 100 letters, digits, '-', '_' or '.', starting with a letter or digit",
        ))
    }
}

/// What is stored of a secret key: its SHA-256 (keys are random, so a slow
/// hash would add nothing).
pub fn hash_secret(secret: &str) -> Vec<u8> {
    Sha256::digest(secret.as_bytes()).to_vec()
}

/// A new random key: `prefix` and 24 random bytes in hex.
pub fn random_key(prefix: &str) -> String {
    let b: [u8; 24] = rand::random();
    let mut s = String::with_capacity(prefix.len() + 48);
    s.push_str(prefix);
    for x in b {
        s.push_str(&format!("{x:02x}"));
    }
    s
}

/// Replaces `p`'s secret by the one hashed `hash` at `now`: the replaced one
/// keeps working for `grace` (none: refused at once); a secret replaced
/// earlier is forgotten.
pub fn rotate(p: &mut Project, hash: Vec<u8>, grace: Duration, now: Timestamp) {
    let old = std::mem::replace(&mut p.secret_hash, hash);
    let live = !grace.is_zero();
    p.previous_secret_hash = live.then_some(old);
    p.previous_secret_expires_at =
        live.then(|| now.plus_millis(grace.as_millis().min(i64::MAX as u128) as i64));
    p.secret_rotated_at = Some(now);
}

/// Gives the project `name` a new secret key (returned once; only its hash
/// is kept), under the project's lock (`ProjectRepo::update_project`).
///
/// Only the operator rotates a secret key (the operator API, `herald project
/// rotate-secret`): the audit log's `key.rotated` names `Actor::Operator`,
/// with when it was rotated and until when the previous key works, no key.
pub fn rotate_secret<S: ProjectRepo + AuditRepo + ?Sized>(
    st: &S, name: &str, grace: Duration, actor: &Actor,
) -> Result<(Project, String)> {
    if grace > MAX_SECRET_GRACE {
        return Err(Error::field(
            "grace_seconds",
            "number",
            format!("at most {} seconds (30 days)", MAX_SECRET_GRACE.as_secs()),
        ));
    }
    let p = st
        .find_project(crate::storage::ProjectRef::Name(name))?
        .ok_or_else(|| crate::storage::Refusal::missing("project", name))?;
    let secret = random_key("sk_");
    let hash = hash_secret(&secret);
    let mut before = None;
    let p = st.update_project(
        &p.id,
        Box::new(|p: &mut Project| {
            before = Some(crate::audit::redact::secret_key(p));
            rotate(p, hash, grace, Timestamp::now())
        }),
    )?;
    let mut change = AuditChange::new("key.rotated", p.id)
        .key("secret_key")
        .after(crate::audit::redact::secret_key(&p));
    if let Some(b) = before {
        change = change.before(b);
    }
    super::audit::record(st, &p.id, actor, change)?;
    Ok((p, secret))
}
