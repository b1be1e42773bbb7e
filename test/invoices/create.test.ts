import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { USDT_CONTRACT } from '../helpers/tron-samples.js';
import { writeTransaction } from '../../src/db/database.js';
import { createInvoiceOrThrow } from '../../src/invoices/invoices.service.js';
import { ADDRESSES, createInvoice, micro, newKey, shop } from '../helpers/shop.js';

let t: TestApp;
before(async () => {
  // The concurrency test below creates 75 invoices per merchant at one instant; the per-merchant
  // creation limit has its own tests (squatting.test.ts).
  t = await startTestApp({ config: { server: { public_url: 'https://pay.example.com' }, rate_limits: { invoices_per_merchant: 0 } } });
});
after(() => t.close());

test('POST /invoices: 201 with every Invoice field, an invoice.created event and a 90-day reservation', async () => {
  const s = await shop(t, ADDRESSES[0]);
  const now = t.clock.now();
  const res = await createInvoice(s.client, {
    merchant_order_id: 'A-1',
    amount: '25',
    wallet_id: s.walletId,
    description: 'Two mugs',
    metadata: { cart: [1, 2], note: 'x' },
    expires_in_minutes: 30,
  });
  assert.equal(res.status, 201, res.text);
  assert.equal(res.body.idempotent_replay, false);
  const inv = res.body.invoice;
  assert.match(inv.id, /^inv_/);
  assert.equal(inv.base_amount, '25.000000');
  assert.equal(inv.adjustment, '0.000001');
  assert.equal(inv.payable_amount, '25.000001');
  assert.equal(inv.wallet_address, ADDRESSES[0]);
  assert.equal(inv.wallet_id, s.walletId);
  assert.equal(inv.status, 'pending');
  assert.equal(inv.mode, 'live');
  assert.equal(inv.network, 'tron-mainnet');
  assert.equal(inv.token, 'USDT');
  assert.equal(inv.token_contract, USDT_CONTRACT);
  assert.equal(inv.amount_reuse_review, false);
  assert.equal(inv.tx_hash, null);
  assert.equal(inv.merchant_order_id, 'A-1');
  assert.equal(inv.description, 'Two mugs');
  assert.deepEqual(inv.metadata, { cart: [1, 2], note: 'x' });
  assert.equal(inv.created_at, new Date(now).toISOString());
  assert.equal(inv.expires_at, new Date(now + 30 * 60_000).toISOString());
  assert.equal(inv.reserved_until, new Date(now + 90 * 86_400_000).toISOString());
  assert.ok(inv.checkout_token.length >= 22);
  assert.equal(inv.checkout_url, `https://pay.example.com/pay/${inv.checkout_token}`);
  for (const hidden of ['idempotency_key', 'request_fingerprint', 'merchant_id', 'idempotencyKey']) assert.ok(!(hidden in inv), hidden);

  const events = await t.deps.db.selectFrom('events').selectAll().where('invoice_id', '=', inv.id).execute();
  assert.deepEqual(
    events.map((e) => e.type),
    ['invoice.created'],
  );
  assert.deepEqual(JSON.parse(events[0]!.data).invoice, inv);
  const reservation = await t.deps.db.selectFrom('amount_reservations').selectAll().where('invoice_id', '=', inv.id).executeTakeFirstOrThrow();
  assert.equal(reservation.amount, 25_000_001);
  assert.equal(reservation.reserved_until, now + 90 * 86_400_000);

  const logged = t.logs.find((l) => l.msg === 'invoice created' && l.invoice_id === inv.id);
  assert.equal(logged?.payable, '25.000001');
  assert.ok(!t.logText().includes(inv.checkout_token), 'the checkout capability never reaches a log');

  const got = await s.client.get(`/invoices/${inv.id}`);
  assert.equal(got.status, 200);
  assert.deepEqual(got.body.invoice, inv);
});

test('defaults: expires in 20 minutes, metadata {}, no description', async () => {
  const s = await shop(t, ADDRESSES[1]);
  const res = await createInvoice(s.client, { amount: '1.5', wallet_id: s.walletId });
  assert.equal(res.status, 201);
  assert.equal(Date.parse(res.body.invoice.expires_at) - Date.parse(res.body.invoice.created_at), 20 * 60_000);
  assert.deepEqual(res.body.invoice.metadata, {});
  assert.ok(!('description' in res.body.invoice));
  assert.equal(res.body.invoice.base_amount, '1.500000');
});

test('allocation: the smallest never-used final amount, across base prices and merchants sharing the address', async () => {
  const a = await shop(t, ADDRESSES[2]);
  const b = await shop(t, ADDRESSES[2]);
  const p1 = await createInvoice(a.client, { amount: '10', wallet_id: a.walletId });
  const p2 = await createInvoice(b.client, { amount: '10', wallet_id: b.walletId });
  assert.equal(p1.body.invoice.payable_amount, '10.000001');
  assert.equal(p2.body.invoice.payable_amount, '10.000002');
  // Base 10.000001: adjustment 1 gives 10.000002 (used by merchant b), so 2 gives 10.000003.
  const p3 = await createInvoice(a.client, { amount: '10.000001', wallet_id: a.walletId });
  assert.equal(p3.body.invoice.adjustment, '0.000002');
  assert.equal(p3.body.invoice.payable_amount, '10.000003');
  // Base 10 again: 10.000003 is now used, so the cursor skips it.
  const p4 = await createInvoice(b.client, { amount: '10', wallet_id: b.walletId });
  assert.equal(p4.body.invoice.payable_amount, '10.000004');
  // An expired invoice still holds its amount: expiry does not free it.
  t.clock.advance(2 * 86_400_000);
  const p5 = await createInvoice(a.client, { amount: '10', wallet_id: a.walletId });
  assert.equal(p5.body.invoice.payable_amount, '10.000005');
  // Another address starts from the smallest adjustment again.
  const c = await shop(t, ADDRESSES[3]);
  const p6 = await createInvoice(c.client, { amount: '10', wallet_id: c.walletId });
  assert.equal(p6.body.invoice.payable_amount, '10.000001');
});

