//! Flow runs, notifications, deliveries and the delivery queue.
//!
//! `accept_run` writes a run with explicit recipients, its notifications, its
//! deliveries, their queue entries and the idempotency record in one atomic
//! commit. Topic runs are stored first and expanded later in chunks
//! (`expand_topic`), each chunk atomic with the run's expansion cursor, so a
//! crash resumes where it stopped. `finish_deliveries` records outcomes and marks
//! notifications and runs `processed` when their last delivery settles.

use super::feed::feed_lock_key;
use super::keys::{tail_id, uuid_at, Key};
use super::page::{
    key_range, packed_chunk, paginate, within, Bounds, PackedSource, Page, PageReq, Source,
    TreeSource,
};
use super::records::{group_member, group_members, GroupKv, Grouper, NotifRec};
use super::users::user_lock_key;
use super::{codec, Space, Store, Writes, T};
use crate::delivery::accept::{self, Recipient, Stager};
use crate::delivery::expand;
use crate::delivery::settle;
use crate::delivery::tally::Tally;
use crate::error::{Error, Result, Validator};
use crate::model::*;
use crate::render::RunRenderer;
use crate::storage::{
    AcceptInput, AcceptedRun, ActorSpec, DeliveryFilter, Finished, IdempotentResponse,
    NotificationFilter, Outcome, QueueItem, UserFrames,
};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use uuid::Uuid;

/// The `queue` tree holds exactly the pending deliveries: key `(project,
/// delivery)`, value `(channel type, due ms)`. It is both the recovery list and the
/// `status=pending` index, so a delivery costs one entry there while pending and
/// none after (sent deliveries have no index entry at all).
impl QueueItem {
    pub(crate) fn key(&self) -> Key {
        Key::new().id(&self.project).id(&self.delivery_id)
    }
    fn value(&self) -> [u8; 9] {
        let mut v = [0u8; 9];
        v[0] = self.channel_type.index();
        v[1..].copy_from_slice(&(self.due_ms.max(0) as u64).to_be_bytes());
        v
    }
    fn from_kv(k: &[u8], v: &[u8]) -> Option<QueueItem> {
        if k.len() != 32 || v.len() != 9 {
            return None;
        }
        let mut due = [0u8; 8];
        due.copy_from_slice(&v[1..9]);
        Some(QueueItem {
            channel_type: ChannelType::from_index(v[0])?,
            due_ms: u64::from_be_bytes(due) as i64,
            project: uuid_at(k, 0),
            delivery_id: uuid_at(k, 16),
        })
    }
}

/// Deliveries whose final status is not `sent` are indexed by status (they are
/// the ones worth finding); `sent` ones are found by scanning with a filter.
fn status_indexed(s: DeliveryStatus) -> bool {
    matches!(s, DeliveryStatus::Failed | DeliveryStatus::Skipped)
}

pub(crate) fn notif_key(project: &Uuid, nid: &Uuid) -> Key {
    Key::new().id(project).id(nid)
}

/// The packed index of a run's notifications (see `page::packed_chunk`).
fn run_index(project: &Uuid, run: &Uuid) -> Key {
    Key::new().id(project).id(run)
}

/// The packed index of a topic's notifications.
fn topic_index(project: &Uuid, topic: &str) -> Key {
    Key::new().id(project).str(topic)
}

/// The key, in a user's feed tree, that lists a notification for its recipient
/// when no feed entry does (see `stage_notification`).
pub(crate) fn recipient_marker(project: &Uuid, user: &Uuid, nid: &Uuid) -> Key {
    Key::new().id(project).id(user).id(nid)
}

/// Whether `key` is the lowest key of its notification's group (keys that share
/// the notification's first 15 bytes at `at`) in `tree`: lists with several keys
/// per notification show it once, at that key.
fn first_of_group(tree: &Space<'_>, key: &[u8], at: usize) -> Result<bool> {
    let group = &key[..at + 15];
    Ok(tree.range(group..key).next().is_none())
}

fn in_range(id: &Uuid, after: &Option<Timestamp>, before: &Option<Timestamp>) -> bool {
    let t = Timestamp::of_id(id);
    after.is_none_or(|a| t > a) && before.is_none_or(|b| t < b)
}

/// What staging notifications produces for one write set (or for one share of
/// a chunk staged in parallel): the writes, the deliveries queued, the in-app
/// deliveries settled at once with their feed entries' JSON (see
/// `stage_feeds`), the notifications' ids and how many are pending, the group
/// of settled records being gathered and the deliveries' metrics.
#[derive(Default)]
struct Part {
    w: Writes,
    queued: Vec<QueueItem>,
    feed: Vec<(Delivery, String)>,
    nids: Vec<Uuid>,
    pending: u64,
    group: Grouper,
    metrics: Tally,
}

impl Part {
    /// A new notification's id (see `records::Grouper`); a group it completes
    /// is staged.
    fn next_id(&mut self, project: &Uuid) -> (Uuid, Timestamp) {
        let (id, done) = self.group.next_id();
        if let Some(g) = done {
            self.put_group(project, g);
        }
        (id, Timestamp::of_id(&id))
    }

    /// Stages the group being gathered and records the metrics: a write set
    /// ends with this.
    fn finish(&mut self, project: &Uuid) {
        if let Some(g) = self.group.take() {
            self.put_group(project, g);
        }
        self.metrics.flush();
    }

    fn put_group(&mut self, project: &Uuid, (tail, v): GroupKv) {
        self.w
            .put(T::notifications, Key::new().id(project).bytes(&tail), v);
    }
}

