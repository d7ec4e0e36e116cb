//! Who may use the operator endpoints (`/ops/v1/…`, `herald backup`, `herald
//! project …` against a running server), and the `ops.json` file through which
//! the CLI finds a running server and its token. Shared by the server's startup,
//! its operator routes and the CLI, without any of them importing another.

use crate::errors::{ApiError, ApiResult};
use actix_web::HttpRequest;
use herald_engine::Error;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// Where `herald backup` asks a running server for a snapshot (loopback only,
/// with the ops token; not part of the public API).
pub const BACKUP_PATH: &str = "/ops/v1/backup";
/// The header carrying the ops token.
pub const OPS_TOKEN_HEADER: &str = "x-herald-ops-token";
/// The file in the data dir that tells `herald backup` how to reach this server.
pub const OPS_FILE: &str = "ops.json";

/// Operator endpoints' state: the ops token, the operator token, the write
/// gate and the one-backup-at-a-time lock.
pub struct Ops {
    /// The address the server is bound to (a request from it is local).
    addr: SocketAddr,
    /// Random per start, in `ops.json`: accepted from this machine only.
    pub(crate) token: String,
    /// `HERALD_OPERATOR_TOKEN`: accepted from any address.
    operator_token: Option<String>,
    /// Requests that may write hold it shared; a snapshot holds it exclusively.
    pub(crate) gate: tokio::sync::RwLock<()>,
    pub(crate) backup: tokio::sync::Mutex<()>,
}

impl Ops {
    pub fn new(addr: SocketAddr, operator_token: Option<String>) -> Ops {
        let bytes: [u8; 32] = rand::random();
        Ops {
            addr,
            token: bytes.iter().map(|b| format!("{b:02x}")).collect(),
            operator_token,
            gate: tokio::sync::RwLock::new(()),
            backup: tokio::sync::Mutex::new(()),
        }
    }

    /// Lets an operator request through: the `ops.json` token from this
    /// machine, or `HERALD_OPERATOR_TOKEN` from anywhere (both compared in
    /// constant time). Wrong tokens count against the client address's budget
    /// of failed authentications, like wrong API keys.
    pub fn authorize(&self, req: &HttpRequest, st: &crate::state::AppState) -> ApiResult<()> {
        use subtle::ConstantTimeEq;
        let ip = crate::auth::client_ip(req);
        if let Some(e) = ip.and_then(|ip| crate::auth::refused_address(st, ip)) {
            return Err(e);
        }
        let local = req
            .peer_addr()
            .map(|p| p.ip().is_loopback() || p.ip() == self.addr.ip())
            .unwrap_or(false);
        let given = req
            .headers()
            .get(OPS_TOKEN_HEADER)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let ops_ok =
            given.as_bytes().ct_eq(self.token.as_bytes()) & subtle::Choice::from(u8::from(local));
        let operator_ok = match &self.operator_token {
            Some(t) => given.as_bytes().ct_eq(t.as_bytes()),
            None => subtle::Choice::from(0),
        };
        if bool::from(ops_ok | operator_ok) {
            return Ok(());
        }
        let e = Error::unauthenticated("ops_token", "invalid_ops_token");
        if given.is_empty() {
            return Err(e.into());
        }
        Err(ApiError(crate::auth::charge(st, ip, e)))
    }
}

/// Writes `DATA_DIR/ops.json` (`{address, token, pid}`, mode 0600): the address
/// to reach this server on (loopback when bound to all interfaces) and the token.
pub fn write_ops_file(dir: &Path, addr: SocketAddr, token: &str) -> std::io::Result<PathBuf> {
    let mut reach = addr;
    if addr.ip().is_unspecified() {
        reach.set_ip(match addr {
            SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    let body = serde_json::json!({
        "address": reach.to_string(),
        "token": token,
        "pid": std::process::id(),
    })
    .to_string();
    let path = dir.join(OPS_FILE);
    let _ = std::fs::remove_file(&path);
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(&path)?;
    std::io::Write::write_all(&mut f, body.as_bytes())?;
    f.sync_all()?;
    Ok(path)
}

/// `(address, token)` from `DATA_DIR/ops.json`, when a server wrote one.
pub fn read_ops_file(dir: &std::path::Path) -> Option<(String, String)> {
    let text = std::fs::read_to_string(dir.join(OPS_FILE)).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some((
        v.get("address")?.as_str()?.to_string(),
        v.get("token")?.as_str()?.to_string(),
    ))
}
