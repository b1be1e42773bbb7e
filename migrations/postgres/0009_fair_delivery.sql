-- PostgreSQL twin of migrations/0009_fair_delivery.sql (docs/architecture.md, Storage layer): the same tables, columns
-- and indexes; BIGINT for SQLite's INTEGER, TEXT compared byte-wise (COLLATE "C") as SQLite does.
-- Fair webhook delivery across tenants. The delivery worker no longer takes the oldest due
-- deliveries of all tenants (one tenant's backlog then filled every slot); it walks the webhooks
-- that have pending deliveries, one index seek each, and takes each webhook's own oldest due one.
-- Ties between deliveries due at the same time go by created_at, then id (SQLite: by rowid).
-- Frozen once released: change the schema in a new numbered file.
CREATE INDEX deliveries_webhook_due_idx ON deliveries (status, webhook_id, next_attempt_at);
