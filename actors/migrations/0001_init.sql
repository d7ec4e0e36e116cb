-- Herald's schema on PostgreSQL, version 1.
--
-- Every tenant-owned table starts with `project` and cascades from `projects`,
-- so deleting a project is one statement. Records the API filters or sorts on
-- have those fields as typed columns; the rest of each record is its JSON as
-- the engine's types serialise it (`doc`). Lists walk by a UUIDv7 column
-- (creation order), newest first, which is what keyset pagination needs.

CREATE TABLE meta (
    key   text PRIMARY KEY,
    value bytea NOT NULL
);

CREATE TABLE projects (
    id         uuid PRIMARY KEY,
    name       text NOT NULL UNIQUE,
    public_key text NOT NULL UNIQUE,
    doc        jsonb NOT NULL
);

CREATE TABLE users (
    project     uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    id          uuid NOT NULL,
    external_id text NOT NULL,
    doc         jsonb NOT NULL,
    PRIMARY KEY (project, id),
    UNIQUE (project, external_id)
);

CREATE TABLE preferences (
    project uuid NOT NULL,
    user_id uuid NOT NULL,
    doc     jsonb NOT NULL,
    PRIMARY KEY (project, user_id),
    FOREIGN KEY (project, user_id) REFERENCES users (project, id) ON DELETE CASCADE
);

CREATE TABLE channels (
    project uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    id      uuid NOT NULL,
    doc     jsonb NOT NULL,
    PRIMARY KEY (project, id)
);

CREATE TABLE flows (
    project uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    id      uuid NOT NULL,
    handle  text NOT NULL,
    doc     jsonb NOT NULL,
    PRIMARY KEY (project, id),
    UNIQUE (project, handle)
);

CREATE TABLE topics (
    project uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    key     text NOT NULL,
    id      uuid NOT NULL,
    doc     jsonb NOT NULL,
    PRIMARY KEY (project, key),
    UNIQUE (project, id)
);

CREATE TABLE subscriptions (
    project uuid NOT NULL,
    id      uuid NOT NULL,
    topic   text NOT NULL,
    user_id uuid NOT NULL,
    doc     jsonb NOT NULL,
    PRIMARY KEY (project, id),
    UNIQUE (project, user_id, topic),
    FOREIGN KEY (project, topic) REFERENCES topics (project, key) ON DELETE CASCADE
);
CREATE INDEX subscriptions_by_topic ON subscriptions (project, topic, id);

CREATE TABLE push_subscriptions (
    project    uuid NOT NULL,
    user_id    uuid NOT NULL,
    channel_id uuid NOT NULL,
    identifier text NOT NULL,
    id         uuid NOT NULL,
    doc        jsonb NOT NULL,
    PRIMARY KEY (project, user_id, channel_id, identifier),
    FOREIGN KEY (project, user_id) REFERENCES users (project, id) ON DELETE CASCADE
);

CREATE TABLE idempotency (
    project      uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    scope        bytea NOT NULL,
    payload_hash bytea NOT NULL,
    status       integer NOT NULL,
    body         bytea NOT NULL,
    created_ms   bigint NOT NULL,
    PRIMARY KEY (project, scope)
);
CREATE INDEX idempotency_by_age ON idempotency (created_ms);

-- Flow runs: `pending` counts notifications not processed yet; an active
-- run (not processed) is one a node resumes at start.
CREATE TABLE flow_runs (
    project   uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    id        uuid NOT NULL,
    processed boolean NOT NULL,
    pending   bigint NOT NULL DEFAULT 0,
    doc       jsonb NOT NULL,
    PRIMARY KEY (project, id)
);
CREATE INDEX flow_runs_active ON flow_runs (id) WHERE NOT processed;

-- The delivery queue: pending deliveries as rows a node claims (a lease
-- column joins them when several nodes share the work).
CREATE TABLE queue (
    project      uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    delivery_id  uuid NOT NULL,
    channel_type smallint NOT NULL,
    due_ms       bigint NOT NULL,
    PRIMARY KEY (project, delivery_id)
);
CREATE INDEX queue_by_type ON queue (channel_type, due_ms);

-- Notifications and their deliveries (a delivery's id is its notification's
-- with the last byte the step index: `model::notification_of`).
CREATE TABLE notifications (
    project   uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    id        uuid NOT NULL,
    run_id    uuid NOT NULL,
    topic     text,
    recipient uuid NOT NULL,
    processed boolean NOT NULL,
    doc       jsonb NOT NULL,
    PRIMARY KEY (project, id)
);
CREATE INDEX notifications_by_run ON notifications (project, run_id, id);
CREATE INDEX notifications_by_topic ON notifications (project, topic, id);
CREATE INDEX notifications_by_recipient ON notifications (project, recipient, id);

CREATE TABLE deliveries (
    project         uuid NOT NULL,
    id              uuid NOT NULL,
    notification_id uuid NOT NULL,
    recipient       uuid NOT NULL,
    status          text NOT NULL,
    channel_type    smallint NOT NULL,
    channel_id      uuid NOT NULL,
    doc             jsonb NOT NULL,
    PRIMARY KEY (project, id),
    FOREIGN KEY (project, notification_id) REFERENCES notifications (project, id) ON DELETE CASCADE
);
CREATE INDEX deliveries_by_notification ON deliveries (project, notification_id);
CREATE INDEX deliveries_by_status ON deliveries (project, status, id);

-- Users' in-app feeds: one row per entry with its flags (1 seen, 2 read,
-- 4 archived; the times are in the delivery's record), the counts and
-- latest `seq` per user, and the event log of live-feed frames.
CREATE TABLE feed (
    project     uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    user_id     uuid NOT NULL,
    delivery_id uuid NOT NULL,
    flags       smallint NOT NULL,
    PRIMARY KEY (project, user_id, delivery_id)
);

CREATE TABLE feed_state (
    project uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    user_id uuid NOT NULL,
    seq     bigint NOT NULL,
    unread  bigint NOT NULL,
    unseen  bigint NOT NULL,
    PRIMARY KEY (project, user_id)
);

CREATE TABLE feed_events (
    project    uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    user_id    uuid NOT NULL,
    seq        bigint NOT NULL,
    frame      text NOT NULL,
    created_ms bigint NOT NULL,
    PRIMARY KEY (project, user_id, seq)
);
