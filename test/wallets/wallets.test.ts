import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { ADDRESSES, newKey } from '../helpers/shop.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

test('POST /wallets registers an address: 201, unverified, then 200 for the same merchant', async () => {
  const { client } = await signedInMerchant(t);
  const first = await client.post('/wallets', { label: 'Main', address: ADDRESSES[0] });
  assert.equal(first.status, 201);
  const w = first.body.wallet;
  assert.match(w.id, /^wal_/);
  assert.deepEqual(
    { label: w.label, address: w.address, network: w.network, verified: w.verified, verification_status: w.verification_status },
    { label: 'Main', address: ADDRESSES[0], network: 'tron-mainnet', verified: false, verification_status: 'unverified' },
  );
  assert.equal(w.created_at, new Date(t.clock.now()).toISOString());
  const again = await client.post('/wallets', { label: 'Other label', address: ADDRESSES[0] });
  assert.equal(again.status, 200);
  assert.equal(again.body.wallet.id, w.id);
  assert.equal(again.body.wallet.label, 'Main');
});

test('another merchant may register the same address and gets its own wallet (201)', async () => {
  const a = await signedInMerchant(t);
  const b = await signedInMerchant(t);
  const wa = await a.client.post('/wallets', { label: 'A', address: ADDRESSES[1] });
  const wb = await b.client.post('/wallets', { label: 'B', address: ADDRESSES[1] });
  assert.equal(wa.status, 201);
  assert.equal(wb.status, 201);
  assert.notEqual(wa.body.wallet.id, wb.body.wallet.id);
  const listA = await a.client.get('/wallets');
  assert.deepEqual(
    listA.body.wallets.map((w: any) => w.id),
    [wa.body.wallet.id],
  );
});

test('concurrent registrations of one address by one merchant make one wallet', async () => {
  const { client } = await signedInMerchant(t);
  const results = await Promise.all(Array.from({ length: 8 }, () => client.post('/wallets', { label: 'Race', address: ADDRESSES[2] })));
  assert.deepEqual(results.map((r) => r.status).sort(), [200, 200, 200, 200, 200, 200, 200, 201]);
  assert.equal(new Set(results.map((r) => r.body.wallet.id)).size, 1);
});

test('wallet validation: label 1..80, address pattern and checksum, strict body', async () => {
  const { client } = await signedInMerchant(t);
  const ok80 = await client.post('/wallets', { label: 'x'.repeat(80), address: ADDRESSES[3] });
  assert.equal(ok80.status, 201);
  const bad = [
    { label: '', address: ADDRESSES[0] },
    { label: 'x'.repeat(81), address: ADDRESSES[0] },
    { label: 'x', address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u' }, // bad checksum
    { label: 'x', address: 'tR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' },
    { label: 'x', address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj0t' }, // 0 is not base58
    { label: 'x', address: '41a614f803b6fd780986a42c78ec9c7f77e6ded13c' },
    { label: 'x' },
    { address: ADDRESSES[0] },
    { label: null, address: ADDRESSES[0] },
    { label: 'x', address: ADDRESSES[0], extra: 1 },
  ];
  for (const body of bad) {
    const res = await client.post('/wallets', body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.error.code, 'validation_error');
  }
});

test('GET /wallets needs invoices:read with a key; POST /wallets refuses keys', async () => {
  const { client } = await signedInMerchant(t);
  await client.post('/wallets', { label: 'K', address: ADDRESSES[0] });
  const full = await newKey(client);
  const ledgerOnly = await newKey(client, { name: 'ledger', scopes: ['ledger:read'] });
  const anon = t.client({ origin: null });
  const list = await anon.get('/wallets', { bearer: full.secret });
  assert.equal(list.status, 200);
  assert.equal(list.body.wallets.length, 1);
  const denied = await anon.get('/wallets', { bearer: ledgerOnly.secret });
  assert.equal(denied.status, 403);
  assert.equal(denied.body.error.code, 'insufficient_scope');
  const post = await anon.post('/wallets', { label: 'K', address: ADDRESSES[1] }, { bearer: full.secret });
  assert.equal(post.status, 403);
  assert.equal(post.body.error.code, 'session_required');
  const none = await anon.get('/wallets');
  assert.equal(none.status, 401);
});
