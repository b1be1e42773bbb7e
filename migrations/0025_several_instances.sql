-- Several instances on one database (issue 31): shared rate-limit buckets, and who claimed a delivery.
-- Frozen once released: change the schema in a new numbered file.
--
-- Only PostgreSQL uses this table: with several gateways on one database each limit is one token
-- bucket here, taken by an upsert (src/db/rate-buckets.ts), so it does not multiply with the number
-- of instances. SQLite serves one process and keeps its buckets in memory (src/http/rate-limit.ts);
-- the table exists on both engines so the schemas stay twins (and `db copy` copies it, empty).
--
-- scope: the limit's name (api_key, invoice_create, sign_in:ip...); subject: whom it counts (a key
-- id, a client address...); tokens: what is left of the burst at updated_at (refilled at per_minute
-- a minute, up to per_minute); allowed: 1 when the last take found a token, 0 when it was refused.
CREATE TABLE rate_limit_buckets (
  scope TEXT NOT NULL,
  subject TEXT NOT NULL,
  tokens REAL NOT NULL,
  per_minute INTEGER NOT NULL,
  allowed INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (scope, subject)
) WITHOUT ROWID;
-- The hourly clean-up forgets buckets untouched for a minute (full again: they carry nothing).
CREATE INDEX rate_limit_buckets_updated ON rate_limit_buckets (updated_at);

-- The instance that claimed a delivery (set with status = 'sending'): its name among the instances
-- (application_name, src/db/postgres.ts). With several instances a delivery left in `sending` by an
-- instance that is no longer connected is pending again at once, not after the attempt time-out.
-- NULL on rows claimed before this migration; on SQLite (one process) it is set and never read.
ALTER TABLE deliveries ADD COLUMN claimed_by TEXT;
