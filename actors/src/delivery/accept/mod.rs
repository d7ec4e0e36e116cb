//! Accepting a run (`accept_run`): the topic and actor checks (422s), its
//! explicit recipients without repeats, the users as the run's patches leave
//! them, how many recipients it counts, the run's record and 202 body and,
//! per recipient, which deliveries a notification gets (delay steps offset
//! the ones after them), their templates rendered, the recipient's
//! preferences applied, and which in-app deliveries are settled at once
//! rather than queued (`Stager`), with the workflow steps decided on the
//! way: conditions, throttles, send windows and batches (a run that opens a
//! batch stages its later deliveries due at the close and unrendered, one
//! that joins stops there; see `batch`), and the recipient's quiet hours
//! (one delivery held until they end, `rules::quiet_hours`). A backend
//! stores what this decides as one atomic change (`RunRepo::commit_run`); a
//! topic chunk is staged the same way (`expand`).

use super::batch;
use super::conditions::{condition_false_error, Decision};
use super::tally::Tally;
use crate::error::{Error, Result, Validator};
use crate::model::{
    delivery_id, new_id, Channel, ChannelType, Delivery, DeliveryError, DeliveryErrorCode,
    DeliveryStatus, FlowRun, Notification, Preferences, Rendered, Step, StopReason, Timestamp,
    User, UserPatch, NOTIFICATION_TAG,
};
use crate::render::{Limits, RunRenderer};
use crate::rules::critical;
use crate::rules::preferences::{self, Layers};
use crate::storage::{
    AcceptInput, AcceptedRun, ActorSpec, QueueItem, RunCommit, RunRecipient, StagedNotification,
    StagedRun, Storage, UserWrite,
};
use crate::trace::{self, TraceEntry};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use uuid::Uuid;

/// How many times a run is staged while its users keep changing under it,
/// before it is refused with 409 `recipients_changed`.
const ATTEMPTS: usize = 4;

/// Validates and stages a run with explicit recipients (or a topic run's
/// explicit part and record) and has the backend store it
/// (`RunRepo::commit_run`). Durability is the caller's next step: wait for
/// it before answering 202.
///
/// Rendering happens before any lock is taken. A backend's user locks may
/// be shared by every project (sled's are striped), so a run that rendered
/// under them (as it once did, until 9055693) made other projects' user
/// writes wait for its templates. Instead, the recipients (and an inline
/// actor) are patched as read, outside any lock, the notifications are
/// staged (preferences, rendering, records) from that result, and only then
/// does the backend take the locks, for the real upserts and the commit: if
/// a user is not as it was read (this project changed it meanwhile), nothing
/// is stored and the run is staged again, a few times, then refused with
/// 409. Per-project lock stripes were the alternative; they would still let
/// a project's renders hold its own users' writes and cost a lock table per
/// project, for nothing this does not give.
pub(crate) fn accept_run(
    s: &dyn Storage, limits: Limits, project: &Uuid, input: AcceptInput,
) -> Result<AcceptedRun> {
    accept_run_with(s, limits, project, input, &mut || Ok(()))
}

