/**
 * Several instances on one PostgreSQL database (issue 31): a rate limit does not multiply with the
 * number of instances. Two real apps, each with its own HTTP server, pool and clock, share one
 * database; requests alternate between them, and the limit counts them together. (On SQLite the
 * buckets stay in memory: one process; see src/http/rate-limit.ts.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startTestApp, tempDir, type TestApp } from '../helpers/app.js';
import { onPostgres, scratchDatabase } from '../helpers/database.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { addWallet, createInvoice, newKey, ADDRESSES } from '../helpers/shop.js';
import { runOnce as maintenance } from '../../src/db/maintenance.worker.js';

const skip = onPostgres ? false : 'needs TEST_DATABASE_URL (several instances share a PostgreSQL database)';

/** Two apps on one fresh PostgreSQL database, with the same limits. */
async function twoInstances(rateLimits: Record<string, unknown>): Promise<{ a: TestApp; b: TestApp; close(): Promise<void> }> {
  const scratch = await scratchDatabase();
  const database = (name: string) => ({ path: join(tempDir(), `${name}.db`), url: scratch.url });
  const config = (name: string) => ({ rate_limits: rateLimits, database: database(name), server: { trust_proxy: true } });
  const a = await startTestApp({ config: config('a') });
  const b = await startTestApp({ config: config('b') });
  return {
    a,
    b,
    async close() {
      await a.close();
      await b.close();
      await scratch.drop();
    },
  };
}

test('an API key limit of 6 a minute allows 6 requests in all across two instances, not 6 on each', { skip }, async () => {
  const { a, b, close } = await twoInstances({ api_per_key: 6 });
  try {
    const s = await signedInMerchant(a);
    const key = await newKey(s.client);
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const instance = i % 2 === 0 ? a : b;
      statuses.push((await instance.client({ origin: null }).get('/wallets', { bearer: key.secret })).status);
    }
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 429, 429, 429, 429, 429, 429]);
    // A minute later (each instance's clock) the bucket is full again, on both.
    a.clock.advance(60_000);
    b.clock.advance(60_000);
    assert.equal((await b.client({ origin: null }).get('/wallets', { bearer: key.secret })).status, 200);
    assert.equal((await a.client({ origin: null }).get('/wallets', { bearer: key.secret })).status, 200);
  } finally {
    await close();
  }
});

test('the per-merchant creation limit and the sign-in throttle count both instances together', { skip }, async () => {
  const { a, b, close } = await twoInstances({ invoices_per_merchant: 3, auth_per_email: 4, auth_per_ip: 100 });
  try {
    const s = await signedInMerchant(a);
    const walletId = await addWallet(s.client, ADDRESSES[0]);
    const key = await newKey(s.client);
    const created: number[] = [];
    for (let i = 0; i < 6; i++) {
      const instance = i % 2 === 0 ? a : b;
      const res = await createInvoice(instance.client({ origin: null }), { amount: '10', wallet_id: walletId }, { bearer: key.secret });
      created.push(res.status);
      if (res.status === 429) assert.equal(res.body.error.code, 'rate_limited');
    }
    assert.deepEqual(created, [201, 201, 201, 429, 429, 429]);
    const invoices = await a.deps.db
      .selectFrom('invoices')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(invoices.n), 3, 'no invoice was written past the limit');

    // Password guesses for one email: 4 a minute whichever instance answers.
    const login = (t: TestApp) => t.client().post('/auth/login', { email: 'target@example.org', password: 'wrong password' });
    const logins: number[] = [];
    for (let i = 0; i < 8; i++) logins.push((await login(i % 2 === 0 ? a : b)).status);
    assert.deepEqual(logins, [401, 401, 401, 401, 429, 429, 429, 429]);

    // The clean-up (every instance's maintenance worker) forgets buckets untouched for a minute only.
    assert.ok(Number((await countBuckets(a)).n) >= 3);
    await maintenance(a.deps);
    assert.ok(Number((await countBuckets(a)).n) >= 3, 'fresh buckets are kept');
    b.clock.advance(61_000);
    await maintenance(b.deps);
    assert.equal(Number((await countBuckets(a)).n), 0);
  } finally {
    await close();
  }
});

function countBuckets(t: TestApp) {
  return t.deps.db
    .selectFrom('rate_limit_buckets')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
}
