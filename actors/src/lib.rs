//! herald-actors: Herald's delivery engine.
//!
//! Domain types (`model`), input rules (`validate`), the sled store (`store`),
//! templates (`render`), the actors that deliver (`actors`) and the channel
//! providers (`providers`). It knows nothing of HTTP: the `herald` crate maps its
//! `Error` codes to responses.

pub mod actors;
pub mod egress;
pub mod error;
pub mod model;
pub mod providers;
pub mod render;
pub mod store;
pub mod validate;

pub use actors::{Engine, EngineConfig};
pub use error::{Disclosure, Error, ErrorCode, FieldError, Result, RetryAfter, Validator};
pub use store::Store;
