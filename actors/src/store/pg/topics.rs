//! Topics and their subscriptions on PostgreSQL. A topic's row lock
//! (`SELECT … FOR UPDATE`) serialises the changes of its subscriber count;
//! a bulk subscription is one multi-row insert (`UNNEST`).

use super::users::{lock_all, lock_key};
use super::{db_err, doc_of, to_doc, PgStore};
use crate::error::{Error, Result};
use crate::model::{new_id, Subscription, Topic, User, UserRef};
use crate::rules::records;
use crate::storage::Refusal;
use crate::storage::TopicPatch;
use crate::storage::{Page, PageReq, SubscriberChunk, TopicRepo};
use sqlx::{PgConnection, Row};
use uuid::Uuid;

async fn topic_for_update(conn: &mut PgConnection, project: &Uuid, key: &str) -> Result<Topic> {
    let row = sqlx::query("SELECT doc FROM topics WHERE project = $1 AND key = $2 FOR UPDATE")
        .bind(project)
        .bind(key)
        .fetch_optional(conn)
        .await
        .map_err(db_err)?;
    match row {
        Some(r) => doc_of(&r, "doc"),
        None => Err(Refusal::missing("topic", key)),
    }
}

async fn put_topic_doc(conn: &mut PgConnection, project: &Uuid, t: &Topic) -> Result<()> {
    sqlx::query(
        "INSERT INTO topics (project, key, id, doc) VALUES ($1, $2, $3, $4)
         ON CONFLICT (project, key) DO UPDATE SET doc = EXCLUDED.doc",
    )
    .bind(project)
    .bind(&t.key)
    .bind(t.id)
    .bind(to_doc(t))
    .execute(conn)
    .await
    .map_err(db_err)?;
    Ok(())
}

/// Inserts the subscriptions of `users` not subscribed yet, in one
/// statement; the new ones.
async fn insert_subscriptions(
    conn: &mut PgConnection, project: &Uuid, key: &str, users: &[&UserRef],
) -> Result<Vec<Subscription>> {
    let subs: Vec<Subscription> = users
        .iter()
        .map(|u| {
            let (id, now) = new_id();
            Subscription {
                id,
                topic: key.to_string(),
                user_id: u.id,
                user_external_id: u.external_id.clone(),
                created_at: now,
            }
        })
        .collect();
    let ids: Vec<Uuid> = subs.iter().map(|s| s.id).collect();
    let uids: Vec<Uuid> = subs.iter().map(|s| s.user_id).collect();
    let docs: Vec<_> = subs.iter().map(to_doc).collect();
    let made: Vec<Uuid> = sqlx::query_scalar(
        "INSERT INTO subscriptions (project, id, topic, user_id, doc)
         SELECT $1, s.id, $2, s.user_id, s.doc
         FROM UNNEST($3::uuid[], $4::uuid[], $5::jsonb[]) AS s(id, user_id, doc)
         ON CONFLICT (project, user_id, topic) DO NOTHING
         RETURNING id",
    )
    .bind(project)
    .bind(key)
    .bind(&ids)
    .bind(&uids)
    .bind(&docs)
    .fetch_all(conn)
    .await
    .map_err(db_err)?;
    let made: std::collections::HashSet<Uuid> = made.into_iter().collect();
    Ok(subs.into_iter().filter(|s| made.contains(&s.id)).collect())
}

async fn set_count(
    conn: &mut PgConnection, project: &Uuid, t: &mut Topic, delta: i64,
) -> Result<()> {
    t.subscribers_count = (t.subscribers_count as i64 + delta).max(0) as u64;
    put_topic_doc(conn, project, t).await
}

impl PgStore {
    pub(super) fn subscriptions_page(
        &self, cond: &'static str, project: &Uuid, arg: Result<Uuid, String>, req: &PageReq,
    ) -> Result<Page<Subscription>> {
        let p = *project;
        self.page(
            &|q| {
                q.push("SELECT id, doc FROM subscriptions WHERE project = ");
                q.push_bind(p);
                q.push(format_args!(" AND {cond} = "));
                match &arg {
                    Ok(u) => q.push_bind(*u),
                    Err(s) => q.push_bind(s.clone()),
                };
            },
            "id",
            req,
            &|r| Ok((r.get("id"), doc_of(&r, "doc")?)),
        )
    }
}

