//! Users, their preferences and their deletion on PostgreSQL. Changes of one
//! user are serialised by a transaction-scoped advisory lock on
//! `(project, external id)` (`PgStore::lock_users`), which also covers the
//! user that does not exist yet.

use super::{db_err, doc_of, doc_of_opt, to_doc, PgStore};
use crate::error::{Error, Result};
use crate::model::{Preferences, User, UserPatch, UserRef};
use crate::rules::users;
use crate::storage::{Page, PageReq, Upserted, UserRepo};
use sha2::{Digest, Sha256};
use sqlx::{PgConnection, Row};
use uuid::Uuid;

/// The advisory lock key of one entity: 64 bits of SHA-256 of its kind,
/// project and name (a collision only makes two changes wait for each other).
pub(crate) fn lock_key(kind: u8, project: &Uuid, name: &str) -> i64 {
    let mut h = Sha256::new();
    h.update([kind]);
    h.update(project.as_bytes());
    h.update(name.as_bytes());
    let d = h.finalize();
    i64::from_be_bytes(d[..8].try_into().expect("8 bytes"))
}

/// Takes transaction-scoped advisory locks in ascending order (so two
/// transactions locking overlapping sets cannot deadlock).
pub(crate) async fn lock_all(conn: &mut PgConnection, mut keys: Vec<i64>) -> sqlx::Result<()> {
    keys.sort_unstable();
    keys.dedup();
    for k in keys {
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(k)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

pub(crate) fn user_lock(project: &Uuid, ext: &str) -> i64 {
    lock_key(b'u', project, ext)
}

pub(crate) async fn user_by_ext_in(
    conn: &mut PgConnection, project: &Uuid, ext: &str,
) -> Result<Option<User>> {
    let row = sqlx::query("SELECT doc FROM users WHERE project = $1 AND external_id = $2")
        .bind(project)
        .bind(ext)
        .fetch_optional(conn)
        .await
        .map_err(db_err)?;
    row.map(|r| doc_of(&r, "doc")).transpose()
}

/// Writes a user's row (insert or replace).
pub(crate) async fn put_user(conn: &mut PgConnection, project: &Uuid, u: &User) -> Result<()> {
    sqlx::query(
        "INSERT INTO users (project, id, external_id, doc) VALUES ($1, $2, $3, $4)
         ON CONFLICT (project, id) DO UPDATE SET doc = EXCLUDED.doc",
    )
    .bind(project)
    .bind(u.id)
    .bind(&u.external_id)
    .bind(to_doc(u))
    .execute(conn)
    .await
    .map_err(db_err)?;
    Ok(())
}

/// Deletes users with their preferences, devices, subscriptions (the
/// topics' counts follow), feed entries, counts and events. Their
/// notifications and deliveries stay (retention and erasures remove them).
pub(super) async fn delete_in(conn: &mut PgConnection, project: &Uuid, ids: &[Uuid]) -> Result<()> {
    sqlx::query(
        "WITH gone AS (
             DELETE FROM subscriptions WHERE project = $1 AND user_id = ANY($2) RETURNING topic
         ), n AS (SELECT topic, count(*) AS c FROM gone GROUP BY topic)
         UPDATE topics t SET doc = jsonb_set(t.doc, '{subscribers_count}',
             to_jsonb(greatest((t.doc->>'subscribers_count')::bigint - n.c, 0)))
         FROM n WHERE t.project = $1 AND t.key = n.topic",
    )
    .bind(project)
    .bind(ids)
    .execute(&mut *conn)
    .await
    .map_err(db_err)?;
    for table in ["feed", "feed_state", "feed_events"] {
        sqlx::query(&format!(
            "DELETE FROM {table} WHERE project = $1 AND user_id = ANY($2)"
        ))
        .bind(project)
        .bind(ids)
        .execute(&mut *conn)
        .await
        .map_err(db_err)?;
    }
    sqlx::query("DELETE FROM users WHERE project = $1 AND id = ANY($2)")
        .bind(project)
        .bind(ids)
        .execute(&mut *conn)
        .await
        .map_err(db_err)?;
    Ok(())
}

impl PgStore {
    fn upsert_many(
        &self, project: &Uuid, items: &[(&str, &UserPatch)],
    ) -> Result<Vec<(User, bool)>> {
        let mut tx = self.begin()?;
        let out = self.block(async {
            lock_all(
                &mut tx,
                items.iter().map(|(e, _)| user_lock(project, e)).collect(),
            )
            .await
            .map_err(db_err)?;
            let mut stored = std::collections::HashMap::new();
            for (ext, _) in items {
                if !stored.contains_key(ext) {
                    stored.insert(*ext, user_by_ext_in(&mut tx, project, ext).await?);
                }
            }
            let mut out = Vec::with_capacity(items.len());
            for u in users::upsert_all(items, stored) {
                if u.before.as_ref() != Some(&u.after) {
                    put_user(&mut tx, project, &u.after).await?;
                }
                out.push((u.after, u.created));
            }
            Ok::<_, Error>(out)
        })?;
        self.commit(tx)?;
        Ok(out)
    }
}

impl UserRepo for PgStore {
    fn user_refs_by_ext(&self, project: &Uuid, exts: &[String]) -> Result<Vec<Option<UserRef>>> {
        // One statement for the whole list, not one per external id.
        let rows: Vec<(String, Uuid)> = self
            .block(
                sqlx::query_as(
                    "SELECT external_id, id FROM users WHERE project = $1 AND external_id = ANY($2)",
                )
                .bind(project)
                .bind(exts)
                .fetch_all(self.pool()),
            )
            .map_err(db_err)?;
        let ids: std::collections::HashMap<String, Uuid> = rows.into_iter().collect();
        Ok(exts
            .iter()
            .map(|e| {
                ids.get(e).map(|id| UserRef {
                    id: *id,
                    external_id: e.clone(),
                })
            })
            .collect())
    }

    /// Not cached on this backend (see the module doc).
    fn upsert_users(&self, project: &Uuid, items: &[(&str, &UserPatch)]) -> Result<Upserted> {
        self.upsert_many(project, items)
    }

    fn delete_users(&self, project: &Uuid, exts: &[String]) -> Result<Vec<bool>> {
        let mut tx = self.begin()?;
        let found = self.block(async {
            lock_all(
                &mut tx,
                exts.iter().map(|e| user_lock(project, e)).collect(),
            )
            .await
            .map_err(db_err)?;
            let mut found = Vec::with_capacity(exts.len());
            let mut ids = vec![];
            for ext in exts {
                let u = user_by_ext_in(&mut tx, project, ext).await?;
                if let Some(u) = &u {
                    ids.push(u.id);
                }
                found.push(u.is_some());
            }
            delete_in(&mut tx, project, &ids).await?;
            Ok::<_, Error>(found)
        })?;
        self.commit(tx)?;
        Ok(found)
    }

    fn preferences(&self, project: &Uuid, user: &Uuid) -> Result<Preferences> {
        let row = self
            .block(
                sqlx::query("SELECT doc FROM preferences WHERE project = $1 AND user_id = $2")
                    .bind(project)
                    .bind(user)
                    .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        Ok(row
            .map(|r| doc_of(&r, "doc"))
            .transpose()?
            .unwrap_or_default())
    }

    /// One statement for all of them: a topic chunk's staging read a user
    /// and their preferences one round trip each.
    fn users_with_preferences(
        &self, project: &Uuid, ids: &[Uuid],
    ) -> Result<Vec<(User, Preferences)>> {
        if ids.is_empty() {
            return Ok(vec![]);
        }
        let rows = self
            .block(
                sqlx::query(
                    // One primary-key probe per id, whatever the planner's
                    // statistics say: `OFFSET 0` keeps each lateral
                    // subquery from being flattened into a join, which, on
                    // a users table grown since it was last analysed (a
                    // bulk import, then a topic run), read and hashed every
                    // user of the project for each chunk of a topic.
                    "SELECT u.doc AS doc, p.doc AS prefs
                     FROM UNNEST($2::uuid[]) WITH ORDINALITY AS x (id, i)
                     CROSS JOIN LATERAL (SELECT doc FROM users
                                         WHERE project = $1 AND id = x.id OFFSET 0) u
                     LEFT JOIN LATERAL (SELECT doc FROM preferences
                                        WHERE project = $1 AND user_id = x.id OFFSET 0) p ON true
                     ORDER BY x.i",
                )
                .bind(project)
                .bind(ids)
                .fetch_all(self.pool()),
            )
            .map_err(db_err)?;
        rows.into_iter()
            .map(|r| {
                Ok((
                    doc_of(&r, "doc")?,
                    doc_of_opt(&r, "prefs")?.unwrap_or_default(),
                ))
            })
            .collect()
    }

    fn update_preferences(
        &self, project: &Uuid, user: &User, patch: &Preferences,
    ) -> Result<Preferences> {
        let mut tx = self.begin()?;
        let p = self.block(async {
            lock_all(&mut tx, vec![user_lock(project, &user.external_id)])
                .await
                .map_err(db_err)?;
            let row =
                sqlx::query("SELECT doc FROM preferences WHERE project = $1 AND user_id = $2")
                    .bind(project)
                    .bind(user.id)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(db_err)?;
            let mut p: Preferences = row
                .map(|r| doc_of(&r, "doc"))
                .transpose()?
                .unwrap_or_default();
            p.merge(patch);
            // A user deleted meanwhile has no row to hang preferences on: the
            // insert then stores nothing, as the deletion would have removed them.
            sqlx::query(
                "INSERT INTO preferences (project, user_id, doc)
                 SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM users WHERE project = $1 AND id = $2)
                 ON CONFLICT (project, user_id) DO UPDATE SET doc = EXCLUDED.doc",
            )
            .bind(project)
            .bind(user.id)
            .bind(to_doc(&p))
            .execute(&mut *tx)
            .await
            .map_err(db_err)?;
            Ok::<_, Error>(p)
        })?;
        self.commit(tx)?;
        Ok(p)
    }
}

/// Reads of the trait `RecordRepo` answers (`lookups.rs`).
impl PgStore {
    pub fn user_by_ext(&self, project: &Uuid, ext: &str) -> Result<Option<User>> {
        self.block(async {
            let mut conn = self.pool().acquire().await.map_err(db_err)?;
            user_by_ext_in(&mut conn, project, ext).await
        })
    }

    pub fn list_users(&self, project: &Uuid, req: &PageReq) -> Result<Page<User>> {
        let p = *project;
        self.page(
            &|q| {
                q.push("SELECT id, doc FROM users WHERE project = ");
                q.push_bind(p);
            },
            "id",
            req,
            &|r| Ok((r.get("id"), doc_of(&r, "doc")?)),
        )
    }
}
