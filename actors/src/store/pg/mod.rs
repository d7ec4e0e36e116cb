//! The PostgreSQL backend: `storage::Storage` on one PostgreSQL database, the
//! only place besides `store::sled` that knows a storage layout (and the only
//! one with SQL).
//!
//! Layout (`actors/migrations/`): one table per aggregate, keyed by
//! `(project, id)` and cascading from `projects`, except the four a topic
//! run writes per in-app recipient (notifications, feed, feed state, feed
//! events: no per-row key check and share lock on the project's row), whose
//! rows `delete_project` deletes itself. Columns the API looks up,
//! filters or sorts on are typed; the rest of a record is the JSON its engine
//! type serialises to (`doc`), which keeps the tables in step with the model
//! without a column per field; decision-trace parts are the compact bytes
//! of `store::trace_codec`, shared by both backends. Ids are UUIDv7, so by-id order is creation
//! order, and pages walk by id newest first (`page`); a page boundary's sort
//! key is the boundary id's 16 bytes.
//!
//! Calls block, as the interface says, and come both from the blocking pool
//! and from actix arbiter threads, which run a tokio runtime of their own (on
//! which `Handle::block_on` panics). So the backend owns a small tokio
//! runtime that drives the pool's sockets and timers, and each call enters it
//! and waits for its future with a plain executor (`PgStore::block`): the
//! caller's thread waits, the I/O is driven by the backend's own threads.
//!
//! Every change is one transaction; read-modify-write calls lock their rows
//! with `SELECT … FOR UPDATE`. A change is durable when its commit returns
//! (PostgreSQL's own WAL flush), so durability tickets are trivial. The
//! in-memory caches the sled backend keeps (API keys, users by external id,
//! first feed pages) are not kept here: every lookup reads the database,
//! which stays correct when several processes share it.

mod audit;
mod batches;
mod catalog;
mod console;
mod content;
mod events;
mod feed;
mod feedback;
mod lookups;
mod notifications;
mod page;
mod presence;
mod projects;
mod queue;
mod retention;
mod rows;
mod runs;
mod suppressions;
mod throttles;
mod topics;
mod usage;
mod users;
mod work;

pub use work::DEFAULT_LEASE;

use crate::error::{Error, Result};
use crate::storage::{Durability, DurableWait, HealthStatus, Storage, Ticket};
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgRow};
use sqlx::types::Json;
use sqlx::Row;
use std::future::Future;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The migrations embedded in the binary (`actors/migrations/*.sql`).
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// Key of the session-level advisory lock that serialises schema migrations
/// between processes starting at once ("herald" in ASCII).
const MIGRATION_LOCK: i64 = 0x6865_7261_6c64;

/// The deliveries of each notification of a table `k (p, nid)` that the
/// statement names before it (project, notification id), as a table `d`:
/// the notification's key range (migration 17, `deliveries_from`), one
/// range scan per notification. The `LIMIT` (a notification has at most
/// 255 deliveries, its ids' last byte) keeps the planner from flattening
/// the subquery into a hash join that filters the whole table by the
/// ranges: 10 s instead of 3 ms for 500 notifications among 200,000
/// deliveries.
const DELIVERIES_OF_EACH: &str = "CROSS JOIN LATERAL (SELECT * FROM deliveries x
    WHERE x.project = k.p AND x.id >= deliveries_from(k.nid) AND x.id < k.nid LIMIT 255) d";

/// Whether a store location names PostgreSQL rather than a sled directory.
pub fn is_postgres_url(s: &str) -> bool {
    s.starts_with("postgres://") || s.starts_with("postgresql://")
}

/// A database error as the API's: unreachable database (I/O, pool timeout)
/// is 503 with `Retry-After`, anything else is a 500 for the log.
pub(crate) fn db_err(e: sqlx::Error) -> Error {
    if matches!(e, sqlx::Error::PoolTimedOut) {
        metrics::counter!("herald_pg_pool_acquire_timeouts_total").increment(1);
    }
    match &e {
        sqlx::Error::Io(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => {
            Error::storage_unavailable(format!("the database is unreachable: {e}"))
        }
        _ => Error::internal(format!("database error: {e}")),
    }
}

/// Whether `e` is a unique-constraint violation (SQLSTATE 23505).
pub(crate) fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(d) if d.code().as_deref() == Some("23505"))
}

