//! The event sender: works off the event outbox (`EventRepo::due_events`),
//! POSTing each event to its endpoint, signed the Standard Webhooks way,
//! and records every attempt (`EventRepo::record_event_attempts`).
//!
//! One loop on the engine's first arbiter takes up to `BATCH` due events
//! (at most one per endpoint and resource, the oldest, so a resource's
//! events go in order) of the endpoints it is not already serving, and
//! starts one task per endpoint: it sends that endpoint's events, at most
//! `PER_ENDPOINT` at once, and records their outcomes in one commit. An
//! endpoint that hangs therefore only holds its own events back (for up to
//! the attempt timeout); the others go on. When nothing is due the loop
//! looks again after `IDLE`. The outbox is the only state: a restart (or a
//! `kill -9`) loses nothing, and an event sent but not recorded is sent
//! again with the same `webhook-id`.
//!
//! Every request goes through the egress guard like a provider's: the
//! client resolves through the guarded resolver and an IP-literal URL is
//! checked before the request. Failures (transport errors, non-2xx) are
//! retried with the deliveries' backoff with full jitter (`RetryPolicy`),
//! honouring `Retry-After`, until the retry horizon has passed since the
//! event's first attempt; then its endpoint is disabled with the reason.
//!
//! An attempt keeps the start of the answer's body only from a public
//! address. A destination that is not public passed the guard only because
//! the operator opened its range (`--egress-allow`, or the guard off): there
//! the answer is an internal service's, which a tenant must not read back
//! through the attempts, so only its status is kept, as for providers.

use super::channel::RetryPolicy;
use super::engine::Engine;
use crate::events::{
    signature_header, AttemptNext, EventAttempt, OutboxEvent, ATTEMPT_TIMEOUT, LOG_RETENTION,
    RESPONSE_KEPT,
};
use crate::model::Timestamp;
use crate::storage::Sweep;
use futures_util::StreamExt;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// Due events taken per look at the outbox.
const BATCH: usize = 512;
/// Requests in flight at once to one endpoint.
const PER_ENDPOINT: usize = 16;
/// Endpoints served at once (their tasks).
const MAX_BUSY: usize = 64;
/// How long the sender waits before looking at an outbox with nothing due.
const IDLE: Duration = Duration::from_millis(100);
/// How often old log entries and attempts are swept.
const SWEEP_EVERY: Duration = Duration::from_secs(600);

/// The backoff between attempts of one event: 1 s doubling up to 10 min,
/// with full jitter (the deliveries' policy; the horizon, not a count,
/// ends the retries).
const POLICY: RetryPolicy = RetryPolicy {
    max_attempts: u32::MAX,
    base_seconds: 1.0,
    max_seconds: 600.0,
};

/// Where and how one endpoint's events are sent this round.
struct Target {
    url: String,
    secrets: Vec<String>,
}

/// Starts the sender on the engine's first arbiter.
pub(crate) fn start(engine: Engine) {
    let egress = engine.egress().clone();
    let client = match crate::egress::client_builder(&egress)
        .timeout(ATTEMPT_TIMEOUT)
        .build()
    {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(error = %e, "event sender: no HTTP client; events stay in the outbox");
            return;
        }
    };
    let e = engine.clone();
    engine.arbiter(0).spawn(async move { run(e, client).await });
}

/// The endpoints being served, `(project, endpoint)`, and the wake-up the
/// loop waits for when one is done (so its next events need not wait `IDLE`).
#[derive(Default)]
struct BusySet {
    set: Mutex<HashSet<(Uuid, Uuid)>>,
    done: tokio::sync::Notify,
}

type Busy = Arc<BusySet>;

/// Takes an endpoint off `Busy` when its task ends, however it ends.
struct Serving(Busy, (Uuid, Uuid));

impl Drop for Serving {
    fn drop(&mut self) {
        held(&self.0).remove(&self.1);
        self.0.done.notify_one();
    }
}

/// The busy set (never held across an await).
fn held(b: &Busy) -> MutexGuard<'_, HashSet<(Uuid, Uuid)>> {
    b.set.lock().unwrap_or_else(|p| p.into_inner())
}

