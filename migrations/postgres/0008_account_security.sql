-- PostgreSQL twin of migrations/0008_account_security.sql (docs/architecture.md, Storage layer): the same tables, columns
-- and indexes; BIGINT for SQLite's INTEGER, TEXT compared byte-wise (COLLATE "C") as SQLite does.
-- Account security: registrations bound to their own confirmation links (no pre-registration
-- hijacking), and password-reset requests recorded per address whether or not it has an account
-- (no enumeration by timing, at most one reset mail per address every 5 minutes).
-- Frozen once released: change the schema in a new numbered file.

-- One row per registration of an address that is not confirmed yet: the password and name typed,
-- kept apart from the account until the address is confirmed. A pending registration never changes
-- the account. Confirming through a registration's link gives the account that registration's
-- password and name only when it is the only live registration of the address; with competing
-- registrations the account is confirmed without a password (its owner sets one by a reset link).
CREATE TABLE registrations (
  id TEXT COLLATE "C" PRIMARY KEY,
  merchant_id TEXT COLLATE "C" NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
  password_hash TEXT COLLATE "C" NOT NULL,         -- argon2id of the password typed with this registration
  name TEXT COLLATE "C" NOT NULL,
  locale TEXT COLLATE "C" NOT NULL DEFAULT 'en',   -- language of its mails
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL          -- a registration lives as long as its confirmation link (24 h)
);
CREATE INDEX registrations_merchant_idx ON registrations (merchant_id, expires_at);
CREATE INDEX registrations_expiry_idx ON registrations (expires_at);

-- A confirmation link confirms its own registration (NULL for reset links).
ALTER TABLE email_tokens ADD COLUMN registration_id TEXT COLLATE "C" REFERENCES registrations (id) ON DELETE CASCADE;
CREATE INDEX email_tokens_registration_idx ON email_tokens (registration_id);

-- Unconfirmed accounts made before this version: their password and name become their registration,
-- bound to their outstanding confirmation link; the account itself keeps neither.
INSERT INTO registrations (id, merchant_id, password_hash, name, created_at, expires_at)
  SELECT 'reg_' || substr(id, 5), id, password_hash, name, COALESCE(verification_sent_at, updated_at), COALESCE(verification_sent_at, updated_at) + 86400000
  FROM merchants WHERE email_verified_at IS NULL AND password_hash IS NOT NULL;
UPDATE email_tokens SET registration_id = (SELECT r.id FROM registrations r WHERE r.merchant_id = email_tokens.merchant_id)
  WHERE purpose = 'verify';
UPDATE merchants SET password_hash = NULL, name = substr(substr(email, 1, strpos(email, '@') - 1), 1, 100)
  WHERE email_verified_at IS NULL AND password_hash IS NOT NULL;

-- Password reset requests, one row per address (its normalised form's SHA-256), written alike
-- whether or not the address has an account: merchant_id is NULL when it has none, and then the
-- token is never mailed. A newer request replaces the token (older links stop working) at most once
-- every 5 minutes; a used link's token_hash becomes NULL.
CREATE TABLE password_resets (
  email_hash TEXT COLLATE "C" PRIMARY KEY,
  merchant_id TEXT COLLATE "C" REFERENCES merchants (id) ON DELETE CASCADE,
  token_hash TEXT COLLATE "C",                     -- SHA-256 hex of the 43-character token
  sent_at BIGINT NOT NULL,            -- last request that replaced the token (the 5-minute limit)
  expires_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX password_resets_token_uq ON password_resets (token_hash);
CREATE INDEX password_resets_merchant_idx ON password_resets (merchant_id);
CREATE INDEX password_resets_expiry_idx ON password_resets (expires_at);

-- Reset links now live in password_resets; links mailed before this version (valid 1 hour) end.
DELETE FROM email_tokens WHERE purpose = 'reset';
