-- PostgreSQL twin of migrations/0013_networks.sql (docs/architecture.md, Storage layer): the same tables, columns
-- and indexes; BIGINT for SQLite's INTEGER, TEXT compared byte-wise (COLLATE "C") as SQLite does.
-- The TRON network a database belongs to (tron-mainnet, tron-nile or tron-devnet). One row, written
-- when the database is first opened for a network; every start compares it with tron.network and
-- refuses another network, so test money and real money never share a database.
-- Frozen once released: change the schema in a new numbered file.

CREATE TABLE instance_network (
  id BIGINT PRIMARY KEY CHECK (id = 1),
  network TEXT COLLATE "C" NOT NULL CHECK (network IN ('tron-mainnet', 'tron-nile', 'tron-devnet')),
  recorded_at BIGINT NOT NULL
);

-- A database that already holds accounts or wallets predates test networks: it was made for mainnet.
INSERT INTO instance_network (id, network, recorded_at)
SELECT 1, 'tron-mainnet', (extract(epoch FROM now()) * 1000)::BIGINT
WHERE EXISTS (SELECT 1 FROM merchants) OR EXISTS (SELECT 1 FROM wallets);
