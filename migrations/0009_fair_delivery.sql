-- Fair webhook delivery across tenants. The delivery worker no longer takes the oldest due
-- deliveries of all tenants (one tenant's backlog then filled every slot); it walks the webhooks
-- that have pending deliveries, one index seek each, and takes each webhook's own oldest due one.
-- The rowid (insertion order) breaks ties between deliveries due at the same time.
-- Frozen once released: change the schema in a new numbered file.
CREATE INDEX deliveries_webhook_due_idx ON deliveries (status, webhook_id, next_attempt_at);