/// `accept_run`, calling `between` after each staging, before the backend's
/// commit: where another request may change a user (a test does).
fn accept_run_with(
    s: &dyn Storage, limits: Limits, project: &Uuid, input: AcceptInput,
    between: &mut dyn FnMut() -> Result<()>,
) -> Result<AcceptedRun> {
    let own_quota = input.timing.quota_bytes;
    let (order, patches) = dedupe(input.recipients);
    let mut v = Validator::new();
    let topic = match &input.topic {
        Some(t) => match s.topic(project, t)? {
            Some(t) => Some(t),
            None => {
                v.push("topic", "inclusion", "no topic with this key");
                None
            }
        },
        None => None,
    };
    if let Some(ActorSpec::Existing(e)) = &input.actor {
        if s.user_by_ext(project, e)?.is_none() {
            v.push("actor", "inclusion", NO_SUCH_ACTOR);
        }
    }
    v.finish()?;

    // The id and moment each new user would get: the same in every attempt.
    let mut fresh: HashMap<String, (Uuid, Timestamp)> = HashMap::new();
    let actor_ext = match &input.actor {
        Some(ActorSpec::Existing(e)) | Some(ActorSpec::Inline(e, _)) => Some(e),
        None => None,
    };
    for e in order.iter().chain(actor_ext) {
        fresh.entry(e.clone()).or_insert_with(new_id);
    }
    let mut run = new_run(input.flow, input.topic, input.data, input.timing);
    run.test_channel_id = input.test_channel_id;
    run.expanded = topic.is_none();
    for _ in 0..ATTEMPTS {
        // Outside any lock: the users as they would be, and everything
        // rendered and staged for them.
        let (actor, users, writes) =
            patched_users(s, project, &input.actor, &order, &patches, &fresh)?;
        // Topic subscribers that are also explicit recipients count once.
        let mut recipients_count = users.len() as u64;
        if let Some(t) = &topic {
            let mut overlap = 0u64;
            for u in &users {
                if s.subscribed(project, &u.id, &t.key)? {
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
        let (notifications, queued) = {
            let st = Stager::new(s, limits, *project, &run, actor.as_ref())?;
            st.stage_all(s, &users)?
        };
        // Before anything is stored: the size bounds and the quota.
        let cost = crate::quota::admit(s, project, own_quota, &notifications, &|i| {
            users[i].external_id.clone()
        })?;
        let pending = notifications.iter().any(|n| n.pending);
        run.processed = run.expanded && !pending;
        run.processed_at = run.processed.then(Timestamp::now);
        let body =
            serde_json::to_vec(&run.accepted_view()).map_err(|e| Error::internal(e.to_string()))?;
        let staged = StagedRun {
            run,
            users: writes,
            notifications,
            queued,
            body,
            idempotency: input.idempotency.clone(),
        };
        between()?;
        match s.commit_run(project, staged)? {
            RunCommit::Committed(accepted) => {
                crate::quota::count(s, project, cost);
                return Ok(accepted);
            }
            // changed meanwhile: stage again
            RunCommit::Stale(back) => run = back,
        }
    }
    Err(Error::conflict(
        "flow_run",
        None,
        "recipients_changed",
        "the run's recipients kept changing while it was being prepared; retry",
    ))
}

const NO_SUCH_ACTOR: &str = "no user with this external_id";

/// A new run's record before its recipients are known (not expanded, no
/// counts): what `accept_run` stages, and what a preview stages without
/// storing it.
pub(crate) fn new_run(
    flow: crate::model::Flow, topic: Option<String>, data: Value, timing: crate::storage::RunTiming,
) -> FlowRun {
    let (id, now) = new_id();
    FlowRun {
        id,
        flow_id: flow.id,
        flow,
        topic,
        data,
        actor_id: None,
        processed: false,
        recipients_count: 0,
        notifications_count: 0,
        explicit_ids: vec![],
        expand_cursor: None,
        expanded: false,
        created_at: now,
        processed_at: None,
        send_at: timing.send_at,
        clock_at: timing.clock_at,
        cancellation_key: timing.cancellation_key,
        timezone: timing.timezone,
        test_channel_id: None,
    }
}

/// The actor and the recipients (in order) as the run's patches leave them,
/// read outside any lock, and the writes that make them so: one per user,
/// each with the user as read, for the backend to check under its lock.
fn patched_users(
    s: &dyn Storage, project: &Uuid, actor: &Option<ActorSpec>, order: &[String],
    patches: &HashMap<String, Vec<UserPatch>>, fresh: &HashMap<String, (Uuid, Timestamp)>,
) -> Result<(Option<User>, Vec<User>, Vec<UserWrite>)> {
    let mut writes: Vec<UserWrite> = Vec::with_capacity(order.len() + 1);
    let mut at: HashMap<String, usize> = HashMap::new();
    let mut patch = |ext: &str, p: Option<&UserPatch>| -> Result<User> {
        // every name has its entry (see `accept_run`)
        let fresh = fresh.get(ext).copied().unwrap_or_else(new_id);
        let i = match at.get(ext) {
            Some(&i) => i,
            None => {
                // Through the store's cache of users (sled's; PostgreSQL
                // reads): commit_run checks under the user's lock that the
                // user is still as read, so a stale hit costs a retry.
                let before = s
                    .user_by_ext_cached(project, ext)?
                    .map(Arc::unwrap_or_clone);
                let after = match (&before, p) {
                    (Some(u), _) => u.clone(),
                    (None, Some(_)) => new_user(ext, fresh),
                    (None, None) => {
                        return Err(Error::field("actor", "inclusion", NO_SUCH_ACTOR));
                    }
                };
                writes.push(UserWrite {
                    external_id: ext.to_string(),
                    before,
                    after,
                });
                at.insert(ext.to_string(), writes.len() - 1);
                writes.len() - 1
            }
        };
        let w = &mut writes[i];
        if let Some(p) = p {
            let created = w.before.is_none();
            patch_user(&mut w.after, p, fresh.1, created);
        }
        Ok(w.after.clone())
    };
    let actor = match actor {
        Some(ActorSpec::Existing(e)) => Some(patch(e, None)?),
        Some(ActorSpec::Inline(e, p)) => Some(patch(e, Some(p))?),
        None => None,
    };
    let mut users = Vec::with_capacity(order.len());
    for ext in order {
        let mut user = None;
        for p in patches.get(ext).into_iter().flatten() {
            user = Some(patch(ext, Some(p))?);
        }
        users.extend(user);
    }
    Ok((actor, users, writes))
}

/// A user that does not exist yet, with the id and moment `fresh`.
pub(crate) fn new_user(ext: &str, (id, now): (Uuid, Timestamp)) -> User {
    User {
        id,
        external_id: ext.to_string(),
        first_name: None,
        last_name: None,
        email: None,
        phone: None,
        avatar: None,
        locale: None,
        timezone: None,
        custom_fields: Default::default(),
        created_at: now,
        updated_at: now,
    }
}

/// Applies `patch` to `user`; an existing user (not `created` by this
/// change) that it changes is updated `at`.
pub(crate) fn patch_user(user: &mut User, patch: &UserPatch, at: Timestamp, created: bool) {
    if patch.apply(user) && !created {
        user.updated_at = at;
    }
}

/// How many notification ids share a prefix (see `NotificationIds`).
pub(crate) const IDS_PER_PREFIX: u8 = 16;

/// Hands out the notification ids of one atomic change in runs of
/// `IDS_PER_PREFIX` that share their first 14 bytes (a fresh UUIDv7's); byte
/// 14 counts within the run and byte 15 is the notification tag. Ids still
/// grow in the order they are handed out, and a backend may store the settled
/// notifications of one prefix under one key (sled's groups,
/// `store::sled::records::Grouper`).
#[derive(Default)]
pub(crate) struct NotificationIds {
    prefix: Option<[u8; 14]>,
    next: u8,
}

impl NotificationIds {
    pub(crate) fn next_id(&mut self) -> Uuid {
        let prefix = match self.prefix {
            Some(p) if self.next < IDS_PER_PREFIX => p,
            _ => {
                let mut p = [0u8; 14];
                p.copy_from_slice(&Uuid::now_v7().as_bytes()[..14]);
                self.prefix = Some(p);
                self.next = 0;
                p
            }
        };
        let mut b = [0u8; 16];
        b[..14].copy_from_slice(&prefix);
        b[14] = self.next;
        b[15] = NOTIFICATION_TAG;
        self.next += 1;
        Uuid::from_bytes(b)
    }
}

/// Per-run state used while staging notifications.
pub(crate) struct Stager<'a> {
    pub(crate) project: Uuid,
    pub(crate) run: &'a FlowRun,
    pub(crate) renderer: RunRenderer,
    /// The flow's channels by id (`None`: deleted since the flow was saved).
    pub(crate) channels: HashMap<Uuid, Option<Channel>>,
    pub(crate) actor: Value,
    /// The template context's parts shared by every recipient of the run,
    /// converted to template values once.
    pub(crate) shared: crate::render::Shared,
    /// The project's preference defaults, read once for the run (or the
    /// chunk): under every recipient's own settings (`rules::preferences`).
    pub(crate) defaults: Preferences,
}

/// A run's explicit recipients without repeats, in the order each first
/// appears, with every patch given for each (applied in order).
pub(crate) fn dedupe(
    recipients: Vec<RunRecipient>,
) -> (Vec<String>, HashMap<String, Vec<UserPatch>>) {
    let mut order: Vec<String> = vec![];
    let mut patches: HashMap<String, Vec<UserPatch>> = HashMap::new();
    for r in recipients {
        if !patches.contains_key(&r.external_id) {
            order.push(r.external_id.clone());
        }
        patches.entry(r.external_id).or_default().push(r.patch);
    }
    (order, patches)
}

impl<'a> Stager<'a> {
    /// The staging state of `run`: its flow's channels read once, its
    /// templates compiled once, the context shared by its recipients.
    pub(crate) fn new(
        s: &dyn Storage, limits: Limits, project: Uuid, run: &'a FlowRun, actor: Option<&User>,
    ) -> Result<Stager<'a>> {
        let mut channels = HashMap::new();
        for step in &run.flow.steps {
            let route = step.channels.iter().map(|c| c.channel_id);
            for c in step.channel_id.into_iter().chain(route) {
                if let std::collections::hash_map::Entry::Vacant(e) = channels.entry(c) {
                    e.insert(s.channel(&project, &c)?);
                }
            }
        }
        let actor = super::frames::actor_json(actor);
        let p = s.find_project(crate::storage::ProjectRef::Id(&project))?;
        let brand = p.as_ref().and_then(|p| p.branding.clone());
        // The project's content, read only when it changed (`render::content`).
        let content = match &p {
            Some(p) => Some(crate::render::content::cached(p, || {
                s.contents(&project, None)
            })?),
            None => None,
        };
        let defaults = p.map(|p| p.preference_defaults).unwrap_or_default();
        Ok(Stager {
            defaults,
            project,
            run,
            renderer: RunRenderer::with_content(&run.flow, limits, content),
            channels,
            shared: crate::render::Shared::new(
                &actor,
                &run.data,
                &json!({"id": run.flow.id, "handle": run.flow.handle, "name": run.flow.name}),
            )
            .with_brand(brand.as_ref()),
            actor,
        })
    }

    /// Stages a notification for each of `users` (their preferences read
    /// here), with ids from one `NotificationIds`, for one atomic change; the
    /// deliveries' metrics are recorded once staged. Also returns the
    /// deliveries queued.
    pub(crate) fn stage_all(
        &self, s: &dyn Storage, users: &[User],
    ) -> Result<(Vec<StagedNotification>, Vec<QueueItem>)> {
        let mut ids = NotificationIds::default();
        let mut metrics = Tally::default();
        let mut queued = vec![];
        let mut out = Vec::with_capacity(users.len());
        for user in users {
            let nid = ids.next_id();
            let prefs = s.preferences(&self.project, &user.id)?;
            let now = Timestamp::of_id(&nid);
            out.push(self.stage(s, user, &prefs, nid, now, &mut queued, &mut metrics)?);
        }
        metrics.flush();
        Ok((out, queued))
    }

    /// `stage_all` of users whose preferences were read with them
    /// (`UserRepo::users_with_preferences`, a topic chunk's).
    pub(crate) fn stage_read(
        &self, s: &dyn Storage, users: &[(User, Preferences)],
    ) -> Result<(Vec<StagedNotification>, Vec<QueueItem>)> {
        let mut ids = NotificationIds::default();
        let mut metrics = Tally::default();
        let mut queued = vec![];
        let mut out = Vec::with_capacity(users.len());
        for (user, prefs) in users {
            let nid = ids.next_id();
            let now = Timestamp::of_id(&nid);
            out.push(self.stage(s, user, prefs, nid, now, &mut queued, &mut metrics)?);
        }
        metrics.flush();
        Ok((out, queued))
    }

    /// Stages the notification `nid` of `user` and its deliveries; the ones to
    /// attempt later are added to `queued`.
    ///
    /// An in_app delivery that is due at once has nothing to wait for, so it is
    /// settled with the run: it is `sent` and listed in `to_feed`, for the
    /// backend to write its feed entry and event in the same change. That saves
    /// the queue entry, a second write of the delivery and, for a flow with
    /// only in_app steps, a second write of the notification.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn stage(
        &self, s: &dyn Storage, user: &User, prefs: &Preferences, nid: Uuid, now: Timestamp,
        queued: &mut Vec<QueueItem>, metrics: &mut Tally,
    ) -> Result<StagedNotification> {
        let run = self.run;
        let layers = Layers::new(prefs, &self.defaults);
        let ctx = self.shared.context(user);
        let mut pending = false;
        let mut offset_ms: i64 = 0;
        // Project time: the test clock's when the run has one, else real time.
        let start = run.starts_at();
        let now_ms = run.clock_at.map_or(now.millis(), |c| c.millis());
        // In-app deliveries sent at once: (index in `deliveries`, entry JSON).
        let mut to_feed: Vec<(usize, String)> = vec![];
        let mut external_pending = false;
        let mut deliveries = Vec::with_capacity(run.flow.steps.len());
        let mut throttle = None;
        let mut stopped = None;
        // A batch step this run opens (its later deliveries wait for the
        // close) or the batch it joins (`delivery::batch`).
        let mut opened: Option<crate::storage::Batch> = None;
        let mut batch_write = None;
        let mut batched_into = None;
        // The context of the steps' conditions, made once, only when some
        // step has one.
        let mut cond_ctx: Option<Value> = None;
        // The decisions of the workflow steps, for the trace (with their step).
        let mut decided: Vec<(Option<usize>, TraceEntry)> = vec![];
        if let Some(at) = run.send_at {
            decided.push((
                None,
                trace::entry(now, "run.scheduled", json!({"send_at": at})),
            ));
        }
        let mut decide = |c: &super::conditions::Conditions,
                          i: usize,
                          decided: &mut Vec<(Option<usize>, TraceEntry)>| {
            let ctx = cond_ctx.get_or_insert_with(
                || json!({"data": run.data, "recipient": user, "actor": self.actor}),
            );
            let d = c.at_accept(ctx);
            // A gate is decided (and traced) when its delivery comes due.
            if !matches!(d, Decision::Gate(_)) {
                let result = d == Decision::Pass;
                let rule = c.decider(ctx, result, false);
                let args = c.trace_args(i, result, rule, "accept");
                decided.push((Some(i), trace::entry(now, "condition.evaluated", args)));
            }
            d
        };
        // A route step is staged hop by hop (`delivery::route`); the steps
        // after a route that has pending hops wait for it to end.
        let mut route: Option<super::route::Staging> = None;
        let mut after_route: Option<u8> = None;
        for u in super::route::units(&run.flow.steps) {
            let (i, step) = (u.i, &*u.step);
            if let Some((0, r)) = u.hop {
                let d = r.cond.as_ref().map(|c| decide(c, i, &mut decided));
                route = Some(super::route::Staging::new(i, r, d));
            }
            let decision = step.cond.as_ref().map(|c| decide(c, i, &mut decided));
            let (cond_false, gate) = match decision {
                Some(Decision::Fail) => (true, None),
                Some(Decision::Gate(g)) => (false, Some(g)),
                Some(Decision::Pass) | None => (false, None),
            };
            if step.kind == "delay" {
                if !cond_false {
                    let seconds = step.seconds.unwrap_or(0);
                    offset_ms += (seconds as i64).saturating_mul(1000);
                    // Decided here, as every due time is: the steps after
                    // it wait until then (project time).
                    let until = start.plus_millis(offset_ms);
                    decided.push((
                        Some(i),
                        trace::entry(
                            now,
                            "delay.waited",
                            json!({"step": i, "seconds": seconds, "until": until}),
                        ),
                    ));
                }
                continue;
            }
            if step.kind == "throttle" {
                if cond_false {
                    continue;
                }
                let (passed, traced) =
                    self.throttle(s, i, step, user, &ctx, start.millis() + offset_ms, now)?;
                decided.push((Some(i), traced));
                match passed {
                    Some(w) => {
                        throttle = Some(w);
                        continue;
                    }
                    None => {
                        stopped = Some(StopReason::Throttled);
                        break;
                    }
                }
            }
            if step.kind == "batch" {
                if cond_false || opened.is_some() {
                    // A second batch step of the run: the first one's close
                    // already gathers its activities.
                    continue;
                }
                let at = start.millis().saturating_add(offset_ms);
                let key = self.step_key(i, step, user, &ctx);
                let activity = crate::storage::BatchActivity {
                    notification_id: nid,
                    data: run.data.clone(),
                    actor: self.actor.clone(),
                    at_ms: at,
                };
                let shown = key.key.clone();
                match batch::reach(s, &self.project, key, step, nid, at, activity)? {
                    batch::Reached::Joins { write, into, count } => {
                        decided.push((
                            Some(i),
                            trace::entry(
                                now,
                                "batch.joined",
                                json!({"step": i, "key": shown, "batched_into": into,
                                    "count": count}),
                            ),
                        ));
                        batch_write = Some(write);
                        batched_into = Some(into);
                        stopped = Some(StopReason::Batched);
                        break;
                    }
                    batch::Reached::Opens(b) => {
                        let closes = Timestamp::from_millis(b.closes_at_ms);
                        let sliding = b.max_window_ms.is_some();
                        decided.push((
                            Some(i),
                            trace::entry(
                                now,
                                "batch.opened",
                                json!({"step": i, "key": shown, "closes_at": closes,
                                    "window": step.window,
                                    "window_type": if sliding { "sliding" } else { "fixed" },
                                    "max": step.limit}),
                            ),
                        ));
                        offset_ms += b.closes_at_ms - at;
                        opened = Some(b);
                        continue;
                    }
                }
            }
            let Some(cid) = step.channel_id else { continue };
            // Reached outside its send window: the step (and the run after
            // it) waits until the window opens.
            if let Some(w) = &step.send_window {
                let at = start.millis().saturating_add(offset_ms);
                let tz =
                    super::window::timezone(user.timezone.as_deref().or(run.timezone.as_deref()));
                let open = w.next_open(at, tz);
                if open > at {
                    let until = Timestamp::from_millis(open);
                    decided.push((
                        Some(i),
                        trace::entry(
                            now,
                            "send_window.waited",
                            json!({"step": i, "until": until}),
                        ),
                    ));
                }
                offset_ms += open - at;
            }
            let channel_type = match self.channels.get(&cid) {
                Some(Some(c)) => c.channel_type,
                _ => ChannelType::InApp,
            };
            let did = match u.hop {
                Some((h, _)) => crate::model::hop_delivery_id(&nid, i, h),
                None => delivery_id(&nid, i),
            };
            let hop_after = u.hop.map_or(0, |(h, r)| r.channels[h].after_ms());
            let cond_false = cond_false || route.as_ref().is_some_and(|r| r.cond_false);
            let dnow = now;
            let mut status = DeliveryStatus::Pending;
            let mut error = None;
            // After a batch it opens, a step is rendered when due, with the batch.
            let rendered = match &opened {
                Some(_) => Ok(Rendered::default()),
                None => self
                    .render_step(u.slot(), step, channel_type, &ctx)
                    .map(|a| {
                        for key in a.missing {
                            let args = json!({"step": i, "key": key});
                            decided.push((Some(i), trace::entry(now, "translation_missing", args)));
                        }
                        a.rendered
                    }),
            };
            let data = match rendered {
                Ok(r) => r,
                Err(msg) => {
                    status = DeliveryStatus::Failed;
                    error = Some(DeliveryError::new(DeliveryErrorCode::TemplateError, msg));
                    Rendered::default()
                }
            };
            let unneeded = route.as_ref().and_then(|r| r.satisfied.clone());
            if let (DeliveryStatus::Pending, Some(why)) = (status, unneeded) {
                status = DeliveryStatus::Skipped;
                error = Some(DeliveryError::new(DeliveryErrorCode::RouteSatisfied, why));
            }
            if status == DeliveryStatus::Pending && cond_false {
                status = DeliveryStatus::Skipped;
                error = Some(condition_false_error());
            }
            if status == DeliveryStatus::Pending {
                match self.channels.get(&cid) {
                    Some(Some(_)) => {
                        // A critical flow's deliveries go out whatever the
                        // recipient opted out of (traced as such).
                        let (key, allowed) = preferences::decide(&layers, &run.flow, channel_type);
                        if !allowed {
                            status = DeliveryStatus::Skipped;
                            error = Some(DeliveryError::new(
                                DeliveryErrorCode::Preference,
                                format!(
                                    "the recipient opted out of {} (by {key})",
                                    channel_type.as_str()
                                ),
                            ));
                        }
                    }
                    _ => {
                        status = DeliveryStatus::Failed;
                        error = Some(DeliveryError::new(
                            DeliveryErrorCode::ProviderNotConfigured,
                            "the step's channel no longer exists",
                        ));
                    }
                }
            }
            let mut due = start.plus_millis(offset_ms);
            if let Some(r) = &route {
                due = r.due(due, hop_after);
            }
            if status == DeliveryStatus::Pending {
                if let Some(until) = self.quiet_until(user, &layers, channel_type, due) {
                    decided.push((
                        Some(i),
                        trace::entry(
                            now,
                            "quiet_hours.waited",
                            json!({"step": i, "until": until}),
                        ),
                    ));
                    due = until;
                }
            }
            let mut d = Delivery {
                id: did,
                notification_id: nid,
                flow_run_id: run.id,
                flow_id: run.flow_id,
                channel_id: cid,
                channel_type,
                topic: run.topic.clone(),
                status,
                data,
                outcomes: None,
                actor_id: run.actor_id,
                recipient_id: user.id,
                attempts: 0,
                error,
                due_at: due,
                next_attempt_at: if status == DeliveryStatus::Pending {
                    Some(due)
                } else {
                    None
                },
                sent_at: None,
                seen_at: None,
                read_at: None,
                clicked_at: None,
                archived_at: None,
                interacted_at: None,
                interacted_action: None,
                created_at: dnow,
                updated_at: dnow,
                gate: if status == DeliveryStatus::Pending {
                    gate
                } else {
                    None
                },
                batch: opened.is_some() && status == DeliveryStatus::Pending,
                feed_at: None,
                bounce: None,
                // The backups go with the delivery, so the attempt needs
                // no flow to move it (and a step may set its own per hop).
                fallback_channel_ids: if status == DeliveryStatus::Pending {
                    step.fallback_channel_ids.clone()
                } else {
                    vec![]
                },
                attempt_channels: vec![],
                route: route
                    .as_ref()
                    .zip(u.hop)
                    .map(|(r, (h, _))| r.marker(h, hop_after)),
                after_route: after_route.filter(|_| status == DeliveryStatus::Pending),
            };
            if let (Some(b), true) = (&mut opened, d.batch) {
                let w = batch::waiting(b, &d, due.millis());
                b.waiting.push(w);
            }
            // Steps go out in order: an in_app step after an external step that
            // is still to be attempted waits in the queue like any other.
            if channel_type == ChannelType::InApp
                && status == DeliveryStatus::Pending
                && due.millis() <= now_ms
                && d.gate.is_none()
                && !d.batch
                && !external_pending
                && d.after_route.is_none()
                && d.route.as_ref().is_none_or(|r| r.gate.is_none())
                && !route.as_ref().is_some_and(|r| r.prev_pending())
            {
                d.status = DeliveryStatus::Sent;
                d.attempts = 1;
                d.sent_at = Some(now);
                d.next_attempt_at = None;
                let json = serde_json::to_string(&d.feed_entry(&self.actor))
                    .map_err(|e| Error::internal(e.to_string()))?;
                to_feed.push((deliveries.len(), json));
            }
            if let (Some(r), Some((h, _))) = (&mut route, u.hop) {
                r.staged(&d);
                if let Some(e) = super::route::staged_entry(now, &d, i, h, r.success) {
                    decided.push((Some(i), e));
                }
                if u.last_hop() {
                    if let Some(latest) = r.latest.filter(|_| r.pending) {
                        offset_ms = offset_ms.max(latest.millis() - start.millis());
                        after_route = Some(i as u8);
                    }
                    route = None;
                }
            }
            let status = d.status;
            metrics.add(&d, now);
            deliveries.push(d);
            if status == DeliveryStatus::Pending {
                pending = true;
                external_pending |= channel_type != ChannelType::InApp;
                queued.push(QueueItem {
                    project: self.project,
                    delivery_id: did,
                    channel_type,
                    due_ms: due.millis(),
                });
            }
        }
        let n = Notification {
            id: nid,
            flow_id: run.flow_id,
            flow_run_id: run.id,
            topic: run.topic.clone(),
            processed: !pending,
            actor_id: run.actor_id,
            recipient_id: user.id,
            processed_at: if pending { None } else { Some(now) },
            created_at: now,
            updated_at: now,
            stopped,
            batched_into,
            test_channel_id: run.test_channel_id,
        };
        if let Some(b) = opened {
            batch_write = Some(crate::storage::BatchWrite::Open(b));
        }
        let mut trace =
            trace::Accepted::new(&run.flow, &run.id, user, &layers, &deliveries, now, decided);
        // Staging decides in project time as of the run's acceptance.
        trace.project_at = run.clock_at;
        Ok(StagedNotification {
            n,
            deliveries,
            to_feed,
            pending,
            throttle,
            batch: batch_write,
            trace,
        })
    }
}

