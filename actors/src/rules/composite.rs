//! Operations composed of storage calls, written once for every backend:
//! inherent methods of `dyn Storage`, so an engine caller holding the
//! storage interface calls them as it calls a trait method, and no backend
//! implements them. Each one also holds what is a rule rather than storage
//! (a new secret, a new record, what absence means to a client).

use crate::error::{Error, Result};
use crate::events::{new_secret, WebhookEndpoint};
use crate::model::{CategoryCounts, Flow, Project, Subscription, User, UserPatch, UserRef};
use crate::storage::{
    EndpointWrite, Erasure, ErasureStep, FeedOf, FlowRef, LoggedFrames, Memory, Page, PageReq,
    ProjectRef, Refusal, Remembered, Storage, SubscriptionsOf, WorkRepo,
};
use std::sync::Arc;
use std::sync::OnceLock;
use std::time::Duration;
use uuid::Uuid;

impl dyn Storage {
    /// A project by id (`ProjectRepo::find_project`).
    pub fn project(&self, id: &Uuid) -> Result<Option<Project>> {
        self.find_project(ProjectRef::Id(id))
    }

    /// A project by name (`ProjectRepo::find_project`).
    pub fn project_by_name(&self, name: &str) -> Result<Option<Project>> {
        self.find_project(ProjectRef::Name(name))
    }

    /// Deletes one user as `UserRepo::delete_users` does; a missing one is
    /// `Refusal::Missing`.
    pub fn delete_user(&self, project: &Uuid, ext: &str) -> Result<()> {
        match self.delete_users(project, &[ext.to_string()])?.first() {
            Some(true) => Ok(()),
            _ => Err(Refusal::missing("user", ext)),
        }
    }

    /// A flow by id (`FlowRepo::find_flow`).
    pub fn flow(&self, project: &Uuid, id: &Uuid) -> Result<Option<Flow>> {
        self.find_flow(project, FlowRef::Id(id))
    }

    /// A flow by handle (`FlowRepo::find_flow`).
    pub fn flow_by_handle(&self, project: &Uuid, handle: &str) -> Result<Option<Flow>> {
        self.find_flow(project, FlowRef::Handle(handle))
    }

    /// The flow id a list filter names by id or handle, as the paths do: a
    /// handle that names no flow gives the nil id, which matches nothing
    /// (a filter is not a 404).
    pub fn flow_filter_id(&self, project: &Uuid, key: &str) -> Result<Uuid> {
        Ok(match Uuid::parse_str(key) {
            Ok(id) => id,
            Err(_) => self
                .flow_by_handle(project, key)?
                .map_or(Uuid::nil(), |f| f.id),
        })
    }

    /// One page of a topic's subscriptions (`TopicRepo::subscriptions`).
    pub fn topic_subscriptions(
        &self, project: &Uuid, key: &str, req: &PageReq,
    ) -> Result<Page<Subscription>> {
        self.subscriptions(project, SubscriptionsOf::Topic(key), req)
    }

    /// One page of a user's subscriptions (`TopicRepo::subscriptions`).
    pub fn user_subscriptions(
        &self, project: &Uuid, user: &Uuid, req: &PageReq,
    ) -> Result<Page<Subscription>> {
        self.subscriptions(project, SubscriptionsOf::User(user), req)
    }

    /// The project of an API key from the backend's memory (`None` when
    /// not there, or without one): no read, no hop to the blocking pool.
    pub fn project_cached(&self, public_key: &str) -> Option<Arc<Project>> {
        match self.memory(Memory::Project(public_key))? {
            Remembered::Project(p) => Some(p),
            _ => None,
        }
    }

    /// The project of an API key (`ProjectRepo::find_project`).
    pub fn project_by_api_key(&self, public_key: &str) -> Result<Option<Arc<Project>>> {
        Ok(self
            .find_project(ProjectRef::ApiKey(public_key))?
            .map(Arc::new))
    }

    /// A user by external id from the backend's memory only.
    pub fn user_cached(&self, project: &Uuid, ext: &str) -> Option<Arc<User>> {
        match self.memory(Memory::User(project, ext))? {
            Remembered::User(u) => Some(u),
            _ => None,
        }
    }

    /// A user by external id, from the backend's memory when there, else
    /// read (a backend that remembers users remembers it then).
    pub fn user_by_ext_cached(&self, project: &Uuid, ext: &str) -> Result<Option<Arc<User>>> {
        match self.user_cached(project, ext) {
            Some(u) => Ok(Some(u)),
            None => Ok(self.user_by_ext(project, ext)?.map(Arc::new)),
        }
    }

