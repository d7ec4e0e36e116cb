//! Throttle counters on PostgreSQL (`storage::ThrottleRepo`): one row per
//! `(project, flow, recipient, step, key)` holding the times (project
//! milliseconds) of the runs it counts. They are written in the transaction
//! of the notifications that count in them (`put_throttles`), and a run with
//! explicit recipients checks them under the recipients' locks
//! (`throttles_stale`), so two runs racing for one recipient's last slot
//! cannot both take it.

use super::{db_err, doc_of, to_doc, PgStore};
use crate::error::Result;
use crate::storage::{StagedNotification, ThrottleKey, ThrottleWrite};
use sqlx::{PgConnection, Row};
use std::collections::HashMap;
use uuid::Uuid;

/// The counters `keys` as stored (absent ones left out), one statement.
async fn hits_of(
    conn: &mut PgConnection, project: &Uuid, keys: &[&ThrottleKey],
) -> Result<HashMap<ThrottleKey, Vec<i64>>> {
    let flows: Vec<Uuid> = keys.iter().map(|k| k.flow_id).collect();
    let users: Vec<Uuid> = keys.iter().map(|k| k.recipient).collect();
    let steps: Vec<i16> = keys.iter().map(|k| i16::from(k.step)).collect();
    let names: Vec<&str> = keys.iter().map(|k| k.key.as_str()).collect();
    let rows = sqlx::query(
        "SELECT t.flow_id, t.recipient, t.step, t.key, t.hits FROM throttles t
         JOIN UNNEST($2::uuid[], $3::uuid[], $4::int2[], $5::text[]) AS k (f, r, s, n)
           ON t.flow_id = k.f AND t.recipient = k.r AND t.step = k.s AND t.key = k.n
         WHERE t.project = $1",
    )
    .bind(project)
    .bind(&flows)
    .bind(&users)
    .bind(&steps)
    .bind(&names)
    .fetch_all(conn)
    .await
    .map_err(db_err)?;
    let mut out = HashMap::with_capacity(rows.len());
    for r in rows {
        let k = ThrottleKey {
            flow_id: r.get("flow_id"),
            recipient: r.get("recipient"),
            step: r.get::<i16, _>("step") as u8,
            key: r.get("key"),
        };
        out.insert(k, doc_of(&r, "hits")?);
    }
    Ok(out)
}

/// Whether a counter is no longer as staging read it (the caller holds the
/// recipients' locks).
pub(super) async fn throttles_stale(
    conn: &mut PgConnection, project: &Uuid, throttles: &[&ThrottleWrite],
) -> Result<bool> {
    if throttles.is_empty() {
        return Ok(false);
    }
    let keys: Vec<&ThrottleKey> = throttles.iter().map(|t| &t.key).collect();
    let found = hits_of(conn, project, &keys).await?;
    Ok(throttles
        .iter()
        .any(|t| found.get(&t.key).map_or(&[][..], |v| v.as_slice()) != t.before.as_slice()))
}

/// Writes the counters the notifications passed, one statement.
pub(super) async fn put_throttles(
    conn: &mut PgConnection, project: &Uuid, notifications: &[StagedNotification],
) -> Result<()> {
    // the last write of a counter wins, as in a sled batch
    let mut by_key: HashMap<&ThrottleKey, &ThrottleWrite> = HashMap::new();
    for t in notifications.iter().filter_map(|n| n.throttle.as_ref()) {
        by_key.insert(&t.key, t);
    }
    if by_key.is_empty() {
        return Ok(());
    }
    let mut flows = vec![];
    let mut users = vec![];
    let mut steps: Vec<i16> = vec![];
    let mut names: Vec<&str> = vec![];
    let mut hits = vec![];
    for (k, t) in by_key {
        flows.push(k.flow_id);
        users.push(k.recipient);
        steps.push(i16::from(k.step));
        names.push(k.key.as_str());
        hits.push(to_doc(&t.after));
    }
    sqlx::query(
        "INSERT INTO throttles (project, flow_id, recipient, step, key, hits)
         SELECT $1, * FROM UNNEST($2::uuid[], $3::uuid[], $4::int2[], $5::text[], $6::jsonb[])
         ON CONFLICT (project, flow_id, recipient, step, key) DO UPDATE SET hits = EXCLUDED.hits",
    )
    .bind(project)
    .bind(&flows)
    .bind(&users)
    .bind(&steps)
    .bind(&names)
    .bind(&hits)
    .execute(conn)
    .await
    .map_err(db_err)?;
    Ok(())
}

/// Reads of the trait `RecordRepo` answers (`lookups.rs`).
impl PgStore {
    pub fn throttle_hits(&self, project: &Uuid, key: &ThrottleKey) -> Result<Vec<i64>> {
        self.block(async {
            let mut conn = self.pool().acquire().await.map_err(db_err)?;
            Ok(hits_of(&mut conn, project, &[key])
                .await?
                .remove(key)
                .unwrap_or_default())
        })
    }
}
