//! The engine's reads for the HTTP layer: one method per thing a route
//! shows, each one storage job on the blocking pool, with the "not found"
//! rule of its resource (an absent record is a 404 of that resource). The
//! HTTP layer has no other way to storage: it reads here and changes things
//! through the engine's operations (`ops`, `catalog`, `event_endpoints`,
//! `workflow`, `lifecycle`).

use super::engine::Engine;
use super::feed_pages::FeedPages;
use crate::error::{Error, Result};
use crate::model::{Channel, Delivery, Flow, Project, Subscription, Topic, User};
use crate::storage::{Erasure, IdempotentResponse, Page, PageReq, PushSubscription};
use std::sync::Arc;
use uuid::Uuid;

impl Engine {
    // ------------------------------------------------------------ server

    /// The key that signs this server's page cursors (the same on every
    /// node of a cluster: it is stored).
    pub fn cursor_key(&self) -> &[u8; 32] {
        &self.inner.cursor_key
    }

    /// Sets the server's public URL (once; later calls change nothing);
    /// `given`: the operator gave it (`--public-url`), rather than it being
    /// the default made of the bound address.
    pub fn set_public_url(&self, url: String, given: bool) {
        if self.inner.public_url.set(url).is_ok() {
            self.inner
                .public_url_given
                .store(given, std::sync::atomic::Ordering::Relaxed);
            if !given {
                self.warn_commercial_flows();
            }
        }
    }

