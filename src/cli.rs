//! Command line: `herald serve` and `herald project create NAME`.

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
