-- Shops plug in: connections for the Epay and Epusdt protocols (docs/shops.md), the orders those
-- shops create (each one an ordinary invoice) and the paid callbacks owed to them (their outbox).
-- Frozen once released: change the schema in a new numbered file.

-- One shop plugged in through one protocol. The key is a shared secret both sides sign with (MD5
-- over the fields and the key, as the shops' drivers do), so it is kept in clear, like a webhook's
-- signing secret; it leaves the server once, in the answer that creates or rolls it.
CREATE TABLE shop_connections (
  id TEXT PRIMARY KEY,
  merchant_id TEXT NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
  protocol TEXT NOT NULL CHECK (protocol IN ('epay', 'epusdt')),
  name TEXT NOT NULL,
  -- The short numeric merchant id Epay shops are configured with (unique on the instance).
  pid INTEGER NOT NULL UNIQUE,
  secret TEXT NOT NULL,
  wallet_id TEXT NOT NULL REFERENCES wallets (id),
  -- What the shop's amounts are in: USDT, or a fiat currency priced through [pricing].
  currency TEXT NOT NULL,
  allow_http_notify INTEGER NOT NULL DEFAULT 0,
  active INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  deleted_at INTEGER,
  key_rolled_at INTEGER
);
CREATE INDEX shop_connections_merchant_idx ON shop_connections (merchant_id, active);
-- The Epusdt protocol names no merchant: a request is matched by its signature against the active
-- Epusdt connections.
CREATE INDEX shop_connections_protocol_idx ON shop_connections (protocol, active);

-- The shop's side of an invoice created through a connection: what it sent, echoed back in its
-- callback exactly as received (money as typed, type, name, param) and where to call it.
CREATE TABLE shop_orders (
  invoice_id TEXT PRIMARY KEY REFERENCES invoices (id) ON DELETE CASCADE,
  connection_id TEXT NOT NULL REFERENCES shop_connections (id) ON DELETE CASCADE,
  merchant_id TEXT NOT NULL,
  out_trade_no TEXT NOT NULL,
  money TEXT NOT NULL,
  notify_url TEXT NOT NULL,
  return_url TEXT,
  type TEXT,
  name TEXT,
  param TEXT,
  created_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX shop_orders_connection_order_uq ON shop_orders (connection_id, out_trade_no);

-- The outbox of paid callbacks: written in the transaction that confirms the invoice (one per
-- invoice, ever), sent and retried by the shop-notify worker, shown in the console.
CREATE TABLE shop_notifies (
  id TEXT PRIMARY KEY,
  invoice_id TEXT NOT NULL UNIQUE REFERENCES invoices (id) ON DELETE CASCADE,
  connection_id TEXT NOT NULL REFERENCES shop_connections (id) ON DELETE CASCADE,
  merchant_id TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'sending', 'delivered', 'failed', 'cancelled')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER,
  delivered_at INTEGER,
  last_error TEXT,
  response_status INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX shop_notifies_due_idx ON shop_notifies (status, next_attempt_at);
CREATE INDEX shop_notifies_merchant_idx ON shop_notifies (merchant_id, created_at DESC);
