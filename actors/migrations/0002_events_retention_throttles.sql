-- Herald's schema on PostgreSQL, version 2: throttle counters, event
-- endpoints with their outbox and logs, decision traces, erasures, and the
-- indexes retention walks by.

-- Throttle counters: per (flow, recipient, step, rendered key), the times
-- (project milliseconds) of the runs the counter counts, as a JSON array.
CREATE TABLE throttles (
    project   uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    flow_id   uuid NOT NULL,
    recipient uuid NOT NULL,
    step      smallint NOT NULL,
    key       text NOT NULL,
    hits      jsonb NOT NULL,
    PRIMARY KEY (project, flow_id, recipient, step, key)
);

-- Event endpoints; `secrets` is `[{"secret", "expires_ms"}]`, the current
-- one first (kept as the database keeps channel secrets: see docs/DEPLOY.md).
CREATE TABLE event_endpoints (
    project uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    id      uuid NOT NULL,
    enabled boolean NOT NULL,
    secrets jsonb NOT NULL,
    doc     jsonb NOT NULL,
    PRIMARY KEY (project, id)
);

-- Events' places in the log and outboxes: increasing in commit order per
-- resource (a resource's events are written under its lock). It starts at
-- the migration's time in microseconds, as the embedded store's do.
CREATE SEQUENCE event_seq;
SELECT setval('event_seq', (extract(epoch FROM clock_timestamp()) * 1000000)::bigint);

-- Every event written, kept for the log retention so `replay` can resend it.
CREATE TABLE event_log (
    project    uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    seq        bigint NOT NULL,
    id         uuid NOT NULL,
    event_type text NOT NULL,
    resource   uuid NOT NULL,
    body       text NOT NULL,
    created_ms bigint NOT NULL,
    PRIMARY KEY (project, seq)
);
CREATE INDEX event_log_by_age ON event_log (created_ms);
CREATE INDEX event_log_by_project_age ON event_log (project, created_ms);

-- Events an endpoint has still to receive, with their retry state. No
-- foreign key to the endpoint: an event staged while its endpoint is being
-- deleted must not fail the change it describes; the log sweep removes it.
CREATE TABLE outbox (
    project    uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    endpoint   uuid NOT NULL,
    seq        bigint NOT NULL,
    id         uuid NOT NULL,
    event_type text NOT NULL,
    resource   uuid NOT NULL,
    body       text NOT NULL,
    attempts   integer NOT NULL,
    first_ms   bigint,
    due_ms     bigint NOT NULL,
    PRIMARY KEY (project, endpoint, seq)
);
CREATE INDEX outbox_by_resource ON outbox (project, endpoint, resource, seq);

CREATE TABLE event_attempts (
    project  uuid NOT NULL,
    endpoint uuid NOT NULL,
    id       uuid NOT NULL,
    doc      jsonb NOT NULL,
    PRIMARY KEY (project, endpoint, id),
    FOREIGN KEY (project, endpoint) REFERENCES event_endpoints (project, id) ON DELETE CASCADE
);
CREATE INDEX event_attempts_by_id ON event_attempts (id);

-- Decision traces: the entries each commit added to a notification's
-- trace, read back in `seq` order; they go with their notification.
CREATE TABLE trace (
    project         uuid NOT NULL,
    notification_id uuid NOT NULL,
    seq             bigint GENERATED ALWAYS AS IDENTITY,
    entries         jsonb NOT NULL,
    PRIMARY KEY (project, notification_id, seq),
    FOREIGN KEY (project, notification_id) REFERENCES notifications (project, id) ON DELETE CASCADE
);

-- Erasures of deleted users' notifications (`running` until complete).
CREATE TABLE erasures (
    project uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    id      uuid NOT NULL,
    running boolean NOT NULL,
    doc     jsonb NOT NULL,
    PRIMARY KEY (project, id)
);
CREATE INDEX erasures_running ON erasures (id) WHERE running;

-- What retention walks by: feed entries by age (a delivery id is its time),
-- live-feed events by age, settled notifications by age.
CREATE INDEX feed_by_entry ON feed (project, delivery_id);
CREATE INDEX feed_events_by_age ON feed_events (project, created_ms);
CREATE INDEX deliveries_pending ON deliveries (project, notification_id) WHERE status = 'pending';
