-- Telegram notices (notify.telegram_bot_token). Frozen once released: change the schema in a new
-- numbered file.

-- One merchant's Telegram link. link_code: a one-time code shown in the console (NULL once used or
-- replaced), valid until link_code_expires_at; chat_id: the linked chat (NULL until linked).
-- notices: the notices wanted, a comma-separated list of confirmed, partial, unmatched, late,
-- watcher_down.
CREATE TABLE telegram_links (
  merchant_id TEXT PRIMARY KEY REFERENCES merchants (id),
  link_code TEXT UNIQUE,
  link_code_expires_at INTEGER,
  chat_id TEXT,
  linked_at INTEGER,
  notices TEXT NOT NULL DEFAULT 'confirmed,partial,unmatched,late,watcher_down',
  updated_at INTEGER NOT NULL
);

-- The outbox: one message per notice and chat, written in the transaction of the event it tells
-- of (event_id; NULL for a watcher notice), sent by the telegram worker with retries.
-- status: pending, sent, failed (given up after the last attempt, or the chat was unlinked).
CREATE TABLE telegram_outbox (
  id TEXT PRIMARY KEY,
  merchant_id TEXT NOT NULL REFERENCES merchants (id),
  chat_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  event_id TEXT,
  payload TEXT NOT NULL DEFAULT '{}',
  status TEXT NOT NULL DEFAULT 'pending',
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  sent_at INTEGER
);
CREATE INDEX telegram_outbox_due ON telegram_outbox (status, next_attempt_at);

-- The bot's getUpdates offset (the next update_id to read), one row per bot.
CREATE TABLE telegram_bot_state (
  bot_id TEXT PRIMARY KEY,
  update_offset INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
