-- One row per webhook delivery attempt (issue 32): when it started, how long it took, and what came
-- back (the receiver's HTTP status, or why nothing did), plus the wait the receiver asked for
-- (Retry-After) and when the next attempt was planned. deliveries keeps the latest outcome as before;
-- this is the history behind it. Written in the same transaction that records the attempt on its
-- delivery, so an attempt whose delivery was reset meanwhile leaves no row. Frozen once released:
-- change the schema in a new numbered file.
CREATE TABLE delivery_attempts (
  delivery_id TEXT NOT NULL REFERENCES deliveries (id) ON DELETE CASCADE,
  attempt INTEGER NOT NULL,
  started_at INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  response_status INTEGER,
  error TEXT,
  retry_after_ms INTEGER,
  next_attempt_at INTEGER,
  PRIMARY KEY (delivery_id, attempt)
);
