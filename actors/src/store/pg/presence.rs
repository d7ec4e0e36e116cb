//! Users' presence on PostgreSQL (`storage::PresenceRepo`): rows of
//! `presence_sockets`, `presence_nodes` and `last_seen` (migration 0011).
//! A node's socket rows count while its `presence_nodes` lease holds: the
//! node renews it with its other leases (`work.rs::renew_leases`), so a
//! node that dies stops counting once its lease expires, and its rows are
//! deleted by a later renewal of any node.

use super::{db_err, PgStore};
use crate::error::Result;
use crate::model::Timestamp;
use crate::storage::{PresenceRepo, PresenceWrite, StoredPresence};
use sqlx::Row;
use uuid::Uuid;

/// A write for a user deleted meanwhile breaks its foreign key: the user is
/// gone, so there is nothing to record.
fn gone_user(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .and_then(|d| d.code())
        .is_some_and(|c| c == "23503")
}

impl PgStore {
    /// Renews this node's presence lease until `until_ms`, and deletes the
    /// rows of nodes whose lease expired.
    pub(super) fn renew_presence(&self, now_ms: i64, until_ms: i64) -> Result<()> {
        let node = self.node();
        self.block(async {
            sqlx::query(
                "INSERT INTO presence_nodes (node, lease_until) VALUES ($1, $2)
                 ON CONFLICT (node) DO UPDATE SET lease_until = EXCLUDED.lease_until",
            )
            .bind(node)
            .bind(until_ms)
            .execute(self.pool())
            .await?;
            sqlx::query(
                "WITH dead AS (DELETE FROM presence_nodes WHERE lease_until <= $1 RETURNING node)
                 DELETE FROM presence_sockets WHERE node IN (SELECT node FROM dead)",
            )
            .bind(now_ms)
            .execute(self.pool())
            .await
        })
        .map_err(db_err)?;
        Ok(())
    }

    /// Forgets this node's sockets (at shutdown), so no other node need
    /// wait for its lease to expire.
    pub(super) fn drop_presence(&self) -> Result<()> {
        let node = self.node();
        self.block(async {
            sqlx::query("DELETE FROM presence_sockets WHERE node = $1")
                .bind(node)
                .execute(self.pool())
                .await?;
            sqlx::query("DELETE FROM presence_nodes WHERE node = $1")
                .bind(node)
                .execute(self.pool())
                .await
        })
        .map_err(db_err)?;
        Ok(())
    }

    /// Socket counts (`rows`, in key order) in one statement, for the users
    /// that exist; whether it went through.
    fn write_sockets(&self, rows: &[SocketsRow]) -> bool {
        let col = |f: fn(&SocketsRow) -> Uuid| -> Vec<Uuid> { rows.iter().map(f).collect() };
        let (ps, us, nodes) = (col(|r| r.0), col(|r| r.1), col(|r| r.2));
        let counts: Vec<i32> = rows.iter().map(|r| r.3).collect();
        let versions: Vec<i64> = rows.iter().map(|r| r.4).collect();
        let ats: Vec<i64> = rows.iter().map(|r| r.5).collect();
        let until = Timestamp::now().millis() + self.lease_ms();
        self.block(
            sqlx::query(
                "WITH x AS (
                   SELECT x.* FROM UNNEST($1::uuid[], $2::uuid[], $3::uuid[], $4::int[],
                                          $5::bigint[], $6::bigint[])
                     AS x (p, u, node, sockets, version, at)
                   JOIN users ON users.project = x.p AND users.id = x.u
                 ), n AS (
                   INSERT INTO presence_nodes (node, lease_until)
                   SELECT DISTINCT node, $7::bigint FROM x
                   ON CONFLICT (node) DO UPDATE
                     SET lease_until = GREATEST(presence_nodes.lease_until, EXCLUDED.lease_until)
                 ), seen AS (
                   INSERT INTO last_seen (project, user_id, at_ms)
                   SELECT p, u, max(at) FROM x GROUP BY p, u ORDER BY p, u
                   ON CONFLICT (project, user_id) DO UPDATE
                     SET at_ms = GREATEST(last_seen.at_ms, EXCLUDED.at_ms)
                 )
                 INSERT INTO presence_sockets (project, user_id, node, sockets, version)
                 SELECT p, u, node, sockets, version FROM x ORDER BY p, u, node
                 ON CONFLICT (project, user_id, node) DO UPDATE
                   SET sockets = EXCLUDED.sockets, version = EXCLUDED.version
                   WHERE presence_sockets.version < EXCLUDED.version",
            )
            .bind(&ps)
            .bind(&us)
            .bind(&nodes)
            .bind(&counts)
            .bind(&versions)
            .bind(&ats)
            .bind(until)
            .execute(self.pool()),
        )
        .is_ok()
    }

    /// Users seen (`rows`, in key order) in one statement, for the users
    /// that exist; whether it went through.
    fn write_seen(&self, rows: &[SeenRow]) -> bool {
        let ps: Vec<Uuid> = rows.iter().map(|r| r.0).collect();
        let us: Vec<Uuid> = rows.iter().map(|r| r.1).collect();
        let ats: Vec<i64> = rows.iter().map(|r| r.2).collect();
        self.block(
            sqlx::query(
                "INSERT INTO last_seen (project, user_id, at_ms)
                 SELECT x.p, x.u, max(x.at)
                 FROM UNNEST($1::uuid[], $2::uuid[], $3::bigint[]) AS x (p, u, at)
                 JOIN users ON users.project = x.p AND users.id = x.u
                 GROUP BY x.p, x.u ORDER BY x.p, x.u
                 ON CONFLICT (project, user_id) DO UPDATE
                   SET at_ms = GREATEST(last_seen.at_ms, EXCLUDED.at_ms)",
            )
            .bind(&ps)
            .bind(&us)
            .bind(&ats)
            .execute(self.pool()),
        )
        .is_ok()
    }
}

