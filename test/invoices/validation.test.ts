import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { ADDRESSES, createInvoice, shop, type Shop } from '../helpers/shop.js';

let t: TestApp;
let s: Shop;
before(async () => {
  t = await startTestApp();
  s = await shop(t, ADDRESSES[1]);
});
after(() => t.close());

async function expect400(body: Record<string, unknown>, label: string) {
  const res = await createInvoice(s.client, { wallet_id: s.walletId, amount: '1', ...body });
  assert.equal(res.status, 400, `${label}: ${res.status} ${res.text}`);
  assert.equal(res.body.error.code, 'validation_error', label);
}

async function expect201(body: Record<string, unknown>, label: string) {
  const res = await createInvoice(s.client, { wallet_id: s.walletId, amount: '1', ...body });
  assert.equal(res.status, 201, `${label}: ${res.text}`);
  return res.body.invoice;
}

test('amount: pattern, minimum 0.000001 and maximum 1000000000 at and beyond the edge', async () => {
  assert.equal((await expect201({ amount: '0.000001' }, 'min')).base_amount, '0.000001');
  assert.equal((await expect201({ amount: '1000000000' }, 'max')).base_amount, '1000000000.000000');
  assert.equal((await expect201({ amount: '1000000000.000000' }, 'max with decimals')).payable_amount, '1000000000.000002');
  assert.equal((await expect201({ amount: '0.1' }, 'short fraction')).base_amount, '0.100000');
  for (const amount of [
    '0',
    '0.000000',
    '0.0000001',
    '1000000000.000001',
    '9999999999.999999',
    '01',
    '1.',
    '.5',
    '-1',
    '1e3',
    ' 1',
    '1,5',
    '',
    '10000000000',
  ]) {
    await expect400({ amount }, `amount ${JSON.stringify(amount)}`);
  }
  await expect400({ amount: 1 }, 'number amount');
  await expect400({ amount: null }, 'null amount');
});

test('merchant_order_id 1..120, wallet_id 1..100, description 1..1000', async () => {
  await expect201({ merchant_order_id: 'o'.repeat(120) }, 'order 120');
  await expect400({ merchant_order_id: 'o'.repeat(121) }, 'order 121');
  await expect400({ merchant_order_id: '' }, 'order empty');
  await expect400({ wallet_id: '' }, 'wallet empty');
  await expect400({ wallet_id: 'w'.repeat(101) }, 'wallet 101');
  const unknownWallet = await createInvoice(s.client, { wallet_id: 'w'.repeat(100), amount: '1' });
  assert.equal(unknownWallet.status, 404);
  await expect201({ description: 'd'.repeat(1000) }, 'description 1000');
  await expect201({ description: 'd' }, 'description 1');
  await expect400({ description: 'd'.repeat(1001) }, 'description 1001');
  await expect400({ description: '' }, 'description empty');
  await expect400({ description: null }, 'description null');
});

test('expires_in_minutes: integer 1..1440', async () => {
  await expect201({ expires_in_minutes: 1 }, '1');
  const inv = await expect201({ expires_in_minutes: 1440 }, '1440');
  assert.equal(Date.parse(inv.expires_at) - Date.parse(inv.created_at), 1440 * 60_000);
  for (const v of [0, 1441, 1.5, '20', null, -1]) await expect400({ expires_in_minutes: v }, `expires ${JSON.stringify(v)}`);
});

test('metadata: an object of at most 16 KiB serialized (UTF-8 bytes)', async () => {
  // {"k":"..."} is 8 bytes of JSON around the value.
  const exact = { k: 'x'.repeat(16 * 1024 - 8) };
  assert.equal(Buffer.byteLength(JSON.stringify(exact)), 16 * 1024);
  await expect201({ metadata: exact }, '16 KiB');
  await expect400({ metadata: { k: 'x'.repeat(16 * 1024 - 7) } }, '16 KiB + 1');
  // Multi-byte characters count in bytes: 5462 x 3 bytes > 16 KiB although fewer characters.
  await expect400({ metadata: { k: '€'.repeat(5462) } }, 'multi-byte');
  for (const v of [[1, 2], 'x', 5, null]) await expect400({ metadata: v }, `metadata ${JSON.stringify(v)}`);
});

test('unknown fields and missing required fields are 400; a non-JSON body too', async () => {
  // currency is a field since fiat prices, network and token since several networks; chain is not one of the request's.
  await expect400({ chain: 'tron' }, 'unknown field');
  const noAmount = await s.client.post('/invoices', { merchant_order_id: 'x', wallet_id: s.walletId }, { headers: { 'idempotency-key': 'v-1' } });
  assert.equal(noAmount.status, 400);
  const notJson = await s.client.post('/invoices', undefined, { raw: 'amount=1', headers: { 'idempotency-key': 'v-2', 'content-type': 'application/json' } });
  assert.equal(notJson.status, 400);
  assert.equal(notJson.body.error.code, 'invalid_json');
  // A missing Idempotency-Key says what to send, not zod's "expected string, received undefined".
  const noKey = await s.client.post('/invoices', { merchant_order_id: 'no-key', amount: '1', wallet_id: s.walletId });
  assert.equal(noKey.status, 400);
  assert.deepEqual(noKey.body.error.details, [
    {
      path: 'header.idempotency-key',
      message: 'The Idempotency-Key header is required: send one unique key per invoice (e.g. a UUID) and the same key when you retry',
    },
  ]);
});

test('metadata nests at most 32 levels: deeper is 400, also thousands of levels within 16 KiB (was a 500)', async () => {
  const nest = (levels: number): Record<string, unknown> => {
    let v: unknown = 1;
    for (let i = 0; i < levels; i++) v = { k: v };
    return v as Record<string, unknown>;
  };
  await expect201({ metadata: nest(32) }, '32 levels');
  await expect400({ metadata: nest(33) }, '33 levels');
  for (const depth of [5_000, 30_000]) {
    // Built as text: JSON.stringify itself cannot write this deep.
    const raw = `{"merchant_order_id":"deep-${depth}","amount":"1","wallet_id":"${s.walletId}","metadata":{"a":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
    const res = await s.client.post('/invoices', undefined, { raw, headers: { 'idempotency-key': `deep-${depth}`, 'content-type': 'application/json' } });
    assert.equal(res.status, 400, `${depth} levels: ${res.status} ${res.text}`);
    assert.equal(res.body.error.code, 'validation_error');
    assert.match(JSON.stringify(res.body.error.details), /32 levels/);
  }
});