    /// A commercial flow activated while the server had a public URL sends
    /// its email without the unsubscribe link it must carry when the server
    /// is started again without one: said once at start, per flow, in the
    /// log (off the caller's thread: it reads every project's flows).
    fn warn_commercial_flows(&self) {
        let store = self.storage().clone();
        let spawned = std::thread::Builder::new()
            .name("herald-commercial-check".into())
            .spawn(move || {
                let Ok(projects) = store.projects() else {
                    return;
                };
                for p in projects {
                    let flows = store.live_flows(&p.id).unwrap_or_default();
                    for f in flows
                        .iter()
                        .filter(|f| f.commercial && f.status == crate::model::FlowStatus::Active)
                    {
                        tracing::warn!(
                            project = %p.name,
                            flow = %f.handle,
                            "an active commercial flow's email goes out without its \
                             one-click unsubscribe link: start the server with --public-url"
                        );
                    }
                }
            });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "the commercial flows' check did not start");
        }
    }

    /// Whether the operator gave the server's public URL: what an active
    /// commercial flow needs (`catalog::commercial_sendable`).
    pub fn public_url_given(&self) -> bool {
        self.inner
            .public_url_given
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The URL of a channel's provider callbacks
    /// (`{public_url}/hooks/v1/{channel}`), for the providers that take one
    /// with each message (Twilio's `StatusCallback`); `None` without a
    /// public URL the operator gave (the default one, made of the bound
    /// address, is not one a provider can reach).
    pub fn callback_url(&self, channel: Uuid) -> Option<String> {
        if !self.public_url_given() {
            return None;
        }
        let base = self.inner.public_url.get()?;
        Some(format!("{base}/hooks/v1/{channel}"))
    }

    /// The one-click unsubscribe link of `user` for `flow` (what a
    /// commercial flow's email carries in `List-Unsubscribe` and
    /// `{{ unsubscribe_url }}`), made now and valid for
    /// `rules::unsubscribe_link::LIFETIME_SECS`; `None` without a public
    /// URL the operator gave.
    pub fn unsubscribe_link(&self, project: Uuid, user: Uuid, flow: Uuid) -> Option<String> {
        if !self.public_url_given() {
            return None;
        }
        let base = self.inner.public_url.get()?;
        let now = crate::model::Timestamp::now().millis().div_euclid(1000);
        Some(crate::rules::unsubscribe_link::url(
            &self.inner.cursor_key,
            base,
            project,
            user,
            flow,
            now,
        ))
    }

    /// A link to `user`'s preference page of `project`, made now and valid
    /// for `rules::preference_link::SENT_LINK_LIFETIME_SECS` (what a send
    /// puts in `{{ preferences_url }}`); `None` before the server is bound.
    pub fn preferences_link(&self, project: &Project, user: Uuid) -> Option<String> {
        use crate::rules::preference_link as link;
        let base = self.inner.public_url.get()?;
        let l = link::Link {
            project: project.id,
            user,
            epoch: project.link_epoch,
            expires_at: crate::model::Timestamp::now().millis().div_euclid(1000)
                + link::SENT_LINK_LIFETIME_SECS,
        };
        Some(format!(
            "{base}/p/{}",
            link::issue(&self.inner.cursor_key, &l)
        ))
    }

    /// What attempts saw beyond their outcome, until they settle.
    pub(crate) fn attempt_notes(&self) -> &crate::trace::AttemptNotes {
        &self.inner.attempt_notes
    }

    /// The bounds of every template render (`EngineConfig::template_limits`).
    pub fn template_limits(&self) -> crate::render::Limits {
        self.inner.config.template_limits
    }

    /// The store's health as the health endpoints report it (from memory).
    pub fn health_status(&self) -> crate::storage::HealthStatus {
        self.storage().health_status()
    }

    /// A project, read on the calling thread: for callers already off the
    /// executor (the bus's socket re-check runs on the blocking pool).
    pub fn project_blocking(&self, id: &Uuid) -> Result<Option<Project>> {
        self.storage().project(id)
    }

    // ------------------------------------------------------------ projects

    /// Every project (the operator API).
    pub async fn projects(&self) -> Result<Vec<Project>> {
        self.run(|s| s.projects()).await
    }

    /// A project by id (`None`: there is none).
    pub async fn project(&self, id: Uuid) -> Result<Option<Project>> {
        self.run(move |s| s.project(&id)).await
    }

    /// The project of this name; 404 when there is none.
    pub async fn project_named(&self, name: String) -> Result<Project> {
        self.run(move |s| {
            s.project_by_name(&name)?
                .ok_or_else(|| Error::not_found("project", &name))
        })
        .await
    }

    /// The project with its usage (bytes counted against its quota).
    pub async fn project_with_usage(&self, id: Uuid) -> Result<(Project, u64)> {
        self.run(move |s| {
            let p = s
                .project(&id)?
                .ok_or_else(|| Error::not_found("project", id))?;
            Ok((p, s.usage_bytes(&id)?))
        })
        .await
    }

    /// The bytes a project has stored, as its quota counts them.
    pub async fn usage_bytes(&self, id: Uuid) -> Result<u64> {
        self.run(move |s| s.usage_bytes(&id)).await
    }

    /// Every project's usage and own quota (`None`: the server's default).
    pub async fn usage_of_all(&self) -> Result<Vec<(Uuid, u64, Option<u64>)>> {
        self.run(|s| {
            let mut out = vec![];
            for p in s.projects()? {
                out.push((p.id, s.usage_bytes(&p.id)?, p.quota_bytes));
            }
            Ok(out)
        })
        .await
    }

    /// The project of a public API key: from memory when cached, without a
    /// hop to the blocking pool (every request authenticates).
    pub async fn project_by_api_key(&self, key: String) -> Result<Option<Arc<Project>>> {
        if let Some(p) = self.storage().project_cached(&key) {
            return Ok(Some(p));
        }
        self.run(move |s| s.project_by_api_key(&key)).await
    }

    /// Whether the store answers a read now (readiness).
    pub async fn store_answers(&self) -> Result<()> {
        self.run(|s| s.project_by_name("default").map(|_| ())).await
    }

    /// The answer stored under an idempotency key, if any.
    pub async fn idempotent_response(
        &self, project: Uuid, scope: Vec<u8>,
    ) -> Result<Option<IdempotentResponse>> {
        self.run(move |s| s.idempotent_response(&project, &scope))
            .await
    }

    // ------------------------------------------------------------ catalog

    /// A flow by the path's key: a UUID is an id, anything else a handle;
    /// 404 when there is none.
    pub async fn flow(&self, project: Uuid, key: String) -> Result<Flow> {
        self.run(move |s| find_flow(s, project, &key)).await
    }

    pub async fn list_flows(&self, project: Uuid, req: PageReq) -> Result<Page<Flow>> {
        self.run(move |s| s.list_flows(&project, &req)).await
    }

    /// The project's flows that are not archived.
    pub async fn live_flows(&self, project: Uuid) -> Result<Vec<Flow>> {
        self.run(move |s| s.live_flows(&project)).await
    }

    /// Every channel of the project.
    pub async fn all_channels(&self, project: Uuid) -> Result<Vec<Channel>> {
        self.run(move |s| s.all_channels(&project)).await
    }

    pub async fn list_channels(&self, project: Uuid, req: PageReq) -> Result<Page<Channel>> {
        self.run(move |s| s.list_channels(&project, &req)).await
    }

    /// A channel; 404 when there is none.
    pub async fn channel(&self, project: Uuid, id: Uuid) -> Result<Channel> {
        self.run(move |s| {
            s.channel(&project, &id)?
                .ok_or_else(|| Error::not_found("channel", id))
        })
        .await
    }

    pub async fn list_topics(&self, project: Uuid, req: PageReq) -> Result<Page<Topic>> {
        self.run(move |s| s.list_topics(&project, &req)).await
    }

    /// A topic; 404 when there is none.
    pub async fn topic(&self, project: Uuid, key: String) -> Result<Topic> {
        self.run(move |s| {
            s.topic(&project, &key)?
                .ok_or_else(|| Error::not_found("topic", &key))
        })
        .await
    }

    /// A page of a topic's subscriptions; 404 when there is no such topic.
    pub async fn topic_subscriptions(
        &self, project: Uuid, key: String, req: PageReq,
    ) -> Result<Page<Subscription>> {
        self.run(move |s| {
            s.topic(&project, &key)?
                .ok_or_else(|| Error::not_found("topic", &key))?;
            s.topic_subscriptions(&project, &key, &req)
        })
        .await
    }

    // ------------------------------------------------------------ users

    /// A user by external id; 404 when there is none.
    pub async fn user(&self, project: Uuid, ext: String) -> Result<User> {
        self.run(move |s| s.user_required(&project, &ext)).await
    }

    /// A user by id (`None`: deleted or never there).
    pub async fn user_by_id(&self, project: Uuid, id: Uuid) -> Result<Option<User>> {
        self.run(move |s| s.user(&project, &id)).await
    }

    /// A user by external id, from memory when cached (the User API's
    /// authentication reads it on every request).
    pub async fn user_by_ext_cached(
        &self, project: Uuid, ext: String,
    ) -> Result<Option<Arc<User>>> {
        if let Some(u) = self.storage().user_cached(&project, &ext) {
            return Ok(Some(u));
        }
        self.run(move |s| s.user_by_ext_cached(&project, &ext))
            .await
    }

    /// The ids of the users these external ids name, leaving out those that
    /// name no user.
    pub async fn user_ids(&self, project: Uuid, exts: Vec<String>) -> Result<Vec<Uuid>> {
        self.run(move |s| {
            let mut ids = vec![];
            for e in &exts {
                ids.extend(s.user_by_ext(&project, e)?.map(|u| u.id));
            }
            Ok(ids)
        })
        .await
    }

    pub async fn list_users(&self, project: Uuid, req: PageReq) -> Result<Page<User>> {
        self.run(move |s| s.list_users(&project, &req)).await
    }

    /// An erasure of the project (`None`: no such erasure).
    pub async fn erasure(&self, project: Uuid, id: Uuid) -> Result<Option<Erasure>> {
        self.run(move |s| s.erasure(&project, &id)).await
    }

    /// A page of a user's topic subscriptions.
    pub async fn user_subscriptions(
        &self, project: Uuid, user: Uuid, req: PageReq,
    ) -> Result<Page<Subscription>> {
        self.run(move |s| s.user_subscriptions(&project, &user, &req))
            .await
    }

    /// A user's push subscriptions on one channel.
    pub async fn push_subscriptions(
        &self, project: Uuid, user: Uuid, channel: Uuid,
    ) -> Result<Vec<PushSubscription>> {
        self.run(move |s| s.push_subscriptions(&project, &user, &channel))
            .await
    }

    /// An entry of the user's own feed (anything else is not found).
    pub async fn feed_entry(&self, project: Uuid, user: Uuid, id: Uuid) -> Result<Delivery> {
        self.run(move |s| s.feed_entry(&project, &user, &id)).await
    }
}

