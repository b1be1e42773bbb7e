-- PostgreSQL twin of migrations/0010_block_scanner.sql (docs/architecture.md, Storage layer): the same tables, columns
-- and indexes; BIGINT for SQLite's INTEGER, TEXT compared byte-wise (COLLATE "C") as SQLite does.
-- The chain watcher reads solidified blocks instead of per-address histories.
--
-- chain_scan: one row per network. cursor_block is the newest block the head follower has read
-- (every block at or below it, outside the gaps below, is scanned); cursor_time is that block's
-- timestamp (ms). active_until: scanning continues until then although no invoice is open (the
-- linger after the last invoice closes, for late payments); after it, no TRON request is made.
CREATE TABLE chain_scan (
  network TEXT COLLATE "C" PRIMARY KEY,
  cursor_block BIGINT NOT NULL,
  cursor_time BIGINT NOT NULL,
  active_until BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);

-- Ranges of blocks still to be read behind the head follower (downtime, or a start behind the
-- oldest open invoice). from_block is the next block to read, to_block the last (inclusive). Every
-- block of the range has a timestamp strictly between after_time and before_time (ms): an invoice
-- whose window meets that interval does not expire until the range is read.
CREATE TABLE chain_scan_gaps (
  network TEXT COLLATE "C" NOT NULL,
  from_block BIGINT NOT NULL,
  to_block BIGINT NOT NULL,
  after_time BIGINT NOT NULL,
  before_time BIGINT NOT NULL,
  PRIMARY KEY (network, from_block)
);

-- Per-address cursors of the account-history watcher: no longer used.
DROP TABLE chain_cursors;

-- Expiry reads the open invoices by the end of their window (statuses as literals, as queries name them).
CREATE INDEX invoices_open_expiry_idx ON invoices (expires_at) WHERE status IN ('pending', 'review');
