//! Channels, flows, push subscriptions and idempotent responses on
//! PostgreSQL. A channel's configuration is kept as its JSON, secrets
//! included: on this backend, secrets at rest are the database's to protect
//! (disk encryption, access control), not sealed by Herald.

use super::events::Outbound;
use super::users::{lock_all, lock_key};
use super::{db_err, doc_of, is_unique_violation, to_doc, PgStore};
use crate::error::{Error, Result};
use crate::events::EventType;
use crate::model::{Channel, ChannelHealth, Flow, FlowStatus, Timestamp};
use crate::storage::{
    Change, ChannelRepo, FlowRepo, IdempotencyRepo, IdempotentResponse, Page, PageReq, PushRepo,
    PushSubscription,
};
use crate::storage::{FlowRef, PushKey, Refusal};
use sqlx::Row;
use uuid::Uuid;

/// How long an idempotent response is replayed.
pub(super) const IDEMPOTENCY_TTL_MS: i64 = 24 * 3600 * 1000;

impl PgStore {
    fn docs<T: serde::de::DeserializeOwned>(&self, sql: &str, project: &Uuid) -> Result<Vec<T>> {
        let rows = self
            .block(sqlx::query(sql).bind(project).fetch_all(self.pool()))
            .map_err(db_err)?;
        rows.into_iter().map(|r| doc_of(&r, "doc")).collect()
    }

    pub(super) fn doc_by_id<T: serde::de::DeserializeOwned>(
        &self, table: &str, project: &Uuid, id: &Uuid,
    ) -> Result<Option<T>> {
        let sql = format!("SELECT doc FROM {table} WHERE project = $1 AND id = $2");
        let row = self
            .block(
                sqlx::query(&sql)
                    .bind(project)
                    .bind(id)
                    .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        row.map(|r| doc_of(&r, "doc")).transpose()
    }

    /// Changes one record of `table` under its row lock; 404 when absent.
    fn update_doc<T>(
        &self, table: &str, what: &'static str, project: &Uuid, id: &Uuid, f: Change<'_, T>,
        touch: fn(&mut T),
    ) -> Result<T>
    where
        T: serde::Serialize + serde::de::DeserializeOwned,
    {
        let mut tx = self.begin()?;
        let sql = format!("SELECT doc FROM {table} WHERE project = $1 AND id = $2 FOR UPDATE");
        let row = self
            .block(
                sqlx::query(&sql)
                    .bind(project)
                    .bind(id)
                    .fetch_optional(&mut *tx),
            )
            .map_err(db_err)?;
        let mut v: T = match row {
            Some(r) => doc_of(&r, "doc")?,
            None => return Err(Refusal::missing(what, id)),
        };
        f(&mut v)?;
        touch(&mut v);
        let sql = format!("UPDATE {table} SET doc = $3 WHERE project = $1 AND id = $2");
        self.block(
            sqlx::query(&sql)
                .bind(project)
                .bind(id)
                .bind(to_doc(&v))
                .execute(&mut *tx),
        )
        .map_err(db_err)?;
        self.commit(tx)?;
        Ok(v)
    }

    pub(super) fn page_docs<T: serde::de::DeserializeOwned>(
        &self, table: &'static str, project: &Uuid, req: &PageReq,
    ) -> Result<Page<T>> {
        let p = *project;
        self.page(
            &|q| {
                q.push(format_args!("SELECT id, doc FROM {table} WHERE project = "));
                q.push_bind(p);
            },
            "id",
            req,
            &|r| Ok((r.get("id"), doc_of(&r, "doc")?)),
        )
    }
}

impl ChannelRepo for PgStore {
    fn put_channel(&self, project: &Uuid, c: &Channel) -> Result<()> {
        self.block(
            sqlx::query(
                "INSERT INTO channels (project, id, doc) VALUES ($1, $2, $3)
                 ON CONFLICT (project, id) DO UPDATE SET doc = EXCLUDED.doc",
            )
            .bind(project)
            .bind(c.id)
            .bind(to_doc(c))
            .execute(self.pool()),
        )
        .map_err(db_err)?;
        Ok(())
    }

    fn update_channel(&self, project: &Uuid, id: &Uuid, f: Change<'_, Channel>) -> Result<Channel> {
        self.update_doc("channels", "channel", project, id, f, |c| {
            c.updated_at = Timestamp::now()
        })
    }

