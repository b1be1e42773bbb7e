/** The session API of shop connections: creation rules, the limit, ownership, and the per-connection request budget. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp } from '../helpers/app.js';
import { newKey, shop } from '../helpers/shop.js';
import { AUTH_FAILURES_PER_MINUTE, SHOP_REQUESTS_PER_MINUTE } from '../../src/shops/shop-orders.js';

test('shop connections: 16 active at most (409 shop_connection_limit_reached), bad input changes nothing, session only, other merchants see 404', async () => {
  const t = await startTestApp();
  try {
    const a = await shop(t);
    const b = await shop(t, undefined, 'Other');
    const body = { protocol: 'epay', name: 'Shop', wallet_id: a.walletId, currency: 'usdt' };
    for (const bad of [
      { ...body, protocol: 'paypal' },
      { ...body, currency: 'XYZ' },
      { ...body, name: '' },
      { ...body, extra: 1 },
      { ...body, allow_http_notify: 'yes' },
    ]) {
      const res = await a.client.post('/shop-connections', bad);
      assert.equal(res.status, 400, JSON.stringify(bad));
      assert.equal(res.body.error.code, 'validation_error');
    }
    const foreign = await a.client.post('/shop-connections', { ...body, wallet_id: b.walletId });
    assert.equal(foreign.status, 404);
    assert.equal((await a.client.get('/shop-connections')).body.connections.length, 0, 'nothing was created');

    const made = await a.client.post('/shop-connections', body);
    assert.equal(made.status, 201, made.text);
    assert.deepEqual(Object.keys(made.body.connection).sort(), [
      'active',
      'allow_http_notify',
      'api_url',
      'created_at',
      'currency',
      'id',
      'name',
      'pid',
      'protocol',
      'wallet_id',
    ]);
    assert.equal(made.body.connection.currency, 'USDT');
    assert.equal(made.body.connection.allow_http_notify, false);
    const pids = new Set<number>([made.body.connection.pid]);
    for (let i = 1; i < 16; i++) {
      const res = await a.client.post('/shop-connections', { ...body, protocol: i % 2 ? 'epusdt' : 'epay', name: `Shop ${i}` });
      assert.equal(res.status, 201);
      pids.add(res.body.connection.pid);
    }
    assert.equal(pids.size, 16, 'every pid is its own');
    const over = await a.client.post('/shop-connections', body);
    assert.equal(over.status, 409);
    assert.equal(over.body.error.code, 'shop_connection_limit_reached');
    // Deleting one makes room; a deleted one stays listed, inactive, without its key.
    const id = made.body.connection.id as string;
    assert.equal((await b.client.delete(`/shop-connections/${id}`)).status, 404, "another merchant's connection is absent");
    assert.equal((await b.client.post(`/shop-connections/${id}/roll`, {})).status, 404);
    assert.equal((await a.client.delete(`/shop-connections/${id}`)).status, 200);
    assert.equal((await a.client.delete(`/shop-connections/${id}`)).status, 200, 'deleting again is harmless');
    assert.equal((await a.client.post(`/shop-connections/${id}/roll`, {})).status, 404, 'a deleted connection gets no new key');
    assert.equal((await a.client.post('/shop-connections', body)).status, 201);
    const list = (await a.client.get('/shop-connections')).body.connections as Array<{ id: string; active: boolean }>;
    assert.equal(list.length, 17);
    assert.equal(list.at(-1)!.id, id);
    assert.equal(list.at(-1)!.active, false);

    // Session only: an API key cannot hand out signing keys.
    const key = await newKey(a.client, { name: 'server', scopes: ['invoices:write'] });
    const byKey = await t.client({ origin: null }).get('/shop-connections', { bearer: key.secret });
    assert.ok(byKey.status === 401 || byKey.status === 403, String(byKey.status));
  } finally {
    await t.close();
  }
});

test('shop connections: each connection has a request budget a minute, charged by signed requests only; wrong keys count per address', async () => {
  const t = await startTestApp();
  try {
    const a = await shop(t);
    const { connection, key } = (await a.client.post('/shop-connections', { protocol: 'epay', name: 'Shop', wallet_id: a.walletId, currency: 'USDT' })).body;
    const query = async (secret: string) => {
      const res = await fetch(`${t.baseUrl}/epay/api.php`, {
        method: 'POST',
        body: new URLSearchParams({ act: 'order', pid: String(connection.pid), key: secret, out_trade_no: 'none' }),
      });
      return (await res.json()) as { code: number; msg: string };
    };
    for (let i = 0; i < AUTH_FAILURES_PER_MINUTE; i++) assert.equal((await query('wrong')).msg, 'signature verification failed');
    assert.match((await query('wrong')).msg, /too many requests with a wrong signature or key/);
    for (let i = 0; i < SHOP_REQUESTS_PER_MINUTE; i++) assert.equal((await query(key)).msg, 'order not found', 'the wrong keys spent none of it');
    const limited = await query(key);
    assert.equal(limited.code, -1);
    assert.match(limited.msg, /too many requests for this shop connection/);
    t.clock.advance(60_000);
    assert.equal((await query(key)).msg, 'order not found', 'the budget refills');
    assert.equal((await query('wrong')).msg, 'signature verification failed', 'so does the per-address count');
  } finally {
    await t.close();
  }
});
