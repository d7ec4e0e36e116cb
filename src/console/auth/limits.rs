//! Budgets of failed console sign-ins, per client address and per account
//! (the email tried): past either, sign-ins are refused for a while, right
//! password or not, so guessing one account's password from many addresses
//! or many accounts' from one is slow. Each node keeps its own budgets.

use governor::clock::{Clock, DefaultClock};
use governor::state::keyed::DashMapStateStore;
use governor::{Quota, RateLimiter};
use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::{Duration, Instant};

/// Failed sign-ins one address may make at once; then one every three
/// seconds (20 a minute).
pub const PER_ADDRESS: u32 = 20;
/// Failed sign-ins one account may take at once; then one a minute.
pub const PER_ACCOUNT: u32 = 5;

struct Budget<K: Hash + Eq + Clone> {
    limiter: RateLimiter<K, DashMapStateStore<K>, DefaultClock>,
    blocked: dashmap::DashMap<K, Instant>,
}

impl<K: Hash + Eq + Clone> Budget<K> {
    fn new(burst: u32, period: Duration) -> Self {
        let burst = NonZeroU32::new(burst.max(1)).expect("non-zero");
        let q = Quota::with_period(period)
            .expect("a non-zero period")
            .allow_burst(burst);
        Budget {
            limiter: RateLimiter::dashmap(q),
            blocked: Default::default(),
        }
    }

    /// Seconds until `k` may try again, if it used up its budget.
    fn blocked(&self, k: &K) -> Option<u64> {
        let until = *self.blocked.get(k)?;
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            self.blocked.remove(k);
            return None;
        }
        Some((left.as_millis() as u64).div_ceil(1000).max(1))
    }

    /// Charges a failure; past the budget `k` is blocked until its bucket
    /// has a token again.
    fn failed(&self, k: &K) {
        if let Err(nu) = self.limiter.check_key(k) {
            let wait = nu.wait_time_from(DefaultClock::default().now());
            self.blocked.insert(k.clone(), Instant::now() + wait);
        }
        if self.blocked.len() > 100_000 {
            let now = Instant::now();
            self.blocked.retain(|_, until| *until > now);
            self.limiter.retain_recent();
        }
    }
}

/// The console's budgets of failed sign-ins.
pub struct SignInLimits {
    by_address: Budget<IpAddr>,
    by_account: Budget<String>,
}

impl Default for SignInLimits {
    fn default() -> Self {
        SignInLimits {
            by_address: Budget::new(PER_ADDRESS, Duration::from_secs(3)),
            by_account: Budget::new(PER_ACCOUNT, Duration::from_secs(60)),
        }
    }
}

impl SignInLimits {
    /// Seconds to wait before this address may try this account, if either
    /// used up its budget.
    pub fn refused(&self, ip: Option<IpAddr>, account: &str) -> Option<u64> {
        let a = ip.and_then(|ip| self.by_address.blocked(&ip));
        let b = self.by_account.blocked(&account.to_string());
        a.max(b)
    }

    /// Charges a failed sign-in to the address and the account.
    pub fn failed(&self, ip: Option<IpAddr>, account: &str) {
        if let Some(ip) = ip {
            self.by_address.failed(&ip);
        }
        self.by_account.failed(&account.to_string());
    }
}
