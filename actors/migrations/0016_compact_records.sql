-- Herald's schema on PostgreSQL, version 16: notifications and deliveries
-- in the compact encoding the embedded store uses, and their flow as a column.
--
-- A notification is written as `body` (`store::codec`: MessagePack with
-- field names, ids as 16 bytes, times as milliseconds) instead of `doc` as
-- JSONB, where each id took 36 characters and each time 30: about half the
-- bytes, and nothing for PostgreSQL to parse. Rows written before keep
-- `doc` and are read as they are; a row rewritten (when it is processed)
-- is written as `body`. Each row has exactly one of the two.
ALTER TABLE notifications
    ALTER COLUMN doc DROP NOT NULL,
    ADD COLUMN body bytea,
    ADD COLUMN flow_id uuid;
-- NOT VALID: checked for every row written from now on, without scanning
-- (under an exclusive lock) the rows already there, which all have `doc`.
ALTER TABLE notifications ADD CONSTRAINT notifications_one_form
    CHECK ((doc IS NULL) <> (body IS NULL)) NOT VALID;

-- The flow filter seeks an index on the flow as a uuid (16 bytes an entry,
-- where the document's text took 36, which made it the table's largest
-- index): the column, or on a row written before it, the document's. No
-- row is rewritten; building the index reads each once, holding off writes
-- to the table meanwhile (docs/DEPLOY.md).
DROP INDEX notifications_by_flow;
CREATE INDEX notifications_by_flow
    ON notifications (project, coalesce(flow_id, (doc->>'flow_id')::uuid), id);

-- Deliveries likewise: `body` in the compact form, `doc` for the rows
-- written before. Their flow is a column too, for the feed's flow filter
-- and counts; a row written before reads its document's instead
-- (`coalesce`), so no row is rewritten here.
ALTER TABLE deliveries
    ALTER COLUMN doc DROP NOT NULL,
    ADD COLUMN body bytea,
    ADD COLUMN flow_id uuid;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_one_form
    CHECK ((doc IS NULL) <> (body IS NULL)) NOT VALID;

-- A run without a topic (most are) has no entry in the topic index: the
-- topic filter (`topic = $1`) implies the topic is there.
DROP INDEX notifications_by_topic;
CREATE INDEX notifications_by_topic ON notifications (project, topic, id) WHERE topic IS NOT NULL;
