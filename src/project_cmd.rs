//! `herald project create|list|show|rotate-secret|delete`. When a server holds
//! the data directory (its `ops.json` names an address that answers), the
//! command goes through that server's operator API (`routes::ops`), so adding
//! a tenant needs no downtime; otherwise it opens the store itself. Both ways
//! print the same thing. Exit codes: 0 done, 1 failed, 2 usage (clap's own,
//! and `delete` without `--yes`).

use crate::bodies::ops::Items;
use crate::configuration::Settings;
use clap::{Args, Subcommand};
use herald_engine::model::OperatorProject;
use herald_engine::Store;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// One project operation, whichever way it is carried out.
enum Op {
    Create(String),
    List,
    Show(String),
    Rotate(String, Duration),
    Delete(String),
}

/// A failed operation: the HTTP status it maps to (0: not an API error) and
/// what to say.
struct Failure {
    status: u16,
    message: String,
}

impl From<herald_engine::Error> for Failure {
    fn from(e: herald_engine::Error) -> Self {
        Failure {
            status: e.code.status(),
            message: e.message,
        }
    }
}

/// `--data-dir` of the `project` commands.
#[derive(Args, Debug)]
pub struct DataDir {
    /// Data directory (served or not).
    #[arg(long, env = "HERALD_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// The store, when it is PostgreSQL (postgres://USER@HOST/DB): the
    /// projects are changed in the database directly, served or not.
    #[arg(long, env = "HERALD_STORE")]
    pub store: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum ProjectCommand {
    /// Create a project and print its keys (the secret key is shown this once).
    Create {
        /// 1 to 100 letters, digits, '-', '_' or '.'.
        name: String,
        #[command(flatten)]
        dir: DataDir,
    },
    /// List projects: one line each, name and public key.
    List {
        #[command(flatten)]
        dir: DataDir,
    },
    /// Show a project (never its secret key).
    Show {
        name: String,
        #[command(flatten)]
        dir: DataDir,
    },
    /// Give a project a new secret key; the old one keeps working for the grace period.
    RotateSecret {
        name: String,
        /// How long the old secret key stays valid: seconds, or with a unit
        /// (90s, 30m, 24h, 7d); 0 refuses it at once; at most 30d.
        #[arg(long, default_value = "24h", value_parser = parse_grace)]
        grace: std::time::Duration,
        #[command(flatten)]
        dir: DataDir,
    },
    /// Delete a project and ALL its data (users, channels, flows, runs,
    /// notifications, feeds); needs --yes.
    Delete {
        name: String,
        /// Confirms the deletion.
        #[arg(long)]
        yes: bool,
        #[command(flatten)]
        dir: DataDir,
    },
}

enum Remote {
    /// Nothing answered at the address (a server that did not stop cleanly).
    Unreachable(String),
    /// The server answered, and the operation failed.
    Failed(Failure),
}

/// `--grace`: seconds, or a number with `s`, `m`, `h` or `d`; at most 30 days.
pub fn parse_grace(s: &str) -> Result<Duration, String> {
    let (n, unit) = crate::configuration::number_and_unit(s)
        .ok_or_else(|| format!("{s:?} is not a duration (e.g. 3600, 90s, 30m, 24h, 7d)"))?;
    let unit_secs = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("{s:?} has an unknown unit (use s, m, h or d)")),
    };
    let d = Duration::from_secs(n.saturating_mul(unit_secs));
    if d > herald_engine::backend::MAX_SECRET_GRACE {
        return Err(format!("{s:?} is longer than 30 days"));
    }
    Ok(d)
}

