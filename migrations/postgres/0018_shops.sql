-- PostgreSQL twin of migrations/0018_shops.sql (docs/architecture.md, Storage layer): the same tables, columns
-- and indexes; BIGINT for SQLite's INTEGER, TEXT compared byte-wise (COLLATE "C") as SQLite does.
-- Shops plug in: connections for the Epay and Epusdt protocols (docs/shops.md), the orders those
-- shops create (each one an ordinary invoice) and the paid callbacks owed to them (their outbox).
-- Frozen once released: change the schema in a new numbered file.

-- One shop plugged in through one protocol. The key is a shared secret both sides sign with (MD5
-- over the fields and the key, as the shops' drivers do), so it is kept in clear, like a webhook's
-- signing secret; it leaves the server once, in the answer that creates or rolls it.
CREATE TABLE shop_connections (
  id TEXT COLLATE "C" PRIMARY KEY,
  merchant_id TEXT COLLATE "C" NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
  protocol TEXT COLLATE "C" NOT NULL CHECK (protocol IN ('epay', 'epusdt')),
  name TEXT COLLATE "C" NOT NULL,
  -- The short numeric merchant id Epay shops are configured with (unique on the instance).
  pid BIGINT NOT NULL UNIQUE,
  secret TEXT COLLATE "C" NOT NULL,
  wallet_id TEXT COLLATE "C" NOT NULL REFERENCES wallets (id),
  -- What the shop's amounts are in: USDT, or a fiat currency priced through [pricing].
  currency TEXT COLLATE "C" NOT NULL,
  allow_http_notify BIGINT NOT NULL DEFAULT 0,
  active BIGINT NOT NULL DEFAULT 1,
  created_at BIGINT NOT NULL,
  deleted_at BIGINT,
  key_rolled_at BIGINT
);
CREATE INDEX shop_connections_merchant_idx ON shop_connections (merchant_id, active);
-- The Epusdt protocol names no merchant: a request is matched by its signature against the active
-- Epusdt connections.
CREATE INDEX shop_connections_protocol_idx ON shop_connections (protocol, active);

-- The shop's side of an invoice created through a connection: what it sent, echoed back in its
-- callback exactly as received (money as typed, type, name, param) and where to call it.
CREATE TABLE shop_orders (
  invoice_id TEXT COLLATE "C" PRIMARY KEY REFERENCES invoices (id) ON DELETE CASCADE,
  connection_id TEXT COLLATE "C" NOT NULL REFERENCES shop_connections (id) ON DELETE CASCADE,
  merchant_id TEXT COLLATE "C" NOT NULL,
  out_trade_no TEXT COLLATE "C" NOT NULL,
  money TEXT COLLATE "C" NOT NULL,
  notify_url TEXT COLLATE "C" NOT NULL,
  return_url TEXT COLLATE "C",
  type TEXT COLLATE "C",
  name TEXT COLLATE "C",
  param TEXT COLLATE "C",
  created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX shop_orders_connection_order_uq ON shop_orders (connection_id, out_trade_no);

-- The outbox of paid callbacks: written in the transaction that confirms the invoice (one per
-- invoice, ever), sent and retried by the shop-notify worker, shown in the console.
CREATE TABLE shop_notifies (
  id TEXT COLLATE "C" PRIMARY KEY,
  invoice_id TEXT COLLATE "C" NOT NULL UNIQUE REFERENCES invoices (id) ON DELETE CASCADE,
  connection_id TEXT COLLATE "C" NOT NULL REFERENCES shop_connections (id) ON DELETE CASCADE,
  merchant_id TEXT COLLATE "C" NOT NULL,
  status TEXT COLLATE "C" NOT NULL CHECK (status IN ('pending', 'sending', 'delivered', 'failed', 'cancelled')),
  attempts BIGINT NOT NULL DEFAULT 0,
  next_attempt_at BIGINT,
  delivered_at BIGINT,
  last_error TEXT COLLATE "C",
  response_status BIGINT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX shop_notifies_due_idx ON shop_notifies (status, next_attempt_at);
CREATE INDEX shop_notifies_merchant_idx ON shop_notifies (merchant_id, created_at DESC);