async fn run(engine: Engine, client: reqwest::Client) {
    let mut last_sweep = Instant::now();
    let busy: Busy = Arc::default();
    while engine.is_running() {
        if last_sweep.elapsed() >= SWEEP_EVERY {
            last_sweep = Instant::now();
            let before = Timestamp::now().millis() - LOG_RETENTION.as_millis() as i64;
            if let Err(e) = engine
                .run(move |s| s.sweep(Sweep::EventLogs { before_ms: before }, 100_000))
                .await
            {
                tracing::warn!(error = %e, "event log sweep failed");
            }
        }
        match look(&engine, &client, &busy).await {
            Ok(0) => {
                tokio::select! {
                    _ = tokio::time::sleep(IDLE) => {}
                    _ = busy.done.notified() => {}
                }
            }
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e, "event sender: reading the outbox failed; retrying");
                tokio::time::sleep(IDLE * 10).await;
            }
        }
    }
}

/// One look at the outbox: starts a task for each endpoint with due events
/// that is not being served; how many tasks it started.
async fn look(
    engine: &Engine, client: &reqwest::Client, busy: &Busy,
) -> crate::error::Result<usize> {
    if held(busy).len() >= MAX_BUSY {
        return Ok(0);
    }
    let now = Timestamp::now().millis();
    let skip: Vec<Uuid> = held(busy).iter().map(|(_, e)| *e).collect();
    let (due, mut targets) = engine
        .run(move |s| {
            let due = s.due_events(now, BATCH, &skip)?;
            let mut targets: HashMap<(Uuid, Uuid), Target> = HashMap::new();
            for e in &due {
                let k = (e.project, e.endpoint);
                if targets.contains_key(&k) {
                    continue;
                }
                if let Some(ep) = s.event_endpoint(&e.project, &e.endpoint)? {
                    let secrets = s.event_secrets(&e.project, &e.endpoint)?;
                    targets.insert(
                        k,
                        Target {
                            url: ep.url,
                            secrets,
                        },
                    );
                }
            }
            Ok((due, targets))
        })
        .await?;
    let mut groups: HashMap<(Uuid, Uuid), Vec<OutboxEvent>> = HashMap::new();
    for e in due {
        groups.entry((e.project, e.endpoint)).or_default().push(e);
    }
    let mut started = 0;
    for (k, events) in groups {
        let Some(target) = targets.remove(&k) else {
            continue; // deleted meanwhile
        };
        if !held(busy).insert(k) {
            continue;
        }
        let serving = Serving(busy.clone(), k);
        let (engine, client) = (engine.clone(), client.clone());
        actix::spawn(async move {
            let _serving = serving;
            serve(&engine, &client, target, events).await;
        });
        started += 1;
    }
    Ok(started)
}

/// Sends one endpoint's due events and records the outcomes.
async fn serve(engine: &Engine, client: &reqwest::Client, t: Target, events: Vec<OutboxEvent>) {
    let horizon = engine.inner.config.event_retry_horizon;
    let egress = engine.egress().clone();
    let t = &t;
    let done: Vec<(OutboxEvent, EventAttempt, AttemptNext)> = futures_util::stream::iter(events)
        .map(|e| {
            let egress = egress.clone();
            async move {
                let (a, retry_after) = attempt(client, &egress, t, &e).await;
                let next = next_step(&e, &a, retry_after, horizon);
                (e, a, next)
            }
        })
        .buffer_unordered(PER_ENDPOINT)
        .collect()
        .await;
    if let Err(e) = engine.run(move |s| s.record_event_attempts(&done)).await {
        // The events stay in the outbox as they were: sent again, same ids.
        tracing::warn!(error = %e, "event sender: recording attempts failed");
    }
}

