-- PostgreSQL twin of migrations/0002_accounts.sql (docs/architecture.md, Storage layer): the same tables, columns
-- and indexes; BIGINT for SQLite's INTEGER, TEXT compared byte-wise (COLLATE "C") as SQLite does.
-- Merchant accounts: single-use email links (confirmation and password reset) and the throttle of
-- the "this address already has an account" notice. Frozen once released.

-- Only the SHA-256 of a link token is stored. A newer link of the same purpose deletes the older
-- ones; using a link deletes it, so a token row exists only while its link may still work.
CREATE TABLE email_tokens (
  token_hash TEXT COLLATE "C" PRIMARY KEY,         -- SHA-256 hex of the 43-character token
  merchant_id TEXT COLLATE "C" NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
  purpose TEXT COLLATE "C" NOT NULL CHECK (purpose IN ('verify', 'reset')),
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);
CREATE INDEX email_tokens_merchant_idx ON email_tokens (merchant_id, purpose);
CREATE INDEX email_tokens_expiry_idx ON email_tokens (expires_at);

-- Last "someone tried to register with your address" mail to a confirmed account (5-minute limit,
-- so registration cannot be used to flood an owner's mailbox).
ALTER TABLE merchants ADD COLUMN exists_notice_sent_at BIGINT;

CREATE INDEX sessions_expiry_idx ON sessions (expires_at);
