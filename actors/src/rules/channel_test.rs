//! A channel's test send (`Engine::test_channel`): what it may be sent
//! through and to whom, and the one-step flow it runs.
//!
//! A test goes through the normal delivery pipeline (stored, traced,
//! retried, suppression, sandbox and egress applied, listed in Messages),
//! so it is an ordinary run of a flow that is never stored: its snapshot
//! lives in the run (`FlowRun::flow`), as every run's does. That flow has
//! the channel's id and name, so a notification list filtered by the
//! channel's id finds the channel's tests and a filter naming a real flow
//! never does; the run and its notification carry `test_channel_id`,
//! which is how a view tells a test from a flow's message.
//!
//! A test is an operator's deliberate action to see that the channel
//! works, so it is critical (`rules::critical`): the recipient's
//! preferences and quiet hours do not hold it back (the trace says
//! `preference.ignored`); an address's suppression still does, as it
//! protects the sender.

use crate::error::{Error, Result};
use crate::model::{Channel, Flow, FlowStatus, Step, Template, Timestamp, User};

/// The handle of a test's flow: never one a stored flow has (handles
/// begin with a letter or digit), so no preference or filter by handle
/// names it.
pub const TEST_FLOW_HANDLE: &str = "_channel_test";

/// The subject of a test unless its `data` gives `subject`.
pub const TEST_SUBJECT: &str = "Test message from Herald";

/// Whether `channel` can send a test: 409 `provider_revoked` or
/// `provider_not_configured` (with `current_status`), as activating a flow
/// that sends through it is.
pub fn sendable(channel: &Channel) -> Result<()> {
    channel.usable()
}

/// The recipient of a test: an existing user (422 `inclusion` at
/// `user_id` otherwise, as a run's `actor` naming nobody is). A test
/// creates no user: a new one would have no address to send to.
pub fn recipient(user: Option<User>) -> Result<User> {
    user.ok_or_else(|| Error::field("user_id", "inclusion", "no user with this external_id"))
}

/// The flow a test of `channel` runs: one channel step through it, with a
/// fixed template that `data.subject` and `data.body` replace when given.
/// Email has no layout (the test is of the channel, not the content).
pub fn flow(channel: &Channel, now: Timestamp) -> Flow {
    let template = Template {
        subject: Some(format!(
            "{{% if data.subject %}}{{{{ data.subject }}}}{{% else %}}{TEST_SUBJECT}{{% endif %}}"
        )),
        body: Some(
            "{% if data.body %}{{ data.body }}{% else %}This is a test message from Herald \
             through the channel \u{201c}{{ flow.name }}\u{201d}. If you read it, the \
             channel works.{% endif %}"
                .into(),
        ),
        ..Default::default()
    };
    Flow {
        id: channel.id,
        handle: TEST_FLOW_HANDLE.into(),
        name: channel.name.clone(),
        description: Some("A test send of the channel".into()),
        status: FlowStatus::Active,
        steps: vec![Step {
            kind: "channel".into(),
            channel_id: Some(channel.id),
            template: Some(template),
            seconds: None,
            cond: None,
            limit: None,
            window: None,
            send_window: None,
            max_window: None,
            layout: Some(None),
            fallback_channel_ids: vec![],
            success: None,
            channels: vec![],
        }],
        critical: true,
        commercial: false,
        categories: vec![],
        created_at: now,
        updated_at: now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    fn channel() -> Channel {
        let now = Timestamp::now();
        let mut c = Channel::builtin_in_app(Uuid::now_v7(), now);
        c.name = "Ops {{ x }} hook".into();
        c
    }

    #[test]
    fn the_flow_is_critical_one_step_and_named_after_the_channel() {
        let c = channel();
        let f = flow(&c, Timestamp::now());
        assert_eq!(f.id, c.id);
        assert!(f.critical && !f.commercial);
        assert_eq!(f.steps.len(), 1);
        assert_eq!(f.steps[0].channel_id, Some(c.id));
        assert_eq!(f.name, c.name, "the name is data, never template source");
        assert!(!crate::validate::is_handle(TEST_FLOW_HANDLE));
    }

    #[test]
    fn an_unknown_user_is_422_at_user_id() {
        let e = recipient(None).unwrap_err();
        assert_eq!(e.code, crate::ErrorCode::ValidationFailed);
        assert!(format!("{e:?}").contains("user_id"), "{e:?}");
    }
}
