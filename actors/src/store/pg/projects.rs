//! Projects, their API keys and the project `default` on PostgreSQL. A
//! project's deletion is one transaction: most tenant tables cascade from
//! its row, and the four a topic run writes per recipient (no foreign key,
//! migration 0005) are deleted by project id beside it.

use super::{db_err, doc_of, is_unique_violation, to_doc, PgStore};
use crate::error::{Error, Result};
use crate::model::{new_id, Channel, Project, Timestamp};
use crate::rules::projects::{check_project_name, hash_secret, random_key};
use crate::storage::Refusal;
use crate::storage::{Edit, NewProjectKeys, ProjectRef, ProjectRepo};
use sqlx::Row;
use uuid::Uuid;

impl PgStore {
    fn project_where(&self, cond: &str, arg: impl ToString) -> Result<Option<Project>> {
        let sql = format!("SELECT doc FROM projects WHERE {cond} = $1");
        let arg = arg.to_string();
        let row = self
            .block(sqlx::query(&sql).bind(arg).fetch_optional(self.pool()))
            .map_err(db_err)?;
        row.map(|r| doc_of(&r, "doc")).transpose()
    }

    /// Creates project `default` unless one was made before (a renamed one
    /// is still it); its keys when it was created now.
    pub fn ensure_default_project(
        &self, keys: Option<(String, String)>,
    ) -> Result<Option<NewProjectKeys>> {
        let marked: Option<Vec<u8>> = self
            .block(
                sqlx::query_scalar("SELECT value FROM meta WHERE key = 'default_project'")
                    .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        if let Some(id) = marked.and_then(|v| Uuid::from_slice(&v).ok()) {
            if self.project_where("id::text", id)?.is_some() {
                return Ok(None);
            }
        }
        let (existing, created) = match self.project_where("name", "default")? {
            Some(p) => (p, None),
            None => {
                let k = match self.create_project("default", keys) {
                    Ok(k) => Some(k),
                    // another process made it meanwhile
                    Err(e) if e.code == crate::error::ErrorCode::Conflict => None,
                    Err(e) => return Err(e),
                };
                let p = self
                    .project_where("name", "default")?
                    .ok_or_else(|| Error::internal("project default created but not found"))?;
                (p, k)
            }
        };
        self.block(
            sqlx::query(
                "INSERT INTO meta (key, value) VALUES ('default_project', $1)
                 ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
            )
            .bind(&existing.id.as_bytes()[..])
            .execute(self.pool()),
        )
        .map_err(db_err)?;
        Ok(created)
    }

    /// Writes a project's row (its name and key columns follow the record).
    async fn put_project(conn: &mut sqlx::PgConnection, p: &Project) -> sqlx::Result<()> {
        sqlx::query(
            "INSERT INTO projects (id, name, public_key, doc) VALUES ($1, $2, $3, $4)
             ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name,
                 public_key = EXCLUDED.public_key, doc = EXCLUDED.doc",
        )
        .bind(p.id)
        .bind(&p.name)
        .bind(&p.public_key)
        .bind(serde_json::to_value(p).unwrap_or_default())
        .execute(conn)
        .await
        .map(|_| ())
    }
}

impl ProjectRepo for PgStore {
    fn find_project(&self, by: ProjectRef<'_>) -> Result<Option<Project>> {
        match by {
            ProjectRef::Id(id) => self.project_where("id::text", id),
            ProjectRef::Name(name) => self.project_where("name", name),
            ProjectRef::ApiKey(key) => self.project_where("public_key", key),
        }
    }

    fn projects(&self) -> Result<Vec<Project>> {
        let rows = self
            .block(sqlx::query("SELECT doc FROM projects ORDER BY id").fetch_all(self.pool()))
            .map_err(db_err)?;
        rows.into_iter().map(|r| doc_of(&r, "doc")).collect()
    }

