//! Users' in-app feeds on PostgreSQL (`storage::FeedRepo`): entries, their
//! flags and counts, and the event log a live feed replays. A user's feed is
//! serialised by the lock on its `feed_state` row (its counts and latest
//! `seq`); an event's `seq` is taken and logged in the same transaction as
//! the feed change, with its `feed_entry.*` events. Feed flags' times live in
//! the delivery's record, so a delivery read anywhere shows them.

use super::events::Outbound;
use super::{db_err, doc_of, record_of, PgStore};
use crate::delivery::frames::{actor_json, feed_frame_with, FeedEvent};
use crate::error::{Error, Result};
use crate::model::{Delivery, FeedCounts, Timestamp, User};
use crate::rules::feed;
use crate::storage::*;
use serde_json::Value;
use sqlx::{PgConnection, Row};
use std::collections::{BTreeSet, HashMap};
use uuid::Uuid;

use super::rows::*;

/// Events kept per user at least (`rules::feed::KEEP_EVENTS`), as a
/// column's type.
const KEEP_EVENTS: i64 = feed::KEEP_EVENTS as i64;
/// A delivery's flow in SQL (a `deliveries d` of the query): its column,
/// or, on a row written before the column (migration 16), its document's.
const DELIVERY_FLOW: &str = "coalesce(d.flow_id, (d.doc->>'flow_id')::uuid)";
use crate::rules::feed::KEEP_MS;

pub(super) use crate::delivery::feed_flags::count_delta;
use crate::delivery::feed_flags::flags_of;

/// The condition on `f.flags` of a feed filter.
pub(super) fn filter_sql(f: FeedFilter) -> &'static str {
    match f {
        FeedFilter::All => "f.flags & 4 = 0",
        FeedFilter::Unread => "f.flags & 4 = 0 AND f.flags & 2 = 0",
        FeedFilter::Unseen => "f.flags & 4 = 0 AND f.flags & 1 = 0",
        FeedFilter::Read => "f.flags & 4 = 0 AND f.flags & 2 <> 0",
        FeedFilter::Archived => "f.flags & 4 <> 0",
    }
}

