//! Runs, notifications, deliveries, the delivery queue and users' feeds on
//! PostgreSQL, with the sled backend's semantics:
//!
//! - `commit_run` stores a run with its users, notifications, deliveries,
//!   queue rows, in-app feed entries and their events, and its idempotent
//!   202, in one transaction, under the users' advisory locks; a user not as
//!   staged makes it `Stale` (rolled back), and so does a throttle counter
//!   not as staged (read under the same locks). Notifications, deliveries,
//!   queue rows, throttle counters and trace entries go in one multi-row
//!   insert each (`UNNEST`), and so do the outbound events of what was
//!   settled at once and `flow_run.accepted` (`events::Outbound`).
//! - A topic run's chunk is one transaction too; the run's `pending` count
//!   is changed under its row lock, taken by the chunk's last statement.
//! - Settling locks the notifications of its deliveries (`FOR UPDATE`, in
//!   key order) and applies `delivery::settle`'s rules, counting their runs
//!   down in its last statements (each run's row held from there to the
//!   commit, not for the whole settle),
//!   with the `delivery.*` and `notification.processed` events and the
//!   attempts' trace entries in the same transaction. In-app deliveries
//!   whose condition over earlier steps is false are skipped, not fed.
//! - Feed changes write their `feed_entry.*` events, and push subscription
//!   removals theirs, in the transaction of the change.
//! - A user's feed is serialised by the lock on its `feed_state` row (its
//!   counts and latest `seq`); an event's `seq` is taken and logged in the
//!   same transaction as the feed change. Feed flags' times live in the
//!   delivery's record, so a delivery read anywhere shows them.
//! - The queue is rows `(project, delivery, channel type, due)`, which a
//!   node could claim with a lease once several share the work.

use super::batches::put_batches;
use super::catalog::put_idempotent_new;
use super::events::{users_of, Outbound, Traces};
use super::page::id_floor;
use super::throttles::{put_throttles, throttles_stale};
use super::users::{lock_all, put_user, user_by_ext_in, user_lock};
use super::{db_err, doc_of, doc_of_opt, to_doc, PgStore};
use crate::delivery::frames::{actor_json, feed_frame_with, FeedEvent};
use crate::delivery::settle;
use crate::delivery::tally::Tally;
use crate::error::{Error, Result};
use crate::events::EventType;
use crate::model::{
    notification_of, ChannelType, Delivery, DeliveryStatus, FeedCounts, FlowRun, Notification,
    Timestamp, User,
};
use crate::rules::{self, feed};
use crate::storage::*;
use crate::store::trace_codec;
use serde_json::Value;
use sqlx::{PgConnection, Row};
use std::collections::{BTreeSet, HashMap};
use uuid::Uuid;

/// Events kept per user at least (and any younger than `KEEP_MS`), as on
/// the embedded store: enough for a reconnect to catch up.
const KEEP_EVENTS: i64 = 1000;
const KEEP_MS: i64 = 24 * 3600 * 1000;

pub(super) use crate::delivery::feed_flags::count_delta;
use crate::delivery::feed_flags::{flags_of, READ, SEEN};

/// The condition on `f.flags` of a feed filter.
fn filter_sql(f: FeedFilter) -> &'static str {
    match f {
        FeedFilter::All => "f.flags & 4 = 0",
        FeedFilter::Unread => "f.flags & 4 = 0 AND f.flags & 2 = 0",
        FeedFilter::Unseen => "f.flags & 4 = 0 AND f.flags & 1 = 0",
        FeedFilter::Read => "f.flags & 4 = 0 AND f.flags & 2 <> 0",
        FeedFilter::Archived => "f.flags & 4 <> 0",
    }
}

/// A delivery's `updated_at` follows its latest feed flag change.
fn touch(d: &mut Delivery) {
    if let Some(t) = [d.seen_at, d.read_at, d.clicked_at, d.archived_at]
        .into_iter()
        .flatten()
        .max()
    {
        d.updated_at = d.updated_at.max(t);
    }
}

/// Bounds on ids for "created after `a`" and "created before `b`" (an id's
/// time is its millisecond), as `(lowest id included, lowest id excluded)`.
fn id_range(a: &Option<Timestamp>, b: &Option<Timestamp>) -> (Option<Uuid>, Option<Uuid>) {
    let lo = a.map(|a| id_floor(a.millis() + 1));
    let hi = b.map(|b| {
        let whole = b.0.timestamp_subsec_nanos() % 1_000_000 == 0;
        id_floor(b.millis() + i64::from(!whole))
    });
    (lo, hi)
}

/// A page of a list that has no items (with the boundary it was asked from).
fn empty_page<T>(req: &PageReq) -> Page<T> {
    Page {
        items: vec![],
        first_key: req.after.clone(),
        last_key: req.before.clone(),
        has_more_after: false,
        has_more_before: false,
    }
}

// ---------------------------------------------------------------- writes

/// Inserts notifications and all their deliveries, one statement each.
async fn insert_notifications(
    conn: &mut PgConnection,
    project: &Uuid,
    ns: &[StagedNotification],
) -> Result<()> {
    if ns.is_empty() {
        return Ok(());
    }
    let mut ids = Vec::with_capacity(ns.len());
    let mut runs = Vec::with_capacity(ns.len());
    let mut topics: Vec<Option<String>> = Vec::with_capacity(ns.len());
    let mut recipients = Vec::with_capacity(ns.len());
    let mut processed = Vec::with_capacity(ns.len());
    let mut docs = Vec::with_capacity(ns.len());
    let mut d_ids = vec![];
    let mut d_nids = vec![];
    let mut d_recipients = vec![];
    let mut d_status: Vec<String> = vec![];
    let mut d_types: Vec<i16> = vec![];
    let mut d_channels = vec![];
    let mut d_docs = vec![];
    for sn in ns {
        ids.push(sn.n.id);
        runs.push(sn.n.flow_run_id);
        topics.push(sn.n.topic.clone());
        recipients.push(sn.n.recipient_id);
        processed.push(sn.n.processed);
        docs.push(to_doc(&sn.n));
        for d in &sn.deliveries {
            d_ids.push(d.id);
            d_nids.push(d.notification_id);
            d_recipients.push(d.recipient_id);
            d_status.push(d.status.as_str().to_string());
            d_types.push(i16::from(d.channel_type.index()));
            d_channels.push(d.channel_id);
            d_docs.push(to_doc(d));
        }
    }
    sqlx::query(
        "INSERT INTO notifications (project, id, run_id, topic, recipient, processed, doc)
         SELECT $1, * FROM UNNEST($2::uuid[], $3::uuid[], $4::text[], $5::uuid[], $6::bool[], $7::jsonb[])",
    )
    .bind(project)
    .bind(&ids)
    .bind(&runs)
    .bind(&topics)
    .bind(&recipients)
    .bind(&processed)
    .bind(&docs)
    .execute(&mut *conn)
    .await
    .map_err(db_err)?;
    if !d_ids.is_empty() {
        sqlx::query(
            "INSERT INTO deliveries (project, id, notification_id, recipient, status, channel_type, channel_id, doc)
             SELECT $1, * FROM UNNEST($2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::int2[], $7::uuid[], $8::jsonb[])",
        )
        .bind(project)
        .bind(&d_ids)
        .bind(&d_nids)
        .bind(&d_recipients)
        .bind(&d_status)
        .bind(&d_types)
        .bind(&d_channels)
        .bind(&d_docs)
        .execute(&mut *conn)
        .await
        .map_err(db_err)?;
    }
    Ok(())
}

/// Takes the locks of the throttle counters a run or topic chunk counts in
/// (`batches::slot_lock`): runs and chunks both check and write them under
/// these, so neither lets a run too many through.
async fn lock_slots(conn: &mut PgConnection, project: &Uuid, ts: &[&ThrottleWrite]) -> Result<()> {
    if ts.is_empty() {
        return Ok(());
    }
    let keys = ts
        .iter()
        .map(|t| super::batches::slot_lock(project, &t.key))
        .collect();
    lock_all(conn, keys).await.map_err(db_err)
}

