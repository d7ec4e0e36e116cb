-- Herald's schema on PostgreSQL: the console's members, their one-time
-- sign-in links and their sessions (docs/CONSOLE.md). Links and sessions are
-- stored under the SHA-256 of their token, never the token; they go with
-- their member, and members with their project.
CREATE TABLE console_members (
    project uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    email text NOT NULL,
    role text NOT NULL,
    password_hash text,
    created_ms bigint NOT NULL,
    PRIMARY KEY (project, email)
);

CREATE TABLE console_links (
    project uuid NOT NULL,
    hash bytea NOT NULL,
    email text NOT NULL,
    expires_ms bigint NOT NULL,
    PRIMARY KEY (project, hash),
    FOREIGN KEY (project, email) REFERENCES console_members (project, email) ON DELETE CASCADE
);

CREATE TABLE console_sessions (
    project uuid NOT NULL,
    hash bytea NOT NULL,
    email text NOT NULL,
    csrf text NOT NULL,
    created_ms bigint NOT NULL,
    last_seen_ms bigint NOT NULL,
    PRIMARY KEY (project, hash),
    FOREIGN KEY (project, email) REFERENCES console_members (project, email) ON DELETE CASCADE
);