/// `Engine::flow` inside a storage job.
pub(crate) fn find_flow(s: &dyn crate::storage::Storage, project: Uuid, key: &str) -> Result<Flow> {
    let f = match Uuid::parse_str(key) {
        Ok(id) => s.flow(&project, &id)?,
        Err(_) => s.flow_by_handle(&project, key)?,
    };
    f.ok_or_else(|| Error::not_found("flow", key))
}

/// What a page of a user's feed shows, read in one storage job: the entries,
/// the feed's counts, and each entry's actor (as its view, null once gone).
pub struct FeedRead {
    pub page: Page<Delivery>,
    pub counts: crate::model::FeedCounts,
    /// The counts per category, on a first page of a project with categories.
    pub by_category: Option<crate::model::CategoryCounts>,
    pub actors: std::collections::HashMap<Uuid, serde_json::Value>,
}

impl FeedRead {
    /// The feed's counts as the page shows them.
    pub fn meta(&self) -> crate::views::FeedMeta {
        self.counts.view_with(self.by_category.as_ref())
    }

    /// The actor shown on entry `d` (null when it has none).
    pub fn actor_of(&self, d: &Delivery) -> &serde_json::Value {
        static NULL: serde_json::Value = serde_json::Value::Null;
        d.actor_id
            .and_then(|a| self.actors.get(&a))
            .unwrap_or(&NULL)
    }
}

