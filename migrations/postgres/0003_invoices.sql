-- PostgreSQL twin of migrations/0003_invoices.sql (docs/architecture.md, Storage layer): the same tables, columns
-- and indexes; BIGINT for SQLite's INTEGER, TEXT compared byte-wise (COLLATE "C") as SQLite does.
-- Amount allocation cursors (decisions.md section 3). For each (network, token contract, address,
-- base price) the smallest adjustment that has never been tried. Every final amount below the
-- cursor is known to be used, and a used amount never becomes unused again (reservation rows are
-- never deleted), so allocation resumes here instead of scanning every reservation: amortised O(1).
-- Frozen once released: change the schema in a new numbered file.

CREATE TABLE amount_cursors (
  network TEXT COLLATE "C" NOT NULL,
  token_contract TEXT COLLATE "C" NOT NULL,
  address TEXT COLLATE "C" NOT NULL,
  base_amount BIGINT NOT NULL,        -- micro-units
  next_adjustment BIGINT NOT NULL,    -- micro-units; past invoices.max_adjustment = range used up
  -- Once the range is used up: no reservation of it ends before this time (ms). A lower bound,
  -- since reservations are only ever extended, so a 409 needs no scan until then.
  reusable_from BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (network, token_contract, address, base_amount)
);
