//! The console's members, sign-in links and sessions (docs/CONSOLE.md): the
//! rules, written once for the HTTP layer, the operator API and the command
//! line. Storage keeps facts (`storage::ConsoleRepo`); what a role may do,
//! how long a link or an idle session lives, how passwords are hashed and
//! checked, and how tokens are made are decided here.
//!
//! Tokens (sign-in links and sessions) name their project in their first 16
//! bytes, so a backend finds the record under the project's key without an
//! index across projects, and deleting a project deletes its members' links
//! and sessions with it. Only a SHA-256 of a token is stored: a copy of the
//! store signs no one in.

use crate::error::{Error, ErrorCode, Result};
use crate::model::{Project, Timestamp};
use crate::storage::{ConsoleMember, ConsoleSession, SignInLink, Storage};
use base64::Engine as _;
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::time::Duration;
use subtle::ConstantTimeEq;
use uuid::Uuid;

/// How long a sign-in link works (once).
pub const LINK_TTL: Duration = Duration::from_secs(24 * 3600);
/// A session ends after this long without a request.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(12 * 3600);
/// A session's `last_seen` is written at most this often: a page and its
/// API calls do not each cost a write.
pub const TOUCH_EVERY: Duration = Duration::from_secs(60);
/// Password policy: at least 12 characters (length is what resists
/// guessing; no composition rules), at most 256 (Argon2 hashes whatever it
/// is given: the bound keeps a request from making it work on megabytes).
pub const MIN_PASSWORD_CHARS: usize = 12;
pub const MAX_PASSWORD_CHARS: usize = 256;

/// What a member may do in their project.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Everything, members and keys included.
    Owner,
    /// Flows, channels, topics, users, endpoints, settings.
    Editor,
    /// Reads only.
    Viewer,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::Owner, Role::Editor, Role::Viewer];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Owner => "owner",
            Role::Editor => "editor",
            Role::Viewer => "viewer",
        }
    }

    /// `owner`, `editor` or `viewer`; 422 on `field` otherwise.
    pub fn parse(s: &str, field: &str) -> Result<Role> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| {
                Error::field(
                    field.to_string(),
                    "inclusion",
                    "must be one of owner, editor, viewer",
                )
            })
    }

    /// Whether the role may make this kind of change.
    pub fn may(self, change: Change) -> bool {
        match change {
            Change::Read => true,
            Change::Configuration => matches!(self, Role::Owner | Role::Editor),
            Change::Keys | Change::Members => self == Role::Owner,
        }
    }
}

/// What a request does, as the roles see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Reads only.
    Read,
    /// Flows, channels, topics, users, endpoints, settings.
    Configuration,
    /// The project's secret key, signing key and link secret.
    Keys,
    /// Console members.
    Members,
}

/// 403 `forbidden` for a role that may not make a change.
pub fn require(role: Role, change: Change) -> Result<()> {
    if role.may(change) {
        return Ok(());
    }
    let what = match change {
        Change::Read => "read",
        Change::Configuration => "change the configuration",
        Change::Keys => "manage keys",
        Change::Members => "manage members",
    };
    Err(Error::new(
        ErrorCode::Forbidden,
        format!("a console {} may not {what}", role.as_str()),
    )
    .with("reason", "role")
    .with("role", role.as_str()))
}

/// An email as members are keyed: trimmed and lower-cased; 422 on `field`
/// when it is not `local@domain` (at most 254 characters, no spaces).
pub fn normalize_email(s: &str, field: &str) -> Result<String> {
    let e = s.trim().to_lowercase();
    let ok = e.len() <= 254
        && !e.chars().any(|c| c.is_whitespace() || c.is_control())
        && matches!(e.split_once('@'), Some((l, d)) if !l.is_empty() && !d.is_empty() && !d.contains('@'));
    if ok {
        Ok(e)
    } else {
        Err(Error::field(
            field.to_string(),
            "format",
            "must be an email address",
        ))
    }
}

