-- Herald's schema on PostgreSQL, version 17: a notification's deliveries
-- found by their key range, without an index or a foreign key of their own.
--
-- A delivery's id is its notification's with the last byte replaced by
-- its step (and route hop) index, and a notification's last byte is 0xFF
-- (`model::delivery_id`). A notification's deliveries are therefore the
-- primary key's range from its id with a last byte of 0x00 up to, not
-- including, its id: `deliveries_from(id) <= d.id < id`.
--
-- `deliveries_by_notification` and `deliveries_pending` repeated that
-- range: two index entries more per delivery written, and one or two more
-- on every settle (a settle's update is never HOT: `status` is indexed). The foreign key to `notifications`
-- looked its notification up on every insert, and its cascade needed that
-- index; deliveries now go with their notification in the statements that
-- remove it (retention, erasure, a project's deletion).
CREATE FUNCTION deliveries_from(nid uuid) RETURNS uuid
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT encode(overlay(uuid_send(nid) PLACING '\x00'::bytea FROM 16 FOR 1), 'hex')::uuid $$;

ALTER TABLE deliveries DROP CONSTRAINT deliveries_project_notification_id_fkey;
DROP INDEX deliveries_by_notification;
-- What a notification's pending deliveries are is read from its range too
-- (a handful of rows), so the partial index of them goes as well.
DROP INDEX deliveries_pending;
