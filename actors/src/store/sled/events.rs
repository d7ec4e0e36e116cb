//! Event endpoints, the event outbox and the attempt log in sled (see
//! `crate::events` for the rules).
//!
//! Layout:
//! - `hooks`: `(project, endpoint)` -> the endpoint with its signing secrets,
//!   sealed like channel secrets (AES-256-GCM with the data directory's key,
//!   the project and endpoint ids as associated data);
//! - `event_log`: `(project, seq)` -> every event written, kept for
//!   `LOG_RETENTION` so `replay` can send it again;
//! - `outbox`: `(project, endpoint, seq)` -> an event one endpoint has still
//!   to receive, with its retry state; `seq` order is the order events were
//!   written, which is each resource's order (its events are written under
//!   the lock its changes are made under);
//! - `hook_attempts`: `(project, endpoint, attempt id)` -> each attempt.
//!
//! The writers of the changes events describe call `stage_outbound` inside their
//! own commit: it first asks an in-memory map of the enabled endpoints per
//! project (`EventsState`), so a project without endpoints pays one map
//! lookup and writes nothing.

use super::super::trace_codec;
use super::keys::Key;
use super::page::scan;
use super::records::{group_member, NotifRec};
use super::{codec, Store, Writes, T};
use crate::error::{Error, Result};
use crate::events::{
    event_body, AttemptNext, EventAttempt, EventMask, EventType, OutboxEvent, WebhookEndpoint,
};
use crate::model::{Delivery, Notification, PushSubscription, Timestamp, User};
use crate::rules::feed;
use crate::storage::Refusal;
use crate::storage::*;
use crate::storage::{Page, PageReq};
use crate::trace::TraceEntry;
use crate::views::NotificationView;
use dashmap::DashMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

const SECRET_AAD: &[u8] = b"herald/event-endpoint-secret/v1\0";

/// The enabled endpoints of every project with one, and the event sequence.
#[derive(Default)]
pub(crate) struct EventsState {
    /// Per project, its enabled endpoints and the types each wants.
    endpoints: DashMap<Uuid, Arc<Vec<(Uuid, EventMask)>>>,
    /// `endpoints` is not empty: the hot paths look no further otherwise.
    any: AtomicBool,
    /// The last `seq` handed out.
    seq: AtomicU64,
}

impl EventsState {
    /// A new `seq`: the current time in microseconds, or one more than the
    /// last when the clock has not moved on (or went back), so it increases
    /// within a process and, with the clock, across restarts.
    fn next_seq(&self) -> u64 {
        let now = chrono::Utc::now().timestamp_micros().max(0) as u64;
        let mut cur = self.seq.load(Ordering::Relaxed);
        loop {
            let next = now.max(cur + 1);
            match self
                .seq
                .compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return next,
                Err(c) => cur = c,
            }
        }
    }
}

#[derive(Serialize, Deserialize)]
struct SealedSecret {
    sealed: Vec<u8>,
    /// `None`: the current secret; else when the rotated-out one stops signing.
    expires_ms: Option<i64>,
}

#[derive(Serialize, Deserialize)]
struct EndpointRec {
    ep: WebhookEndpoint,
    secrets: Vec<SealedSecret>,
}

#[derive(Serialize, Deserialize)]
struct LogRec {
    id: Uuid,
    t: EventType,
    resource: Uuid,
    body: String,
}

#[derive(Serialize, Deserialize)]
struct OutboxRec {
    id: Uuid,
    t: EventType,
    resource: Uuid,
    body: String,
    attempts: u32,
    first_ms: Option<i64>,
    due_ms: i64,
}

fn hook_key(project: &Uuid, id: &Uuid) -> Key {
    Key::new().id(project).id(id)
}

fn outbox_key(project: &Uuid, endpoint: &Uuid, seq: u64) -> Key {
    Key::new().id(project).id(endpoint).u64(seq)
}

fn micros_of_millis(ms: i64) -> u64 {
    (ms.max(0) as u64).saturating_mul(1000)
}

fn aad(project: &Uuid, endpoint: &Uuid) -> Vec<u8> {
    let mut a = SECRET_AAD.to_vec();
    a.extend_from_slice(project.as_bytes());
    a.extend_from_slice(endpoint.as_bytes());
    a
}

