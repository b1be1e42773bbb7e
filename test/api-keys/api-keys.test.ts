import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { sha256Hex } from '../../src/lib/crypto.js';
import { listMerchantKeys } from '../../src/api-keys/api-keys.repo.js';
import { toApiKeyResponse } from '../../src/api-keys/api-keys.schemas.js';
import { ADDRESSES, newKey, renewSession, shop } from '../helpers/shop.js';

const DAY = 86_400_000;
let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

test('POST /api-keys: 201, the secret once, stored only as its SHA-256, all scopes by default', async () => {
  const { client } = await signedInMerchant(t);
  const res = await client.post('/api-keys', { name: 'Shop server' });
  assert.equal(res.status, 201);
  const { api_key: key, secret, warning } = res.body;
  assert.match(secret, /^gw_live_[A-Za-z0-9_-]{43}$/);
  assert.equal(key.prefix, secret.slice(0, 12));
  assert.match(key.id, /^key_/);
  assert.equal(key.name, 'Shop server');
  assert.equal(key.mode, 'live');
  assert.deepEqual(key.scopes, ['invoices:read', 'invoices:write', 'ledger:read']);
  assert.equal(key.expires_at, null);
  assert.equal(key.expired, false);
  assert.equal(key.last_used_at, null);
  assert.equal(key.revoked_at, null);
  assert.equal(key.created_at, new Date(t.clock.now()).toISOString());
  assert.ok(typeof warning === 'string' && warning.length > 10);
  const row = await t.deps.db.selectFrom('api_keys').selectAll().where('id', '=', key.id).executeTakeFirstOrThrow();
  assert.equal(row.secret_hash, sha256Hex(secret));
  assert.ok(!JSON.stringify(row).includes(secret));
  assert.ok(!t.logText().includes(secret), 'the secret never reaches a log');
});

test('create validation: name 1..80, expires_in_days 1..3650 or null, scopes a non-empty subset', async () => {
  const { client } = await signedInMerchant(t);
  for (const body of [
    { name: 'n'.repeat(80) },
    { name: 'a', expires_in_days: 1 },
    { name: 'a', expires_in_days: 3650 },
    { name: 'a', expires_in_days: null },
    { name: 'a', scopes: ['ledger:read'] },
  ]) {
    assert.equal((await client.post('/api-keys', body)).status, 201, JSON.stringify(body));
  }
  for (const body of [
    {},
    { name: '' },
    { name: 'n'.repeat(81) },
    { name: null },
    { name: 'a', expires_in_days: 0 },
    { name: 'a', expires_in_days: 3651 },
    { name: 'a', expires_in_days: 1.5 },
    { name: 'a', scopes: [] },
    { name: 'a', scopes: ['admin'] },
    { name: 'a', scopes: ['ledger:read', 'ledger:read'] },
    { name: 'a', extra: true },
  ]) {
    const res = await client.post('/api-keys', body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.error.code, 'validation_error');
  }
});

test('key management is session only; the Origin rule applies to the session', async () => {
  const { client } = await signedInMerchant(t);
  const key = await newKey(client);
  const api = t.client({ origin: null });
  for (const res of [
    await api.post('/api-keys', { name: 'x' }, { bearer: key.secret }),
    await api.post(`/api-keys/${key.id}/roll`, {}, { bearer: key.secret }),
    await api.delete(`/api-keys/${key.id}`, { bearer: key.secret }),
  ]) {
    assert.equal(res.status, 403);
    assert.equal(res.body.error.code, 'session_required');
  }
  const foreignOrigin = await client.post('/api-keys', { name: 'x' }, { origin: 'https://evil.example' });
  assert.equal(foreignOrigin.status, 403);
  assert.equal(foreignOrigin.body.error.code, 'invalid_origin');
  assert.equal((await t.client().post('/api-keys', { name: 'x' })).status, 401);
});

