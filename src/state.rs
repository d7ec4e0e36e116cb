//! Shared application state handed to every handler.

use crate::configuration::Settings;
use crate::errors::ApiResult;
use governor::{clock::DefaultClock, state::keyed::DashMapStateStore, Quota, RateLimiter};
use herald_engine::{Engine, Store};
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
    /// Wrong credentials per client address (burst = the per-minute figure).
    auth_failures: KeyedLimiter<std::net::IpAddr>,
    /// Addresses past their budget of wrong credentials, until when.
    auth_blocked: dashmap::DashMap<std::net::IpAddr, std::time::Instant>,
    pub auth_failures_per_minute: u32,
    /// Failed console sign-ins per address and per account.
    pub console: crate::console::auth::limits::SignInLimits,
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
            self.auth_failures.retain_recent();
            let now = std::time::Instant::now();
            self.auth_blocked.retain(|_, until| *until > now);
        }
    }

    pub fn new(admin_rate: u32, user_rate: u32, auth_failures_per_minute: u32) -> Self {
        let per_minute = NonZeroU32::new(auth_failures_per_minute.max(1)).expect("non-zero");
        Limits {
            checks: Default::default(),
            admin: RateLimiter::dashmap(quota(admin_rate)),
            user: RateLimiter::dashmap(quota(user_rate)),
            admin_rate,
            user_rate,
            auth_failures: RateLimiter::dashmap(Quota::per_minute(per_minute)),
            auth_blocked: Default::default(),
            auth_failures_per_minute,
            console: Default::default(),
        }
    }

    /// Seconds until `ip` may try credentials again, if it used up its budget.
    pub fn auth_blocked(&self, ip: std::net::IpAddr) -> Option<u64> {
        let until = *self.auth_blocked.get(&ip)?;
        let left = until.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            self.auth_blocked.remove(&ip);
            return None;
        }
        Some((left.as_millis() as u64).div_ceil(1000).max(1))
    }

    /// Counts one wrong credential from `ip`; past the budget the address is
    /// refused (429) until the bucket has a token again.
    /// False when this failure was over the budget.
    pub fn auth_failed(&self, ip: std::net::IpAddr) -> bool {
        match self.auth_failures.check_key(&ip) {
            Ok(()) => true,
            Err(nu) => {
                let wait = nu.wait_time_from(governor::clock::Clock::now(&DefaultClock::default()));
                self.auth_blocked
                    .insert(ip, std::time::Instant::now() + wait);
                false
            }
        }
    }
}

pub struct AppState {
    /// The embedded store, for what only it has (backups); `None` when the
    /// state is in PostgreSQL. Everything else goes through the engine's
    /// `Storage`.
    pub store: Option<Store>,
    pub engine: Engine,
    pub settings: Settings,
    pub limits: Limits,
    pub idempotency: crate::idempotency::Locks,
    /// Open live-feed sockets (closed with 1001 on shutdown).
    pub live: crate::live::sockets::Registry,
}

pub type State = actix_web::web::Data<Arc<AppState>>;

impl AppState {
    /// `f` at most once per idempotency key (see `idempotency::once`).
    pub async fn once<F, Fut>(
        &self, project: Uuid, idem: Option<crate::idempotency::Idem>, resource: &str, f: F,
    ) -> ApiResult<actix_web::HttpResponse>
    where
        F: FnOnce(Option<crate::idempotency::Idem>) -> Fut,
        Fut: std::future::Future<Output = ApiResult<crate::idempotency::Created>>,
    {
        crate::idempotency::once(&self.idempotency, &self.engine, project, idem, resource, f).await
    }

    /// The URL users reach the server at (`--public-url`, set at start).
    pub fn public_url(&self) -> &str {
        self.settings.public_url.as_deref().unwrap_or("")
    }

    /// The key that signs this server's page cursors.
    pub fn cursor_key(&self) -> &[u8; 32] {
        self.engine.cursor_key()
    }
}
