//! What a storage fact (`storage::Refusal`) means to a client: the API error
//! of each, decided here once for every backend.

use crate::error::Error;
use crate::storage::Refusal;

impl From<Refusal> for Error {
    fn from(r: Refusal) -> Error {
        match r {
            Refusal::Missing { kind, key } => Error::not_found(kind, key),
            Refusal::ProjectNameTaken(name) => {
                Error::conflict("project", Some(name), "unique", "project name taken")
            }
            Refusal::PublicKeyTaken => {
                Error::conflict("project", None, "unique", "public key already in use")
            }
            Refusal::FlowHandleTaken => {
                Error::field("handle", "unique", "a flow with this handle exists")
            }
            Refusal::AlreadySubscribed => Error::conflict(
                "subscription",
                None,
                "subscription_already_exists",
                "the user is already subscribed to this topic",
            ),
            Refusal::BadCursor => Error::invalid_param("cursor", "the cursor is not valid here"),
            Refusal::EntryRefused { entry, refusal } => refusal.into_error(&entry),
            Refusal::StaleChunk => Error::stale_chunk(),
            Refusal::IdempotencyRace => Error::idempotency_race(),
            Refusal::LeaseLost { run } => Error::conflict(
                "flow_run",
                Some(run.to_string()),
                "lease_lost",
                "another node expands this run now",
            ),
        }
    }
}
