#!/usr/bin/env node
// Instruction count of N invoice creations on SQLite (BENCHMARKS.md, "SQLite speed before and after PostgreSQL landed"):
//   valgrind --tool=callgrind node bench/creation-instructions.mjs <tree with dist/> 1000   (and 0: the start-up to subtract)
// POST /api/v1/invoices through app.fetch, an API key, rate limits on, 16 at a time. Works on trees before PostgreSQL too.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const [root, nText] = process.argv.slice(2);
const N = Number(nText);
const m = (p) => import(join(root, 'dist/src', p));
const { openDatabase } = await m('db/database.js');
const { migrate } = await m('db/migrator.js');
const { buildConfig } = await m('config.js');
const { createDeps } = await m('deps.js');
const { createApp } = await m('app.js');
const { insertMerchant } = await m('accounts/merchants.repo.js');
const { insertKey } = await m('api-keys/api-keys.repo.js');
const { registerWallet } = await m('wallets/wallets.repo.js');
const { createLogger } = await m('lib/log.js');
const dir = mkdtempSync(join(tmpdir(), 'inst-cg-'));
const config = buildConfig({
  database: { path: join(dir, 'g.db') },
  log: { level: 'silent' },
  rate_limits: { api_per_key: 1_000_000, invoices_per_merchant: 1_000_000 },
});
const database = openDatabase(config.database.path);
migrate(database.sqlite, Date.now());
const deps = createDeps({ config, database, log: createLogger('silent') });
const app = createApp(deps);
const now = Date.now();
const merchant = await insertMerchant(database.db, { email: 'cg@example.test', name: 'CG', passwordHash: null, emailVerifiedAt: now }, now);
const { secret } = await insertKey(
  database.db,
  merchant.id,
  { name: 's', scopes: ['invoices:read', 'invoices:write', 'ledger:read'], expiresInDays: null },
  now,
);
const { wallet } = await registerWallet(database.db, config.network.id, merchant.id, 'Main', 'TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre', now);
let ok = 0;
for (let i = 0; i < N; i += 16) {
  const rs = await Promise.all(
    Array.from({ length: Math.min(16, N - i) }, (_, j) =>
      app.fetch(
        new Request('http://127.0.0.1/api/v1/invoices', {
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'idempotency-key': `k-${i + j}` },
          body: JSON.stringify({ merchant_order_id: `o-${i + j}`, amount: '25', wallet_id: wallet.id, expires_in_minutes: 20 }),
        }),
      ),
    ),
  );
  ok += rs.filter((r) => r.status === 201).length;
}
if (ok !== N) throw new Error(`created ${ok} of ${N}`);
await database.close();
console.log(`created ${N}`);
