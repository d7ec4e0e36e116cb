//! Where the soak's server keeps its records (`--store sled|postgres`), and
//! how their size is read: the data dir's files for the embedded store; for
//! PostgreSQL, a fresh database of this run's own (`cluster::Database`,
//! dropped at the end) whose tables and indexes are summed. Both give the
//! soak one figure per interval and, at the end, a table of where the bytes
//! are (sled's key spaces, or PostgreSQL's tables).

use crate::cluster::Database;
use crate::load::num;
use crate::soak::{dir_bytes, spaces};
use serde_json::{json, Value};
use std::path::Path;

pub(crate) enum SoakStore {
    Sled,
    Postgres(Database),
}

/// What the end of a soak reads of the store: a row per key space or table,
/// the logical bytes in all, and the notifications still stored.
pub(crate) struct Spaces {
    pub(crate) rows: Value,
    pub(crate) logical: u64,
    pub(crate) notifications: u64,
}

/// The size of every table of the database with its indexes and TOAST.
const PG_BYTES: &str = "SELECT coalesce(sum(pg_total_relation_size(relid)), 0)::text
     FROM pg_stat_user_tables WHERE schemaname = 'public'";

impl SoakStore {
    /// `--store` (`sled`, the default, or `postgres`): for PostgreSQL, a fresh
    /// database on `HERALD_BENCH_PG` (as the cluster leg's).
    pub(crate) fn from_args() -> SoakStore {
        match crate::arg("--store").as_deref() {
            None | Some("sled") => SoakStore::Sled,
            Some("postgres" | "postgresql" | "pg") => {
                SoakStore::Postgres(Database::create().unwrap_or_else(|e| {
                    eprintln!("soak: --store postgres: {e}");
                    std::process::exit(2)
                }))
            }
            Some(other) => {
                eprintln!("soak: --store {other}: expected sled or postgres");
                std::process::exit(2)
            }
        }
    }

    pub(crate) fn name(&self) -> &'static str {
        match self {
            SoakStore::Sled => "sled",
            SoakStore::Postgres(_) => "postgresql",
        }
    }

    /// The server's `--store` argument (none: the data dir's sled).
    pub(crate) fn server_arg(&self) -> Option<&str> {
        match self {
            SoakStore::Sled => None,
            SoakStore::Postgres(db) => Some(&db.url),
        }
    }

    /// Bytes on disk and apparent bytes: the data dir's files, or the
    /// database's tables with their indexes (both figures the same).
    pub(crate) fn bytes(&self, dir: &Path) -> (u64, u64) {
        match self {
            SoakStore::Sled => dir_bytes(dir),
            SoakStore::Postgres(db) => {
                let b = db
                    .query(PG_BYTES)
                    .ok()
                    .and_then(|r| r.first().and_then(|s| s.parse().ok()))
                    .unwrap_or(0);
                (b, b)
            }
        }
    }

    /// Where the bytes are, read with the server stopped: sled's key spaces
    /// (`soak::spaces`), or per table its rows, their bytes as stored
    /// (`pg_column_size` of each row) and the table's size on disk with its
    /// indexes.
    pub(crate) fn spaces(&self, dir: &Path) -> Result<Spaces, String> {
        match self {
            SoakStore::Sled => spaces(dir).map(|(rows, logical, notifications, _)| Spaces {
                rows,
                logical,
                notifications,
            }),
            SoakStore::Postgres(db) => pg_spaces(db),
        }
    }

    /// Prints `spaces`' rows as a table: the store's names for the columns
    /// and the two byte figures each row holds.
    pub(crate) fn print(&self, rows: &Value) {
        print_spaces(matches!(self, SoakStore::Postgres(_)), rows)
    }

    /// The target on bytes per live notification (sled: the soak's data
    /// dir; PostgreSQL: tables and indexes).
    pub(crate) fn target_per_notification(&self) -> f64 {
        match self {
            SoakStore::Sled => 2500.0,
            SoakStore::Postgres(_) => 2000.0,
        }
    }
}

