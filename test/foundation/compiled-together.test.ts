import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp } from '../helpers/app.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { compileQuery, readTogether, runTogether, type Param } from '../../src/db/compiled.js';
import { onConnection, writeTransaction } from '../../src/db/database.js';
import { createInvoiceOrThrow } from '../../src/invoices/invoices.service.js';
import { idempotencyKeyLookup, orderIdLookup } from '../../src/invoices/invoices.repo.js';
import { merchantWalletLookup, registerWallet } from '../../src/wallets/wallets.repo.js';

const tokensQuery = compileQuery((db, p: Param<{ from: number }>) =>
  db.selectFrom('captcha_tokens').selectAll().where('used_at', '>=', p('from')).orderBy('used_at', 'desc').limit(3),
);
const insertTokenQuery = compileQuery((db, p: Param<{ hash: string; at: number }>) =>
  db.insertInto('captcha_tokens').values({ token_hash: p('hash'), used_at: p('at') }),
);

test('readTogether gives each read exactly what it gives alone (the same rows, the same JS types), on either engine', async () => {
  const t = await startTestApp();
  try {
    const { merchant } = await signedInMerchant(t);
    const { wallet } = await registerWallet(t.deps.db, t.config.network.id, merchant.id, 'Main', 'TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre', t.clock.now());
    // A description and metadata beside the NULL columns (no fiat price, no payment yet).
    await writeTransaction(t.deps.db, async (_trx, tx) =>
      createInvoiceOrThrow(tx, t.deps, {
        merchantId: merchant.id,
        idempotencyKey: 'k1',
        body: { merchant_order_id: 'o1', amount: '12.5', wallet_id: wallet.id, expires_in_minutes: 20, description: 'tea', metadata: { n: 1 } },
      }),
    );
    for (let i = 0; i < 5; i++) await onConnection(t.deps.db, (conn) => insertTokenQuery.run(conn, { hash: `h${i}`, at: 100 + i }));
    await onConnection(t.deps.db, async (conn) => {
      const lookups = {
        invoice: idempotencyKeyLookup(merchant.id, 'k1'),
        missing: idempotencyKeyLookup(merchant.id, 'k2'),
        holder: orderIdLookup(merchant.id, 'o1'),
        wallet: merchantWalletLookup(merchant.id, wallet.id),
        tokens: tokensQuery.lookup({ from: 101 }, (rows) => rows),
      };
      const together = readTogether(conn, lookups);
      // Asked in another order than given.
      const got = { tokens: await together.tokens(), wallet: await together.wallet(), invoice: await together.invoice(), holder: await together.holder() };
      const missing = await together.missing();
      assert.equal(missing, undefined);
      assert.equal(got.invoice?.merchant_order_id, 'o1');
      assert.equal(typeof got.invoice?.payable_amount, 'number');
      assert.deepEqual(got.invoice, await lookups.invoice.on(conn));
      assert.equal(got.holder, got.invoice?.id);
      assert.deepEqual(got.wallet, await lookups.wallet.on(conn));
      // Rows in the read's own order, with numbers as numbers.
      assert.deepEqual(got.tokens, [
        { token_hash: 'h4', used_at: 104 },
        { token_hash: 'h3', used_at: 103 },
        { token_hash: 'h2', used_at: 102 },
      ]);
      assert.deepEqual(got.tokens, await lookups.tokens.on(conn));
    });
  } finally {
    await t.close();
  }
});

test('runTogether: the writes land with the read, and a failing one fails the call', async () => {
  const t = await startTestApp();
  try {
    const rows = await writeTransaction(t.deps.db, async (_trx, tx) => {
      await insertTokenQuery.run(tx, { hash: 'before', at: 1 });
      // The read does not see the writes sent with it (one snapshot on PostgreSQL): it is written to not depend on them.
      return runTogether(tx, [insertTokenQuery.with({ hash: 'w1', at: 2 }), insertTokenQuery.with({ hash: 'w2', at: 3 })], tokensQuery.with({ from: 0 }));
    });
    assert.ok(rows.some((r) => r.token_hash === 'before'));
    const stored = await t.deps.db.selectFrom('captcha_tokens').select('token_hash').orderBy('token_hash').execute();
    assert.deepEqual(
      stored.map((r) => r.token_hash),
      ['before', 'w1', 'w2'],
    );
    await assert.rejects(
      writeTransaction(t.deps.db, async (_trx, tx) =>
        runTogether(tx, [insertTokenQuery.with({ hash: 'w3', at: 4 }), insertTokenQuery.with({ hash: 'w1', at: 5 })], tokensQuery.with({ from: 0 })),
      ),
      /UNIQUE|duplicate key/,
    );
    assert.equal((await t.deps.db.selectFrom('captcha_tokens').select('token_hash').where('token_hash', '=', 'w3').execute()).length, 0);
  } finally {
    await t.close();
  }
});
