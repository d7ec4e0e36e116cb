-- Herald's schema on PostgreSQL, version 7: a feed entry's place in its
-- feed. An entry that entered the feed after its run was accepted (a step
-- after a delay or a batch, a scheduled run) sorts by when it entered
-- (`Delivery::feed_sort_id`: the delivery id with its millisecond time
-- replaced by that instant); every entry stored before this version entered
-- at acceptance, so its place is its delivery id.
ALTER TABLE feed ADD COLUMN sort_id uuid;
UPDATE feed SET sort_id = delivery_id;
ALTER TABLE feed ALTER COLUMN sort_id SET NOT NULL;
CREATE INDEX feed_by_sort ON feed (project, user_id, sort_id);
