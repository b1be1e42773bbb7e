-- PostgreSQL twin of migrations/0019_wrong_payments.sql (docs/architecture.md, Storage layer): the same tables, columns
-- and indexes; BIGINT for SQLite's INTEGER, TEXT compared byte-wise (COLLATE "C") as SQLite does.
-- Wrong payments, end to end: the merchant's underpayment settings, contests of a payment applied
-- by hand on a shared address, and the index GET /transfers pages through. Frozen once released:
-- change the schema in a new numbered file.

-- The merchant's settings for transfers short of an invoice's amount (PATCH /me). No row = the defaults.
-- underpayment_tolerance: how far short a transfer may be and still be recorded against an open
--   invoice as a partial payment: a USDT amount ("1.00") or a percentage of the payable amount
--   ("1%"); NULL = off.
-- underpayment_auto_accept: 1 = such a partial payment confirms its invoice by itself (resolution
--   "tolerance"); 0 = the owner decides.
CREATE TABLE merchant_payment_settings (
  merchant_id TEXT COLLATE "C" PRIMARY KEY REFERENCES merchants (id),
  underpayment_tolerance TEXT COLLATE "C",
  underpayment_auto_accept BIGINT NOT NULL DEFAULT 0,
  updated_at BIGINT NOT NULL
);

-- What an invoice has received so far, micro-USDT: every verified transfer recorded against it
-- (the one that paid it, partial and late payments) and a transfer applied to it by hand. A pending
-- invoice short of its amount shows "received X of Y" to its payer.
ALTER TABLE invoices ADD COLUMN amount_received BIGINT NOT NULL DEFAULT 0;
-- How a confirmed invoice was settled when not by a transfer of its exact amount: 'manual' (a
-- transfer applied by hand), 'tolerance' (a partial payment within the merchant's tolerance,
-- accepted automatically); NULL otherwise.
ALTER TABLE invoices ADD COLUMN resolution TEXT COLLATE "C";
UPDATE invoices SET resolution = 'manual' WHERE id IN (SELECT invoice_id FROM invoice_resolutions);
UPDATE invoices
SET amount_received = COALESCE((SELECT SUM(t.amount) FROM chain_transfers t WHERE t.invoice_id = invoices.id), 0)
  + COALESCE((SELECT t.amount FROM invoice_resolutions r JOIN chain_transfers t ON t.id = r.transfer_id
              WHERE r.invoice_id = invoices.id AND (t.invoice_id IS NULL OR t.invoice_id <> invoices.id)), 0)
WHERE id IN (SELECT invoice_id FROM chain_transfers WHERE invoice_id IS NOT NULL)
   OR id IN (SELECT invoice_id FROM invoice_resolutions);

-- Another merchant on a shared address who says a transfer applied by hand was their customer's:
-- one row per transfer and contesting merchant, shown to every merchant of the address.
CREATE TABLE transfer_contests (
  transfer_id TEXT COLLATE "C" NOT NULL REFERENCES chain_transfers (id),
  merchant_id TEXT COLLATE "C" NOT NULL REFERENCES merchants (id),
  created_at BIGINT NOT NULL,
  PRIMARY KEY (transfer_id, merchant_id)
);

-- GET /transfers: unmatched and late transfers newest recorded first, then id (the paging order).
CREATE INDEX chain_transfers_recorded_idx ON chain_transfers (recorded_at DESC, id) WHERE kind IN ('unmatched', 'late');
