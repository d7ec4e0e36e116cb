-- Herald's schema on PostgreSQL, version 6: each project's usage counter
-- (`quota`), an estimate of the bytes of its live records that the storage
-- quota is checked against. One row per project, created by its first
-- count; raised after each write that stores content and lowered in the
-- transaction of each retention or erasure step that removes some.
CREATE TABLE project_usage (
    project uuid PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
    bytes bigint NOT NULL DEFAULT 0 CHECK (bytes >= 0)
);
