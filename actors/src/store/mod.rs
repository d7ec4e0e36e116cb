//! Storage backends: the implementations of `storage::Storage`.
//!
//! `sled` is the embedded backend (grouped records, packed indexes, group
//! commit, health and recovery, sealed secrets, backups). Its `Store` is also
//! used directly where a command needs the concrete backend (backups, project
//! commands, opening the data directory); the engine and the HTTP layer reach
//! it through the interface. `pg` is the PostgreSQL backend (`PgStore`), with
//! its schema migrations embedded in the binary.

pub(crate) mod codec;
pub mod pg;
mod sled;
mod trace_codec;

pub use self::pg::PgStore;
pub use self::sled::*;
