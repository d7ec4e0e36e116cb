//! Delivery feedback on PostgreSQL (`storage::FeedbackRepo`): the provider
//! message index is the `sent_messages` table (migration 0009), written by
//! settling in its transaction (`put_sent_messages`) and removed with its
//! delivery by the foreign key; a report's change is written under the
//! notification's row lock (the lock every writer of its deliveries takes)
//! with the delivery's event and trace entry in one transaction.

use super::events::{Outbound, Traces};
use super::rows::save_delivery;
use super::{db_err, record_of, PgStore};
use crate::error::{Error, Result};
use crate::feedback::SentIndex;
use crate::model::{notification_of, Delivery};
use crate::storage::{FeedbackRepo, ReportEdit, SentMessage};
use sqlx::{PgConnection, Row};
use uuid::Uuid;

/// Writes the index entries of deliveries that settled as sent, in the
/// settle's transaction (a later send of the same id on the channel wins).
pub(super) async fn put_sent_messages(
    conn: &mut PgConnection, entries: &[(Uuid, SentIndex)],
) -> Result<()> {
    if entries.is_empty() {
        return Ok(());
    }
    let (mut ps, mut cs, mut ms, mut ds, mut addrs) = (vec![], vec![], vec![], vec![], vec![]);
    for (p, e) in entries {
        ps.push(*p);
        cs.push(e.channel_id);
        ms.push(e.message_id.clone());
        ds.push(e.delivery_id);
        addrs.push(e.address.clone());
    }
    sqlx::query(
        "INSERT INTO sent_messages (project, channel_id, message_id, delivery_id, address)
         SELECT * FROM UNNEST($1::uuid[], $2::uuid[], $3::text[], $4::uuid[], $5::text[])
         ON CONFLICT (project, channel_id, message_id)
         DO UPDATE SET delivery_id = EXCLUDED.delivery_id, address = EXCLUDED.address",
    )
    .bind(&ps)
    .bind(&cs)
    .bind(&ms)
    .bind(&ds)
    .bind(&addrs)
    .execute(conn)
    .await
    .map_err(db_err)?;
    Ok(())
}

impl FeedbackRepo for PgStore {
    fn channel_project(&self, channel: &Uuid) -> Result<Option<Uuid>> {
        self.block(
            sqlx::query_scalar("SELECT project FROM channels WHERE id = $1")
                .bind(channel)
                .fetch_optional(self.pool()),
        )
        .map_err(db_err)
    }

    fn sent_message(
        &self, project: &Uuid, channel: &Uuid, message_id: &str,
    ) -> Result<Option<SentMessage>> {
        let row = self
            .block(
                sqlx::query(
                    "SELECT delivery_id, address FROM sent_messages
                     WHERE project = $1 AND channel_id = $2 AND message_id = $3",
                )
                .bind(project)
                .bind(channel)
                .bind(message_id)
                .fetch_optional(self.pool()),
            )
            .map_err(db_err)?;
        Ok(row.map(|r| SentMessage {
            delivery_id: r.get("delivery_id"),
            address: r.get("address"),
        }))
    }

    fn apply_report(
        &self, project: &Uuid, delivery: &Uuid, f: ReportEdit<'_>,
    ) -> Result<Option<(Delivery, bool)>> {
        let mut tx = self.begin()?;
        let out = self.block(async {
            let locked = sqlx::query(
                "SELECT 1 FROM notifications WHERE project = $1 AND id = $2 FOR UPDATE",
            )
            .bind(project)
            .bind(notification_of(delivery))
            .fetch_optional(&mut *tx)
            .await
            .map_err(db_err)?;
            if locked.is_none() {
                return Ok::<_, Error>(None);
            }
            let Some(row) =
                sqlx::query("SELECT doc, body FROM deliveries WHERE project = $1 AND id = $2")
                    .bind(project)
                    .bind(delivery)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(db_err)?
            else {
                return Ok(None);
            };
            let mut d: Delivery = record_of(&row, "doc", "body")?;
            let Some(entry) = f(&mut d) else {
                return Ok(Some((d, false)));
            };
            save_delivery(&mut tx, project, &d).await?;
            let mut events = Outbound::load(&mut tx, [*project]).await?;
            events.stage_delivery(project, &d);
            events.flush(&mut tx).await?;
            let mut traces = Traces::default();
            traces.add(project, &d.notification_id, &[entry]);
            traces.flush(&mut tx).await?;
            Ok(Some((d, true)))
        })?;
        if matches!(out, Some((_, true))) {
            self.commit(tx)?;
        }
        Ok(out)
    }
}
