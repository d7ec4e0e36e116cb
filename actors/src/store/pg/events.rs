//! Event endpoints, the event outbox, the attempt log and decision traces on
//! PostgreSQL (see `crate::events` and `crate::trace` for the rules).
//!
//! The writers of the changes events describe collect them in an `Outbound`
//! inside their own transaction: it reads the enabled endpoints of the
//! projects involved once (one query, so several processes sharing the
//! database see each other's endpoints), builds an event's body only when
//! some endpoint wants it, and writes the log and outbox rows with one
//! multi-row insert each just before the commit. An outbox row has no
//! foreign key to its endpoint, so an event staged while its endpoint is
//! being deleted never fails the change it describes; the log sweep removes
//! such rows. Signing secrets are kept in the endpoint's row as the
//! database keeps channel secrets (protected by the database, not sealed).

use super::{db_err, doc_of, to_doc, PgStore};
use crate::error::{Error, Result};
use crate::events::{
    event_body, AttemptNext, EventAttempt, EventMask, EventType, OutboxEvent, WebhookEndpoint,
};
use crate::model::{Delivery, Notification, Timestamp, User};
use crate::rules::feed;
use crate::storage::Refusal;
use crate::storage::{EndpointWrite, EventRepo, Page, PageReq};
use crate::store::trace_codec;
use crate::trace::TraceEntry;
use crate::views::NotificationView;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sqlx::{PgConnection, Row};
use std::collections::{BTreeSet, HashMap};
use uuid::Uuid;

/// One signing secret as stored.
#[derive(Serialize, Deserialize)]
struct StoredSecret {
    secret: String,
    /// `None`: the current secret; else when the rotated-out one stops signing.
    expires_ms: Option<i64>,
}

/// One event staged by a change.
struct Staged {
    project: Uuid,
    t: EventType,
    resource: Uuid,
    body: String,
}

/// The events of one transaction, written just before it commits (`flush`).
#[derive(Default)]
pub(crate) struct Outbound {
    /// The enabled endpoints of the projects loaded, with what each wants.
    endpoints: HashMap<Uuid, Vec<(Uuid, EventMask)>>,
    events: Vec<Staged>,
}

impl Outbound {
    /// The enabled endpoints of `projects`, read in the caller's transaction.
    pub(crate) async fn load(
        conn: &mut PgConnection, projects: impl IntoIterator<Item = Uuid>,
    ) -> Result<Outbound> {
        let ps: Vec<Uuid> = projects
            .into_iter()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let mut out = Outbound::default();
        if ps.is_empty() {
            return Ok(out);
        }
        let rows = sqlx::query(
            "SELECT project, doc FROM event_endpoints WHERE project = ANY($1) AND enabled",
        )
        .bind(&ps)
        .fetch_all(conn)
        .await
        .map_err(db_err)?;
        for r in rows {
            let ep: WebhookEndpoint = doc_of(&r, "doc")?;
            out.endpoints
                .entry(r.get("project"))
                .or_default()
                .push((ep.id, ep.mask()));
        }
        Ok(out)
    }

    /// Whether some enabled endpoint of `project` wants events of type `t`.
    pub(crate) fn wants(&self, project: &Uuid, t: EventType) -> bool {
        self.endpoints
            .get(project)
            .is_some_and(|v| v.iter().any(|(_, m)| m.wants(t)))
    }

    /// Stages an event; `data` (the resource as the API shows it) is only
    /// built when an endpoint wants it.
    pub(crate) fn stage<D: Serialize>(
        &mut self, project: &Uuid, t: EventType, resource: &Uuid, data: impl FnOnce() -> D,
    ) {
        if !self.wants(project, t) {
            return;
        }
        let body = String::from_utf8(event_body(t, Timestamp::now(), &data())).unwrap_or_default();
        self.events.push(Staged {
            project: *project,
            t,
            resource: *resource,
            body,
        });
    }

