/**
 * Amount squatting: an account registers another merchant's receiving address (ownership is not
 * verified) and reserves its payable amounts. Many API keys must not multiply the creation rate,
 * and the number of keys is capped.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp } from '../helpers/app.js';
import { MINUTE, SECOND, DAY } from '../../src/lib/clock.js';
import { createInvoice, newKey, shop } from '../helpers/shop.js';

const VICTIM_ADDRESS = 'TV6MuMXfmLbBqPZvBHdwFsDnQeVfnmiuSi';

test('an account sharing the address, with as many keys as it can make, cannot use up the price pool; the owner still gets its amounts', async () => {
  // A pool of 100 amounts per price makes the attack quick to show; the limits are the defaults.
  const t = await startTestApp({ config: { invoices: { max_adjustment: '0.000100' } } });
  try {
    const victim = await shop(t, VICTIM_ADDRESS, 'Victim shop');
    const attacker = await shop(t, VICTIM_ADDRESS, 'Squatter');

    // 100 keys asked for: 20 made, then 409 api_key_limit_reached.
    const keys: string[] = [];
    let refused = 0;
    for (let i = 0; i < 100; i++) {
      const res = await attacker.client.post('/api-keys', { name: `k${i}` });
      if (res.status === 201) keys.push(res.body.secret as string);
      else {
        assert.equal(res.status, 409, res.text);
        assert.equal(res.body.error.code, 'api_key_limit_reached');
        refused += 1;
      }
    }
    assert.equal(keys.length, 20);
    assert.equal(refused, 80);

    // 150 creations at 49.99 at once, spread over every key and the session.
    const api = t.client({ origin: null });
    const results = await Promise.all(
      Array.from({ length: 150 }, (_, i) =>
        i % 21 === 20
          ? createInvoice(attacker.client, { amount: '49.99', wallet_id: attacker.walletId })
          : createInvoice(api, { amount: '49.99', wallet_id: attacker.walletId }, { bearer: keys[i % 21]! }),
      ),
    );
    const created = results.filter((r) => r.status === 201).length;
    const limited = results.filter((r) => r.status === 429);
    assert.equal(created, 60, 'rate_limits.invoices_per_merchant (60 a minute) over all keys and sessions together');
    assert.equal(limited.length, 90);
    for (const r of limited) {
      assert.equal(r.body.error.code, 'rate_limited');
      assert.match(r.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/);
    }

    // The owner of the address is not held back by the squatter's limit and still gets amounts.
    const own = await createInvoice(victim.client, { amount: '49.99', wallet_id: victim.walletId });
    assert.equal(own.status, 201, own.text);
    assert.equal(own.body.invoice.base_amount, '49.990000');

    const reserved = await t.deps.db
      .selectFrom('invoices')
      .select('id')
      .where('wallet_address', '=', VICTIM_ADDRESS)
      .where('base_amount', '=', 49_990_000)
      .execute();
    assert.equal(reserved.length, 61);

    // A minute later the squatter gets another minute's worth, no more.
    t.clock.advance(MINUTE);
    const later = await Promise.all(
      Array.from({ length: 70 }, (_, i) => createInvoice(api, { amount: '19.99', wallet_id: attacker.walletId }, { bearer: keys[i % 20]! })),
    );
    assert.equal(later.filter((r) => r.status === 201).length, 60);
    assert.equal(later.filter((r) => r.status === 429).length, 10);
  } finally {
    await t.close();
  }
});

test('the per-merchant creation limit: configurable, refills with time, replays do not count, other merchants are not affected', async () => {
  const t = await startTestApp({ config: { rate_limits: { invoices_per_merchant: 3 } } });
  try {
    const a = await shop(t, VICTIM_ADDRESS);
    const b = await shop(t, VICTIM_ADDRESS);
    const first = await createInvoice(a.client, { amount: '5', wallet_id: a.walletId, merchant_order_id: 'replayed' });
    assert.equal(first.status, 201);
    // Replays of an existing invoice reserve nothing and do not use the budget.
    for (let i = 0; i < 5; i++) {
      const replay = await createInvoice(a.client, { amount: '5', wallet_id: a.walletId, merchant_order_id: 'replayed' });
      assert.equal(replay.status, 200);
      assert.equal(replay.body.idempotent_replay, true);
    }
    assert.equal((await createInvoice(a.client, { amount: '5', wallet_id: a.walletId })).status, 201);
    assert.equal((await createInvoice(a.client, { amount: '5', wallet_id: a.walletId })).status, 201);
    const limited = await createInvoice(a.client, { amount: '5', wallet_id: a.walletId });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error.code, 'rate_limited');
    assert.equal(limited.headers.get('retry-after'), '20');
    assert.match(limited.body.error.message, /merchant/);
    // Merchant b shares the address and has its own budget.
    assert.equal((await createInvoice(b.client, { amount: '5', wallet_id: b.walletId })).status, 201);
    t.clock.advance(20 * SECOND);
    assert.equal((await createInvoice(a.client, { amount: '5', wallet_id: a.walletId })).status, 201);
    assert.equal((await createInvoice(a.client, { amount: '5', wallet_id: a.walletId })).status, 429);
    const count = await t.deps.db.selectFrom('invoices').select('id').where('merchant_id', '=', a.merchant.id).execute();
    assert.equal(count.length, 4);
  } finally {
    await t.close();
  }
});

test('the active-key cap: configurable; revoked and expired keys do not count; a roll at the cap replaces one key with one', async () => {
  const t = await startTestApp({ config: { api_keys: { max_active: 3 } } });
  try {
    const s = await shop(t, VICTIM_ADDRESS);
    const k1 = await newKey(s.client, { name: 'one' });
    const k2 = await newKey(s.client, { name: 'two', expires_in_days: 1 });
    await newKey(s.client, { name: 'three' });
    const over = await s.client.post('/api-keys', { name: 'four' });
    assert.equal(over.status, 409);
    assert.equal(over.body.error.code, 'api_key_limit_reached');
    assert.match(over.body.error.message, /3 active API keys/);
    assert.equal((await t.deps.db.selectFrom('api_keys').select('id').where('merchant_id', '=', s.merchant.id).execute()).length, 3, 'nothing was written');

    // Rolling an active key at the cap works: the old one is revoked in the same step.
    const rolled = await s.client.post(`/api-keys/${k1.id}/roll`, {});
    assert.equal(rolled.status, 201, rolled.text);
    assert.equal((await s.client.post('/api-keys', { name: 'four' })).status, 409);

    // Once a key expires it no longer counts, and rolling it (a renewal) adds an active key: refused at the cap.
    t.clock.advance(DAY + 1);
    assert.equal((await s.client.post('/api-keys', { name: 'four' })).status, 201);
    const renew = await s.client.post(`/api-keys/${k2.id}/roll`, {});
    assert.equal(renew.status, 409);
    assert.equal(renew.body.error.code, 'api_key_limit_reached');

    // Revoking one frees a place.
    assert.equal((await s.client.delete(`/api-keys/${rolled.body.api_key.id}`)).status, 200);
    assert.equal((await s.client.post(`/api-keys/${k2.id}/roll`, {})).status, 201);
  } finally {
    await t.close();
  }
});
