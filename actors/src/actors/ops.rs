//! The engine's operations for the HTTP layer. Every change goes through here:
//! storage work runs on the blocking pool, and a change that lets deliveries
//! or live-feed frames go waits for durability first (`Engine::release`:
//! persist first, then message an actor).

use super::engine::Engine;
use crate::audit::{redact, Actor, AuditChange};
use crate::delivery::{accept, Preview, PreviewInput};
use crate::error::{Error, Result};
use crate::model::{
    Channel, Flow, FlowRun, Preferences, Project, Subscription, Topic, User, UserPatch,
};
use crate::rules::audit::record;
use crate::storage::{
    AcceptInput, IdempotentResponse, NewProjectKeys, PushKey, PushSubscription, Storage, Ticket,
    TopicPatch, UserFrames,
};
use std::sync::Arc;
use uuid::Uuid;

/// `ProjectRepo::update_project` with its audit entry `action` (the
/// settings before, as `f` found them under the lock, and after).
pub(super) fn update_project_audited(
    s: &dyn Storage, id: &Uuid, actor: &Actor, action: &'static str,
    f: Box<dyn FnOnce(&mut Project) + Send + '_>,
) -> Result<Project> {
    let mut before = None;
    let p = s.update_project(
        id,
        Box::new(|p| {
            before = Some(redact::project(p));
            f(p)
        }),
    )?;
    let mut change = AuditChange::new(action, id)
        .key(&p.name)
        .after(redact::project(&p));
    if let Some(b) = before {
        change = change.before(b);
    }
    record(s, id, actor, change)?;
    Ok(p)
}

/// `ChannelRepo::update_channel` with its audit entry `action` (the channel
/// before, as `f` found it under the lock, and after).
pub(super) fn update_channel_audited(
    s: &dyn Storage, project: &Uuid, actor: &Actor, action: &'static str, id: &Uuid,
    f: impl FnOnce(&mut Channel) -> Result<()> + Send,
) -> Result<Channel> {
    let mut before = None;
    let c = s.update_channel(
        project,
        id,
        Box::new(|c| {
            before = Some(redact::channel(c));
            f(c)
        }),
    )?;
    let mut change = AuditChange::new(action, id)
        .key(&c.name)
        .after(redact::channel(&c));
    if let Some(b) = before {
        change = change.before(b);
    }
    record(s, project, actor, change)?;
    Ok(c)
}

impl Engine {
    /// Runs blocking storage work on the blocking pool, never on an async
    /// worker thread.
    pub async fn run<T, F>(&self, f: F) -> Result<T>
    where
        F: FnOnce(&dyn Storage) -> Result<T> + Send + 'static,
        T: Send + 'static,
    {
        let storage = self.storage().clone();
        match tokio::task::spawn_blocking(move || f(&*storage)).await {
            Ok(r) => r,
            Err(e) => Err(Error::internal(format!("blocking task failed: {e}"))),
        }
    }

    /// `run` of a live-feed read (a socket's greeting, a user actor's first
    /// read or catch-up), at most `LIVE_READS_AT_ONCE` at a time. A
    /// connection storm otherwise hands the blocking pool thousands of
    /// jobs at once, and tokio grows the pool to a thread per waiting job
    /// (up to 512 per runtime): about a thousand threads per node, each
    /// with its stack and its allocator cache, kept ten seconds after.
    pub async fn run_live<T, F>(&self, f: F) -> Result<T>
    where
        F: FnOnce(&dyn Storage) -> Result<T> + Send + 'static,
        T: Send + 'static,
    {
        let _permit = self
            .inner
            .live_reads
            .acquire()
            .await
            .map_err(|_| Error::internal("the live reads' semaphore is closed"))?;
        self.run(f).await
    }

    /// `run` of a job that commits, with the ticket that covers what it
    /// committed (`Ticket::JobEnd`).
    pub async fn run_committing<T, F>(&self, f: F) -> Result<(T, u64)>
    where
        F: FnOnce(&dyn Storage) -> Result<T> + Send + 'static,
        T: Send + 'static,
    {
        self.run(move |s| {
            s.ticket(Ticket::JobStart);
            let v = f(s)?;
            Ok((v, s.ticket(Ticket::JobEnd)))
        })
        .await
    }

    /// Waits until every change applied so far is durable (one shared flush).
    pub async fn durable(&self) -> Result<()> {
        let s = self.storage();
        s.wait_durable(s.ticket(Ticket::Now)).await
    }