    /// The events of a notification as accepted: each delivery settled at
    /// once and the notification's own (`stage_notification`).
    pub(crate) fn stage_accepted(
        &mut self, project: &Uuid, n: &Notification, ds: &[Delivery], data: &Value,
        users: &UsersRead,
    ) {
        if !self.endpoints.contains_key(project) {
            return;
        }
        for d in ds.iter().filter(|d| d.status.is_final()) {
            self.stage_delivery(project, d);
        }
        self.stage_notification(project, n, ds, data, users);
    }

    /// Whether some endpoint of `project` wants a notification's own events
    /// (`notification.batched`, `notification.processed`).
    pub(crate) fn wants_notification(&self, project: &Uuid) -> bool {
        self.wants(project, EventType::NotificationProcessed)
            || self.wants(project, EventType::NotificationBatched)
    }

    /// `notification.batched` when `n` joined a batch and
    /// `notification.processed` when it is processed, their data the
    /// notification as `GET /admin/v1/notifications/{id}` shows it
    /// (`NotificationView`): `ds` as written, its run's `data`, its users
    /// from `users` (read in the transaction, `users_of`).
    pub(crate) fn stage_notification(
        &mut self, project: &Uuid, n: &Notification, ds: &[Delivery], data: &Value,
        users: &UsersRead,
    ) {
        let types: Vec<EventType> = crate::events::notification_events(n)
            .filter(|t| self.wants(project, *t))
            .collect();
        if types.is_empty() {
            return;
        }
        let view = NotificationView::staged(n, ds, data.clone(), |id| {
            users.get(&(*project, *id)).cloned()
        });
        for t in types {
            self.stage(project, t, &n.id, || &view);
        }
    }

    /// The event of a delivery's new state: `delivery.sent`, `.failed`,
    /// `.skipped`, `.canceled`, or `.retrying` while pending after an attempt.
    pub(crate) fn stage_delivery(&mut self, project: &Uuid, d: &Delivery) {
        if let Some(t) = feed::delivery_event(d) {
            self.stage(project, t, &d.id, || d.view());
        }
    }

    /// A `feed_entry.*` event for each flag an update set (clearing a flag,
    /// as unarchiving does, has none).
    pub(crate) fn stage_feed_entry(&mut self, project: &Uuid, before: &Delivery, after: &Delivery) {
        for t in feed::entry_events(before, after) {
            self.stage(project, t, &after.id, || after.view());
        }
    }

    /// Writes the staged events: their log rows and one outbox row per
    /// enabled endpoint wanting each, one insert each.
    pub(crate) async fn flush(self, conn: &mut PgConnection) -> Result<()> {
        if self.events.is_empty() {
            return Ok(());
        }
        let seqs: Vec<i64> =
            sqlx::query_scalar("SELECT nextval('event_seq') FROM generate_series(1, $1)")
                .bind(self.events.len() as i64)
                .fetch_all(&mut *conn)
                .await
                .map_err(db_err)?;
        let now = Timestamp::now().millis();
        let n = self.events.len();
        let (mut lp, mut ls, mut lid, mut lt, mut lr, mut lb) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        let (mut op, mut oe, mut os, mut oid, mut ot, mut or, mut ob) =
            (vec![], vec![], vec![], vec![], vec![], vec![], vec![]);
        for (e, seq) in self.events.iter().zip(seqs) {
            let id = Uuid::now_v7();
            lp.push(e.project);
            ls.push(seq);
            lid.push(id);
            lt.push(e.t.as_str());
            lr.push(e.resource);
            lb.push(e.body.as_str());
            for (ep, m) in self.endpoints.get(&e.project).into_iter().flatten() {
                if m.wants(e.t) {
                    op.push(e.project);
                    oe.push(*ep);
                    os.push(seq);
                    oid.push(id);
                    ot.push(e.t.as_str());
                    or.push(e.resource);
                    ob.push(e.body.as_str());
                }
            }
        }
        sqlx::query(
            "INSERT INTO event_log (project, seq, id, event_type, resource, body, created_ms)
             SELECT *, $7 FROM UNNEST($1::uuid[], $2::int8[], $3::uuid[], $4::text[], $5::uuid[], $6::text[])",
        )
        .bind(&lp)
        .bind(&ls)
        .bind(&lid)
        .bind(&lt)
        .bind(&lr)
        .bind(&lb)
        .bind(now)
        .execute(&mut *conn)
        .await
        .map_err(db_err)?;
        sqlx::query(
            "INSERT INTO outbox (project, endpoint, seq, id, event_type, resource, body, attempts, first_ms, due_ms)
             SELECT *, 0, NULL, $8 FROM UNNEST($1::uuid[], $2::uuid[], $3::int8[], $4::uuid[], $5::text[], $6::uuid[], $7::text[])",
        )
        .bind(&op)
        .bind(&oe)
        .bind(&os)
        .bind(&oid)
        .bind(&ot)
        .bind(&or)
        .bind(&ob)
        .bind(now)
        .execute(&mut *conn)
        .await
        .map_err(db_err)?;
        Ok(())
    }
}

