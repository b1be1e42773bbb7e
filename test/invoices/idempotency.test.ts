import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { ADDRESSES, newKey, shop, type Shop } from '../helpers/shop.js';

let t: TestApp;
let s: Shop;
before(async () => {
  t = await startTestApp();
  s = await shop(t, ADDRESSES[0]);
});
after(() => t.close());

const post = (body: unknown, key: string, raw?: string) =>
  s.client.post('/invoices', body, {
    headers: { 'idempotency-key': key },
    ...(raw ? { raw, headers: { 'idempotency-key': key, 'content-type': 'application/json' } } : {}),
  });

test('same key and same body: 200 replay of the same invoice, whatever the key order and white space', async () => {
  const body = { merchant_order_id: 'idem-1', amount: '12.5', wallet_id: s.walletId, metadata: { a: 1, b: { c: 2, d: 3 } } };
  const first = await post(body, 'key-1');
  assert.equal(first.status, 201);
  const raw = `{ "metadata": {"b": {"d": 3, "c": 2}, "a": 1},\n "wallet_id": "${s.walletId}", "amount": "12.5", "merchant_order_id": "idem-1" }`;
  const replay = await post(undefined, 'key-1', raw);
  assert.equal(replay.status, 200);
  assert.equal(replay.body.idempotent_replay, true);
  assert.deepEqual(replay.body.invoice, first.body.invoice);
  // The explicit default is the same request.
  const withDefault = await post({ ...body, expires_in_minutes: 20 }, 'key-1');
  assert.equal(withDefault.status, 200);
  const count = await t.deps.db
    .selectFrom('invoices')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('merchant_order_id', '=', 'idem-1')
    .executeTakeFirstOrThrow();
  assert.equal(Number(count.n), 1);
  const events = await t.deps.db.selectFrom('events').select('type').where('invoice_id', '=', first.body.invoice.id).execute();
  assert.equal(events.length, 1, 'a replay emits no event');
});

test('same key, other body: 409 idempotency_key_reused', async () => {
  const body = { merchant_order_id: 'idem-2', amount: '3', wallet_id: s.walletId };
  assert.equal((await post(body, 'key-2')).status, 201);
  for (const other of [
    { ...body, amount: '3.000001' },
    { ...body, description: 'x' },
    { ...body, merchant_order_id: 'idem-2b' },
    { ...body, metadata: {} },
  ]) {
    const res = await post(other, 'key-2');
    assert.equal(res.status, 409, JSON.stringify(other));
    assert.equal(res.body.error.code, 'idempotency_key_reused');
  }
});

test('new key with a used merchant_order_id: 409 duplicate_order_id', async () => {
  const body = { merchant_order_id: 'idem-3', amount: '3', wallet_id: s.walletId };
  assert.equal((await post(body, 'key-3')).status, 201);
  const res = await post(body, 'key-3-other');
  assert.equal(res.status, 409);
  assert.equal(res.body.error.code, 'duplicate_order_id');
});

test('keys and order ids are scoped to the merchant', async () => {
  const other = await shop(t, ADDRESSES[0]);
  const body = { merchant_order_id: 'shared-order', amount: '3', wallet_id: s.walletId };
  assert.equal((await post(body, 'shared-key')).status, 201);
  const res = await other.client.post('/invoices', { ...body, wallet_id: other.walletId }, { headers: { 'idempotency-key': 'shared-key' } });
  assert.equal(res.status, 201);
  assert.notEqual(res.body.invoice.payable_amount, undefined);
});

test('concurrent retries of one key make exactly one invoice; the others are 200 replays', async () => {
  const key = await newKey(s.client);
  const api = t.client({ origin: null });
  const body = { merchant_order_id: 'race-1', amount: '42', wallet_id: s.walletId };
  const results = await Promise.all(
    Array.from({ length: 50 }, () => api.post('/invoices', body, { bearer: key.secret, headers: { 'idempotency-key': 'race-key' } })),
  );
  const statuses = results.map((r) => r.status);
  assert.equal(statuses.filter((x) => x === 201).length, 1, String(statuses));
  assert.equal(statuses.filter((x) => x === 200).length, 49);
  assert.equal(new Set(results.map((r) => r.body.invoice.id)).size, 1);
  assert.ok(results.filter((r) => r.status === 200).every((r) => r.body.idempotent_replay === true));
  const reservations = await t.deps.db.selectFrom('amount_reservations').select('amount').where('invoice_id', '=', results[0]!.body.invoice.id).execute();
  assert.equal(reservations.length, 1);
});

test('concurrent different keys with one order id: one invoice, the rest 409 duplicate_order_id', async () => {
  const body = { merchant_order_id: 'race-2', amount: '43', wallet_id: s.walletId };
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => post(body, `race2-${i}`)));
  assert.equal(results.filter((r) => r.status === 201).length, 1);
  assert.ok(results.filter((r) => r.status !== 201).every((r) => r.status === 409 && r.body.error.code === 'duplicate_order_id'));
});

test('Idempotency-Key: required, 1 to 255 printable ASCII', async () => {
  const body = { merchant_order_id: 'hdr-1', amount: '1', wallet_id: s.walletId };
  const missing = await s.client.post('/invoices', body);
  assert.equal(missing.status, 400);
  assert.equal(missing.body.error.code, 'validation_error');
  const tooLong = await post(body, 'k'.repeat(256));
  assert.equal(tooLong.status, 400);
  const control = await post(body, 'bad\tkey');
  assert.equal(control.status, 400);
  const max = await post(body, 'k'.repeat(255));
  assert.equal(max.status, 201);
  const nothingCreated = await t.deps.db.selectFrom('invoices').select('id').where('merchant_order_id', '=', 'hdr-1').execute();
  assert.equal(nothingCreated.length, 1);
});