impl Store {
    fn stager<'a>(
        &self,
        project: Uuid,
        run: &'a FlowRun,
        actor: Option<&User>,
    ) -> Result<Stager<'a>> {
        let mut channels = HashMap::new();
        for s in &run.flow.steps {
            if let Some(c) = s.channel_id {
                if let std::collections::hash_map::Entry::Vacant(e) = channels.entry(c) {
                    e.insert(self.channel(&project, &c)?);
                }
            }
        }
        let actor = actor
            .map(|a| serde_json::to_value(a).unwrap_or(Value::Null))
            .unwrap_or(Value::Null);
        Ok(Stager {
            project,
            run,
            renderer: RunRenderer::new(&run.flow, self.template_limits()),
            channels,
            shared: crate::render::Shared::new(
                &actor,
                &run.data,
                &json!({"id": run.flow.id, "handle": run.flow.handle, "name": run.flow.name}),
            ),
            actor,
        })
    }

    /// Stages one notification and its deliveries as `accept` decides them:
    /// the record (grouped when nothing is pending), its status index and
    /// queue entries; in-app deliveries settled at once go to `part.feed`, for
    /// `stage_feeds` to write their feed entries and events.
    fn stage_notification(&self, st: &Stager, user: &User, part: &mut Part) -> Result<()> {
        let p = st.project;
        let (nid, now) = part.next_id(&p);
        let prefs = self.preferences(&p, &user.id)?;
        let q0 = part.queued.len();
        let Recipient {
            n,
            deliveries,
            to_feed,
            pending,
        } = st.stage(user, &prefs, nid, now, &mut part.queued, &mut part.metrics)?;
        for d in &deliveries {
            if status_indexed(d.status) {
                part.w.put(
                    T::deliv_by_status,
                    Key::new().id(&p).u8(d.status.index()).id(&d.id),
                    b"",
                );
            }
        }
        for q in &part.queued[q0..] {
            part.w.put(T::queue, q.key(), q.value());
        }
        if to_feed.is_empty() {
            // No feed entry lists this notification for its recipient.
            part.w
                .put(T::feed, recipient_marker(&p, &user.id, &nid), b"");
        }
        let rec = NotifRec { n, d: deliveries };
        if pending {
            part.w.put_rec(T::notifications, notif_key(&p, &nid), &rec);
        } else {
            part.group.add(&nid, codec::enc(&rec));
        }
        // The record is encoded: its in-app deliveries move on to the feed.
        let mut ds = rec.d;
        let mut moved: Vec<(Delivery, String)> = to_feed
            .into_iter()
            .rev()
            .map(|(i, json)| (ds.swap_remove(i), json))
            .collect();
        moved.reverse();
        part.feed.extend(moved);
        part.nids.push(nid);
        part.pending += pending as u64;
        Ok(())
    }

    /// Stages the feed entries and live-feed events of in_app deliveries settled
    /// with their notifications (`stage_notification`), in order, and returns
    /// their frames per user. The caller holds the recipients' feed locks from
    /// here until it has committed (each user's counts and `seq` are read here).
    fn stage_feeds(
        &self,
        w: &mut Writes,
        project: &Uuid,
        feed: Vec<(Delivery, String)>,
    ) -> Result<UserFrames> {
        let mut frames: UserFrames = vec![];
        let mut at: HashMap<Uuid, (usize, FeedCounts)> = HashMap::new();
        for (d, json) in feed {
            let u = d.recipient_id;
            let (i, counts) = match at.entry(u) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    frames.push((*project, u, vec![]));
                    e.insert((frames.len() - 1, self.feed_counts_locked(project, &u)?))
                }
            };
            self.stage_feed_insert(w, project, &d, counts);
            let f = self.stage_feed_event_with(
                w,
                project,
                &u,
                "feed_entry.created",
                &d,
                &json,
                counts,
            )?;
            frames[*i].2.push(f);
        }
        Ok(frames)
    }

    /// Stages the packed index chunks of a run's new notifications `nids`: by run,
    /// and by topic for a topic run. Pending notifications need no index: they
    /// are the ones with deliveries in the queue.
    fn stage_run_indexes(&self, w: &mut Writes, project: &Uuid, run: &FlowRun, nids: &mut [Uuid]) {
        if let Some((k, v)) = packed_chunk(&run_index(project, &run.id), nids) {
            w.put(T::run_index, k, v);
        }
        if let Some(t) = &run.topic {
            if let Some((k, v)) = packed_chunk(&topic_index(project, t), nids) {
                w.put(T::topic_index, k, v);
            }
        }
    }

    /// Validates and stores a run (see the module doc). Durability is the caller's
    /// next step: take a ticket and wait for it before answering 202.
    ///
    /// Rendering happens before any lock is taken. The recipients' user locks
    /// are striped and the stripes are shared by every project, so a run that
    /// rendered under them (as it once did, until 9055693) made other projects'
    /// user writes wait for its templates. Instead, the recipients (and an
    /// inline actor) are upserted dry first, the notifications are staged
    /// (preferences, rendering, records) from that result, and only then are
    /// the locks taken, for the real upserts and the commit: if a user came
    /// out different from the dry run (this project changed it meanwhile),
    /// the locks are dropped and the run is staged again, a few times, then
    /// refused with 409. Per-project lock stripes were the alternative; they
    /// would still let a project's renders hold its own users' writes and cost
    /// a lock table per project, for nothing this does not give.
    pub fn accept_run(&self, project: &Uuid, input: AcceptInput) -> Result<AcceptedRun> {
        // Dedupe explicit recipients, keeping the first position and merging fields.
        let (order, patches) = accept::dedupe(input.recipients);
        let mut lock_keys: Vec<Vec<u8>> = order.iter().map(|e| user_lock_key(project, e)).collect();
        let actor_ext = match &input.actor {
            Some(ActorSpec::Existing(e)) | Some(ActorSpec::Inline(e, _)) => Some(e.clone()),
            None => None,
        };
        if let Some(e) = &actor_ext {
            lock_keys.push(user_lock_key(project, e));
        }

        let mut v = Validator::new();
        let topic = match &input.topic {
            Some(t) => match self.topic(project, t)? {
                Some(t) => Some(t),
                None => {
                    v.push("topic", "inclusion", "no topic with this key");
                    None
                }
            },
            None => None,
        };
        if let Some(ActorSpec::Existing(e)) = &input.actor {
            if self.user_by_ext(project, e)?.is_none() {
                v.push("actor", "inclusion", "no user with this external_id");
            }
        }
        v.finish()?;

        // The id and moment each new user would get: the same in the dry run
        // and the real one, so that both give equal users.
        let mut fresh: HashMap<String, (Uuid, Timestamp)> = HashMap::new();
        for e in order.iter().chain(actor_ext.iter()) {
            fresh.entry(e.clone()).or_insert_with(new_id);
        }
        // Upserts the actor and the recipients into `w` (or dry, without `w`).
        let upsert_all =
            |mut w: Option<&mut Writes>| -> Result<(Option<User>, Vec<User>, Vec<String>)> {
                let mut staged: HashMap<String, User> = HashMap::new();
                let actor = match &input.actor {
                    Some(ActorSpec::Existing(e)) => self.user_by_ext(project, e)?,
                    Some(ActorSpec::Inline(e, patch)) => Some(
                        self.stage_user_upsert_at(
                            w.as_deref_mut(),
                            project,
                            e,
                            patch,
                            &mut staged,
                            fresh[e],
                        )?
                        .0,
                    ),
                    None => None,
                };
                let mut users = Vec::with_capacity(order.len());
                for ext in &order {
                    let mut user = None;
                    for patch in &patches[ext] {
                        user = Some(
                            self.stage_user_upsert_at(
                                w.as_deref_mut(),
                                project,
                                ext,
                                patch,
                                &mut staged,
                                fresh[ext],
                            )?
                            .0,
                        );
                    }
                    users.push(user.expect("at least one patch per recipient"));
                }
                Ok((actor, users, staged.into_keys().collect()))
            };

        let (run_id, now) = new_id();
        let mut run = FlowRun {
            id: run_id,
            flow_id: input.flow.id,
            flow: input.flow,
            topic: input.topic.clone(),
            data: input.data,
            actor_id: None,
            processed: false,
            recipients_count: 0,
            notifications_count: 0,
            explicit_ids: vec![],
            expand_cursor: None,
            expanded: topic.is_none(),
            created_at: now,
            processed_at: None,
        };
        const ATTEMPTS: usize = 4;
        for _ in 0..ATTEMPTS {
            // Outside any lock: the users as they would be, and everything
            // rendered and staged for them.
            let (actor, users, _) = upsert_all(None)?;
            if matches!(input.actor, Some(ActorSpec::Existing(_))) && actor.is_none() {
                return Err(Error::field(
                    "actor",
                    "inclusion",
                    "no user with this external_id",
                ));
            }
            // Topic subscribers that are also explicit recipients count once.
            let mut recipients_count = users.len() as u64;
            if let Some(t) = &topic {
                let mut overlap = 0u64;
                for u in &users {
                    if self
                        .tree(T::sub_index)
                        .contains_key(Key::new().id(project).id(&u.id).str(&t.key))?
                    {
                        overlap += 1;
                    }
                }
                recipients_count += t.subscribers_count.saturating_sub(overlap);
            }
            run.actor_id = actor.as_ref().map(|a| a.id);
            run.recipients_count = recipients_count;
            run.notifications_count = users.len() as u64;
            run.explicit_ids = if topic.is_some() {
                users.iter().map(|u| u.id).collect()
            } else {
                vec![]
            };
            let part = {
                let st = self.stager(*project, &run, actor.as_ref())?;
                let mut part = Part::default();
                for u in &users {
                    self.stage_notification(&st, u, &mut part)?;
                }
                part.finish(project);
                part
            };

            // Under the users' locks: the real upserts, which must give the
            // users the notifications were staged for.
            let _guards = self.lock_many(lock_keys.iter().map(|k| k.as_slice()));
            let mut w = Writes::new();
            let (actor_now, users_now, staged) = upsert_all(Some(&mut w))?;
            if actor_now != actor || users_now != users {
                continue; // changed meanwhile: the guards go, stage again
            }
            let Part {
                w: staged_w,
                queued,
                feed,
                mut nids,
                pending: pending_count,
                ..
            } = part;
            w.append(staged_w);
            self.stage_run_indexes(&mut w, project, &run, &mut nids);
            let feed_keys: Vec<Vec<u8>> = users
                .iter()
                .map(|u| feed_lock_key(project, &u.id))
                .collect();
            let _feeds = self.lock_feeds(feed_keys.iter().map(|k| k.as_slice()));
            let frames = self.stage_feeds(&mut w, project, feed)?;
            let res = self.commit_accepted(
                &mut w,
                project,
                &mut run,
                pending_count,
                &input.idempotency,
                now,
            );
            // still under the users' and feeds' locks
            self.forget_users(project, staged.iter().map(|k| k.as_str()));
            for (p, u, _) in &frames {
                self.forget_feed_page(p, u);
            }
            return res.map(|body| AcceptedRun {
                run,
                body,
                queued,
                frames,
            });
        }
        Err(Error::conflict(
            "flow_run",
            None,
            "recipients_changed",
            "the run's recipients kept changing while it was being prepared; retry",
        ))
    }

    /// The tail of `accept_run`: the run's counter and record, the idempotent 202,
    /// one commit (while the feed locks are still held).
    fn commit_accepted(
        &self,
        w: &mut Writes,
        project: &Uuid,
        run: &mut FlowRun,
        pending_count: u64,
        idempotency: &Option<(Vec<u8>, Vec<u8>)>,
        now: Timestamp,
    ) -> Result<Vec<u8>> {
        let mut w = std::mem::take(w);
        w.put(
            T::run_pending,
            Key::new().id(project).id(&run.id),
            pending_count.to_be_bytes(),
        );
        if run.expanded && pending_count == 0 {
            run.processed = true;
            run.processed_at = Some(Timestamp::now());
        } else {
            w.put(T::runs_active, Key::new().id(&run.id).id(project), b"");
        }
        w.put_rec(T::flow_runs, Key::new().id(project).id(&run.id), &*run);
        let body =
            serde_json::to_vec(&run.accepted_view()).map_err(|e| Error::internal(e.to_string()))?;
        if let Some((scope, hash)) = idempotency {
            let rec = IdempotentResponse {
                payload_hash: hash.clone(),
                status: 202,
                body: body.clone(),
                created_at: now,
            };
            w.put_rec(T::idempotency, Key::new().id(project).bytes(scope), &rec);
        }
        self.commit(w)?;
        Ok(body)
    }

    fn run_pending(&self, key: &Key) -> Result<u64> {
        Ok(match self.tree(T::run_pending).get(key)? {
            Some(v) if v.len() == 8 => {
                let mut b = [0u8; 8];
                b.copy_from_slice(&v);
                u64::from_be_bytes(b)
            }
            _ => 0,
        })
    }

    pub fn flow_run(&self, project: &Uuid, id: &Uuid) -> Result<Option<FlowRun>> {
        self.get_rec(T::flow_runs, Key::new().id(project).id(id).as_ref())
    }

    /// Runs not yet processed: `(project, run id)`, for recovery on start.
    pub fn active_runs(&self) -> Result<Vec<(Uuid, Uuid)>> {
        let mut out = vec![];
        for kv in self.tree(T::runs_active).iter() {
            let (k, _) = kv?;
            out.push((uuid_at(&k, 16), uuid_at(&k, 0)));
        }
        Ok(out)
    }

    /// Expands a topic run into notifications, up to `n` subscribers per commit,
    /// until it is complete, calling `out` after each chunk's commit with the
    /// deliveries queued and the frames of in-app deliveries settled at once
    /// (both to be released once durable); `out` returning false stops after
    /// that chunk. Subscribers whose subscription is
    /// newer than the run are not part of it.
    ///
    /// Two threads share the work: this one prepares chunk k+1 (subscribers,
    /// users, preferences, rendering, records) while a scoped helper commits
    /// chunk k (the recipients' feed counts and events under their feed locks,
    /// the run's counter and record, the commit). Each commit is atomic with
    /// the run's expansion cursor, so a crash resumes after the last committed
    /// chunk. Only one expansion of a run may be in progress (its actor's).
    ///
    /// The first chunks are smaller (n/8, doubling up to n): the first frames
    /// wait for one prepare and one commit, and a small chunk starts the
    /// two threads' pipeline (and the sockets) sooner.
    pub fn expand_topic(
        &self,
        project: &Uuid,
        run_id: &Uuid,
        n: usize,
        mut out: impl FnMut(Vec<QueueItem>, UserFrames) -> bool + Send,
    ) -> Result<()> {
        let run = self
            .flow_run(project, run_id)?
            .ok_or_else(|| Error::not_found("flow_run", run_id))?;
        if run.expanded {
            return Ok(());
        }
        let actor = match run.actor_id {
            Some(a) => self.user(project, &a)?,
            None => None,
        };
        let st = self.stager(*project, &run, actor.as_ref())?;
        let explicit: HashSet<Uuid> = run.explicit_ids.iter().copied().collect();
        let topic = run.topic.clone().unwrap_or_default();
        let mut state = run.clone();
        std::thread::scope(|scope| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<PreparedChunk>(1);
            let committer = scope.spawn(move || -> Result<()> {
                for c in rx {
                    let done = c.run.expanded;
                    let (queued, frames) = self.commit_chunk(project, c)?;
                    if !out(queued, frames) || done {
                        break;
                    }
                }
                Ok(())
            });
            let prepared = (|| -> Result<()> {
                let mut size = (n / 8).max(1);
                loop {
                    let c =
                        self.prepare_chunk(project, &st, &explicit, &topic, &mut state, size)?;
                    size = (size * 2).min(n);
                    let done = c.run.expanded;
                    if tx.send(c).is_err() || done {
                        return Ok(()); // the committer stopped: its result says why
                    }
                }
            })();
            drop(tx);
            let committed = committer
                .join()
                .unwrap_or_else(|_| Err(Error::internal("topic expansion panicked")));
            committed.and(prepared)
        })
    }

    /// Prepares the next chunk of a topic run's expansion from `state` (the run
    /// as it will be after the chunks already prepared), which it advances.
    fn prepare_chunk(
        &self,
        project: &Uuid,
        st: &Stager,
        explicit: &HashSet<Uuid>,
        topic: &str,
        state: &mut FlowRun,
        n: usize,
    ) -> Result<PreparedChunk> {
        let chunk =
            self.topic_subscribers_chunk(project, topic, state.expand_cursor.as_ref(), n)?;
        let mut todo = Vec::with_capacity(chunk.len());
        let done = expand::select(state, &chunk, n, explicit, &mut todo);
        let stage = |uids: &[Uuid]| -> Result<Part> {
            let mut part = Part::default();
            for uid in uids {
                if let Some(user) = self.user(project, uid)? {
                    self.stage_notification(st, &user, &mut part)?;
                }
            }
            part.finish(project);
            Ok(part)
        };
        // Reading users and preferences and rendering is most of a chunk's
        // cost and each recipient's own: two threads share a large chunk.
        let parts = if todo.len() >= PARALLEL_STAGING {
            let (a, b) = todo.split_at(todo.len() / 2);
            std::thread::scope(|scope| {
                let other = scope.spawn(|| stage(b));
                let first = stage(a);
                let second = other
                    .join()
                    .unwrap_or_else(|_| Err(Error::internal("staging panicked")));
                Ok::<_, Error>(vec![first?, second?])
            })?
        } else {
            vec![stage(&todo)?]
        };
        let mut c = PreparedChunk {
            w: Writes::new(),
            queued: vec![],
            feed: vec![],
            pending: 0,
            run: state.clone(),
        };
        let mut nids = Vec::with_capacity(todo.len());
        for part in parts {
            c.w.append(part.w);
            c.queued.extend(part.queued);
            c.feed.extend(part.feed);
            c.pending += part.pending;
            nids.extend(part.nids);
        }
        state.notifications_count += nids.len() as u64;
        self.stage_run_indexes(&mut c.w, project, state, &mut nids);
        state.expanded = done;
        c.run = state.clone();
        Ok(c)
    }

    /// Commits a prepared chunk: the recipients' feed entries and events under
    /// their feed locks, and the run's pending counter and record under its lock.
    fn commit_chunk(
        &self,
        project: &Uuid,
        c: PreparedChunk,
    ) -> Result<(Vec<QueueItem>, UserFrames)> {
        let PreparedChunk {
            mut w,
            queued,
            feed,
            pending,
            mut run,
        } = c;
        let rk = run_lock_key(project, &run.id);
        let _run = self.lock_runs([rk.as_slice()]);
        let feed_keys: Vec<Vec<u8>> = feed
            .iter()
            .map(|(d, _)| feed_lock_key(project, &d.recipient_id))
            .collect();
        let _feeds = self.lock_feeds(feed_keys.iter().map(|k| k.as_slice()));
        let frames = self.stage_feeds(&mut w, project, feed)?;
        let pk = Key::new().id(project).id(&run.id);
        let now_pending = self.run_pending(&pk)? + pending;
        w.put(T::run_pending, &pk, now_pending.to_be_bytes());
        if run.expanded && now_pending == 0 {
            run.processed = true;
            run.processed_at = Some(Timestamp::now());
            w.del(T::runs_active, Key::new().id(&run.id).id(project));
        }
        w.put_rec(T::flow_runs, Key::new().id(project).id(&run.id), &run);
        let res = self.commit(w);
        for (p, u, _) in &frames {
            self.forget_feed_page(p, u);
        }
        res?;
        Ok((queued, frames))
    }

    /// A notification's record: stored alone, or in its group (see
    /// `records::Grouper`).
    pub(crate) fn notif_rec(&self, project: &Uuid, nid: &Uuid) -> Result<Option<NotifRec>> {
        if let Some(r) = self.get_rec(T::notifications, notif_key(project, nid).as_ref())? {
            return Ok(Some(r));
        }
        let gk = Key::new().id(project).bytes(&nid.as_bytes()[..14]);
        let Some(v) = self.tree(T::notifications).get(gk)? else {
            return Ok(None);
        };
        match group_member(&v, nid)? {
            Some(b) => Ok(Some(codec::dec::<NotifRec>(b)?).filter(|r| r.n.id == *nid)),
            None => Ok(None),
        }
    }

    /// Visits the project's notification records within bounds (on notification
    /// ids) in id order, descending when `rev`, until `f` returns false: records
    /// stored alone and groups' members, a record stored alone taking the place
    /// of a group's copy.
    pub(crate) fn visit_records(
        &self,
        project: &Uuid,
        bounds: Bounds,
        rev: bool,
        f: &mut dyn FnMut(NotifRec) -> bool,
    ) -> Result<()> {
        use std::ops::Bound;
        let p = Key::new().id(project);
        let n = p.0.len();
        // A group sorts just before its members: start from the lower bound's.
        let lo = match bounds.0 {
            Bound::Included(k) | Bound::Excluded(k) if k.len() >= 14 => Bound::Included(&k[..14]),
            other => other,
        };
        let (klo, khi) = key_range(&p.0, (lo, bounds.1));
        let it = self.tree(T::notifications).range::<Vec<u8>, _>((klo, khi));
        // Entries sharing a 14-byte prefix (a group and any record of one of
        // its members stored alone) are gathered, then emitted in order.
        let mut batch: Vec<(sled::IVec, sled::IVec)> = vec![];
        let mut flush = |batch: &mut Vec<(sled::IVec, sled::IVec)>| -> Result<bool> {
            let mut recs: BTreeMap<[u8; 16], Vec<u8>> = BTreeMap::new();
            for (k, v) in batch.drain(..) {
                let tail = &k[n..];
                let mut id = [0u8; 16];
                match tail.len() {
                    14 => {
                        for (i, b) in group_members(&v)? {
                            id[..14].copy_from_slice(tail);
                            id[14] = i;
                            id[15] = NOTIFICATION_TAG;
                            recs.entry(id).or_insert_with(|| b.to_vec());
                        }
                    }
                    16 => {
                        id.copy_from_slice(tail);
                        recs.insert(id, v.to_vec());
                    }
                    _ => return Err(Error::internal("corrupt notification key")),
                }
            }
            let ordered: Box<dyn Iterator<Item = ([u8; 16], Vec<u8>)>> = if rev {
                Box::new(recs.into_iter().rev())
            } else {
                Box::new(recs.into_iter())
            };
            for (id, v) in ordered {
                if within(&id, bounds) && !f(codec::dec(&v)?) {
                    return Ok(false);
                }
            }
            Ok(true)
        };
        let mut step = |kv: sled::Result<(sled::IVec, sled::IVec)>| -> Result<bool> {
            let (k, v) = kv?;
            if k.len() < n + 14 {
                return Err(Error::internal("corrupt notification key"));
            }
            let same = batch
                .first()
                .is_some_and(|(b, _)| b[n..n + 14] == k[n..n + 14]);
            if !same && !flush(&mut batch)? {
                return Ok(false);
            }
            batch.push((k, v));
            Ok(true)
        };
        let entries: Box<dyn Iterator<Item = _>> = if rev {
            Box::new(it.rev())
        } else {
            Box::new(it)
        };
        for kv in entries {
            if !step(kv)? {
                return Ok(());
            }
        }
        flush(&mut batch)?;
        Ok(())
    }

    pub fn notification(&self, project: &Uuid, id: &Uuid) -> Result<Option<Notification>> {
        if notification_of(id) != *id {
            return Ok(None);
        }
        Ok(self.notif_rec(project, id)?.map(|r| r.n))
    }

    /// A delivery as stored in its notification, without the feed state.
    pub(crate) fn delivery_raw(&self, project: &Uuid, id: &Uuid) -> Result<Option<Delivery>> {
        if notification_of(id) == *id {
            return Ok(None);
        }
        Ok(self
            .notif_rec(project, &notification_of(id))?
            .and_then(|r| r.d.into_iter().find(|d| d.id == *id)))
    }

    /// A delivery as the API shows it: an in_app one carries its feed state.
    pub fn delivery(&self, project: &Uuid, id: &Uuid) -> Result<Option<Delivery>> {
        match self.delivery_raw(project, id)? {
            Some(d) => self.with_feed_state(project, d).map(Some),
            None => Ok(None),
        }
    }

    pub fn notification_deliveries(&self, project: &Uuid, nid: &Uuid) -> Result<Vec<Delivery>> {
        let Some(rec) = self.notif_rec(project, nid)? else {
            return Ok(vec![]);
        };
        rec.d
            .into_iter()
            .map(|d| self.with_feed_state(project, d))
            .collect()
    }

    pub fn list_notifications(
        &self,
        project: &Uuid,
        f: &NotificationFilter,
        req: &PageReq,
    ) -> Result<Page<Notification>> {
        let keep = |n: &Notification| {
            in_range(&n.id, &f.created_after, &f.created_before)
                && f.status.is_none_or(|s| n.processed == s)
                && f.topic.as_ref().is_none_or(|t| n.topic.as_ref() == Some(t))
                && f.flow_id.is_none_or(|x| n.flow_id == x)
                && f.flow_run_id.is_none_or(|x| n.flow_run_id == x)
                && f.recipient.is_none_or(|x| n.recipient_id == x)
        };
        // By id, from an index: the record, if the filters keep it.
        let by_id = |id: Uuid| -> Result<Option<Notification>> {
            if !in_range(&id, &f.created_after, &f.created_before) {
                return Ok(None);
            }
            Ok(self.notification(project, &id)?.filter(|n| keep(n)))
        };
        let p = Key::new().id(project);
        // A packed index (by run, by topic): its notifications in id order.
        let packed = |t: T, prefix: Key| {
            paginate(
                &mut PackedSource {
                    tree: self.tree(t),
                    prefix: &prefix.0,
                    pick: by_id,
                },
                req,
            )
        };
        if let Some(r) = &f.flow_run_id {
            return packed(T::run_index, run_index(project, r));
        }
        // A space keyed by `(prefix, delivery or notification id)` lists the
        // notifications of its keys, each once, at its group's lowest key.
        let once_per_notification = |t: T, prefix: Key| {
            let tree = self.tree(t);
            let at = prefix.0.len();
            paginate(
                &mut TreeSource {
                    tree: tree.clone(),
                    prefix: &prefix.0,
                    pick: |k: &sled::IVec, _: &sled::IVec| {
                        if k.len() != at + 16 || !first_of_group(&tree, k, at)? {
                            return Ok(None);
                        }
                        by_id(notification_of(&tail_id(k)))
                    },
                },
                req,
            )
        };
        if let Some(u) = &f.recipient {
            // A user's feed space lists each of their notifications: feed
            // entries (delivery ids) and markers (notification ids).
            return once_per_notification(T::feed, p.id(u));
        }
        if let Some(t) = &f.topic {
            return packed(T::topic_index, topic_index(project, t));
        }
        if f.status == Some(false) {
            // Pending notifications are those with a delivery in the queue.
            return once_per_notification(T::queue, p);
        }
        paginate(
            &mut NotificationSource {
                store: self,
                project,
                keep: &keep,
            },
            req,
        )
    }

    pub fn list_deliveries(
        &self,
        project: &Uuid,
        f: &DeliveryFilter,
        req: &PageReq,
    ) -> Result<Page<Delivery>> {
        let keep = |d: &Delivery| {
            in_range(&d.id, &f.created_after, &f.created_before)
                && f.status.is_none_or(|s| d.status == s)
                && f.channel_type.is_none_or(|x| d.channel_type == x)
                && f.channel_id.is_none_or(|x| d.channel_id == x)
                && f.notification_id.is_none_or(|x| d.notification_id == x)
                && f.recipient.is_none_or(|x| d.recipient_id == x)
        };
        let p = Key::new().id(project);
        let index = if f.status == Some(DeliveryStatus::Pending) {
            Some((T::queue, p.clone()))
        } else {
            f.status
                .filter(|s| status_indexed(*s))
                .map(|s| (T::deliv_by_status, p.clone().u8(s.index())))
        };
        let page = match (&f.notification_id, index) {
            (None, Some((tree, prefix))) => paginate(
                &mut TreeSource {
                    tree: self.tree(tree),
                    prefix: &prefix.0,
                    pick: |k: &sled::IVec, _: &sled::IVec| {
                        let id = tail_id(k);
                        if !in_range(&id, &f.created_after, &f.created_before) {
                            return Ok(None);
                        }
                        Ok(self.delivery_raw(project, &id)?.filter(|d| keep(d)))
                    },
                },
                req,
            )?,
            // A notification's deliveries, or all: the notifications' records.
            (nid, _) => paginate(
                &mut DeliverySource {
                    store: self,
                    project,
                    only: nid.map(|n| notification_of(&n)),
                    keep: &keep,
                },
                req,
            )?,
        };
        let items = page
            .items
            .into_iter()
            .map(|d| self.with_feed_state(project, d))
            .collect::<Result<Vec<_>>>()?;
        Ok(Page {
            items,
            first_key: page.first_key,
            last_key: page.last_key,
            has_more_after: page.has_more_after,
            has_more_before: page.has_more_before,
        })
    }

    /// Every queued delivery of one channel type, in due order (recovery).
    pub fn queue_items(&self, ct: ChannelType) -> Result<Vec<QueueItem>> {
        let mut out = vec![];
        for kv in self.tree(T::queue).iter() {
            let (k, v) = kv?;
            if let Some(q) = QueueItem::from_kv(&k, &v).filter(|q| q.channel_type == ct) {
                out.push(q);
            }
        }
        out.sort_by_key(|q| q.due_ms);
        Ok(out)
    }

    /// Locks the notifications of `items` and loads them with the deliveries
    /// the items settle, then locks their runs (see `Settling`).
    pub(super) fn load_for_finish<'a>(
        &self,
        items: impl IntoIterator<Item = (&'a QueueItem, Outcome)>,
    ) -> Result<Settling<'_>> {
        let items: Vec<(QueueItem, Outcome)> = items.into_iter().map(|(q, o)| (*q, o)).collect();
        let nkeys: Vec<Vec<u8>> = items
            .iter()
            .map(|(q, _)| {
                Key::new()
                    .u8(b'n')
                    .id(&q.project)
                    .id(&notification_of(&q.delivery_id))
                    .0
            })
            .collect();
        let notif_guards = self.lock_many(nkeys.iter().map(|k| k.as_slice()));
        let mut recs: Vec<((Uuid, Uuid), NotifRec)> = vec![];
        let mut at: HashMap<(Uuid, Uuid), usize> = HashMap::new();
        let mut loaded = vec![];
        for (q, o) in items {
            let key = (q.project, notification_of(&q.delivery_id));
            let ri = match at.get(&key) {
                Some(&i) => i,
                None => match self.notif_rec(&key.0, &key.1)? {
                    Some(r) => {
                        recs.push((key, r));
                        at.insert(key, recs.len() - 1);
                        recs.len() - 1
                    }
                    None => continue,
                },
            };
            if let Some(di) = recs[ri].1.d.iter().position(|d| d.id == q.delivery_id) {
                loaded.push((q, o, ri, di));
            }
        }
        let rkeys: Vec<Vec<u8>> = recs
            .iter()
            .map(|((p, _), r)| run_lock_key(p, &r.n.flow_run_id))
            .collect();
        let run_guards = self.lock_runs(rkeys.iter().map(|k| k.as_slice()));
        Ok(Settling {
            recs,
            items: loaded,
            _guards: (notif_guards, run_guards),
        })
    }

    /// Records the outcomes of attempts, plus `extra` writes staged by the caller,
    /// in one commit (see `stage_finish`). Returns the deliveries as written and
    /// the runs that became processed.
    pub(crate) fn finish_deliveries(
        &self,
        items: &[(QueueItem, Outcome)],
        extra: Writes,
    ) -> Result<Finished> {
        let mut w = extra;
        let now = Timestamp::now();
        let mut settling = self.load_for_finish(items.iter().map(|(q, o)| (q, o.clone())))?;
        let (written, runs) = self.stage_finish(&mut w, &mut settling, now)?;
        self.commit(w)?;
        drop(settling); // the locks, after the commit
        Tally::record(&written, now);
        Ok((written, runs))
    }

    /// Stages the outcomes into `w`: each notification touched is rewritten once,
    /// `processed` when its deliveries have all settled, and runs whose
    /// notifications have all been processed are marked so. The caller keeps
    /// `settling` (its locks) until it has committed `w`.
    pub(super) fn stage_finish(
        &self,
        w: &mut Writes,
        settling: &mut Settling<'_>,
        now: Timestamp,
    ) -> Result<Finished> {
        let mut recs = std::mem::take(&mut settling.recs);
        let items = std::mem::take(&mut settling.items);
        let mut written: Vec<Delivery> = Vec::with_capacity(items.len());
        let mut touched: Vec<bool> = vec![false; recs.len()];
        for (q, o, ri, di) in items {
            let d = &mut recs[ri].1.d[di];
            if d.status.is_final() {
                w.del(T::queue, q.key());
                continue;
            }
            let old = d.status;
            match settle::apply(d, &q, o, now) {
                Some(nq) => w.put(T::queue, nq.key(), nq.value()),
                None => w.del(T::queue, q.key()),
            }
            if old != d.status && status_indexed(d.status) {
                w.put(
                    T::deliv_by_status,
                    Key::new().id(&q.project).u8(d.status.index()).id(&d.id),
                    b"",
                );
            }
            written.push(d.clone());
            touched[ri] = true;
        }
        // Notifications whose deliveries have all settled.
        let mut run_done: HashMap<(Uuid, Uuid), u64> = HashMap::new();
        for (((p, nid), rec), t) in recs.iter_mut().zip(touched) {
            if !t {
                continue;
            }
            if settle::notification_done(&mut rec.n, &rec.d, now) {
                *run_done.entry((*p, rec.n.flow_run_id)).or_default() += 1;
            }
            w.put_rec(T::notifications, notif_key(p, nid), &*rec);
        }
        let mut runs_processed = vec![];
        for ((p, rid), k) in run_done {
            // The small counter, not the run record (which holds the flow), is what
            // changes per notification; the record is rewritten once, at the end.
            let pk = Key::new().id(&p).id(&rid);
            let left = self.run_pending(&pk)?.saturating_sub(k);
            w.put(T::run_pending, &pk, left.to_be_bytes());
            if left == 0 {
                if let Some(mut run) = self.flow_run(&p, &rid)? {
                    if settle::run_done(&mut run, now) {
                        w.del(T::runs_active, Key::new().id(&rid).id(&p));
                        w.put_rec(T::flow_runs, Key::new().id(&p).id(&rid), &run);
                        runs_processed.push((p, rid));
                    }
                }
            }
        }
        Ok((written, runs_processed))
    }
}

