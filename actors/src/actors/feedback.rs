//! The engine's door to delivery feedback (`crate::feedback`): a provider's
//! callback at `POST /hooks/v1/{channel_id}`, verified by its provider's
//! verifier and applied report by report (`Engine::provider_callback`).
//!
//! The channel is found by id whatever its project; a report counts only
//! for that project's messages: a message id the index does not hold for
//! the channel in its project (unknown, or another project's) is answered
//! like any other report and ignored, so a callback learns nothing of other
//! projects. Each report's outcome is counted in
//! `herald_feedback_reports_total{outcome}` (`applied`, `duplicate`,
//! `ignored`, `unknown`).

use super::engine::Engine;
use crate::error::{Error, ErrorCode, Result};
use crate::feedback::{self, Applied, Hook, Refused, Report, ReportKind, Verified};
use crate::model::{Channel, Timestamp};
use std::time::Duration;
use uuid::Uuid;

/// A provider's callback as the HTTP layer received it.
pub struct Callback {
    /// The absolute URL the provider called (`Hook::url`).
    pub url: String,
    /// The request headers, names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// What a callback did, per outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallbackDone {
    pub applied: usize,
    pub duplicate: usize,
    pub ignored: usize,
    pub unknown: usize,
}

/// How long the subscription confirmation GET may take.
const CONFIRM_TIMEOUT: Duration = Duration::from_secs(10);

/// 404 for a channel that does not exist or whose provider has no callbacks.
fn no_callbacks(id: &Uuid) -> Error {
    Error::not_found("channel", id)
}

/// 401 for a callback its verifier refused.
fn refused(r: Refused) -> Error {
    Error::new(
        ErrorCode::Unauthenticated,
        format!("the callback was refused: {}", r.0),
    )
    .with("auth", "provider_signature")
    .with("reason", "invalid_signature")
}

/// The provider's verifier of a channel's callbacks (`None`: its provider
/// has none). `config` is the channel's configuration with its secrets
/// opened, as a JSON object. `certs`: the engine's SNS signing certificates
/// (`ses` fetches its message's certificate).
async fn verify(
    c: &Channel, config: &serde_json::Value, hook: &Hook<'_>, now: Timestamp,
    certs: &feedback::ses::SnsCerts,
) -> Option<std::result::Result<Verified, Refused>> {
    Some(match c.provider.as_str() {
        "postmark" => feedback::postmark::verify(config, hook, now),
        "mailgun" => feedback::mailgun::verify(config, hook, now),
        "twilio" => feedback::twilio::verify(config, hook, now),
        "sendgrid" => feedback::sendgrid::verify(config, hook, now),
        "vonage" => feedback::vonage::verify(config, hook, now),
        "ses" => feedback::ses::verify(config, hook, now, certs).await,
        _ => return None,
    })
}

impl Engine {
    /// Verifies and applies a provider's callback to channel `channel_id`:
    /// 404 when there is no such channel or its provider has no callbacks,
    /// 401 when the verifier refuses it (nothing changes); otherwise each
    /// report goes through `feedback::apply` (see `CallbackDone`), and an
    /// SNS subscription is confirmed. Answers once what it changed is
    /// durable.
    pub async fn provider_callback(&self, channel_id: Uuid, cb: Callback) -> Result<CallbackDone> {
        let found = self
            .run(move |s| {
                let Some(p) = s.channel_project(&channel_id)? else {
                    return Ok(None);
                };
                Ok(s.channel(&p, &channel_id)?.map(|c| (p, c)))
            })
            .await?;
        let Some((project, channel)) = found else {
            return Err(no_callbacks(&channel_id));
        };
        let now = Timestamp::now();
        let config = serde_json::Value::Object(channel.config.clone());
        let hook = Hook {
            url: &cb.url,
            headers: &cb.headers,
            body: &cb.body,
        };
        let verified = verify(&channel, &config, &hook, now, self.sns_certs())
            .await
            .ok_or_else(|| no_callbacks(&channel_id))?
            .map_err(refused)?;
        match verified {
            Verified::ConfirmSubscription { subscribe_url } => {
                self.confirm_subscription(&subscribe_url).await?;
                Ok(CallbackDone::default())
            }
            Verified::Reports(reports) => {
                let done = self.apply_reports(project, channel, reports, now).await?;
                if done.applied > 0 {
                    self.durable().await?;
                }
                Ok(done)
            }
        }
    }

    /// Applies reports one by one, each in its own atomic change.
    async fn apply_reports(
        &self, project: Uuid, channel: Channel, reports: Vec<Report>, now: Timestamp,
    ) -> Result<CallbackDone> {
        self.run(move |s| {
            let mut done = CallbackDone::default();
            for r in reports {
                let id = feedback::normalize_message_id(&r.message_id);
                let outcome = match s.sent_message(&project, &channel.id, id)? {
                    None => "unknown",
                    Some(m) => {
                        let mut what = Applied::Ignored;
                        let provider = channel.provider.as_str();
                        let rule = |d: &mut crate::model::Delivery| {
                            what = feedback::apply(d, &r, now);
                            (what == Applied::Changed)
                                .then(|| feedback::trace_entry(d, provider, &r, now))
                        };
                        let found = s.apply_report(&project, &m.delivery_id, Box::new(rule))?;
                        if found.is_none() {
                            "unknown"
                        } else {
                            if what == Applied::Changed
                                && matches!(r.kind, ReportKind::Bounced(_) | ReportKind::Complained)
                            {
                                crate::suppression::on_report(
                                    s,
                                    &project,
                                    channel.channel_type,
                                    &m.address,
                                    r.kind,
                                    r.at.unwrap_or(now),
                                )?;
                            }
                            what.as_str()
                        }
                    }
                };
                match outcome {
                    "applied" => done.applied += 1,
                    "duplicate" => done.duplicate += 1,
                    "ignored" => done.ignored += 1,
                    _ => done.unknown += 1,
                }
                metrics::counter!("herald_feedback_reports_total", "outcome" => outcome)
                    .increment(1);
            }
            Ok(done)
        })
        .await
    }

    /// GETs an SNS subscription's confirmation URL once, through the egress
    /// guard (the SES verifier checked that it is an SNS host).
    async fn confirm_subscription(&self, url: &str) -> Result<()> {
        let unavailable = |why: String| {
            Error::new(
                ErrorCode::ServiceUnavailable,
                format!("the subscription could not be confirmed: {why}"),
            )
        };
        let url = self
            .egress()
            .check_url(url)
            .map_err(|e| unavailable(e.to_string()))?
            .ok_or_else(|| unavailable("not an http(s) URL".into()))?;
        let client = crate::egress::client_builder(self.egress())
            .timeout(CONFIRM_TIMEOUT)
            .build()
            .map_err(|e| unavailable(e.to_string()))?;
        let resp = client
            .get(url)
            .send()
            .await
            .map_err(|e| unavailable(e.to_string()))?;
        if !resp.status().is_success() {
            return Err(unavailable(format!("it answered {}", resp.status())));
        }
        Ok(())
    }
}