    /// Persist first, then message actors: once every change applied so far is
    /// durable, pushes `frames` to their users' actors and then runs `then`
    /// (hand deliveries to channel actors, start or stop a run's actor).
    pub async fn release(&self, frames: UserFrames, then: impl FnOnce(&Engine)) -> Result<()> {
        self.durable().await?;
        self.push_frames(frames);
        then(self);
        Ok(())
    }

    /// `release` once `ticket` (from `run_committing`) is durable.
    pub async fn release_at(
        &self, ticket: u64, frames: UserFrames, then: impl FnOnce(&Engine),
    ) -> Result<()> {
        self.storage().wait_durable(ticket).await?;
        self.push_frames(frames);
        then(self);
        Ok(())
    }

    /// Accepts a run: `delivery::accept` decides and stages it and the
    /// backend stores it in one change (on the blocking pool); then waits
    /// until it is durable (the 202 promises it), pushes its frames and
    /// starts its actor.
    /// Returns the 202 body, as stored for idempotent replay.
    pub async fn accept_run(&self, project: Uuid, input: AcceptInput) -> Result<Vec<u8>> {
        let units = input.recipients.len();
        match self
            .accept_run_prepared(project, units, move |_| {
                Ok(RunRequest::Accept(Box::new(input)))
            })
            .await?
        {
            RunAnswer::Accepted(body) => Ok(body),
            RunAnswer::Stored(r) => Ok(r.body),
        }
    }

    /// A run of a flow as the HTTP layer asks for it, in one storage job
    /// (one hop to the blocking pool, with or without an idempotency key):
    /// the flow by id or handle (404), the key's problem if it had one,
    /// the answer stored under the key (returned as it is, nothing
    /// accepted), the body's checks against the flow (`input`), whether
    /// the flow runs (`catalog::runnable`, 409), then the acceptance.
    /// `units`: the recipients the body names, for the staging permit;
    /// `idempotency`: the key's scope and payload hash.
    pub async fn run_flow(
        &self, project: Uuid, units: usize, flow: String,
        idempotency: Result<Option<(Vec<u8>, Vec<u8>)>>,
        input: impl FnOnce(Flow) -> Result<AcceptInput> + Send + 'static,
    ) -> Result<RunAnswer> {
        self.accept_run_prepared(project, units, move |s| {
            let flow = super::reads::find_flow(s, project, &flow)?;
            let idempotency = idempotency?;
            if let Some((scope, _)) = &idempotency {
                if let Some(r) = s.idempotent_response(&project, scope)? {
                    return Ok(RunRequest::Replay(r));
                }
            }
            let (id, status) = (flow.id, flow.status);
            let mut input = input(flow)?;
            crate::catalog::runnable(id, status)?;
            input.idempotency = idempotency;
            Ok(RunRequest::Accept(Box::new(input)))
        })
        .await
    }

    /// A preview of a flow's channel steps for one recipient
    /// (`delivery::accept::preview`): rendered in one storage job under the
    /// project's share of staging, as a run's are, and nothing stored. The
    /// `{{ preferences_url }}` of an external step is filled as its send
    /// fills it: a fresh link for a stored recipient, empty for one a run
    /// would create; `{{ unsubscribe_url }}` too (email steps of a
    /// commercial flow only).
    pub async fn preview_flow(
        &self, project: Arc<Project>, input: PreviewInput,
    ) -> Result<Preview> {
        let limits = self.template_limits();
        let permit = self.staging_permit(project.id, 1).await;
        let pid = project.id;
        let (flow_id, commercial) = (input.flow.id, input.flow.commercial);
        let mut p = self
            .run(move |s| accept::preview::preview(s, limits, &pid, input))
            .await;
        drop(permit);
        if let Ok(p) = &mut p {
            let link = match p.stored {
                true => self
                    .preferences_link(&project, p.user.id)
                    .unwrap_or_default(),
                false => String::new(),
            };
            // `{{ unsubscribe_url }}`: the link a send of an email step of a
            // commercial flow makes (`rules::unsubscribe_link`), else empty
            let unsubscribe = match p.stored && commercial {
                true => self
                    .unsubscribe_link(pid, p.user.id, flow_id)
                    .unwrap_or_default(),
                false => String::new(),
            };
            for step in &mut p.steps {
                let email = step.channel_type == Some(crate::model::ChannelType::Email);
                if let Ok(content) = &mut step.content {
                    crate::rules::preference_link::fill(content, &link);
                    let u = if email { unsubscribe.as_str() } else { "" };
                    crate::rules::unsubscribe_link::fill(content, u);
                }
            }
        }
        p
    }