/// Writes what comes with staged notifications besides their records (after
/// them): the throttle counters they count in and their trace entries; the
/// events of what was settled at once go into `out`.
async fn notification_extras(
    conn: &mut PgConnection,
    project: &Uuid,
    run: &FlowRun,
    ns: &[StagedNotification],
    out: &mut Outbound,
) -> Result<()> {
    put_throttles(conn, project, ns).await?;
    // The users of the notifications whose own events are staged (the
    // transaction's upserts included), only when an endpoint wants them.
    let users = if out.wants_notification(project) {
        let own = ns
            .iter()
            .filter(|sn| crate::events::notification_events(&sn.n).next().is_some())
            .map(|sn| (project, &sn.n));
        users_of(conn, own).await?
    } else {
        Default::default()
    };
    let mut traces = Traces::default();
    for sn in ns {
        traces.add_part(
            project,
            &sn.n.id,
            trace_codec::encode_accepted(&sn.trace, &sn.deliveries),
        );
        out.stage_accepted(project, &sn.n, &sn.deliveries, &run.data, &users);
    }
    traces.flush(conn).await
}

/// Puts queue rows (a row already there is moved to its new due time and
/// keeps its lease); with `lease`, new rows are leased to that node, each
/// until its time in the list (`PgStore::lease_for`).
async fn put_queue(
    conn: &mut PgConnection,
    items: &[QueueItem],
    lease: Option<(Uuid, &[i64])>,
) -> Result<()> {
    if items.is_empty() {
        return Ok(());
    }
    let projects: Vec<Uuid> = items.iter().map(|q| q.project).collect();
    let ids: Vec<Uuid> = items.iter().map(|q| q.delivery_id).collect();
    let types: Vec<i16> = items
        .iter()
        .map(|q| i16::from(q.channel_type.index()))
        .collect();
    let due: Vec<i64> = items.iter().map(|q| q.due_ms.max(0)).collect();
    let (owner, untils) = match lease {
        Some((node, untils)) => (Some(node), untils.to_vec()),
        None => (None, vec![0; items.len()]),
    };
    sqlx::query(
        "INSERT INTO queue (project, delivery_id, channel_type, due_ms, lease_owner, lease_until)
         SELECT p, d, t, due, $5::uuid, CASE WHEN $5::uuid IS NULL THEN NULL ELSE u END
         FROM UNNEST($1::uuid[], $2::uuid[], $3::int2[], $4::int8[], $6::int8[]) AS x (p, d, t, due, u)
         ON CONFLICT (project, delivery_id) DO UPDATE
             SET channel_type = EXCLUDED.channel_type, due_ms = EXCLUDED.due_ms,
                 lease_owner = COALESCE(EXCLUDED.lease_owner, queue.lease_owner),
                 lease_until = CASE WHEN EXCLUDED.lease_owner IS NULL
                     THEN queue.lease_until ELSE EXCLUDED.lease_until END",
    )
    .bind(&projects)
    .bind(&ids)
    .bind(&types)
    .bind(&due)
    .bind(owner)
    .bind(&untils)
    .execute(conn)
    .await
    .map_err(db_err)?;
    Ok(())
}

/// Deletes the queue rows of `keys` (project, delivery) in one statement.
async fn unqueue_all(conn: &mut PgConnection, keys: &[(Uuid, Uuid)]) -> Result<()> {
    if keys.is_empty() {
        return Ok(());
    }
    let (ps, ds): (Vec<Uuid>, Vec<Uuid>) = keys.iter().copied().unzip();
    sqlx::query(
        "DELETE FROM queue
         WHERE (project, delivery_id) IN (SELECT * FROM UNNEST($1::uuid[], $2::uuid[]))",
    )
    .bind(&ps)
    .bind(&ds)
    .execute(conn)
    .await
    .map_err(db_err)?;
    Ok(())
}

/// `save_delivery` for many (each once): one statement.
async fn save_deliveries<'a>(
    conn: &mut PgConnection,
    ds: impl IntoIterator<Item = (Uuid, &'a Delivery)>,
) -> Result<()> {
    let (mut ps, mut ids, mut sts, mut docs) = (vec![], vec![], vec![], vec![]);
    for (p, d) in ds {
        ps.push(p);
        ids.push(d.id);
        sts.push(d.status.as_str().to_string());
        docs.push(to_doc(d));
    }
    if ps.is_empty() {
        return Ok(());
    }
    sqlx::query(
        "UPDATE deliveries AS d SET status = x.s, doc = x.doc
         FROM UNNEST($1::uuid[], $2::uuid[], $3::text[], $4::jsonb[]) AS x (p, id, s, doc)
         WHERE d.project = x.p AND d.id = x.id",
    )
    .bind(&ps)
    .bind(&ids)
    .bind(&sts)
    .bind(&docs)
    .execute(conn)
    .await
    .map_err(db_err)?;
    Ok(())
}

async fn save_delivery(conn: &mut PgConnection, project: &Uuid, d: &Delivery) -> Result<()> {
    sqlx::query("UPDATE deliveries SET status = $3, doc = $4 WHERE project = $1 AND id = $2")
        .bind(project)
        .bind(d.id)
        .bind(d.status.as_str())
        .bind(to_doc(d))
        .execute(conn)
        .await
        .map_err(db_err)?;
    Ok(())
}

/// Locks the feeds of `users` (in key order, so two transactions cannot
/// deadlock) and reads their counts and latest `seq`: two statements for
/// all of them (a topic chunk's in-app deliveries lock a feed per user).
pub(super) async fn lock_feeds(
    conn: &mut PgConnection,
    users: impl IntoIterator<Item = (Uuid, Uuid)>,
) -> Result<HashMap<(Uuid, Uuid), FeedCounts>> {
    let keys: BTreeSet<(Uuid, Uuid)> = users.into_iter().collect();
    let mut out = HashMap::with_capacity(keys.len());
    if keys.is_empty() {
        return Ok(out);
    }
    let (ps, us): (Vec<Uuid>, Vec<Uuid>) = keys.iter().copied().unzip();
    sqlx::query(
        "INSERT INTO feed_state (project, user_id, seq, unread, unseen)
         SELECT p, u, 0, 0, 0 FROM UNNEST($1::uuid[], $2::uuid[]) AS x (p, u)
         ON CONFLICT DO NOTHING",
    )
    .bind(&ps)
    .bind(&us)
    .execute(&mut *conn)
    .await
    .map_err(db_err)?;
    // Rows are locked as the sort returns them: in key order.
    let rows = sqlx::query(
        "SELECT project, user_id, seq, unread, unseen FROM feed_state
         WHERE (project, user_id) IN (SELECT * FROM UNNEST($1::uuid[], $2::uuid[]))
         ORDER BY project, user_id FOR UPDATE",
    )
    .bind(&ps)
    .bind(&us)
    .fetch_all(&mut *conn)
    .await
    .map_err(db_err)?;
    for r in rows {
        out.insert(
            (r.get("project"), r.get("user_id")),
            FeedCounts {
                seq: r.get::<i64, _>("seq") as u64,
                unread: r.get::<i64, _>("unread") as u64,
                unseen: r.get::<i64, _>("unseen") as u64,
            },
        );
    }
    if out.len() != keys.len() {
        return Err(Error::internal(format!(
            "feed state: {} of {} feeds locked",
            out.len(),
            keys.len()
        )));
    }
    Ok(out)
}

async fn save_counts(conn: &mut PgConnection, p: &Uuid, u: &Uuid, c: &FeedCounts) -> Result<()> {
    sqlx::query(
        "UPDATE feed_state SET seq = $3, unread = $4, unseen = $5
         WHERE project = $1 AND user_id = $2",
    )
    .bind(p)
    .bind(u)
    .bind(c.seq as i64)
    .bind(c.unread as i64)
    .bind(c.unseen as i64)
    .execute(conn)
    .await
    .map_err(db_err)?;
    Ok(())
}

