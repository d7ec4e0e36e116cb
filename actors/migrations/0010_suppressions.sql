-- Herald's schema on PostgreSQL, version 10: each project's suppression
-- list, one row per (project, channel type, address), the address
-- normalised by the engine, the record as a JSON document; `id` (UUIDv7) is
-- the list's order. `soft_bounces` holds the recent soft bounces of an
-- address (milliseconds since the epoch) counted towards suppressing it.
-- Both are deleted with the project.
CREATE TABLE suppressions (
    project uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    channel_type smallint NOT NULL,
    address text NOT NULL,
    id uuid NOT NULL,
    doc jsonb NOT NULL,
    PRIMARY KEY (project, channel_type, address)
);
CREATE INDEX suppressions_by_id ON suppressions (project, id);
CREATE INDEX suppressions_by_type_id ON suppressions (project, channel_type, id);

CREATE TABLE soft_bounces (
    project uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    channel_type smallint NOT NULL,
    address text NOT NULL,
    at_ms bigint[] NOT NULL,
    PRIMARY KEY (project, channel_type, address)
);