    /// `accept_run` of what `prepare` decides in the same storage job (the
    /// flow's lookup, the idempotency key's stored answer, the body's
    /// checks, for the HTTP layer), so a run takes one hop to the blocking
    /// pool with or without a key. `units`: the recipients it names, for
    /// the staging permit.
    async fn accept_run_prepared(
        &self, project: Uuid, units: usize,
        prepare: impl FnOnce(&dyn Storage) -> Result<RunRequest> + Send + 'static,
    ) -> Result<RunAnswer> {
        Ok(match self.accept_prepared(project, units, prepare).await? {
            Ok((_, body)) => RunAnswer::Accepted(body),
            Err(stored) => RunAnswer::Stored(stored),
        })
    }

    /// `accept_run_prepared` answering the accepted run's record beside its
    /// 202 body (`Err`: the answer stored under the idempotency key).
    pub(super) async fn accept_prepared(
        &self, project: Uuid, units: usize,
        prepare: impl FnOnce(&dyn Storage) -> Result<RunRequest> + Send + 'static,
    ) -> Result<std::result::Result<(FlowRun, Vec<u8>), IdempotentResponse>> {
        // A test-clock project's runs count their steps from its time.
        let clock_at = self.inner.clocks.test_now(&project);
        let limits = self.template_limits();
        // The project's share of staging (renders run on threads every
        // project shares), weighted by the recipients rendered here.
        let permit = self.staging_permit(project, units).await;
        let accepted = self
            .run_committing(move |s| match prepare(s)? {
                RunRequest::Replay(r) => Ok(Err(r)),
                RunRequest::Accept(mut input) => {
                    input.timing.clock_at = clock_at;
                    accept::accept_run(s, limits, &project, *input).map(Ok)
                }
            })
            .await;
        drop(permit);
        let (accepted, ticket) = accepted?;
        let accepted = match accepted {
            Ok(a) => a,
            Err(stored) => return Ok(Err(stored)),
        };
        let (record, queued) = (accepted.run, accepted.queued);
        let run = record.id;
        // A run settled whole at acceptance (in-app only, no topic: the common
        // small run) has nothing left for an actor to do; starting one anyway
        // cost an actor, a blocking-pool job and three reads of the run per
        // run. Recovery agrees: it starts actors for unprocessed runs only.
        let settled = record.processed && queued.is_empty();
        self.release_at(ticket, accepted.frames, |e| {
            if !settled {
                e.start_run(project, run, queued);
            }
        })
        .await?;
        Ok(Ok((record, accepted.body)))
    }

    /// Creates or patches a user; true when it was created. Returns once the
    /// change is durable: the wait is async (one shared flush wakes every
    /// waiting request), not a blocking thread parked per request.
    pub async fn upsert_user(
        &self, project: Uuid, ext: String, patch: UserPatch,
    ) -> Result<(User, bool)> {
        let (done, ticket) = self
            .run_committing(move |s| s.upsert_user(&project, &ext, &patch))
            .await?;
        self.storage().wait_durable(ticket).await?;
        Ok(done)
    }

    /// Creates or patches many users in one commit (see
    /// `UserRepo::upsert_users`); returns once it is durable.
    pub async fn upsert_users(
        &self, project: Uuid, items: Vec<(String, UserPatch)>,
    ) -> Result<Vec<(User, bool)>> {
        let (done, ticket) = self
            .run_committing(move |s| {
                let items: Vec<(&str, &UserPatch)> =
                    items.iter().map(|(e, p)| (e.as_str(), p)).collect();
                s.upsert_users(&project, &items)
            })
            .await?;
        self.storage().wait_durable(ticket).await?;
        Ok(done)
    }

    pub async fn delete_user(&self, project: Uuid, ext: String) -> Result<()> {
        self.run(move |s| s.delete_user(&project, &ext)).await
    }

    /// Deletes many users in one durable commit (see `UserRepo::delete_users`).
    pub async fn delete_users(&self, project: Uuid, exts: Vec<String>) -> Result<Vec<bool>> {
        self.run(move |s| s.delete_users(&project, &exts)).await
    }

