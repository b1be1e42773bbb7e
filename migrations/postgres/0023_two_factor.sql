-- PostgreSQL twin of migrations/0023_two_factor.sql (docs/architecture.md, Storage layer): the same tables, columns
-- and indexes; BIGINT for SQLite's INTEGER, TEXT compared byte-wise (COLLATE "C") as SQLite does.
-- Two-factor sign-in (TOTP, RFC 6238) of an owner account. Frozen once released: change the schema
-- in a new numbered file.

-- One row per account that has begun or finished setting up two-factor sign-in.
-- secret_enc: the TOTP secret, AES-256-GCM under a key derived from server.secret
--   ("v1." iv "." tag "." ciphertext, base64url); never returned after setup.
-- confirmed_at: when the owner confirmed it with a first code; NULL = setup pending (not asked at sign-in).
-- last_step: the last accepted time step (30-second counter); a code of this step or an earlier one
--   is refused, so no code is accepted twice.
CREATE TABLE two_factor (
  merchant_id TEXT COLLATE "C" PRIMARY KEY REFERENCES merchants (id),
  secret_enc TEXT COLLATE "C" NOT NULL,
  confirmed_at BIGINT,
  last_step BIGINT NOT NULL DEFAULT -1,
  created_at BIGINT NOT NULL
);

-- The ten single-use recovery codes issued at confirmation: SHA-256 of each code (hex). used_at set = spent.
CREATE TABLE two_factor_recovery_codes (
  merchant_id TEXT COLLATE "C" NOT NULL REFERENCES merchants (id),
  code_hash TEXT COLLATE "C" NOT NULL,
  used_at BIGINT,
  PRIMARY KEY (merchant_id, code_hash)
);
