import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { insertEvent } from '../../src/events/events.repo.js';
import { NETWORK as TRON_NETWORK, USDT_CONTRACT } from '../../src/lib/tron.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signedInMerchant } from '../helpers/fixtures.js';

let t: TestApp;
before(async () => {
  t = await startTestApp({ config: { support: { staff_emails: ['Staff@Shop.Example'] } } });
});
after(() => t.close());

let seq = 0;
/** Invoice rows as the invoices feature stores them (that feature is built in parallel). */
async function addInvoice(merchantId: string, walletId: string, status: 'pending' | 'confirmed' | 'expired' | 'review', base: number, adjustment: number) {
  seq += 1;
  const now = t.clock.now();
  await t.deps.db
    .insertInto('invoices')
    .values({
      id: `inv_test${seq}`,
      merchant_id: merchantId,
      wallet_id: walletId,
      network: TRON_NETWORK,
      token: 'USDT',
      token_contract: USDT_CONTRACT,
      wallet_address: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7',
      merchant_order_id: `order-${seq}`,
      idempotency_key: `idem-${seq}`,
      request_fingerprint: 'f',
      base_amount: base,
      adjustment,
      payable_amount: base + adjustment,
      status,
      checkout_token: `chk-${seq}`,
      created_at: now,
      expires_at: now + 20 * 60_000,
      reserved_until: now + 90 * 86_400_000,
    })
    .execute();
}

test('GET /me: the full Dashboard shape for a new merchant', async () => {
  const { merchant, client } = await signedInMerchant(t, { name: 'Corner Shop' });
  const res = await client.get('/me');
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, {
    merchant: { id: merchant.id, name: 'Corner Shop', email: merchant.email, mode: 'live', support_staff: false },
    wallets: [],
    invoices: [],
    events: [],
    api_keys: [],
    webhooks: [],
    deliveries: [],
    late_payments: [],
    unmatched_transfers: [],
    stats: {
      invoice_counts: { total: 0, pending: 0, confirmed: 0, expired: 0, review: 0 },
      confirmed_totals: { base_amount: '0.000000', adjustment: '0.000000', payable_amount: '0.000000' },
    },
  });
  assert.equal(res.headers.get('cache-control'), 'no-store');
});

