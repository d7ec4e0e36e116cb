-- Herald's schema on PostgreSQL, version 3: batches of batch (digest)
-- steps. One row per batch, its id the notification of the run that opened
-- it, with the slot it fills (flow, recipient, step, rendered key) and the
-- batch itself (window, activities, waiting deliveries, close) as JSON. A
-- slot's current batch is its latest row.
CREATE TABLE batches (
    project   uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    id        uuid NOT NULL,
    flow_id   uuid NOT NULL,
    recipient uuid NOT NULL,
    step      smallint NOT NULL,
    key       text NOT NULL,
    closed    boolean NOT NULL,
    doc       jsonb NOT NULL,
    PRIMARY KEY (project, id)
);
CREATE INDEX batches_by_slot ON batches (project, flow_id, recipient, step, key, id);
