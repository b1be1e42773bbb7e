-- PostgreSQL twin of migrations/0025_several_instances.sql (docs/architecture.md, Storage layer): the same tables, columns
-- and indexes; BIGINT for SQLite's INTEGER, DOUBLE PRECISION for REAL, TEXT compared byte-wise (COLLATE "C") as SQLite does.
-- Rate-limit buckets shared by every instance (docs/operations.md, "Running several instances").
-- Frozen once released: change the schema in a new numbered file.
--
-- UNLOGGED: a take is one upsert in autocommit, and a logged table would make each request wait for
-- a WAL flush. What is lost on a crash of the server (the table comes back empty) or on fail-over to
-- a standby (unlogged tables are not replicated) is at most a minute of counting: the buckets start
-- full again, as they do today when a SQLite gateway restarts.
--
-- scope: the limit's name (api_key, invoice_create, sign_in:ip...); subject: whom it counts (a key
-- id, a client address...); tokens: what is left of the burst at updated_at (refilled at per_minute
-- a minute, up to per_minute); allowed: 1 when the last take found a token, 0 when it was refused.
CREATE UNLOGGED TABLE rate_limit_buckets (
  scope TEXT COLLATE "C" NOT NULL,
  subject TEXT COLLATE "C" NOT NULL,
  tokens DOUBLE PRECISION NOT NULL,
  per_minute BIGINT NOT NULL,
  allowed BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (scope, subject)
);
-- The hourly clean-up forgets buckets untouched for a minute (full again: they carry nothing).
CREATE INDEX rate_limit_buckets_updated ON rate_limit_buckets (updated_at);

-- The instance that claimed a delivery (set with status = 'sending'): its name among the instances
-- (application_name, src/db/postgres.ts). With several instances a delivery left in `sending` by an
-- instance that is no longer connected is pending again at once, not after the attempt time-out.
-- NULL on rows claimed before this migration; on SQLite (one process) it is set and never read.
ALTER TABLE deliveries ADD COLUMN claimed_by TEXT COLLATE "C";