test('hundreds of simultaneous creations for one price on one shared address: all payable amounts distinct', async () => {
  const shops = await Promise.all([0, 1, 2, 3].map(() => shop(t, 'TJmmqjb1DK9TTZbQXzRQ2AuA94z4gKAPFh')));
  const keys = await Promise.all(shops.map((s) => newKey(s.client)));
  const api = t.client({ origin: null });
  const N = 300;
  const results = await Promise.all(
    Array.from({ length: N }, (_, i) =>
      createInvoice(api, { amount: '99.99', wallet_id: shops[i % 4]!.walletId, merchant_order_id: `conc-${i}` }, { bearer: keys[i % 4]!.secret }),
    ),
  );
  for (const r of results) assert.equal(r.status, 201, r.text);
  const payables = results.map((r) => micro(r.body.invoice.payable_amount));
  assert.equal(new Set(payables).size, N);
  for (const r of results) assert.equal(micro(r.body.invoice.base_amount) + micro(r.body.invoice.adjustment), micro(r.body.invoice.payable_amount));
  // The 300 smallest adjustments of that address (it had none at this price before).
  const adjustments = results.map((r) => micro(r.body.invoice.adjustment)).sort((x, y) => (x < y ? -1 : 1));
  assert.deepEqual(
    adjustments,
    Array.from({ length: N }, (_, i) => BigInt(i + 1)),
  );
  const rows = await t.deps.db.selectFrom('amount_reservations').select('amount').where('address', '=', 'TJmmqjb1DK9TTZbQXzRQ2AuA94z4gKAPFh').execute();
  assert.ok(rows.length >= N);
});

test('API key on POST /invoices needs invoices:write', async () => {
  const s = await shop(t, ADDRESSES[0]);
  const readOnly = await newKey(s.client, { name: 'ro', scopes: ['invoices:read'] });
  const writer = await newKey(s.client, { name: 'w', scopes: ['invoices:write'] });
  const api = t.client({ origin: null });
  const denied = await createInvoice(api, { amount: '3', wallet_id: s.walletId }, { bearer: readOnly.secret });
  assert.equal(denied.status, 403);
  assert.equal(denied.body.error.code, 'insufficient_scope');
  const ok = await createInvoice(api, { amount: '3', wallet_id: s.walletId }, { bearer: writer.secret });
  assert.equal(ok.status, 201);
  const cannotRead = await api.get(`/invoices/${ok.body.invoice.id}`, { bearer: writer.secret });
  assert.equal(cannotRead.status, 403);
  const canRead = await api.get(`/invoices/${ok.body.invoice.id}`, { bearer: readOnly.secret });
  assert.equal(canRead.status, 200);
});

test("cross-tenant: another merchant's invoice and wallet are 404", async () => {
  const a = await shop(t, ADDRESSES[1]);
  const b = await signedInMerchant(t);
  const inv = await createInvoice(a.client, { amount: '4', wallet_id: a.walletId });
  const peek = await b.client.get(`/invoices/${inv.body.invoice.id}`);
  assert.equal(peek.status, 404);
  assert.equal(peek.body.error.code, 'not_found');
  const useWallet = await createInvoice(b.client, { amount: '4', wallet_id: a.walletId });
  assert.equal(useWallet.status, 404);
  const list = await b.client.get('/invoices');
  assert.deepEqual(list.body.invoices, []);
  const unknown = await a.client.get('/invoices/inv_nope');
  assert.equal(unknown.status, 404);
});

test('GET /invoices lists the newest 500, newest first', async () => {
  const s = await shop(t, ADDRESSES[3]);
  const ids: string[] = [];
  // Seeded through the real creation code (the HTTP path is covered above), 100 per second.
  for (let batch = 0; batch < 6; batch++) {
    await writeTransaction(t.deps.db, async (_trx, tx) => {
      for (let i = 0; i < 100; i++) {
        const n = `list-${batch}-${i}`;
        const body = { merchant_order_id: n, amount: '7', wallet_id: s.walletId, expires_in_minutes: 20 };
        ids.push((await createInvoiceOrThrow(tx, t.deps, { merchantId: s.merchant.id, idempotencyKey: n, body })).invoice.id);
      }
    });
    t.clock.advance(1000);
  }
  // SQLite calls are synchronous: seeding never yielded to I/O, so let the client see any pooled
  // keep-alive connection the server closed meanwhile before reusing it.
  await new Promise((resolve) => setTimeout(resolve, 20));
  const list = await s.client.get('/invoices');
  assert.equal(list.status, 200);
  assert.equal(list.body.invoices.length, 500);
  const times = list.body.invoices.map((i: any) => Date.parse(i.created_at));
  for (let i = 1; i < times.length; i++) assert.ok(times[i - 1] >= times[i]);
  const firstBatch = new Set(ids.slice(0, 100));
  assert.ok(
    list.body.invoices.every((i: any) => !firstBatch.has(i.id)),
    'the oldest 100 are not listed',
  );
});
