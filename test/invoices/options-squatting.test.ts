/**
 * The pool share of a shared address counts the reservations of released options: creating
 * invoices whose option on the shared address is released (by a cancel, an expiry or another
 * option's payment) and creating again does not stretch one account past its share of the pool
 * (docs/security.md, "Sharing a receiving address"). Real server, migrated database.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestApp } from '../helpers/app.js';
import { ADDRESSES, createInvoice, shop } from '../helpers/shop.js';
import { EVM_ADDRESSES, multichainShop, startMultichainApp } from '../helpers/multichain.js';

let t: TestApp;
before(async () => {
  // A pool of 10 amounts per price; an account sharing an address holds at most half of it.
  ({ t } = await startMultichainApp({ invoices: { max_adjustment: '0.000010' } }));
});
after(() => t.close());

test('options released by a cancel still count toward the shared pool share: the sixth of ten is refused', async () => {
  const victim = await shop(t, ADDRESSES[2], 'Victim');
  // The squatter registers the victim's TRON address, and an EVM wallet of its own.
  const squatter = await multichainShop(t, ADDRESSES[2], EVM_ADDRESSES[0]);
  const outcomes: string[] = [];
  for (let i = 0; i < 8; i++) {
    const res = await createInvoice(squatter.client, {
      amount: '3',
      wallet_id: squatter.evmWalletId,
      // Option 0 on its own EVM address; option 1 on the shared TRON address, released by the cancel.
      options: [
        { network: 'bsc-mainnet', token: 'USDT' },
        { network: 'tron-mainnet', token: 'USDT' },
      ],
    });
    if (res.status !== 201) {
      outcomes.push(res.body.error.code);
      assert.match(res.body.error.message, /Another account also registered this address/);
      continue;
    }
    outcomes.push('created');
    const cancelled = await squatter.client.post(`/invoices/${res.body.invoice.id}/cancel`);
    assert.equal(cancelled.status, 200, cancelled.text);
    assert.equal(cancelled.body.invoice.options[1].status, 'released');
  }
  assert.deepEqual(outcomes, [...Array(5).fill('created'), ...Array(3).fill('amount_pool_exhausted')]);
  // The victim keeps the rest of the pool.
  const own = await createInvoice(victim.client, { amount: '3', wallet_id: victim.walletId });
  assert.equal(own.status, 201, own.text);
  assert.equal(own.body.invoice.amount_reuse_review, false);
});
