//! Settings: defaults, then an optional TOML file (`--config`), then `HERALD_*`
//! environment variables, then command-line flags (clap merges the last two).

use serde::Deserialize;
use std::path::PathBuf;

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// Address to listen on; port 0 picks a free port.
    pub bind: String,
    /// Where the embedded store lives.
    pub data_dir: PathBuf,
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
    /// Ranges providers may send to although they are not public addresses
    /// (CIDRs or single addresses).
    pub egress_allow: Vec<String>,
    /// Turns the egress guard off: every destination is allowed.
    pub allow_private_destinations: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            bind: "127.0.0.1:8080".into(),
            data_dir: PathBuf::from("./herald-data"),
            admin_rate: 1000,
            user_rate: 50,
            log_format: "human".into(),
            engine_threads: 2,
            workers: 0,
            egress_allow: vec![],
            allow_private_destinations: false,
        }
    }
}

impl Settings {
    /// The egress policy these settings describe.
    pub fn egress_policy(&self) -> Result<herald_actors::egress::EgressPolicy, String> {
        Ok(herald_actors::egress::EgressPolicy {
            allow_private: self.allow_private_destinations,
            allow: herald_actors::egress::parse_allow(&self.egress_allow.join(","))?,
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
