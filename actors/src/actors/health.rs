//! Channel health in the engine: each node's circuit breakers
//! (`crate::health::Breaker`, one per channel) fed by its attempts, and the
//! state they share through the store (`ChannelRepo::channel_health`, read
//! at most once a second per channel): a transition is stored with its
//! event (`channel.degraded`, `channel.recovered`) and counted in the
//! metrics (`herald_channel_health`, `herald_channel_breaker_transitions_total`).

use super::engine::Engine;
use crate::error::Result;
use crate::events::EventType;
use crate::health::{Admit, Breaker, Signal, Thresholds, Transition};
use crate::model::{Channel, ChannelHealth, HealthState, Timestamp};
use crate::storage::{Page, PageReq};
use dashmap::mapref::entry::Entry;
use dashmap::DashMap;
use std::time::{Duration, Instant};
use uuid::Uuid;

/// `herald_channel_health` of a channel: 1 ok, 0 degraded.
fn gauge(c: &Channel, ok: bool) {
    metrics::gauge!("herald_channel_health",
        "channel_id" => c.id.to_string(),
        "channel_type" => c.channel_type.as_str(),
        "provider" => c.provider.clone())
    .set(if ok { 1.0 } else { 0.0 });
}

/// How long a node trusts the shared state it read.
const SHARED_FOR: Duration = Duration::from_secs(1);

/// The breakers of this node and the shared state last read, by channel.
#[derive(Default)]
pub(crate) struct Health {
    breakers: DashMap<Uuid, Breaker>,
    shared: DashMap<Uuid, (Instant, Option<ChannelHealth>)>,
}

impl Engine {
    fn health(&self) -> &Health {
        self.inner.parts.get()
    }

    fn thresholds(&self) -> Thresholds {
        Thresholds {
            cooldown_ms: self.inner.config.channel_cooldown.as_millis() as i64,
            ..Default::default()
        }
    }

    /// Whether an attempt may call `channel` now, after following the
    /// state the nodes share. Blocking (it may read the store): called
    /// with an attempt's reads.
    pub(crate) fn health_admit(&self, project: &Uuid, channel: &Channel) -> Admit {
        let t = self.thresholds();
        let stored = self.shared_health(project, &channel.id);
        let mut b = match self.health().breakers.entry(channel.id) {
            Entry::Occupied(e) => e.into_ref(),
            Entry::Vacant(e) => {
                gauge(channel, true);
                e.insert(Breaker::default())
            }
        };
        let degraded = stored
            .as_ref()
            .filter(|h| h.state == HealthState::Degraded)
            .map(|h| (h.since.millis(), h.last_error.as_deref()));
        let was_open = b.is_open();
        b.adopt(degraded, &t);
        if b.is_open() != was_open {
            gauge(channel, !b.is_open());
        }
        b.admit(Timestamp::now().millis(), &t)
    }

    /// The stored health of a channel, read again once `SHARED_FOR` old;
    /// a failed read keeps what was known.
    fn shared_health(&self, project: &Uuid, channel: &Uuid) -> Option<ChannelHealth> {
        let h = self.health();
        if let Some(e) = h.shared.get(channel) {
            if e.0.elapsed() < SHARED_FOR {
                return e.1.clone();
            }
        }
        match self.storage().channel_health(project, channel) {
            Ok(v) => {
                h.shared.insert(*channel, (Instant::now(), v.clone()));
                v
            }
            Err(_) => h.shared.get(channel).and_then(|e| e.1.clone()),
        }
    }