impl Store {
    /// Loads the enabled endpoints into memory (open, reopen).
    pub(crate) fn load_event_endpoints(&self) -> Result<()> {
        let st = &self.inner.events;
        st.endpoints.clear();
        let mut by_project: std::collections::HashMap<Uuid, Vec<(Uuid, EventMask)>> =
            Default::default();
        for kv in self.tree(T::hooks).iter() {
            let (k, v) = kv?;
            let rec: EndpointRec = codec::dec(&v)?;
            if rec.ep.enabled {
                let p = super::keys::uuid_at(&k, 0);
                by_project
                    .entry(p)
                    .or_default()
                    .push((rec.ep.id, rec.ep.mask()));
            }
        }
        for (p, v) in by_project {
            st.endpoints.insert(p, Arc::new(v));
        }
        st.any.store(!st.endpoints.is_empty(), Ordering::Release);
        // New events must sort after those still waiting even if the clock
        // went back while Herald was down: start above the largest waiting.
        let mut max = 0u64;
        for kv in self.tree(T::outbox).iter() {
            let (k, _) = kv?;
            if let Some(b) = k.get(32..40) {
                max = max.max(u64::from_be_bytes(b.try_into().unwrap_or([0; 8])));
            }
        }
        st.seq.fetch_max(max, Ordering::AcqRel);
        Ok(())
    }

    /// Refreshes one project's entry of the in-memory map from the store
    /// (under the project's endpoint lock, after a commit).
    fn refresh_event_endpoints(&self, project: &Uuid) -> Result<()> {
        let mut v = vec![];
        for kv in self.tree(T::hooks).scan_prefix(project.as_bytes()) {
            let rec: EndpointRec = codec::dec(&kv?.1)?;
            if rec.ep.enabled {
                v.push((rec.ep.id, rec.ep.mask()));
            }
        }
        let st = &self.inner.events;
        if v.is_empty() {
            st.endpoints.remove(project);
        } else {
            st.endpoints.insert(*project, Arc::new(v));
        }
        st.any.store(!st.endpoints.is_empty(), Ordering::Release);
        Ok(())
    }

    /// Whether some enabled endpoint of `project` wants events of type `t`:
    /// one atomic load when no project has an endpoint, one map lookup else.
    pub(crate) fn wants_event(&self, project: &Uuid, t: EventType) -> bool {
        let st = &self.inner.events;
        st.any.load(Ordering::Acquire)
            && st
                .endpoints
                .get(project)
                .is_some_and(|v| v.iter().any(|(_, m)| m.wants(t)))
    }

    /// Whether some endpoint of `project` wants any `feed_entry.*` event.
    pub(crate) fn wants_feed_events(&self, project: &Uuid) -> bool {
        feed::ENTRY_EVENTS
            .into_iter()
            .any(|t| self.wants_event(project, t))
    }

    /// Stages a `feed_entry.*` event for each flag an update set (seen, read,
    /// clicked, archived; clearing a flag, as unarchiving does, has none).
    pub(crate) fn stage_feed_entry_events(
        &self, w: &mut Writes, project: &Uuid, before: &Delivery, after: &Delivery,
    ) {
        for t in feed::entry_events(before, after) {
            self.stage_outbound(w, project, t, &after.id, || after.view());
        }
    }

    /// Removes a push subscription (key `k`) with its
    /// `push_subscription.removed` event, in one durable commit under the
    /// subscription's lock; true when there was one.
    pub(crate) fn remove_push_subscription_with_event(
        &self, project: &Uuid, user: &Uuid, k: &Key,
    ) -> Result<bool> {
        let _g = self.lock(&Key::new().u8(b'p').bytes(k.as_ref()).0);
        let Some(sub) = self.get_rec::<PushSubscription>(T::push_subs, k.as_ref())? else {
            return Ok(false);
        };
        let mut w = Writes::new();
        w.del(T::push_subs, k);
        self.stage_outbound(
            &mut w,
            project,
            EventType::PushSubscriptionRemoved,
            &sub.id,
            || {
                serde_json::json!({
                    "id": sub.id, "user_id": user, "channel_id": sub.channel_id,
                    "identifier": sub.identifier, "platform": sub.platform,
                    "created_at": sub.created_at,
                })
            },
        );
        self.commit_durable(w)?;
        Ok(true)
    }