/// Takes the user's next `seq` and logs the event's frame with it (in the
/// caller's transaction); old events beyond what is kept go.
async fn log_event(
    conn: &mut PgConnection,
    p: &Uuid,
    u: &Uuid,
    kind: FeedEvent,
    entry_json: &str,
    counts: &mut FeedCounts,
) -> Result<Frame> {
    counts.seq += 1;
    let (frame, meta) = feed_frame_with(kind.as_str(), counts.seq, entry_json, counts);
    let now = Timestamp::now().millis();
    sqlx::query(
        "INSERT INTO feed_events (project, user_id, seq, frame, created_ms) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(p)
    .bind(u)
    .bind(counts.seq as i64)
    .bind(&*frame)
    .bind(now)
    .execute(&mut *conn)
    .await
    .map_err(db_err)?;
    if counts.seq as i64 > KEEP_EVENTS {
        sqlx::query(
            "DELETE FROM feed_events WHERE project = $1 AND user_id = $2
             AND seq <= $3 AND created_ms < $4",
        )
        .bind(p)
        .bind(u)
        .bind(counts.seq as i64 - KEEP_EVENTS)
        .bind(now - KEEP_MS)
        .execute(&mut *conn)
        .await
        .map_err(db_err)?;
    }
    Ok((counts.seq, frame, meta))
}

async fn feed_insert(
    conn: &mut PgConnection,
    p: &Uuid,
    d: &Delivery,
    counts: &mut FeedCounts,
) -> Result<()> {
    let f = flags_of(d);
    sqlx::query(
        "INSERT INTO feed (project, user_id, delivery_id, flags) VALUES ($1, $2, $3, $4)
         ON CONFLICT (project, user_id, delivery_id) DO UPDATE SET flags = EXCLUDED.flags",
    )
    .bind(p)
    .bind(d.recipient_id)
    .bind(d.id)
    .bind(i16::from(f))
    .execute(conn)
    .await
    .map_err(db_err)?;
    count_delta(counts, f, 1);
    Ok(())
}

/// Writes in-app entries settled with a run into their users' feeds, each
/// with its `feed_entry.created` event: the frames per user, in `seq` order.
/// The counts and `seq`s are worked out here, under the feeds' locks, and
/// written with one statement per table for the whole chunk (entries,
/// events, the trim of old events, the counts): a topic chunk's round trips
/// do not grow with its recipients.
async fn stage_feeds(
    conn: &mut PgConnection,
    p: &Uuid,
    feed: Vec<(Delivery, String)>,
) -> Result<UserFrames> {
    if feed.is_empty() {
        return Ok(vec![]);
    }
    let mut counts = lock_feeds(conn, feed.iter().map(|(d, _)| (*p, d.recipient_id))).await?;
    let mut frames: UserFrames = vec![];
    let mut at: HashMap<Uuid, usize> = HashMap::new();
    let now = Timestamp::now().millis();
    let n = feed.len();
    let (mut e_users, mut e_deliveries, mut e_flags) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    let (mut v_users, mut v_seqs, mut v_frames) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for (d, json) in feed {
        let u = d.recipient_id;
        let i = *at.entry(u).or_insert_with(|| {
            frames.push((*p, u, vec![]));
            frames.len() - 1
        });
        let c = counts.get_mut(&(*p, u)).expect("locked above");
        let f = flags_of(&d);
        e_users.push(u);
        e_deliveries.push(d.id);
        e_flags.push(i16::from(f));
        count_delta(c, f, 1);
        c.seq += 1;
        let (frame, meta) = feed_frame_with(FeedEvent::Created.as_str(), c.seq, &json, c);
        v_users.push(u);
        v_seqs.push(c.seq as i64);
        v_frames.push(frame.to_string());
        frames[i].2.push((c.seq, frame, meta));
    }
    sqlx::query(
        "INSERT INTO feed (project, user_id, delivery_id, flags)
         SELECT $1, * FROM UNNEST($2::uuid[], $3::uuid[], $4::int2[])
         ON CONFLICT (project, user_id, delivery_id) DO UPDATE SET flags = EXCLUDED.flags",
    )
    .bind(p)
    .bind(&e_users)
    .bind(&e_deliveries)
    .bind(&e_flags)
    .execute(&mut *conn)
    .await
    .map_err(db_err)?;
    sqlx::query(
        "INSERT INTO feed_events (project, user_id, seq, frame, created_ms)
         SELECT $1, u, s, f, $5 FROM UNNEST($2::uuid[], $3::int8[], $4::text[]) AS t(u, s, f)",
    )
    .bind(p)
    .bind(&v_users)
    .bind(&v_seqs)
    .bind(&v_frames)
    .bind(now)
    .execute(&mut *conn)
    .await
    .map_err(db_err)?;
    // old events beyond what is kept go, as `log_event` does one by one
    let (t_users, t_upto): (Vec<Uuid>, Vec<i64>) = counts
        .iter()
        .filter(|(_, c)| c.seq as i64 > KEEP_EVENTS)
        .map(|((_, u), c)| (*u, c.seq as i64 - KEEP_EVENTS))
        .unzip();
    if !t_users.is_empty() {
        sqlx::query(
            "DELETE FROM feed_events e USING UNNEST($2::uuid[], $3::int8[]) AS t(u, upto)
             WHERE e.project = $1 AND e.user_id = t.u AND e.seq <= t.upto AND e.created_ms < $4",
        )
        .bind(p)
        .bind(&t_users)
        .bind(&t_upto)
        .bind(now - KEEP_MS)
        .execute(&mut *conn)
        .await
        .map_err(db_err)?;
    }
    let mut c_users = Vec::with_capacity(counts.len());
    let (mut c_seq, mut c_unread, mut c_unseen) = (vec![], vec![], vec![]);
    for ((_, u), c) in &counts {
        c_users.push(*u);
        c_seq.push(c.seq as i64);
        c_unread.push(c.unread as i64);
        c_unseen.push(c.unseen as i64);
    }
    sqlx::query(
        "UPDATE feed_state s SET seq = t.seq, unread = t.unread, unseen = t.unseen
         FROM UNNEST($2::uuid[], $3::int8[], $4::int8[], $5::int8[]) AS t(u, seq, unread, unseen)
         WHERE s.project = $1 AND s.user_id = t.u",
    )
    .bind(p)
    .bind(&c_users)
    .bind(&c_seq)
    .bind(&c_unread)
    .bind(&c_unseen)
    .execute(&mut *conn)
    .await
    .map_err(db_err)?;
    Ok(frames)
}

async fn actor_of(conn: &mut PgConnection, p: &Uuid, d: &Delivery) -> Result<Value> {
    let Some(a) = d.actor_id else {
        return Ok(Value::Null);
    };
    let row = sqlx::query("SELECT doc FROM users WHERE project = $1 AND id = $2")
        .bind(p)
        .bind(a)
        .fetch_optional(conn)
        .await
        .map_err(db_err)?;
    let user: Option<User> = row.map(|r| doc_of(&r, "doc")).transpose()?;
    Ok(actor_json(user.as_ref()))
}

fn entry_json(d: &Delivery, actor: &Value) -> Result<String> {
    serde_json::to_string(&d.feed_entry(actor)).map_err(|e| Error::internal(e.to_string()))
}

// ---------------------------------------------------------------- settling

/// Deliveries being settled with their notifications, locked.
struct Settling {
    /// `(project, notification, its deliveries)`.
    recs: Vec<(Uuid, Notification, Vec<Delivery>)>,
    /// Each item's queue entry, outcome, record and delivery index.
    items: Vec<(QueueItem, Outcome, usize, usize)>,
}

impl Settling {
    fn delivery(&self, i: usize) -> &Delivery {
        let (_, _, ri, di) = &self.items[i];
        &self.recs[*ri].2[*di]
    }
}

/// Locks the notifications of `items` (in key order) and reads them with
/// their deliveries; items whose notification or delivery is gone are left
/// out, as on the embedded store. With `held`, so are attempts whose queue
/// row that node no longer holds (its lease was taken over: the new holder
/// records its own attempt); a cancellation is recorded whoever holds it.
async fn load_for_finish(
    conn: &mut PgConnection,
    mut items: Vec<(QueueItem, Outcome)>,
    held: Option<Uuid>,
) -> Result<Settling> {
    let keys: BTreeSet<(Uuid, Uuid)> = items
        .iter()
        .map(|(q, _)| (q.project, notification_of(&q.delivery_id)))
        .collect();
    let (ps, ns): (Vec<Uuid>, Vec<Uuid>) = keys.iter().copied().unzip();
    let rows = sqlx::query(
        "SELECT project, id, doc FROM notifications
         WHERE (project, id) IN (SELECT * FROM UNNEST($1::uuid[], $2::uuid[]))
         ORDER BY project, id FOR UPDATE",
    )
    .bind(&ps)
    .bind(&ns)
    .fetch_all(&mut *conn)
    .await
    .map_err(db_err)?;
    if let Some(node) = held {
        // after the notifications' locks, as a cancellation takes them
        let check: BTreeSet<(Uuid, Uuid)> = items
            .iter()
            .filter(|(_, o)| !matches!(o, Outcome::Canceled(_)))
            .map(|(q, _)| (q.project, q.delivery_id))
            .collect();
        let (cps, cds): (Vec<Uuid>, Vec<Uuid>) = check.iter().copied().unzip();
        let mine: BTreeSet<(Uuid, Uuid)> = sqlx::query(
            "SELECT project, delivery_id FROM queue
             WHERE (project, delivery_id) IN (SELECT * FROM UNNEST($1::uuid[], $2::uuid[]))
               AND lease_owner = $3
             ORDER BY project, delivery_id FOR UPDATE",
        )
        .bind(&cps)
        .bind(&cds)
        .bind(node)
        .fetch_all(&mut *conn)
        .await
        .map_err(db_err)?
        .into_iter()
        .map(|r| (r.get("project"), r.get("delivery_id")))
        .collect();
        items.retain(|(q, o)| {
            matches!(o, Outcome::Canceled(_)) || mine.contains(&(q.project, q.delivery_id))
        });
    }
    let mut recs: Vec<(Uuid, Notification, Vec<Delivery>)> = Vec::with_capacity(rows.len());
    let mut at: HashMap<(Uuid, Uuid), usize> = HashMap::new();
    for r in rows {
        let p: Uuid = r.get("project");
        let n: Notification = doc_of(&r, "doc")?;
        at.insert((p, n.id), recs.len());
        recs.push((p, n, vec![]));
    }
    let rows = sqlx::query(
        "SELECT project, doc FROM deliveries
         WHERE (project, notification_id) IN (SELECT * FROM UNNEST($1::uuid[], $2::uuid[]))
         ORDER BY project, id",
    )
    .bind(&ps)
    .bind(&ns)
    .fetch_all(&mut *conn)
    .await
    .map_err(db_err)?;
    for r in rows {
        let p: Uuid = r.get("project");
        let d: Delivery = doc_of(&r, "doc")?;
        if let Some(&i) = at.get(&(p, d.notification_id)) {
            recs[i].2.push(d);
        }
    }
    // Their runs are not locked here: `count_down` changes each run's
    // count last, so a run's row is held only from that statement to the
    // commit, and every transaction keeps one order (notifications, feeds,
    // runs) so none waits on another in a cycle.
    let mut loaded = vec![];
    for (q, o) in items {
        let Some(&ri) = at.get(&(q.project, notification_of(&q.delivery_id))) else {
            continue;
        };
        if let Some(di) = recs[ri].2.iter().position(|d| d.id == q.delivery_id) {
            loaded.push((q, o, ri, di));
        }
    }
    Ok(Settling {
        recs,
        items: loaded,
    })
}

/// Applies the outcomes: deliveries, their queue rows, notifications that
/// became processed and the runs they finish.
async fn stage_finish(
    store: &PgStore,
    conn: &mut PgConnection,
    settling: &mut Settling,
    now: Timestamp,
    out: &mut Outbound,
) -> Result<Finished> {
    let items = std::mem::take(&mut settling.items);
    let recs = &mut settling.recs;
    let mut written: Vec<Delivery> = Vec::with_capacity(items.len());
    let mut touched = vec![false; recs.len()];
    // trace entries per touched notification (index in `recs`), encoded as
    // they are made (`trace_codec::Writer`)
    let mut traces_of: Vec<trace_codec::Writer> = recs
        .iter()
        .map(|(p, _, _)| trace_codec::Writer::new(trace_codec::project_time(p)))
        .collect();
    let mut requeue = vec![];
    // Queue rows to delete and deliveries to write, each in one statement
    // after the loop (a round trip per row held the run's lock for as many
    // round trips as the batch has deliveries). Nothing in the loop reads
    // them back; the deletes go before `requeue`'s inserts, as they did.
    let mut unqueued: Vec<(Uuid, Uuid)> = vec![];
    let mut saved: BTreeSet<(usize, usize)> = BTreeSet::new();
    // The cancellation keys of the runs whose deliveries are canceled here
    // (a cancellation settles many of one run), each read once.
    let mut cancel_keys: HashMap<Uuid, Option<String>> = HashMap::new();
    for (q, o, ri, di) in items {
        let p = recs[ri].0;
        let d = &recs[ri].2[di];
        if d.status.is_final() {
            unqueued.push((q.project, q.delivery_id));
            continue;
        }
        let was_attempt = rules::settle::was_attempt(&o);
        let gate = rules::settle::gate_entry(&o, d, &recs[ri].2, &q.delivery_id, now);
        if let Some(e) = gate {
            traces_of[ri].push_entry(&e);
        }
        let d = &mut recs[ri].2[di];
        match settle::apply(d, &q, o, now) {
            Some(nq) => requeue.push(nq),
            None => unqueued.push((q.project, q.delivery_id)),
        }
        saved.insert((ri, di));
        out.stage_delivery(&p, d);
        if d.status == DeliveryStatus::Canceled {
            let run = recs[ri].1.flow_run_id;
            let key = match cancel_keys.get(&run) {
                Some(k) => k.clone(),
                None => {
                    // the key alone, not the run's whole document (its flow copy)
                    let k: Option<String> = sqlx::query_scalar(
                        "SELECT doc->>'cancellation_key' FROM flow_runs WHERE project = $1 AND id = $2",
                    )
                    .bind(p)
                    .bind(run)
                    .fetch_optional(&mut *conn)
                    .await
                    .map_err(db_err)?
                    .flatten();
                    cancel_keys.insert(run, k.clone());
                    k
                }
            };
            let d = &recs[ri].2[di];
            traces_of[ri].push_entry(&crate::trace::canceled(d, key.as_deref(), now));
        }
        let d = &recs[ri].2[di];
        let note = store.take_attempt_note(&d.id);
        crate::trace::settled_into(d, was_attempt, note, now, &mut traces_of[ri]);
        written.push(d.clone());
        touched[ri] = true;
    }
    unqueue_all(conn, &unqueued).await?;
    save_deliveries(
        conn,
        saved.iter().map(|&(ri, di)| (recs[ri].0, &recs[ri].2[di])),
    )
    .await?;
    put_queue(conn, &requeue, None).await?;
    let mut run_done: HashMap<(Uuid, Uuid), i64> = HashMap::new();
    let mut traces = Traces::default();
    let (mut nps, mut nids, mut nprocessed, mut ndocs) = (vec![], vec![], vec![], vec![]);
    // Notifications that became processed (index in `recs`), for their events.
    let mut done = vec![];
    for (ri, (((p, n, ds), t), mut trace)) in
        recs.iter_mut().zip(touched).zip(traces_of).enumerate()
    {
        if !t {
            continue;
        }
        if settle::notification_done(n, ds, now) {
            *run_done.entry((*p, n.flow_run_id)).or_default() += 1;
            if out.wants(p, EventType::NotificationProcessed) {
                done.push(ri);
            }
            crate::trace::processed_into(now, &mut trace);
        }
        traces.add_part(p, &n.id, trace.finish());
        nps.push(*p);
        nids.push(n.id);
        nprocessed.push(n.processed);
        ndocs.push(to_doc(&*n));
    }
    if !nps.is_empty() {
        // The touched notifications (locked since `load_for_finish`), in one statement.
        sqlx::query(
            "UPDATE notifications AS n SET processed = x.processed, doc = x.doc
             FROM UNNEST($1::uuid[], $2::uuid[], $3::bool[], $4::jsonb[]) AS x (p, id, processed, doc)
             WHERE n.project = x.p AND n.id = x.id",
        )
        .bind(&nps)
        .bind(&nids)
        .bind(&nprocessed)
        .bind(&ndocs)
        .execute(&mut *conn)
        .await
        .map_err(db_err)?;
    }
    if !done.is_empty() {
        stage_processed(conn, recs, &done, out).await?;
    }
    traces.flush(&mut *conn).await?;
    let runs_processed = count_down(conn, &run_done, now).await?;
    Ok((written, runs_processed))
}

/// The `notification.processed` events of the notifications of `recs` at
/// `done` (they just became processed), with their users and their runs'
/// data, each read once.
async fn stage_processed(
    conn: &mut PgConnection,
    recs: &[(Uuid, Notification, Vec<Delivery>)],
    done: &[usize],
    out: &mut Outbound,
) -> Result<()> {
    let users = users_of(conn, done.iter().map(|&ri| (&recs[ri].0, &recs[ri].1))).await?;
    let runs: BTreeSet<(Uuid, Uuid)> = done
        .iter()
        .map(|&ri| (recs[ri].0, recs[ri].1.flow_run_id))
        .collect();
    let (ps, ids): (Vec<Uuid>, Vec<Uuid>) = runs.into_iter().unzip();
    // the data alone, not the run's whole document (its flow copy)
    let rows = sqlx::query(
        "SELECT project, id, doc->'data' AS data FROM flow_runs
         WHERE (project, id) IN (SELECT * FROM UNNEST($1::uuid[], $2::uuid[]))",
    )
    .bind(&ps)
    .bind(&ids)
    .fetch_all(&mut *conn)
    .await
    .map_err(db_err)?;
    let mut data: HashMap<(Uuid, Uuid), Value> = HashMap::with_capacity(rows.len());
    for r in &rows {
        let d: Option<Value> = doc_of_opt(r, "data")?;
        data.insert((r.get("project"), r.get("id")), d.unwrap_or(Value::Null));
    }
    for &ri in done {
        let (p, n, ds) = &recs[ri];
        let d = data.get(&(*p, n.flow_run_id)).unwrap_or(&Value::Null);
        out.stage_notification(p, n, ds, d, &users);
    }
    Ok(())
}

/// Counts the runs of `done` (notifications that became processed, per
/// run) down, the last statement of a settle: one `UPDATE … RETURNING` per
/// run takes its row lock there, so the run's other settles and its topic
/// chunks wait for this one's commit only, not for its whole transaction.
/// A run's record is read and written back only when its count reached
/// zero (`settle::run_done` then decides whether it is processed: not
/// before its expansion is done). The runs processed.
async fn count_down(
    conn: &mut PgConnection,
    done: &HashMap<(Uuid, Uuid), i64>,
    now: Timestamp,
) -> Result<Vec<(Uuid, Uuid)>> {
    let mut runs_processed = vec![];
    // in key order, as every transaction takes several runs' rows
    let runs: BTreeSet<(Uuid, Uuid)> = done.keys().copied().collect();
    for (p, rid) in runs {
        let k = done[&(p, rid)];
        let Some(r) = sqlx::query(
            "UPDATE flow_runs SET pending = GREATEST(pending - $3, 0)
             WHERE project = $1 AND id = $2
             RETURNING pending, CASE WHEN pending = 0 AND NOT processed THEN doc END AS doc",
        )
        .bind(p)
        .bind(rid)
        .bind(k)
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_err)?
        else {
            continue;
        };
        let Some(mut run) = doc_of_opt::<FlowRun>(&r, "doc")? else {
            continue;
        };
        if settle::run_done(&mut run, now) {
            save_processed(conn, &p, &run).await?;
            runs_processed.push((p, rid));
        }
    }
    Ok(runs_processed)
}