test('stats count invoices by status and sum confirmed amounts exactly; events are the merchant\'s own, newest first', async () => {
  const { merchant, client } = await signedInMerchant(t);
  const other = await signedInMerchant(t);
  for (const m of [merchant, other.merchant]) {
    await t.deps.db.insertInto('wallets').values({ id: `wal_${m.id}`, merchant_id: m.id, label: 'Main', address: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7', network: TRON_NETWORK, created_at: t.clock.now() }).execute();
  }
  const wallet = `wal_${merchant.id}`;
  await addInvoice(merchant.id, wallet, 'confirmed', 100_000_000, 1);
  // Ten invoices at the 1 000 000 000 USDT maximum: the sum passes 2^53 micro-units.
  for (let i = 0; i < 10; i++) await addInvoice(merchant.id, wallet, 'confirmed', 1_000_000_000_000_000, 1);
  await addInvoice(merchant.id, wallet, 'pending', 5_000_000, 2);
  await addInvoice(merchant.id, wallet, 'expired', 7_000_000, 3);
  await addInvoice(merchant.id, wallet, 'review', 8_000_000, 4);
  await addInvoice(other.merchant.id, `wal_${other.merchant.id}`, 'confirmed', 1_000_000, 5);
  insertEvent(t.deps.sqlite, { merchantId: merchant.id, type: 'invoice.created', invoiceId: 'inv_test1', data: { n: 1 } }, t.clock.now());
  t.clock.advance(1000);
  insertEvent(t.deps.sqlite, { merchantId: merchant.id, type: 'invoice.confirmed', invoiceId: 'inv_test1', data: { n: 2 } }, t.clock.now());
  insertEvent(t.deps.sqlite, { merchantId: other.merchant.id, type: 'invoice.created', data: { n: 3 } }, t.clock.now());

  const res = await client.get('/me');
  assert.deepEqual(res.body.stats, {
    invoice_counts: { total: 14, pending: 1, confirmed: 11, expired: 1, review: 1 },
    confirmed_totals: { base_amount: '10000000100.000000', adjustment: '0.000011', payable_amount: '10000000100.000011' },
  });
  assert.deepEqual(res.body.events.map((e: { data: { n: number } }) => e.data.n), [2, 1]);
  const event = res.body.events[0];
  assert.deepEqual(Object.keys(event).sort(), ['created_at', 'data', 'id', 'mode', 'type']);
  assert.equal(event.type, 'invoice.confirmed');
  assert.equal(event.mode, 'live');
  assert.match(event.id, /^evt_/);
});

test('support_staff comes from support.staff_emails, case-insensitively', async () => {
  const { client } = await signedInMerchant(t, { email: 'staff@shop.example' });
  assert.equal((await client.get('/me')).body.merchant.support_staff, true);
});

test('PATCH /me changes the name and answers the Dashboard; 1 to 100 characters, nothing else accepted', async () => {
  const { client } = await signedInMerchant(t);
  const res = await client.patch('/me', { name: '  Bazaar  ' });
  assert.equal(res.status, 200);
  assert.equal(res.body.merchant.name, 'Bazaar');
  assert.ok(Array.isArray(res.body.wallets) && res.body.stats.invoice_counts.total === 0);
  assert.equal((await client.get('/me')).body.merchant.name, 'Bazaar');
  for (const body of [{ name: '' }, { name: '   ' }, { name: 'n'.repeat(101) }, { name: null }, {}, { name: 'ok', email: 'x@y.z' }]) {
    const bad = await client.patch('/me', body);
    assert.equal(bad.status, 400, JSON.stringify(body));
    assert.equal(bad.body.error.code, 'validation_error');
  }
  assert.equal((await client.patch('/me', { name: 'n'.repeat(100) })).status, 200);
  assert.equal((await t.client().patch('/me', { name: 'x' })).status, 401);
});

test('a wrong method on /me is 405 with Allow, even without a session', async () => {
  const res = await t.client().delete('/me');
  assert.equal(res.status, 405);
  assert.equal(res.body.error.code, 'method_not_allowed');
  assert.match(res.headers.get('allow') ?? '', /GET.*PATCH/);
});

test('GET /me lists the merchant\'s wallets, invoices and API keys (never a secret), and nobody else\'s', async () => {
  const { client } = await signedInMerchant(t);
  const other = await signedInMerchant(t);
  const wallet = await client.post('/wallets', { label: 'Main', address: 'TXVj38D1XR3TPgSHTCZGC8wkLDAGqF1oqx' });
  assert.equal(wallet.status, 201);
  const key = await client.post('/api-keys', { name: 'shop' });
  assert.equal(key.status, 201);
  const invoice = await client.post('/invoices', { merchant_order_id: 'o-1', amount: '10', wallet_id: wallet.body.wallet.id }, { headers: { 'idempotency-key': 'k-1' } });
  assert.equal(invoice.status, 201);
  await other.client.post('/wallets', { label: 'Other', address: 'TV6MuMXfmLbBqPZvBHdwFsDnQeVfnmiuSi' });

  const res = await client.get('/me');
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.wallets.map((w: any) => w.id), [wallet.body.wallet.id]);
  assert.deepEqual(res.body.invoices.map((i: any) => i.id), [invoice.body.invoice.id]);
  assert.equal(res.body.invoices[0].payable_amount, invoice.body.invoice.payable_amount);
  assert.deepEqual(res.body.api_keys.map((k: any) => k.id), [key.body.api_key.id]);
  assert.ok(!res.text.includes(key.body.secret), 'the key secret is never listed');
  assert.deepEqual(res.body.events.map((e: any) => e.type), ['invoice.created']);
  assert.equal(res.body.stats.invoice_counts.pending, 1);
});
