//! The engine's test send of a channel (`POST /admin/v1/channels/{id}/test`):
//! one run of the channel's test flow (`rules::channel_test`) for one
//! existing user, accepted as every run is (one storage job, durable
//! before the answer, then delivered by the channel actors), and the
//! notification it made, for the caller to link to.

use super::engine::Engine;
use super::ops::RunRequest;
use crate::error::{Error, Result};
use crate::model::Timestamp;
use crate::rules::channel_test;
use crate::storage::{AcceptInput, NotificationFilter, PageReq, RunRecipient, RunTiming};
use crate::views::ChannelTestAccepted;
use serde_json::Value;
use uuid::Uuid;

/// A test send as the HTTP layer asks for it.
#[derive(Debug, Clone)]
pub struct ChannelTest {
    pub channel_id: Uuid,
    /// The recipient's external id.
    pub user: String,
    /// The run's `data` (an object); `subject` and `body` replace the
    /// test's own.
    pub data: Value,
    /// The project's timezone and storage quota, as a run takes them.
    pub timing: RunTiming,
}

impl Engine {
    /// Sends one test message through a channel to one user. Refusals, in
    /// this order: an unknown channel 404, a channel that cannot send 409
    /// (`provider_revoked`, `provider_not_configured`), an unknown user 422
    /// at `user_id`.
    pub async fn test_channel(&self, project: Uuid, t: ChannelTest) -> Result<ChannelTestAccepted> {
        let channel_id = t.channel_id;
        let answer = self
            .accept_prepared(project, 1, move |s| {
                let channel = s
                    .channel(&project, &channel_id)?
                    .ok_or_else(|| Error::not_found("channel", channel_id))?;
                channel_test::sendable(&channel)?;
                let user = channel_test::recipient(s.user_by_ext(&project, &t.user)?)?;
                Ok(RunRequest::Accept(Box::new(AcceptInput {
                    flow: channel_test::flow(&channel, Timestamp::now()),
                    recipients: vec![RunRecipient {
                        external_id: user.external_id,
                        patch: Default::default(),
                    }],
                    actor: None,
                    topic: None,
                    data: t.data,
                    idempotency: None,
                    timing: t.timing,
                    test_channel_id: Some(channel_id),
                })))
            })
            .await?;
        // no idempotency key, so never an answer stored under one
        let (run, _) = answer.map_err(|_| Error::internal("a test send found a stored answer"))?;
        let run_id = run.id;
        let notification = self
            .run(move |s| {
                let f = NotificationFilter {
                    flow_run_id: Some(run_id),
                    ..Default::default()
                };
                let req = PageReq {
                    limit: 1,
                    after: None,
                    before: None,
                };
                Ok(s.list_notifications(&project, &f, &req)?.items.pop())
            })
            .await?
            .ok_or_else(|| Error::internal("a test send made no notification"))?;
        Ok(ChannelTestAccepted::new(channel_id, &run, notification.id))
    }
}
