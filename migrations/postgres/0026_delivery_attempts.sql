-- PostgreSQL twin of migrations/0026_delivery_attempts.sql (docs/architecture.md, Storage layer): the same tables, columns
-- and indexes; BIGINT for SQLite's INTEGER, TEXT compared byte-wise (COLLATE "C") as SQLite does.
-- One row per webhook delivery attempt (issue 32): when it started, how long it took, and what came
-- back (the receiver's HTTP status, or why nothing did), plus the wait the receiver asked for
-- (Retry-After) and when the next attempt was planned. deliveries keeps the latest outcome as before;
-- this is the history behind it. Written in the same transaction that records the attempt on its
-- delivery, so an attempt whose delivery was reset meanwhile leaves no row. Frozen once released:
-- change the schema in a new numbered file.
CREATE TABLE delivery_attempts (
  delivery_id TEXT COLLATE "C" NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  attempt BIGINT NOT NULL,
  started_at BIGINT NOT NULL,
  duration_ms BIGINT NOT NULL,
  response_status BIGINT,
  error TEXT COLLATE "C",
  retry_after_ms BIGINT,
  next_attempt_at BIGINT,
  PRIMARY KEY (delivery_id, attempt)
);