/// Writes back a run that `settle::run_done` just marked processed.
async fn save_processed(conn: &mut PgConnection, project: &Uuid, run: &FlowRun) -> Result<()> {
    sqlx::query("UPDATE flow_runs SET processed = $3, doc = $4 WHERE project = $1 AND id = $2")
        .bind(project)
        .bind(run.id)
        .bind(run.processed)
        .bind(to_doc(run))
        .execute(&mut *conn)
        .await
        .map_err(db_err)?;
    Ok(())
}

/// Upserts a run's record with its pending count.
async fn put_run(conn: &mut PgConnection, p: &Uuid, run: &FlowRun, pending: i64) -> Result<()> {
    sqlx::query(
        "INSERT INTO flow_runs (project, id, processed, pending, doc) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (project, id) DO UPDATE
             SET processed = EXCLUDED.processed, pending = EXCLUDED.pending, doc = EXCLUDED.doc",
    )
    .bind(p)
    .bind(run.id)
    .bind(run.processed)
    .bind(pending)
    .bind(to_doc(run))
    .execute(conn)
    .await
    .map_err(db_err)?;
    Ok(())
}

/// The in-app deliveries settled at once of staged notifications, with
/// their entries' JSON.
fn to_feed(ns: &[StagedNotification]) -> Vec<(Delivery, String)> {
    ns.iter()
        .flat_map(|sn| {
            sn.to_feed
                .iter()
                .filter_map(|(i, json)| sn.deliveries.get(*i).map(|d| (d.clone(), json.clone())))
        })
        .collect()
}

