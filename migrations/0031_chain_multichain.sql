-- Transfers on several networks (docs/payments.md, "How an EVM payment is read"): a transfer is
-- known by (network, tx hash, log index), never by its transaction alone, so a batch transaction
-- paying two watched addresses is two rows, and one hash on two networks is two transfers.
-- raw_amount: the on-chain integer as decimal text (NULL on rows written before: amount x 10^(decimals-6));
-- block_hash: the block the transfer was read in; token: USDT or USDC (NULL before: USDT);
-- reason: why an unmatched transfer matched no invoice (NULL when it did, or before):
--   inexact_amount (an 18-decimal value with digits below the micro-unit), wrong_network (an open
--   invoice of that address and amount waits on another network), other_token (in the network's
--   other token), no_invoice.
-- The unique key keeps its name and leads with tx_hash, so lookups by transaction hash still use it.
-- Frozen once released: change the schema in a new numbered file.
ALTER TABLE chain_transfers ADD COLUMN raw_amount TEXT;
ALTER TABLE chain_transfers ADD COLUMN block_hash TEXT;
ALTER TABLE chain_transfers ADD COLUMN token TEXT;
ALTER TABLE chain_transfers ADD COLUMN reason TEXT CHECK (reason IN ('inexact_amount', 'wrong_network', 'other_token', 'no_invoice'));
DROP INDEX chain_transfers_log_uq;
CREATE UNIQUE INDEX chain_transfers_log_uq ON chain_transfers (tx_hash, log_index, network);

-- Transfers seen above a network's finality (in a block that may still leave the chain) that match
-- an open invoice: the checkout and invoice.payment_seen say so within seconds, while the invoice
-- stays pending until the transfer is final (final_at) or its block leaves the chain (dropped_at,
-- invoice.payment_dropped). Nothing here ever confirms an invoice.
CREATE TABLE chain_seen (
  network TEXT NOT NULL,
  tx_hash TEXT NOT NULL,
  log_index INTEGER NOT NULL,
  to_address TEXT NOT NULL,
  token_contract TEXT NOT NULL,
  amount INTEGER NOT NULL,             -- micro-units
  raw_amount TEXT NOT NULL,
  block_number INTEGER NOT NULL,
  block_hash TEXT NOT NULL,
  invoice_id TEXT REFERENCES invoices (id),
  seen_at INTEGER NOT NULL,
  dropped_at INTEGER,
  final_at INTEGER,
  PRIMARY KEY (network, tx_hash, log_index)
) WITHOUT ROWID;
CREATE INDEX chain_seen_invoice_idx ON chain_seen (invoice_id, seen_at);
-- The seen transfers still waiting for finality, per network (rechecked each poll).
CREATE INDEX chain_seen_waiting_idx ON chain_seen (network, block_number) WHERE dropped_at IS NULL AND final_at IS NULL;