    fn channel_health(&self, project: &Uuid, id: &Uuid) -> Result<Option<ChannelHealth>> {
        let row = self
            .block(
                sqlx::query(
                    "SELECT doc FROM channel_health WHERE project = $1 AND channel_id = $2",
                )
                .bind(project)
                .bind(id)
                .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        row.map(|r| doc_of(&r, "doc")).transpose()
    }

    fn set_channel_health(
        &self, project: &Uuid, id: &Uuid, h: &ChannelHealth, event: EventType,
        event_data: &serde_json::Value,
    ) -> Result<()> {
        let mut tx = self.begin()?;
        self.block(async {
            sqlx::query(
                "INSERT INTO channel_health (project, channel_id, doc) VALUES ($1, $2, $3)
                 ON CONFLICT (project, channel_id) DO UPDATE SET doc = EXCLUDED.doc",
            )
            .bind(project)
            .bind(id)
            .bind(to_doc(h))
            .execute(&mut *tx)
            .await
            .map_err(db_err)?;
            let mut events = Outbound::load(&mut tx, [*project]).await?;
            events.stage(project, event, id, || event_data);
            events.flush(&mut tx).await
        })?;
        self.commit(tx)
    }
}

impl FlowRepo for PgStore {
    fn live_flows(&self, project: &Uuid) -> Result<Vec<Flow>> {
        Ok(self
            .docs::<Flow>(
                "SELECT doc FROM flows WHERE project = $1 ORDER BY id",
                project,
            )?
            .into_iter()
            .filter(|f| f.status != FlowStatus::Archived)
            .collect())
    }

    fn create_flow(&self, project: &Uuid, f: &Flow) -> Result<()> {
        let r = self.block(
            sqlx::query("INSERT INTO flows (project, id, handle, doc) VALUES ($1, $2, $3, $4)")
                .bind(project)
                .bind(f.id)
                .bind(&f.handle)
                .bind(to_doc(f))
                .execute(self.pool()),
        );
        match r {
            Ok(_) => Ok(()),
            Err(e) if is_unique_violation(&e) => Err(Refusal::FlowHandleTaken.err()),
            Err(e) => Err(db_err(e)),
        }
    }

    /// The handle is not changed by an update (the API has no way to), so
    /// only the record is rewritten.
    fn update_flow(&self, project: &Uuid, id: &Uuid, f: Change<'_, Flow>) -> Result<Flow> {
        self.update_doc("flows", "flow", project, id, f, |_| {})
    }
}

impl PushRepo for PgStore {
    fn push_subscriptions(
        &self, project: &Uuid, user: &Uuid, channel: &Uuid,
    ) -> Result<Vec<PushSubscription>> {
        let rows = self
            .block(
                sqlx::query(
                    "SELECT doc FROM push_subscriptions
                     WHERE project = $1 AND user_id = $2 AND channel_id = $3 ORDER BY id DESC",
                )
                .bind(project)
                .bind(user)
                .bind(channel)
                .fetch_all(self.pool()),
            )
            .map_err(db_err)?;
        rows.into_iter().map(|r| doc_of(&r, "doc")).collect()
    }