/// Trace parts of notifications, written with the decisions they describe,
/// each in the compact encoding (`store::trace_codec`).
#[derive(Default)]
pub(crate) struct Traces(Vec<(Uuid, Uuid, Vec<u8>)>);

impl Traces {
    /// Adds a notification's `entries` (none: nothing is written).
    pub(crate) fn add(&mut self, project: &Uuid, nid: &Uuid, entries: &[TraceEntry]) {
        if !entries.is_empty() {
            let at = trace_codec::project_time(project);
            self.add_part(project, nid, trace_codec::encode(entries, at));
        }
    }

    /// Adds a part already encoded (empty: nothing is written).
    pub(crate) fn add_part(&mut self, project: &Uuid, nid: &Uuid, part: Vec<u8>) {
        if !part.is_empty() {
            self.0.push((*project, *nid, part));
        }
    }

    /// Writes them, one insert (after their notifications, which they
    /// reference).
    pub(crate) async fn flush(self, conn: &mut PgConnection) -> Result<()> {
        if self.0.is_empty() {
            return Ok(());
        }
        let n = self.0.len();
        let (mut ps, mut ns, mut parts) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        for (p, id, part) in self.0 {
            ps.push(p);
            ns.push(id);
            parts.push(part);
        }
        sqlx::query(
            "INSERT INTO trace (project, notification_id, part)
             SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::bytea[])",
        )
        .bind(&ps)
        .bind(&ns)
        .bind(&parts)
        .execute(conn)
        .await
        .map_err(db_err)?;
        Ok(())
    }
}

/// Users read by `(project, id)` in a transaction (`users_of`).
pub(crate) type UsersRead = HashMap<(Uuid, Uuid), User>;

/// The users of `notifications` (their actors and recipients) that exist,
/// read in the caller's transaction (so users it wrote are as written).
pub(crate) async fn users_of<'a>(
    conn: &mut PgConnection, notifications: impl Iterator<Item = (&'a Uuid, &'a Notification)>,
) -> Result<UsersRead> {
    let keys: BTreeSet<(Uuid, Uuid)> = notifications
        .flat_map(|(p, n)| NotificationView::user_ids(n).map(|id| (*p, id)))
        .collect();
    users_by_id(conn, keys).await
}

/// The users of `keys` `(project, id)` that exist, in one statement.
pub(crate) async fn users_by_id(
    conn: &mut PgConnection, keys: BTreeSet<(Uuid, Uuid)>,
) -> Result<UsersRead> {
    if keys.is_empty() {
        return Ok(HashMap::new());
    }
    let (ps, ids): (Vec<Uuid>, Vec<Uuid>) = keys.into_iter().unzip();
    let rows = sqlx::query(
        "SELECT project, id, doc FROM users
         WHERE (project, id) IN (SELECT * FROM UNNEST($1::uuid[], $2::uuid[]))",
    )
    .bind(&ps)
    .bind(&ids)
    .fetch_all(conn)
    .await
    .map_err(db_err)?;
    rows.iter()
        .map(|r| Ok(((r.get("project"), r.get("id")), doc_of(r, "doc")?)))
        .collect()
}

fn event_type(s: &str) -> Result<EventType> {
    EventType::parse(s).ok_or_else(|| Error::internal(format!("unknown event type {s} stored")))
}

