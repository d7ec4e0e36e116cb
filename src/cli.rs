//! Command line: `herald serve`, `herald migrate`, `herald project
//! create|list|show|rotate-secret|delete`, `herald backup`, `herald restore`
//! and `herald --version`.

use crate::configuration::Settings;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// What `herald --version` prints after the name: the package version and
/// the commit it was built from (`build.rs`; `unknown` without git).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("HERALD_GIT_COMMIT"),
    ")"
);

#[derive(Parser, Debug)]
#[command(
    name = "herald",
    version = VERSION,
    about = "Self-hostable notification delivery service"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Start the service (creates project `default` on first start).
    Serve(Box<ServeArgs>),
    /// Manage projects (tenants) and their keys, whether or not a server is
    /// serving the data directory (a running server is asked over its operator API).
    Project {
        #[command(subcommand)]
        command: crate::project_cmd::ProjectCommand,
    },
    /// Manage console members (`add-member` prints a one-time sign-in link),
    /// whether or not a server is serving the data directory.
    Console {
        #[command(subcommand)]
        command: crate::console_cmd::ConsoleCommand,
    },
    /// Write a consistent snapshot of a data directory to a file, whether or not
    /// a server is serving it (a running server is asked over loopback).
    Backup(BackupArgs),
    /// Restore a backup file into a new (absent or empty) data directory.
    Restore(RestoreArgs),
    /// Apply the PostgreSQL schema migrations this binary embeds (`serve`
    /// applies them too); a database already current is left as it is.
    Migrate(MigrateArgs),
}

#[derive(Args, Debug)]
pub struct MigrateArgs {
    /// The database: postgres://USER@HOST/DB.
    #[arg(long, env = "HERALD_STORE")]
    pub store: String,
}

#[derive(Args, Debug)]
pub struct BackupArgs {
    /// The backup file to write (replaced atomically when complete).
    #[arg(long, value_name = "FILE")]
    pub to: PathBuf,
    /// Data directory to back up.
    #[arg(long, env = "HERALD_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct RestoreArgs {
    /// The backup file to read.
    #[arg(long, value_name = "FILE")]
    pub from: PathBuf,
    /// Data directory to create; it must be absent or empty.
    #[arg(long, env = "HERALD_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
}

