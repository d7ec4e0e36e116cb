//! herald-engine: Herald's delivery engine.
//!
//! Domain types (`model`), input rules (`validate`), the delivery rules
//! (`delivery`), the storage interface (`storage`) and its backends (`store`:
//! sled, PostgreSQL), templates (`render`), the actors that deliver and the `Engine` the
//! HTTP layer calls (`actors`), and the channel providers (`providers`). It
//! knows nothing of HTTP: the `herald` crate maps its `Error` codes to
//! responses.

pub mod actors;
pub mod audit;
pub mod backend;
pub mod bus;
pub mod catalog;
pub mod console;
pub mod delivery;
pub mod egress;
pub mod error;
pub mod events;
pub mod feedback;
pub mod health;
pub mod model;
pub mod providers;
pub mod quota;
pub mod render;
pub mod retention;
pub mod rules;
pub mod storage;
pub mod store;
pub mod suppression;
pub mod trace;
pub mod validate;
pub mod views;

pub use actors::{Engine, EngineConfig};
pub use error::{Disclosure, Error, ErrorCode, FieldError, Result, RetryAfter, Validator};
pub use storage::Storage;
pub use store::Store;
