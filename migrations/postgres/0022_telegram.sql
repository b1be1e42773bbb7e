-- PostgreSQL twin of migrations/0022_telegram.sql (docs/architecture.md, Storage layer): the same tables, columns
-- and indexes; BIGINT for SQLite's INTEGER, TEXT compared byte-wise (COLLATE "C") as SQLite does.
-- Telegram notices (notify.telegram_bot_token). Frozen once released: change the schema in a new
-- numbered file.

-- One merchant's Telegram link. link_code: a one-time code shown in the console (NULL once used or
-- replaced), valid until link_code_expires_at; chat_id: the linked chat (NULL until linked).
-- notices: the notices wanted, a comma-separated list of confirmed, partial, unmatched, late,
-- watcher_down.
CREATE TABLE telegram_links (
  merchant_id TEXT COLLATE "C" PRIMARY KEY REFERENCES merchants (id),
  link_code TEXT COLLATE "C" UNIQUE,
  link_code_expires_at BIGINT,
  chat_id TEXT COLLATE "C",
  linked_at BIGINT,
  notices TEXT COLLATE "C" NOT NULL DEFAULT 'confirmed,partial,unmatched,late,watcher_down',
  updated_at BIGINT NOT NULL
);

-- The outbox: one message per notice and chat, written in the transaction of the event it tells
-- of (event_id; NULL for a watcher notice), sent by the telegram worker with retries.
-- status: pending, sent, failed (given up after the last attempt, or the chat was unlinked).
CREATE TABLE telegram_outbox (
  id TEXT COLLATE "C" PRIMARY KEY,
  merchant_id TEXT COLLATE "C" NOT NULL REFERENCES merchants (id),
  chat_id TEXT COLLATE "C" NOT NULL,
  kind TEXT COLLATE "C" NOT NULL,
  event_id TEXT COLLATE "C",
  payload TEXT COLLATE "C" NOT NULL DEFAULT '{}',
  status TEXT COLLATE "C" NOT NULL DEFAULT 'pending',
  attempts BIGINT NOT NULL DEFAULT 0,
  next_attempt_at BIGINT NOT NULL,
  last_error TEXT COLLATE "C",
  created_at BIGINT NOT NULL,
  sent_at BIGINT
);
CREATE INDEX telegram_outbox_due ON telegram_outbox (status, next_attempt_at);

-- The bot's getUpdates offset (the next update_id to read), one row per bot.
CREATE TABLE telegram_bot_state (
  bot_id TEXT COLLATE "C" PRIMARY KEY,
  update_offset BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