impl TopicRepo for PgStore {
    fn put_topic(&self, project: &Uuid, key: &str, patch: TopicPatch) -> Result<(Topic, bool)> {
        let mut tx = self.begin()?;
        let out = self.block(async {
            // the topic that does not exist yet is locked by its key
            lock_all(&mut tx, vec![lock_key(b't', project, key)])
                .await
                .map_err(db_err)?;
            let (mut t, created) = match topic_for_update(&mut tx, project, key).await {
                Ok(t) => (t, false),
                Err(e) if e.code == crate::error::ErrorCode::NotFound => {
                    (records::new_topic(key), true)
                }
                Err(e) => return Err(e),
            };
            records::patch_topic(&mut t, patch, created);
            put_topic_doc(&mut tx, project, &t).await?;
            Ok((t, created))
        })?;
        self.commit(tx)?;
        Ok(out)
    }

    fn subscribe_many(
        &self, project: &Uuid, key: &str, users: &[UserRef],
    ) -> Result<(Topic, Vec<Subscription>)> {
        let mut seen = std::collections::HashSet::new();
        let users: Vec<&UserRef> = users.iter().filter(|u| seen.insert(u.id)).collect();
        let mut tx = self.begin()?;
        let out = self.block(async {
            let mut t = topic_for_update(&mut tx, project, key).await?;
            let made = insert_subscriptions(&mut tx, project, key, &users).await?;
            if !made.is_empty() {
                set_count(&mut tx, project, &mut t, made.len() as i64).await?;
            }
            Ok::<_, Error>((t, made))
        })?;
        self.commit(tx)?;
        Ok(out)
    }

    fn unsubscribe(&self, project: &Uuid, key: &str, user: &User) -> Result<()> {
        let mut tx = self.begin()?;
        self.block(async {
            let t = topic_for_update(&mut tx, project, key).await;
            let r = sqlx::query(
                "DELETE FROM subscriptions WHERE project = $1 AND topic = $2 AND user_id = $3",
            )
            .bind(project)
            .bind(key)
            .bind(user.id)
            .execute(&mut *tx)
            .await
            .map_err(db_err)?;
            if r.rows_affected() == 0 {
                return Err(Refusal::missing("subscription", key));
            }
            if let Ok(mut t) = t {
                set_count(&mut tx, project, &mut t, -1).await?;
            }
            Ok(())
        })?;
        self.commit(tx)
    }

    fn subscribed(&self, project: &Uuid, user: &Uuid, key: &str) -> Result<bool> {
        let row = self
            .block(
                sqlx::query(
                    "SELECT 1 FROM subscriptions WHERE project = $1 AND user_id = $2 AND topic = $3",
                )
                .bind(project)
                .bind(user)
                .bind(key)
                .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        Ok(row.is_some())
    }

    fn topic_subscribers_chunk(
        &self, project: &Uuid, chunk: SubscriberChunk<'_>,
    ) -> Result<Vec<(Uuid, Uuid)>> {
        let rows = self
            .block(
                // `id > $3` with the nil id for the first page, not `($3 IS
                // NULL OR id > $3)`: under the generic plan a prepared
                // statement gets after a few runs, the `OR` is no index
                // bound, and each page scanned the topic from its start.
                sqlx::query(
                    "SELECT id, user_id FROM subscriptions
                     WHERE project = $1 AND topic = $2 AND id > $3
                     ORDER BY id LIMIT $4",
                )
                .bind(project)
                .bind(chunk.topic)
                .bind(chunk.after.copied().unwrap_or_else(Uuid::nil))
                .bind(chunk.n as i64)
                .fetch_all(self.pool()),
            )
            .map_err(db_err)?;
        Ok(rows
            .into_iter()
            .map(|r| (r.get("id"), r.get("user_id")))
            .collect())
    }
}

/// Reads of the trait `RecordRepo` answers (`lookups.rs`).
impl PgStore {
    pub fn topic(&self, project: &Uuid, key: &str) -> Result<Option<Topic>> {
        let row = self
            .block(
                sqlx::query("SELECT doc FROM topics WHERE project = $1 AND key = $2")
                    .bind(project)
                    .bind(key)
                    .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        row.map(|r| doc_of(&r, "doc")).transpose()
    }

    pub fn list_topics(&self, project: &Uuid, req: &PageReq) -> Result<Page<Topic>> {
        let p = *project;
        self.page(
            &|q| {
                q.push("SELECT id, doc FROM topics WHERE project = ");
                q.push_bind(p);
            },
            "id",
            req,
            &|r| Ok((r.get("id"), doc_of(&r, "doc")?)),
        )
    }

    pub fn delete_topic(&self, project: &Uuid, key: &str) -> Result<()> {
        let r = self
            .block(
                sqlx::query("DELETE FROM topics WHERE project = $1 AND key = $2")
                    .bind(project)
                    .bind(key)
                    .execute(self.pool()),
            )
            .map_err(db_err)?;
        if r.rows_affected() == 0 {
            return Err(Refusal::missing("topic", key));
        }
        Ok(())
    }
}