test('bearer auth: unknown, malformed, revoked and expired keys are 401; revocation is immediate', async () => {
  const s = await shop(t, ADDRESSES[0]);
  const key = await newKey(s.client, { name: 'short', expires_in_days: 1 });
  const api = t.client({ origin: null });
  assert.equal((await api.get('/invoices', { bearer: key.secret })).status, 200);
  assert.equal((await api.get('/invoices', { bearer: `${key.secret}x` })).status, 401);
  assert.equal((await api.get('/invoices', { headers: { authorization: 'Basic abc' } })).status, 401);
  t.clock.advance(DAY);
  const expired = await api.get('/invoices', { bearer: key.secret });
  assert.equal(expired.status, 401);
  assert.equal(expired.body.error.code, 'unauthorized');
  const keys = await t.deps.db.selectFrom('api_keys').selectAll().where('id', '=', key.id).executeTakeFirstOrThrow();
  assert.equal(keys.expires_at, t.clock.now());
  // The Dashboard listing flags it, and never carries a secret or its hash.
  const listed = (await listMerchantKeys(t.deps.db, s.merchant.id)).map((k) => toApiKeyResponse(k, t.clock.now()));
  const shown = listed.find((k) => k.id === key.id)!;
  assert.equal(shown.expired, true);
  assert.equal(shown.expires_at, new Date(t.clock.now()).toISOString());
  assert.ok(!JSON.stringify(listed).includes(keys.secret_hash));
  assert.ok(!JSON.stringify(listed).includes(key.secret));

  const other = await newKey(s.client);
  assert.equal((await api.get('/invoices', { bearer: other.secret })).status, 200);
  const del = await s.client.delete(`/api-keys/${other.id}`);
  assert.equal(del.status, 200);
  assert.deepEqual(del.body, { success: true });
  const after = await api.get('/invoices', { bearer: other.secret });
  assert.equal(after.status, 401);
  assert.equal((await s.client.delete(`/api-keys/${other.id}`)).status, 200, 'deleting again is idempotent');
  assert.equal((await s.client.delete('/api-keys/key_unknown')).status, 404);
});

test("another merchant's key is 404 for roll and delete", async () => {
  const a = await signedInMerchant(t);
  const b = await signedInMerchant(t);
  const key = await newKey(a.client);
  assert.equal((await b.client.post(`/api-keys/${key.id}/roll`, {})).status, 404);
  assert.equal((await b.client.delete(`/api-keys/${key.id}`)).status, 404);
  assert.equal((await t.client({ origin: null }).get('/wallets', { bearer: key.secret })).status, 200, 'still valid');
});

test('roll: new secret, same name and scopes, lifetime counted from the roll, old key revoked at once', async () => {
  const s = await shop(t, ADDRESSES[1]);
  const old = await newKey(s.client, { name: 'rolling', expires_in_days: 30, scopes: ['invoices:read', 'ledger:read'] });
  t.clock.advance(10 * DAY);
  await renewSession(t, s);
  const res = await s.client.post(`/api-keys/${old.id}/roll`, {});
  assert.equal(res.status, 201, res.text);
  assert.equal(res.body.replaced_key_id, old.id);
  assert.notEqual(res.body.secret, old.secret);
  assert.notEqual(res.body.api_key.id, old.id);
  assert.equal(res.body.api_key.name, 'rolling');
  assert.deepEqual(res.body.api_key.scopes, ['invoices:read', 'ledger:read']);
  assert.equal(res.body.api_key.expires_at, new Date(t.clock.now() + 30 * DAY).toISOString());
  assert.ok(res.body.warning);
  const api = t.client({ origin: null });
  assert.equal((await api.get('/invoices', { bearer: old.secret })).status, 401);
  assert.equal((await api.get('/invoices', { bearer: res.body.secret })).status, 200);
  const again = await s.client.post(`/api-keys/${old.id}/roll`, {});
  assert.equal(again.status, 404, 'a revoked key cannot be rolled');
  const badBody = await s.client.post(`/api-keys/${res.body.api_key.id}/roll`, { name: 'x' });
  assert.equal(badBody.status, 400);

  const forever = await newKey(s.client, { name: 'forever' });
  const rolled = await s.client.post(`/api-keys/${forever.id}/roll`);
  assert.equal(rolled.status, 201);
  assert.equal(rolled.body.api_key.expires_at, null);
});

test('last_used_at is written at most once a minute', async () => {
  const s = await shop(t, ADDRESSES[2]);
  const key = await newKey(s.client);
  const api = t.client({ origin: null });
  const lastUsed = async () => (await t.deps.db.selectFrom('api_keys').select('last_used_at').where('id', '=', key.id).executeTakeFirstOrThrow()).last_used_at;
  const start = t.clock.now();
  await api.get('/wallets', { bearer: key.secret });
  assert.equal(await lastUsed(), start);
  t.clock.advance(59_000);
  await api.get('/wallets', { bearer: key.secret });
  assert.equal(await lastUsed(), start);
  t.clock.advance(1_000);
  await api.get('/wallets', { bearer: key.secret });
  assert.equal(await lastUsed(), start + 60_000);
});

test('keys are rate limited per key (429 with Retry-After)', async () => {
  const t2 = await startTestApp({ config: { rate_limits: { api_per_key: 3 } } });
  try {
    const s = await signedInMerchant(t2);
    const key = await newKey(s.client);
    const api = t2.client({ origin: null });
    for (let i = 0; i < 3; i++) assert.equal((await api.get('/wallets', { bearer: key.secret })).status, 200);
    const limited = await api.get('/wallets', { bearer: key.secret });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error.code, 'rate_limited');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    const other = await newKey(s.client);
    assert.equal((await api.get('/wallets', { bearer: other.secret })).status, 200);
  } finally {
    await t2.close();
  }
});
