//! The delivery rules, written against the storage interface's values and
//! free of any backend's types:
//!
//! - `accept`: what a run stages per recipient (preferences applied, templates
//!   rendered, in-app deliveries settled at once or queued);
//! - `expand`: which subscribers of a topic run's chunk it notifies;
//! - `settle`: an attempt's outcome applied to its delivery, and when
//!   notifications and runs become processed;
//! - `frames`: the text of live-feed frames;
//! - `tally`: the delivery metrics, counted per batch written.

pub(crate) mod accept;
pub(crate) mod expand;
pub mod frames;
pub(crate) mod settle;
pub(crate) mod tally;
