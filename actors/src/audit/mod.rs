//! The audit log: who changed what in a project's configuration (flows,
//! channels, topics, event endpoints, settings, keys, console members), with
//! the record before and after, secrets never included.
//!
//! `Actor` names who made a change; every engine method that changes
//! configuration is told who calls it, whichever door the change came through
//! (the Admin API's secret key, a console member's session, the operator's
//! command line). `AuditChange` is what a change says about itself and
//! `AuditEntry` the stored record (`entry`); `redact` makes the before and
//! after snapshots and takes the secrets out of them. Appending is
//! `rules::audit::record`, the one function every change calls.

mod entry;
pub mod redact;

pub use entry::{AuditChange, AuditEntry};

use serde::{Deserialize, Serialize};

/// Who made a change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Actor {
    /// A caller holding the project's secret key (the Admin API).
    Api,
    /// The operator: `herald project …` / `herald console …` on the command
    /// line, or the operator API.
    Operator,
    /// A console member, by the email they sign in with.
    Member { email: String },
}

impl Actor {
    /// How the audit log names the actor: a member's email, `api` or
    /// `operator`.
    pub fn who(&self) -> &str {
        match self {
            Actor::Api => "api",
            Actor::Operator => "operator",
            Actor::Member { email } => email,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_each_actor_as_the_log_shows_it() {
        assert_eq!(Actor::Api.who(), "api");
        assert_eq!(Actor::Operator.who(), "operator");
        let m = Actor::Member {
            email: "ana@example.com".into(),
        };
        assert_eq!(m.who(), "ana@example.com");
    }
}