impl Stager<'_> {
    /// Step `i`'s content for the recipient of `ctx`, as a delivery of
    /// channel type `t` stores it: what a run stages and a preview shows
    /// (`preview`). An in-app entry is read inside the product: its
    /// `{{ preferences_url }}` is empty. Other channels keep the mark for
    /// the send to fill with a fresh link (`rules::preference_link`); so
    /// does `{{ unsubscribe_url }}` (`rules::unsubscribe_link`).
    /// With the project's content applied (`RunRenderer::render_step`:
    /// partials, `t()`, the layout); the translation keys no catalog had
    /// come with it.
    pub(crate) fn render_step(
        &self, i: usize, step: &Step, t: ChannelType, ctx: &minijinja::Value,
    ) -> std::result::Result<crate::render::content::Applied, String> {
        let mut a = self.renderer.render_step(i, step, ctx, t)?;
        if t == ChannelType::InApp {
            crate::rules::preference_link::fill(&mut a.rendered, "");
            crate::rules::unsubscribe_link::fill(&mut a.rendered, "");
        }
        Ok(a)
    }

    /// When a delivery of this run on `t` to `user` due at `due` may go
    /// out, if the recipient's quiet hours hold it
    /// (`critical::quiet_hours_end`: not in_app, not a critical flow). Only
    /// this delivery waits: the run's later steps keep their times.
    fn quiet_until(
        &self, user: &User, prefs: &Layers<'_>, t: ChannelType, due: Timestamp,
    ) -> Option<Timestamp> {
        let tz = user.timezone.as_deref().or(self.run.timezone.as_deref());
        critical::quiet_hours_end(prefs.quiet_hours(), &self.run.flow, t, tz, due.millis())
            .map(Timestamp::from_millis)
    }
}

pub(crate) mod preview;
#[cfg(test)]
mod tests;
mod throttling;
