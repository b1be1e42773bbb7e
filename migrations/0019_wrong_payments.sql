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
  merchant_id TEXT PRIMARY KEY REFERENCES merchants (id),
  underpayment_tolerance TEXT,
  underpayment_auto_accept INTEGER NOT NULL DEFAULT 0,
  updated_at INTEGER NOT NULL
);

-- Another merchant on a shared address who says a transfer applied by hand was their customer's:
-- one row per transfer and contesting merchant, shown to every merchant of the address.
CREATE TABLE transfer_contests (
  transfer_id TEXT NOT NULL REFERENCES chain_transfers (id),
  merchant_id TEXT NOT NULL REFERENCES merchants (id),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (transfer_id, merchant_id)
);

-- GET /transfers: unmatched and late transfers newest recorded first, then id (the paging order).
CREATE INDEX chain_transfers_recorded_idx ON chain_transfers (recorded_at DESC, id) WHERE kind IN ('unmatched', 'late');