    /// Stages `feed_entry.seen` (or `.read`) for each entry `seen_all`
    /// (`read_all`) changed.
    pub(crate) fn stage_feed_marked_events(
        &self, w: &mut Writes, project: &Uuid, entries: &[Delivery], mark: FeedMark,
    ) {
        let t = feed::marked_event(mark);
        if !self.wants_event(project, t) {
            return;
        }
        for d in entries {
            self.stage_outbound(w, project, t, &d.id, || d.view());
        }
    }

    /// Stages an event into `w` (the commit of the change it describes): its
    /// log entry and one outbox entry per enabled endpoint wanting it. `data`
    /// (the resource as the API shows it) is only built when one does.
    pub(crate) fn stage_outbound<D: Serialize>(
        &self, w: &mut Writes, project: &Uuid, t: EventType, resource: &Uuid,
        data: impl FnOnce() -> D,
    ) {
        let st = &self.inner.events;
        if !st.any.load(Ordering::Acquire) {
            return;
        }
        let Some(eps) = st.endpoints.get(project).map(|e| e.clone()) else {
            return;
        };
        if !eps.iter().any(|(_, m)| m.wants(t)) {
            return;
        }
        let now = Timestamp::now();
        let body = String::from_utf8(event_body(t, now, &data())).unwrap_or_default();
        let seq = st.next_seq();
        let id = Uuid::now_v7();
        w.put_rec(
            T::event_log,
            Key::new().id(project).u64(seq),
            &LogRec {
                id,
                t,
                resource: *resource,
                body: body.clone(),
            },
        );
        for (ep, m) in eps.iter() {
            if m.wants(t) {
                w.put_rec(
                    T::outbox,
                    outbox_key(project, ep, seq),
                    &OutboxRec {
                        id,
                        t,
                        resource: *resource,
                        body: body.clone(),
                        attempts: 0,
                        first_ms: None,
                        due_ms: now.millis(),
                    },
                );
            }
        }
    }

    /// Stages the events of a notification as accepted: each delivery settled
    /// at once (sent to a feed, skipped, failed) and the notification when it
    /// joined a batch or is processed already (see `stage_notification_events`).
    pub(crate) fn stage_accept_events(
        &self, w: &mut Writes, project: &Uuid, n: &Notification, ds: &[Delivery], data: &Value,
        known: &HashMap<Uuid, &User>,
    ) -> Result<()> {
        if !self.inner.events.any.load(Ordering::Acquire) {
            return Ok(());
        }
        for d in ds {
            if d.status.is_final() {
                self.stage_delivery_event(w, project, d);
            }
        }
        self.stage_notification_events(w, project, n, ds, &mut || Ok(data.clone()), known)
    }

    /// Whether some endpoint of `project` wants a notification's own events
    /// (`notification.batched`, `notification.processed`).
    pub(crate) fn wants_notification_events(&self, project: &Uuid) -> bool {
        self.wants_event(project, EventType::NotificationProcessed)
            || self.wants_event(project, EventType::NotificationBatched)
    }

    /// Stages `notification.batched` when `n` joined a batch and
    /// `notification.processed` when it is processed, their data the
    /// notification as `GET /admin/v1/notifications/{id}` shows it
    /// (`NotificationView`): `ds` as written, its run's `data` and its users,
    /// from `known` (written in the same change) or read. Nothing is read
    /// unless an endpoint wants one of them.
    pub(crate) fn stage_notification_events(
        &self, w: &mut Writes, project: &Uuid, n: &Notification, ds: &[Delivery],
        data: &mut dyn FnMut() -> Result<Value>, known: &HashMap<Uuid, &User>,
    ) -> Result<()> {
        let types: Vec<EventType> = crate::events::notification_events(n)
            .filter(|t| self.wants_event(project, *t))
            .collect();
        if types.is_empty() {
            return Ok(());
        }
        let mut users = HashMap::new();
        for id in NotificationView::user_ids(n) {
            let u = match known.get(&id) {
                Some(u) => Some((*u).clone()),
                None => self.user(project, &id)?,
            };
            users.extend(u.map(|u| (id, u)));
        }
        let view = NotificationView::staged(n, ds, data()?, |id| users.get(id).cloned());
        for t in types {
            self.stage_outbound(w, project, t, &n.id, || &view);
        }
        Ok(())
    }

