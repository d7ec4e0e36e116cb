//! Shared application state handed to every handler.

use crate::configuration::Settings;
use crate::errors::ApiError;
use governor::{clock::DefaultClock, state::keyed::DashMapStateStore, Quota, RateLimiter};
use herald_actors::{Engine, Error, Store};
use std::num::NonZeroU32;
use std::sync::Arc;
use uuid::Uuid;

pub type KeyedLimiter<K> = RateLimiter<K, DashMapStateStore<K>, DefaultClock>;

pub struct Limits {
    checks: std::sync::atomic::AtomicU64,
    pub admin: KeyedLimiter<Uuid>,
    pub user: KeyedLimiter<(Uuid, Uuid)>,
    pub admin_rate: u32,
    pub user_rate: u32,
}

fn quota(rate: u32) -> Quota {
    let r = NonZeroU32::new(rate.max(1)).expect("non-zero");
    let burst = NonZeroU32::new(rate.max(1).saturating_mul(2)).expect("non-zero");
    Quota::per_second(r).allow_burst(burst)
}

impl Limits {
    /// Every 10,000 checks, forgets keys whose buckets are full again, so the
    /// per-user state does not grow with every user ever seen.
    pub fn housekeeping(&self) {
        if self
            .checks
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            % 10_000
            == 9_999
        {
            self.admin.retain_recent();
            self.user.retain_recent();
        }
    }

    pub fn new(admin_rate: u32, user_rate: u32) -> Self {
        Limits {
            checks: Default::default(),
            admin: RateLimiter::dashmap(quota(admin_rate)),
            user: RateLimiter::dashmap(quota(user_rate)),
            admin_rate,
            user_rate,
        }
    }
}

pub struct AppState {
    pub store: Store,
    pub engine: Engine,
    pub settings: Settings,
    pub limits: Limits,
    pub idempotency: crate::idempotency::Locks,
    /// Open live-feed sockets (closed with 1001 on shutdown).
    pub live: crate::routes::live::Registry,
}

pub type State = actix_web::web::Data<Arc<AppState>>;

impl AppState {
    /// Runs blocking store work on the blocking pool, never on an HTTP worker.
    pub async fn run<T, F>(&self, f: F) -> Result<T, ApiError>
    where
        F: FnOnce(&Store) -> Result<T, Error> + Send + 'static,
        T: Send + 'static,
    {
        let store = self.store.clone();
        match actix_web::web::block(move || f(&store)).await {
            Ok(r) => r.map_err(ApiError),
            Err(e) => Err(ApiError(Error::internal(format!(
                "blocking task failed: {e}"
            )))),
        }
    }
}