impl PgStore {
    /// An endpoint and its secrets, locked for the caller's transaction.
    async fn endpoint_for_update(
        conn: &mut PgConnection, project: &Uuid, id: &Uuid,
    ) -> Result<(WebhookEndpoint, Vec<StoredSecret>)> {
        let r = sqlx::query(
            "SELECT doc, secrets FROM event_endpoints WHERE project = $1 AND id = $2 FOR UPDATE",
        )
        .bind(project)
        .bind(id)
        .fetch_optional(conn)
        .await
        .map_err(db_err)?
        .ok_or_else(|| Refusal::missing("webhook_endpoint", id))?;
        Ok((doc_of(&r, "doc")?, doc_of(&r, "secrets")?))
    }

    async fn save_endpoint(
        conn: &mut PgConnection, project: &Uuid, ep: &WebhookEndpoint, secrets: &[StoredSecret],
    ) -> Result<()> {
        sqlx::query(
            "UPDATE event_endpoints SET enabled = $3, secrets = $4, doc = $5
             WHERE project = $1 AND id = $2",
        )
        .bind(project)
        .bind(ep.id)
        .bind(ep.enabled)
        .bind(to_doc(&secrets))
        .bind(to_doc(ep))
        .execute(conn)
        .await
        .map_err(db_err)?;
        Ok(())
    }
}

/// The writes behind `EventRepo::put_event_endpoint`, one per kind, and
/// the sweep of the logs (`RetentionRepo::sweep`).
impl PgStore {}

impl EventRepo for PgStore {
    fn put_event_endpoint(&self, project: &Uuid, w: EndpointWrite<'_>) -> Result<WebhookEndpoint> {
        match w {
            EndpointWrite::Create { ep, secret } => {
                let secrets = [StoredSecret {
                    secret: secret.to_string(),
                    expires_ms: None,
                }];
                self.block(
                    sqlx::query(
                        "INSERT INTO event_endpoints (project, id, enabled, secrets, doc)
                 VALUES ($1, $2, $3, $4, $5)",
                    )
                    .bind(project)
                    .bind(ep.id)
                    .bind(ep.enabled)
                    .bind(to_doc(&secrets))
                    .bind(to_doc(&ep))
                    .execute(self.pool()),
                )
                .map_err(db_err)?;
                Ok(ep)
            }
            EndpointWrite::Change { id, f } => {
                let mut tx = self.begin()?;
                let ep = self.block(async {
                    let (mut ep, secrets) =
                        PgStore::endpoint_for_update(&mut tx, project, id).await?;
                    f(&mut ep)?;
                    ep.updated_at = Timestamp::now();
                    PgStore::save_endpoint(&mut tx, project, &ep, &secrets).await?;
                    Ok::<_, Error>(ep)
                })?;
                self.commit(tx)?;
                Ok(ep)
            }
            EndpointWrite::Secret { id, secret, grace } => {
                let mut tx = self.begin()?;
                let ep = self.block(async {
                    let (mut ep, old) = PgStore::endpoint_for_update(&mut tx, project, id).await?;
                    let now = Timestamp::now();
                    let until = now.plus_millis(grace.as_millis() as i64).millis();
                    let mut secrets = vec![StoredSecret {
                        secret: secret.to_string(),
                        expires_ms: None,
                    }];
                    if let Some(cur) = old.into_iter().find(|s| s.expires_ms.is_none()) {
                        secrets.push(StoredSecret {
                            secret: cur.secret,
                            expires_ms: Some(until),
                        });
                    }
                    ep.updated_at = now;
                    PgStore::save_endpoint(&mut tx, project, &ep, &secrets).await?;
                    Ok::<_, Error>(ep)
                })?;
                self.commit(tx)?;
                Ok(ep)
            }
        }
    }

