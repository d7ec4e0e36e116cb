//! in_app / `in_app`: the in-app feed, built into every project. It has no
//! settings and no transport: the user actors deliver it to the feed.

use super::{Clients, Provider, ProviderSpec, SendRequest, SendResult};
use crate::model::ChannelType;
use futures_util::future::BoxFuture;
use serde_json::json;
use std::sync::Arc;

/// Never built (the type has no value): the feed is not sent through a transport.
pub enum InApp {}

static SPEC: ProviderSpec = ProviderSpec {
    name: "in_app",
    channel_type: ChannelType::InApp,
    summary: "The in-app feed (built in, one per project): no settings.",
    example: || json!({}),
    // delivered to the feed at once, never attempted over a transport
    retry: false,
    fields: &[],
    together: &[],
    destinations: &[],
};

impl Provider for InApp {
    fn spec() -> &'static ProviderSpec {
        &SPEC
    }

    fn transport(_: &Clients) -> Option<Arc<dyn Provider>> {
        None
    }

    fn send(&self, _: SendRequest) -> BoxFuture<'static, SendResult> {
        match *self {}
    }
}
