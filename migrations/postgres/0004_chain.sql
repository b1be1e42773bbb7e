-- PostgreSQL twin of migrations/0004_chain.sql (docs/architecture.md, Storage layer): the same tables, columns
-- and indexes; BIGINT for SQLite's INTEGER, TEXT compared byte-wise (COLLATE "C") as SQLite does.
-- The chain watcher (decisions.md sections 3 and 5): every verified USDT Transfer log it has seen
-- to a watched address, and how far each address's confirmed history is covered.

-- One row per Transfer log (tx hash + position in the solidified receipt's log[]): the UNIQUE key
-- is what makes one log confirm at most one invoice, however often it is seen again.
-- kind: confirmed   = it confirmed invoice_id (pending -> confirmed)
--       review_paid = it paid invoice_id while in review (tx_hash recorded; the owner decides)
--       late        = a reserved amount of invoice_id that the invoice could no longer take
--                     (after its window, or after it was already paid or closed)
--       unmatched   = any other amount; invoice_id is NULL
CREATE TABLE chain_transfers (
  id TEXT COLLATE "C" PRIMARY KEY,
  network TEXT COLLATE "C" NOT NULL,
  token_contract TEXT COLLATE "C" NOT NULL,
  tx_hash TEXT COLLATE "C" NOT NULL,               -- 64 lower-case hex
  log_index BIGINT NOT NULL,
  from_address TEXT COLLATE "C" NOT NULL,          -- base58 T...
  to_address TEXT COLLATE "C" NOT NULL,            -- base58 T..., the watched address
  amount BIGINT NOT NULL,             -- micro-USDT
  kind TEXT COLLATE "C" NOT NULL CHECK (kind IN ('confirmed', 'review_paid', 'late', 'unmatched')),
  invoice_id TEXT COLLATE "C" REFERENCES invoices (id),
  block_number BIGINT NOT NULL,
  block_timestamp BIGINT NOT NULL,    -- ms, from the solidified receipt
  recorded_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX chain_transfers_log_uq ON chain_transfers (tx_hash, log_index);
CREATE INDEX chain_transfers_invoice_idx ON chain_transfers (invoice_id);
CREATE INDEX chain_transfers_to_idx ON chain_transfers (network, token_contract, to_address, block_timestamp);

-- Durable per-address cursor. Invariant: every confirmed USDT transfer to `address` whose block
-- time is <= covered_until has been verified and recorded (or rejected). The next poll asks from
-- covered_until + 1, so a restart resumes with no gap; expiry waits for covered_until >= expires_at.
CREATE TABLE chain_cursors (
  network TEXT COLLATE "C" NOT NULL,
  token_contract TEXT COLLATE "C" NOT NULL,
  address TEXT COLLATE "C" NOT NULL,
  covered_until BIGINT NOT NULL,      -- ms
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (network, token_contract, address)
);

-- The watcher matches a transfer to the invoices of its address and amount (also closed ones, for
-- late payments): without this it would scan every invoice once per transfer.
CREATE INDEX chain_invoices_amount_idx ON invoices (network, token_contract, wallet_address, payable_amount);
