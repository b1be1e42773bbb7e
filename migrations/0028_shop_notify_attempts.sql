-- One row per attempt of a shop's paid callback, as delivery_attempts (0026) keeps for webhook
-- deliveries: when it started, how long it took, what came back (the shop's HTTP status, or why
-- nothing did), the wait the shop asked for (Retry-After) and when the next attempt was planned.
-- shop_notifies keeps the latest outcome as before; this is the history behind it, listed by
-- GET /shop-connections/{id}/callbacks. Written in the transaction that records the attempt on its
-- callback, so an attempt whose callback was reset meanwhile leaves no row. The index pages a
-- connection's callbacks newest first. Frozen once released: change the schema in a new numbered file.
CREATE TABLE shop_notify_attempts (
  notify_id TEXT NOT NULL REFERENCES shop_notifies (id) ON DELETE CASCADE,
  attempt INTEGER NOT NULL,
  started_at INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  response_status INTEGER,
  error TEXT,
  retry_after_ms INTEGER,
  next_attempt_at INTEGER,
  PRIMARY KEY (notify_id, attempt)
);
CREATE INDEX shop_notifies_connection_idx ON shop_notifies (connection_id, created_at DESC, id);
