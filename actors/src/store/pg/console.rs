//! Console members, sign-in links and sessions on PostgreSQL
//! (`storage::ConsoleRepo`): rows of `console_members`, `console_links` and
//! `console_sessions` (migration `console`). Links and sessions go with
//! their member by foreign key, members with their project; every node of a
//! cluster reads the same rows, so a session made on one is valid on all.

use super::{db_err, PgStore};
use crate::console::Role;
use crate::error::{Error, Result};
use crate::model::Timestamp;
use crate::storage::{ConsoleMember, ConsoleRepo, ConsoleSession, SignInLink};
use sqlx::postgres::PgRow;
use sqlx::Row;
use uuid::Uuid;

fn member(r: &PgRow) -> Result<ConsoleMember> {
    let role: String = r.get("role");
    Ok(ConsoleMember {
        project: r.get("project"),
        email: r.get("email"),
        role: Role::parse(&role, "role")
            .map_err(|_| Error::internal(format!("unknown console role {role:?}")))?,
        password_hash: r.get("password_hash"),
        created_at: Timestamp::from_millis(r.get("created_ms")),
    })
}

fn session(r: &PgRow) -> ConsoleSession {
    ConsoleSession {
        project: r.get("project"),
        hash: r.get("hash"),
        email: r.get("email"),
        csrf: r.get("csrf"),
        created_at: Timestamp::from_millis(r.get("created_ms")),
        last_seen: Timestamp::from_millis(r.get("last_seen_ms")),
    }
}

const MEMBER_COLS: &str = "project, email, role, password_hash, created_ms";

