-- Herald's schema on PostgreSQL, version 15: the notification list's
-- filters as index seeks, newest first. A flow's notifications (the flow id
-- lives in the document) and the pending ones (few, often old: a scan of
-- the primary key for them crosses every processed notification newer than
-- they are).
CREATE INDEX notifications_by_flow ON notifications (project, (doc->>'flow_id'), id);
CREATE INDEX notifications_pending ON notifications (project, id) WHERE NOT processed;
