//! `ConsoleRepo`: what a backend keeps of the console's members, their
//! one-time sign-in links and their sessions (`crate::console` decides
//! everything about them: roles, expiry, hashing). Links and sessions are
//! stored under the SHA-256 of their token, never the token; every record
//! goes with its project, and a member's links and sessions go with them.

use crate::console::Role;
use crate::error::Result;
use crate::model::Timestamp;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A console member of a project.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsoleMember {
    pub project: Uuid,
    /// Lower-cased (`console::normalize_email`).
    pub email: String,
    pub role: Role,
    /// Argon2id in PHC form; `None` until their first link sets it.
    pub password_hash: Option<String>,
    pub created_at: Timestamp,
}

/// A one-time sign-in link (an invitation or a reset).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignInLink {
    pub project: Uuid,
    /// SHA-256 of the token.
    pub hash: Vec<u8>,
    pub email: String,
    pub expires_at: Timestamp,
}

/// A signed-in member's session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsoleSession {
    pub project: Uuid,
    /// SHA-256 of the token in the member's cookie.
    pub hash: Vec<u8>,
    pub email: String,
    /// What every state-changing request of the session carries back.
    pub csrf: String,
    pub created_at: Timestamp,
    /// Real time of the last request that wrote it (at most once a minute).
    pub last_seen: Timestamp,
}

/// Console members, sign-in links and sessions.
pub trait ConsoleRepo {
    fn console_member(&self, project: &Uuid, email: &str) -> Result<Option<ConsoleMember>>;
    /// The project's members, by email.
    fn console_members(&self, project: &Uuid) -> Result<Vec<ConsoleMember>>;
    /// Creates a member, or gives an existing one `m.role` (never a new
    /// password: only a used link sets that, `use_sign_in_link`), and in the
    /// same change stores `link`.
    fn put_console_member(&self, m: &ConsoleMember, link: Option<&SignInLink>) -> Result<()>;
    /// Deletes a member with their links and sessions; whether there was one.
    fn delete_console_member(&self, project: &Uuid, email: &str) -> Result<bool>;
    /// The link stored under `hash`, expired or not.
    fn sign_in_link(&self, project: &Uuid, hash: &[u8]) -> Result<Option<SignInLink>>;
    /// Uses the link under `hash`, in one change: deletes it and every other
    /// link of its member, sets the member's password hash and stores
    /// `session`. False (nothing changed) when the link is gone (used
    /// meanwhile) or its member is.
    fn use_sign_in_link(
        &self, project: &Uuid, hash: &[u8], password_hash: &str, session: &ConsoleSession,
    ) -> Result<bool>;
    fn put_console_session(&self, s: &ConsoleSession) -> Result<()>;
    /// The session under `hash` and its member as they are now (`None`: no
    /// such session, or its member is gone).
    fn console_session(
        &self, project: &Uuid, hash: &[u8],
    ) -> Result<Option<(ConsoleSession, ConsoleMember)>>;
    /// Moves a session's `last_seen` forward to `at` (never back).
    fn touch_console_session(&self, project: &Uuid, hash: &[u8], at: Timestamp) -> Result<()>;
    fn delete_console_session(&self, project: &Uuid, hash: &[u8]) -> Result<()>;
}