impl PgStore {
    /// Until when the queue rows a run just staged are leased to this node:
    /// a lease past each one's due time (real-clock runs: the node keeps its
    /// deliveries in its timers and renews while it lives), or, on a test
    /// clock (whose due times are project time), one lease from now (the
    /// engine gives back those not due yet).
    fn lease_for(&self, run: &FlowRun, queued: &[QueueItem]) -> Vec<i64> {
        let now = Timestamp::now().millis();
        let lease = self.lease_ms();
        queued
            .iter()
            .map(|q| match run.clock_at {
                Some(_) => now + lease,
                None => q.due_ms.max(now).saturating_add(lease),
            })
            .collect()
    }

    /// Adds a committed chunk to its run, the chunk transaction's last
    /// statement (see `count_down`): the run's record as of the chunk and
    /// `pending` more notifications to wait for, only while this node holds
    /// the run's lease. One that lost it (it stalled past the lease, another
    /// node took over from the cursor committed last) fails here and the
    /// chunk rolls back, so no chunk goes in twice. The run is processed
    /// when the chunk ends the expansion with nothing left pending.
    async fn add_chunk(
        &self,
        conn: &mut PgConnection,
        project: &Uuid,
        run: &mut FlowRun,
        pending: i64,
    ) -> Result<()> {
        let row = sqlx::query(
            "UPDATE flow_runs SET pending = pending + $4, doc = $5
             WHERE project = $1 AND id = $2 AND lease_owner = $3
             RETURNING pending",
        )
        .bind(project)
        .bind(run.id)
        .bind(self.node())
        .bind(pending)
        .bind(to_doc(&*run))
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_err)?;
        let total = match row {
            Some(r) => r.get::<i64, _>("pending"),
            None => {
                let exists = sqlx::query("SELECT 1 FROM flow_runs WHERE project = $1 AND id = $2")
                    .bind(project)
                    .bind(run.id)
                    .fetch_optional(&mut *conn)
                    .await
                    .map_err(db_err)?;
                if exists.is_some() {
                    return Err(Refusal::LeaseLost { run: run.id }.err());
                }
                put_run(conn, project, run, pending).await?;
                pending
            }
        };
        if total == 0 && settle::run_done(run, Timestamp::now()) {
            save_processed(conn, project, run).await?;
        }
        Ok(())
    }

    /// Leases a run's expansion to this node.
    async fn lease_run(&self, conn: &mut PgConnection, project: &Uuid, run: &Uuid) -> Result<()> {
        sqlx::query(
            "UPDATE flow_runs SET lease_owner = $3, lease_until = $4 WHERE project = $1 AND id = $2",
        )
        .bind(project)
        .bind(run)
        .bind(self.node())
        .bind(Timestamp::now().millis() + self.lease_ms())
        .execute(conn)
        .await
        .map_err(db_err)?;
        Ok(())
    }
}

/// A topic chunk written in its transaction, not committed yet
/// (`Storage::write_chunk`): its notifications, deliveries, queue rows,
/// trace, events and feeds are in; the run's record (`add_chunk`, under
/// the run's lease and row lock) and the commit come at `commit`, so the
/// chunks of an expansion commit in order while the next ones are
/// written. Dropped, it rolls back.
pub(super) struct PgWrittenChunk<'a> {
    store: &'a PgStore,
    tx: super::Tx,
    project: Uuid,
    run: FlowRun,
    pending: i64,
    queued: Vec<QueueItem>,
    frames: UserFrames,
}

