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
    /// The key that seals channel secrets at rest; `None`: `DATA_DIR/secret.key`.
    pub secret_key_file: Option<PathBuf>,
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
            secret_key_file: None,
        }
    }
}

impl Settings {
    /// Where the secret key is read (or created on first start).
    pub fn secret_key_path(&self) -> PathBuf {
        self.secret_key_file.clone().unwrap_or_else(|| {
            self.data_dir
                .join(herald_actors::store::secrets::DEFAULT_KEY_FILE)
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
