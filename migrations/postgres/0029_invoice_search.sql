-- PostgreSQL twin of migrations/0028_invoice_search.sql (docs/architecture.md, Storage layer).
-- Invoice search by amount (GET /invoices?q=, the console's search box): one merchant's invoices
-- of one payable or base amount, newest first, are one range of these indexes, as the list's other
-- filters are (docs/api.md, "Listing invoices"). An order id uses invoices_order_uq, a transaction
-- hash chain_transfers_log_uq and an address the wallet's invoices_merchant_wallet_created_idx.
-- Frozen once released: change the schema in a new numbered file.
CREATE INDEX invoices_merchant_payable_created_idx ON invoices (merchant_id, payable_amount, created_at DESC, id);
CREATE INDEX invoices_merchant_base_created_idx ON invoices (merchant_id, base_amount, created_at DESC, id);
