-- PostgreSQL twin of migrations/0006_support.sql (docs/architecture.md, Storage layer): the same tables, columns
-- and indexes; BIGINT for SQLite's INTEGER, TEXT compared byte-wise (COLLATE "C") as SQLite does.
-- Support: merchant tickets (dashboard), contact-form tickets (answered by email) and website chats
-- (answered in place). Times are INTEGER milliseconds since the Unix epoch (UTC).
-- Frozen once released: change the schema in a new numbered file.

CREATE TABLE support_tickets (
  id TEXT COLLATE "C" PRIMARY KEY,                 -- tkt_ + 128 random bits: not guessable
  reference TEXT COLLATE "C" NOT NULL,             -- <prefix>-<10 uppercase alphanumerics>, shown to people
  source TEXT COLLATE "C" NOT NULL CHECK (source IN ('dashboard', 'contact', 'chat')),
  category TEXT COLLATE "C" NOT NULL CHECK (category IN ('general', 'payments', 'technical', 'account', 'other')),
  status TEXT COLLATE "C" NOT NULL CHECK (status IN ('open', 'answered', 'closed')),
  subject TEXT COLLATE "C" NOT NULL,
  -- dashboard tickets belong to a merchant and take its current name and email;
  -- contact and chat tickets carry the visitor's own.
  merchant_id TEXT COLLATE "C" REFERENCES merchants (id) ON DELETE CASCADE,
  name TEXT COLLATE "C",
  email TEXT COLLATE "C",
  chat_token_hash TEXT COLLATE "C",                -- SHA-256 hex of the visitor's chat token (chat tickets only)
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,         -- last message or status change
  CHECK ((merchant_id IS NOT NULL) = (source = 'dashboard')),
  CHECK ((name IS NULL) = (source = 'dashboard') AND (email IS NULL) = (source = 'dashboard')),
  CHECK ((chat_token_hash IS NOT NULL) = (source = 'chat'))
);
CREATE UNIQUE INDEX support_tickets_reference_uq ON support_tickets (reference);
CREATE UNIQUE INDEX support_tickets_chat_token_uq ON support_tickets (chat_token_hash);
CREATE INDEX support_tickets_merchant_idx ON support_tickets (merchant_id, updated_at DESC);
CREATE INDEX support_tickets_inbox_idx ON support_tickets (status, updated_at DESC);

CREATE TABLE support_messages (
  id TEXT COLLATE "C" PRIMARY KEY,
  ticket_id TEXT COLLATE "C" NOT NULL REFERENCES support_tickets (id) ON DELETE CASCADE,
  position BIGINT NOT NULL,           -- 1, 2, 3... within the ticket: the order of the thread
  author TEXT COLLATE "C" NOT NULL CHECK (author IN ('customer', 'staff')),
  author_merchant_id TEXT COLLATE "C",             -- the owner or staff account that wrote it; NULL for a visitor
  body TEXT COLLATE "C" NOT NULL,                  -- verbatim, as typed (escaping is the page's job)
  created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX support_messages_ticket_position_uq ON support_messages (ticket_id, position);
