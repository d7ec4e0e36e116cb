//! The delivery rules, written against the storage interface's values and
//! free of any backend's types:
//!
//! - `accept`: accepting a run (checks, recipients, users as patched, and what
//!   it stages per recipient: preferences applied, templates rendered, in-app
//!   deliveries settled at once or queued), stored by `RunRepo::commit_run`
//!   and staged again when a user changed meanwhile;
//! - `expand`: a topic run's expansion, chunk by chunk (which subscribers it
//!   notifies), each chunk stored by `RunRepo::commit_chunk`;
//! - `settle`: an attempt's outcome applied to its delivery, when
//!   notifications and runs become processed, and which queued in-app
//!   deliveries go to which user's feed;
//! - `frames`: the text of live-feed frames and the events' kinds;
//! - `tally`: the delivery metrics, counted per batch written;
//! - `clock`: project time (the real clock or a project's test clock), the
//!   deliveries parked until a test clock reaches them, and durations;
//! - `cancel`: which waiting deliveries a run cancellation stops;
//! - `window`: send windows of channel steps in the recipient's timezone;
//! - `throttle`: throttle steps, decided at staging with their counters;
//! - `batch`: batch (digest) steps, opened and joined at staging, closed
//!   and rendered when the opener's deliveries come due;
//! - `conditions`: step conditions (`if`), decided at staging or, over
//!   earlier steps, when the delivery comes due;
//! - `failover`: when a delivery its channel cannot send moves to the
//!   step's next backup channel.
//! - `route`: route steps, channels tried one after another: what a hop
//!   (or a gated delivery) does when it comes due, and what a settled hop
//!   lets go sooner.

pub(crate) mod accept;
pub use accept::preview::{Preview, PreviewError, PreviewInput, StepPreview};
pub mod batch;
pub mod cancel;
pub mod clock;
pub mod conditions;
pub(crate) mod expand;
pub mod failover;
pub(crate) mod feed_flags;
pub mod frames;
pub mod route;
pub mod sandbox;
pub(crate) mod settle;
pub(crate) mod tally;
pub mod throttle;
pub mod window;