#[derive(Args, Debug, Default)]
pub struct ServeArgs {
    /// TOML file with the settings below (overridden by env and flags).
    #[arg(long, env = "HERALD_CONFIG")]
    pub config: Option<PathBuf>,
    /// Listen address; port 0 picks a free port [default: 127.0.0.1:8080].
    #[arg(long, env = "HERALD_BIND")]
    pub bind: Option<String>,
    /// The URL users reach this server at (https://herald.example.com): what
    /// preference-page and unsubscribe links start with (commercial flows need
    /// it); ADDR is the bound address [default: http://ADDR].
    #[arg(long, env = "HERALD_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// The embedded store [default: ./herald-data].
    #[arg(long, env = "HERALD_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Where all state lives: postgres://USER@HOST/DB for PostgreSQL, or a
    /// directory for the embedded store [default: the data directory].
    #[arg(long, env = "HERALD_STORE")]
    pub store: Option<String>,
    /// The cluster bus: nats://HOST:4222. Nodes started with the same
    /// PostgreSQL --store and the same --bus form one cluster [default: none,
    /// a single node].
    #[arg(long, env = "HERALD_BUS")]
    pub bus: Option<String>,
    /// Admin API requests/s per project, burst ×2 [default: 1000].
    #[arg(long, env = "HERALD_ADMIN_RATE")]
    pub admin_rate: Option<u32>,
    /// User API requests/s per user, burst ×2 [default: 50].
    #[arg(long, env = "HERALD_USER_RATE")]
    pub user_rate: Option<u32>,
    /// Log format: human or json; the level comes from RUST_LOG [default: human].
    #[arg(long, env = "HERALD_LOG_FORMAT", value_parser = ["human", "json"])]
    pub log_format: Option<String>,
    /// Threads the engine's actors run on [default: 2].
    #[arg(long, env = "HERALD_ENGINE_THREADS")]
    pub engine_threads: Option<usize>,
    /// HTTP worker threads (0: one per core) [default: cores].
    #[arg(long, env = "HERALD_WORKERS")]
    pub workers: Option<usize>,
    /// Live-feed sockets per user; the oldest is closed with 4408 past it [default: 16].
    #[arg(long, env = "HERALD_MAX_USER_SOCKETS")]
    pub max_user_sockets: Option<usize>,
    /// Sockets still authenticating, server-wide; more get 503 [default: 1024].
    #[arg(long, env = "HERALD_MAX_PENDING_SOCKETS")]
    pub max_pending_sockets: Option<usize>,
    /// Of those, how many one client address may hold (an IPv6 address counts
    /// by its /64); more get 429 [default: an eighth of --max-pending-sockets,
    /// at least 16].
    #[arg(long, env = "HERALD_MAX_PENDING_PER_ADDRESS", value_name = "N")]
    pub max_pending_per_address: Option<usize>,
    /// Of those, how many one project may hold; more get 429 [default: half
    /// of --max-pending-sockets, at least 16].
    #[arg(long, env = "HERALD_MAX_PENDING_PER_PROJECT", value_name = "N")]
    pub max_pending_per_project: Option<usize>,
    /// Wrong credentials per client address per minute, then 429 [default: 60].
    #[arg(long, env = "HERALD_AUTH_FAILURES_PER_MINUTE")]
    pub auth_failures_per_minute: Option<u32>,
    /// Free space kept on the data directory's filesystem: below it writes
    /// answer 503 (reads go on) and the server refuses to start (bytes, or
    /// with a unit: 512MiB, 1GiB) [default: 64MiB].
    #[arg(long, env = "HERALD_MIN_FREE_SPACE", value_parser = crate::configuration::parse_size)]
    pub min_free_space: Option<u64>,
    /// Seconds SIGTERM/SIGINT may take; past that the process exits with status 1 [default: 10].
    #[arg(long, env = "HERALD_SHUTDOWN_GRACE")]
    pub shutdown_grace: Option<u64>,
    /// MiniJinja fuel (about one unit per instruction) one rendered template field may use [default: 100000].
    #[arg(long, env = "HERALD_TEMPLATE_FUEL")]
    pub template_fuel: Option<u64>,
    /// Bytes one rendered template field may hold [default: 262144].
    #[arg(long, env = "HERALD_TEMPLATE_MAX_OUTPUT", value_name = "BYTES")]
    pub template_max_output: Option<usize>,
    /// Bytes one delivery's rendered content may take, its parts (subject,
    /// body, html, url) together; a run with a delivery over it is refused
    /// (422), a digest rendered later fails (template_error); 0: no bound
    /// (bytes, or with a unit: 512KiB, 1MiB) [default: 1MiB].
    #[arg(long, env = "HERALD_MAX_DELIVERY_BYTES", value_name = "BYTES", value_parser = crate::configuration::parse_size)]
    pub max_delivery_bytes: Option<u64>,
    /// Bytes a run's deliveries may take together once rendered (a topic
    /// run's: per chunk of recipients); a run over it is refused (422); 0:
    /// no bound [default: 256MiB].
    #[arg(long, env = "HERALD_MAX_RUN_BYTES", value_name = "BYTES", value_parser = crate::configuration::parse_size)]
    pub max_run_bytes: Option<u64>,
    /// The storage quota of projects that set none (`quota_bytes`): a run
    /// that would take a project's usage past it is refused (409
    /// quota_exceeded); 0: no quota [default: 0].
    #[arg(long, env = "HERALD_PROJECT_QUOTA_BYTES", value_name = "BYTES", value_parser = crate::configuration::parse_size)]
    pub project_quota_bytes: Option<u64>,
    /// Provider calls of one channel type one project may have in flight [default: 256].
    #[arg(long, env = "HERALD_PROJECT_INFLIGHT")]
    pub project_inflight: Option<usize>,
    /// Provider calls of one channel type in flight, all projects together [default: 1024].
    #[arg(long, env = "HERALD_DELIVERY_CONCURRENCY")]
    pub delivery_concurrency: Option<usize>,
    /// File holding the key that seals channel secrets (created, mode 0600, when
    /// absent). Never part of a backup: keep a copy [default: DATA_DIR/secret.key].
    #[arg(long, env = "HERALD_SECRET_KEY_FILE", value_name = "FILE")]
    pub secret_key_file: Option<PathBuf>,
    /// Ranges providers may send to although private, loopback or link-local
    /// (comma-separated CIDRs or addresses, e.g. 10.0.0.0/8,127.0.0.1).
    #[arg(
        long,
        env = "HERALD_EGRESS_ALLOW",
        value_delimiter = ',',
        value_name = "CIDR"
    )]
    pub egress_allow: Option<Vec<String>>,
    /// Let providers send to any address, private and loopback included (the
    /// egress guard off; for tests and closed networks) [default: false].
    #[arg(long, env = "HERALD_ALLOW_PRIVATE_DESTINATIONS")]
    pub allow_private_destinations: bool,
    /// FOR TESTS ONLY: a host (name or IP address, no port) whose
    /// certificates are trusted as Amazon SNS signing certificates besides
    /// SNS's own hosts, fetched over http too (a test serves its own from
    /// 127.0.0.1). Anyone who can serve from it can sign SES events
    /// [default: none].
    #[arg(long, env = "HERALD_SNS_TRUSTED_CERT_HOST", value_name = "HOST")]
    pub sns_trusted_cert_host: Option<String>,
    /// Seconds an outbound event is retried before its event endpoint is
    /// disabled (at least 1) [default: 86400].
    #[arg(long, env = "HERALD_EVENT_RETRY_HORIZON", value_name = "SECONDS")]
    pub event_retry_horizon: Option<u64>,
    /// PostgreSQL: seconds a node's claim on a piece of work (a delivery, a
    /// topic expansion, an outbound event) holds unless renewed; a node that
    /// dies leaves its work to the others this long at most (at least 1) [default: 30].
    #[arg(long, env = "HERALD_LEASE_SECONDS", value_name = "SECONDS")]
    pub lease_seconds: Option<u64>,
    /// PostgreSQL: milliseconds between a node's looks for work it was not
    /// told of (at least 10) [default: 1000].
    #[arg(long, env = "HERALD_CLAIM_POLL_MS", value_name = "MS")]
    pub claim_poll_ms: Option<u64>,
    /// Milliseconds a degraded channel's circuit stays open before one
    /// probe attempt is let through (at least 10) [default: 30000].
    #[arg(long, env = "HERALD_CHANNEL_COOLDOWN_MS", value_name = "MS")]
    pub channel_cooldown_ms: Option<u64>,
    /// PostgreSQL: the most connections this node opens to the database (at
    /// least 1); N nodes open up to N times as many [default: 16].
    #[arg(long, env = "HERALD_PG_MAX_CONNECTIONS", value_name = "N")]
    pub pg_max_connections: Option<u32>,
    /// Console session cookies always carry `Secure` (false: only when the
    /// request came over TLS or --public-url is https); set it behind a
    /// proxy that terminates TLS without saying so [default: false].
    #[arg(long, env = "HERALD_CONSOLE_SECURE_COOKIES")]
    pub console_secure_cookies: bool,
    /// Seconds a console session may stay idle (tests shorten it) [default: 43200].
    #[arg(
        long,
        env = "HERALD_CONSOLE_IDLE_TIMEOUT",
        value_name = "SECONDS",
        hide = true
    )]
    pub console_idle_timeout: Option<u64>,
    /// Public key of project `default` when it is created.
    #[arg(long, env = "HERALD_BOOTSTRAP_PUBLIC_KEY", hide_env_values = true)]
    pub bootstrap_public_key: Option<String>,
    /// Secret key of project `default` when it is created.
    #[arg(long, env = "HERALD_BOOTSTRAP_SECRET_KEY", hide_env_values = true)]
    pub bootstrap_secret_key: Option<String>,
    /// How long notifications, feed entries and live-feed events are kept in
    /// projects that set no retention of their own (15m, 12h, 90d; at least 1m) [default: 90d].
    #[arg(long, env = "HERALD_RETENTION")]
    pub retention: Option<herald_engine::retention::Window>,
}

