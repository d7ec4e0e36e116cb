//! Operations composed of storage calls, written once for every backend:
//! inherent methods of `dyn Storage`, so an engine caller holding the
//! storage interface calls them as it calls a trait method, and no backend
//! implements them. Each one also holds what is a rule rather than storage
//! (a new secret, a new record, what absence means to a client).

use crate::error::{Error, Result};
use crate::events::{new_secret, WebhookEndpoint};
use crate::model::{User, UserPatch};
use crate::storage::Storage;
use std::time::Duration;
use uuid::Uuid;

impl dyn Storage {
    /// A new signing secret for an event endpoint (returned this once); the
    /// previous one signs for `grace` (`EventRepo::replace_event_secret`).
    pub fn rotate_event_secret(
        &self,
        project: &Uuid,
        id: &Uuid,
        grace: Duration,
    ) -> Result<(WebhookEndpoint, String)> {
        let secret = new_secret();
        let ep = self.replace_event_secret(project, id, &secret, grace)?;
        Ok((ep, secret))
    }

    /// Creates or patches one user (`UserRepo::upsert_users` of one item);
    /// true when it was created.
    pub fn upsert_user(
        &self,
        project: &Uuid,
        ext: &str,
        patch: &UserPatch,
    ) -> Result<(User, bool)> {
        self.upsert_users(project, &[(ext, patch)])?
            .pop()
            .ok_or_else(|| Error::internal("an upsert returned no user"))
    }

    /// A user by external id; 404 when there is none.
    pub fn user_required(&self, project: &Uuid, ext: &str) -> Result<User> {
        self.user_by_ext(project, ext)?
            .ok_or_else(|| Error::not_found("user", ext))
    }
}