    fn create_project(&self, name: &str, keys: Option<(String, String)>) -> Result<NewProjectKeys> {
        check_project_name(name)?;
        let (public_key, secret_key) =
            keys.unwrap_or_else(|| (random_key("pk_"), random_key("sk_")));
        let (id, now) = new_id();
        let p = Project::new(id, name, &public_key, hash_secret(&secret_key), now);
        let (cid, cnow) = new_id();
        let in_app = Channel::builtin_in_app(cid, cnow);
        let channel_doc = to_doc(&in_app);
        let mut tx = self.begin()?;
        let res = self.block(async {
            let taken: Option<String> = sqlx::query_scalar(
                "SELECT name FROM projects WHERE name = $1 OR public_key = $2 LIMIT 1",
            )
            .bind(name)
            .bind(&public_key)
            .fetch_optional(&mut *tx)
            .await?;
            if let Some(n) = taken {
                return Ok(Some(n));
            }
            PgStore::put_project(&mut tx, &p).await?;
            sqlx::query("INSERT INTO channels (project, id, doc) VALUES ($1, $2, $3)")
                .bind(id)
                .bind(cid)
                .bind(channel_doc)
                .execute(&mut *tx)
                .await?;
            Ok(None)
        });
        match res {
            Ok(None) => {}
            Ok(Some(n)) if n == name => {
                return Err(Refusal::ProjectNameTaken(name.to_string()).err())
            }
            Ok(Some(_)) => return Err(Refusal::PublicKeyTaken.err()),
            Err(e) if is_unique_violation(&e) => {
                return Err(Refusal::ProjectNameTaken(name.to_string()).err())
            }
            Err(e) => return Err(db_err(e)),
        }
        match self.commit_raw(tx) {
            Ok(()) => Ok(NewProjectKeys {
                public_key,
                secret_key,
            }),
            Err(e) if is_unique_violation(&e) => {
                Err(Refusal::ProjectNameTaken(name.to_string()).err())
            }
            Err(e) => Err(db_err(e)),
        }
    }

    fn update_project(&self, id: &Uuid, f: Edit<'_, Project>) -> Result<Project> {
        let mut tx = self.begin()?;
        let row = self
            .block(
                sqlx::query("SELECT doc FROM projects WHERE id = $1 FOR UPDATE")
                    .bind(id)
                    .fetch_optional(&mut *tx),
            )
            .map_err(db_err)?;
        let mut p: Project = match row {
            Some(r) => doc_of(&r, "doc")?,
            None => return Err(Refusal::missing("project", id)),
        };
        f(&mut p);
        p.updated_at = Timestamp::now();
        match self.block(PgStore::put_project(&mut tx, &p)) {
            Ok(()) => {}
            Err(e) if is_unique_violation(&e) => {
                return Err(Refusal::ProjectNameTaken(p.name.clone()).err())
            }
            Err(e) => return Err(db_err(e)),
        }
        self.commit(tx)?;
        Ok(p)
    }

    fn delete_project(&self, name: &str) -> Result<Project> {
        let mut tx = self.begin()?;
        let row = self.block(async {
            let row = sqlx::query("DELETE FROM projects WHERE name = $1 RETURNING id, doc")
                .bind(name)
                .fetch_optional(&mut *tx)
                .await
                .map_err(db_err)?;
            // The tables a topic run writes per recipient have no foreign
            // key to `projects` (migrations 5 and 17); the rest cascade.
            if let Some(r) = &row {
                let id: Uuid = r.get("id");
                for table in [
                    "feed_events",
                    "feed_state",
                    "feed",
                    "deliveries",
                    "notifications",
                ] {
                    sqlx::query(&format!("DELETE FROM {table} WHERE project = $1"))
                        .bind(id)
                        .execute(&mut *tx)
                        .await
                        .map_err(db_err)?;
                }
            }
            Ok::<_, Error>(row)
        })?;
        self.commit(tx)?;
        let p: Project = match row {
            Some(r) => doc_of(&r, "doc")?,
            None => return Err(Refusal::missing("project", name)),
        };
        tracing::info!(project_id = %p.id, "project deleted");
        Ok(p)
    }
}
