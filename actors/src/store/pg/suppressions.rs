//! A project's suppression list on PostgreSQL (`storage::SuppressionRepo`):
//! rows of `suppressions` and `soft_bounces` (migration 0010), keyed by
//! `(project, channel_type, address)`, each call one statement.

use super::{db_err, doc_of, to_doc, PgStore};
use crate::error::{Error, Result};
use crate::model::{ChannelType, Suppression};
use crate::storage::{AddressKey, Page, PageReq, SuppressionRepo};
use sqlx::Row;
use uuid::Uuid;

impl SuppressionRepo for PgStore {
    fn put_suppression(&self, project: &Uuid, s: Suppression) -> Result<(Suppression, bool)> {
        // Inserted, or the row there; a row inserted by another transaction
        // after this statement's snapshot is seen by the next try.
        for _ in 0..3 {
            let row = self
                .block(
                    sqlx::query(
                        "WITH ins AS (
                           INSERT INTO suppressions (project, channel_type, address, id, doc)
                           VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING doc)
                         SELECT doc, true AS created FROM ins
                         UNION ALL
                         SELECT doc, false FROM suppressions
                          WHERE project = $1 AND channel_type = $2 AND address = $3
                            AND NOT EXISTS (SELECT 1 FROM ins)",
                    )
                    .bind(project)
                    .bind(s.channel_type.index() as i16)
                    .bind(&s.address)
                    .bind(s.id)
                    .bind(to_doc(&s))
                    .fetch_optional(self.pool()),
                )
                .map_err(db_err)?;
            if let Some(r) = row {
                return Ok((doc_of(&r, "doc")?, r.get("created")));
            }
        }
        Err(Error::internal("the suppression could not be stored"))
    }

    fn suppressions_of(
        &self, project: &Uuid, keys: &[AddressKey<'_>],
    ) -> Result<Vec<Option<Suppression>>> {
        let mut out = vec![None; keys.len()];
        if keys.is_empty() {
            return Ok(out);
        }
        let cts: Vec<i16> = keys.iter().map(|(ct, _)| ct.index() as i16).collect();
        let addresses: Vec<&str> = keys.iter().map(|(_, a)| *a).collect();
        let rows = self
            .block(
                sqlx::query(
                    "SELECT k.i, s.doc FROM unnest($2::smallint[], $3::text[])
                       WITH ORDINALITY AS k(ct, address, i)
                     JOIN suppressions s
                       ON s.project = $1 AND s.channel_type = k.ct AND s.address = k.address",
                )
                .bind(project)
                .bind(&cts)
                .bind(&addresses)
                .fetch_all(self.pool()),
            )
            .map_err(db_err)?;
        for r in rows {
            let i: i64 = r.get("i");
            if let Some(slot) = out.get_mut((i - 1) as usize) {
                *slot = Some(doc_of(&r, "doc")?);
            }
        }
        Ok(out)
    }

    fn suppressions_page(
        &self, project: &Uuid, ct: Option<ChannelType>, req: &PageReq,
    ) -> Result<Page<Suppression>> {
        let p = *project;
        self.page(
            &|q| {
                q.push("SELECT id, doc FROM suppressions WHERE project = ");
                q.push_bind(p);
                if let Some(ct) = ct {
                    q.push(" AND channel_type = ");
                    q.push_bind(ct.index() as i16);
                }
            },
            "id",
            req,
            &|r| Ok((r.get("id"), doc_of(&r, "doc")?)),
        )
    }

    fn remove_suppression(&self, project: &Uuid, (ct, address): AddressKey<'_>) -> Result<bool> {
        let n: i64 = self
            .block(
                sqlx::query_scalar(
                    "WITH gone AS (
                       DELETE FROM suppressions
                        WHERE project = $1 AND channel_type = $2 AND address = $3 RETURNING 1),
                     bounces AS (
                       DELETE FROM soft_bounces
                        WHERE project = $1 AND channel_type = $2 AND address = $3 RETURNING 1)
                     SELECT count(*) FROM gone",
                )
                .bind(project)
                .bind(ct.index() as i16)
                .bind(address)
                .fetch_one(self.pool()),
            )
            .map_err(db_err)?;
        Ok(n > 0)
    }

    fn add_soft_bounce(
        &self, project: &Uuid, (ct, address): AddressKey<'_>, at_ms: i64, keep_since_ms: i64,
    ) -> Result<Vec<i64>> {
        self.block(
            sqlx::query_scalar(
                "INSERT INTO soft_bounces AS b (project, channel_type, address, at_ms)
                 VALUES ($1, $2, $3, ARRAY[$4::bigint])
                 ON CONFLICT (project, channel_type, address) DO UPDATE SET at_ms = ARRAY(
                   SELECT t FROM unnest(b.at_ms || $4::bigint) AS t WHERE t >= $5 ORDER BY t)
                 RETURNING at_ms",
            )
            .bind(project)
            .bind(ct.index() as i16)
            .bind(address)
            .bind(at_ms)
            .bind(keep_since_ms)
            .fetch_one(self.pool()),
        )
        .map_err(db_err)
    }
}
