-- PostgreSQL twin of migrations/0001_core.sql (docs/architecture.md, Storage layer): the same tables, columns
-- and indexes; BIGINT for SQLite's INTEGER, TEXT compared byte-wise (COLLATE "C") as SQLite does.
-- Core schema shared by every feature: accounts, keys, wallets, invoices, amount reservations,
-- events and the webhook outbox. Times are INTEGER milliseconds since the Unix epoch (UTC);
-- money is INTEGER micro-USDT (every stored amount stays below 2^53).
-- Frozen once released: change the schema in a new numbered file.

CREATE TABLE merchants (
  id TEXT COLLATE "C" PRIMARY KEY,
  email TEXT COLLATE "C" NOT NULL,                 -- normalised: trimmed, lower case
  name TEXT COLLATE "C" NOT NULL,
  password_hash TEXT COLLATE "C",                  -- argon2id; NULL when only external sign-in may be used
  email_verified_at BIGINT,
  google_sub TEXT COLLATE "C",
  verification_sent_at BIGINT,        -- last confirmation mail, for the 5-minute resend limit
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX merchants_email_uq ON merchants (email);
CREATE UNIQUE INDEX merchants_google_sub_uq ON merchants (google_sub);

CREATE TABLE sessions (
  token_hash TEXT COLLATE "C" PRIMARY KEY,         -- SHA-256 hex of the cookie token
  merchant_id TEXT COLLATE "C" NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
  created_at BIGINT NOT NULL,
  last_used_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);
CREATE INDEX sessions_merchant_idx ON sessions (merchant_id);

CREATE TABLE api_keys (
  id TEXT COLLATE "C" PRIMARY KEY,
  merchant_id TEXT COLLATE "C" NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
  name TEXT COLLATE "C" NOT NULL,
  prefix TEXT COLLATE "C" NOT NULL,
  secret_hash TEXT COLLATE "C" NOT NULL,           -- SHA-256 hex of the whole secret
  scopes TEXT COLLATE "C" NOT NULL,                -- space-separated subset of invoices:read invoices:write ledger:read
  expires_in_days BIGINT,             -- kept so a roll grants the same lifetime
  created_at BIGINT NOT NULL,
  last_used_at BIGINT,
  revoked_at BIGINT,
  expires_at BIGINT,
  replaced_key_id TEXT COLLATE "C"
);
CREATE UNIQUE INDEX api_keys_secret_hash_uq ON api_keys (secret_hash);
CREATE INDEX api_keys_merchant_idx ON api_keys (merchant_id, created_at);

CREATE TABLE wallets (
  id TEXT COLLATE "C" PRIMARY KEY,
  merchant_id TEXT COLLATE "C" NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
  label TEXT COLLATE "C" NOT NULL,
  address TEXT COLLATE "C" NOT NULL,               -- base58 T..., checksum verified
  network TEXT COLLATE "C" NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX wallets_merchant_address_uq ON wallets (merchant_id, network, address);
CREATE INDEX wallets_address_idx ON wallets (network, address);

CREATE TABLE invoices (
  id TEXT COLLATE "C" PRIMARY KEY,
  merchant_id TEXT COLLATE "C" NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
  wallet_id TEXT COLLATE "C" NOT NULL REFERENCES wallets (id),
  network TEXT COLLATE "C" NOT NULL,
  token TEXT COLLATE "C" NOT NULL,
  token_contract TEXT COLLATE "C" NOT NULL,
  wallet_address TEXT COLLATE "C" NOT NULL,
  merchant_order_id TEXT COLLATE "C" NOT NULL,
  idempotency_key TEXT COLLATE "C" NOT NULL,
  request_fingerprint TEXT COLLATE "C" NOT NULL,   -- SHA-256 of the canonical request body, for replays
  base_amount BIGINT NOT NULL,
  adjustment BIGINT NOT NULL,
  payable_amount BIGINT NOT NULL,
  status TEXT COLLATE "C" NOT NULL CHECK (status IN ('pending', 'confirmed', 'expired', 'review')),
  amount_reuse_review BIGINT NOT NULL DEFAULT 0,
  description TEXT COLLATE "C",
  metadata TEXT COLLATE "C" NOT NULL DEFAULT '{}', -- JSON object
  checkout_token TEXT COLLATE "C" NOT NULL,        -- capability token (>= 128 random bits), shown to the merchant
  tx_hash TEXT COLLATE "C",
  confirmed_at BIGINT,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  reserved_until BIGINT NOT NULL
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
  network TEXT COLLATE "C" NOT NULL,
  token_contract TEXT COLLATE "C" NOT NULL,
  address TEXT COLLATE "C" NOT NULL,
  amount BIGINT NOT NULL,             -- payable micro-units
  invoice_id TEXT COLLATE "C" NOT NULL REFERENCES invoices (id),
  reserved_at BIGINT NOT NULL,
  reserved_until BIGINT NOT NULL,
  PRIMARY KEY (network, token_contract, address, amount)
);
CREATE INDEX amount_reservations_invoice_idx ON amount_reservations (invoice_id);

CREATE TABLE events (
  id TEXT COLLATE "C" PRIMARY KEY,
  merchant_id TEXT COLLATE "C" NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
  type TEXT COLLATE "C" NOT NULL,
  invoice_id TEXT COLLATE "C",
  data TEXT COLLATE "C" NOT NULL,                  -- JSON object, exactly as delivered
  created_at BIGINT NOT NULL
);
CREATE INDEX events_merchant_idx ON events (merchant_id, created_at DESC);
CREATE INDEX events_invoice_idx ON events (invoice_id);

CREATE TABLE webhooks (
  id TEXT COLLATE "C" PRIMARY KEY,
  merchant_id TEXT COLLATE "C" NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
  url TEXT COLLATE "C" NOT NULL,
  secret TEXT COLLATE "C" NOT NULL,                -- whsec_...: needed in clear to sign every attempt
  active BIGINT NOT NULL DEFAULT 1,
  created_at BIGINT NOT NULL,
  deactivated_at BIGINT
);
CREATE INDEX webhooks_merchant_idx ON webhooks (merchant_id, active);

-- The outbox: written in the same transaction as the event it carries.
CREATE TABLE deliveries (
  id TEXT COLLATE "C" PRIMARY KEY,
  webhook_id TEXT COLLATE "C" NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  event_id TEXT COLLATE "C" NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  merchant_id TEXT COLLATE "C" NOT NULL,
  status TEXT COLLATE "C" NOT NULL CHECK (status IN ('pending', 'sending', 'delivered', 'failed', 'cancelled')),
  attempts BIGINT NOT NULL DEFAULT 0,
  next_attempt_at BIGINT,
  delivered_at BIGINT,
  last_error TEXT COLLATE "C",
  response_status BIGINT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX deliveries_webhook_event_uq ON deliveries (webhook_id, event_id);
CREATE INDEX deliveries_due_idx ON deliveries (status, next_attempt_at);
CREATE INDEX deliveries_merchant_idx ON deliveries (merchant_id, created_at DESC);

-- Captcha tokens already spent (each token is single use), by SHA-256.
CREATE TABLE captcha_tokens (
  token_hash TEXT COLLATE "C" PRIMARY KEY,
  used_at BIGINT NOT NULL
);