/// A JSON column of `r` as an engine type, decoded straight from the
/// column's bytes (no `serde_json::Value` tree in between: its maps were a
/// good part of a node's CPU per settle).
pub(crate) fn doc_of<T: serde::de::DeserializeOwned>(r: &PgRow, col: &str) -> Result<T> {
    r.try_get::<Json<T>, _>(col)
        .map(|j| j.0)
        .map_err(|e| Error::internal(format!("corrupt record: {e}")))
}

/// `doc_of` of a column that may be NULL.
pub(crate) fn doc_of_opt<T: serde::de::DeserializeOwned>(
    r: &PgRow, col: &str,
) -> Result<Option<T>> {
    r.try_get::<Option<Json<T>>, _>(col)
        .map(|j| j.map(|j| j.0))
        .map_err(|e| Error::internal(format!("corrupt record: {e}")))
}

/// A record (a notification, a delivery) of a row with its two forms:
/// the compact `body` column (`store::codec`), or the JSON `doc` column of
/// a row written before it (migration 16). `doc` and `body` name them.
pub(crate) fn record_of<T: serde::de::DeserializeOwned>(
    r: &PgRow, doc: &str, body: &str,
) -> Result<T> {
    let b: Option<&[u8]> = r
        .try_get(body)
        .map_err(|e| Error::internal(format!("corrupt record: {e}")))?;
    match b {
        Some(b) => crate::store::codec::dec(b),
        None => doc_of(r, doc),
    }
}

/// A record in the compact form `record_of` reads (a `body` column).
pub(crate) fn to_body<T: serde::Serialize>(v: &T) -> Vec<u8> {
    crate::store::codec::enc(v)
}

/// An engine type as a JSON column, serialised straight into the
/// statement's buffer when it is bound.
pub(crate) fn to_doc<T: serde::Serialize>(v: &T) -> Json<&T> {
    Json(v)
}

struct Inner {
    /// Drives the pool's connections; see the module doc. Always `Some`
    /// until dropped.
    rt: Option<tokio::runtime::Runtime>,
    pool: PgPool,
    cursor_key: [u8; 32],
    health: Arc<Health>,
    /// This process's node id: the owner of the leases it takes (`work`).
    node: uuid::Uuid,
    /// How long a lease holds unless renewed, in milliseconds.
    lease_ms: std::sync::atomic::AtomicI64,
}

impl Drop for Inner {
    /// The last handle may go on an async thread (the server's shutdown),
    /// where dropping a runtime the blocking way panics: it is let go
    /// without waiting for its tasks (the pool is closed by then, or its
    /// sockets simply close).
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// Cheap to clone handle to the PostgreSQL store.
#[derive(Clone)]
pub struct PgStore {
    inner: Arc<Inner>,
}

/// A transaction of the backend's pool. A transaction dropped without a
/// commit (an early return, a refusal) rolls back by handing its connection
/// back to the pool, which needs the backend's runtime: the drop enters it,
/// as the caller's thread may have none (the blocking pool).
pub(crate) struct Tx {
    tx: Option<sqlx::Transaction<'static, sqlx::Postgres>>,
    rt: tokio::runtime::Handle,
}

impl std::ops::Deref for Tx {
    type Target = sqlx::PgConnection;
    fn deref(&self) -> &sqlx::PgConnection {
        self.tx.as_ref().expect("an open transaction")
    }
}

impl std::ops::DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut sqlx::PgConnection {
        self.tx.as_mut().expect("an open transaction")
    }
}

impl Drop for Tx {
    fn drop(&mut self) {
        if let Some(t) = self.tx.take() {
            let _entered = self.rt.enter();
            drop(t);
        }
    }
}

/// What `migrate` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migrated {
    /// Versions applied by this call (empty when the schema was current).
    pub applied: Vec<i64>,
    /// The schema's version afterwards.
    pub version: i64,
}

