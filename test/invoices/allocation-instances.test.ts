import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { onConnection, openDatabase, type Conn, type PgConn, type Tx } from '../../src/db/database.js';
import { createDeps } from '../../src/deps.js';
import { createInvoiceOrThrow, InvoiceCreator } from '../../src/invoices/invoices.service.js';
import { createLogger } from '../../src/lib/log.js';
import { registerWallet } from '../../src/wallets/wallets.repo.js';

/** Node's warnings while this file runs (pg deprecates a query sent to a client still busy with another). */
const warnings: string[] = [];
process.on('warning', (w) => warnings.push(w.message));

/**
 * Two instances (two pools, two group commits on one database) creating on one wallet at one price,
 * starting from a pool with no cursor row: the cursor's claim (one INSERT ... ON CONFLICT DO UPDATE,
 * src/invoices/allocation.repo.ts) must serialize them, so no payable amount is handed out twice
 * and the cursor ends just past the last one. On SQLite the two handles share the file's write lock.
 */
test('two instances creating at one price on one wallet never hand out the same payable amount', async () => {
  const t = await startTestApp({ config: { rate_limits: { invoices_per_merchant: 0 } } });
  const second = openDatabase(t.config.database);
  try {
    const { merchant } = await signedInMerchant(t);
    const { wallet } = await registerWallet(t.deps.db, t.config.network.id, merchant.id, 'Main', 'TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre', t.clock.now());
    const creators = [
      new InvoiceCreator(t.deps),
      new InvoiceCreator(createDeps({ config: t.config, database: second, log: createLogger('silent'), clock: t.clock })),
    ];
    const N = 120;
    const created = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        creators[i % 2]!.create({
          merchantId: merchant.id,
          idempotencyKey: `k-${i}`,
          body: { merchant_order_id: `o-${i}`, amount: '25', wallet_id: wallet.id, expires_in_minutes: 20 },
        }),
      ),
    );
    // Both instances created some, and no creation met an amount the other had reserved meanwhile
    // (the reservation's primary key would refuse it and the unit would run again): the claim
    // serialized them.
    assert.deepEqual(
      creators.map((c) => [c.committer.stats.units, c.committer.stats.reruns]),
      [
        [N / 2, 0],
        [N / 2, 0],
      ],
    );
    const amounts = created.map((r) => r.invoice.payableAmount).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    // The smallest amounts, each once: 25.000001 .. 25.000120.
    assert.deepEqual(
      amounts,
      Array.from({ length: N }, (_, i) => 25_000_001n + BigInt(i)),
    );
    const cursor = await t.deps.db.selectFrom('amount_cursors').select('next_adjustment').where('base_amount', '=', 25_000_000).executeTakeFirstOrThrow();
    assert.equal(cursor.next_adjustment, N + 1);
    const reservations = await t.deps.db
      .selectFrom('amount_reservations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(reservations.n), N);
  } finally {
    await second.close();
    await t.close();
  }
});

/**
 * A claim that waited for another transaction's lock on the cursor must still see the amounts that
 * transaction reserved through another price of the same address: 10.000001's first amount is
 * 10.000002, the second adjustment of 10.000000. Returning the probe of used amounts with the claim
 * (one statement, one snapshot taken before the wait) handed 10.000002 out again, and the
 * reservation's primary key refused it: a 500 for a shop's order.
 */
