//! Command line: `herald serve`, `herald project create NAME`, `herald backup`
//! and `herald restore`.

use crate::configuration::Settings;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "herald",
    version,
    about = "Self-hostable notification delivery service"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Start the service (creates project `default` on first start).
    Serve(ServeArgs),
    /// Manage projects (tenants).
    Project {
        #[command(subcommand)]
        command: ProjectCommand,
    },
    /// Write a consistent snapshot of a data directory to a file, whether or not
    /// a server is serving it (a running server is asked over loopback).
    Backup(BackupArgs),
    /// Restore a backup file into a new (absent or empty) data directory.
    Restore(RestoreArgs),
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

#[derive(Subcommand, Debug)]
pub enum ProjectCommand {
    /// Create a project and print its keys.
    Create {
        name: String,
        #[arg(long, env = "HERALD_DATA_DIR")]
        data_dir: Option<PathBuf>,
    },
}

#[derive(Args, Debug, Default)]
pub struct ServeArgs {
    /// TOML file with settings (overridden by env and flags).
    #[arg(long, env = "HERALD_CONFIG")]
    pub config: Option<PathBuf>,
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, env = "HERALD_BIND")]
    pub bind: Option<String>,
    /// Data directory of the embedded store.
    #[arg(long, env = "HERALD_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Admin API requests per second per project.
    #[arg(long, env = "HERALD_ADMIN_RATE")]
    pub admin_rate: Option<u32>,
    /// User API requests per second per user.
    #[arg(long, env = "HERALD_USER_RATE")]
    pub user_rate: Option<u32>,
    /// Log format: human or json.
    #[arg(long, env = "HERALD_LOG_FORMAT", value_parser = ["human", "json"])]
    pub log_format: Option<String>,
    /// Engine (actor) threads.
    #[arg(long, env = "HERALD_ENGINE_THREADS")]
    pub engine_threads: Option<usize>,
    /// HTTP worker threads (0 = one per core).
    #[arg(long, env = "HERALD_WORKERS")]
    pub workers: Option<usize>,
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
    /// egress guard off; for tests and closed networks).
    #[arg(long, env = "HERALD_ALLOW_PRIVATE_DESTINATIONS")]
    pub allow_private_destinations: bool,
    /// Public key of project `default` when it is created.
    #[arg(long, env = "HERALD_BOOTSTRAP_PUBLIC_KEY", hide_env_values = true)]
    pub bootstrap_public_key: Option<String>,
    /// Secret key of project `default` when it is created.
    #[arg(long, env = "HERALD_BOOTSTRAP_SECRET_KEY", hide_env_values = true)]
    pub bootstrap_secret_key: Option<String>,
}

