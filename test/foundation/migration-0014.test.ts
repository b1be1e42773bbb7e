import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ensureDatabaseFile, openSqlite } from '../../src/db/database.js';
import { loadMigrations, migrate } from '../../src/db/migrator.js';
import { tempDir } from '../helpers/app.js';

test('migration 0014 fills the received sums of existing invoices: received_amount when applied by hand, else payable for confirmed', () => {
  const path = join(tempDir(), 'data', 'gateway.db');
  ensureDatabaseFile(path);
  const sqlite = openSqlite(path);
  const all = loadMigrations();
  migrate(
    sqlite,
    1000,
    all.filter((m) => m.version < 14),
  );
  sqlite.prepare(`INSERT INTO merchants (id, email, name, created_at, updated_at) VALUES ('mch_1', 'a@example.test', 'A', 1, 1)`).run();
  sqlite
    .prepare(
      `INSERT INTO wallets (id, merchant_id, label, address, network, created_at) VALUES ('wal_1', 'mch_1', 'Main', 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7', 'tron', 1)`,
    )
    .run();
  const add = sqlite.prepare(
    `INSERT INTO invoices (id, merchant_id, wallet_id, network, token, token_contract, wallet_address, merchant_order_id, idempotency_key,
       request_fingerprint, base_amount, adjustment, payable_amount, status, checkout_token, created_at, expires_at, reserved_until, received_amount)
     SELECT @id, 'mch_1', 'wal_1', 'tron', 'USDT', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7', @id, @id,
       'f', @base, 1, @base + 1, @status, 'chk-' || @id, 1, 2, 3, @received`,
  );
  add.run({ id: 'inv_1', base: 25_000_000, status: 'confirmed', received: 25_000_000 }); // applied by hand: 25.000000 of 25.000001
  add.run({ id: 'inv_2', base: 1_000_000_000_000_000, status: 'confirmed', received: null }); // paid exactly, at the maximum price
  add.run({ id: 'inv_3', base: 5_000_000, status: 'pending', received: null });
  migrate(sqlite, 2000, all);
  const row = sqlite
    .prepare(`SELECT CAST(received_units AS TEXT) AS u, CAST(received_micros AS TEXT) AS m FROM invoice_stats WHERE merchant_id = 'mch_1' AND status = ?`)
    .get('confirmed') as { u: string; m: string };
  assert.equal(BigInt(row.u) * 1_000_000n + BigInt(row.m), 25_000_000n + 1_000_000_000_000_001n);
  const pending = sqlite
    .prepare(`SELECT received_units AS u, received_micros AS m FROM invoice_stats WHERE merchant_id = 'mch_1' AND status = 'pending'`)
    .get() as { u: number; m: number };
  assert.deepEqual(pending, { u: 0, m: 0 });
  // The triggers keep it from then on: a transfer applied by hand to a pending invoice.
  sqlite.prepare(`UPDATE invoices SET status = 'confirmed', received_amount = 4000000 WHERE id = 'inv_3'`).run();
  const after = sqlite
    .prepare(
      `SELECT CAST(received_units AS TEXT) AS u, CAST(received_micros AS TEXT) AS m FROM invoice_stats WHERE merchant_id = 'mch_1' AND status = 'confirmed'`,
    )
    .get() as { u: string; m: string };
  assert.equal(BigInt(after.u) * 1_000_000n + BigInt(after.m), 25_000_000n + 1_000_000_000_000_001n + 4_000_000n);
  sqlite.close();
});
