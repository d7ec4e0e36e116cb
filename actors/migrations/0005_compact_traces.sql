-- Herald's schema on PostgreSQL, version 5: decision traces in their
-- compact encoding, and the tables a topic run writes per recipient without
-- a foreign key to `projects`.
--
-- Trace parts are written as `part`, the encoding the embedded store uses
-- (`store::trace_codec`: codes, argument names and ids as bytes), instead
-- of `entries` as JSON: a part is made without building its JSON, and
-- stored without PostgreSQL parsing it. Parts written before stay in
-- `entries` and are read as they are; each row has exactly one of the two.
ALTER TABLE trace ALTER COLUMN entries DROP NOT NULL, ADD COLUMN part bytea;
-- NOT VALID: checked for every row written from now on, without scanning
-- (under an exclusive lock) the rows already there, which all have
-- `entries` and no `part`.
ALTER TABLE trace ADD CONSTRAINT trace_one_form CHECK ((entries IS NULL) <> (part IS NULL)) NOT VALID;

-- Every row inserted into a table with a foreign key to `projects` checks
-- it and takes a share lock on the project's row: one lookup and lock per
-- row, and, with many transactions of one project at once, multixacts on
-- that one row. A topic chunk inserts four such rows per in-app recipient.
-- These four tables drop the key; deleting a project deletes their rows
-- itself, in the transaction that deletes the project (`delete_project`).
ALTER TABLE notifications DROP CONSTRAINT notifications_project_fkey;
ALTER TABLE feed DROP CONSTRAINT feed_project_fkey;
ALTER TABLE feed_state DROP CONSTRAINT feed_state_project_fkey;
ALTER TABLE feed_events DROP CONSTRAINT feed_events_project_fkey;