/// The password policy (`MIN_PASSWORD_CHARS`..=`MAX_PASSWORD_CHARS`), and
/// the confirmation equal to it.
pub fn check_password(password: &str, confirm: &str) -> Result<()> {
    let n = password.chars().count();
    if n < MIN_PASSWORD_CHARS {
        return Err(Error::field(
            "password",
            "length",
            format!("must be at least {MIN_PASSWORD_CHARS} characters"),
        ));
    }
    if n > MAX_PASSWORD_CHARS {
        return Err(Error::field(
            "password",
            "length",
            format!("must be at most {MAX_PASSWORD_CHARS} characters"),
        ));
    }
    if password != confirm {
        return Err(Error::field(
            "password_confirmation",
            "format",
            "the two passwords differ",
        ));
    }
    Ok(())
}

/// Argon2id (the crate's defaults: 19 MiB, 2 passes, 1 lane, as OWASP
/// recommends), in PHC string form with its own salt.
pub fn hash_password(password: &str) -> Result<String> {
    use argon2::password_hash::{PasswordHasher, SaltString};
    let salt = SaltString::generate(&mut rand::rngs::OsRng);
    argon2::Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| Error::internal(format!("hashing a password: {e}")))
}

/// Whether `password` matches `hash`. Without a hash (no such member, or no
/// password set yet) a fixed hash is checked all the same and the answer is
/// false, so the time taken does not tell which emails are members.
pub fn verify_password(hash: Option<&str>, password: &str) -> bool {
    use argon2::password_hash::{PasswordHash, PasswordVerifier};
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let dummy = DUMMY.get_or_init(|| hash_password("not a password of anyone").unwrap_or_default());
    let (h, real) = match hash {
        Some(h) => (h, true),
        None => (dummy.as_str(), false),
    };
    let Ok(parsed) = PasswordHash::new(h) else {
        return false;
    };
    let ok = argon2::Argon2::default()
        .verify_password(password.as_bytes(), &parsed)
        .is_ok();
    ok && real
}

fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
}

/// A new token of `project`: its id and 32 random bytes, URL-safe.
pub fn new_token(project: &Uuid) -> String {
    let mut b = [0u8; 48];
    b[..16].copy_from_slice(project.as_bytes());
    rand::rngs::OsRng.fill_bytes(&mut b[16..]);
    b64(&b)
}

/// The project a token names and the hash it is stored under; `None` for
/// something that is not a token.
pub fn read_token(token: &str) -> Option<(Uuid, Vec<u8>)> {
    let b = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token.trim())
        .ok()?;
    if b.len() != 48 {
        return None;
    }
    let project = Uuid::from_slice(&b[..16]).ok()?;
    Some((project, Sha256::digest(&b).to_vec()))
}

/// A new CSRF token (32 random bytes, URL-safe).
pub fn new_csrf() -> String {
    let mut b = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut b);
    b64(&b)
}

/// Compares a presented CSRF token with the session's in constant time.
pub fn csrf_matches(given: &str, expected: &str) -> bool {
    !expected.is_empty() && bool::from(given.as_bytes().ct_eq(expected.as_bytes()))
}

/// A session as its member presents it: the session's record and the
/// member as they are now (a changed role counts at once).
#[derive(Clone, Debug)]
pub struct LiveSession {
    pub project: Project,
    pub member: ConsoleMember,
    pub session: ConsoleSession,
}

/// A new session for a member: its token (for the cookie) and its record.
pub fn new_session(member: &ConsoleMember, now: Timestamp) -> (String, ConsoleSession) {
    let token = new_token(&member.project);
    let (_, hash) = read_token(&token).expect("a new token reads back");
    let s = ConsoleSession {
        project: member.project,
        hash,
        email: member.email.clone(),
        csrf: new_csrf(),
        created_at: now,
        last_seen: now,
    };
    (token, s)
}

/// What `add_member` made: the project, the member and the one-time
/// sign-in token of their link.
#[derive(Clone, Debug)]
pub struct Invited {
    pub project: Project,
    pub member: ConsoleMember,
    pub token: String,
}