impl Engine {
    /// A user's feed counts per category of project `p`
    /// (`dyn Storage::feed_counts_by_category`): `None` without categories.
    pub async fn feed_counts_by_category(
        &self, p: Arc<Project>, user: Uuid,
    ) -> Result<Option<crate::model::CategoryCounts>> {
        if p.categories.is_empty() {
            return Ok(None);
        }
        self.run(move |s| s.feed_counts_by_category(&p, &user))
            .await
    }

    /// `feed_counts_by_category` of a project by id (read first).
    pub async fn feed_category_counts(
        &self, project: Uuid, user: Uuid,
    ) -> Result<Option<crate::model::CategoryCounts>> {
        self.run(move |s| match s.project(&project)? {
            Some(p) => s.feed_counts_by_category(&p, &user),
            None => Ok(None),
        })
        .await
    }

    /// A page of a user's feed, rendered to the response's bytes by
    /// `render` in the same storage job (the hottest read: the records are
    /// serialised straight into the body). The plain first page
    /// (`first_page`) is kept by a backend with a cache until the feed or a
    /// user of the project changes, and served from memory without a hop
    /// to the blocking pool.
    pub async fn feed_page(
        &self, p: Arc<Project>, user: Uuid, filters: super::FeedFilters, req: PageReq,
        first_page: bool, render: impl Fn(&FeedRead) -> Result<Vec<u8>> + Send + 'static,
    ) -> Result<Arc<[u8]>> {
        let project = p.id;
        let limit = req.limit;
        // A first page (any filter) shows the counts per category.
        let with_categories = req.after.is_none() && req.before.is_none();
        // Only the plain first page is kept (a flow's is not).
        let first_page = first_page && filters.flow.is_none();
        // The stamp is read before the page (see `FeedPages`).
        let stamp = first_page
            .then(|| self.storage().feed_stamp(&project, &user))
            .flatten();
        let pages = self.inner.parts.get::<FeedPages>();
        if let Some(body) = stamp.and_then(|st| pages.get(&project, &user, limit, st)) {
            return Ok(body);
        }
        let body: Arc<[u8]> = self
            .run(move |s| {
                let scope = filters.scope(s, &project)?;
                let page = s.feed_page(&project, &user, scope, &req)?;
                let counts = s.feed_counts(&project, &user)?;
                let by_category = match with_categories {
                    true => s.feed_counts_by_category(&p, &user)?,
                    false => None,
                };
                let mut actors = std::collections::HashMap::new();
                for a in page.items.iter().filter_map(|d| d.actor_id) {
                    if let std::collections::hash_map::Entry::Vacant(e) = actors.entry(a) {
                        e.insert(crate::views::UserView::json(s.user(&project, &a)?.as_ref()));
                    }
                }
                Ok(render(&FeedRead {
                    page,
                    counts,
                    by_category,
                    actors,
                })?
                .into())
            })
            .await?;
        if let Some(st) = stamp {
            pages.put(&project, &user, limit, st, &body);
        }
        Ok(body)
    }
}
