-- PostgreSQL twin of migrations/0017_fiat_prices.sql (docs/architecture.md, Storage layer): the same tables, columns
-- and indexes; BIGINT for SQLite's INTEGER, TEXT compared byte-wise (COLLATE "C") as SQLite does.
-- Prices in fiat currencies (docs/payments.md, Prices in fiat). Frozen once released: change the
-- schema in a new numbered file.

-- The price an invoice was created from, fixed at creation; all NULL for an invoice priced in USDT.
-- Decimals are kept as their exact text: price_amount in the currency's own decimals ("100.00"),
-- price_rate as units of the currency per 1 USDT ("7.115"), price_markup_percent ("2.5");
-- price_sources is a JSON array of source names; price_rate_at is when the oldest rate used was read (ms).
ALTER TABLE invoices ADD COLUMN price_amount TEXT COLLATE "C";
ALTER TABLE invoices ADD COLUMN price_currency TEXT COLLATE "C";
ALTER TABLE invoices ADD COLUMN price_rate TEXT COLLATE "C";
ALTER TABLE invoices ADD COLUMN price_markup_percent TEXT COLLATE "C";
ALTER TABLE invoices ADD COLUMN price_sources TEXT COLLATE "C";
ALTER TABLE invoices ADD COLUMN price_rate_at BIGINT;

-- The merchant's markup on fiat prices, in percent ("0" to "20", at most 2 decimals).
ALTER TABLE merchants ADD COLUMN markup_percent TEXT COLLATE "C" NOT NULL DEFAULT '0';
