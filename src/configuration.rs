//! Settings: defaults, then an optional TOML file (`--config`), then `HERALD_*`
//! environment variables, then command-line flags (clap merges the last two).

use serde::Deserialize;
use std::path::PathBuf;

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// Address to listen on; port 0 picks a free port.
    pub bind: String,
    /// The address users reach this server at (`https://herald.example.com`,
    /// a path prefix allowed): what preference-page links start with and the
    /// origin their form must come from. `None`: `http://` and the address
    /// the server is bound to (set at start).
    pub public_url: Option<String>,
    /// Where the embedded store lives.
    pub data_dir: PathBuf,
    /// A PostgreSQL URL (`postgres://USER@HOST/DB`) to keep all state there
    /// instead of the embedded store; `None`: the sled directory `data_dir`.
    pub store: Option<String>,
    /// The cluster bus (`nats://HOST:4222`): nodes on one PostgreSQL store
    /// and one bus form a cluster (docs/DEPLOY.md); `None`: a single node.
    pub bus: Option<String>,
    /// Admin API requests per second per project (burst twice that).
    pub admin_rate: u32,
    /// User API requests per second per user (burst twice that).
    pub user_rate: u32,
    /// `human` or `json`.
    pub log_format: String,
    /// Engine threads for the actors.
    pub engine_threads: usize,
    /// HTTP worker threads (0 = one per core).
    pub workers: usize,
    /// Live-feed sockets one user may hold; the oldest is closed (4408) past it.
    pub max_user_sockets: usize,
    /// Sockets open but not yet authenticated, server-wide; more are refused (503).
    pub max_pending_sockets: usize,
    /// Of those, what one source address may hold (an IPv6 address counts by
    /// its /64); more are refused (429). `None`: `pending_caps` derives it.
    pub max_pending_per_address: Option<usize>,
    /// Of those, what one project may hold; more are refused (429). `None`:
    /// `pending_caps` derives it.
    pub max_pending_per_project: Option<usize>,
    /// Wrong credentials per client address per minute before 429s.
    pub auth_failures_per_minute: u32,
    /// Free space (bytes) kept on the data directory's filesystem: the server
    /// refuses to start with less, and writes answer 503 while there is less
    /// (store::health). TOML takes a number or a string such as "64MiB".
    #[serde(deserialize_with = "de_size")]
    pub min_free_space: u64,
    /// Seconds SIGTERM/SIGINT may take before the process exits anyway.
    pub shutdown_grace: u64,
    /// MiniJinja fuel per rendered template field (see `render::Limits`).
    pub template_fuel: u64,
    /// Bytes one rendered template field may hold.
    pub template_max_output: usize,
    /// Bytes one delivery's rendered content may take, all parts together
    /// (`quota`; 0: no bound). TOML takes a number or a string ("1MiB").
    #[serde(deserialize_with = "de_size")]
    pub max_delivery_bytes: u64,
    /// Bytes a run's (a topic chunk's) deliveries may take together (0: no bound).
    #[serde(deserialize_with = "de_size")]
    pub max_run_bytes: u64,
    /// The storage quota of projects that set none (0: none).
    #[serde(deserialize_with = "de_size")]
    pub project_quota_bytes: u64,
    /// Provider calls of one channel type one project may have in flight.
    pub project_inflight: usize,
    /// Provider calls of one channel type in flight, all projects together.
    pub delivery_concurrency: usize,
    /// The key that seals channel secrets at rest; `None`: `DATA_DIR/secret.key`.
    pub secret_key_file: Option<PathBuf>,
    /// Ranges providers may send to although they are not public addresses
    /// (CIDRs or single addresses).
    pub egress_allow: Vec<String>,
    /// Turns the egress guard off: every destination is allowed.
    pub allow_private_destinations: bool,
    /// A host whose certificates Herald trusts as Amazon SNS signing
    /// certificates besides SNS's own hosts, over http too: for tests only.
    pub sns_trusted_cert_host: Option<String>,
    /// The retention window of projects that set none (TOML: "90d").
    pub retention: herald_engine::retention::Window,
    /// Seconds an outbound event is retried before its endpoint is disabled.
    pub event_retry_horizon: u64,
    /// PostgreSQL: seconds a node's claim on a piece of work (a delivery, a
    /// topic expansion, an outbound event) holds unless renewed.
    pub lease_seconds: u64,
    /// PostgreSQL: milliseconds between a node's looks for work it was not
    /// told of (another node's after it died, work due later).
    pub claim_poll_ms: u64,
    /// How long a degraded channel's circuit stays open before a probe
    /// (`herald_engine::health`), in milliseconds.
    pub channel_cooldown_ms: u64,
    /// PostgreSQL: the most connections the node's pool opens.
    pub pg_max_connections: u32,
    /// Console session cookies always carry `Secure` (docs/CONSOLE.md).
    pub console_secure_cookies: bool,
    /// Seconds a console session may stay idle before it ends.
    pub console_idle_timeout: u64,
}

