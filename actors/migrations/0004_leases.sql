-- Herald's schema on PostgreSQL, version 3: leases, so that several nodes
-- on one database share the work exactly once (docs/DEPLOY.md, "Cluster").
--
-- A lease is the node that holds a row (`lease_owner`, the random id a
-- `serve` process takes at start) and until when (`lease_until`, real
-- milliseconds). A node claims rows whose lease is free or expired with
-- `FOR UPDATE SKIP LOCKED`, renews its leases while it works on them, and
-- records an outcome only for rows it still holds; a node that dies stops
-- renewing, and its rows are claimed by the others once the lease expires.

-- Queued deliveries: due by `due_ms` (a test-clock project's by its clock).
ALTER TABLE queue ADD COLUMN lease_owner uuid, ADD COLUMN lease_until bigint;
CREATE INDEX queue_by_lease ON queue (lease_owner) WHERE lease_owner IS NOT NULL;

-- Topic runs being expanded: one node expands a run at a time, from the
-- cursor in its record.
ALTER TABLE flow_runs ADD COLUMN lease_owner uuid, ADD COLUMN lease_until bigint;
CREATE INDEX flow_runs_by_lease ON flow_runs (lease_owner) WHERE lease_owner IS NOT NULL;

-- Outbound events being sent.
ALTER TABLE outbox ADD COLUMN lease_owner uuid, ADD COLUMN lease_until bigint;
CREATE INDEX outbox_by_lease ON outbox (lease_owner) WHERE lease_owner IS NOT NULL;

-- What a node looks for when it claims expansions: runs not expanded yet.
CREATE INDEX flow_runs_expanding ON flow_runs (id)
    WHERE NOT processed AND (doc->>'expanded')::boolean IS NOT TRUE;
