-- Credential versions (docs/security.md, Credential changes): every password change, reset, or
-- Google claim bumps the account's version; a session carries the version it was made under and
-- stops working when the account's moves on. Frozen once released: change the schema in a new
-- numbered file.
ALTER TABLE merchants ADD COLUMN credential_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN credential_version INTEGER NOT NULL DEFAULT 0;