/// The smallest derived share of the pending sockets (one browser page may
/// open a few sockets at once, and a NAT puts many browsers on one address).
pub const MIN_PENDING_SHARE: usize = 16;

/// Default of `min_free_space`: 64 MiB.
pub const DEFAULT_MIN_FREE_SPACE: u64 = 64 * 1024 * 1024;

/// A quantity written as digits and an optional unit (`64MiB`, `24h`, `90`):
/// the number and the unit, trimmed.
pub fn number_and_unit(s: &str) -> Option<(u64, &str)> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    Some((num.parse().ok()?, unit.trim()))
}

/// Parses a byte size: a number with an optional unit B, K/KB/KiB, M/MB/MiB,
/// G/GB/GiB, T/TB/TiB, P/PiB or E/EiB (all powers of 1024, case-insensitive).
/// Hand-written: fifteen lines instead of a dependency for one flag.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let (n, unit) = number_and_unit(s)
        .ok_or_else(|| format!("{s:?} is not a size (e.g. 67108864, 64MiB, 1GiB)"))?;
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        "p" | "pb" | "pib" => 50,
        "e" | "eb" | "eib" => 60,
        _ => {
            return Err(format!(
                "{s:?} has an unknown unit (use B, KiB, MiB, GiB, TiB)"
            ))
        }
    };
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("{s:?} is too large"))
}

fn de_size<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Size {
        N(u64),
        S(String),
    }
    match Size::deserialize(d)? {
        Size::N(n) => Ok(n),
        Size::S(s) => parse_size(&s).map_err(serde::de::Error::custom),
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            bind: "127.0.0.1:8080".into(),
            public_url: None,
            data_dir: PathBuf::from("./herald-data"),
            store: None,
            bus: None,
            admin_rate: 1000,
            user_rate: 50,
            log_format: "human".into(),
            engine_threads: 2,
            workers: 0,
            max_user_sockets: 16,
            max_pending_sockets: 1024,
            max_pending_per_address: None,
            max_pending_per_project: None,
            auth_failures_per_minute: 60,
            min_free_space: DEFAULT_MIN_FREE_SPACE,
            shutdown_grace: 10,
            template_fuel: herald_engine::render::DEFAULT_FUEL,
            template_max_output: herald_engine::render::DEFAULT_MAX_OUTPUT,
            max_delivery_bytes: herald_engine::quota::DEFAULT_MAX_DELIVERY_BYTES,
            max_run_bytes: herald_engine::quota::DEFAULT_MAX_RUN_BYTES,
            project_quota_bytes: herald_engine::quota::DEFAULT_PROJECT_QUOTA_BYTES,
            project_inflight: herald_engine::actors::DEFAULT_PROJECT_INFLIGHT,
            delivery_concurrency: herald_engine::actors::DEFAULT_CONCURRENCY,
            secret_key_file: None,
            egress_allow: vec![],
            allow_private_destinations: false,
            sns_trusted_cert_host: None,
            retention: Default::default(),
            event_retry_horizon: herald_engine::events::DEFAULT_RETRY_HORIZON.as_secs(),
            lease_seconds: herald_engine::backend::PG_DEFAULT_LEASE.as_secs(),
            claim_poll_ms: herald_engine::actors::DEFAULT_CLAIM_POLL.as_millis() as u64,
            channel_cooldown_ms: herald_engine::health::DEFAULT_COOLDOWN_MS as u64,
            pg_max_connections: herald_engine::backend::PG_DEFAULT_MAX_CONNECTIONS,
            console_secure_cookies: false,
            console_idle_timeout: herald_engine::console::IDLE_TIMEOUT.as_secs(),
        }
    }
}

impl Settings {
    /// The PostgreSQL URL when the store is PostgreSQL.
    pub fn postgres_url(&self) -> Option<&str> {
        self.store
            .as_deref()
            .filter(|s| herald_engine::backend::is_postgres_url(s))
    }

    /// A bus is a NATS URL, and only for the PostgreSQL store: the nodes of
    /// a cluster share one database, while the embedded store belongs to
    /// one process.
    pub fn check_bus(&self) -> Result<(), String> {
        let Some(bus) = &self.bus else { return Ok(()) };
        if !herald_engine::bus::is_nats_url(bus) {
            return Err(format!(
                "--bus must be a NATS URL (nats://HOST:4222), not {bus:?}"
            ));
        }
        if self.postgres_url().is_none() {
            return Err("--bus (HERALD_BUS) needs the PostgreSQL store (--store postgres://USER@HOST/DB): the nodes of a cluster share one database, and the embedded store belongs to one process".into());
        }
        Ok(())
    }