/// The newest schema version this binary knows.
pub fn known_version() -> i64 {
    MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0)
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("herald-pg")
        .enable_all()
        .build()
        .map_err(|e| Error::internal(format!("cannot start the database runtime: {e}")))
}

/// Runs `f` to completion on `rt` from any thread (see the module doc).
/// `unconstrained`: called from a task of another runtime (an actix
/// arbiter), tokio's cooperative budget is that task's; once spent, every
/// socket and timer would answer "not yet" forever, as this wait never
/// yields back to that runtime to refill it.
fn block_on<F: Future>(rt: &tokio::runtime::Runtime, f: F) -> F::Output {
    let _entered = rt.enter();
    futures_executor::block_on(tokio::task::unconstrained(f))
}

fn options(url: &str) -> Result<PgConnectOptions> {
    PgConnectOptions::from_str(url)
        .map_err(|e| Error::internal(format!("invalid database URL: {e}")))
}

/// Applies the embedded migrations not applied yet, under an advisory lock so
/// that processes starting together apply each once. Refuses a database whose
/// schema is newer than this binary knows.
pub fn migrate(url: &str) -> Result<Migrated> {
    let rt = runtime()?;
    let opts = options(url)?;
    let r = block_on(&rt, async move {
        use sqlx::Connection;
        let mut conn = sqlx::PgConnection::connect_with(&opts)
            .await
            .map_err(|e| Error::unavailable(format!("cannot connect to the database: {e}")))?;
        sqlx::query("SELECT pg_advisory_lock($1)")
            .bind(MIGRATION_LOCK)
            .execute(&mut conn)
            .await
            .map_err(db_err)?;
        let r = migrate_locked(&mut conn).await;
        let _ = sqlx::query("SELECT pg_advisory_unlock($1)")
            .bind(MIGRATION_LOCK)
            .execute(&mut conn)
            .await;
        let _ = conn.close().await;
        r
    });
    // not waiting for the runtime's tasks: callers may be on an async thread
    rt.shutdown_background();
    r
}

async fn migrate_locked(conn: &mut sqlx::PgConnection) -> Result<Migrated> {
    let exists: bool = sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations') IS NOT NULL")
        .fetch_one(&mut *conn)
        .await
        .map_err(db_err)?;
    let before: Vec<i64> = if exists {
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success ORDER BY version")
            .fetch_all(&mut *conn)
            .await
            .map_err(db_err)?
    } else {
        vec![]
    };
    let known = known_version();
    if let Some(newer) = before.iter().copied().filter(|v| *v > known).max() {
        return Err(Error::internal(format!(
            "the database's schema is version {newer}, newer than this Herald knows (version {known}): run a Herald at least as new as the one that migrated it"
        )));
    }
    MIGRATOR
        .run_direct(&mut *conn)
        .await
        .map_err(|e| Error::internal(format!("migration failed: {e}")))?;
    let applied = MIGRATOR
        .iter()
        .map(|m| m.version)
        .filter(|v| !before.contains(v))
        .collect();
    Ok(Migrated {
        applied,
        version: known,
    })
}

/// How many connections a store's pool opens at most, unless told
/// (`PgStore::open_with`): every node of a cluster has its own pool, so N
/// nodes need N times this within the server's `max_connections`.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 16;

impl PgStore {
    /// Connects to the database at `url` (migrations applied, see `migrate`).
    pub fn open(url: &str) -> Result<PgStore> {
        PgStore::open_with(url, DEFAULT_MAX_CONNECTIONS)
    }

