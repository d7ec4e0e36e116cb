-- Herald's schema on PostgreSQL, version 11: each channel's circuit
-- breaker state (ok or degraded, since when, the last error) as a JSON
-- document, shared by the nodes of a cluster; deleted with its channel.
CREATE TABLE channel_health (
    project uuid NOT NULL,
    channel_id uuid NOT NULL,
    doc jsonb NOT NULL,
    PRIMARY KEY (project, channel_id),
    FOREIGN KEY (project, channel_id) REFERENCES channels (project, id) ON DELETE CASCADE
);
