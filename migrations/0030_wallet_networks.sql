-- The networks a wallet receives on (docs/payments.md, "Wallets on several networks"): one EVM
-- address can receive on several EVM networks, and the merchant names them once, on one wallet.
-- wallets.network stays the wallet's first network; these rows are every network, that one included,
-- with the address repeated so the watcher finds a network's addresses in one index range.
-- Frozen once released: change the schema in a new numbered file.
CREATE TABLE wallet_networks (
  wallet_id TEXT NOT NULL REFERENCES wallets (id),
  network TEXT NOT NULL,
  address TEXT NOT NULL,
  PRIMARY KEY (wallet_id, network)
) WITHOUT ROWID;
CREATE INDEX wallet_networks_network_address_idx ON wallet_networks (network, address);
INSERT INTO wallet_networks (wallet_id, network, address) SELECT id, network, address FROM wallets;
