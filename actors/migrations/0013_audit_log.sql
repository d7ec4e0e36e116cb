-- Herald's schema on PostgreSQL, version 13: each project's audit log, one
-- row per change of its configuration, the entry (already redacted by the
-- engine) as a JSON document; `id` (UUIDv7) is the log's order. The
-- resource type and the actor's name are columns so a page filtered by them
-- is an index scan. Entries are kept for the life of the project (no
-- retention applies) and deleted with it.
CREATE TABLE audit_log (
    project uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    id uuid NOT NULL,
    resource_type text NOT NULL,
    who text NOT NULL,
    doc jsonb NOT NULL,
    PRIMARY KEY (project, id)
);
CREATE INDEX audit_log_by_type ON audit_log (project, resource_type, id);
CREATE INDEX audit_log_by_who ON audit_log (project, who, id);
