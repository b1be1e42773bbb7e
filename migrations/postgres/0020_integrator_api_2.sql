-- PostgreSQL twin of migrations/0020_integrator_api_2.sql (docs/architecture.md, Storage layer): the same tables, columns
-- and indexes; BIGINT for SQLite's INTEGER, TEXT compared byte-wise (COLLATE "C") as SQLite does.
-- The integrator's API, second round: Idempotency-Key on every POST that creates or changes
-- something, and webhook controls (event types, pause, secret roll). Frozen once released: change
-- the schema in a new numbered file.

-- One row per (merchant, Idempotency-Key) for 24 hours: the request's fingerprint (method, path,
-- body) and, once answered, its 2xx answer. The answer may hold a secret shown once (a webhook's
-- signing secret, an API key), so it is kept only encrypted with a key derived from server.secret,
-- and deleted once expires_at passes. status is NULL while the first request is being answered.
CREATE TABLE idempotency_keys (
  merchant_id TEXT COLLATE "C" NOT NULL REFERENCES merchants (id),
  key TEXT COLLATE "C" NOT NULL,
  fingerprint TEXT COLLATE "C" NOT NULL,
  status BIGINT,
  sealed_answer TEXT COLLATE "C",
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (merchant_id, key)
);
CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at);

-- The event types a webhook receives: a JSON array of types, NULL = every type (also future ones).
ALTER TABLE webhooks ADD COLUMN enabled_events TEXT COLLATE "C";
-- A paused webhook (active = 1, paused = 1) keeps its secret and URL but gets no new deliveries.
ALTER TABLE webhooks ADD COLUMN paused BIGINT NOT NULL DEFAULT 0 CHECK (paused IN (0, 1));
-- After POST /webhooks/{id}/roll-secret the old secret still signs (beside the new one) until
-- previous_secret_expires_at; then it is cleared.
ALTER TABLE webhooks ADD COLUMN previous_secret TEXT COLLATE "C";
ALTER TABLE webhooks ADD COLUMN previous_secret_expires_at BIGINT;
