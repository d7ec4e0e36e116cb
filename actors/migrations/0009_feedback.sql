-- Herald's schema on PostgreSQL, version 9: the provider message index of
-- delivery feedback. A delivery that settles as sent with a provider
-- message id leaves one row, written in the settle's transaction: the
-- channel and the provider's id (normalised, without angle brackets) name
-- the delivery and the address the message went to, so a provider's
-- report (`POST /hooks/v1/{channel_id}`) finds its delivery. A row goes
-- with its delivery (retention, erasure, project deletion: the foreign
-- key), so the table is bounded by the deliveries kept.
CREATE TABLE sent_messages (
    project     uuid NOT NULL,
    channel_id  uuid NOT NULL,
    message_id  text NOT NULL,
    delivery_id uuid NOT NULL,
    address     text NOT NULL,
    PRIMARY KEY (project, channel_id, message_id),
    FOREIGN KEY (project, delivery_id) REFERENCES deliveries (project, id) ON DELETE CASCADE
);
CREATE INDEX sent_messages_by_delivery ON sent_messages (project, delivery_id);

-- A callback names its channel only, whatever its project.
CREATE INDEX channels_by_id ON channels (id);
