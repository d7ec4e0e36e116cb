//! The live feed: a user's feed changes pushed over a WebSocket as they
//! happen. Its parts, from the wire inwards:
//!
//! - `upgrade`: the connection path that takes a `101` answer's connection
//!   off the HTTP layer and hands it to the socket;
//! - `feed`: the `GET /user/v1/feed/live` handler (authentication before or
//!   after the upgrade) and the socket's task (frames in, frames out, pings,
//!   the close handshake);
//! - `ws`: WebSocket framing (RFC 6455);
//! - `sockets`: the registry of open sockets and each socket's inbox, which
//!   the engine's user actors write to;
//! - `bus`: in a cluster, the project changes that close sockets on every
//!   node.
//!
//! The registry depends on nothing of the socket, so `state` and
//! `configuration` can hold it without reaching back into the handler.

pub mod bus;
pub mod feed;
pub mod sockets;
pub mod upgrade;
pub mod ws;