    /// Stages the event of a delivery's new state: `delivery.sent`, `.failed`,
    /// `.skipped`, `.canceled`, or `.retrying` while it is pending after an attempt.
    pub(crate) fn stage_delivery_event(&self, w: &mut Writes, project: &Uuid, d: &Delivery) {
        if let Some(t) = feed::delivery_event(d) {
            self.stage_outbound(w, project, t, &d.id, || d.view());
        }
    }

    /// Forgets a deleted project's endpoints (its records are gone with it).
    pub(crate) fn forget_event_endpoints(&self, project: &Uuid) {
        let st = &self.inner.events;
        st.endpoints.remove(project);
        st.any.store(!st.endpoints.is_empty(), Ordering::Release);
    }

    /// A new sequence number (event log, outbox, trace keys).
    pub(crate) fn next_event_seq(&self) -> u64 {
        self.inner.events.next_seq()
    }

    fn endpoint_lock(&self, project: &Uuid) -> std::sync::MutexGuard<'_, ()> {
        self.lock(&Key::new().u8(b'h').id(project).0)
    }

    fn endpoint_rec(&self, project: &Uuid, id: &Uuid) -> Result<Option<EndpointRec>> {
        self.get_rec(T::hooks, hook_key(project, id).as_ref())
    }

    fn seal_secret(&self, project: &Uuid, id: &Uuid, secret: &str) -> Result<Vec<u8>> {
        let sealer = self
            .inner
            .sealer
            .as_ref()
            .ok_or_else(|| Error::internal("the store was opened without its secret key"))?;
        Ok(sealer.seal(&aad(project, id), secret.as_bytes()))
    }
}

#[cfg(test)]
#[path = "tests/events.rs"]
mod tests;

/// The writes behind `EventRepo::put_event_endpoint`, one per kind, and
/// the sweep of the logs (`RetentionRepo::sweep`).
impl Store {
    /// Stores a new endpoint with its signing secret (made by the engine).
    fn create_event_endpoint(
        &self, project: &Uuid, ep: WebhookEndpoint, secret: &str,
    ) -> Result<WebhookEndpoint> {
        let sealed = self.seal_secret(project, &ep.id, secret)?;
        let _g = self.endpoint_lock(project);
        let mut w = Writes::new();
        w.put_rec(
            T::hooks,
            hook_key(project, &ep.id),
            &EndpointRec {
                ep: ep.clone(),
                secrets: vec![SealedSecret {
                    sealed,
                    expires_ms: None,
                }],
            },
        );
        self.commit_durable(w)?;
        self.refresh_event_endpoints(project)?;
        Ok(ep)
    }

    /// Changes an endpoint under its project's endpoint lock; 404 when absent.
    fn update_event_endpoint(
        &self, project: &Uuid, id: &Uuid, f: crate::storage::Change<'_, WebhookEndpoint>,
    ) -> Result<WebhookEndpoint> {
        let _g = self.endpoint_lock(project);
        let mut rec = self
            .endpoint_rec(project, id)?
            .ok_or_else(|| Refusal::missing("webhook_endpoint", id))?;
        f(&mut rec.ep)?;
        rec.ep.updated_at = Timestamp::now();
        let mut w = Writes::new();
        w.put_rec(T::hooks, hook_key(project, id), &rec);
        self.commit_durable(w)?;
        self.refresh_event_endpoints(project)?;
        Ok(rec.ep)
    }

    /// A new signing secret for an endpoint (returned once); the previous
    /// current one keeps signing for `grace`, older ones are dropped.
    fn replace_event_secret(
        &self, project: &Uuid, id: &Uuid, secret: &str, grace: Duration,
    ) -> Result<WebhookEndpoint> {
        let sealed = self.seal_secret(project, id, secret)?;
        let _g = self.endpoint_lock(project);
        let mut rec = self
            .endpoint_rec(project, id)?
            .ok_or_else(|| Refusal::missing("webhook_endpoint", id))?;
        let now = Timestamp::now();
        let until = now.plus_millis(grace.as_millis() as i64).millis();
        let mut secrets = vec![SealedSecret {
            sealed,
            expires_ms: None,
        }];
        if let Some(cur) = rec.secrets.into_iter().find(|s| s.expires_ms.is_none()) {
            secrets.push(SealedSecret {
                sealed: cur.sealed,
                expires_ms: Some(until),
            });
        }
        rec.secrets = secrets;
        rec.ep.updated_at = now;
        let mut w = Writes::new();
        w.put_rec(T::hooks, hook_key(project, id), &rec);
        self.commit_durable(w)?;
        Ok(rec.ep)
    }

