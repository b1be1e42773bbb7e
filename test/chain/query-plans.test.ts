import { test } from 'node:test';
import assert from 'node:assert/strict';
import { listMerchantLatePayments, listUnmatchedTransfers, unmatchedTransfersQuery } from '../../src/chain/chain.repo.js';
import { merchantLatePaymentsQuery } from '../../src/invoices/invoice-payments.js';
import { expirableQuery } from '../../src/invoices/invoice-expiry.js';
import { runOnce as optimize } from '../../src/db/maintenance.worker.js';
import { walletViewsQuery } from '../../src/dashboard/dashboard.repo.js';
import { startTestApp } from '../helpers/app.js';
import { insertInvoice } from '../helpers/chain-fixtures.js';
import { randomAddress } from '../helpers/tron-samples.js';
import { sqliteOnly } from '../helpers/database.js';

const plan = (t: Awaited<ReturnType<typeof startTestApp>>, q: { sql: string; parameters: readonly unknown[] }) =>
  (t.deps.sqlite.prepare(`EXPLAIN QUERY PLAN ${q.sql}`).all(...q.parameters) as Array<{ detail: string }>).map((r) => r.detail).join('; ');

test('the watcher reads open invoices through the small partial index, not every invoice of the address', { skip: sqliteOnly }, async () => {
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
    // Literal statuses let a partial index of open invoices serve the expiry scan even without statistics.
    assert.match(plan(t, expirableQuery(t.deps.db, now, now).compile()), /invoices_open_(expiry_)?idx/);
    await optimize(t.deps);
    assert.match(plan(t, expirableQuery(t.deps.db, now, now).compile()), /invoices_open_(expiry_)?idx/);
    assert.ok(t.deps.sqlite.prepare(`SELECT count(*) AS n FROM sqlite_stat1 WHERE tbl = 'invoices'`).get(), 'invoices were analyzed');
    // The console's wallet list counts open invoices through the same index, per wallet.
    await insertInvoice(t, { address, amount: 5_000_002n, status: 'review', merchantId: first.merchantId });
    await insertInvoice(t, { address, amount: 5_000_003n, status: 'pending' }); // another merchant's wallet on that address
    const wallets = walletViewsQuery(t.deps.db, first.merchantId, t.config.network.usdtContract);
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

test("the Dashboard's late and unmatched transfers come through their partial indexes, newest first, the merchant's only", { skip: sqliteOnly }, async () => {
  const t = await startTestApp();
  try {
    const address = randomAddress();
    const mine = await insertInvoice(t, { address, amount: 7_000_001n, status: 'confirmed' });
    const theirs = await insertInvoice(t, { address: randomAddress(), amount: 7_000_002n, status: 'confirmed' });
    const add = t.deps.sqlite.prepare(
      `INSERT INTO chain_transfers (id, network, token_contract, tx_hash, log_index, from_address, to_address, amount, kind, invoice_id, block_number, block_timestamp, recorded_at)
       VALUES (@id, @network, @contract, @hash, 0, @from, @to, 7000001, @kind, @invoice, 1, @ts, @ts)`,
    );
    let n = 0;
    const transfer = (kind: string, invoice: typeof mine | null, to: string, ts: number) => {
      n += 1;
      add.run({
        id: `trf_${n}`,
        network: mine.network,
        contract: mine.tokenContract,
        hash: n.toString(16).padStart(64, '0'),
        from: randomAddress(),
        to,
        kind,
        invoice: invoice?.id ?? null,
        ts,
      });
    };
    // Thousands of ordinary confirmations (as months of trade leave), a few late and unmatched ones.
    t.deps.sqlite.transaction(() => {
      for (let i = 0; i < 3000; i++) transfer('confirmed', i % 2 ? mine : theirs, address, 1_000 + i);
      transfer('late', mine, address, 5_000);
      transfer('late', theirs, theirs.walletAddress, 6_000);
      transfer('late', mine, address, 7_000);
      transfer('unmatched', null, address, 8_000);
      transfer('unmatched', null, theirs.walletAddress, 9_000);
    })();
    await optimize(t.deps);
    assert.match(plan(t, merchantLatePaymentsQuery(t.deps.db, mine.merchantId).compile()), /^SCAN t USING INDEX chain_transfers_late_idx/);
    assert.match(plan(t, unmatchedTransfersQuery(t.deps.db, t.config.network, mine.merchantId).compile()), /chain_transfers_unmatched_idx/);
    assert.deepEqual(
      (await listMerchantLatePayments(t.deps.db, mine.merchantId)).map((x) => x.blockTimestamp),
      [7_000, 5_000],
    );
    assert.deepEqual(
      (await listUnmatchedTransfers(t.deps.db, t.config.network, mine.merchantId)).map((x) => x.blockTimestamp),
      [8_000],
    );
  } finally {
    await t.close();
  }
});