    /// A user's feed counts per category of `project` (`rules::feed::by_category`);
    /// `None`, and nothing read, when the project declares no category.
    pub fn feed_counts_by_category(
        &self, project: &Project, user: &Uuid,
    ) -> Result<Option<CategoryCounts>> {
        if project.categories.is_empty() {
            return Ok(None);
        }
        let counts = self.feed_counts_by_flow(&project.id, user)?;
        let flows = if counts.is_empty() {
            vec![]
        } else {
            self.live_flows(&project.id)?
        };
        Ok(Some(crate::rules::feed::by_category(
            project.categories.keys(),
            &flows,
            &counts,
        )))
    }

    /// The change stamp of a user's feed (`Memory::FeedStamp`), when the
    /// backend keeps one.
    pub fn feed_stamp(&self, project: &Uuid, user: &Uuid) -> Option<u64> {
        match self.memory(Memory::FeedStamp(project, user))? {
            Remembered::Stamp(s) => Some(s),
            _ => None,
        }
    }

    /// The logged frames of a user's feed after `after` up to `upto`
    /// (`FeedRepo::frames_between`; none for an empty span).
    pub fn events_between(
        &self, project: &Uuid, user: &Uuid, after: u64, upto: u64,
    ) -> Result<LoggedFrames> {
        if after >= upto {
            return Ok(Some(vec![]));
        }
        self.frames_between(FeedOf { project, user }, after, upto)
    }

    /// Subscribes one user (`TopicRepo::subscribe_many`); already
    /// subscribed is `Refusal::AlreadySubscribed`.
    pub fn subscribe(&self, project: &Uuid, key: &str, user: &User) -> Result<Subscription> {
        let (_, mut made) = self.subscribe_many(project, key, &[UserRef::from(user)])?;
        made.pop().ok_or_else(|| Refusal::AlreadySubscribed.err())
    }

    /// Starts the erasure of a user (`RetentionRepo::erase`).
    pub fn start_erasure(&self, project: &Uuid, ext: &str) -> Result<Erasure> {
        self.erase(project, ErasureStep::Start(ext))
    }

    /// One bounded step of an erasure (`RetentionRepo::erase`).
    pub fn erase_step(&self, project: &Uuid, id: &Uuid, max: usize) -> Result<Erasure> {
        self.erase(project, ErasureStep::Continue { id, max })
    }

    /// Whether other processes work on the same data (`Storage::work`):
    /// then the engine claims its work.
    pub fn shares_work(&self) -> bool {
        self.work().is_some()
    }

    /// The shared work's calls, on a path only a node that shares its work
    /// takes (an internal error otherwise).
    pub fn shared_work(&self) -> Result<&dyn WorkRepo> {
        self.work()
            .ok_or_else(|| Error::internal("this backend shares no work"))
    }

    /// This process's node id, for logs and metrics: the shared work's, or
    /// one taken at random once per process.
    pub fn node_id(&self) -> Uuid {
        static NODE: OnceLock<Uuid> = OnceLock::new();
        match self.work() {
            Some(w) => w.node().id,
            None => {
                *NODE.get_or_init(|| uuid::Builder::from_random_bytes(rand::random()).into_uuid())
            }
        }
    }

    /// How long a claim of shared work holds unless renewed (forever when
    /// this process owns all the work).
    pub fn lease(&self) -> Duration {
        self.work().map_or(Duration::MAX, |w| w.node().lease)
    }

    /// Stores a new event endpoint with a new signing secret, returned this
    /// once (`EndpointWrite::Create`).
    pub fn create_event_endpoint(
        &self, project: &Uuid, ep: WebhookEndpoint,
    ) -> Result<(WebhookEndpoint, String)> {
        let secret = new_secret();
        let ep = self.put_event_endpoint(
            project,
            EndpointWrite::Create {
                ep,
                secret: &secret,
            },
        )?;
        Ok((ep, secret))
    }

    /// A new signing secret for an event endpoint (returned this once); the
    /// previous one signs for `grace` (`EndpointWrite::Secret`).
    pub fn rotate_event_secret(
        &self, project: &Uuid, id: &Uuid, grace: Duration,
    ) -> Result<(WebhookEndpoint, String)> {
        let secret = new_secret();
        let ep = self.put_event_endpoint(
            project,
            EndpointWrite::Secret {
                id,
                secret: &secret,
                grace,
            },
        )?;
        Ok((ep, secret))
    }

    /// Creates or patches one user (`UserRepo::upsert_users` of one item);
    /// true when it was created.
    pub fn upsert_user(
        &self, project: &Uuid, ext: &str, patch: &UserPatch,
    ) -> Result<(User, bool)> {
        self.upsert_users(project, &[(ext, patch)])?
            .pop()
            .ok_or_else(|| Error::internal("an upsert returned no user"))
    }

    /// A user by external id; 404 when there is none.
    pub fn user_required(&self, project: &Uuid, ext: &str) -> Result<User> {
        self.user_by_ext(project, ext)?
            .ok_or_else(|| Error::not_found("user", ext))
    }
}
