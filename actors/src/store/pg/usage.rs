//! Each project's usage counter on PostgreSQL (`storage::UsageRepo`, see
//! `crate::quota`): a row of `project_usage` (migration 0006), changed by
//! one atomic statement, so every node of a cluster counts into it.

use super::{db_err, PgStore};
use crate::error::Result;
use crate::storage::UsageRepo;
use sqlx::PgConnection;
use uuid::Uuid;

/// Takes `bytes` off the project's counter in the caller's transaction
/// (the retention and erasure steps that removed what they counted).
pub(crate) async fn take_usage(conn: &mut PgConnection, project: &Uuid, bytes: u64) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    sqlx::query("UPDATE project_usage SET bytes = greatest(bytes - $2, 0) WHERE project = $1")
        .bind(project)
        .bind(bytes.min(i64::MAX as u64) as i64)
        .execute(conn)
        .await
        .map_err(db_err)?;
    Ok(())
}

impl UsageRepo for PgStore {
    fn usage_bytes(&self, project: &Uuid) -> Result<u64> {
        let n: Option<i64> = self
            .block(
                sqlx::query_scalar("SELECT bytes FROM project_usage WHERE project = $1")
                    .bind(project)
                    .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        Ok(n.unwrap_or(0).max(0) as u64)
    }

    /// One statement, its own transaction, after the write it counts: a
    /// run's commit does not hold the project's counter row (which every
    /// run of the project would then wait for) while it writes. A crash
    /// between the two leaves the counter low by that one write. A project
    /// deleted meanwhile has no row to make (the foreign key): nothing to
    /// count.
    fn add_usage(&self, project: &Uuid, delta: i64) -> Result<()> {
        if delta == 0 {
            return Ok(());
        }
        let r = self.block(
            sqlx::query(
                "INSERT INTO project_usage (project, bytes)
                 SELECT $1, greatest($2, 0) WHERE EXISTS (SELECT 1 FROM projects WHERE id = $1)
                 ON CONFLICT (project) DO UPDATE
                 SET bytes = greatest(project_usage.bytes + $2, 0)",
            )
            .bind(project)
            .bind(delta)
            .execute(self.pool()),
        );
        r.map(|_| ()).map_err(db_err)
    }
}