    /// Removes log entries and attempts older than `before_ms`, and outbox
    /// entries of endpoints that no longer exist (an event staged while its
    /// endpoint was being deleted), at most `max`; how many it removed.
    pub(crate) fn sweep_event_logs(&self, before_ms: i64, max: usize) -> Result<usize> {
        let mut w = Writes::new();
        let mut n = 0;
        let mut gone: Option<(Uuid, Uuid, bool)> = None;
        for kv in self.tree(T::outbox).iter() {
            let (k, _) = kv?;
            if k.len() < 40 || n >= max {
                continue;
            }
            let (p, e) = (super::keys::uuid_at(&k, 0), super::keys::uuid_at(&k, 16));
            let exists = match gone {
                Some((gp, ge, x)) if gp == p && ge == e => x,
                _ => {
                    let x = self.tree(T::hooks).contains_key(hook_key(&p, &e))?;
                    gone = Some((p, e, x));
                    x
                }
            };
            if !exists {
                w.del(T::outbox, k);
                n += 1;
            }
        }
        let cutoff = micros_of_millis(before_ms);
        for kv in self.tree(T::event_log).iter() {
            if n >= max {
                break;
            }
            let (k, _) = kv?;
            if k.len() >= 24 && u64::from_be_bytes(k[16..24].try_into().unwrap_or([0; 8])) < cutoff
            {
                w.del(T::event_log, k);
                n += 1;
            }
        }
        for kv in self.tree(T::hook_attempts).iter() {
            if n >= max {
                break;
            }
            let (k, _) = kv?;
            if k.len() >= 48 && Timestamp::of_id(&super::keys::tail_id(&k)).millis() < before_ms {
                w.del(T::hook_attempts, k);
                n += 1;
            }
        }
        self.commit(w)?;
        Ok(n)
    }
}

impl EventRepo for Store {
    fn put_event_endpoint(&self, project: &Uuid, w: EndpointWrite<'_>) -> Result<WebhookEndpoint> {
        match w {
            EndpointWrite::Create { ep, secret } => self.create_event_endpoint(project, ep, secret),
            EndpointWrite::Change { id, f } => self.update_event_endpoint(project, id, f),
            EndpointWrite::Secret { id, secret, grace } => {
                self.replace_event_secret(project, id, secret, grace)
            }
        }
    }

    /// The secrets that sign an endpoint's events now, the current one first.
    fn event_secrets(&self, project: &Uuid, id: &Uuid) -> Result<Vec<String>> {
        let Some(rec) = self.endpoint_rec(project, id)? else {
            return Ok(vec![]);
        };
        let sealer = self
            .inner
            .sealer
            .as_ref()
            .ok_or_else(|| Error::internal("the store was opened without its secret key"))?;
        let now = Timestamp::now().millis();
        let a = aad(project, id);
        let mut out = vec![];
        for s in rec.secrets {
            if s.expires_ms.is_some_and(|e| e <= now) {
                continue;
            }
            let plain = sealer.open(&a, &s.sealed).ok_or_else(|| {
                Error::internal(format!(
                    "the signing secret of event endpoint {id} does not open with this data directory's key"
                ))
            })?;
            out.push(String::from_utf8_lossy(&plain).into_owned());
        }
        Ok(out)
    }

