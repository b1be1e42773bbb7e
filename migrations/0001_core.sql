-- Core schema shared by every feature: accounts, keys, wallets, invoices, amount reservations,
-- events and the webhook outbox. Times are INTEGER milliseconds since the Unix epoch (UTC);
-- money is INTEGER micro-USDT (every stored amount stays below 2^53).
-- Frozen once released: change the schema in a new numbered file.

CREATE TABLE merchants (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL,                 -- normalised: trimmed, lower case
  name TEXT NOT NULL,
  password_hash TEXT,                  -- argon2id; NULL when only external sign-in may be used
  email_verified_at INTEGER,
  google_sub TEXT,
  verification_sent_at INTEGER,        -- last confirmation mail, for the 5-minute resend limit
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX merchants_email_uq ON merchants (email);
CREATE UNIQUE INDEX merchants_google_sub_uq ON merchants (google_sub);

CREATE TABLE sessions (
  token_hash TEXT PRIMARY KEY,         -- SHA-256 hex of the cookie token
  merchant_id TEXT NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  last_used_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX sessions_merchant_idx ON sessions (merchant_id);

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  merchant_id TEXT NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  prefix TEXT NOT NULL,
  secret_hash TEXT NOT NULL,           -- SHA-256 hex of the whole secret
  scopes TEXT NOT NULL,                -- space-separated subset of invoices:read invoices:write ledger:read
  expires_in_days INTEGER,             -- kept so a roll grants the same lifetime
  created_at INTEGER NOT NULL,
  last_used_at INTEGER,
  revoked_at INTEGER,
  expires_at INTEGER,
  replaced_key_id TEXT
);
CREATE UNIQUE INDEX api_keys_secret_hash_uq ON api_keys (secret_hash);
CREATE INDEX api_keys_merchant_idx ON api_keys (merchant_id, created_at);

CREATE TABLE wallets (
  id TEXT PRIMARY KEY,
  merchant_id TEXT NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
  label TEXT NOT NULL,
  address TEXT NOT NULL,               -- base58 T..., checksum verified
  network TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX wallets_merchant_address_uq ON wallets (merchant_id, network, address);
CREATE INDEX wallets_address_idx ON wallets (network, address);

CREATE TABLE invoices (
  id TEXT PRIMARY KEY,
  merchant_id TEXT NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
  wallet_id TEXT NOT NULL REFERENCES wallets (id),
  network TEXT NOT NULL,
  token TEXT NOT NULL,
  token_contract TEXT NOT NULL,
  wallet_address TEXT NOT NULL,
  merchant_order_id TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  request_fingerprint TEXT NOT NULL,   -- SHA-256 of the canonical request body, for replays
  base_amount INTEGER NOT NULL,
  adjustment INTEGER NOT NULL,
  payable_amount INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'confirmed', 'expired', 'review')),
  amount_reuse_review INTEGER NOT NULL DEFAULT 0,
  description TEXT,
  metadata TEXT NOT NULL DEFAULT '{}', -- JSON object
  checkout_token TEXT NOT NULL,        -- capability token (>= 128 random bits), shown to the merchant
  tx_hash TEXT,
  confirmed_at INTEGER,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  reserved_until INTEGER NOT NULL
);
CREATE UNIQUE INDEX invoices_checkout_token_uq ON invoices (checkout_token);
CREATE UNIQUE INDEX invoices_idempotency_uq ON invoices (merchant_id, idempotency_key);
CREATE UNIQUE INDEX invoices_order_uq ON invoices (merchant_id, merchant_order_id);
CREATE INDEX invoices_merchant_created_idx ON invoices (merchant_id, created_at DESC, id);
CREATE INDEX invoices_open_idx ON invoices (network, token_contract, wallet_address, status)
  WHERE status IN ('pending', 'review');

-- One row per final amount ever used on (network, token contract, address): the last line of
-- defence against two invoices sharing a payable amount. Rows are never deleted; a reuse after
-- 90 days moves the row to the new invoice.
CREATE TABLE amount_reservations (
  network TEXT NOT NULL,
  token_contract TEXT NOT NULL,
  address TEXT NOT NULL,
  amount INTEGER NOT NULL,             -- payable micro-units
  invoice_id TEXT NOT NULL REFERENCES invoices (id),
  reserved_at INTEGER NOT NULL,
  reserved_until INTEGER NOT NULL,
  PRIMARY KEY (network, token_contract, address, amount)
);
CREATE INDEX amount_reservations_invoice_idx ON amount_reservations (invoice_id);

CREATE TABLE events (
  id TEXT PRIMARY KEY,
  merchant_id TEXT NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
  type TEXT NOT NULL,
  invoice_id TEXT,
  data TEXT NOT NULL,                  -- JSON object, exactly as delivered
  created_at INTEGER NOT NULL
);
CREATE INDEX events_merchant_idx ON events (merchant_id, created_at DESC);
CREATE INDEX events_invoice_idx ON events (invoice_id);

CREATE TABLE webhooks (
  id TEXT PRIMARY KEY,
  merchant_id TEXT NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  secret TEXT NOT NULL,                -- whsec_...: needed in clear to sign every attempt
  active INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  deactivated_at INTEGER
);
CREATE INDEX webhooks_merchant_idx ON webhooks (merchant_id, active);

-- The outbox: written in the same transaction as the event it carries.
CREATE TABLE deliveries (
  id TEXT PRIMARY KEY,
  webhook_id TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  event_id TEXT NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  merchant_id TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'sending', 'delivered', 'failed', 'cancelled')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER,
  delivered_at INTEGER,
  last_error TEXT,
  response_status INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX deliveries_webhook_event_uq ON deliveries (webhook_id, event_id);
CREATE INDEX deliveries_due_idx ON deliveries (status, next_attempt_at);
CREATE INDEX deliveries_merchant_idx ON deliveries (merchant_id, created_at DESC);

-- Captcha tokens already spent (each token is single use), by SHA-256.
CREATE TABLE captcha_tokens (
  token_hash TEXT PRIMARY KEY,
  used_at INTEGER NOT NULL
);