pub fn run(cmd: ProjectCommand) -> ExitCode {
    let (op, dir) = match cmd {
        ProjectCommand::Create { name, dir } => (Op::Create(name), dir),
        ProjectCommand::List { dir } => (Op::List, dir),
        ProjectCommand::Show { name, dir } => (Op::Show(name), dir),
        ProjectCommand::RotateSecret { name, grace, dir } => (Op::Rotate(name, grace), dir),
        ProjectCommand::Delete { name, yes, dir } => {
            if !yes {
                eprintln!(
                    "error: `herald project delete {name}` deletes the project and ALL its data (users, channels, flows, runs, notifications, feeds) and cannot be undone; add --yes to confirm"
                );
                return ExitCode::from(2);
            }
            (Op::Delete(name), dir)
        }
    };
    let result = match dir.store {
        Some(url) if herald_engine::backend::is_postgres_url(&url) => on_postgres(&op, &url),
        store => execute(
            &op,
            &store
                .map(PathBuf::from)
                .or(dir.data_dir)
                .unwrap_or_else(|| Settings::default().data_dir),
        ),
    };
    match result {
        Ok(v) => {
            print(&op, &v);
            ExitCode::SUCCESS
        }
        Err(f) => {
            eprintln!("error: {}", describe(&op, &f));
            ExitCode::from(1)
        }
    }
}

fn execute(op: &Op, dir: &Path) -> Result<Value, Failure> {
    if let Some((addr, token)) = crate::ops_access::read_ops_file(dir) {
        match remote(op, &addr, &token) {
            Ok(v) => return Ok(v),
            Err(Remote::Unreachable(e)) => {
                eprintln!("note: no server answered at {e}; opening the data directory directly")
            }
            Err(Remote::Failed(f)) => return Err(f),
        }
    }
    local(op, dir)
}