impl ConsoleRepo for PgStore {
    fn console_member(&self, project: &Uuid, email: &str) -> Result<Option<ConsoleMember>> {
        let row = self
            .block(
                sqlx::query(&format!(
                    "SELECT {MEMBER_COLS} FROM console_members WHERE project = $1 AND email = $2"
                ))
                .bind(project)
                .bind(email)
                .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        row.as_ref().map(member).transpose()
    }

    fn console_members(&self, project: &Uuid) -> Result<Vec<ConsoleMember>> {
        let rows = self
            .block(
                sqlx::query(&format!(
                    "SELECT {MEMBER_COLS} FROM console_members WHERE project = $1 ORDER BY email"
                ))
                .bind(project)
                .fetch_all(self.pool()),
            )
            .map_err(db_err)?;
        rows.iter().map(member).collect()
    }

    fn put_console_member(&self, m: &ConsoleMember, link: Option<&SignInLink>) -> Result<()> {
        let mut tx = self.begin()?;
        self.block(async {
            sqlx::query(
                "INSERT INTO console_members (project, email, role, password_hash, created_ms)
                 VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (project, email) DO UPDATE SET role = EXCLUDED.role",
            )
            .bind(m.project)
            .bind(&m.email)
            .bind(m.role.as_str())
            .bind(&m.password_hash)
            .bind(m.created_at.millis())
            .execute(&mut *tx)
            .await?;
            if let Some(l) = link {
                sqlx::query(
                    "INSERT INTO console_links (project, hash, email, expires_ms)
                     VALUES ($1, $2, $3, $4)",
                )
                .bind(l.project)
                .bind(&l.hash)
                .bind(&l.email)
                .bind(l.expires_at.millis())
                .execute(&mut *tx)
                .await?;
            }
            Ok::<_, sqlx::Error>(())
        })
        .map_err(db_err)?;
        self.commit(tx)
    }

    fn delete_console_member(&self, project: &Uuid, email: &str) -> Result<bool> {
        let r = self
            .block(
                sqlx::query("DELETE FROM console_members WHERE project = $1 AND email = $2")
                    .bind(project)
                    .bind(email)
                    .execute(self.pool()),
            )
            .map_err(db_err)?;
        Ok(r.rows_affected() > 0)
    }

    fn sign_in_link(&self, project: &Uuid, hash: &[u8]) -> Result<Option<SignInLink>> {
        let row = self
            .block(
                sqlx::query(
                    "SELECT project, hash, email, expires_ms FROM console_links
                     WHERE project = $1 AND hash = $2",
                )
                .bind(project)
                .bind(hash)
                .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        Ok(row.map(|r| SignInLink {
            project: r.get("project"),
            hash: r.get("hash"),
            email: r.get("email"),
            expires_at: Timestamp::from_millis(r.get("expires_ms")),
        }))
    }

    fn use_sign_in_link(
        &self, project: &Uuid, hash: &[u8], password_hash: &str, session: &ConsoleSession,
    ) -> Result<bool> {
        let mut tx = self.begin()?;
        let used = self
            .block(async {
                // The DELETE takes the link's row lock: of two uses at once,
                // one finds it gone.
                let email: Option<String> = sqlx::query_scalar(
                    "DELETE FROM console_links WHERE project = $1 AND hash = $2 RETURNING email",
                )
                .bind(project)
                .bind(hash)
                .fetch_optional(&mut *tx)
                .await?;
                let Some(email) = email else {
                    return Ok(false);
                };
                sqlx::query("DELETE FROM console_links WHERE project = $1 AND email = $2")
                    .bind(project)
                    .bind(&email)
                    .execute(&mut *tx)
                    .await?;
                let set = sqlx::query(
                    "UPDATE console_members SET password_hash = $3
                     WHERE project = $1 AND email = $2",
                )
                .bind(project)
                .bind(&email)
                .bind(password_hash)
                .execute(&mut *tx)
                .await?;
                if set.rows_affected() == 0 {
                    return Ok(false);
                }
                sqlx::query(
                    "INSERT INTO console_sessions
                       (project, hash, email, csrf, created_ms, last_seen_ms)
                     VALUES ($1, $2, $3, $4, $5, $6)",
                )
                .bind(session.project)
                .bind(&session.hash)
                .bind(&email)
                .bind(&session.csrf)
                .bind(session.created_at.millis())
                .bind(session.last_seen.millis())
                .execute(&mut *tx)
                .await?;
                Ok::<_, sqlx::Error>(true)
            })
            .map_err(db_err)?;
        self.commit(tx)?;
        Ok(used)
    }

    fn put_console_session(&self, s: &ConsoleSession) -> Result<()> {
        self.block(
            sqlx::query(
                "INSERT INTO console_sessions (project, hash, email, csrf, created_ms, last_seen_ms)
                 VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(s.project)
            .bind(&s.hash)
            .bind(&s.email)
            .bind(&s.csrf)
            .bind(s.created_at.millis())
            .bind(s.last_seen.millis())
            .execute(self.pool()),
        )
        .map_err(db_err)?;
        Ok(())
    }

    fn console_session(
        &self, project: &Uuid, hash: &[u8],
    ) -> Result<Option<(ConsoleSession, ConsoleMember)>> {
        let row = self
            .block(
                sqlx::query(
                    "SELECT s.project, s.hash, s.email, s.csrf, s.created_ms, s.last_seen_ms,
                            m.role, m.password_hash, m.created_ms AS member_created_ms
                     FROM console_sessions s
                     JOIN console_members m ON m.project = s.project AND m.email = s.email
                     WHERE s.project = $1 AND s.hash = $2",
                )
                .bind(project)
                .bind(hash)
                .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        let Some(r) = row else { return Ok(None) };
        let s = session(&r);
        let role: String = r.get("role");
        let m = ConsoleMember {
            project: s.project,
            email: s.email.clone(),
            role: Role::parse(&role, "role")
                .map_err(|_| Error::internal(format!("unknown console role {role:?}")))?,
            password_hash: r.get("password_hash"),
            created_at: Timestamp::from_millis(r.get("member_created_ms")),
        };
        Ok(Some((s, m)))
    }

    fn touch_console_session(&self, project: &Uuid, hash: &[u8], at: Timestamp) -> Result<()> {
        self.block(
            sqlx::query(
                "UPDATE console_sessions SET last_seen_ms = GREATEST(last_seen_ms, $3)
                 WHERE project = $1 AND hash = $2",
            )
            .bind(project)
            .bind(hash)
            .bind(at.millis())
            .execute(self.pool()),
        )
        .map_err(db_err)?;
        Ok(())
    }

    fn delete_console_session(&self, project: &Uuid, hash: &[u8]) -> Result<()> {
        self.block(
            sqlx::query("DELETE FROM console_sessions WHERE project = $1 AND hash = $2")
                .bind(project)
                .bind(hash)
                .execute(self.pool()),
        )
        .map_err(db_err)?;
        Ok(())
    }
}
