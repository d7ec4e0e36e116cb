//! The engine's rules over stored records, written once: pure functions that
//! take records and return the new record, the events to emit and a typed
//! outcome. Both backends (`store::sled`, `store::pg`) call them inside their
//! own lock or transaction, so a rule means the same on each and a change of
//! it is made in one place; what a refusal means to a client (its API error)
//! is decided here too, never inside `store/`.

pub mod audit;
pub mod channel_test;
pub mod composite;
pub mod content;
pub mod critical;
pub mod feed;
pub mod lookups;
pub mod preference_link;
pub mod preferences;
pub mod projects;
pub mod quiet_hours;
pub mod records;
pub mod refusals;
pub mod settle;
pub mod unsubscribe_link;
pub mod users;