impl ServeArgs {
    pub fn settings(&self) -> Result<Settings, String> {
        let mut s = Settings::from_file(self.config.as_deref())?;
        if let Some(v) = &self.bind {
            s.bind = v.clone();
        }
        if let Some(v) = self.public_url.as_ref().filter(|v| !v.is_empty()) {
            s.public_url = Some(v.clone());
        }
        s.check_public_url()?;
        if let Some(v) = &self.data_dir {
            s.data_dir = v.clone();
        }
        if let Some(v) = &self.store {
            s.store = Some(v.clone());
        }
        if let Some(v) = self.bus.as_ref().filter(|v| !v.is_empty()) {
            s.bus = Some(v.clone());
        }
        // A store that is not a PostgreSQL URL is the embedded store's directory.
        if let Some(dir) = s.store.clone().filter(|v| s.postgres_url() != Some(v)) {
            s.data_dir = PathBuf::from(dir);
            s.store = None;
        }
        if let Some(v) = self.admin_rate {
            s.admin_rate = v;
        }
        if let Some(v) = self.user_rate {
            s.user_rate = v;
        }
        if let Some(v) = &self.log_format {
            s.log_format = v.clone();
        }
        if let Some(v) = self.engine_threads {
            s.engine_threads = v;
        }
        if let Some(v) = self.workers {
            s.workers = v;
        }
        if let Some(v) = self.max_user_sockets {
            s.max_user_sockets = v;
        }
        if let Some(v) = self.max_pending_sockets {
            s.max_pending_sockets = v;
        }
        if let Some(v) = self.max_pending_per_address {
            s.max_pending_per_address = Some(v);
        }
        if let Some(v) = self.max_pending_per_project {
            s.max_pending_per_project = Some(v);
        }
        if let Some(v) = self.auth_failures_per_minute {
            s.auth_failures_per_minute = v;
        }
        if s.max_user_sockets == 0
            || s.max_pending_sockets == 0
            || s.max_pending_per_address == Some(0)
            || s.max_pending_per_project == Some(0)
            || s.auth_failures_per_minute == 0
        {
            return Err("socket caps and the auth failure rate must be at least 1".into());
        }
        if let Some(v) = self.min_free_space {
            s.min_free_space = v;
        }
        if let Some(v) = self.shutdown_grace {
            s.shutdown_grace = v;
        }
        if let Some(v) = self.template_fuel {
            s.template_fuel = v;
        }
        if let Some(v) = self.template_max_output {
            s.template_max_output = v;
        }
        if let Some(v) = self.delivery_concurrency {
            s.delivery_concurrency = v;
        }
        if let Some(v) = self.max_delivery_bytes {
            s.max_delivery_bytes = v;
        }
        if let Some(v) = self.max_run_bytes {
            s.max_run_bytes = v;
        }
        if let Some(v) = self.project_quota_bytes {
            s.project_quota_bytes = v;
        }
        if let Some(v) = self.project_inflight {
            s.project_inflight = v;
        }
        if let Some(v) = &self.secret_key_file {
            s.secret_key_file = Some(v.clone());
        }
        if let Some(v) = &self.egress_allow {
            s.egress_allow = v.clone();
        }
        if self.allow_private_destinations {
            s.allow_private_destinations = true;
        }
        if let Some(v) = self
            .sns_trusted_cert_host
            .as_ref()
            .filter(|v| !v.is_empty())
        {
            s.sns_trusted_cert_host = Some(v.clone());
        }
        if let Some(v) = self.retention {
            s.retention = v;
        }
        if let Some(v) = self.event_retry_horizon {
            s.event_retry_horizon = v;
        }
        if s.event_retry_horizon == 0 {
            return Err("event_retry_horizon must be at least 1 second".into());
        }
        if let Some(v) = self.lease_seconds {
            s.lease_seconds = v;
        }
        if let Some(v) = self.claim_poll_ms {
            s.claim_poll_ms = v;
        }
        if let Some(v) = self.channel_cooldown_ms {
            s.channel_cooldown_ms = v;
        }
        if s.channel_cooldown_ms < 10 {
            return Err("channel_cooldown_ms must be at least 10".into());
        }
        if let Some(v) = self.pg_max_connections {
            s.pg_max_connections = v;
        }
        if self.console_secure_cookies {
            s.console_secure_cookies = true;
        }
        if let Some(v) = self.console_idle_timeout {
            s.console_idle_timeout = v.max(1);
        }
        if s.pg_max_connections == 0 {
            return Err("pg_max_connections must be at least 1".into());
        }
        if s.lease_seconds == 0 || s.claim_poll_ms < 10 {
            return Err("lease_seconds must be at least 1 and claim_poll_ms at least 10".into());
        }
        s.egress_policy()?;
        s.check_bus()?;
        if s.admin_rate == 0 || s.user_rate == 0 {
            return Err("rates must be at least 1 request per second".into());
        }
        if s.template_fuel == 0 || s.template_max_output == 0 {
            return Err("template_fuel and template_max_output must be at least 1".into());
        }
        if s.project_inflight == 0 || s.delivery_concurrency == 0 {
            return Err("project_inflight and delivery_concurrency must be at least 1".into());
        }
        Ok(s)
    }
}

