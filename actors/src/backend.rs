//! Opening and administering a backend: what the service and its commands
//! need of the stores beyond the engine's API, in one place. The HTTP crate
//! and the CLI name these, never `store::…`, so the backends' modules can be
//! rearranged without touching the layer above; each item here is a
//! re-export of the backend that has it.
//!
//! - PostgreSQL: recognising its URL, opening it (`PgStore`), migrating its
//!   schema, and the defaults of its pool and work leases;
//! - the embedded (sled) store's data directory: its lock (`DirLock`), its
//!   backups and restore, the free space left on its disk, and the file that
//!   holds its sealing key;
//! - project secrets: how a secret key is hashed for comparison, and how long
//!   a rotated one may keep working.

pub use crate::store::pg::{
    is_postgres_url, migrate as migrate_postgres, DEFAULT_LEASE as PG_DEFAULT_LEASE,
    DEFAULT_MAX_CONNECTIONS as PG_DEFAULT_MAX_CONNECTIONS,
};
pub use crate::store::PgStore;

pub use crate::store::backup::{backup_dir, restore, verify_backup};
pub use crate::store::health::available_space;
pub use crate::store::secrets::{make_private, DEFAULT_KEY_FILE};
pub use crate::store::DirLock;

pub use crate::store::{hash_secret, MAX_SECRET_GRACE};