/// Per table of `db`: its rows, their bytes as stored (`pg_column_size` of
/// each row) and the table's size on disk with its indexes and TOAST.
pub(crate) fn pg_spaces(db: &Database) -> Result<Spaces, String> {
    let tables = db.query(
        "SELECT relname::text FROM pg_stat_user_tables
             WHERE schemaname = 'public' ORDER BY relname",
    )?;
    let mut rows = vec![];
    let (mut logical, mut disk_all, mut notifications) = (0u64, 0u64, 0u64);
    for t in &tables {
        let r = db.query(&format!(
            "SELECT count(*)::text || ' ' || coalesce(sum(pg_column_size(t.*)), 0)::text
                 || ' ' || pg_total_relation_size('{t}')::text FROM \"{t}\" t"
        ))?;
        let v: Vec<u64> = r
            .first()
            .map(|s| s.split(' ').filter_map(|x| x.parse().ok()).collect())
            .unwrap_or_default();
        let [n, bytes, disk] = v[..] else {
            return Err(format!("{t}: unexpected sizes {r:?}"));
        };
        if t == "notifications" {
            notifications = n;
        }
        logical += bytes;
        disk_all += disk;
        rows.push((t.clone(), n, bytes, disk));
    }
    let rows = rows
        .into_iter()
        .filter(|(_, n, _, disk)| *n > 0 || *disk > 64 * 1024)
        .map(|(t, n, bytes, disk)| {
            json!({"space": t, "records": n, "row_bytes": bytes, "disk_bytes": disk,
                       "bytes_per_record": num(disk as f64 / n.max(1) as f64),
                       "share": num(disk as f64 / disk_all.max(1) as f64)})
        })
        .collect();
    Ok(Spaces {
        rows: Value::Array(rows),
        logical,
        notifications,
    })
}

/// Per index of `db` over 64 KiB: its table, its name and its size, the
/// largest first.
pub(crate) fn pg_indexes(db: &Database) -> Result<Value, String> {
    let r = db.query(
        "SELECT relname::text || ' ' || indexrelname::text || ' ' || pg_relation_size(indexrelid)::text
         FROM pg_stat_user_indexes WHERE schemaname = 'public'
           AND pg_relation_size(indexrelid) > 65536
         ORDER BY pg_relation_size(indexrelid) DESC",
    )?;
    Ok(Value::Array(
        r.iter()
            .filter_map(|l| {
                let mut it = l.split(' ');
                let (t, i, b) = (it.next()?, it.next()?, it.next()?.parse::<u64>().ok()?);
                Some(json!({"table": t, "index": i, "bytes": b}))
            })
            .collect(),
    ))
}

/// Prints rows of `SoakStore::spaces` (of PostgreSQL's tables when `pg`).
pub(crate) fn print_spaces(pg: bool, rows: &Value) {
    let Some(a) = rows.as_array() else { return };
    let (labels, keys) = match pg {
        false => (
            [
                "key space",
                "records",
                "key bytes",
                "value bytes",
                "B/record",
            ],
            ["key_bytes", "value_bytes"],
        ),
        true => (
            ["table", "rows", "row bytes", "on disk", "B/row"],
            ["row_bytes", "disk_bytes"],
        ),
    };
    let [name, n, b1, b2, per] = labels;
    println!(
        "{name:<22} {n:>10} {b1:>12} {b2:>12} {per:>9} {:>6}",
        "share"
    );
    let u = |r: &Value, k: &str| r[k].as_u64().unwrap_or(0);
    for r in a {
        println!(
            "{:<22} {:>10} {:>12} {:>12} {:>9.0} {:>5.1}%",
            r["space"].as_str().unwrap_or(""),
            u(r, "records"),
            u(r, keys[0]),
            u(r, keys[1]),
            r["bytes_per_record"].as_f64().unwrap_or(0.0),
            r["share"].as_f64().unwrap_or(0.0) * 100.0
        );
    }
}
