-- Disputes of the chain watcher, kept across restarts: a block (and, when the disagreement is about
-- one transfer, its transaction) that the TRON providers do not agree on, or that no second provider
-- could check in time. Nothing from it confirms an invoice and no invoice whose window meets it
-- expires while it is open (the block is also an unread range in chain_scan_gaps); it is resolved
-- when the providers agree on it again.
--
-- subject: what is disputed, as one key ('block 61132092' or 'tx <id>'), so one open row a subject.
-- block_number / tx_hash: the same, as columns (tx_hash NULL for a whole block).
-- first_seen_at / last_seen_at: when it was first held, and last found still disputed (ms).
-- resolved_at: when the providers agreed on it (NULL while open).
-- notified_at: when the support staff were mailed about it (once a dispute; NULL when no mail went).
CREATE TABLE chain_disputes (
  id TEXT PRIMARY KEY,
  network TEXT NOT NULL,
  subject TEXT NOT NULL,
  block_number INTEGER,
  tx_hash TEXT,
  reason TEXT NOT NULL,
  first_seen_at INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,
  resolved_at INTEGER,
  notified_at INTEGER
);

-- At most one open dispute a subject; /health, the metrics and `gatewayd chain status` read the open ones.
CREATE UNIQUE INDEX chain_disputes_open_idx ON chain_disputes (network, subject) WHERE resolved_at IS NULL;
