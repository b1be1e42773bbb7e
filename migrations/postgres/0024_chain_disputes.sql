-- PostgreSQL twin of migrations/0024_chain_disputes.sql (docs/architecture.md, Storage layer): the same table, columns
-- and index; BIGINT for SQLite's INTEGER, TEXT compared byte-wise (COLLATE "C") as SQLite does.
-- Disputes of the chain watcher, kept across restarts: a block (and, when the disagreement is about
-- one transfer, its transaction) that the TRON providers do not agree on, or that no second provider
-- could check in time. Nothing from it confirms an invoice and no invoice whose window meets it
-- expires while it is open (the block is also an unread range in chain_scan_gaps); it is resolved
-- when the providers agree on it again.
CREATE TABLE chain_disputes (
  id TEXT COLLATE "C" PRIMARY KEY,
  network TEXT COLLATE "C" NOT NULL,
  subject TEXT COLLATE "C" NOT NULL,
  block_number BIGINT,
  tx_hash TEXT COLLATE "C",
  reason TEXT COLLATE "C" NOT NULL,
  first_seen_at BIGINT NOT NULL,
  last_seen_at BIGINT NOT NULL,
  resolved_at BIGINT,
  notified_at BIGINT
);

-- At most one open dispute a subject; /health, the metrics and `gatewayd chain status` read the open ones.
CREATE UNIQUE INDEX chain_disputes_open_idx ON chain_disputes (network, subject) WHERE resolved_at IS NULL;
