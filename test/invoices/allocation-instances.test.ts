import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp } from '../helpers/app.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { openDatabase } from '../../src/db/database.js';
import { createDeps } from '../../src/deps.js';
import { InvoiceCreator } from '../../src/invoices/invoices.service.js';
import { createLogger } from '../../src/lib/log.js';
import { registerWallet } from '../../src/wallets/wallets.repo.js';

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
