import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp } from '../helpers/app.js';
import { ADDRESSES, newKey, shop } from '../helpers/shop.js';

const limits = (res: { headers: Headers }) => ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after'].map((h) => res.headers.get(h));

test('RateLimit-Limit, -Remaining and -Reset on each limited answer, Retry-After on 429; none where no limit counted', async () => {
  const t = await startTestApp({ config: { rate_limits: { api_per_key: 3, auth_per_ip: 5 } } });
  try {
    const s = await shop(t, ADDRESSES[0]);
    const key = await newKey(s.client, { name: 'server' });
    assert.deepEqual(limits(await s.client.get('/invoices', { bearer: key.secret })), ['3', '2', '20', null]);
    assert.deepEqual(limits(await s.client.get('/invoices?limit=1', { bearer: key.secret })), ['3', '1', '40', null]);
    // An error answer after the limit counted carries them too.
    const bad = await s.client.get('/invoices?limit=0', { bearer: key.secret });
    assert.equal(bad.status, 400);
    assert.deepEqual(limits(bad), ['3', '0', '60', null]);
    const limited = await s.client.get('/invoices', { bearer: key.secret });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error.code, 'rate_limited');
    assert.deepEqual(limits(limited), ['3', '0', '60', '20']);
    // The bucket refills: 20 s later one request is allowed again.
    t.clock.advance(20_000);
    assert.deepEqual(limits(await s.client.get('/invoices', { bearer: key.secret })), ['3', '0', '60', null]);

    // A session request counts against no limit: no headers.
    assert.deepEqual(limits(await s.client.get('/invoices')), [null, null, null, null]);
    // Sign-in counts per address (and per email): the tighter limit is shown.
    const login = await t.client().post('/auth/login', { email: 'nobody@shop.example', password: 'wrong password!' });
    assert.equal(login.status, 401);
    const [limit, remaining] = limits(login);
    assert.ok(Number(limit) > 0 && Number(remaining) < Number(limit), `${limit} ${remaining}`);
  } finally {
    await t.close();
  }
});