/// A socket-count write as bound: project, user, node, sockets, version,
/// seen at (milliseconds).
type SocketsRow = (Uuid, Uuid, Uuid, i32, i64, i64);

/// A user seen, as bound: project, user, at (milliseconds).
type SeenRow = (Uuid, Uuid, i64);

impl PresenceRepo for PgStore {
    fn set_presence(&self, project: &Uuid, user: &Uuid, w: PresenceWrite) -> Result<()> {
        let res = match w {
            PresenceWrite::Sockets {
                node,
                sockets,
                version,
                at,
            } => {
                let until = Timestamp::now().millis() + self.lease_ms();
                self.block(
                    sqlx::query(
                        "WITH n AS (
                           INSERT INTO presence_nodes (node, lease_until) VALUES ($3, $6)
                           ON CONFLICT (node) DO UPDATE
                             SET lease_until = GREATEST(presence_nodes.lease_until, EXCLUDED.lease_until)
                         ), seen AS (
                           INSERT INTO last_seen (project, user_id, at_ms)
                           SELECT $1, $2, $7 WHERE EXISTS
                             (SELECT 1 FROM users WHERE project = $1 AND id = $2)
                           ON CONFLICT (project, user_id) DO UPDATE
                             SET at_ms = GREATEST(last_seen.at_ms, EXCLUDED.at_ms)
                         )
                         INSERT INTO presence_sockets (project, user_id, node, sockets, version)
                         SELECT $1, $2, $3, $4, $5 WHERE EXISTS
                           (SELECT 1 FROM users WHERE project = $1 AND id = $2)
                         ON CONFLICT (project, user_id, node) DO UPDATE
                           SET sockets = EXCLUDED.sockets, version = EXCLUDED.version
                           WHERE presence_sockets.version < EXCLUDED.version",
                    )
                    .bind(project)
                    .bind(user)
                    .bind(node)
                    .bind(sockets as i32)
                    .bind(version as i64)
                    .bind(until)
                    .bind(at.millis())
                    .execute(self.pool()),
                )
            }
            PresenceWrite::Seen { at } => self.block(
                sqlx::query(
                    "INSERT INTO last_seen (project, user_id, at_ms)
                     SELECT $1, $2, $3 WHERE EXISTS
                       (SELECT 1 FROM users WHERE project = $1 AND id = $2)
                     ON CONFLICT (project, user_id) DO UPDATE
                       SET at_ms = GREATEST(last_seen.at_ms, EXCLUDED.at_ms)",
                )
                .bind(project)
                .bind(user)
                .bind(at.millis())
                .execute(self.pool()),
            ),
        };
        match res {
            Ok(_) => Ok(()),
            Err(e) if gone_user(&e) => Ok(()),
            Err(e) => Err(db_err(e)),
        }
    }

    /// The socket counts in one statement and the users seen in another (a
    /// node's connection storm or mass disconnect is then a few statements,
    /// not one per socket); the rows are written in key order, so two
    /// nodes' batches cannot deadlock. A batch that fails (a user deleted
    /// meanwhile breaks its foreign key) goes one by one.
    fn set_presences(&self, writes: &[(Uuid, Uuid, PresenceWrite)]) -> Result<()> {
        let mut rows: Vec<SocketsRow> = writes
            .iter()
            .filter_map(|(p, u, w)| match w {
                PresenceWrite::Sockets {
                    node,
                    sockets,
                    version,
                    at,
                } => Some((*p, *u, *node, *sockets as i32, *version as i64, at.millis())),
                PresenceWrite::Seen { .. } => None,
            })
            .collect();
        rows.sort_by_key(|r| (r.0, r.1, r.2));
        let sockets_done = rows.len() > 1 && self.write_sockets(&rows);
        let mut seen: Vec<SeenRow> = writes
            .iter()
            .filter_map(|(p, u, w)| match w {
                PresenceWrite::Seen { at } => Some((*p, *u, at.millis())),
                PresenceWrite::Sockets { .. } => None,
            })
            .collect();
        seen.sort();
        let seen_done = seen.len() > 1 && self.write_seen(&seen);
        crate::storage::set_presence_each(
            self,
            writes.iter().filter(|(_, _, w)| match w {
                PresenceWrite::Sockets { .. } => !sockets_done,
                PresenceWrite::Seen { .. } => !seen_done,
            }),
        )
    }

    fn presence(&self, project: &Uuid, user: &Uuid) -> Result<StoredPresence> {
        let row = self
            .block(
                sqlx::query(
                    "SELECT EXISTS (
                       SELECT 1 FROM presence_sockets s JOIN presence_nodes n ON n.node = s.node
                       WHERE s.project = $1 AND s.user_id = $2 AND s.sockets > 0
                         AND n.lease_until > $3) AS online,
                     (SELECT at_ms FROM last_seen WHERE project = $1 AND user_id = $2) AS at_ms",
                )
                .bind(project)
                .bind(user)
                .bind(Timestamp::now().millis())
                .fetch_one(self.pool()),
            )
            .map_err(db_err)?;
        Ok(StoredPresence {
            online: row.get("online"),
            last_seen_at: row
                .get::<Option<i64>, _>("at_ms")
                .map(Timestamp::from_millis),
        })
    }
}
