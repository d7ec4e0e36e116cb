-- Herald's schema on PostgreSQL, version 11: users' presence, for the step
-- conditions over `recipient.online` and `recipient.last_seen_at`.
--
-- `presence_sockets`: how many live-feed sockets of a user each node holds
-- (`version` orders one node's writes for a user: a later one never loses to
-- an earlier one that arrives after it). A node's rows count only while the
-- node is alive: `presence_nodes.lease_until` (real milliseconds), renewed
-- with the node's other leases; the rows of a node whose lease expired are
-- ignored, then deleted by the next renewal of any node.
-- `last_seen`: when the user was last seen, in project time (milliseconds).
-- Both go with their user (and so with the project).
CREATE TABLE presence_nodes (
    node uuid PRIMARY KEY,
    lease_until bigint NOT NULL
);

CREATE TABLE presence_sockets (
    project uuid NOT NULL,
    user_id uuid NOT NULL,
    node uuid NOT NULL,
    sockets integer NOT NULL,
    version bigint NOT NULL,
    PRIMARY KEY (project, user_id, node),
    FOREIGN KEY (project, user_id) REFERENCES users (project, id) ON DELETE CASCADE
);
CREATE INDEX presence_sockets_by_node ON presence_sockets (node);

CREATE TABLE last_seen (
    project uuid NOT NULL,
    user_id uuid NOT NULL,
    at_ms bigint NOT NULL,
    PRIMARY KEY (project, user_id),
    FOREIGN KEY (project, user_id) REFERENCES users (project, id) ON DELETE CASCADE
);