impl WrittenChunk for PgWrittenChunk<'_> {
    fn commit(self: Box<Self>) -> Result<(Vec<QueueItem>, UserFrames)> {
        let PgWrittenChunk {
            store,
            mut tx,
            project,
            mut run,
            pending,
            queued,
            frames,
        } = *self;
        store.block(store.add_chunk(&mut tx, &project, &mut run, pending))?;
        store.commit(tx)?;
        Ok((queued, frames))
    }
}

impl PgStore {
    /// The rows of a run's or a topic chunk's notifications: notifications,
    /// deliveries and their extras, the traces of batches they close, the
    /// queue entries (`queues`: the queued deliveries, then those of a batch
    /// closed early by `max`, due now; this node dispatches both and takes
    /// their lease) and the recipients' feeds, whose frames it returns.
    #[allow(clippy::too_many_arguments)]
    async fn write_notifications(
        &self,
        conn: &mut PgConnection,
        project: &Uuid,
        run: &FlowRun,
        notifications: &[StagedNotification],
        closes: Traces,
        out: &mut Outbound,
        queues: [&[QueueItem]; 2],
        feed: Vec<(Delivery, String)>,
    ) -> Result<UserFrames> {
        insert_notifications(conn, project, notifications).await?;
        notification_extras(conn, project, run, notifications, out).await?;
        closes.flush(conn).await?;
        for items in queues {
            let untils = self.lease_for(run, items);
            put_queue(conn, items, Some((self.node(), &untils))).await?;
        }
        stage_feeds(conn, project, feed).await
    }

    /// Writes a topic chunk in a transaction left open (`PgWrittenChunk`).
    /// Decided while the chunk was staged (see the sled store): a throttle
    /// counter or batch that changed since rolls the chunk back, to be
    /// staged again.
    pub(super) fn write_chunk_tx(
        &self,
        project: &Uuid,
        chunk: Prepared,
    ) -> Result<PgWrittenChunk<'_>> {
        let StagedChunk {
            run,
            notifications,
            queued,
        } = chunk.take()?;
        let pending = notifications.iter().filter(|n| n.pending).count() as i64;
        let feed = to_feed(&notifications);
        let mut tx = self.begin()?;
        let (frames, due_now) = self.block(async {
            // A chunk written ahead waits, uncommitted, for the one before it
            // to commit, and that one may wait on a row lock of a third
            // transaction (another run's chunk or settle over the same
            // users) that waits on a row this chunk holds: a cycle through
            // the expansion's commit order, which PostgreSQL's deadlock
            // detector cannot see. A bounded lock wait breaks it: the chunk
            // fails, every chunk written after it rolls back, and the
            // expansion resumes from the run's cursor (`FlowRunActor`).
            sqlx::query("SET LOCAL lock_timeout = '5s'")
                .execute(&mut *tx)
                .await
                .map_err(db_err)?;
            let throttles: Vec<&ThrottleWrite> = notifications
                .iter()
                .filter_map(|n| n.throttle.as_ref())
                .collect();
            lock_slots(&mut tx, project, &throttles).await?;
            if throttles_stale(&mut tx, project, &throttles).await? {
                return Err(Error::stale_chunk());
            }
            let mut closes = Traces::default();
            let due_now = put_batches(&mut tx, project, &notifications, &mut closes)
                .await?
                .ok_or_else(Error::stale_chunk)?;
            let mut out = Outbound::load(&mut tx, [*project]).await?;
            let frames = self
                .write_notifications(
                    &mut tx,
                    project,
                    &run,
                    &notifications,
                    closes,
                    &mut out,
                    [&queued, &due_now],
                    feed,
                )
                .await?;
            out.flush(&mut tx).await?;
            Ok::<_, Error>((frames, due_now))
        })?;
        let mut queued = queued;
        queued.extend(due_now);
        Ok(PgWrittenChunk {
            store: self,
            tx,
            project: *project,
            run,
            pending,
            queued,
            frames,
        })
    }
}

impl RunRepo for PgStore {
    fn commit_run(&self, project: &Uuid, staged: StagedRun) -> Result<RunCommit> {
        let StagedRun {
            run,
            users,
            notifications,
            queued,
            body,
            idempotency,
        } = staged;
        let pending = notifications.iter().filter(|n| n.pending).count() as i64;
        let feed = to_feed(&notifications);
        // checked under the recipients' and their counters' locks, below
        let throttles: Vec<&ThrottleWrite> = notifications
            .iter()
            .filter_map(|n| n.throttle.as_ref())
            .collect();
        let mut tx = self.begin()?;
        let frames = self.block(async {
            lock_all(
                &mut tx,
                users
                    .iter()
                    .map(|u| user_lock(project, &u.external_id))
                    .collect(),
            )
            .await
            .map_err(db_err)?;
            for u in &users {
                if user_by_ext_in(&mut tx, project, &u.external_id).await? != u.before {
                    return Ok(None);
                }
            }
            lock_slots(&mut tx, project, &throttles).await?;
            if throttles_stale(&mut tx, project, &throttles).await? {
                return Ok(None);
            }
            let mut closes = Traces::default();
            let Some(due_now) = put_batches(&mut tx, project, &notifications, &mut closes).await?
            else {
                return Ok(None);
            };
            for u in &users {
                if u.before.as_ref() != Some(&u.after) {
                    put_user(&mut tx, project, &u.after).await?;
                }
            }
            let mut out = Outbound::load(&mut tx, [*project]).await?;
            let frames = self
                .write_notifications(
                    &mut tx,
                    project,
                    &run,
                    &notifications,
                    closes,
                    &mut out,
                    [&queued, &due_now],
                    feed,
                )
                .await?;
            put_run(&mut tx, project, &run, pending).await?;
            if !run.expanded {
                // this node expands the run it accepted (`WorkRepo`)
                self.lease_run(&mut tx, project, &run.id).await?;
            }
            out.stage(project, EventType::FlowRunAccepted, &run.id, || {
                run.accepted_view()
            });
            out.flush(&mut tx).await?;
            if let Some((scope, hash)) = &idempotency {
                let rec = IdempotentResponse {
                    payload_hash: hash.clone(),
                    status: 202,
                    body: body.clone(),
                    created_at: run.created_at,
                };
                // Another node may have taken the key meanwhile (the
                // requests sharing a key are serialised per node only).
                if !put_idempotent_new(&mut tx, project, scope, &rec).await? {
                    return Err(Error::idempotency_race());
                }
            }
            Ok::<_, Error>(Some((frames, due_now)))
        })?;
        let Some((frames, due_now)) = frames else {
            return Ok(RunCommit::Stale(run)); // rolled back as `tx` goes
        };
        self.commit(tx)?;
        let mut queued = queued;
        queued.extend(due_now);
        Ok(RunCommit::Committed(AcceptedRun {
            run,
            body,
            queued,
            frames,
        }))
    }

    /// Nothing to encode ahead on this backend: the chunk is kept as staged.
    fn commit_chunk(
        &self,
        project: &Uuid,
        chunk: Prepared,
    ) -> Result<(Vec<QueueItem>, UserFrames)> {
        Box::new(self.write_chunk_tx(project, chunk)?).commit()
    }