/// POSTs one event; the attempt as recorded and the receiver's Retry-After.
async fn attempt(
    client: &reqwest::Client, egress: &crate::egress::EgressPolicy, t: &Target, e: &OutboxEvent,
) -> (EventAttempt, Option<Duration>) {
    let id = e.id.to_string();
    let ts = chrono::Utc::now().timestamp();
    let started = Instant::now();
    let mut a = EventAttempt {
        id: Uuid::now_v7(),
        event_id: e.id,
        event_type: e.event_type,
        attempt: e.attempts + 1,
        status_code: None,
        latency_ms: 0,
        response: String::new(),
        error: None,
        created_at: Timestamp::now(),
    };
    // reqwest does not call the guarded resolver for IP literals.
    if let Err(r) = egress.check_url(&t.url) {
        a.error = Some(format!("destination not allowed: {r}"));
        return (a, None);
    }
    let res = client
        .post(&t.url)
        .header("content-type", "application/json")
        .header("webhook-id", &id)
        .header("webhook-timestamp", ts.to_string())
        .header(
            "webhook-signature",
            signature_header(&t.secrets, &id, ts, &e.body),
        )
        .body(e.body.clone())
        .send()
        .await;
    let mut retry_after = None;
    match res {
        Ok(mut r) => {
            let status = r.status();
            a.status_code = Some(status.as_u16());
            retry_after = crate::providers::webhook::retry_after(r.headers());
            if body_may_be_kept(r.remote_addr()) {
                let mut kept: Vec<u8> = Vec::new();
                while kept.len() < RESPONSE_KEPT {
                    match r.chunk().await {
                        Ok(Some(c)) => kept.extend_from_slice(&c),
                        _ => break,
                    }
                }
                kept.truncate(RESPONSE_KEPT);
                a.response = String::from_utf8_lossy(&kept).into_owned();
            }
            if !status.is_success() {
                a.error = Some(format!("the endpoint answered {}", status.as_u16()));
            }
        }
        Err(err) => {
            a.error = Some(
                match crate::egress::find_cause::<crate::egress::Refused>(&err) {
                    Some(r) => format!("destination not allowed: {r}"),
                    None if err.is_timeout() => "timed out".to_string(),
                    None => format!("transport error: {}", without_url(&err)),
                },
            );
        }
    }
    a.latency_ms = started.elapsed().as_millis() as u64;
    (a, retry_after)
}

/// Whether an answer's body may be kept in the attempt: only when it came
/// from a public address (see the module's comment). An answer whose address
/// is unknown is treated as an internal one.
fn body_may_be_kept(from: Option<std::net::SocketAddr>) -> bool {
    from.is_some_and(|a| crate::egress::non_public_kind(a.ip()).is_none())
}

/// A transport error's text without its URL (URLs may carry secrets).
fn without_url(e: &reqwest::Error) -> String {
    let mut s = String::new();
    let mut cur: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(c) = cur {
        if !s.is_empty() {
            s.push_str(": ");
        }
        s.push_str(&c.to_string());
        cur = c.source();
    }
    if s.is_empty() {
        "request failed".to_string()
    } else {
        s
    }
}

/// What follows an attempt: done on success; else a retry after the
/// backoff, or, once `horizon` has passed since the event's first attempt,
/// giving up (which disables the endpoint).
fn next_step(
    e: &OutboxEvent, a: &EventAttempt, retry_after: Option<Duration>, horizon: Duration,
) -> AttemptNext {
    let Some(err) = &a.error else {
        return AttemptNext::Done;
    };
    let now = a.created_at.millis();
    let first = e.first_attempt_ms.unwrap_or(now);
    if now - first >= horizon.as_millis() as i64 {
        return AttemptNext::GiveUp(format!(
            "event {} undelivered for {} s (last attempt: {err})",
            e.id,
            horizon.as_secs()
        ));
    }
    let delay = POLICY.delay(a.attempt, retry_after);
    AttemptNext::Retry(now + delay.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::body_may_be_kept;

    #[test]
    fn only_a_public_address_s_answer_is_kept() {
        let at = |s: &str| Some(s.parse().unwrap());
        assert!(body_may_be_kept(at("93.184.215.14:443")));
        assert!(body_may_be_kept(at(
            "[2606:2800:21f:cb07:6820:80da:af6b:8b2c]:443"
        )));
        // what only an opened range (or the guard off) lets through
        for internal in [
            "127.0.0.1:8080",
            "10.1.2.3:80",
            "192.168.0.5:80",
            "169.254.169.254:80",
            "[::1]:80",
            "[fd00::1]:80",
            "[::ffff:10.0.0.1]:80",
        ] {
            assert!(!body_may_be_kept(at(internal)), "{internal}");
        }
        assert!(!body_may_be_kept(None));
    }
}
