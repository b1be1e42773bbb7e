import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { ADDRESSES, createInvoice, shop } from '../helpers/shop.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

test('GET /checkout/{token}: public, the payer-safe view with merchant_name and no merchant-only field', async () => {
  const s = await shop(t, ADDRESSES[0], 'Corner Café');
  const created = await createInvoice(s.client, { amount: '19.99', wallet_id: s.walletId, description: 'Coffee beans', metadata: { customer_ref: 'c-77' } });
  const inv = created.body.invoice;
  const res = await t.client({ origin: null }).get(`/checkout/${inv.checkout_token}`);
  assert.equal(res.status, 200);
  const view = res.body.invoice;
  assert.equal(view.merchant_name, 'Corner Café');
  for (const field of [
    'id',
    'base_amount',
    'adjustment',
    'payable_amount',
    'wallet_address',
    'status',
    'created_at',
    'expires_at',
    'reserved_until',
    'description',
    'tx_hash',
    'mode',
    'network',
    'token',
    'token_contract',
    'amount_reuse_review',
  ]) {
    assert.deepEqual(view[field], inv[field], field);
  }
  for (const hidden of ['checkout_url', 'checkout_token', 'merchant_order_id', 'wallet_id', 'metadata', 'confirmed_at']) {
    assert.ok(!(hidden in view), `${hidden} must not be shown to the payer`);
  }
  assert.ok(!res.text.includes('c-77'));
  assert.equal(res.headers.get('cache-control'), 'no-store');
  assert.ok(!t.logText().includes(inv.checkout_token), 'the capability token never reaches a log');
});

test('an unknown token is 404', async () => {
  const res = await t.client().get('/checkout/not-a-real-token');
  assert.equal(res.status, 404);
  assert.equal(res.body.error.code, 'not_found');
});
