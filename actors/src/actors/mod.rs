//! The engine's actors and the `Engine` handle that owns them.
//!
//! - `UserActor`: one per active user; holds its sockets, applies the user's own
//!   feed changes, and pushes durable frames to the sockets in `seq` order.
//! - `FlowRunActor`: one per run in progress; expands topic runs, hands deliveries
//!   to the supervisor, stops once the run is processed.
//! - `DeliverySupervisor`: starts one `ChannelActor` per channel type under actix
//!   supervision; a crashed one restarts and reloads its queue from sled.
//! - the event sender (`events`): a task that POSTs the event outbox to the
//!   projects' event endpoints.
//!
//! `Engine` also carries the operations the HTTP layer calls (`ops`): each
//! persists through the storage interface on the blocking pool, and one that
//! lets deliveries or frames go waits for durability first (`Engine::release`).
//!
//! `channel_test` sends a channel's test message (a run of a one-step
//! flow made for it, `rules::channel_test`).
//!
//! `audit` reads a project's audit log and records changes made outside the
//! engine; `workflow` adds the operations of project clocks and run cancellation;
//! `suppressions` those of the suppression list; `presence` counts this
//! node's live-feed sockets per user and reads a recipient's presence for
//! the step conditions that name it; `health` keeps each channel's circuit
//! breaker (`crate::health`) and its shared state.
//!
//! `cluster` shares the work between the nodes of one database: the node
//! id, claims of topic expansions, lease renewals, and the entry points a
//! message bus between the nodes calls (`Engine::announce_work`,
//! `Engine::wake_queue`).
//!
//! Engine actors live on their own arbiters (threads), never on the HTTP workers.
//! They read the store inline for short lookups; their batched writes run on the
//! blocking pool, and flushing is the group-commit thread's, awaited
//! asynchronously.

mod audit;
mod catalog;
mod channel;
mod channel_test;
mod cluster;
mod console;
mod content;
mod engine;
mod event_endpoints;
mod events;
mod feed_pages;
mod feedback;
mod flow_run;
mod health;
mod lifecycle;
mod notifications;
mod ops;
mod overview;
pub mod poison;
mod presence;
mod reads;
mod search;
mod start;
mod supervisor;
mod suppressions;
mod unsubscribe;
mod user;
mod workflow;

pub use catalog::PreferenceSetting;
pub use channel::ChannelActor;
pub use channel::Dispatch;
pub use channel_test::ChannelTest;
pub use console::NewSession;
pub use engine::DEFAULT_CLAIM_POLL;
pub use engine::{
    Engine, EngineConfig, DEFAULT_CONCURRENCY, DEFAULT_PROJECT_INFLIGHT, PROJECT_STAGING_UNITS,
};
pub use event_endpoints::{EndpointChange, EventEndpoints};
pub use feedback::{Callback, CallbackDone};
pub use flow_run::FlowRunActor;
pub use lifecycle::{batch_size, INLINE_ERASURE_STEPS};
pub use notifications::{DeliveryQuery, NotificationQuery, Notifications};
pub use ops::{RunAnswer, Subscriber};
pub use overview::{ChannelCounts, Count, Overview, OVERVIEW_CAP};
pub use search::{Found, SEARCH_CAP};
pub use supervisor::DeliverySupervisor;
pub use unsubscribe::UnsubscribeTarget;
pub use user::{
    Connect, Disconnect, FeedFilters, LiveFrame, LiveSink, MarkAll, PushFrames, UpdateEntry,
    UserActor,
};