    fn event_secrets(&self, project: &Uuid, id: &Uuid) -> Result<Vec<String>> {
        let row = self
            .block(
                sqlx::query("SELECT secrets FROM event_endpoints WHERE project = $1 AND id = $2")
                    .bind(project)
                    .bind(id)
                    .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        let Some(row) = row else {
            return Ok(vec![]);
        };
        let secrets: Vec<StoredSecret> = doc_of(&row, "secrets")?;
        let now = Timestamp::now().millis();
        Ok(secrets
            .into_iter()
            .filter(|s| s.expires_ms.is_none_or(|e| e > now))
            .map(|s| s.secret)
            .collect())
    }

    fn due_events(&self, now_ms: i64, limit: usize, skip: &[Uuid]) -> Result<Vec<OutboxEvent>> {
        // The first entry still waiting per (endpoint, resource), if due and
        // not leased to a live node (a resource's next event waits while its
        // first is being sent, on any node), leased to this node. Entries
        // this node leased for an endpoint it is not serving (`skip` lists
        // those it is) are its own leftovers (their attempt's record
        // failed): taken again.
        let rows = self
            .block(
                sqlx::query(
                    "WITH first AS (
                         SELECT DISTINCT ON (o.project, o.endpoint, o.resource) o.project, o.endpoint, o.seq
                         FROM outbox o
                         JOIN event_endpoints e ON e.project = o.project AND e.id = o.endpoint
                         WHERE e.enabled AND NOT (o.endpoint = ANY($2))
                         ORDER BY o.project, o.endpoint, o.resource, o.seq
                     ), pick AS (
                         SELECT o.project, o.endpoint, o.seq FROM outbox o
                         JOIN first f ON f.project = o.project AND f.endpoint = o.endpoint AND f.seq = o.seq
                         WHERE o.due_ms <= $1
                           AND (o.lease_until IS NULL OR o.lease_until <= $1 OR o.lease_owner = $4)
                         ORDER BY o.seq LIMIT $3
                         FOR UPDATE OF o SKIP LOCKED
                     )
                     UPDATE outbox o SET lease_owner = $4, lease_until = $1 + $5
                     FROM pick p
                     WHERE o.project = p.project AND o.endpoint = p.endpoint AND o.seq = p.seq
                     RETURNING o.*",
                )
                .bind(now_ms)
                .bind(skip)
                .bind(limit as i64)
                .bind(self.node())
                .bind(self.lease_ms())
                .fetch_all(self.pool()),
            )
            .map_err(db_err)?;
        let mut rows = rows;
        rows.sort_by_key(|r| r.get::<i64, _>("seq"));
        rows.into_iter()
            .map(|r| {
                Ok(OutboxEvent {
                    project: r.get("project"),
                    endpoint: r.get("endpoint"),
                    seq: r.get::<i64, _>("seq") as u64,
                    id: r.get("id"),
                    event_type: event_type(r.get("event_type"))?,
                    resource: r.get("resource"),
                    body: r.get::<String, _>("body").into_bytes(),
                    attempts: r.get::<i32, _>("attempts") as u32,
                    first_attempt_ms: r.get("first_ms"),
                    due_ms: r.get("due_ms"),
                })
            })
            .collect()
    }

