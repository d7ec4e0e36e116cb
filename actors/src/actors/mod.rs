//! The engine's actors and the `Engine` handle that owns them.
//!
//! - `UserActor`: one per active user; serialises every change to the user's feed.
//! - `FlowRunActor`: one per run in progress; expands topic runs, hands deliveries
//!   to the supervisor, stops once the run is processed.
//! - `DeliverySupervisor`: starts one `ChannelActor` per channel type under actix
//!   supervision; a crashed one restarts and reloads its queue from sled.
//!
//! Engine actors live on their own arbiters (threads), never on the HTTP workers.
//! They call the store inline for short reads and batched writes (sled operations
//! take microseconds; the slow part, flushing, is the group-commit thread's, and
//! actors wait for it asynchronously).

mod channel;
mod engine;
mod flow_run;
mod supervisor;
mod user;

pub use channel::ChannelActor;
pub use engine::{Engine, EngineConfig};
pub use flow_run::FlowRunActor;
pub use supervisor::{DeliverySupervisor, Dispatch};
pub use user::{Connect, Disconnect, LiveFrame, MarkAll, PushFrames, UpdateEntry, UserActor};