pub fn main() -> ExitCode {
    private_umask();
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => serve(*args),
        Command::Backup(args) => report(backup(args)),
        Command::Restore(args) => report(restore(args)),
        Command::Migrate(args) => report(migrate(args)),
        Command::Project { command } => crate::project_cmd::run(command),
        Command::Console { command } => crate::console_cmd::run(command),
    }
}

/// Everything this process creates is private to its owner (files 0600,
/// directories 0700): the data directory holds tenants' data, sled creates
/// its files with the process umask, and backups hold the same data. Set
/// before any thread starts, as umask is process-wide.
fn private_umask() {
    #[cfg(unix)]
    // SAFETY: umask only swaps the process's file mode mask; it cannot fail.
    unsafe {
        libc::umask(0o077);
    }
}

fn report(r: Result<String, String>) -> ExitCode {
    match r {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

/// `herald migrate`: applies the embedded schema migrations.
fn migrate(args: MigrateArgs) -> Result<String, String> {
    if !herald_engine::backend::is_postgres_url(&args.store) {
        return Err(format!(
            "--store must be a PostgreSQL URL (postgres://USER@HOST/DB), not {:?}: the embedded store needs no migration",
            args.store
        ));
    }
    let m = herald_engine::backend::migrate_postgres(&args.store).map_err(|e| e.message)?;
    Ok(if m.applied.is_empty() {
        format!("schema is current (version {})", m.version)
    } else {
        format!(
            "applied migrations {:?}; schema is at version {}",
            m.applied, m.version
        )
    })
}

/// `herald backup`: asks the server serving the data dir, if one runs (its
/// address and ops token are in `DATA_DIR/ops.json`), else opens the store
/// directly. The file is written beside its final name and renamed once its
/// checksum has been verified.
fn backup(args: BackupArgs) -> Result<String, String> {
    use herald_engine::backend::{backup_dir, verify_backup};
    let dir = args
        .data_dir
        .unwrap_or_else(|| Settings::default().data_dir);
    if !dir.is_dir() {
        return Err(format!("data directory {} does not exist", dir.display()));
    }
    let partial = partial_path(&args.to);
    let cleanup = |e: String| {
        let _ = std::fs::remove_file(&partial);
        e
    };
    let mut how = "the data directory";
    let mut done = false;
    if let Some((addr, token)) = crate::ops_access::read_ops_file(&dir) {
        match fetch_backup(&addr, &token, &partial) {
            Ok(()) => {
                done = true;
                how = "the running server";
            }
            // nobody listens there: a server that did not stop cleanly
            Err(FetchError::Unreachable(e)) => {
                eprintln!("note: no server answered at {e}; opening the data directory directly")
            }
            Err(FetchError::Failed(e)) => return Err(cleanup(e)),
        }
    }
    if !done {
        backup_dir(&dir, &partial).map_err(|e| {
            cleanup(if e.message.contains("in use by another Herald process") {
                format!(
                    "{}; no running server answered for it (is `{}` current?)",
                    e.message,
                    dir.join(crate::ops_access::OPS_FILE).display()
                )
            } else {
                e.message
            })
        })?;
    }
    let (header, summary) = verify_backup(&partial).map_err(|e| cleanup(e.message))?;
    std::fs::rename(&partial, &args.to)
        .map_err(|e| cleanup(format!("cannot write {}: {e}", args.to.display())))?;
    Ok(format!(
        "backup of {} written to {} from {how}: {} trees, {} entries, {} bytes, format version {}, checksum {:08x}",
        dir.display(),
        args.to.display(),
        summary.trees,
        summary.entries,
        summary.bytes,
        header.format_version,
        summary.checksum
    ))
}

fn partial_path(to: &std::path::Path) -> PathBuf {
    let mut name = to.file_name().map(|n| n.to_os_string()).unwrap_or_default();
    name.push(".partial");
    to.with_file_name(name)
}

use crate::ops_client::Error as FetchError;

/// Streams `GET /ops/v1/backup` from the server at `addr` into `to` (the server
/// sends a Content-Length).
fn fetch_backup(addr: &str, token: &str, to: &std::path::Path) -> Result<(), FetchError> {
    let a = crate::ops_client::request(addr, token, "GET", crate::ops_access::BACKUP_PATH, None)?;
    let failed =
        |e: std::io::Error| FetchError::Failed(format!("backup from the server at {addr}: {e}"));
    if a.status != 200 {
        let status = a.status;
        let message = a.refusal();
        return Err(FetchError::Failed(format!(
            "the server at {addr} refused the backup ({status}): {message}"
        )));
    }
    let length = a.length.ok_or_else(|| {
        FetchError::Failed(format!("the server at {addr} sent no Content-Length"))
    })?;
    let mut out = std::fs::File::create(to)
        .map_err(|e| FetchError::Failed(format!("cannot create {}: {e}", to.display())))?;
    // A backup holds the tenants' data: private, also when replacing a file.
    herald_engine::backend::make_private(to)
        .map_err(|e| FetchError::Failed(format!("cannot create {}: {e}", to.display())))?;
    let copied =
        std::io::copy(&mut std::io::Read::take(a.body, length), &mut out).map_err(failed)?;
    if copied != length {
        return Err(FetchError::Failed(format!(
            "the server at {addr} closed the connection after {copied} of {length} bytes"
        )));
    }
    out.sync_all().map_err(failed)?;
    Ok(())
}

/// `herald restore`: into an absent or empty directory only.
fn restore(args: RestoreArgs) -> Result<String, String> {
    let dir = args
        .data_dir
        .unwrap_or_else(|| Settings::default().data_dir);
    let (header, summary) =
        herald_engine::backend::restore(&args.from, &dir).map_err(|e| e.message)?;
    Ok(format!(
        "restored {} into {}: {} trees, {} entries, format version {} (backup made {} by Herald {}); channel secrets stay sealed: serve it with the original data directory's secret key file (copy its secret.key into {} or pass --secret-key-file)",
        args.from.display(),
        dir.display(),
        summary.trees,
        summary.entries,
        header.format_version,
        header.created_at,
        header.herald,
        dir.display()
    ))
}

/// The startup check: the data directory's filesystem must have at least
/// `min_free_space` available, so Herald does not start only to fill the disk.
fn check_free_space(settings: &Settings) -> Result<(), String> {
    let dir = &settings.data_dir;
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("cannot create data directory {}: {e}", dir.display()))?;
    let free = herald_engine::backend::available_space(dir)
        .map_err(|e| format!("cannot read the free space of {}: {e}", dir.display()))?;
    if free < settings.min_free_space {
        return Err(format!(
            "not enough free space for the data directory {}: {free} bytes available, at least {} required (--min-free-space / HERALD_MIN_FREE_SPACE); free some space or lower the setting",
            dir.display(),
            settings.min_free_space
        ));
    }
    Ok(())
}

fn serve(args: ServeArgs) -> ExitCode {
    let settings = match args.settings() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    crate::telemetry::init(&settings.log_format);
    let bootstrap = match (&args.bootstrap_public_key, &args.bootstrap_secret_key) {
        (Some(p), Some(s)) if !p.is_empty() && !s.is_empty() => {
            if !p.starts_with("pk_") || !s.starts_with("sk_") {
                eprintln!("error: bootstrap keys must start with pk_ and sk_");
                return ExitCode::from(2);
            }
            if let Err(why) = strong_secret_key(s) {
                eprintln!("error: HERALD_BOOTSTRAP_SECRET_KEY is too weak: {why}");
                return ExitCode::from(2);
            }
            Some((p.clone(), s.clone()))
        }
        (None, None) => None,
        _ => {
            eprintln!("error: set both HERALD_BOOTSTRAP_PUBLIC_KEY and HERALD_BOOTSTRAP_SECRET_KEY, or neither");
            return ExitCode::from(2);
        }
    };
    if settings.postgres_url().is_some() {
        // nothing of this process's state is on the local disk
    } else if let Err(e) = check_free_space(&settings) {
        crate::telemetry::last_words(&e);
        return ExitCode::from(1);
    }
    let workers = if settings.workers == 0 {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
    } else {
        settings.workers
    };
    // From the environment only, never a flag (a command line is visible to
    // every local user) nor `Settings`, whose Debug form would show it.
    let operator_token = match std::env::var("HERALD_OPERATOR_TOKEN") {
        Ok(t) if !t.is_empty() => {
            if let Err(why) = strong_token(&t) {
                eprintln!("error: HERALD_OPERATOR_TOKEN is too weak: {why}");
                return ExitCode::from(2);
            }
            Some(t)
        }
        _ => None,
    };
    let result = actix_web::rt::System::new().block_on(async move {
        let app = crate::startup::Application::build(settings, bootstrap, workers, operator_token)
            .await?;
        app.run_until_stopped().await
    });
    // Through the log queue (`eprintln!` panics on a full disk), and the
    // queue written out, for at most a second, before the process ends.
    let code = match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            crate::telemetry::stderr_line(&format!("error: {e}"));
            ExitCode::from(1)
        }
    };
    crate::telemetry::flush(std::time::Duration::from_secs(1));
    code
}

