//! Keyset pagination over a UUIDv7 column, newest first, with the semantics
//! of the sled backend's pages: `after` walks to older items, `before` to
//! newer ones, and each page says whether there is more on either side. The
//! sort key a page hands out is the boundary id's 16 bytes.

use super::{db_err, PgStore};
use crate::error::Result;
use crate::storage::{Page, PageReq, Refusal};
use sqlx::postgres::PgRow;
use sqlx::{Postgres, QueryBuilder};
use uuid::Uuid;

/// The smallest UUIDv7 of millisecond `ms`: ids at or above it were made
/// at `ms` or later.
pub(super) fn id_floor(ms: i64) -> Uuid {
    let mut b = [0u8; 16];
    b[..6].copy_from_slice(&(ms.max(0) as u64).to_be_bytes()[2..]);
    Uuid::from_bytes(b)
}

/// A boundary's sort key as the id it encodes.
fn boundary(k: &[u8]) -> Result<Uuid> {
    Uuid::from_slice(k).map_err(|_| Refusal::BadCursor.err())
}

impl PgStore {
    /// One page of rows. `base` writes `SELECT … FROM … WHERE <filters>`
    /// (with at least one condition); `col` is the id column the page walks
    /// by; `item` reads a row into `(sort id, item)`.
    pub(crate) fn page<T>(
        &self, base: &dyn Fn(&mut QueryBuilder<'static, Postgres>), col: &str, req: &PageReq,
        item: &dyn Fn(PgRow) -> Result<(Uuid, T)>,
    ) -> Result<Page<T>> {
        let limit = req.limit.max(1);
        let fetch = |bound: Option<(&str, Uuid)>, desc: bool, n: usize| -> Result<Vec<PgRow>> {
            let mut q = QueryBuilder::new("");
            base(&mut q);
            if let Some((op, id)) = bound {
                q.push(format_args!(" AND {col} {op} "));
                q.push_bind(id);
            }
            q.push(format_args!(
                " ORDER BY {col} {} LIMIT {n}",
                if desc { "DESC" } else { "ASC" }
            ));
            self.block(q.build().fetch_all(self.pool())).map_err(db_err)
        };
        if let Some(before) = &req.before {
            let b = boundary(before)?;
            let rows = fetch(Some((">", b)), false, limit + 1)?;
            let more = rows.len() > limit;
            let mut items = rows
                .into_iter()
                .take(limit)
                .map(item)
                .collect::<Result<Vec<_>>>()?;
            items.reverse();
            let has_after = !fetch(Some(("<=", b)), true, 1)?.is_empty();
            return Ok(Page {
                first_key: items.first().map(|x| x.0.as_bytes().to_vec()),
                last_key: items
                    .last()
                    .map(|x| x.0.as_bytes().to_vec())
                    .or_else(|| Some(before.clone())),
                items: items.into_iter().map(|x| x.1).collect(),
                has_more_after: has_after,
                has_more_before: more,
            });
        }
        let after = req.after.as_deref().map(boundary).transpose()?;
        let rows = fetch(after.map(|a| ("<", a)), true, limit + 1)?;
        let more = rows.len() > limit;
        let items = rows
            .into_iter()
            .take(limit)
            .map(item)
            .collect::<Result<Vec<_>>>()?;
        let has_before = match after {
            Some(a) => !fetch(Some((">=", a)), false, 1)?.is_empty(),
            None => false,
        };
        Ok(Page {
            first_key: items
                .first()
                .map(|x| x.0.as_bytes().to_vec())
                .or_else(|| req.after.clone()),
            last_key: items.last().map(|x| x.0.as_bytes().to_vec()),
            items: items.into_iter().map(|x| x.1).collect(),
            has_more_after: more,
            has_more_before: has_before,
        })
    }
}
