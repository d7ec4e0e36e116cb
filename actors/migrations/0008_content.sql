-- Herald's schema on PostgreSQL, version 8: a project's content (issue 40):
-- partials, email layouts and translation catalogs, one row per
-- (project, kind, key), the record as a JSON document. `kind` is
-- `model::ContentKind::tag` (1 partial, 2 layout, 3 translation); `key` a
-- handle or a locale. Deleted with the project.
CREATE TABLE content (
    project uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    kind smallint NOT NULL,
    key text NOT NULL,
    doc jsonb NOT NULL,
    PRIMARY KEY (project, kind, key)
);
