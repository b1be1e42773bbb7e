-- PostgreSQL twin of migrations/0007_dashboard_at_scale.sql (docs/architecture.md, Storage layer): the same tables, columns
-- and indexes; BIGINT for SQLite's INTEGER, TEXT compared byte-wise (COLLATE "C") as SQLite does.
-- The Dashboard (GET /me, the console overview) at a million invoices: its reads no longer grow
-- with the merchant's history (0.8 s with 1 000 000 invoices, the event loop blocked meanwhile).
-- Frozen once released: change the schema in a new numbered file.

-- Late and unmatched transfers are few: partial indexes find them without reading every transfer
-- (queries name the kinds as literals, so SQLite can use these indexes).
CREATE INDEX chain_transfers_late_idx ON chain_transfers (block_timestamp DESC, id) WHERE kind = 'late';
CREATE INDEX chain_transfers_unmatched_idx ON chain_transfers (network, to_address) WHERE kind = 'unmatched';

-- Invoice counts and amount sums per merchant and status, kept by triggers inside the transaction of
-- every invoice write, so the stats read at most four rows instead of every invoice of the merchant.
-- Amounts are split into whole USDT (units) and micro-units below one USDT (micros): a plain sum of
-- micro-units overflows SQLite's 64-bit integers after ~9 200 invoices of the maximum price
-- (1 000 000 000 USDT), which would fail the invoice write itself. Split, each column stays below
-- 2^63 for billions of invoices; the exact total is units * 1 000 000 + micros (computed as BigInt).

CREATE TABLE invoice_stats (
  merchant_id TEXT COLLATE "C" NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
  status TEXT COLLATE "C" NOT NULL,
  invoices BIGINT NOT NULL,
  base_units BIGINT NOT NULL,
  base_micros BIGINT NOT NULL,
  adjustment BIGINT NOT NULL,         -- micro-units; each adjustment is below one USDT
  payable_units BIGINT NOT NULL,
  payable_micros BIGINT NOT NULL,
  PRIMARY KEY (merchant_id, status)
);

INSERT INTO invoice_stats (merchant_id, status, invoices, base_units, base_micros, adjustment, payable_units, payable_micros)
SELECT merchant_id, status, count(*), sum(base_amount / 1000000), sum(base_amount % 1000000), sum(adjustment),
       sum(payable_amount / 1000000), sum(payable_amount % 1000000)
FROM invoices
GROUP BY merchant_id, status;

-- SQLite's three triggers, as trigger functions.
CREATE FUNCTION invoice_stats_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO invoice_stats AS s (merchant_id, status, invoices, base_units, base_micros, adjustment, payable_units, payable_micros)
  VALUES (NEW.merchant_id, NEW.status, 1, NEW.base_amount / 1000000, NEW.base_amount % 1000000, NEW.adjustment,
          NEW.payable_amount / 1000000, NEW.payable_amount % 1000000)
  ON CONFLICT (merchant_id, status) DO UPDATE SET
    invoices = s.invoices + 1,
    base_units = s.base_units + excluded.base_units,
    base_micros = s.base_micros + excluded.base_micros,
    adjustment = s.adjustment + excluded.adjustment,
    payable_units = s.payable_units + excluded.payable_units,
    payable_micros = s.payable_micros + excluded.payable_micros;
  RETURN NULL;
END $$;

CREATE FUNCTION invoice_stats_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE invoice_stats SET
    invoices = invoices - 1,
    base_units = base_units - OLD.base_amount / 1000000,
    base_micros = base_micros - OLD.base_amount % 1000000,
    adjustment = adjustment - OLD.adjustment,
    payable_units = payable_units - OLD.payable_amount / 1000000,
    payable_micros = payable_micros - OLD.payable_amount % 1000000
  WHERE merchant_id = OLD.merchant_id AND status = OLD.status;
  RETURN NULL;
END $$;

CREATE TRIGGER invoice_stats_insert AFTER INSERT ON invoices FOR EACH ROW EXECUTE FUNCTION invoice_stats_add();
-- Remove the old row's share, then add the new one's (one trigger each, fired in name order).
CREATE TRIGGER invoice_stats_update AFTER UPDATE OF merchant_id, status, base_amount, adjustment, payable_amount ON invoices
  FOR EACH ROW EXECUTE FUNCTION invoice_stats_remove();
CREATE TRIGGER invoice_stats_update_add AFTER UPDATE OF merchant_id, status, base_amount, adjustment, payable_amount ON invoices
  FOR EACH ROW EXECUTE FUNCTION invoice_stats_add();
CREATE TRIGGER invoice_stats_delete AFTER DELETE ON invoices FOR EACH ROW EXECUTE FUNCTION invoice_stats_remove();