    pub async fn update_preferences(
        &self, project: Uuid, user: User, patch: Preferences,
    ) -> Result<Preferences> {
        self.run(move |s| s.update_preferences(&project, &user, &patch))
            .await
    }

    /// Changes the project with `f` under its lock, recorded in its audit
    /// log as `action` (`project.updated`, `signing_key.put`, …) by
    /// `actor`, with its settings before and after (`audit::redact::project`).
    pub async fn update_project(
        &self, id: Uuid, actor: Actor, action: &'static str,
        f: impl FnOnce(&mut Project) + Send + 'static,
    ) -> Result<Project> {
        self.run(move |s| update_project_audited(s, &id, &actor, action, Box::new(f)))
            .await
    }

    /// Creates a project; its keys and the project as stored.
    pub async fn create_project(&self, name: String) -> Result<(Project, NewProjectKeys)> {
        self.run(move |s| {
            let keys = s.create_project(&name, None)?;
            let p = s
                .project_by_name(&name)?
                .ok_or_else(|| Error::internal("project created but not found"))?;
            Ok((p, keys))
        })
        .await
    }

    /// A new secret for the named project; the old one works for `grace`.
    /// `actor`: the operator, or an owner through the Admin API.
    pub async fn rotate_secret(
        &self, name: String, grace: std::time::Duration, actor: crate::audit::Actor,
    ) -> Result<(Project, String)> {
        self.run(move |s| crate::rules::projects::rotate_secret(s, &name, grace, &actor))
            .await
    }

    /// Deletes the named project and everything it owns.
    pub async fn delete_project(&self, name: String) -> Result<Project> {
        self.run(move |s| s.delete_project(&name)).await
    }

    /// Stores a new channel (`channel.created` in the audit log).
    pub async fn put_channel(&self, project: Uuid, actor: Actor, c: Channel) -> Result<()> {
        self.run(move |s| {
            s.put_channel(&project, &c)?;
            let change = AuditChange::new("channel.created", c.id)
                .key(&c.name)
                .after(redact::channel(&c));
            record(s, &project, &actor, change)
        })
        .await
    }

    /// Changes a channel with `f` under its lock (an error from `f` leaves
    /// it); `channel.updated` in the audit log.
    pub async fn update_channel(
        &self, project: Uuid, actor: Actor, id: Uuid,
        f: impl FnOnce(&mut Channel) -> Result<()> + Send + 'static,
    ) -> Result<Channel> {
        self.run(move |s| update_channel_audited(s, &project, &actor, "channel.updated", &id, f))
            .await
    }

    /// Stores a new flow (`flow.created` in the audit log).
    pub async fn create_flow(&self, project: Uuid, actor: Actor, f: Flow) -> Result<()> {
        self.run(move |s| {
            s.create_flow(&project, &f)?;
            let change = AuditChange::new("flow.created", f.id)
                .key(&f.handle)
                .after(redact::flow(&f));
            record(s, &project, &actor, change)
        })
        .await
    }

    /// Creates or patches a topic; true when it was created
    /// (`topic.created` or `topic.updated` in the audit log).
    pub async fn put_topic(
        &self, project: Uuid, actor: Actor, key: String, name: Option<Option<String>>,
        description: Option<Option<String>>,
    ) -> Result<(Topic, bool)> {
        self.run(move |s| {
            // Read outside the topic's lock: the log's `before` of a topic
            // patched twice at once may show the other patch's result.
            let before = s.topic(&project, &key)?;
            let (t, created) = s.put_topic(&project, &key, TopicPatch { name, description })?;
            let action = if created {
                "topic.created"
            } else {
                "topic.updated"
            };
            let mut change = AuditChange::new(action, t.id)
                .key(&t.key)
                .after(redact::topic(&t));
            if let Some(b) = before.filter(|_| !created) {
                change = change.before(redact::topic(&b));
            }
            record(s, &project, &actor, change)?;
            Ok((t, created))
        })
        .await
    }

    /// Deletes a topic with its subscriptions (`topic.deleted`).
    pub async fn delete_topic(&self, project: Uuid, actor: Actor, key: String) -> Result<()> {
        self.run(move |s| {
            let before = s.topic(&project, &key)?;
            s.delete_topic(&project, &key)?;
            if let Some(t) = before {
                let change = AuditChange::new("topic.deleted", t.id)
                    .key(&t.key)
                    .before(redact::topic(&t));
                record(s, &project, &actor, change)?;
            }
            Ok(())
        })
        .await
    }