/// A path segment or query value, percent-encoded.
fn enc(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

fn remote(op: &Op, addr: &str, token: &str) -> Result<Value, Remote> {
    let base = "/ops/v1/projects";
    let (method, path, body) = match op {
        Op::Create(name) => ("POST", base.to_string(), Some(json!({ "name": name }))),
        Op::List => ("GET", base.to_string(), None),
        Op::Show(name) => ("GET", format!("{base}/{}", enc(name)), None),
        Op::Rotate(name, grace) => (
            "POST",
            format!("{base}/{}/rotate_secret", enc(name)),
            Some(json!({ "grace_seconds": grace.as_secs() })),
        ),
        Op::Delete(name) => (
            "DELETE",
            format!("{base}/{}?confirm={}", enc(name), enc(name)),
            None,
        ),
    };
    let (status, body) = http(addr, token, method, &path, body.as_ref())?;
    if (200..300).contains(&status) {
        return Ok(body);
    }
    let message = body
        .pointer("/error/message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| format!("status {status}"));
    let message = if status == 401 {
        format!("the server at {addr} refused the operator token from ops.json ({message})")
    } else {
        message
    };
    Err(Remote::Failed(Failure { status, message }))
}

/// One request to the server's operator API, the answer read whole.
fn http(
    addr: &str, token: &str, method: &str, path: &str, body: Option<&Value>,
) -> Result<(u16, Value), Remote> {
    let body = body.map(|b| b.to_string());
    let a = crate::ops_client::request(addr, token, method, path, body.as_deref()).map_err(
        |e| match e {
            crate::ops_client::Error::Unreachable(m) => Remote::Unreachable(m),
            crate::ops_client::Error::Failed(message) => {
                Remote::Failed(Failure { status: 0, message })
            }
        },
    )?;
    let status = a.status;
    let text = a.text(16 << 20).map_err(|e| {
        Remote::Failed(Failure {
            status: 0,
            message: format!("talking to the server at {addr}: {e}"),
        })
    })?;
    Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
}

/// The operation on the store itself (no server holds the directory).
fn local(op: &Op, dir: &Path) -> Result<Value, Failure> {
    if !matches!(op, Op::Create(_)) && !dir.is_dir() {
        return Err(Failure {
            status: 0,
            message: format!("data directory {} does not exist", dir.display()),
        });
    }
    // Without the secret key: nothing here reads or writes a channel secret
    // (a new project's in_app channel has none; a deletion removes sealed
    // values as they are), and `--secret-key-file` need not be given.
    let store = Store::open_without_key(dir).map_err(|e| {
        let mut f = Failure::from(e);
        if f.message.contains("in use by another Herald process") {
            f.message = format!(
                "{}; no running server answered for it (is `{}` current?)",
                f.message,
                dir.join(crate::ops_access::OPS_FILE).display()
            );
        }
        f
    })?;
    let v = apply(op, &store)?;
    store.flush()?;
    Ok(v)
}

/// The operation on a PostgreSQL store (served or not: the database is shared).
fn on_postgres(op: &Op, url: &str) -> Result<Value, Failure> {
    let store = herald_engine::backend::PgStore::open(url)?;
    let v = apply(op, &store);
    store.close();
    v
}

/// The operation through the storage interface, answered with the operator
/// API's bodies, so every path prints the same.
fn apply(op: &Op, store: &dyn herald_engine::storage::Storage) -> Result<Value, Failure> {
    let body = match op {
        Op::Create(name) => {
            let keys = store.create_project(name, None)?;
            let p = store
                .project_by_name(name)?
                .ok_or_else(|| herald_engine::Error::internal("project created but not found"))?;
            serde_json::to_value(OperatorProject::from(&p).with_secret(keys.secret_key))
        }
        Op::List => {
            let items: Vec<OperatorProject> = store
                .projects()?
                .iter()
                .map(OperatorProject::from)
                .collect();
            serde_json::to_value(Items { items })
        }
        Op::Show(name) => serde_json::to_value(OperatorProject::from(
            &store
                .project_by_name(name)?
                .ok_or_else(|| herald_engine::Error::not_found("project", name))?,
        )),
        Op::Rotate(name, grace) => {
            let (p, secret) = herald_engine::rules::projects::rotate_secret(
                store,
                name,
                *grace,
                &herald_engine::audit::Actor::Operator,
            )?;
            serde_json::to_value(OperatorProject::from(&p).with_secret(secret))
        }
        Op::Delete(name) => {
            store.delete_project(name)?;
            Ok(Value::Null)
        }
    };
    Ok(body.map_err(|e| herald_engine::Error::internal(e.to_string()))?)
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn print(op: &Op, v: &Value) {
    match op {
        // Exactly these two lines: scripts (and a test) read them.
        Op::Create(_) => {
            println!("public_key: {}", text(&v["public_key"]));
            println!("secret_key: {}", text(&v["secret_key"]));
        }
        Op::List => {
            let items = v["items"].as_array().cloned().unwrap_or_default();
            let width = items
                .iter()
                .map(|p| text(&p["name"]).chars().count())
                .max()
                .unwrap_or(0);
            for p in &items {
                println!("{:<width$}  {}", text(&p["name"]), text(&p["public_key"]));
            }
        }
        Op::Show(_) => {
            for k in [
                "name",
                "id",
                "public_key",
                "security_mode",
                "created_at",
                "secret_rotated_at",
                "previous_secret_expires_at",
            ] {
                if let Some(x) = v.get(k).filter(|x| !x.is_null()) {
                    println!("{k}: {}", text(x));
                }
            }
        }
        Op::Rotate(..) => {
            println!("secret_key: {}", text(&v["secret_key"]));
            match v.get("previous_secret_expires_at").filter(|x| !x.is_null()) {
                Some(t) => println!("previous_secret_expires_at: {}", text(t)),
                None => {
                    println!("previous_secret_expires_at: now (the previous secret key is refused)")
                }
            }
        }
        Op::Delete(name) => println!("deleted project {name} and all its data"),
    }
}

fn describe(op: &Op, f: &Failure) -> String {
    let name = match op {
        Op::Create(n) | Op::Show(n) | Op::Rotate(n, _) | Op::Delete(n) => n.as_str(),
        Op::List => "",
    };
    match f.status {
        // (an unknown route is a 404 too: a server without the operator API)
        404 if f.message == "project not found" => format!("no project named {name:?}"),
        409 => format!("a project named {name:?} already exists"),
        _ => f.message.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_grace;
    use std::time::Duration;

    #[test]
    fn grace_periods_parse() {
        assert_eq!(parse_grace("24h"), Ok(Duration::from_secs(86_400)));
        assert_eq!(parse_grace("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_grace("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_grace("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse_grace("0"), Ok(Duration::ZERO));
        assert_eq!(parse_grace("30d"), Ok(Duration::from_secs(30 * 86_400)));
        for bad in ["31d", "", "h", "1w", "-1h", "1.5h"] {
            assert!(parse_grace(bad).is_err(), "{bad:?}");
        }
    }
}
