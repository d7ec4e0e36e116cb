//! Channels, flows, push subscriptions and idempotency records in the sled
//! store (`ChannelRepo`, `FlowRepo`, `PushRepo`, `IdempotencyRepo`): the
//! smaller key spaces, as in `store/pg/catalog.rs`.

use super::keys::{tail_id, Key};
use super::page::{scan, Page, PageReq};
use super::{codec, Store, Writes, T};
use crate::error::{Error, Result};
use crate::model::{
    new_id, Channel, ChannelHealth, ChannelType, Flow, FlowStatus, Subscription, Timestamp, Topic,
    UserRef,
};
use crate::storage::Refusal;
use crate::storage::*;
use crate::storage::{IdempotentResponse, PushSubscription};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use uuid::Uuid;

/// Flows (and handles) cached at most; past it the cache starts over.
const FLOWS_CACHED: usize = 10_000;

/// A channel as stored: `config` without its secret fields, which are in
/// `sealed` (field name -> `nonce || AES-256-GCM ciphertext` of the value's
/// JSON, see `secrets`). The other fields are `Channel`'s, under the same
/// names, so a record written before sealing reads as one with nothing sealed
/// (its secrets still in `config`, sealed at the next start).
#[derive(Serialize, Deserialize)]
struct StoredChannel {
    id: Uuid,
    #[serde(rename = "type")]
    channel_type: ChannelType,
    name: String,
    provider: String,
    config: serde_json::Map<String, serde_json::Value>,
    revoked: bool,
    #[serde(default)]
    builtin: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    sandbox: bool,
    created_at: Timestamp,
    updated_at: Timestamp,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    sealed: BTreeMap<String, Vec<u8>>,
}

impl StoredChannel {
    /// Secret fields still in plaintext in `config` (a record of an earlier Herald).
    fn plaintext_secrets(&self) -> bool {
        crate::providers::secret_fields(&self.provider)
            .iter()
            .any(|f| self.config.contains_key(*f))
    }
}

fn no_key() -> Error {
    Error::internal(
        "the store was opened without its secret key: channel secrets cannot be read or written",
    )
}

impl Store {
    // ------------------------------------------------------------ channels

    /// The stored form of a channel: its secret fields sealed (only the store
    /// ever sees them sealed; callers get and give plaintext configs).
    pub(crate) fn channel_record(&self, project: &Uuid, c: &Channel) -> Result<Vec<u8>> {
        let mut config = c.config.clone();
        let mut sealed = BTreeMap::new();
        for f in crate::providers::secret_fields(&c.provider) {
            let Some(v) = config.remove(*f) else { continue };
            let sealer = self.inner.sealer.as_ref().ok_or_else(no_key)?;
            let plain = zeroize::Zeroizing::new(serde_json::to_vec(&v).expect("JSON value"));
            let aad = super::secrets::channel_aad(project, &c.id, f);
            sealed.insert(f.to_string(), sealer.seal(&aad, &plain));
        }
        Ok(codec::enc(&StoredChannel {
            id: c.id,
            channel_type: c.channel_type,
            name: c.name.clone(),
            provider: c.provider.clone(),
            config,
            revoked: c.revoked,
            builtin: c.builtin,
            sandbox: c.sandbox,
            created_at: c.created_at,
            updated_at: c.updated_at,
            sealed,
        }))
    }

