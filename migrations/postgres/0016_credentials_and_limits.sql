-- PostgreSQL twin of migrations/0016_credentials_and_limits.sql (docs/architecture.md, Storage layer): the same tables, columns
-- and indexes; BIGINT for SQLite's INTEGER, TEXT compared byte-wise (COLLATE "C") as SQLite does.
-- Credential versions (docs/security.md, Credential changes): every password change, reset, or
-- Google claim bumps the account's version; a session carries the version it was made under and
-- stops working when the account's moves on. Frozen once released: change the schema in a new
-- numbered file.
ALTER TABLE merchants ADD COLUMN credential_version BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN credential_version BIGINT NOT NULL DEFAULT 0;