    /// `public_url` checked and normalised (no trailing `/`): an absolute
    /// http(s) URL without credentials, query or fragment.
    pub fn check_public_url(&mut self) -> Result<(), String> {
        let Some(given) = self.public_url.clone() else {
            return Ok(());
        };
        let bad = |why: &str| format!("--public-url {given:?}: {why}");
        let u = url::Url::parse(given.trim()).map_err(|e| bad(&e.to_string()))?;
        if !matches!(u.scheme(), "http" | "https") || u.host_str().is_none() {
            return Err(bad("must be an http:// or https:// URL with a host"));
        }
        if !u.username().is_empty() || u.password().is_some() {
            return Err(bad("must not carry credentials"));
        }
        if u.query().is_some() || u.fragment().is_some() {
            return Err(bad("must have no query or fragment"));
        }
        self.public_url = Some(u.as_str().trim_end_matches('/').to_string());
        Ok(())
    }

    /// Where the secret key is read (or created on first start).
    pub fn secret_key_path(&self) -> PathBuf {
        self.secret_key_file
            .clone()
            .unwrap_or_else(|| self.data_dir.join(herald_engine::backend::DEFAULT_KEY_FILE))
    }

    /// The budget of live-feed sockets still authenticating and its shares.
    /// Unset, a source address may hold an eighth of the total and a project
    /// half of it, each at least `MIN_PENDING_SHARE` (within the total): so
    /// one client takes at most an eighth, and one project's public key (which
    /// every browser of that product holds) leaves the other tenants half.
    pub fn pending_caps(&self) -> crate::live::sockets::PendingCaps {
        let total = self.max_pending_sockets;
        let derived = |part: usize| (total / part).max(MIN_PENDING_SHARE).min(total);
        crate::live::sockets::PendingCaps {
            total,
            per_address: self.max_pending_per_address.unwrap_or_else(|| derived(8)),
            per_project: self.max_pending_per_project.unwrap_or_else(|| derived(2)),
        }
    }

    /// The egress policy these settings describe.
    pub fn egress_policy(&self) -> Result<herald_engine::egress::EgressPolicy, String> {
        Ok(herald_engine::egress::EgressPolicy {
            allow_private: self.allow_private_destinations,
            allow: herald_engine::egress::parse_allow(&self.egress_allow.join(","))?,
        })
    }

    /// Defaults overlaid with a TOML file.
    pub fn from_file(path: Option<&std::path::Path>) -> Result<Settings, String> {
        match path {
            None => Ok(Settings::default()),
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .map_err(|e| format!("cannot read {}: {e}", p.display()))?;
                toml::from_str(&text)
                    .map_err(|e| format!("invalid config file {}: {e}", p.display()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_size, Settings};
    use crate::live::sockets::PendingCaps;

    #[test]
    fn pending_shares_derive_from_the_total_unless_set() {
        let caps = |total, addr, proj| {
            Settings {
                max_pending_sockets: total,
                max_pending_per_address: addr,
                max_pending_per_project: proj,
                ..Settings::default()
            }
            .pending_caps()
        };
        let want = |total, per_address, per_project| PendingCaps {
            total,
            per_address,
            per_project,
        };
        assert_eq!(caps(1024, None, None), want(1024, 128, 512));
        assert_eq!(caps(64, None, None), want(64, 16, 32));
        // never more than the total
        assert_eq!(caps(2, None, None), want(2, 2, 2));
        assert_eq!(caps(1024, Some(3), Some(4)), want(1024, 3, 4));
    }

    #[test]
    fn the_public_url_is_checked_and_normalised() {
        let check = |u: &str| {
            let mut s = Settings {
                public_url: Some(u.into()),
                ..Settings::default()
            };
            s.check_public_url().map(|_| s.public_url.unwrap())
        };
        assert_eq!(
            check("https://h.example.com/").unwrap(),
            "https://h.example.com"
        );
        assert_eq!(
            check("https://h.example.com/herald/").unwrap(),
            "https://h.example.com/herald"
        );
        assert!(check("ftp://h.example.com").is_err());
        assert!(check("https://u:p@h.example.com").is_err());
        assert!(check("https://h.example.com/?x=1").is_err());
        assert!(check("h.example.com").is_err());
    }

    #[test]
    fn sizes_parse_with_and_without_units() {
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("64 mb"), Ok(64 << 20));
        assert_eq!(parse_size("1EiB"), Ok(1 << 60));
        assert!(parse_size("16EiB").is_err());
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("MiB").is_err());
    }
}
