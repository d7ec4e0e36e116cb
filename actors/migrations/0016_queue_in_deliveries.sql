-- Herald's schema on PostgreSQL, version 16: the delivery queue folded into
-- the deliveries table. A queued delivery is one with a due time
-- (`due_ms`, NULL once it is settled); its lease (`lease_owner`,
-- `lease_until`) is on the same row. Settling a delivery then writes its
-- row once (the record, its status and its leaving the queue in one
-- UPDATE) instead of updating the delivery and deleting a queue row, and
-- accepting a run writes one row per delivery instead of two.
--
-- The partial index holds the queued deliveries only, so it stays as small
-- as the queue was, whatever the number of deliveries kept.

ALTER TABLE deliveries
    ADD COLUMN due_ms bigint,
    ADD COLUMN lease_owner uuid,
    ADD COLUMN lease_until bigint;

UPDATE deliveries AS d
   SET due_ms = q.due_ms, lease_owner = q.lease_owner, lease_until = q.lease_until
  FROM queue AS q
 WHERE d.project = q.project AND d.id = q.delivery_id;

CREATE INDEX deliveries_due ON deliveries (channel_type, due_ms) WHERE due_ms IS NOT NULL;
CREATE INDEX deliveries_by_lease ON deliveries (lease_owner) WHERE lease_owner IS NOT NULL;

DROP TABLE queue;