    fn add_push_subscription(
        &self, project: &Uuid, user: &Uuid, s: PushSubscription,
    ) -> Result<(PushSubscription, bool)> {
        let (channel, identifier) = (&s.channel_id, s.identifier.as_str());
        let doc = to_doc(&s);
        let mut tx = self.begin()?;
        let found = self.block(async {
            lock_all(
                &mut tx,
                vec![lock_key(
                    b'p',
                    project,
                    &format!("{user}/{channel}/{identifier}"),
                )],
            )
            .await?;
            let row = sqlx::query(
                "SELECT doc FROM push_subscriptions
                 WHERE project = $1 AND user_id = $2 AND channel_id = $3 AND identifier = $4",
            )
            .bind(project)
            .bind(user)
            .bind(channel)
            .bind(identifier)
            .fetch_optional(&mut *tx)
            .await?;
            if row.is_some() {
                return Ok(row);
            }
            sqlx::query(
                "INSERT INTO push_subscriptions (project, user_id, channel_id, identifier, id, doc)
                 VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(project)
            .bind(user)
            .bind(channel)
            .bind(identifier)
            .bind(s.id)
            .bind(doc)
            .execute(&mut *tx)
            .await?;
            Ok::<_, sqlx::Error>(None)
        });
        match found {
            Ok(Some(r)) => Ok((doc_of(&r, "doc")?, false)),
            Ok(None) => {
                self.commit(tx)?;
                Ok((s, true))
            }
            // the user is gone (foreign key): as if deleted right after
            Err(sqlx::Error::Database(d)) if d.code().as_deref() == Some("23503") => {
                Err(Refusal::missing("user", user))
            }
            Err(e) => Err(db_err(e)),
        }
    }

    /// Removes a subscription with its `push_subscription.removed` event,
    /// in one transaction.
    fn remove_push_subscription(&self, project: &Uuid, key: PushKey<'_>) -> Result<bool> {
        let PushKey {
            user,
            channel,
            identifier,
        } = key;
        let mut tx = self.begin()?;
        let found = self.block(async {
            let row = sqlx::query(
                "DELETE FROM push_subscriptions
                 WHERE project = $1 AND user_id = $2 AND channel_id = $3 AND identifier = $4
                 RETURNING doc",
            )
            .bind(project)
            .bind(user)
            .bind(channel)
            .bind(identifier)
            .fetch_optional(&mut *tx)
            .await
            .map_err(db_err)?;
            let Some(row) = row else {
                return Ok(false);
            };
            let sub: PushSubscription = doc_of(&row, "doc")?;
            let mut out = Outbound::load(&mut tx, [*project]).await?;
            out.stage(project, EventType::PushSubscriptionRemoved, &sub.id, || {
                serde_json::json!({
                    "id": sub.id, "user_id": user, "channel_id": sub.channel_id,
                    "identifier": sub.identifier, "platform": sub.platform,
                    "created_at": sub.created_at,
                })
            });
            out.flush(&mut tx).await?;
            Ok::<_, Error>(true)
        })?;
        self.commit(tx)?;
        Ok(found)
    }
}

/// The sweep of stored responses (`RetentionRepo::sweep`).
impl PgStore {}

impl IdempotencyRepo for PgStore {
    fn idempotent_response(
        &self, project: &Uuid, scope: &[u8],
    ) -> Result<Option<IdempotentResponse>> {
        let row = self
            .block(
                sqlx::query(
                    "SELECT payload_hash, status, body, created_ms FROM idempotency
                     WHERE project = $1 AND scope = $2 AND created_ms > $3",
                )
                .bind(project)
                .bind(scope)
                .bind(Timestamp::now().millis() - IDEMPOTENCY_TTL_MS)
                .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        Ok(row.map(|r| IdempotentResponse {
            payload_hash: r.get("payload_hash"),
            status: r.get::<i32, _>("status") as u16,
            body: r.get("body"),
            created_at: Timestamp::from_millis(r.get("created_ms")),
        }))
    }

    fn put_idempotent_response(
        &self, project: &Uuid, scope: &[u8], r: &IdempotentResponse,
    ) -> Result<()> {
        self.block(async {
            let mut conn = self.pool().acquire().await.map_err(db_err)?;
            put_idempotent(&mut conn, project, scope, r).await
        })
    }
}

/// Stores a new idempotent response inside a transaction (over an expired
/// one); false, storing nothing, while a live one holds the scope. A
/// request with the same key committing at once on another node holds the
/// row until it commits, so exactly one of them stores its response.
pub(crate) async fn put_idempotent_new(
    conn: &mut sqlx::PgConnection, project: &Uuid, scope: &[u8], r: &IdempotentResponse,
) -> Result<bool> {
    let done = sqlx::query(
        "INSERT INTO idempotency (project, scope, payload_hash, status, body, created_ms)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (project, scope) DO UPDATE SET payload_hash = EXCLUDED.payload_hash,
             status = EXCLUDED.status, body = EXCLUDED.body, created_ms = EXCLUDED.created_ms
         WHERE idempotency.created_ms <= $7",
    )
    .bind(project)
    .bind(scope)
    .bind(&r.payload_hash)
    .bind(i32::from(r.status))
    .bind(&r.body)
    .bind(r.created_at.millis())
    .bind(Timestamp::now().millis() - IDEMPOTENCY_TTL_MS)
    .execute(conn)
    .await
    .map_err(db_err)?;
    Ok(done.rows_affected() == 1)
}

/// Stores (or replaces) an idempotent response inside a transaction.
pub(crate) async fn put_idempotent(
    conn: &mut sqlx::PgConnection, project: &Uuid, scope: &[u8], r: &IdempotentResponse,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO idempotency (project, scope, payload_hash, status, body, created_ms)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (project, scope) DO UPDATE SET payload_hash = EXCLUDED.payload_hash,
             status = EXCLUDED.status, body = EXCLUDED.body, created_ms = EXCLUDED.created_ms",
    )
    .bind(project)
    .bind(scope)
    .bind(&r.payload_hash)
    .bind(i32::from(r.status))
    .bind(&r.body)
    .bind(r.created_at.millis())
    .execute(conn)
    .await
    .map_err(db_err)?;
    Ok(())
}

/// Reads of the trait `RecordRepo` answers (`lookups.rs`).
impl PgStore {
    pub fn delete_channel(&self, project: &Uuid, id: &Uuid) -> Result<()> {
        self.block(
            sqlx::query("DELETE FROM channels WHERE project = $1 AND id = $2")
                .bind(project)
                .bind(id)
                .execute(self.pool()),
        )
        .map_err(db_err)?;
        Ok(())
    }
}

/// Reads of the trait `RecordRepo` answers (`lookups.rs`).
impl PgStore {
    pub fn find_flow(&self, project: &Uuid, by: FlowRef<'_>) -> Result<Option<Flow>> {
        let handle = match by {
            FlowRef::Id(id) => return self.doc_by_id("flows", project, id),
            FlowRef::Handle(handle) => handle,
        };
        let row = self
            .block(
                sqlx::query("SELECT doc FROM flows WHERE project = $1 AND handle = $2")
                    .bind(project)
                    .bind(handle)
                    .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        row.map(|r| doc_of(&r, "doc")).transpose()
    }
}
