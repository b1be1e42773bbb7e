/**
 * `gatewayd db copy --to postgres://…`: a SQLite installation with accounts, wallets, invoices and
 * events moves into an empty PostgreSQL database, every table counted and checksummed; the copy
 * then serves the same account and invoices; a non-empty target is refused. Needs a PostgreSQL
 * server (TEST_DATABASE_URL).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startTestApp, tempDir } from '../helpers/app.js';
import { onPostgres, scratchDatabase } from '../helpers/database.js';
import { runCli, writeConfig } from '../helpers/process.js';
import { createInvoice, shop } from '../helpers/shop.js';

test(
  'db copy: SQLite into an empty PostgreSQL database, verified per table; the copy serves the same data; a non-empty target is refused',
  { skip: onPostgres ? false : 'needs TEST_DATABASE_URL' },
  async () => {
    const dir = tempDir('gatewayd-copy-');
    const dbPath = join(dir, 'gateway.db');
    const lite = await startTestApp({ config: { database: { path: dbPath } } });
    const s = await shop(lite);
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) ids.push((await createInvoice(s.client, { amount: '12.5', wallet_id: s.walletId })).body.invoice.id);
    const before = (await s.client.get('/me')).body.stats;
    await lite.close();

    const scratch = await scratchDatabase();
    try {
      const config = writeConfig(dir, { database: { path: dbPath } });
      const copy = runCli(['db', 'copy', '--config', config, '--to', scratch.url]);
      assert.equal(copy.status, 0, copy.stderr + copy.stdout);
      assert.match(copy.stdout, /^ok\s+invoices\s+25 rows/m);
      assert.match(copy.stdout, /^ok\s+invoice_stats\s+1 rows/m);
      assert.doesNotMatch(copy.stdout, /FAIL/);
      assert.match(copy.stdout, /every count and checksum matches/);

      const again = runCli(['db', 'copy', '--config', config, '--to', scratch.url]);
      assert.equal(again.status, 1);
      assert.match(again.stderr, /not empty/);

      // The PostgreSQL copy, served: the same account signs in and sees the same invoices and sums.
      const pg = await startTestApp({ config: { database: { path: join(dir, 'unused.db'), url: scratch.url } } });
      try {
        // The owner's session is a row that came along: the same cookie is signed in.
        const client = pg.client();
        for (const [name, value] of s.client.cookies) client.cookies.set(name, value);
        const list = await client.get('/invoices?limit=100');
        assert.equal(list.status, 200, list.text);
        assert.deepEqual(list.body.invoices.map((i: { id: string }) => i.id).sort(), [...ids].sort());
        assert.deepEqual((await client.get('/me')).body.stats, before);
        // The next amount continues after the copied ones (the allocation cursor came along).
        const next = await createInvoice(client, { amount: '12.5', wallet_id: s.walletId });
        assert.equal(next.status, 201);
        assert.equal(next.body.invoice.payable_amount, '12.500026');
      } finally {
        await pg.close();
      }
    } finally {
      await scratch.drop();
    }
  },
);
