-- PostgreSQL twin of migrations/0012_console_v2.sql (docs/architecture.md, Storage layer): the same tables, columns
-- and indexes; BIGINT for SQLite's INTEGER, TEXT compared byte-wise (COLLATE "C") as SQLite does.
-- The console's second version: payments resolved by hand, the amount an invoice really received,
-- archived wallets. Frozen once released: change the schema in a new numbered file.

-- Micro-USDT the invoice actually received, written when the owner applies a transfer by hand (its
-- amount may differ from payable_amount). NULL otherwise: an invoice paid by the watcher received
-- exactly its payable amount.
ALTER TABLE invoices ADD COLUMN received_amount BIGINT;

-- A verified unmatched or late transfer the owner applied to an invoice of the same wallet
-- (POST /invoices/{id}/resolve). One row per invoice; the UNIQUE transfer makes a transfer pay at
-- most one invoice, whatever the races between two owners sharing an address.
CREATE TABLE invoice_resolutions (
  invoice_id TEXT COLLATE "C" PRIMARY KEY REFERENCES invoices (id),
  transfer_id TEXT COLLATE "C" NOT NULL UNIQUE REFERENCES chain_transfers (id),
  merchant_id TEXT COLLATE "C" NOT NULL REFERENCES merchants (id),
  previous_status TEXT COLLATE "C" NOT NULL,
  resolved_at BIGINT NOT NULL
);

-- An archived wallet takes no new invoices; the watcher keeps watching its address for late payments.
ALTER TABLE wallets ADD COLUMN archived_at BIGINT;