    fn flow_run(&self, project: &Uuid, id: &Uuid) -> Result<Option<FlowRun>> {
        let row = self
            .block(
                sqlx::query("SELECT doc FROM flow_runs WHERE project = $1 AND id = $2")
                    .bind(project)
                    .bind(id)
                    .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        row.map(|r| doc_of(&r, "doc")).transpose()
    }

    fn active_runs(&self) -> Result<Vec<(Uuid, Uuid)>> {
        let rows = self
            .block(
                sqlx::query("SELECT project, id FROM flow_runs WHERE NOT processed ORDER BY id")
                    .fetch_all(self.pool()),
            )
            .map_err(db_err)?;
        Ok(rows
            .into_iter()
            .map(|r| (r.get("project"), r.get("id")))
            .collect())
    }
}

impl NotificationRepo for PgStore {
    fn notification(&self, project: &Uuid, id: &Uuid) -> Result<Option<Notification>> {
        if notification_of(id) != *id {
            return Ok(None);
        }
        let row = self
            .block(
                sqlx::query("SELECT doc FROM notifications WHERE project = $1 AND id = $2")
                    .bind(project)
                    .bind(id)
                    .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        row.map(|r| doc_of(&r, "doc")).transpose()
    }

    fn delivery(&self, project: &Uuid, id: &Uuid) -> Result<Option<Delivery>> {
        if notification_of(id) == *id {
            return Ok(None);
        }
        let row = self
            .block(
                sqlx::query("SELECT doc FROM deliveries WHERE project = $1 AND id = $2")
                    .bind(project)
                    .bind(id)
                    .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        row.map(|r| doc_of(&r, "doc")).transpose()
    }

    fn notification_deliveries(&self, project: &Uuid, nid: &Uuid) -> Result<Vec<Delivery>> {
        let rows = self
            .block(
                sqlx::query(
                    "SELECT doc FROM deliveries WHERE project = $1 AND notification_id = $2 ORDER BY id",
                )
                .bind(project)
                .bind(nid)
                .fetch_all(self.pool()),
            )
            .map_err(db_err)?;
        rows.into_iter().map(|r| doc_of(&r, "doc")).collect()
    }

    fn list_notifications(
        &self,
        project: &Uuid,
        f: &NotificationFilter,
        req: &PageReq,
    ) -> Result<Page<Notification>> {
        let (lo, hi) = id_range(&f.created_after, &f.created_before);
        if matches!((lo, hi), (Some(l), Some(h)) if l >= h) {
            return Ok(empty_page(req));
        }
        let p = *project;
        let f = f.clone();
        self.page(
            &|q| {
                q.push("SELECT id, doc FROM notifications WHERE project = ");
                q.push_bind(p);
                if let Some(s) = f.status {
                    q.push(" AND processed = ").push_bind(s);
                }
                if let Some(t) = &f.topic {
                    q.push(" AND topic = ").push_bind(t.clone());
                }
                if let Some(x) = f.flow_id {
                    q.push(" AND doc->>'flow_id' = ").push_bind(x.to_string());
                }
                if let Some(x) = f.flow_run_id {
                    q.push(" AND run_id = ").push_bind(x);
                }
                if let Some(x) = f.recipient {
                    q.push(" AND recipient = ").push_bind(x);
                }
                if let Some(l) = lo {
                    q.push(" AND id >= ").push_bind(l);
                }
                if let Some(h) = hi {
                    q.push(" AND id < ").push_bind(h);
                }
            },
            "id",
            req,
            &|r| Ok((r.get("id"), doc_of(&r, "doc")?)),
        )
    }

    fn list_deliveries(
        &self,
        project: &Uuid,
        f: &DeliveryFilter,
        req: &PageReq,
    ) -> Result<Page<Delivery>> {
        let (lo, hi) = id_range(&f.created_after, &f.created_before);
        if matches!((lo, hi), (Some(l), Some(h)) if l >= h) {
            return Ok(empty_page(req));
        }
        let p = *project;
        let f = f.clone();
        self.page(
            &|q| {
                q.push("SELECT id, doc FROM deliveries WHERE project = ");
                q.push_bind(p);
                if let Some(s) = f.status {
                    q.push(" AND status = ").push_bind(s.as_str());
                }
                if let Some(t) = f.channel_type {
                    q.push(" AND channel_type = ")
                        .push_bind(i16::from(t.index()));
                }
                if let Some(x) = f.channel_id {
                    q.push(" AND channel_id = ").push_bind(x);
                }
                if let Some(x) = f.notification_id {
                    q.push(" AND notification_id = ")
                        .push_bind(notification_of(&x));
                }
                if let Some(x) = f.recipient {
                    q.push(" AND recipient = ").push_bind(x);
                }
                if let Some(l) = lo {
                    q.push(" AND id >= ").push_bind(l);
                }
                if let Some(h) = hi {
                    q.push(" AND id < ").push_bind(h);
                }
            },
            "id",
            req,
            &|r| Ok((r.get("id"), doc_of(&r, "doc")?)),
        )
    }
}

impl QueueRepo for PgStore {
    fn queue_items(&self, ct: ChannelType) -> Result<Vec<QueueItem>> {
        let rows = self
            .block(
                sqlx::query(
                    "SELECT project, delivery_id, due_ms FROM queue
                     WHERE channel_type = $1 ORDER BY due_ms, delivery_id",
                )
                .bind(i16::from(ct.index()))
                .fetch_all(self.pool()),
            )
            .map_err(db_err)?;
        Ok(rows
            .into_iter()
            .map(|r| QueueItem {
                project: r.get("project"),
                delivery_id: r.get("delivery_id"),
                channel_type: ct,
                due_ms: r.get("due_ms"),
            })
            .collect())
    }

    fn settle(&self, items: &[(QueueItem, Outcome)]) -> Result<Finished> {
        let now = Timestamp::now();
        let mut tx = self.begin()?;
        let done = self.block(async {
            let mut s = load_for_finish(&mut tx, items.to_vec(), Some(self.node())).await?;
            let mut out = Outbound::load(&mut tx, s.recs.iter().map(|r| r.0)).await?;
            let done = stage_finish(self, &mut tx, &mut s, now, &mut out).await?;
            out.flush(&mut tx).await?;
            Ok::<_, Error>(done)
        })?;
        self.commit(tx)?;
        Tally::record(&done.0, now);
        Ok(done)
    }

    fn deliver_in_app(&self, items: &[QueueItem]) -> Result<InAppBatch> {
        let now = Timestamp::now();
        let mut tx = self.begin()?;
        let (out, written) = self.block(async {
            let sent = items
                .iter()
                .map(|q| (*q, Outcome::Sent { outcomes: None }))
                .collect();
            let mut s = load_for_finish(&mut tx, sent, Some(self.node())).await?;
            s.items
                .retain(|(_, _, ri, di)| !s.recs[*ri].2[*di].status.is_final());
            // Rendered with their batch first (`delivery::batch::due`).
            let mut batched = vec![];
            s.items.retain(|(q, _, ri, di)| {
                let waits = s.recs[*ri].2[*di].batch;
                if waits {
                    batched.push(*q);
                }
                !waits
            });
            let mut counts = lock_feeds(
                &mut tx,
                s.items
                    .iter()
                    .map(|(q, _, ri, di)| (q.project, s.recs[*ri].2[*di].recipient_id)),
            )
            .await?;
            // which recipients still exist
            let mut exists: HashMap<(Uuid, Uuid), bool> = HashMap::new();
            for &(p, u) in counts.keys() {
                let found = sqlx::query("SELECT 1 FROM users WHERE project = $1 AND id = $2")
                    .bind(p)
                    .bind(u)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(db_err)?;
                exists.insert((p, u), found.is_some());
            }
            let mut plan = settle::in_app_feeds(
                s.items
                    .iter()
                    .map(|(q, _, ri, di)| (q, &s.recs[*ri].2[*di])),
                |p, u| Ok(exists.get(&(*p, *u)).copied().unwrap_or(false)),
            )?;
            for i in std::mem::take(&mut plan.skipped) {
                s.items[i].1 = settle::recipient_deleted();
            }
            // Deliveries whose condition over earlier steps is false now are
            // skipped instead of entering the feed (see `delivery::conditions`);
            // the notification's deliveries were read under its lock.
            let gated_false: Vec<usize> = s
                .items
                .iter()
                .enumerate()
                .filter(|(_, (_, _, ri, di))| {
                    let ds = &s.recs[*ri].2;
                    ds[*di]
                        .gate
                        .as_ref()
                        .is_some_and(|g| !g.holds_for_steps(ds))
                })
                .map(|(i, _)| i)
                .collect();
            if !gated_false.is_empty() {
                for (_, idx) in &mut plan.feeds {
                    idx.retain(|i| !gated_false.contains(i));
                }
                plan.feeds.retain(|(_, idx)| !idx.is_empty());
                for i in gated_false {
                    s.items[i].1 = crate::delivery::conditions::condition_false();
                }
            }
            let mut out = InAppBatch {
                batched,
                ..Default::default()
            };
            for ((p, u), idx) in plan.feeds {
                let c = counts.get_mut(&(p, u)).expect("locked above");
                let mut frames = Vec::with_capacity(idx.len());
                for i in idx {
                    let d = s.delivery(i).clone();
                    feed_insert(&mut tx, &p, &d, c).await?;
                    let actor = actor_of(&mut tx, &p, &d).await?;
                    let json = entry_json(&d, &actor)?;
                    frames.push(log_event(&mut tx, &p, &u, FeedEvent::Created, &json, c).await?);
                }
                save_counts(&mut tx, &p, &u, c).await?;
                out.frames.push((p, u, frames));
            }
            out.settled = s.items.len();
            let mut events = Outbound::load(&mut tx, s.recs.iter().map(|r| r.0)).await?;
            let (written, runs) = stage_finish(self, &mut tx, &mut s, now, &mut events).await?;
            events.flush(&mut tx).await?;
            out.runs = runs;
            Ok::<_, Error>((out, written))
        })?;
        self.commit(tx)?;
        Tally::record(&written, now);
        Ok(out)
    }
}

impl PgStore {
    /// A feed entry with its flags, in a transaction.
    async fn entry_in(
        conn: &mut PgConnection,
        p: &Uuid,
        u: &Uuid,
        id: &Uuid,
    ) -> Result<Option<(Delivery, u8)>> {
        let row = sqlx::query(
            "SELECT d.doc, f.flags FROM feed f
             JOIN deliveries d ON d.project = f.project AND d.id = f.delivery_id
             WHERE f.project = $1 AND f.user_id = $2 AND f.delivery_id = $3",
        )
        .bind(p)
        .bind(u)
        .bind(id)
        .fetch_optional(conn)
        .await
        .map_err(db_err)?;
        row.map(|r| Ok((doc_of(&r, "doc")?, r.get::<i16, _>("flags") as u8)))
            .transpose()
    }

    /// Writes an entry's changed flags and logs its `feed_entry.updated`.
    async fn feed_changed(
        conn: &mut PgConnection,
        p: &Uuid,
        u: &Uuid,
        d: &Delivery,
        before: u8,
        counts: &mut FeedCounts,
    ) -> Result<Frame> {
        let after = flags_of(d);
        count_delta(counts, before, -1);
        count_delta(counts, after, 1);
        sqlx::query(
            "UPDATE feed SET flags = $4 WHERE project = $1 AND user_id = $2 AND delivery_id = $3",
        )
        .bind(p)
        .bind(u)
        .bind(d.id)
        .bind(i16::from(after))
        .execute(&mut *conn)
        .await
        .map_err(db_err)?;
        save_delivery(conn, p, d).await?;
        let actor = actor_of(conn, p, d).await?;
        let json = entry_json(d, &actor)?;
        log_event(conn, p, u, FeedEvent::Updated, &json, counts).await
    }
}

impl FeedRepo for PgStore {
    fn feed_counts(&self, project: &Uuid, user: &Uuid) -> Result<FeedCounts> {
        let row = self
            .block(
                sqlx::query(
                    "SELECT seq, unread, unseen FROM feed_state WHERE project = $1 AND user_id = $2",
                )
                .bind(project)
                .bind(user)
                .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        Ok(row
            .map(|r| FeedCounts {
                seq: r.get::<i64, _>("seq") as u64,
                unread: r.get::<i64, _>("unread") as u64,
                unseen: r.get::<i64, _>("unseen") as u64,
            })
            .unwrap_or_default())
    }

    fn feed_page(
        &self,
        project: &Uuid,
        user: &Uuid,
        filter: FeedFilter,
        req: &PageReq,
    ) -> Result<Page<Delivery>> {
        let (p, u) = (*project, *user);
        self.page(
            &|q| {
                q.push(
                    "SELECT f.delivery_id AS id, d.doc FROM feed f
                     JOIN deliveries d ON d.project = f.project AND d.id = f.delivery_id
                     WHERE f.project = ",
                );
                q.push_bind(p);
                q.push(" AND f.user_id = ").push_bind(u);
                q.push(" AND ").push(filter_sql(filter));
            },
            "f.delivery_id",
            req,
            &|r| Ok((r.get("id"), doc_of(&r, "doc")?)),
        )
    }

    fn feed_entry(&self, project: &Uuid, user: &Uuid, id: &Uuid) -> Result<Delivery> {
        self.block(async {
            let mut conn = self.pool().acquire().await.map_err(db_err)?;
            PgStore::entry_in(&mut conn, project, user, id).await
        })?
        .map(|(d, _)| d)
        .ok_or_else(|| Refusal::missing("feed_entry", id))
    }

    fn events_between(
        &self,
        project: &Uuid,
        user: &Uuid,
        after: u64,
        upto: u64,
    ) -> Result<Option<Vec<Vec<u8>>>> {
        if after >= upto {
            return Ok(Some(vec![]));
        }
        let rows = self
            .block(
                sqlx::query(
                    "SELECT seq, frame FROM feed_events
                     WHERE project = $1 AND user_id = $2 AND seq > $3 AND seq <= $4 ORDER BY seq",
                )
                .bind(project)
                .bind(user)
                .bind(after as i64)
                .bind(upto as i64)
                .fetch_all(self.pool()),
            )
            .map_err(db_err)?;
        let mut out = Vec::with_capacity(rows.len());
        let mut expect = after as i64 + 1;
        for r in rows {
            if r.get::<i64, _>("seq") != expect {
                return Ok(None); // the log no longer reaches back that far
            }
            out.push(r.get::<String, _>("frame").into_bytes());
            expect += 1;
        }
        Ok((expect == upto as i64 + 1).then_some(out))
    }

    fn update_feed_entry(
        &self,
        project: &Uuid,
        user: &Uuid,
        id: &Uuid,
        u: FeedUpdate,
    ) -> Result<FeedChange<Delivery>> {
        let mut tx = self.begin()?;
        let change = self.block(async {
            let mut counts = lock_feeds(&mut tx, [(*project, *user)])
                .await?
                .remove(&(*project, *user))
                .unwrap_or_default();
            let (old, before) = PgStore::entry_in(&mut tx, project, user, id)
                .await?
                .ok_or_else(|| Refusal::missing("feed_entry", id))?;
            let (mut d, changed) = feed::update_entry(&old, &u, Timestamp::now())
                .map_err(|refusal| refusal.into_error(id))?;
            let mut frames = vec![];
            if changed {
                touch(&mut d);
                frames.push(
                    PgStore::feed_changed(&mut tx, project, user, &d, before, &mut counts).await?,
                );
                save_counts(&mut tx, project, user, &counts).await?;
                let mut out = Outbound::load(&mut tx, [*project]).await?;
                out.stage_feed_entry(project, &old, &d);
                out.flush(&mut tx).await?;
            }
            Ok::<_, Error>(FeedChange {
                value: d,
                counts,
                frames,
            })
        })?;
        self.commit(tx)?;
        Ok(change)
    }

    fn mark_feed(&self, project: &Uuid, user: &Uuid, read: bool) -> Result<FeedChange<usize>> {
        let want = if read { READ } else { SEEN };
        let mut tx = self.begin()?;
        let change = self.block(async {
            let mut counts = lock_feeds(&mut tx, [(*project, *user)])
                .await?
                .remove(&(*project, *user))
                .unwrap_or_default();
            let rows = sqlx::query(
                "SELECT d.doc, f.flags FROM feed f
                 JOIN deliveries d ON d.project = f.project AND d.id = f.delivery_id
                 WHERE f.project = $1 AND f.user_id = $2 AND f.flags & 4 = 0 AND f.flags & $3 = 0
                 ORDER BY f.delivery_id",
            )
            .bind(project)
            .bind(user)
            .bind(i16::from(want))
            .fetch_all(&mut *tx)
            .await
            .map_err(db_err)?;
            let now = Timestamp::now();
            let mut frames = Vec::with_capacity(rows.len());
            let mut out = Outbound::load(&mut tx, [*project]).await?;
            let t = feed::marked_event(read);
            for r in rows {
                let mut d: Delivery = doc_of(&r, "doc")?;
                let before = r.get::<i16, _>("flags") as u8;
                feed::mark_entry(&mut d, read, now);
                touch(&mut d);
                frames.push(
                    PgStore::feed_changed(&mut tx, project, user, &d, before, &mut counts).await?,
                );
                out.stage(project, t, &d.id, || d.view());
            }
            out.flush(&mut tx).await?;
            if !frames.is_empty() {
                save_counts(&mut tx, project, user, &counts).await?;
            }
            Ok::<_, Error>(FeedChange {
                value: frames.len(),
                counts,
                frames,
            })
        })?;
        self.commit(tx)?;
        Ok(change)
    }
}
