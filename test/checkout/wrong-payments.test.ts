import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MINUTE, SECOND } from '../../src/lib/clock.js';
import { pass, startChainHarness, transfersOf } from '../helpers/chain-fixtures.js';
import { ADDRESSES, createInvoice, shop } from '../helpers/shop.js';

test("the payer's page tells the truth: received X of Y after a partial payment, and what arrived once the shop accepted a wrong amount", async () => {
  const h = await startChainHarness();
  try {
    const { t, tg } = h;
    const a = await shop(t, ADDRESSES[0], 'Shop A');
    assert.equal((await a.client.patch('/me', { underpayment_tolerance: '1.00' })).status, 200);
    const partial = (await createInvoice(a.client, { amount: '12.5', wallet_id: a.walletId, expires_in_minutes: 60 })).body.invoice;
    const wrong = (await createInvoice(a.client, { amount: '30', wallet_id: a.walletId, expires_in_minutes: 60 })).body.invoice;
    assert.equal(partial.payable_amount, '12.500001');
    const payer = t.client({ origin: null });
    // The page as a person reads it: amounts are isolated runs (<bdi>), so the markup is left out of the sentences.
    const html = async (token: string, lang = 'en') =>
      (await payer.get(`${t.baseUrl}/pay/${token}?lang=${lang}`, { headers: { accept: 'text/html' } })).text.replace(/<\/?bdi[^>]*>/g, '');
    assert.doesNotMatch(await html(partial.checkout_token), /Received/);

    tg.pay({ to: ADDRESSES[0], amount: 11_500_001n, blockTimestamp: t.clock.now() + 10 * SECOND });
    const small = tg.pay({ to: ADDRESSES[0], amount: 4_500_000n, blockTimestamp: t.clock.now() + 11 * SECOND });
    await pass(h, 2 * MINUTE);
    const page = await html(partial.checkout_token);
    assert.match(
      page,
      /Received so far[\s\S]*11\.500\u202F001[\s\S]*of 12\.500001 USDT: 1\.000000 USDT short[\s\S]*Do not pay again\. Shop A sees this payment/,
    );
    assert.doesNotMatch(page, /Send exactly/, 'the full amount is no headline once part of it arrived');
    assert.match(await html(partial.checkout_token, 'fa'), /11\.500001/);
    const api = await payer.get(`/checkout/${partial.checkout_token}`);
    assert.equal(api.body.invoice.amount_received, '11.500001');
    assert.equal(api.body.invoice.status, 'pending');

    // The owner accepts 4.5 USDT for the 30 USDT invoice: the payer is told what arrived, not the invoice amount.
    const row = (await transfersOf(t)).find((r) => r.tx_hash === small.txId)!;
    assert.equal((await a.client.post(`/invoices/${wrong.id}/resolve`, { tx_hash: small.txId, log_index: row.log_index })).status, 200);
    const accepted = await html(wrong.checkout_token);
    assert.match(accepted, /Payment accepted/);
    assert.match(accepted, /Shop A received 4\.500000 USDT for this invoice of 30\.000001 USDT and accepted it as payment/);
    assert.doesNotMatch(accepted, /Your payment of 30\.000001 USDT is confirmed/);
    const view = (await payer.get(`/checkout/${wrong.checkout_token}`)).body.invoice;
    assert.equal(view.resolution, 'manual');
    assert.equal(view.amount_received, '4.500000');
  } finally {
    await h.close();
  }
});
