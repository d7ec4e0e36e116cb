//! A project's content on PostgreSQL (`storage::ContentRepo`): a row of
//! `content` (migration 0008) per record, keyed by `(project, kind, key)`,
//! each call one statement.

use super::{db_err, doc_of, to_doc, PgStore};
use crate::error::Result;
use crate::model::{ContentKind, ContentRecord};
use crate::storage::ContentRepo;
use uuid::Uuid;

impl ContentRepo for PgStore {
    fn content(
        &self, project: &Uuid, kind: ContentKind, key: &str,
    ) -> Result<Option<ContentRecord>> {
        let row = self
            .block(
                sqlx::query(
                    "SELECT doc FROM content WHERE project = $1 AND kind = $2 AND key = $3",
                )
                .bind(project)
                .bind(kind.tag() as i16)
                .bind(key)
                .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        row.map(|r| doc_of(&r, "doc")).transpose()
    }

    fn contents(&self, project: &Uuid, kind: Option<ContentKind>) -> Result<Vec<ContentRecord>> {
        let rows = self
            .block(
                sqlx::query(
                    "SELECT doc FROM content WHERE project = $1 AND ($2::smallint IS NULL OR kind = $2)
                     ORDER BY kind, key COLLATE \"C\"",
                )
                .bind(project)
                .bind(kind.map(|k| k.tag() as i16))
                .fetch_all(self.pool()),
            )
            .map_err(db_err)?;
        rows.iter().map(|r| doc_of(r, "doc")).collect()
    }

    fn put_content(&self, project: &Uuid, r: &ContentRecord) -> Result<bool> {
        // `xmax = 0` tells an inserted row from an updated one.
        let created: bool = self
            .block(
                sqlx::query_scalar(
                    "INSERT INTO content (project, kind, key, doc) VALUES ($1, $2, $3, $4)
                     ON CONFLICT (project, kind, key) DO UPDATE SET doc = EXCLUDED.doc
                     RETURNING (xmax = 0)",
                )
                .bind(project)
                .bind(r.kind().tag() as i16)
                .bind(&r.key)
                .bind(to_doc(r))
                .fetch_one(self.pool()),
            )
            .map_err(db_err)?;
        Ok(created)
    }

    fn remove_content(&self, project: &Uuid, kind: ContentKind, key: &str) -> Result<bool> {
        let n = self
            .block(
                sqlx::query("DELETE FROM content WHERE project = $1 AND kind = $2 AND key = $3")
                    .bind(project)
                    .bind(kind.tag() as i16)
                    .bind(key)
                    .execute(self.pool()),
            )
            .map_err(db_err)?
            .rows_affected();
        Ok(n > 0)
    }
}