    /// Like `open`, with a pool of at most `max_connections` (at least 1).
    pub fn open_with(url: &str, max_connections: u32) -> Result<PgStore> {
        migrate(url)?;
        let rt = runtime()?;
        let opts = options(url)?;
        let pool = {
            let _entered = rt.enter();
            PgPoolOptions::new()
                .max_connections(max_connections.max(1))
                .min_connections(1)
                // a request that needs the database answers 503 rather than hang
                .acquire_timeout(Duration::from_secs(5))
                .connect_lazy_with(opts)
        };
        let cursor_key = block_on(&rt, cursor_key(&pool))?;
        let health = Arc::new(Health::default());
        health.clone().watch(&rt, pool.clone());
        Ok(PgStore {
            inner: Arc::new(Inner {
                rt: Some(rt),
                pool,
                cursor_key,
                health,
                node: uuid::Builder::from_random_bytes(rand::random()).into_uuid(),
                lease_ms: std::sync::atomic::AtomicI64::new(DEFAULT_LEASE.as_millis() as i64),
            }),
        })
    }

    /// Runs a database future from a blocking call (see the module doc).
    pub(crate) fn block<F: Future>(&self, f: F) -> F::Output {
        block_on(
            self.inner
                .rt
                .as_ref()
                .expect("the runtime lives as long as the store"),
            f,
        )
    }

    pub(crate) fn pool(&self) -> &PgPool {
        &self.inner.pool
    }

    /// Begins a transaction.
    pub(crate) fn begin(&self) -> Result<Tx> {
        if self.inner.pool.num_idle() == 0 {
            // Every connection is busy (or none is open yet): this one waits
            // for a connection to be handed back or opened.
            metrics::counter!("herald_pg_pool_acquire_waits_total").increment(1);
        }
        let tx = self.block(self.inner.pool.begin()).map_err(db_err)?;
        Ok(Tx {
            tx: Some(tx),
            rt: self.runtime().handle().clone(),
        })
    }

    /// Commits a transaction.
    pub(crate) fn commit(&self, tx: Tx) -> Result<()> {
        self.commit_raw(tx).map_err(db_err)
    }

    /// Commits a transaction, the driver's error as it is.
    pub(crate) fn commit_raw(&self, mut tx: Tx) -> sqlx::Result<()> {
        let t = tx.tx.take().expect("a transaction commits once");
        self.block(t.commit())
    }

    pub(crate) fn runtime(&self) -> &tokio::runtime::Runtime {
        self.inner
            .rt
            .as_ref()
            .expect("the runtime lives as long as the store")
    }

    /// How long this node's leases hold unless renewed (at least 1 s).
    pub fn set_lease(&self, lease: Duration) {
        let ms = lease.as_millis().clamp(1000, i64::MAX as u128) as i64;
        self.inner.lease_ms.store(ms, Ordering::Relaxed);
    }

    pub(crate) fn node(&self) -> uuid::Uuid {
        self.inner.node
    }

    pub(crate) fn lease_ms(&self) -> i64 {
        self.inner.lease_ms.load(Ordering::Relaxed)
    }

    /// The secret that signs pagination cursors (random per database, kept
    /// in its `meta` table, so every node has the same): the engine's,
    /// given to it at start.
    pub fn cursor_key(&self) -> &[u8; 32] {
        &self.inner.cursor_key
    }

    /// Closes the pool (at shutdown): every commit has returned already, so
    /// there is nothing to flush.
    pub fn close(&self) {
        self.block(self.inner.pool.close());
    }
}

/// The secret that signs cursors: made once per database and kept in `meta`.
async fn cursor_key(pool: &PgPool) -> Result<[u8; 32]> {
    let fresh: [u8; 32] = rand::random();
    sqlx::query("INSERT INTO meta (key, value) VALUES ('cursor_key', $1) ON CONFLICT DO NOTHING")
        .bind(&fresh[..])
        .execute(pool)
        .await
        .map_err(db_err)?;
    let row = sqlx::query("SELECT value FROM meta WHERE key = 'cursor_key'")
        .fetch_one(pool)
        .await
        .map_err(db_err)?;
    let v: Vec<u8> = row.try_get("value").map_err(db_err)?;
    v.try_into()
        .map_err(|_| Error::internal("corrupt cursor key in meta"))
}

/// The database's health as the last probe saw it: `health_status` is read
/// every few milliseconds by the channel actors, so it never waits for the
/// database itself; a task on the backend's runtime probes once a second.
#[derive(Default)]
struct Health {
    /// Why the database is not usable ("" when it is).
    reason: std::sync::Mutex<String>,
    /// Bumped when the database answers again after it did not.
    generation: AtomicU64,
}