    fn record_event_attempts(
        &self, done: &[(OutboxEvent, EventAttempt, AttemptNext)],
    ) -> Result<()> {
        if done.is_empty() {
            return Ok(());
        }
        let mut tx = self.begin()?;
        self.block(async {
            // Under the endpoints' row locks (in key order), so an endpoint
            // deleted meanwhile gets no attempt and no outbox entry back.
            let keys: BTreeSet<(Uuid, Uuid)> =
                done.iter().map(|(e, _, _)| (e.project, e.endpoint)).collect();
            let (ps, es): (Vec<Uuid>, Vec<Uuid>) = keys.into_iter().unzip();
            let rows = sqlx::query(
                "SELECT project, id FROM event_endpoints
                 WHERE (project, id) IN (SELECT * FROM UNNEST($1::uuid[], $2::uuid[]))
                 ORDER BY project, id FOR UPDATE",
            )
            .bind(&ps)
            .bind(&es)
            .fetch_all(&mut *tx)
            .await
            .map_err(db_err)?;
            let live: BTreeSet<(Uuid, Uuid)> = rows
                .into_iter()
                .map(|r| (r.get("project"), r.get("id")))
                .collect();
            let (mut ap, mut ae, mut aid, mut adoc) = (vec![], vec![], vec![], vec![]);
            let (mut dp, mut de, mut ds) = (vec![], vec![], vec![]);
            let (mut rp, mut re, mut rs, mut ra, mut rf, mut rd) =
                (vec![], vec![], vec![], vec![], vec![], vec![]);
            let mut give_up: HashMap<(Uuid, Uuid), String> = HashMap::new();
            for (e, a, next) in done {
                if !live.contains(&(e.project, e.endpoint)) {
                    continue;
                }
                ap.push(e.project);
                ae.push(e.endpoint);
                aid.push(a.id);
                adoc.push(to_doc(a));
                match next {
                    AttemptNext::Done => {
                        dp.push(e.project);
                        de.push(e.endpoint);
                        ds.push(e.seq as i64);
                    }
                    AttemptNext::Retry(at) => {
                        rp.push(e.project);
                        re.push(e.endpoint);
                        rs.push(e.seq as i64);
                        ra.push(e.attempts as i32 + 1);
                        rf.push(e.first_attempt_ms.unwrap_or(a.created_at.millis()));
                        rd.push(*at);
                    }
                    AttemptNext::GiveUp(reason) => {
                        give_up.insert((e.project, e.endpoint), reason.clone());
                    }
                }
            }
            sqlx::query(
                "INSERT INTO event_attempts (project, endpoint, id, doc)
                 SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::uuid[], $4::jsonb[])
                 ON CONFLICT DO NOTHING",
            )
            .bind(&ap)
            .bind(&ae)
            .bind(&aid)
            .bind(&adoc)
            .execute(&mut *tx)
            .await
            .map_err(db_err)?;
            // Only entries this node still holds: one whose lease was taken
            // over is the new holder's to record (it sends it again, with
            // the same `webhook-id`).
            sqlx::query(
                "DELETE FROM outbox
                 WHERE (project, endpoint, seq) IN (SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::int8[]))
                   AND lease_owner IS NOT DISTINCT FROM $4",
            )
            .bind(&dp)
            .bind(&de)
            .bind(&ds)
            .bind(self.node())
            .execute(&mut *tx)
            .await
            .map_err(db_err)?;
            sqlx::query(
                "UPDATE outbox o SET attempts = r.a, first_ms = r.f, due_ms = r.d,
                     lease_owner = NULL, lease_until = NULL
                 FROM UNNEST($1::uuid[], $2::uuid[], $3::int8[], $4::int4[], $5::int8[], $6::int8[])
                     AS r (p, e, s, a, f, d)
                 WHERE o.project = r.p AND o.endpoint = r.e AND o.seq = r.s
                   AND o.lease_owner IS NOT DISTINCT FROM $7",
            )
            .bind(&rp)
            .bind(&re)
            .bind(&rs)
            .bind(&ra)
            .bind(&rf)
            .bind(&rd)
            .bind(self.node())
            .execute(&mut *tx)
            .await
            .map_err(db_err)?;
            // Endpoints given up on: disabled with the reason, outbox emptied
            // (their events stay in the log, for `replay`).
            let now = Timestamp::now();
            for ((p, id), reason) in give_up {
                sqlx::query("DELETE FROM outbox WHERE project = $1 AND endpoint = $2")
                    .bind(p)
                    .bind(id)
                    .execute(&mut *tx)
                    .await
                    .map_err(db_err)?;
                let (mut ep, secrets) = PgStore::endpoint_for_update(&mut tx, &p, &id).await?;
                if ep.enabled {
                    ep.enabled = false;
                    ep.disabled_reason = Some(reason);
                    ep.updated_at = now;
                    PgStore::save_endpoint(&mut tx, &p, &ep, &secrets).await?;
                }
            }
            Ok::<_, Error>(())
        })?;
        self.commit(tx)
    }

    fn replay_events(&self, project: &Uuid, id: &Uuid, since: Timestamp) -> Result<usize> {
        let mut tx = self.begin()?;
        let n = self.block(async {
            let (ep, _) = PgStore::endpoint_for_update(&mut tx, project, id).await?;
            // `NULL`: every type
            let types: Option<Vec<&str>> = ep
                .event_types
                .as_ref()
                .map(|ts| ts.iter().map(|t| t.as_str()).collect());
            // the same ids and places: a receiver recognises a duplicate
            let r = sqlx::query(
                "INSERT INTO outbox (project, endpoint, seq, id, event_type, resource, body, attempts, first_ms, due_ms)
                 SELECT project, $2, seq, id, event_type, resource, body, 0, NULL, $5 FROM event_log
                 WHERE project = $1 AND created_ms >= $3 AND ($4::text[] IS NULL OR event_type = ANY($4))
                 ON CONFLICT (project, endpoint, seq) DO UPDATE
                     SET attempts = 0, first_ms = NULL, due_ms = EXCLUDED.due_ms",
            )
            .bind(project)
            .bind(id)
            .bind(since.millis())
            .bind(types)
            .bind(Timestamp::now().millis())
            .execute(&mut *tx)
            .await
            .map_err(db_err)?;
            Ok::<_, Error>(r.rows_affected() as usize)
        })?;
        self.commit(tx)?;
        Ok(n)
    }

    fn notification_trace(&self, project: &Uuid, id: &Uuid) -> Result<Vec<TraceEntry>> {
        let rows = self
            .block(
                sqlx::query(
                    "SELECT entries, part FROM trace WHERE project = $1 AND notification_id = $2 ORDER BY seq",
                )
                .bind(project)
                .bind(id)
                .fetch_all(self.pool()),
            )
            .map_err(db_err)?;
        let mut out = vec![];
        for r in rows {
            // a part is in the compact encoding, or, written by an earlier
            // Herald, JSON (migration 0005)
            match r.get::<Option<Vec<u8>>, _>("part") {
                Some(part) => out.extend(trace_codec::decode(&part)?),
                None => {
                    let part: Vec<TraceEntry> = doc_of(&r, "entries")?;
                    out.extend(part);
                }
            }
        }
        Ok(out)
    }
}