/// Chunks of at least this many recipients are staged by two threads.
const PARALLEL_STAGING: usize = 64;

/// One chunk of a topic run's expansion, staged and waiting for its commit.
struct PreparedChunk {
    w: Writes,
    queued: Vec<QueueItem>,
    /// In-app deliveries settled with their notifications, with their feed
    /// entries' JSON (see `stage_feeds`).
    feed: Vec<(Delivery, String)>,
    /// Notifications of the chunk left pending.
    pending: u64,
    /// The run's record as of this chunk (cursor, count, `expanded`).
    run: FlowRun,
}

/// The lock (run class) of a run's counter and record.
fn run_lock_key(project: &Uuid, run: &Uuid) -> Vec<u8> {
    Key::new().u8(b'r').id(project).id(run).0
}

type Guards<'s> = Vec<std::sync::MutexGuard<'s, ()>>;

/// Deliveries being settled: their notifications, loaded under the
/// notifications' locks (entity class) and with their runs' locks (run class)
/// held, which this value keeps until it is dropped. Every writer of a
/// notification record holds its lock from reading it to committing, so two
/// channels settling deliveries of one notification never lose an update.
pub(crate) struct Settling<'s> {
    recs: Vec<((Uuid, Uuid), NotifRec)>,
    /// `(item, outcome, index in recs, index of the delivery in its record)`.
    items: Vec<(QueueItem, Outcome, usize, usize)>,
    _guards: (Guards<'s>, Guards<'s>),
}

