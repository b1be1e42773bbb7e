-- PostgreSQL twin of migrations/0014_console_notices.sql (docs/architecture.md, Storage layer): the same tables, columns
-- and indexes; BIGINT for SQLite's INTEGER, TEXT compared byte-wise (COLLATE "C") as SQLite does.
-- The console's remaining pieces: the Overview's "Received" figure is what confirmed invoices really
-- received, not their payable amounts. Frozen once released: change the schema in a new numbered file.

-- What an invoice received, kept beside the other sums of invoice_stats (migrations/0007) and split
-- the same way (whole USDT and micro-units, so no 64-bit sum can overflow): received_amount when a
-- transfer was applied by hand (it may differ from payable_amount), else payable_amount for a
-- confirmed invoice (the watcher confirms only the exact amount), else nothing.
ALTER TABLE invoice_stats ADD COLUMN received_units BIGINT NOT NULL DEFAULT 0;
ALTER TABLE invoice_stats ADD COLUMN received_micros BIGINT NOT NULL DEFAULT 0;

UPDATE invoice_stats SET
  received_units = (SELECT coalesce(sum(COALESCE(i.received_amount, CASE WHEN i.status = 'confirmed' THEN i.payable_amount ELSE 0 END) / 1000000), 0) FROM invoices i
                    WHERE i.merchant_id = invoice_stats.merchant_id AND i.status = invoice_stats.status),
  received_micros = (SELECT coalesce(sum(COALESCE(i.received_amount, CASE WHEN i.status = 'confirmed' THEN i.payable_amount ELSE 0 END) % 1000000), 0) FROM invoices i
                     WHERE i.merchant_id = invoice_stats.merchant_id AND i.status = invoice_stats.status);

-- The trigger functions of 0007, with the received sums; the update triggers also watch received_amount.
CREATE OR REPLACE FUNCTION invoice_stats_add() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  received BIGINT := COALESCE(NEW.received_amount, CASE WHEN NEW.status = 'confirmed' THEN NEW.payable_amount ELSE 0 END);
BEGIN
  INSERT INTO invoice_stats AS s (merchant_id, status, invoices, base_units, base_micros, adjustment, payable_units, payable_micros, received_units, received_micros)
  VALUES (NEW.merchant_id, NEW.status, 1, NEW.base_amount / 1000000, NEW.base_amount % 1000000, NEW.adjustment,
          NEW.payable_amount / 1000000, NEW.payable_amount % 1000000, received / 1000000, received % 1000000)
  ON CONFLICT (merchant_id, status) DO UPDATE SET
    invoices = s.invoices + 1,
    base_units = s.base_units + excluded.base_units,
    base_micros = s.base_micros + excluded.base_micros,
    adjustment = s.adjustment + excluded.adjustment,
    payable_units = s.payable_units + excluded.payable_units,
    payable_micros = s.payable_micros + excluded.payable_micros,
    received_units = s.received_units + excluded.received_units,
    received_micros = s.received_micros + excluded.received_micros;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION invoice_stats_remove() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  received BIGINT := COALESCE(OLD.received_amount, CASE WHEN OLD.status = 'confirmed' THEN OLD.payable_amount ELSE 0 END);
BEGIN
  UPDATE invoice_stats SET
    invoices = invoices - 1,
    base_units = base_units - OLD.base_amount / 1000000,
    base_micros = base_micros - OLD.base_amount % 1000000,
    adjustment = adjustment - OLD.adjustment,
    payable_units = payable_units - OLD.payable_amount / 1000000,
    payable_micros = payable_micros - OLD.payable_amount % 1000000,
    received_units = received_units - received / 1000000,
    received_micros = received_micros - received % 1000000
  WHERE merchant_id = OLD.merchant_id AND status = OLD.status;
  RETURN NULL;
END $$;

DROP TRIGGER invoice_stats_update ON invoices;
DROP TRIGGER invoice_stats_update_add ON invoices;
CREATE TRIGGER invoice_stats_update AFTER UPDATE OF merchant_id, status, base_amount, adjustment, payable_amount, received_amount ON invoices
  FOR EACH ROW EXECUTE FUNCTION invoice_stats_remove();
CREATE TRIGGER invoice_stats_update_add AFTER UPDATE OF merchant_id, status, base_amount, adjustment, payable_amount, received_amount ON invoices
  FOR EACH ROW EXECUTE FUNCTION invoice_stats_add();

-- The language of the mails an owner gets without asking (payment notices): the locale of their last
-- registration or password sign-in. NULL: English.
ALTER TABLE merchants ADD COLUMN locale TEXT COLLATE "C";

-- Owner notices of unmatched and late payments (email.payment_notices), written in the same
-- transaction as the transfer they tell of, so none is lost when the mail server is down or the
-- process stops; the mail worker sends them and records sent_at. One row per transfer and owner:
-- a transfer is told of at most once to each owner of a wallet on its address.
CREATE TABLE payment_notices (
  transfer_id TEXT COLLATE "C" NOT NULL REFERENCES chain_transfers (id),
  merchant_id TEXT COLLATE "C" NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
  created_at BIGINT NOT NULL,
  attempts BIGINT NOT NULL DEFAULT 0,
  next_attempt_at BIGINT NOT NULL,
  sent_at BIGINT,
  PRIMARY KEY (transfer_id, merchant_id)
);

CREATE INDEX payment_notices_due_idx ON payment_notices (next_attempt_at, merchant_id) WHERE sent_at IS NULL;