/// Reads of the trait `RecordRepo` answers (`lookups.rs`).
impl PgStore {
    pub fn list_event_endpoints(
        &self, project: &Uuid, req: &PageReq,
    ) -> Result<Page<WebhookEndpoint>> {
        let p = *project;
        self.page(
            &|q| {
                q.push("SELECT id, doc FROM event_endpoints WHERE project = ");
                q.push_bind(p);
            },
            "id",
            req,
            &|r| Ok((r.get("id"), doc_of(&r, "doc")?)),
        )
    }

    pub fn delete_event_endpoint(&self, project: &Uuid, id: &Uuid) -> Result<()> {
        let mut tx = self.begin()?;
        self.block(async {
            let gone = sqlx::query("DELETE FROM event_endpoints WHERE project = $1 AND id = $2")
                .bind(project)
                .bind(id)
                .execute(&mut *tx)
                .await
                .map_err(db_err)?;
            if gone.rows_affected() == 0 {
                return Err(Refusal::missing("webhook_endpoint", id));
            }
            // attempts go by their foreign key; the outbox has none
            sqlx::query("DELETE FROM outbox WHERE project = $1 AND endpoint = $2")
                .bind(project)
                .bind(id)
                .execute(&mut *tx)
                .await
                .map_err(db_err)?;
            Ok(())
        })?;
        self.commit(tx)
    }

    pub fn list_event_attempts(
        &self, project: &Uuid, id: &Uuid, req: &PageReq,
    ) -> Result<Page<EventAttempt>> {
        let (p, e) = (*project, *id);
        self.page(
            &|q| {
                q.push("SELECT id, doc FROM event_attempts WHERE project = ");
                q.push_bind(p);
                q.push(" AND endpoint = ").push_bind(e);
            },
            "id",
            req,
            &|r| Ok((r.get("id"), doc_of(&r, "doc")?)),
        )
    }
}
