//! `herald console add-member EMAIL --project NAME --role ROLE`: adds a
//! console member (or gives an existing one a role and a fresh link) and
//! prints their one-time sign-in link, valid for 24 hours. Like `herald
//! project …`, it goes through a running server's operator API when one
//! holds the data directory, else it opens the store itself (a PostgreSQL
//! `--store` is changed directly, served or not). Exit codes: 0 done, 1
//! failed, 2 usage.

use crate::configuration::Settings;
use crate::project_cmd::DataDir;
use clap::Subcommand;
use herald_engine::console::{self, Role};
use herald_engine::Store;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Subcommand, Debug)]
pub enum ConsoleCommand {
    /// Add a console member to a project (or reset an existing member's
    /// password and set their role) and print their one-time sign-in link.
    AddMember {
        /// Their email address (what they sign in with).
        email: String,
        /// The project's name.
        #[arg(long)]
        project: String,
        /// owner (everything), editor (configuration) or viewer (reads only).
        #[arg(long, value_parser = ["owner", "editor", "viewer"])]
        role: String,
        /// Where the console is reached (https://herald.example.com): the
        /// link starts with it [default: the running server's --public-url
        /// or address; with no server, http://127.0.0.1:8080].
        #[arg(long, env = "HERALD_PUBLIC_URL")]
        public_url: Option<String>,
        /// How long the link works, in seconds (tests shorten it).
        #[arg(long, hide = true, default_value_t = console::LINK_TTL.as_secs())]
        valid_for: u64,
        #[command(flatten)]
        dir: DataDir,
    },
}

/// What the member and the link came out as, whichever way.
struct Added {
    email: String,
    role: String,
    project: String,
    token: String,
    /// The server's own start of links (`None`: done on the store).
    base: Option<String>,
}

pub fn run(cmd: ConsoleCommand) -> ExitCode {
    let ConsoleCommand::AddMember {
        email,
        project,
        role,
        public_url,
        valid_for,
        dir,
    } = cmd;
    let role = match Role::parse(&role, "role") {
        Ok(r) => r,
        Err(_) => return ExitCode::from(2),
    };
    let ttl = Duration::from_secs(valid_for.max(1));
    let result = match dir.store {
        Some(url) if herald_engine::backend::is_postgres_url(&url) => {
            herald_engine::backend::PgStore::open(&url)
                .and_then(|s| {
                    let r = locally(&s, &project, &email, role, ttl);
                    s.close();
                    r
                })
                .map_err(|e| describe(e, &project))
        }
        store => execute(
            &project,
            &email,
            role,
            ttl,
            &store
                .map(PathBuf::from)
                .or(dir.data_dir)
                .unwrap_or_else(|| Settings::default().data_dir),
        ),
    };
    match result {
        Ok(a) => {
            let base = public_url
                .filter(|u| !u.is_empty())
                .or(a.base)
                .unwrap_or_else(|| format!("http://{}", Settings::default().bind));
            let base = base.trim_end_matches('/');
            // Scripts (and the tests) read these lines.
            println!("member: {} ({}) in project {}", a.email, a.role, a.project);
            println!("sign_in_link: {base}/console/invite/{}", a.token);
            println!("The link works once, until it expires.");
            ExitCode::SUCCESS
        }
        Err(m) => {
            eprintln!("error: {m}");
            ExitCode::from(1)
        }
    }
}

fn locally(
    s: &dyn herald_engine::Storage, project: &str, email: &str, role: Role, ttl: Duration,
) -> herald_engine::Result<Added> {
    let inv = console::add_member(s, project, email, role, ttl)?;
    console::audit_member_change(
        s,
        &inv.project.id,
        &herald_engine::audit::Actor::Operator,
        &inv.member.email,
        None,
        Some(&inv.member),
    );
    Ok(Added {
        email: inv.member.email,
        role: inv.member.role.as_str().into(),
        project: inv.project.name,
        token: inv.token,
        base: None,
    })
}

fn describe(e: herald_engine::Error, project: &str) -> String {
    if e.code == herald_engine::ErrorCode::NotFound {
        format!("no project named {project:?}")
    } else {
        e.message
    }
}

fn execute(
    project: &str, email: &str, role: Role, ttl: Duration, dir: &Path,
) -> Result<Added, String> {
    if let Some((addr, token)) = crate::ops_access::read_ops_file(dir) {
        match remote(project, email, role, ttl, &addr, &token) {
            Ok(a) => return Ok(a),
            Err(None) => {
                eprintln!("note: no server answered at {addr}; opening the data directory directly")
            }
            Err(Some(m)) => return Err(m),
        }
    }
    if !dir.is_dir() {
        return Err(format!("data directory {} does not exist", dir.display()));
    }
    let store = Store::open_without_key(dir).map_err(|e| e.message)?;
    let a = locally(&store, project, email, role, ttl).map_err(|e| describe(e, project))?;
    store.flush().map_err(|e| e.message)?;
    Ok(a)
}

/// Through the operator API; `Err(None)` when nothing answered.
fn remote(
    project: &str, email: &str, role: Role, ttl: Duration, addr: &str, token: &str,
) -> Result<Added, Option<String>> {
    let path = format!(
        "/ops/v1/projects/{}/console_members",
        percent_encoding::utf8_percent_encode(project, percent_encoding::NON_ALPHANUMERIC)
    );
    let body = json!({ "email": email, "role": role.as_str(), "valid_for_seconds": ttl.as_secs() })
        .to_string();
    let a = crate::ops_client::request(addr, token, "POST", &path, Some(&body)).map_err(
        |e| match e {
            crate::ops_client::Error::Unreachable(_) => None,
            crate::ops_client::Error::Failed(m) => Some(m),
        },
    )?;
    let status = a.status;
    let text = a
        .text(1 << 20)
        .map_err(|e| Some(format!("talking to the server at {addr}: {e}")))?;
    let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    if !(200..300).contains(&status) {
        let m = v
            .pointer("/error/message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("status {status}"));
        return Err(Some(match status {
            404 if m == "project not found" => format!("no project named {project:?}"),
            401 => format!("the server at {addr} refused the operator token from ops.json ({m})"),
            _ => m,
        }));
    }
    let s = |k: &str| v[k].as_str().unwrap_or_default().to_string();
    Ok(Added {
        email: s("email"),
        role: s("role"),
        project: s("project"),
        token: s("token"),
        base: Some(s("public_url")).filter(|b| !b.is_empty()),
    })
}