impl ServeArgs {
    pub fn settings(&self) -> Result<Settings, String> {
        let mut s = Settings::from_file(self.config.as_deref())?;
        if let Some(v) = &self.bind {
            s.bind = v.clone();
        }
        if let Some(v) = &self.data_dir {
            s.data_dir = v.clone();
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
        if let Some(v) = &self.egress_allow {
            s.egress_allow = v.clone();
        }
        if self.allow_private_destinations {
            s.allow_private_destinations = true;
        }
        s.egress_policy()?;
        if s.admin_rate == 0 || s.user_rate == 0 {
            return Err("rates must be at least 1 request per second".into());
        }
        Ok(s)
    }
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => serve(args),
        Command::Backup(args) => report(backup(args)),
        Command::Restore(args) => report(restore(args)),
        Command::Project {
            command: ProjectCommand::Create { name, data_dir },
        } => {
            let dir = data_dir.unwrap_or_else(|| Settings::default().data_dir);
            match create_project(&dir, &name) {
                Ok((pk, sk)) => {
                    println!("public_key: {pk}");
                    println!("secret_key: {sk}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(1)
                }
            }
        }
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

/// `herald backup`: asks the server serving the data dir, if one runs (its
/// address and ops token are in `DATA_DIR/ops.json`), else opens the store
/// directly. The file is written beside its final name and renamed once its
/// checksum has been verified.
fn backup(args: BackupArgs) -> Result<String, String> {
    use herald_actors::store::backup;
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
    if let Some((addr, token)) = read_ops_file(&dir) {
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
        backup::backup_dir(&dir, &partial).map_err(|e| {
            cleanup(if e.message.contains("in use by another Herald process") {
                format!(
                    "{}; no running server answered for it (is `{}` current?)",
                    e.message,
                    dir.join(crate::startup::OPS_FILE).display()
                )
            } else {
                e.message
            })
        })?;
    }
    let (header, summary) = backup::verify_backup(&partial).map_err(|e| cleanup(e.message))?;
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

/// `(address, token)` from `DATA_DIR/ops.json`, when a server wrote one.
fn read_ops_file(dir: &std::path::Path) -> Option<(String, String)> {
    let text = std::fs::read_to_string(dir.join(crate::startup::OPS_FILE)).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some((
        v.get("address")?.as_str()?.to_string(),
        v.get("token")?.as_str()?.to_string(),
    ))
}

enum FetchError {
    /// Nothing answered at the address.
    Unreachable(String),
    /// Something answered, and the backup failed.
    Failed(String),
}

/// Streams `GET /ops/v1/backup` from the server at `addr` into `to` (plain
/// HTTP/1.1 over loopback; the server sends a Content-Length).
fn fetch_backup(addr: &str, token: &str, to: &std::path::Path) -> Result<(), FetchError> {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::{TcpStream, ToSocketAddrs};
    use std::time::Duration;
    let unreachable = |e: std::io::Error| FetchError::Unreachable(format!("{addr}: {e}"));
    let failed =
        |e: std::io::Error| FetchError::Failed(format!("backup from the server at {addr}: {e}"));
    let sa = addr
        .to_socket_addrs()
        .map_err(unreachable)?
        .next()
        .ok_or_else(|| FetchError::Unreachable(format!("{addr}: no address")))?;
    let mut conn = TcpStream::connect_timeout(&sa, Duration::from_secs(5)).map_err(unreachable)?;
    // The server takes the snapshot before it answers: allow for a large store.
    conn.set_read_timeout(Some(Duration::from_secs(3600)))
        .map_err(failed)?;
    write!(
        conn,
        "GET {} HTTP/1.1\r\nHost: {addr}\r\n{}: {token}\r\nConnection: close\r\n\r\n",
        crate::startup::BACKUP_PATH,
        crate::startup::OPS_TOKEN_HEADER
    )
    .map_err(failed)?;
    let mut r = BufReader::with_capacity(1 << 20, conn);
    let mut status_line = String::new();
    r.read_line(&mut status_line).map_err(failed)?;
    let status: u16 = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| {
            FetchError::Failed(format!("the server at {addr} answered {status_line:?}"))
        })?;
    let mut length: Option<u64> = None;
    loop {
        let mut line = String::new();
        r.read_line(&mut line).map_err(failed)?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.trim().eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().ok();
            }
        }
    }
    if status != 200 {
        let mut body = String::new();
        let _ = r.take(64 * 1024).read_to_string(&mut body);
        let message = serde_json::from_str::<serde_json::Value>(&body)
            .ok()
            .and_then(|v| {
                v.pointer("/error/message")
                    .and_then(|m| m.as_str())
                    .map(str::to_string)
            })
            .unwrap_or(body);
        return Err(FetchError::Failed(format!(
            "the server at {addr} refused the backup ({status}): {message}"
        )));
    }
    let length = length.ok_or_else(|| {
        FetchError::Failed(format!("the server at {addr} sent no Content-Length"))
    })?;
    let mut out = std::fs::File::create(to)
        .map_err(|e| FetchError::Failed(format!("cannot create {}: {e}", to.display())))?;
    let copied = std::io::copy(&mut r.take(length), &mut out).map_err(failed)?;
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
        herald_actors::store::backup::restore(&args.from, &dir).map_err(|e| e.message)?;
    Ok(format!(
        "restored {} into {}: {} trees, {} entries, format version {} (backup made {} by Herald {})",
        args.from.display(),
        dir.display(),
        summary.trees,
        summary.entries,
        header.format_version,
        header.created_at,
        header.herald
    ))
}

fn create_project(dir: &std::path::Path, name: &str) -> Result<(String, String), String> {
    let name = name.trim();
    if name.is_empty() || name.len() > 200 {
        return Err("a project name is 1 to 200 characters".into());
    }
    let store = herald_actors::Store::open(dir).map_err(|e| e.message)?;
    let keys = store.create_project(name, None).map_err(|e| {
        if e.code == herald_actors::ErrorCode::Conflict {
            format!("a project named {name:?} already exists")
        } else {
            e.message
        }
    })?;
    store.flush().map_err(|e| e.message)?;
    Ok((keys.public_key, keys.secret_key))
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
            Some((p.clone(), s.clone()))
        }
        (None, None) => None,
        _ => {
            eprintln!("error: set both HERALD_BOOTSTRAP_PUBLIC_KEY and HERALD_BOOTSTRAP_SECRET_KEY, or neither");
            return ExitCode::from(2);
        }
    };
    let workers = if settings.workers == 0 {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
    } else {
        settings.workers
    };
    let result = actix_web::rt::System::new().block_on(async move {
        let app = crate::startup::Application::build(settings, bootstrap, workers).await?;
        app.run_until_stopped().await
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