    /// Subscribes a user to a topic: one named by external id must exist
    /// (422 at `external_id`).
    pub async fn subscribe(
        &self, project: Uuid, key: String, who: Subscriber,
    ) -> Result<Subscription> {
        self.run(move |s| {
            let user = match who {
                Subscriber::Known(u) => *u,
                Subscriber::External(ext) => s
                    .user_by_ext(&project, &ext)?
                    .ok_or_else(|| Error::field("external_id", "inclusion", NO_SUCH_USER))?,
            };
            s.subscribe(&project, &key, &user)
        })
        .await
    }

    /// Subscribes the users of these external ids to a topic in one
    /// durable commit; the topic and how many subscriptions are new. Every
    /// user must exist: an unknown one is a 422 at `users.{i}` and nothing
    /// is stored (users already subscribed are no error).
    pub async fn subscribe_many(
        &self, project: Uuid, key: String, exts: Vec<String>,
    ) -> Result<(Topic, usize)> {
        self.run(move |s| {
            let mut v = crate::error::Validator::new();
            let mut users = Vec::with_capacity(exts.len());
            for (i, u) in s.user_refs_by_ext(&project, &exts)?.into_iter().enumerate() {
                match u {
                    Some(u) => users.push(u),
                    None => v.push(format!("users.{i}"), "inclusion", NO_SUCH_USER),
                }
            }
            v.finish()?;
            let (topic, made) = s.subscribe_many(&project, &key, &users)?;
            Ok((topic, made.len()))
        })
        .await
    }

    /// Unsubscribes a user from a topic: 404 when there is no such topic,
    /// or no user of the external id.
    pub async fn unsubscribe(&self, project: Uuid, key: String, who: Subscriber) -> Result<()> {
        self.run(move |s| {
            s.topic(&project, &key)?
                .ok_or_else(|| Error::not_found("topic", &key))?;
            let user = match who {
                Subscriber::Known(u) => *u,
                Subscriber::External(ext) => s
                    .user_by_ext(&project, &ext)?
                    .ok_or_else(|| Error::not_found("user", &ext))?,
            };
            s.unsubscribe(&project, &key, &user)
        })
        .await
    }

    /// Registers a push subscription; true when it is new.
    pub async fn add_push_subscription(
        &self, project: Uuid, user: Uuid, channel: Uuid, identifier: String,
        keys: Option<serde_json::Value>, platform: Option<String>,
    ) -> Result<(PushSubscription, bool)> {
        self.run(move |s| {
            let sub =
                crate::rules::records::new_push_subscription(&channel, &identifier, keys, platform);
            s.add_push_subscription(&project, &user, sub)
        })
        .await
    }

    /// Removes a push subscription; true when there was one.
    pub async fn remove_push_subscription(
        &self, project: Uuid, user: Uuid, channel: Uuid, identifier: String,
    ) -> Result<bool> {
        self.run(move |s| {
            let key = PushKey {
                user: &user,
                channel: &channel,
                identifier: &identifier,
            };
            s.remove_push_subscription(&project, key)
        })
        .await
    }

    /// Stores a response for replay under an idempotency key.
    pub async fn put_idempotent_response(
        &self, project: Uuid, scope: Vec<u8>, r: IdempotentResponse,
    ) -> Result<()> {
        self.run(move |s| s.put_idempotent_response(&project, &scope, &r))
            .await
    }
}

/// What the preparation of a run decided (`accept_run_prepared`).
pub(super) enum RunRequest {
    /// Accept this run.
    Accept(Box<AcceptInput>),
    /// Its idempotency key has an answer stored already: nothing to accept.
    Replay(IdempotentResponse),
}

/// The answer to a run.
pub enum RunAnswer {
    /// Accepted now: the 202 body, stored for replay with the run.
    Accepted(Vec<u8>),
    /// The answer stored under its idempotency key.
    Stored(IdempotentResponse),
}

/// Who a subscription is for.
pub enum Subscriber {
    /// The user of this external id (the Admin API).
    External(String),
    /// This user, authenticated already (the User API).
    Known(Box<User>),
}

/// The message of a subscription naming a user who does not exist.
const NO_SUCH_USER: &str = "no user with this external_id";
