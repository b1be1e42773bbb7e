-- The TRON network a database belongs to (tron-mainnet, tron-nile or tron-devnet). One row, written
-- when the database is first opened for a network; every start compares it with tron.network and
-- refuses another network, so test money and real money never share a database.
-- Frozen once released: change the schema in a new numbered file.

CREATE TABLE instance_network (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  network TEXT NOT NULL CHECK (network IN ('tron-mainnet', 'tron-nile', 'tron-devnet')),
  recorded_at INTEGER NOT NULL
);

-- A database that already holds accounts or wallets predates test networks: it was made for mainnet.
INSERT INTO instance_network (id, network, recorded_at)
SELECT 1, 'tron-mainnet', CAST(strftime('%s', 'now') AS INTEGER) * 1000
WHERE EXISTS (SELECT 1 FROM merchants) OR EXISTS (SELECT 1 FROM wallets);
