//! Topics and their subscriptions in the sled store (`storage::TopicRepo`).

use super::catalog::subscriber_id;
use super::keys::{tail_id, Key};
use super::page::{scan, Page, PageReq};
use super::{Store, Writes, T};
use crate::error::{Error, Result};
use crate::model::{Subscription, Topic, User, UserRef};
use crate::rules::records;
use crate::storage::*;
use uuid::Uuid;

impl TopicRepo for Store {
    /// Create or update; returns the topic and whether it was created.
    fn put_topic(&self, project: &Uuid, key: &str, patch: TopicPatch) -> Result<(Topic, bool)> {
        let _g = self.lock(&Self::topic_lock(project, key));
        let (mut t, created) = match self.topic(project, key)? {
            Some(t) => (t, false),
            None => (records::new_topic(key), true),
        };
        records::patch_topic(&mut t, patch, created);
        let mut w = Writes::new();
        w.put_rec(T::topics, Key::new().id(project).str(key), &t);
        if created {
            w.put(
                T::topics_by_id,
                Key::new().id(project).id(&t.id),
                key.as_bytes(),
            );
        }
        self.commit_durable(w)?;
        Ok((t, created))
    }

    /// Subscribes every user not yet subscribed (a user already subscribed, or
    /// listed twice, is left as it is), in one durable commit; the topic as
    /// stored and how many subscriptions were new.
    fn subscribe_many(
        &self, project: &Uuid, key: &str, users: &[UserRef],
    ) -> Result<(Topic, Vec<Subscription>)> {
        let _g = self.lock(&Self::topic_lock(project, key));
        let mut t = self
            .topic(project, key)?
            .ok_or_else(|| Refusal::missing("topic", key))?;
        let mut w = Writes::new();
        let mut seen = std::collections::HashSet::new();
        let mut created = vec![];
        for u in users {
            if seen.insert(u.id) {
                created.extend(self.stage_subscription(&mut w, project, &mut t, u)?);
            }
        }
        if !created.is_empty() {
            // The topic (its count) once for the whole request, not once per
            // subscription: re-encoding it per item was a bulk request's
            // largest cost after the index reads.
            w.put_rec(T::topics, Key::new().id(project).str(key), &t);
            self.commit_durable(w)?;
        }
        Ok((t, created))
    }

    fn unsubscribe(&self, project: &Uuid, key: &str, user: &User) -> Result<()> {
        let _g = self.lock(&Self::topic_lock(project, key));
        let ik = Key::new().id(project).id(&user.id).str(key);
        let sid = match self.tree(T::sub_index).get(&ik)? {
            Some(v) => {
                Uuid::from_slice(&v).map_err(|_| Error::internal("corrupt subscription index"))?
            }
            None => return Err(Refusal::missing("subscription", key)),
        };
        let mut w = Writes::new();
        if let Some(mut t) = self.topic(project, key)? {
            t.subscribers_count = t.subscribers_count.saturating_sub(1);
            w.put_rec(T::topics, Key::new().id(project).str(key), &t);
        }
        Self::stage_unsubscribe(&mut w, project, key, &user.id, &sid);
        self.commit_durable(w)
    }

    /// Whether the user is subscribed to the topic `key`.
    fn subscribed(&self, project: &Uuid, user: &Uuid, key: &str) -> Result<bool> {
        Ok(self
            .tree(T::sub_index)
            .contains_key(Key::new().id(project).id(user).str(key))?)
    }

    /// Subscribers of a topic in subscription order, after `cursor`, at most `n`:
    /// `(subscription id, user id)`. Used to expand topic runs in chunks.
    fn topic_subscribers_chunk(
        &self, project: &Uuid, chunk: SubscriberChunk<'_>,
    ) -> Result<Vec<(Uuid, Uuid)>> {
        let pre = Key::new().id(project).str(chunk.topic);
        let start = match chunk.after {
            Some(c) => {
                let mut k = pre.clone().id(c).0;
                k.push(0); // strictly after the cursor
                k
            }
            None => pre.0.clone(),
        };
        let mut out = Vec::with_capacity(chunk.n);
        for kv in self.tree(T::topic_subs).range(start..) {
            let (k, v) = kv?;
            if !k.starts_with(&pre.0) || out.len() == chunk.n {
                break;
            }
            out.push((tail_id(&k), subscriber_id(&v)?));
        }
        Ok(out)
    }
}

/// Reads of the trait `RecordRepo` answers (`lookups.rs`).
impl Store {
    pub fn topic(&self, project: &Uuid, key: &str) -> Result<Option<Topic>> {
        self.get_rec(T::topics, Key::new().id(project).str(key).as_ref())
    }

    pub fn list_topics(&self, project: &Uuid, req: &PageReq) -> Result<Page<Topic>> {
        scan(
            self.tree(T::topics_by_id),
            &Key::new().id(project),
            req,
            |_, v| {
                let key = String::from_utf8_lossy(v);
                self.topic(project, &key)
            },
        )
    }

    pub fn delete_topic(&self, project: &Uuid, key: &str) -> Result<()> {
        let _g = self.lock(&Self::topic_lock(project, key));
        let t = self
            .topic(project, key)?
            .ok_or_else(|| Refusal::missing("topic", key))?;
        let mut w = Writes::new();
        w.del(T::topics, Key::new().id(project).str(key));
        w.del(T::topics_by_id, Key::new().id(project).id(&t.id));
        let pre = Key::new().id(project).str(key);
        for kv in self.tree(T::topic_subs).scan_prefix(&pre) {
            let (k, v) = kv?;
            let user = subscriber_id(&v)?;
            Self::stage_unsubscribe(&mut w, project, key, &user, &tail_id(&k));
        }
        self.commit_durable(w)
    }
}
