import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expirableQuery, watchedAddressesQuery } from '../../src/chain/chain.repo.js';
import { runOnce as optimize } from '../../src/db/maintenance.worker.js';
import { walletViewsQuery } from '../../src/pages/console.repo.js';
import { startTestApp } from '../helpers/app.js';
import { insertInvoice } from '../helpers/chain-fixtures.js';
import { randomAddress } from '../helpers/tron-samples.js';

const plan = (t: Awaited<ReturnType<typeof startTestApp>>, q: { sql: string; parameters: readonly unknown[] }) =>
  (t.deps.sqlite.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...q.parameters) as Array<{ detail: string }>).map((r) => r.detail).join('; ');

test('the watcher reads open invoices through the small partial index, not every invoice of the address', async () => {
  const t = await startTestApp();
  try {
    const address = randomAddress();
    const first = await insertInvoice(t, { address, amount: 5_000_001n, status: 'pending' });
    // Many closed invoices on the same address, as after months of trade.
    const copy = t.deps.sqlite.prepare(
      `INSERT INTO invoices (id, merchant_id, wallet_id, network, token, token_contract, wallet_address, merchant_order_id, idempotency_key,
         request_fingerprint, base_amount, adjustment, payable_amount, status, checkout_token, created_at, expires_at, reserved_until)
       SELECT 'inv_old' || @i, merchant_id, wallet_id, network, token, token_contract, wallet_address, 'old-' || @i, 'old-' || @i,
         request_fingerprint, base_amount, @i, base_amount + @i, 'expired', 'tok-' || @i, created_at, expires_at, reserved_until
       FROM invoices WHERE id = @id`,
    );
    t.deps.sqlite.transaction(() => {
      for (let i = 2; i <= 3001; i++) copy.run({ i, id: first.id });
    })();
    const now = t.clock.now();
    // Literal statuses let the partial index serve the expiry scan even without statistics.
    assert.match(plan(t, expirableQuery(t.deps.db, address, now, now).compile()), /invoices_open_idx/);
    // With the statistics the maintenance worker keeps, the watched-address list uses it too.
    await optimize(t.deps);
    assert.match(plan(t, watchedAddressesQuery(t.deps.db).compile()), /invoices_open_idx/);
    assert.ok(t.deps.sqlite.prepare(`SELECT count(*) AS n FROM sqlite_stat1 WHERE tbl = 'invoices'`).get(), 'invoices were analyzed');
    // The console's wallet list counts open invoices through the same index, per wallet.
    await insertInvoice(t, { address, amount: 5_000_002n, status: 'review', merchantId: first.merchantId });
    await insertInvoice(t, { address, amount: 5_000_003n, status: 'pending' }); // another merchant's wallet on that address
    const wallets = walletViewsQuery(t.deps.db, first.merchantId);
    assert.match(plan(t, wallets.compile()), /invoices_open_idx/);
    assert.deepEqual(
      (await wallets.execute()).map((w) => [w.address, Number(w.open)]),
      [[address, 2]],
      "the pending and the review invoice; not the 3 000 expired ones, nor another merchant's",
    );
  } finally {
    await t.close();
  }
});