/// Locks the feeds of `users` (in key order, so two transactions cannot
/// deadlock) and reads their counts and latest `seq`: two statements for
/// all of them (a topic chunk's in-app deliveries lock a feed per user).
pub(super) async fn lock_feeds(
    conn: &mut PgConnection, users: impl IntoIterator<Item = (Uuid, Uuid)>,
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

pub(super) async fn save_counts(
    conn: &mut PgConnection, p: &Uuid, u: &Uuid, c: &FeedCounts,
) -> Result<()> {
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
pub(super) async fn log_event(
    conn: &mut PgConnection, p: &Uuid, u: &Uuid, kind: FeedEvent, entry_json: &str,
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

/// Writes in-app entries settled with a run into their users' feeds, each
/// with its `feed_entry.created` event: the frames per user, in `seq` order
/// (`write_feeds`, after the feeds' locks).
pub(super) async fn stage_feeds(
    conn: &mut PgConnection, p: &Uuid, feed: Vec<(Delivery, String)>,
) -> Result<UserFrames> {
    if feed.is_empty() {
        return Ok(vec![]);
    }
    let mut counts = lock_feeds(conn, feed.iter().map(|(d, _)| (*p, d.recipient_id))).await?;
    write_feeds(conn, &mut counts, feed.into_iter().map(|(d, j)| (*p, d, j))).await
}

/// Writes entries `(project, delivery, its feed_entry JSON)` into feeds
/// locked by `lock_feeds` (whose counts are `counts`), each with its
/// `feed_entry.created` event: the frames per user, in `seq` order. The
/// counts and `seq`s are worked out here, under the feeds' locks, and
/// written with one statement per table for the whole batch (entries,
/// events, the trim of old events, the counts of the feeds written): a topic
/// chunk's or a dispatch batch's round trips do not grow with its
/// recipients.
pub(super) async fn write_feeds(
    conn: &mut PgConnection, counts: &mut HashMap<(Uuid, Uuid), FeedCounts>,
    feed: impl IntoIterator<Item = (Uuid, Delivery, String)>,
) -> Result<UserFrames> {
    let mut frames: UserFrames = vec![];
    let mut at: HashMap<(Uuid, Uuid), usize> = HashMap::new();
    let now = Timestamp::now().millis();
    let (mut e_projects, mut e_users, mut e_deliveries, mut e_flags, mut e_sorts) =
        (vec![], vec![], vec![], vec![], vec![]);
    let (mut v_seqs, mut v_frames) = (vec![], vec![]);
    for (p, d, json) in feed {
        let u = d.recipient_id;
        let i = *at.entry((p, u)).or_insert_with(|| {
            frames.push((p, u, vec![]));
            frames.len() - 1
        });
        let c = counts
            .get_mut(&(p, u))
            .ok_or_else(|| Error::internal("feed written without its lock"))?;
        let f = flags_of(&d);
        e_projects.push(p);
        e_users.push(u);
        e_deliveries.push(d.id);
        e_flags.push(i16::from(f));
        e_sorts.push(d.feed_sort_id());
        count_delta(c, f, 1);
        c.seq += 1;
        let (frame, meta) = feed_frame_with(FeedEvent::Created.as_str(), c.seq, &json, c);
        v_seqs.push(c.seq as i64);
        v_frames.push(frame.to_string());
        frames[i].2.push((c.seq, frame, meta));
    }
    if frames.is_empty() {
        return Ok(frames);
    }
    sqlx::query(
        "INSERT INTO feed (project, user_id, delivery_id, flags, sort_id)
         SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::uuid[], $4::int2[], $5::uuid[])
         ON CONFLICT (project, user_id, delivery_id) DO UPDATE SET flags = EXCLUDED.flags",
    )
    .bind(&e_projects)
    .bind(&e_users)
    .bind(&e_deliveries)
    .bind(&e_flags)
    .bind(&e_sorts)
    .execute(&mut *conn)
    .await
    .map_err(db_err)?;
    sqlx::query(
        "INSERT INTO feed_events (project, user_id, seq, frame, created_ms)
         SELECT p, u, s, f, $5 FROM UNNEST($1::uuid[], $2::uuid[], $3::int8[], $4::text[])
         AS t(p, u, s, f)",
    )
    .bind(&e_projects)
    .bind(&e_users)
    .bind(&v_seqs)
    .bind(&v_frames)
    .bind(now)
    .execute(&mut *conn)
    .await
    .map_err(db_err)?;
    // The feeds written: their old events beyond what is kept go (as
    // `log_event` does one by one), and their counts are saved.
    let written: Vec<((Uuid, Uuid), FeedCounts)> = frames
        .iter()
        .map(|(p, u, _)| ((*p, *u), counts[&(*p, *u)]))
        .collect();
    let (mut t_projects, mut t_users, mut t_upto) = (vec![], vec![], vec![]);
    for ((p, u), c) in written.iter().filter(|(_, c)| c.seq as i64 > KEEP_EVENTS) {
        t_projects.push(*p);
        t_users.push(*u);
        t_upto.push(c.seq as i64 - KEEP_EVENTS);
    }
    if !t_users.is_empty() {
        sqlx::query(
            "DELETE FROM feed_events e
             USING UNNEST($1::uuid[], $2::uuid[], $3::int8[]) AS t(p, u, upto)
             WHERE e.project = t.p AND e.user_id = t.u AND e.seq <= t.upto AND e.created_ms < $4",
        )
        .bind(&t_projects)
        .bind(&t_users)
        .bind(&t_upto)
        .bind(now - KEEP_MS)
        .execute(&mut *conn)
        .await
        .map_err(db_err)?;
    }
    let n = written.len();
    let (mut c_projects, mut c_users) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut c_seq, mut c_unread, mut c_unseen) = (
        Vec::with_capacity(n),
        Vec::with_capacity(n),
        Vec::with_capacity(n),
    );
    for ((p, u), c) in &written {
        c_projects.push(*p);
        c_users.push(*u);
        c_seq.push(c.seq as i64);
        c_unread.push(c.unread as i64);
        c_unseen.push(c.unseen as i64);
    }
    sqlx::query(
        "UPDATE feed_state s SET seq = t.seq, unread = t.unread, unseen = t.unseen
         FROM UNNEST($1::uuid[], $2::uuid[], $3::int8[], $4::int8[], $5::int8[])
           AS t(p, u, seq, unread, unseen)
         WHERE s.project = t.p AND s.user_id = t.u",
    )
    .bind(&c_projects)
    .bind(&c_users)
    .bind(&c_seq)
    .bind(&c_unread)
    .bind(&c_unseen)
    .execute(&mut *conn)
    .await
    .map_err(db_err)?;
    Ok(frames)
}

/// Which of `users` `(project, id)` exist: one statement for them all.
pub(super) async fn existing_users(
    conn: &mut PgConnection, users: impl IntoIterator<Item = (Uuid, Uuid)>,
) -> Result<BTreeSet<(Uuid, Uuid)>> {
    let (ps, us): (Vec<Uuid>, Vec<Uuid>) = users.into_iter().unzip();
    if ps.is_empty() {
        return Ok(BTreeSet::new());
    }
    Ok(sqlx::query(
        "SELECT project, id FROM users
         WHERE (project, id) IN (SELECT * FROM UNNEST($1::uuid[], $2::uuid[]))",
    )
    .bind(&ps)
    .bind(&us)
    .fetch_all(&mut *conn)
    .await
    .map_err(db_err)?
    .into_iter()
    .map(|r| (r.get("project"), r.get("id")))
    .collect())
}

/// The actors of `deliveries` `(project, delivery)` as feed entries show
/// them (`actor_of` for many): one statement for them all.
pub(super) async fn actors_of<'a>(
    conn: &mut PgConnection, deliveries: impl IntoIterator<Item = (Uuid, &'a Delivery)>,
) -> Result<HashMap<(Uuid, Uuid), Value>> {
    let keys: BTreeSet<(Uuid, Uuid)> = deliveries
        .into_iter()
        .filter_map(|(p, d)| d.actor_id.map(|a| (p, a)))
        .collect();
    let found = super::events::users_by_id(conn, keys.clone()).await?;
    // an actor since erased shows as such (`actor_json(None)`), as in `actor_of`
    Ok(keys
        .into_iter()
        .map(|k| (k, actor_json(found.get(&k))))
        .collect())
}

pub(super) async fn actor_of(conn: &mut PgConnection, p: &Uuid, d: &Delivery) -> Result<Value> {
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

pub(super) fn entry_json(d: &Delivery, actor: &Value) -> Result<String> {
    serde_json::to_string(&d.feed_entry(actor)).map_err(|e| Error::internal(e.to_string()))
}

// ---------------------------------------------------------------- settling

impl PgStore {
    /// A feed entry with its flags, in a transaction.
    async fn entry_in(
        conn: &mut PgConnection, p: &Uuid, u: &Uuid, id: &Uuid,
    ) -> Result<Option<(Delivery, u8)>> {
        let row = sqlx::query(
            "SELECT d.doc, d.body, f.flags FROM feed f
             JOIN deliveries d ON d.project = f.project AND d.id = f.delivery_id
             WHERE f.project = $1 AND f.user_id = $2 AND f.delivery_id = $3",
        )
        .bind(p)
        .bind(u)
        .bind(id)
        .fetch_optional(conn)
        .await
        .map_err(db_err)?;
        row.map(|r| {
            Ok((
                record_of(&r, "doc", "body")?,
                r.get::<i16, _>("flags") as u8,
            ))
        })
        .transpose()
    }

    /// Writes an entry's changed flags and logs its `feed_entry.updated`.
    async fn feed_changed(
        conn: &mut PgConnection, p: &Uuid, u: &Uuid, d: &Delivery, before: u8,
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
    fn feed_page(
        &self, project: &Uuid, user: &Uuid, scope: FeedScope, req: &PageReq,
    ) -> Result<Page<Delivery>> {
        let (p, u) = (*project, *user);
        self.page(
            &|q| {
                q.push(
                    "SELECT f.sort_id AS id, d.doc, d.body FROM feed f
                     JOIN deliveries d ON d.project = f.project AND d.id = f.delivery_id
                     WHERE f.project = ",
                );
                q.push_bind(p);
                q.push(" AND f.user_id = ").push_bind(u);
                q.push(" AND ").push(filter_sql(scope.status));
                // `rules::feed::in_scope`, said in SQL: the record's flow.
                if let Some(flows) = &scope.flows {
                    q.push(" AND ")
                        .push(DELIVERY_FLOW)
                        .push(" = ANY(")
                        .push_bind(flows.clone())
                        .push(")");
                }
            },
            "f.sort_id",
            req,
            &|r| Ok((r.get("id"), record_of(&r, "doc", "body")?)),
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

    /// One statement for all of them: a node checks the positions of
    /// every user it holds sockets for at once.
    fn feed_positions(&self, users: &[(Uuid, Uuid)]) -> Result<Vec<u64>> {
        if users.is_empty() {
            return Ok(vec![]);
        }
        let (ps, us): (Vec<Uuid>, Vec<Uuid>) = users.iter().copied().unzip();
        let rows = self
            .block(
                sqlx::query(
                    "SELECT COALESCE(f.seq, 0) AS seq
                     FROM UNNEST($1::uuid[], $2::uuid[]) WITH ORDINALITY AS x (p, u, i)
                     LEFT JOIN feed_state f ON f.project = x.p AND f.user_id = x.u
                     ORDER BY x.i",
                )
                .bind(&ps)
                .bind(&us)
                .fetch_all(self.pool()),
            )
            .map_err(db_err)?;
        Ok(rows
            .iter()
            .map(|r| r.get::<i64, _>("seq").max(0) as u64)
            .collect())
    }

    fn feed_counts_by_flow(&self, project: &Uuid, user: &Uuid) -> Result<Vec<FlowFeedCounts>> {
        // `feed_flags::count_delta` per flow, said in SQL.
        let rows = self
            .block(
                sqlx::query(&format!(
                    "SELECT {DELIVERY_FLOW} AS flow,
                            count(*) FILTER (WHERE f.flags & 2 = 0) AS unread,
                            count(*) FILTER (WHERE f.flags & 1 = 0) AS unseen
                     FROM feed f
                     JOIN deliveries d ON d.project = f.project AND d.id = f.delivery_id
                     WHERE f.project = $1 AND f.user_id = $2
                       AND f.flags & 4 = 0 AND f.flags & 3 <> 3
                     GROUP BY 1"
                ))
                .bind(project)
                .bind(user)
                .fetch_all(self.pool()),
            )
            .map_err(db_err)?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let Some(flow_id) = r.get::<Option<Uuid>, _>("flow") else {
                continue;
            };
            out.push(FlowFeedCounts {
                flow_id,
                unread: r.get::<i64, _>("unread").max(0) as u64,
                unseen: r.get::<i64, _>("unseen").max(0) as u64,
            });
        }
        Ok(out)
    }

    fn frames_between(&self, feed: FeedOf<'_>, after: u64, upto: u64) -> Result<LoggedFrames> {
        let FeedOf { project, user } = feed;
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
        &self, project: &Uuid, user: &Uuid, id: &Uuid, u: FeedUpdate,
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
            let (mut d, changed) =
                feed::update_entry(&old, &u, Timestamp::now()).map_err(|refusal| {
                    Refusal::EntryRefused {
                        entry: *id,
                        refusal,
                    }
                    .err()
                })?;
            let mut frames = vec![];
            if changed {
                d.follow_feed_flags();
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

    fn mark_feed(
        &self, project: &Uuid, user: &Uuid, mark: FeedMark, scope: FeedScope,
    ) -> Result<FeedChange<usize>> {
        let want = feed::mark_flag(mark);
        let mut tx = self.begin()?;
        let change = self.block(async {
            let mut counts = lock_feeds(&mut tx, [(*project, *user)])
                .await?
                .remove(&(*project, *user))
                .unwrap_or_default();
            // The rows `feed::marks` selects (its status, as the list's SQL
            // says it, and the mark not set yet); the flow is checked on each.
            let sql = format!(
                "SELECT d.doc, d.body, f.flags FROM feed f
                 JOIN deliveries d ON d.project = f.project AND d.id = f.delivery_id
                 WHERE f.project = $1 AND f.user_id = $2 AND {} AND f.flags & $3 = 0
                 ORDER BY f.sort_id",
                filter_sql(scope.status)
            );
            let rows = sqlx::query(&sql)
                .bind(project)
                .bind(user)
                .bind(i16::from(want))
                .fetch_all(&mut *tx)
                .await
                .map_err(db_err)?;
            let now = Timestamp::now();
            let mut frames = Vec::with_capacity(rows.len());
            let mut out = Outbound::load(&mut tx, [*project]).await?;
            let t = feed::marked_event(mark);
            for r in rows {
                let mut d: Delivery = record_of(&r, "doc", "body")?;
                let before = r.get::<i16, _>("flags") as u8;
                if !feed::marks(mark, &scope, before) || !feed::in_scope(&scope, &d) {
                    continue;
                }
                feed::mark_entry(&mut d, mark, now);
                d.follow_feed_flags();
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

/// Reads of the trait `RecordRepo` answers (`lookups.rs`).
impl PgStore {
    pub fn feed_counts(&self, project: &Uuid, user: &Uuid) -> Result<FeedCounts> {
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
}
