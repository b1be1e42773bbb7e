-- The instance that claimed a shop's callback (set with status = 'sending'), as deliveries.claimed_by
-- (0025) does for webhook deliveries: with several instances a callback left in `sending` by an
-- instance that is no longer connected is pending again at once, not after the attempt time-out.
-- NULL on rows claimed before this migration; on SQLite (one process) it is set and never read.
-- Frozen once released: change the schema in a new numbered file.
ALTER TABLE shop_notifies ADD COLUMN claimed_by TEXT;