test(
  'a claim that waited on the cursor sees what the transaction it waited for reserved at another price (PostgreSQL)',
  { skip: onPostgres ? false : 'needs TEST_DATABASE_URL (SQLite serializes whole transactions)' },
  async () => {
    const t = await startTestApp({ config: { rate_limits: { invoices_per_merchant: 0 } } });
    try {
      const { merchant } = await signedInMerchant(t);
      const { wallet } = await registerWallet(t.deps.db, t.config.network.id, merchant.id, 'Main', 'TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre', t.clock.now());
      const create = (tx: Tx, i: number, amount: string) =>
        createInvoiceOrThrow(tx, t.deps, {
          merchantId: merchant.id,
          idempotencyKey: `k-${i}`,
          body: { merchant_order_id: `o-${i}`, amount, wallet_id: wallet.id, expires_in_minutes: 20 },
        });
      const pg = (conn: Conn) => conn as PgConn;
      const second = await onConnection(t.deps.db, async (first) => {
        await pg(first).query('BEGIN', []);
        assert.equal((await create(first as Tx, 1, '10')).invoice.payableAmount, 10_000_001n);
        assert.equal((await create(first as Tx, 2, '10.000001')).invoice.payableAmount, 10_000_002n);
        // Another transaction claims 10.000000's cursor: it waits for the first's lock.
        const waiting = onConnection(t.deps.db, async (conn) => {
          await pg(conn).query('BEGIN', []);
          try {
            const created = await create(conn as Tx, 3, '10');
            await pg(conn).query('COMMIT', []);
            return created;
          } catch (error) {
            await pg(conn).query('ROLLBACK', []);
            throw error;
          }
        });
        await waitUntilWaitingForLock(t);
        await pg(first).query('COMMIT', []);
        return waiting;
      });
      assert.equal(second.invoice.payableAmount, 10_000_003n);
    } finally {
      await t.close();
    }
  },
);

/** Until a backend of this database waits for a lock (the second transaction's claim). */
async function waitUntilWaitingForLock(t: TestApp): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const { rows } = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(t.deps.db);
    if (rows[0]!.n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the second claim never waited for the first transaction');
}

/**
 * On PostgreSQL a batch's units run at once on one connection (GroupCommit.runPgWhole): a unit's
 * probe of used amounts may run before another unit's reservation is written. Where the cursor
 * must cross amounts another price took, every unit of the batch crosses the same run; the amounts
 * the batch already chose are skipped (allocation.repo.ts, chosenAlongside), so the batch commits
 * as it ran, with no amount twice and no second run. On SQLite the units run one after another.
 */
test('units of one batch crossing amounts of another price never choose the same amount, and the batch runs once', async () => {
  const t = await startTestApp({ config: { rate_limits: { invoices_per_merchant: 0 } } });
  try {
    const { merchant } = await signedInMerchant(t);
    const { wallet } = await registerWallet(t.deps.db, t.config.network.id, merchant.id, 'Main', 'TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre', t.clock.now());
    const creator = new InvoiceCreator(t.deps);
    const create = (i: number, amount: string) =>
      creator.create({
        merchantId: merchant.id,
        idempotencyKey: `k-${i}`,
        body: { merchant_order_id: `o-${i}`, amount, wallet_id: wallet.id, expires_in_minutes: 20 },
      });
    // 10.000001 takes 10.000002 to 10.000006.
    for (let i = 0; i < 5; i++) assert.equal((await create(i, '10.000001')).invoice.payableAmount, 10_000_002n + BigInt(i));
    const batches = creator.committer.stats.batches;
    const redone = creator.committer.stats.redone;
    const created = await Promise.all(Array.from({ length: 16 }, (_, i) => create(100 + i, '10')));
    assert.equal(creator.committer.stats.batches, batches + 1, 'the 16 creations were one batch');
    assert.equal(creator.committer.stats.redone, redone, 'the batch ran once');
    const amounts = created.map((c) => c.invoice.payableAmount).sort((a, b) => (a < b ? -1 : 1));
    const expected = [10_000_001n, ...Array.from({ length: 15 }, (_, i) => 10_000_007n + BigInt(i))];
    assert.deepEqual(amounts, expected);
    // pg warns once per process: any batch of this file's tests would have set it off.
    assert.deepEqual(
      warnings.filter((w) => /already executing a query/.test(w)),
      [],
      'queries of one connection are sent one at a time',
    );
  } finally {
    await t.close();
  }
});