/// Adds a member to the named project with `role`, or gives an existing
/// member that role and a fresh link (a reset: their password works until
/// the link sets a new one); the link's token works once, for `ttl`.
pub fn add_member(
    s: &dyn Storage, project_name: &str, email: &str, role: Role, ttl: Duration,
) -> Result<Invited> {
    let email = normalize_email(email, "email")?;
    let project = s
        .project_by_name(project_name)?
        .ok_or_else(|| Error::not_found("project", project_name))?;
    let now = Timestamp::now();
    let member = match s.console_member(&project.id, &email)? {
        Some(mut m) => {
            if m.role == Role::Owner && role != Role::Owner {
                keeps_an_owner(s, &project.id, &email)?;
            }
            m.role = role;
            m
        }
        None => ConsoleMember {
            project: project.id,
            email,
            role,
            password_hash: None,
            created_at: now,
        },
    };
    let token = new_token(&project.id);
    let (_, hash) = read_token(&token).expect("a new token reads back");
    let link = SignInLink {
        project: project.id,
        hash,
        email: member.email.clone(),
        expires_at: Timestamp::from_millis(now.millis() + ttl.as_millis() as i64),
    };
    s.put_console_member(&member, Some(&link))?;
    Ok(Invited {
        project,
        member,
        token,
    })
}

/// 409 when `email` is the project's last owner (a project keeps one, or
/// no one could manage its members).
pub fn keeps_an_owner(s: &dyn Storage, project: &Uuid, email: &str) -> Result<()> {
    let others = s
        .console_members(project)?
        .into_iter()
        .filter(|m| m.role == Role::Owner && m.email != email)
        .count();
    if others == 0 {
        return Err(Error::conflict(
            "console_member",
            Some(email.to_string()),
            "last_owner",
            "the project's last owner cannot be removed or lose the role",
        ));
    }
    Ok(())
}

/// Whether a session last seen at `last_seen` has ended by `now`.
pub fn idle_expired(last_seen: Timestamp, now: Timestamp, idle: Duration) -> bool {
    now.millis() - last_seen.millis() >= idle.as_millis() as i64
}

/// Whether a session seen at `last_seen` is worth writing again at `now`.
pub fn worth_touching(last_seen: Timestamp, now: Timestamp) -> bool {
    now.millis() - last_seen.millis() >= TOUCH_EVERY.as_millis() as i64
}

/// Member changes reach the audit log through this one call.
///
/// It does nothing yet: the audit log's engine method is wired here when
/// the two meet, so every member change (invite, role, removal, password
/// set) is recorded the same way whichever door it came through.
pub fn audit_member_change(
    _s: &dyn Storage, _project: &Uuid, _actor: &crate::audit::Actor, _email: &str,
    _before: Option<&ConsoleMember>, _after: Option<&ConsoleMember>,
) {
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_name_their_project_and_hash_stably() {
        let p = Uuid::now_v7();
        let t = new_token(&p);
        let (q, h) = read_token(&t).unwrap();
        assert_eq!(p, q);
        assert_eq!(h, read_token(&t).unwrap().1);
        assert_ne!(t, new_token(&p));
        assert!(read_token("nope").is_none());
    }

    #[test]
    fn passwords_hash_with_argon2id_and_verify() {
        let h = hash_password("correct horse battery").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(verify_password(Some(&h), "correct horse battery"));
        assert!(!verify_password(Some(&h), "wrong horse battery"));
        assert!(!verify_password(None, "not a password of anyone"));
    }

    #[test]
    fn policy_and_emails() {
        assert!(check_password("short", "short").is_err());
        assert!(check_password("long enough pw", "long enough px").is_err());
        assert!(check_password("long enough pw", "long enough pw").is_ok());
        assert_eq!(
            normalize_email(" Ana@Example.COM ", "e").unwrap(),
            "ana@example.com"
        );
        for bad in ["", "ana", "@x", "a@", "a b@x", "a@b@c"] {
            assert!(normalize_email(bad, "e").is_err(), "{bad}");
        }
    }

    #[test]
    fn roles_allow_what_the_console_promises() {
        assert!(Role::Viewer.may(Change::Read));
        assert!(!Role::Viewer.may(Change::Configuration));
        assert!(Role::Editor.may(Change::Configuration));
        assert!(!Role::Editor.may(Change::Keys));
        assert!(!Role::Editor.may(Change::Members));
        assert!(Role::Owner.may(Change::Keys) && Role::Owner.may(Change::Members));
    }
}