impl Settling<'_> {
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn delivery(&self, i: usize) -> &Delivery {
        let (_, _, ri, di) = &self.items[i];
        &self.recs[*ri].1.d[*di]
    }

    /// The queue item and delivery of each item, in order.
    pub fn deliveries(&self) -> impl Iterator<Item = (&QueueItem, &Delivery)> {
        self.items
            .iter()
            .map(|(q, _, ri, di)| (q, &self.recs[*ri].1.d[*di]))
    }

    pub fn set_outcome(&mut self, i: usize, o: Outcome) {
        self.items[i].1 = o;
    }

    /// Drops items whose delivery has already settled.
    pub fn retain_unsettled(&mut self) {
        let recs = &self.recs;
        self.items
            .retain(|(_, _, ri, di)| !recs[*ri].1.d[*di].status.is_final());
    }
}

/// Deliveries in id order from the notification records of a project (or of
/// one notification, `only`): each record gives its deliveries, whose ids share
/// the notification id's first 15 bytes and sort just below it.
struct DeliverySource<'a, K> {
    store: &'a Store,
    project: &'a Uuid,
    only: Option<Uuid>,
    keep: &'a K,
}

impl<K: Fn(&Delivery) -> bool> Source<Delivery> for DeliverySource<'_, K> {
    fn visit(
        &mut self,
        bounds: Bounds,
        rev: bool,
        f: &mut dyn FnMut(Vec<u8>, Delivery) -> bool,
    ) -> Result<()> {
        use std::ops::Bound;
        let mut emit = |rec: NotifRec| -> bool {
            let mut ds: Vec<Delivery> = rec
                .d
                .into_iter()
                .filter(|d| within(d.id.as_bytes(), bounds) && (self.keep)(d))
                .collect();
            ds.sort_by_key(|d| d.id);
            if rev {
                ds.reverse();
            }
            ds.into_iter().all(|d| f(d.id.as_bytes().to_vec(), d))
        };
        if let Some(nid) = self.only {
            if let Some(rec) = self.store.notif_rec(self.project, &nid)? {
                emit(rec);
            }
            return Ok(());
        }
        // Records whose notification id could hold a delivery id within bounds.
        let rec = |b: Bound<&[u8]>| match b {
            Bound::Included(k) | Bound::Excluded(k) if k.len() == 16 => {
                let mut v = k.to_vec();
                v[15] = NOTIFICATION_TAG;
                Some(v)
            }
            _ => None,
        };
        let (lo, hi) = (rec(bounds.0), rec(bounds.1));
        self.store.visit_records(
            self.project,
            (
                lo.as_deref().map_or(Bound::Unbounded, Bound::Included),
                hi.as_deref().map_or(Bound::Unbounded, Bound::Included),
            ),
            rev,
            &mut emit,
        )
    }
}

