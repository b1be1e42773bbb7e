-- PostgreSQL twin of migrations/0011_integrator_api.sql (docs/architecture.md, Storage layer): the same tables, columns
-- and indexes; BIGINT for SQLite's INTEGER, TEXT compared byte-wise (COLLATE "C") as SQLite does.
-- The integrator's API: paged and filtered invoice and event lists, cancel, a return URL and the
-- checkout's QR format. Frozen once released: change the schema in a new numbered file.

-- Where the checkout sends the payer back once the invoice is settled (https, at most 2048 chars).
ALTER TABLE invoices ADD COLUMN redirect_url TEXT COLLATE "C";
-- Set when the merchant cancelled the invoice (POST /invoices/{id}/cancel): a repeated cancel answers
-- 200, while an invoice that expired by itself is not cancellable.
ALTER TABLE invoices ADD COLUMN cancelled_at BIGINT;

-- What the checkout's QR code carries: the address alone (every wallet scans it) or a tron: URI with
-- the amount (some wallets reject those).
ALTER TABLE merchants ADD COLUMN checkout_qr TEXT COLLATE "C" NOT NULL DEFAULT 'address' CHECK (checkout_qr IN ('address', 'tron_uri'));

-- Every page of GET /invoices is one index range read, newest first: (created_at DESC, id) after the
-- equality filters. Without a filter: invoices_merchant_created_idx. A status filter reads one range
-- per status and merges them; a wallet filter (with or without statuses) reads the wallet's ranges.
-- merchant_order_id is unique per merchant (invoices_order_uq).
CREATE INDEX invoices_merchant_status_created_idx ON invoices (merchant_id, status, created_at DESC, id);
CREATE INDEX invoices_merchant_wallet_created_idx ON invoices (merchant_id, wallet_id, status, created_at DESC, id);

-- GET /events the same way; the id in the index orders events of the same millisecond without a sort.
CREATE INDEX events_merchant_created_id_idx ON events (merchant_id, created_at DESC, id);
CREATE INDEX events_merchant_type_created_idx ON events (merchant_id, type, created_at DESC, id);
DROP INDEX events_merchant_idx;