    /// Records what an attempt through `channel` says about it; a
    /// transition is stored and told (on the blocking pool).
    pub(crate) fn health_record(&self, project: Uuid, channel: &Channel, s: Signal) {
        let t = self.thresholds();
        let now = Timestamp::now();
        let transition = self
            .health()
            .breakers
            .entry(channel.id)
            .or_default()
            .record(now.millis(), s, &t);
        let Some(tr) = transition else { return };
        let (health, event) = match tr {
            Transition::Opened { since, last_error } => (
                ChannelHealth {
                    state: HealthState::Degraded,
                    since: Timestamp::from_millis(since),
                    last_error: Some(last_error),
                },
                EventType::ChannelDegraded,
            ),
            Transition::Closed { since } => (
                ChannelHealth {
                    state: HealthState::Ok,
                    since: Timestamp::from_millis(since),
                    last_error: self
                        .health()
                        .breakers
                        .get(&channel.id)
                        .and_then(|b| b.last_error().map(str::to_string)),
                },
                EventType::ChannelRecovered,
            ),
        };
        let state = match health.state {
            HealthState::Ok => "ok",
            HealthState::Degraded => "degraded",
        };
        gauge(channel, health.state == HealthState::Ok);
        metrics::counter!("herald_channel_breaker_transitions_total", "channel_id" => channel.id.to_string(), "to" => state)
            .increment(1);
        tracing::warn!(channel_id = %channel.id, state, error = ?health.last_error, "channel health changed");
        // Another node may have told already: the state it stored stands.
        let known = self
            .health()
            .shared
            .get(&channel.id)
            .and_then(|e| e.1.as_ref().map(|h| h.state));
        let told = known.unwrap_or(HealthState::Ok) == health.state;
        // Written through, so this node's next admit does not undo it
        // before the store has it.
        self.health()
            .shared
            .insert(channel.id, (Instant::now(), Some(health.clone())));
        if told {
            return;
        }
        let data = serde_json::json!({
            "channel_id": channel.id,
            "channel_type": channel.channel_type,
            "provider": channel.provider,
            "health": health,
        });
        let (store, id) = (self.storage().clone(), channel.id);
        tokio::task::spawn_blocking(move || {
            if let Err(e) = store.set_channel_health(&project, &id, &health, event, &data) {
                tracing::warn!(channel_id = %id, error = %e, "cannot store the channel's health");
            }
        });
    }

    /// The health a channel shows: as stored (ok since it was created when
    /// it never changed).
    fn health_shown(c: &Channel, stored: Option<ChannelHealth>) -> ChannelHealth {
        stored.unwrap_or_else(|| ChannelHealth::ok_since(c.created_at))
    }

    /// A channel with its health; 404 when there is none.
    pub async fn channel_with_health(
        &self, project: Uuid, id: Uuid,
    ) -> Result<(Channel, ChannelHealth)> {
        self.run(move |s| {
            let c = s
                .channel(&project, &id)?
                .ok_or_else(|| crate::error::Error::not_found("channel", id))?;
            let h = Self::health_shown(&c, s.channel_health(&project, &id)?);
            Ok((c, h))
        })
        .await
    }

    /// A page of channels, each with its health.
    pub async fn list_channels_with_health(
        &self, project: Uuid, req: PageReq,
    ) -> Result<Page<(Channel, ChannelHealth)>> {
        self.run(move |s| {
            let page = s.list_channels(&project, &req)?;
            let mut healths = Vec::with_capacity(page.items.len());
            for c in &page.items {
                healths.push(Self::health_shown(c, s.channel_health(&project, &c.id)?));
            }
            let mut healths = healths.into_iter();
            Ok(page.map(|c| (c, healths.next().expect("one per channel"))))
        })
        .await
    }

    /// Whether this node's circuit of a channel is open.
    pub(crate) fn health_is_open(&self, channel: &Uuid) -> bool {
        self.health()
            .breakers
            .get(channel)
            .is_some_and(|b| b.is_open())
    }

    /// The health this node knows of a channel without reading the store
    /// (the answer of a change to the channel).
    pub fn known_health(&self, c: &Channel) -> ChannelHealth {
        let known = self.health().shared.get(&c.id).and_then(|e| e.1.clone());
        Self::health_shown(c, known)
    }
}