/// Every notification of a project, in id order (their records).
struct NotificationSource<'a, K> {
    store: &'a Store,
    project: &'a Uuid,
    keep: &'a K,
}

impl<K: Fn(&Notification) -> bool> Source<Notification> for NotificationSource<'_, K> {
    fn visit(
        &mut self,
        bounds: Bounds,
        rev: bool,
        f: &mut dyn FnMut(Vec<u8>, Notification) -> bool,
    ) -> Result<()> {
        self.store
            .visit_records(self.project, bounds, rev, &mut |r| {
                !(self.keep)(&r.n) || f(r.n.id.as_bytes().to_vec(), r.n)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ops::Bound;

    fn rec(nid: Uuid, recipient: Uuid) -> NotifRec {
        let now = Timestamp::of_id(&nid);
        NotifRec {
            n: Notification {
                id: nid,
                flow_id: Uuid::nil(),
                flow_run_id: Uuid::nil(),
                topic: None,
                processed: true,
                actor_id: None,
                recipient_id: recipient,
                processed_at: Some(now),
                created_at: now,
                updated_at: now,
            },
            d: vec![],
        }
    }

    fn visit(store: &Store, p: &Uuid, bounds: Bounds, rev: bool) -> Vec<(Uuid, Uuid)> {
        let mut out = vec![];
        store
            .visit_records(p, bounds, rev, &mut |r| {
                out.push((r.n.id, r.n.recipient_id));
                true
            })
            .unwrap();
        out
    }

    /// Groups and records stored alone read and list as one id-ordered set, a
    /// record stored alone replacing its group's copy, within any bounds.
    #[test]
    fn grouped_records_read_and_visit_with_singles_and_overrides() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let p = Uuid::now_v7();
        let (old, new) = (Uuid::now_v7(), Uuid::now_v7());
        let mut w = Writes::new();
        let put_group = |w: &mut Writes, (tail, v): (Vec<u8>, Vec<u8>)| {
            w.put(T::notifications, Key::new().id(&p).bytes(&tail), v)
        };
        let mut g = Grouper::default();
        let mut ids = vec![];
        // 40 ids: groups of 16, 16 and 8; every fifth one stays alone
        for i in 0..40 {
            let (nid, done) = g.next_id();
            if let Some(done) = done {
                put_group(&mut w, done);
            }
            if i % 5 == 0 {
                w.put_rec(T::notifications, notif_key(&p, &nid), &rec(nid, old));
            } else {
                g.add(&nid, codec::enc(&rec(nid, old)));
            }
            ids.push(nid);
        }
        put_group(&mut w, g.take().unwrap());
        // another project's records are not visited
        let other = Uuid::now_v7();
        w.put_rec(
            T::notifications,
            notif_key(&other, &ids[3]),
            &rec(ids[3], old),
        );
        store.commit(w).unwrap();
        assert_eq!(
            ids[..16]
                .iter()
                .map(|i| &i.as_bytes()[..14])
                .collect::<HashSet<_>>()
                .len(),
            1
        );
        assert_ne!(ids[15].as_bytes()[..14], ids[16].as_bytes()[..14]);
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(sorted, ids, "ids grow");

        // a grouped member rewritten alone (as a settled delivery would be)
        let mut w = Writes::new();
        w.put_rec(T::notifications, notif_key(&p, &ids[7]), &rec(ids[7], new));
        store.commit(w).unwrap();

        for (i, id) in ids.iter().enumerate() {
            let r = store.notif_rec(&p, id).unwrap().unwrap();
            assert_eq!(r.n.id, *id);
            assert_eq!(r.n.recipient_id, if i == 7 { new } else { old });
        }
        let mut missing = *ids[3].as_bytes();
        missing[14] = 200;
        assert!(store
            .notif_rec(&p, &Uuid::from_bytes(missing))
            .unwrap()
            .is_none());

        let all = visit(&store, &p, (Bound::Unbounded, Bound::Unbounded), false);
        assert_eq!(all.iter().map(|x| x.0).collect::<Vec<_>>(), ids);
        assert_eq!(all[7].1, new);
        let mut back = visit(&store, &p, (Bound::Unbounded, Bound::Unbounded), true);
        back.reverse();
        assert_eq!(back, all);
        // bounds inside groups, both ways
        for (lo, hi) in [(3, 20), (16, 17), (0, 39), (9, 33)] {
            let (a, b) = (ids[lo].as_bytes().to_vec(), ids[hi].as_bytes().to_vec());
            let got = visit(
                &store,
                &p,
                (Bound::Excluded(&a), Bound::Included(&b)),
                false,
            );
            assert_eq!(
                got.iter().map(|x| x.0).collect::<Vec<_>>(),
                ids[lo + 1..=hi]
            );
            let mut got = visit(&store, &p, (Bound::Included(&a), Bound::Excluded(&b)), true);
            got.reverse();
            assert_eq!(got.iter().map(|x| x.0).collect::<Vec<_>>(), ids[lo..hi]);
        }
        // stopping early
        let mut n = 0;
        store
            .visit_records(&p, (Bound::Unbounded, Bound::Unbounded), true, &mut |_| {
                n += 1;
                n < 5
            })
            .unwrap();
        assert_eq!(n, 5);
    }
}