    /// A channel from its stored form, its secrets opened.
    fn channel_from(&self, project: &Uuid, bytes: &[u8]) -> Result<Channel> {
        let r: StoredChannel = codec::dec(bytes)?;
        let mut config = r.config;
        for (f, ct) in &r.sealed {
            let sealer = self.inner.sealer.as_ref().ok_or_else(no_key)?;
            let aad = super::secrets::channel_aad(project, &r.id, f);
            let plain = sealer.open(&aad, ct).ok_or_else(|| {
                Error::internal(format!(
                    "the sealed secret {f} of channel {} does not open with this data directory's key (altered or moved)",
                    r.id
                ))
            })?;
            let v: serde_json::Value = serde_json::from_slice(&plain)
                .map_err(|e| Error::internal(format!("corrupt sealed secret: {e}")))?;
            config.insert(f.clone(), v);
        }
        Ok(Channel {
            id: r.id,
            channel_type: r.channel_type,
            name: r.name,
            provider: r.provider,
            config,
            revoked: r.revoked,
            builtin: r.builtin,
            sandbox: r.sandbox,
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
    }

    /// Gives a just-opened store its key (see `secrets::key_for_store`) and
    /// seals the secrets an earlier Herald stored in plaintext, in one batch.
    pub(crate) fn with_key(mut self, key_file: &std::path::Path) -> Result<Store> {
        let mut sealed = false;
        let mut plaintext = vec![];
        for kv in self.tree(T::channels).iter() {
            let (k, v) = kv?;
            let r: StoredChannel = codec::dec(&v)?;
            sealed |= !r.sealed.is_empty();
            if r.plaintext_secrets() {
                plaintext.push(k);
            }
        }
        let meta = self.tree(T::meta);
        let held = super::secrets::Holdings {
            check: meta.get(b"secret_key_check")?.map(|v| v.to_vec()),
            sealed,
        };
        let (sealer, write_check) = super::secrets::key_for_store(key_file, &held)?;
        if write_check {
            meta.insert(b"secret_key_check", sealer.key_check())?;
        }
        Arc::get_mut(&mut self.inner)
            .expect("the store is not shared while it is opened")
            .sealer = Some(sealer);
        if !plaintext.is_empty() {
            let mut w = Writes::new();
            for k in &plaintext {
                // keys are (project, channel)
                let project = Uuid::from_slice(&k[..16])
                    .map_err(|_| Error::internal("corrupt channel key"))?;
                let v = self.tree(T::channels).get(k)?.expect("just read");
                let c = self.channel_from(&project, &v)?;
                w.put(T::channels, k, self.channel_record(&project, &c)?);
            }
            self.commit(w)?;
            tracing::info!(
                channels = plaintext.len(),
                "sealed the channel secrets an earlier Herald stored in plaintext"
            );
        }
        Ok(self)
    }

    /// Read-modify-write of a channel under its lock.
    pub fn update_channel<R>(
        &self, project: &Uuid, id: &Uuid, f: impl FnOnce(&mut Channel) -> Result<R>,
    ) -> Result<(Channel, R)> {
        let _g = self.lock(&Key::new().u8(b'c').id(project).id(id).0);
        let mut c = self
            .channel(project, id)?
            .ok_or_else(|| Refusal::missing("channel", id))?;
        let r = f(&mut c)?;
        c.updated_at = Timestamp::now();
        self.put_channel(project, &c)?;
        Ok((c, r))
    }

    // ------------------------------------------------------------ flows

    pub fn flow(&self, project: &Uuid, id: &Uuid) -> Result<Option<Flow>> {
        Ok(self.flow_arc(project, id)?.map(Arc::unwrap_or_clone))
    }

    /// A flow through the cache of flows (`Inner::flows_cache`). A fill
    /// holds `flows_fill` from its read to its insert, and `update_flow`
    /// takes it after its commit to empty the entry, so a value read before
    /// that commit is removed after it is put: a hit is never older than the
    /// last `update_flow` that has returned. `flows_fill` is never held while
    /// another lock is taken (callers may hold entity locks).
    fn flow_arc(&self, project: &Uuid, id: &Uuid) -> Result<Option<Arc<Flow>>> {
        let key = (*project, *id);
        if let Some(f) = self.inner.flows_cache.get(&key) {
            return Ok(Some(f.clone()));
        }
        let _fill = self.flows_fill();
        let Some(f) = self.flow_stored(project, id)? else {
            return Ok(None);
        };
        let f = Arc::new(f);
        super::cache_insert(&self.inner.flows_cache, FLOWS_CACHED, key, f.clone());
        Ok(Some(f))
    }

    /// The lock of flow cache fills and of `update_flow`'s removals.
    fn flows_fill(&self) -> std::sync::MutexGuard<'_, ()> {
        self.inner
            .flows_fill
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// The flow as stored (no cache).
    fn flow_stored(&self, project: &Uuid, id: &Uuid) -> Result<Option<Flow>> {
        self.get_rec(T::flows, Key::new().id(project).id(id).as_ref())
    }

    pub fn flow_by_handle(&self, project: &Uuid, handle: &str) -> Result<Option<Flow>> {
        let hk = (*project, handle.to_string());
        let id = match self.inner.flow_ids.get(&hk) {
            Some(id) => *id,
            None => {
                let Some(id) = self
                    .tree(T::flows_by_handle)
                    .get(Key::new().id(project).str(handle))?
                else {
                    return Ok(None);
                };
                let id =
                    Uuid::from_slice(&id).map_err(|_| Error::internal("corrupt flow index"))?;
                super::cache_insert(&self.inner.flow_ids, FLOWS_CACHED, hk, id);
                id
            }
        };
        self.flow(project, &id)
    }

    pub fn update_flow<R>(
        &self, project: &Uuid, id: &Uuid, f: impl FnOnce(&mut Flow) -> Result<R>,
    ) -> Result<(Flow, R)> {
        let _g = self.lock(&Key::new().u8(b'f').id(project).id(id).0);
        let mut flow = self
            .flow_stored(project, id)?
            .ok_or_else(|| Refusal::missing("flow", id))?;
        let r = f(&mut flow)?;
        let mut w = Writes::new();
        w.put_rec(T::flows, Key::new().id(project).id(id), &flow);
        let res = self.commit_durable(w);
        // After the commit, still under the flow's lock (see `flow_arc`).
        let fill = self.flows_fill();
        self.inner.flows_cache.remove(&(*project, *id));
        drop(fill);
        res?;
        // A kept first feed page shows counts per category, which follow
        // the flows' categories.
        self.bump_user_gen(project);
        Ok((flow, r))
    }

    // ------------------------------------------------------------ topics

    pub(crate) fn topic_lock(project: &Uuid, key: &str) -> Vec<u8> {
        Key::new().u8(b't').id(project).str(key).0
    }

    /// A subscription's record as a build before the compact layout stored it
    /// (`subscriptions`, by id); read only for index entries of that form.
    fn legacy_subscription(&self, project: &Uuid, id: &Uuid) -> Result<Option<Subscription>> {
        self.get_rec(T::subscriptions, Key::new().id(project).id(id).as_ref())
    }

    /// The subscription of the `topic_subs` entry `(k, v)` of topic `key`.
    fn subscription_of_entry(
        &self, project: &Uuid, key: &str, k: &[u8], v: &[u8],
    ) -> Result<Option<Subscription>> {
        let id = tail_id(k);
        if v.len() == 16 {
            return self.legacy_subscription(project, &id);
        }
        // the id first: it checks the value holds at least its 16 bytes
        let user_id = subscriber_id(v)?;
        let user_external_id = std::str::from_utf8(&v[16..])
            .map_err(|_| Error::internal("corrupt topic index"))?
            .to_owned();
        Ok(Some(Subscription {
            id,
            topic: key.to_owned(),
            user_id,
            user_external_id,
            created_at: Timestamp::of_id(&id),
        }))
    }

    /// The topic key of the `user_subs` entry of subscription `sid` with value
    /// `v` (the key itself; empty in entries written before the compact layout,
    /// whose record holds it).
    pub(crate) fn topic_of_user_sub(
        &self, project: &Uuid, sid: &Uuid, v: &[u8],
    ) -> Result<Option<String>> {
        if v.is_empty() {
            return Ok(self.legacy_subscription(project, sid)?.map(|s| s.topic));
        }
        String::from_utf8(v.to_vec())
            .map(Some)
            .map_err(|_| Error::internal("corrupt user subscription index"))
    }

    /// Stages the user's subscription to `t` and counts it in `t`, under the
    /// topic's lock; `None` (nothing staged) when the user is subscribed
    /// already. The caller stages `t` itself, once, after its last item.
    pub(super) fn stage_subscription(
        &self, w: &mut Writes, project: &Uuid, t: &mut Topic, user: &UserRef,
    ) -> Result<Option<Subscription>> {
        let key = t.key.clone();
        let ik = Key::new().id(project).id(&user.id).str(&key);
        if self.tree(T::sub_index).get(&ik)?.is_some() {
            return Ok(None);
        }
        let (id, now) = new_id();
        let s = Subscription {
            id,
            topic: key.clone(),
            user_id: user.id,
            user_external_id: user.external_id.clone(),
            created_at: now,
        };
        t.subscribers_count += 1;
        // Three index entries and no record: the subscription is rebuilt from
        // its topic entry (id and topic from the key, the user's id and
        // external id from the value, `created_at` from the v7 id), so a bulk
        // subscribe writes three keys per user instead of four, and the
        // largest of them (the encoded record) not at all. Entries of the
        // earlier layout (a 16-byte user id here, an empty value in
        // `user_subs`, the record under `subscriptions`) are still read.
        let mut topic_entry = Vec::with_capacity(16 + user.external_id.len());
        topic_entry.extend_from_slice(user.id.as_bytes());
        topic_entry.extend_from_slice(user.external_id.as_bytes());
        w.put(
            T::topic_subs,
            Key::new().id(project).str(&key).id(&id),
            topic_entry,
        );
        w.put(
            T::user_subs,
            Key::new().id(project).id(&user.id).id(&id),
            key.as_bytes(),
        );
        w.put(T::sub_index, &ik, id.as_bytes());
        Ok(Some(s))
    }

    /// Stages the removal of subscription `sid` of `user` to topic `key` (the
    /// caller holds the topic's lock and counts it).
    pub(crate) fn stage_unsubscribe(
        w: &mut Writes, project: &Uuid, key: &str, user: &Uuid, sid: &Uuid,
    ) {
        // The record exists only for subscriptions of the earlier layout; the
        // removal of an absent key is a no-op.
        w.del(T::subscriptions, Key::new().id(project).id(sid));
        w.del(T::topic_subs, Key::new().id(project).str(key).id(sid));
        w.del(T::user_subs, Key::new().id(project).id(user).id(sid));
        w.del(T::sub_index, Key::new().id(project).id(user).str(key));
    }

    pub fn topic_subscriptions(
        &self, project: &Uuid, key: &str, req: &PageReq,
    ) -> Result<Page<Subscription>> {
        scan(
            self.tree(T::topic_subs),
            &Key::new().id(project).str(key),
            req,
            |k, v| self.subscription_of_entry(project, key, k, v),
        )
    }

    pub fn user_subscriptions(
        &self, project: &Uuid, user: &Uuid, req: &PageReq,
    ) -> Result<Page<Subscription>> {
        scan(
            self.tree(T::user_subs),
            &Key::new().id(project).id(user),
            req,
            |k, v| {
                let sid = tail_id(k);
                let Some(topic) = self.topic_of_user_sub(project, &sid, v)? else {
                    return Ok(None);
                };
                let tk = Key::new().id(project).str(&topic).id(&sid);
                match self.tree(T::topic_subs).get(&tk)? {
                    Some(tv) => self.subscription_of_entry(project, &topic, &tk.0, &tv),
                    None => Ok(None),
                }
            },
        )
    }

    // ------------------------------------------------------------ push subscriptions

    // ------------------------------------------------------------ idempotency

    pub fn idempotency_key(project: &Uuid, scope: &[u8]) -> Vec<u8> {
        Key::new().id(project).bytes(scope).0
    }
}

/// The subscriber's user id: the first 16 bytes of a `topic_subs` value (all
/// of it in the earlier layout, followed by the user's external id now).
pub(super) fn subscriber_id(v: &[u8]) -> Result<Uuid> {
    v.get(..16)
        .and_then(|b| Uuid::from_slice(b).ok())
        .ok_or_else(|| Error::internal("corrupt topic index"))
}

#[cfg(test)]
#[path = "tests/catalog.rs"]
mod tests;

impl ChannelRepo for Store {
    fn put_channel(&self, project: &Uuid, c: &Channel) -> Result<()> {
        let mut w = Writes::new();
        w.put(
            T::channels,
            Key::new().id(project).id(&c.id),
            self.channel_record(project, c)?,
        );
        self.commit_durable(w)
    }

    fn update_channel(&self, project: &Uuid, id: &Uuid, f: Change<'_, Channel>) -> Result<Channel> {
        Store::update_channel(self, project, id, f).map(|(c, ())| c)
    }

    fn channel_health(&self, project: &Uuid, id: &Uuid) -> Result<Option<ChannelHealth>> {
        self.get_rec(T::channel_health, Key::new().id(project).id(id).as_ref())
    }

    fn set_channel_health(
        &self, project: &Uuid, id: &Uuid, h: &ChannelHealth, event: crate::events::EventType,
        event_data: &serde_json::Value,
    ) -> Result<()> {
        let mut w = Writes::new();
        w.put_rec(T::channel_health, Key::new().id(project).id(id), h);
        self.stage_outbound(&mut w, project, event, id, || event_data);
        self.commit_durable(w)
    }
}

impl FlowRepo for Store {
    /// Every flow that is not archived, oldest first (for preferences).
    fn live_flows(&self, project: &Uuid) -> Result<Vec<Flow>> {
        let mut out = vec![];
        for kv in self.tree(T::flows).scan_prefix(Key::new().id(project)) {
            let f: Flow = codec::dec(&kv?.1)?;
            if f.status != FlowStatus::Archived {
                out.push(f);
            }
        }
        Ok(out)
    }

    /// Creates a flow; a taken handle is a 422 `unique` on `handle`.
    fn create_flow(&self, project: &Uuid, f: &Flow) -> Result<()> {
        let hk = Key::new().id(project).str(&f.handle);
        let _g = self.lock(&hk.0);
        if self.tree(T::flows_by_handle).get(&hk)?.is_some() {
            return Err(Refusal::FlowHandleTaken.err());
        }
        let mut w = Writes::new();
        w.put_rec(T::flows, Key::new().id(project).id(&f.id), f);
        w.put(T::flows_by_handle, &hk, f.id.as_bytes());
        self.commit_durable(w)?;
        self.bump_user_gen(project); // see `update_flow`
        Ok(())
    }

    fn update_flow(&self, project: &Uuid, id: &Uuid, f: Change<'_, Flow>) -> Result<Flow> {
        Store::update_flow(self, project, id, f).map(|(fl, ())| fl)
    }
}

impl PushRepo for Store {
    fn push_subscriptions(
        &self, project: &Uuid, user: &Uuid, channel: &Uuid,
    ) -> Result<Vec<PushSubscription>> {
        let mut out = vec![];
        for kv in self
            .tree(T::push_subs)
            .scan_prefix(Key::new().id(project).id(user).id(channel))
        {
            out.push(codec::dec(&kv?.1)?);
        }
        out.sort_by_key(|s: &PushSubscription| std::cmp::Reverse(s.id));
        Ok(out)
    }

    /// Registers (or returns the existing) subscription; `true` when created.
    fn add_push_subscription(
        &self, project: &Uuid, user: &Uuid, s: PushSubscription,
    ) -> Result<(PushSubscription, bool)> {
        let k = Key::new()
            .id(project)
            .id(user)
            .id(&s.channel_id)
            .str(&s.identifier);
        let _g = self.lock(&k.0);
        if let Some(s) = self.get_rec::<PushSubscription>(T::push_subs, &k.0)? {
            return Ok((s, false));
        }
        let mut w = Writes::new();
        w.put_rec(T::push_subs, &k, &s);
        self.commit_durable(w)?;
        Ok((s, true))
    }

    fn remove_push_subscription(&self, project: &Uuid, key: PushKey<'_>) -> Result<bool> {
        let user = key.user;
        let k = Key::new()
            .id(project)
            .id(user)
            .id(key.channel)
            .str(key.identifier);
        if self.wants_event(project, crate::events::EventType::PushSubscriptionRemoved) {
            return self.remove_push_subscription_with_event(project, user, &k);
        }
        let existed = self.tree(T::push_subs).remove(&k)?.is_some();
        if existed {
            let t = self.durable_ticket();
            self.wait_durable_blocking(t)?;
        }
        Ok(existed)
    }
}

/// The sweep of stored responses (`RetentionRepo::sweep`).
impl Store {
    /// Deletes idempotency records older than 24 h (they are no longer replayed),
    /// at most `max` per call so a sweep never holds up other work for long.
    /// Returns how many were removed.
    pub(crate) fn sweep_idempotency(&self, max: usize) -> Result<usize> {
        let cutoff = Timestamp::now().millis() - 24 * 3600 * 1000;
        let mut w = Writes::new();
        let mut n = 0;
        for kv in self.tree(T::idempotency).iter() {
            let (k, v) = kv?;
            let r: IdempotentResponse = match codec::dec(&v) {
                Ok(r) => r,
                Err(_) => continue,
            };
            if r.created_at.millis() < cutoff {
                w.del(T::idempotency, k);
                n += 1;
                if n == max {
                    break;
                }
            }
        }
        if n > 0 {
            self.commit(w)?;
        }
        Ok(n)
    }
}

/// Reads of the trait `RecordRepo` answers (`lookups.rs`).
impl Store {
    pub fn channel(&self, project: &Uuid, id: &Uuid) -> Result<Option<Channel>> {
        match self.tree(T::channels).get(Key::new().id(project).id(id))? {
            Some(v) => Ok(Some(self.channel_from(project, &v)?)),
            None => Ok(None),
        }
    }

    pub fn list_channels(&self, project: &Uuid, req: &PageReq) -> Result<Page<Channel>> {
        scan(
            self.tree(T::channels),
            &Key::new().id(project),
            req,
            |_, v| Ok(Some(self.channel_from(project, v)?)),
        )
    }

    pub fn delete_channel(&self, project: &Uuid, id: &Uuid) -> Result<()> {
        let mut w = Writes::new();
        w.del(T::channels, Key::new().id(project).id(id));
        w.del(T::channel_health, Key::new().id(project).id(id));
        self.commit_durable(w)
    }
}

/// Reads of the trait `RecordRepo` answers (`lookups.rs`).
impl Store {
    pub fn list_flows(&self, project: &Uuid, req: &PageReq) -> Result<Page<Flow>> {
        scan(self.tree(T::flows), &Key::new().id(project), req, |_, v| {
            Ok(Some(codec::dec(v)?))
        })
    }
}

impl IdempotencyRepo for Store {
    fn idempotent_response(
        &self, project: &Uuid, scope: &[u8],
    ) -> Result<Option<IdempotentResponse>> {
        let r: Option<IdempotentResponse> =
            self.get_rec(T::idempotency, Key::new().id(project).bytes(scope).as_ref())?;
        // Records older than 24 h are expired (docs/API.md §5).
        Ok(r.filter(|r| Timestamp::now().millis() - r.created_at.millis() < 24 * 3600 * 1000))
    }

    fn put_idempotent_response(
        &self, project: &Uuid, scope: &[u8], r: &IdempotentResponse,
    ) -> Result<()> {
        let mut w = Writes::new();
        w.put_rec(T::idempotency, Key::new().id(project).bytes(scope), r);
        self.commit_durable(w)
    }
}