/// A bootstrap secret key must be as hard to guess as a generated one is meant to
/// be: at least 96 bits by a character-class estimate, over at least 24
/// characters after `sk_` (and an optional `test_`/`live_` mode tag), with at
/// least 8 different characters (`sk_aaaa…` is long and still guessable).
/// Generated keys carry 192 bits of hex.
pub fn strong_secret_key(key: &str) -> Result<(), String> {
    let body = key.strip_prefix("sk_").unwrap_or(key);
    let body = body
        .strip_prefix("test_")
        .or_else(|| body.strip_prefix("live_"))
        .unwrap_or(body);
    strong_token(body)
}

/// The strength rule of `strong_secret_key` for a whole token (the operator
/// token has no prefix): at least 24 characters, 8 different, about 96 bits.
pub fn strong_token(body: &str) -> Result<(), String> {
    let n = body.chars().count();
    if n < 24 {
        return Err(format!(
            "{n} characters (not counting a key prefix); use at least 24 random ones (e.g. `openssl rand -hex 24`)"
        ));
    }
    let distinct: std::collections::HashSet<char> = body.chars().collect();
    if distinct.len() < 8 {
        return Err(format!(
            "only {} different characters; use random ones (e.g. `openssl rand -hex 24`)",
            distinct.len()
        ));
    }
    let mut alphabet = 0u32;
    if body.chars().any(|c| c.is_ascii_digit()) {
        alphabet += 10;
    }
    if body.chars().any(|c| c.is_ascii_lowercase()) {
        alphabet += 26;
    }
    if body.chars().any(|c| c.is_ascii_uppercase()) {
        alphabet += 26;
    }
    if body.chars().any(|c| !c.is_ascii_alphanumeric()) {
        alphabet += 32;
    }
    let bits = n as f64 * f64::from(alphabet.max(2)).log2();
    if bits < 96.0 {
        return Err(format!(
            "about {bits:.0} bits; at least 96 are needed (e.g. `openssl rand -hex 24`)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::strong_secret_key;

    #[test]
    fn weak_bootstrap_secret_keys_are_refused() {
        for weak in [
            "sk_test_y",
            "sk_",
            "sk_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "sk_test_abababababababababababababab",
            "sk_12345678901234567890123",
        ] {
            assert!(strong_secret_key(weak).is_err(), "{weak} accepted");
        }
        for strong in [
            "sk_test_3f0c9a41d2b7e8c6a5f4e3d2c1b0a998",
            "sk_9a41c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3",
        ] {
            assert_eq!(strong_secret_key(strong), Ok(()), "{strong} refused");
        }
    }
}