impl Health {
    fn record(&self, reason: String) {
        let mut r = self.reason.lock().unwrap_or_else(|e| e.into_inner());
        if !r.is_empty() && reason.is_empty() {
            self.generation.fetch_add(1, Ordering::AcqRel);
            tracing::info!("the database answers again");
        } else if r.is_empty() && !reason.is_empty() {
            tracing::warn!(%reason, "the database is unreachable");
        }
        *r = reason;
    }

    async fn probe(pool: &PgPool) -> String {
        match tokio::time::timeout(
            Duration::from_secs(2),
            sqlx::query("SELECT 1").execute(pool),
        )
        .await
        {
            Ok(Ok(_)) => String::new(),
            Ok(Err(e)) => format!("the database is unreachable: {e}"),
            Err(_) => "the database did not answer within 2 s".to_string(),
        }
    }

    /// Probes until the runtime stops (the store is dropped).
    fn watch(self: Arc<Self>, rt: &tokio::runtime::Runtime, pool: PgPool) {
        rt.spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                let reason = Health::probe(&pool).await;
                metrics::gauge!("herald_pg_up").set(if reason.is_empty() { 1.0 } else { 0.0 });
                self.record(reason);
                // The pool's health (docs/API.md §14).
                metrics::gauge!("herald_pg_pool_connections").set(pool.size() as f64);
                metrics::gauge!("herald_pg_pool_idle_connections").set(pool.num_idle() as f64);
                metrics::gauge!("herald_pg_pool_max_connections")
                    .set(pool.options().get_max_connections() as f64);
            }
        });
    }
}

impl Durability for PgStore {
    /// Tickets are trivial: a change is durable once its commit returned.
    fn ticket(&self, _of: Ticket) -> u64 {
        0
    }

    fn wait_durable(&self, _ticket: u64) -> DurableWait<'_> {
        Box::pin(async { Ok(()) })
    }

    fn health_status(&self) -> HealthStatus {
        let h = &self.inner.health;
        let reason = h.reason.lock().unwrap_or_else(|e| e.into_inner()).clone();
        HealthStatus {
            degraded: !reason.is_empty(),
            reason,
            generation: h.generation.load(Ordering::Acquire),
        }
    }
}

impl Storage for PgStore {
    /// Several nodes share one database: they claim their work with leases.
    fn work(&self) -> Option<&dyn crate::storage::WorkRepo> {
        Some(self)
    }

    /// The chunk's writes now, the run's record and the commit later
    /// (`runs::PgWrittenChunk`).
    fn write_chunk<'a>(
        &'a self, project: &uuid::Uuid, chunk: crate::storage::Prepared,
    ) -> Result<Box<dyn crate::storage::WrittenChunk + 'a>> {
        Ok(Box::new(self.write_chunk_tx(project, chunk)?))
    }
}

impl PgStore {
    /// One statement (a round trip instead of three per attempt): the
    /// delivery joined with its channel and its recipient, read in one
    /// snapshot.
    pub(super) fn delivery_for_attempt(
        &self, project: &uuid::Uuid, id: &uuid::Uuid,
    ) -> Result<Option<crate::storage::AttemptReads>> {
        if crate::model::notification_of(id) == *id {
            return Ok(None);
        }
        let row = self
            .block(
                sqlx::query(
                    "SELECT d.doc AS d, d.body AS d_body, c.doc AS c, u.doc AS u FROM deliveries d
                     LEFT JOIN channels c ON c.project = d.project AND c.id = d.channel_id
                     LEFT JOIN users u ON u.project = d.project AND u.id = d.recipient
                     WHERE d.project = $1 AND d.id = $2",
                )
                .bind(project)
                .bind(id)
                .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        let Some(r) = row else {
            return Ok(None);
        };
        Ok(Some((
            record_of(&r, "d", "d_body")?,
            doc_of_opt(&r, "c")?,
            doc_of_opt(&r, "u")?,
        )))
    }
}