    /// Outbox entries due at `now_ms`, at most `limit`, oldest first, of
    /// enabled endpoints not in `skip` (the sender's busy ones), and at most
    /// one per `(endpoint, resource)`: the first one still in the outbox, so
    /// a resource's events go in order.
    fn due_events(&self, now_ms: i64, limit: usize, skip: &[Uuid]) -> Result<Vec<OutboxEvent>> {
        let mut out = vec![];
        let st = &self.inner.events;
        if !st.any.load(Ordering::Acquire) {
            return Ok(out);
        }
        let mut seen: HashSet<(Uuid, Uuid)> = HashSet::new();
        for kv in self.tree(T::outbox).iter() {
            let (k, v) = kv?;
            if k.len() < 40 {
                continue;
            }
            let project = super::keys::uuid_at(&k, 0);
            let endpoint = super::keys::uuid_at(&k, 16);
            let enabled = st
                .endpoints
                .get(&project)
                .is_some_and(|e| e.iter().any(|(id, _)| *id == endpoint));
            if !enabled || skip.contains(&endpoint) {
                continue;
            }
            let rec: OutboxRec = codec::dec(&v)?;
            if !seen.insert((endpoint, rec.resource)) || rec.due_ms > now_ms {
                continue;
            }
            let mut s = [0u8; 8];
            s.copy_from_slice(&k[32..40]);
            out.push(OutboxEvent {
                project,
                endpoint,
                seq: u64::from_be_bytes(s),
                id: rec.id,
                event_type: rec.t,
                resource: rec.resource,
                body: rec.body.into_bytes(),
                attempts: rec.attempts,
                first_attempt_ms: rec.first_ms,
                due_ms: rec.due_ms,
            });
            if out.len() >= limit {
                break;
            }
        }
        Ok(out)
    }

    /// Records attempts and what follows each, in one commit: a delivered
    /// event leaves the outbox, a failed one waits for its retry, and an
    /// endpoint given up on is disabled with its reason and its outbox
    /// emptied (its events stay in the log, for `replay`).
    fn record_event_attempts(
        &self, done: &[(OutboxEvent, EventAttempt, AttemptNext)],
    ) -> Result<()> {
        // Under the endpoint locks of the projects involved, so an endpoint
        // deleted meanwhile gets no attempt and no outbox entry back.
        let lock_keys: Vec<Vec<u8>> = done
            .iter()
            .map(|(e, _, _)| Key::new().u8(b'h').id(&e.project).0)
            .collect();
        let guards = self.lock_many(lock_keys.iter().map(|k| k.as_slice()));
        let mut w = Writes::new();
        let mut disable: Vec<(Uuid, Uuid, String)> = vec![];
        for (e, a, next) in done {
            if !self
                .tree(T::hooks)
                .contains_key(hook_key(&e.project, &e.endpoint))?
            {
                continue;
            }
            w.put_rec(
                T::hook_attempts,
                Key::new().id(&e.project).id(&e.endpoint).id(&a.id),
                a,
            );
            let k = outbox_key(&e.project, &e.endpoint, e.seq);
            match next {
                AttemptNext::Done => w.del(T::outbox, k),
                AttemptNext::Retry(at) => w.put_rec(
                    T::outbox,
                    k,
                    &OutboxRec {
                        id: e.id,
                        t: e.event_type,
                        resource: e.resource,
                        body: String::from_utf8_lossy(&e.body).into_owned(),
                        attempts: e.attempts + 1,
                        first_ms: e.first_attempt_ms.or(Some(a.created_at.millis())),
                        due_ms: *at,
                    },
                ),
                AttemptNext::GiveUp(reason) => {
                    w.del(T::outbox, k);
                    disable.push((e.project, e.endpoint, reason.clone()));
                }
            }
        }
        self.commit(w)?;
        drop(guards);
        for (p, id, reason) in disable {
            let _g = self.endpoint_lock(&p);
            let Some(mut rec) = self.endpoint_rec(&p, &id)? else {
                continue;
            };
            let mut w = Writes::new();
            for kv in self.tree(T::outbox).scan_prefix(hook_key(&p, &id)) {
                w.del(T::outbox, kv?.0);
            }
            if rec.ep.enabled {
                rec.ep.enabled = false;
                rec.ep.disabled_reason = Some(reason);
                rec.ep.updated_at = Timestamp::now();
                w.put_rec(T::hooks, hook_key(&p, &id), &rec);
            }
            self.commit(w)?;
            self.refresh_event_endpoints(&p)?;
        }
        Ok(())
    }

