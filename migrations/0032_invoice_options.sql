-- The payer's choice (docs/payments.md, "Invoices with several options"): an invoice may offer
-- several networks and tokens, each with its own unique payable amount, reserved at creation on its
-- own (network, token contract, address) in amount_reservations. The invoice row itself is option 0:
-- what the invoice asks while unpaid, and once paid the option that paid it. These rows are the
-- others, positions 1 and up; a single-option invoice (every invoice made before) has none. When
-- another option pays, the invoice row takes its values and position 0 is written here, released,
-- so what option 0 asked is still known (a later payment on it is a late payment of the invoice).
-- status: 'open' (payable), 'paid' (this option paid the invoice), 'released' (another option paid,
-- or the invoice expired or was cancelled; its amount reservation ended then).
-- Frozen once released: change the schema in a new numbered file.
CREATE TABLE invoice_options (
  invoice_id TEXT NOT NULL REFERENCES invoices (id),
  position INTEGER NOT NULL,
  wallet_id TEXT NOT NULL REFERENCES wallets (id),
  network TEXT NOT NULL,
  token TEXT NOT NULL,
  token_contract TEXT NOT NULL,
  wallet_address TEXT NOT NULL,
  adjustment INTEGER NOT NULL,         -- micro-units
  payable_amount INTEGER NOT NULL,     -- micro-units, six decimals on every token
  status TEXT NOT NULL CHECK (status IN ('open', 'paid', 'released')),
  PRIMARY KEY (invoice_id, position)
) WITHOUT ROWID;
-- A verified transfer finds the option it pays in one index range, as it finds an invoice.
CREATE INDEX invoice_options_payable_idx ON invoice_options (network, token_contract, wallet_address, payable_amount);