    /// Puts every logged event of the project written at or after `since`
    /// that the endpoint wants back into its outbox (same ids: a receiver
    /// that already has one sees a duplicate it can recognise). Returns how
    /// many; 404 when there is no such endpoint.
    fn replay_events(&self, project: &Uuid, id: &Uuid, since: Timestamp) -> Result<usize> {
        let _g = self.endpoint_lock(project);
        let rec = self
            .endpoint_rec(project, id)?
            .ok_or_else(|| Refusal::missing("webhook_endpoint", id))?;
        let mask = rec.ep.mask();
        let lo = Key::new().id(project).u64(micros_of_millis(since.millis()));
        let hi = Key::new().id(project).u64(u64::MAX);
        let now = Timestamp::now().millis();
        let mut w = Writes::new();
        let mut n = 0;
        for kv in self.tree(T::event_log).range(lo..=hi) {
            let (k, v) = kv?;
            let l: LogRec = codec::dec(&v)?;
            if !mask.wants(l.t) {
                continue;
            }
            let mut s = [0u8; 8];
            s.copy_from_slice(&k[16..24]);
            w.put_rec(
                T::outbox,
                outbox_key(project, id, u64::from_be_bytes(s)),
                &OutboxRec {
                    id: l.id,
                    t: l.t,
                    resource: l.resource,
                    body: l.body,
                    attempts: 0,
                    first_ms: None,
                    due_ms: now,
                },
            );
            n += 1;
        }
        self.commit_durable(w)?;
        Ok(n)
    }

    /// A notification's trace, in order (empty when it has none).
    fn notification_trace(&self, project: &Uuid, nid: &Uuid) -> Result<Vec<TraceEntry>> {
        let mut out = vec![];
        let gk = Key::new().id(project).bytes(&nid.as_bytes()[..14]);
        if let Some(v) = self.tree(T::notifications).get(gk)? {
            if let Some(m) = group_member(&v, nid)?.filter(|m| !m.trace.is_empty()) {
                if trace_codec::is_stub(m.trace) {
                    let rec: NotifRec = codec::dec(m.rec)?;
                    out.extend(trace_codec::from_stub(m.trace, &rec.n, &rec.d)?);
                } else {
                    out.extend(trace_codec::decode(m.trace)?);
                }
            }
        }
        for kv in self
            .tree(T::trace)
            .scan_prefix(Key::new().id(project).id(nid))
        {
            let part = trace_codec::decode(&kv?.1)?;
            out.extend(part);
        }
        Ok(out)
    }
}

/// Reads of the trait `RecordRepo` answers (`lookups.rs`).
impl Store {
    pub fn event_endpoint(&self, project: &Uuid, id: &Uuid) -> Result<Option<WebhookEndpoint>> {
        Ok(self.endpoint_rec(project, id)?.map(|r| r.ep))
    }

    pub fn list_event_endpoints(
        &self, project: &Uuid, req: &PageReq,
    ) -> Result<Page<WebhookEndpoint>> {
        scan(self.tree(T::hooks), &Key::new().id(project), req, |_, v| {
            Ok(Some(codec::dec::<EndpointRec>(v)?.ep))
        })
    }

    /// Deletes an endpoint with its outbox and attempts; 404 when absent.
    pub fn delete_event_endpoint(&self, project: &Uuid, id: &Uuid) -> Result<()> {
        let _g = self.endpoint_lock(project);
        if self.endpoint_rec(project, id)?.is_none() {
            return Err(Refusal::missing("webhook_endpoint", id));
        }
        let mut w = Writes::new();
        w.del(T::hooks, hook_key(project, id));
        let prefix = hook_key(project, id);
        for t in [T::outbox, T::hook_attempts] {
            for kv in self.tree(t).scan_prefix(&prefix) {
                w.del(t, kv?.0);
            }
        }
        self.commit_durable(w)?;
        self.refresh_event_endpoints(project)
    }

    /// An endpoint's attempts, newest first.
    pub fn list_event_attempts(
        &self, project: &Uuid, id: &Uuid, req: &PageReq,
    ) -> Result<Page<EventAttempt>> {
        scan(
            self.tree(T::hook_attempts),
            &hook_key(project, id),
            req,
            |_, v| Ok(Some(codec::dec(v)?)),
        )
    }
}
