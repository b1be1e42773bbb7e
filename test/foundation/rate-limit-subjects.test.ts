/**
 * Per-IP rate limits count an IPv6 client by its /64 (an IPv4-mapped address as the IPv4 one), and
 * pruning the bucket table never refills a bucket of one scope by the limit of another.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp } from '../helpers/app.js';
import { sqliteOnly } from '../helpers/database.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { newKey } from '../helpers/shop.js';
import { rateLimitSubject } from '../../src/http/client-ip.js';

const CONTACT = { name: 'Vera', email: 'vera@example.org', subject: 'Pricing', message: 'How much?' };

test('one IPv6 /64 shares one per-IP budget whatever address of it a request comes from; another /64 has its own', async () => {
  const t = await startTestApp({
    config: { server: { trust_proxy: true }, support: { staff_emails: ['staff@pay.example'] }, rate_limits: { public_per_ip: 3, auth_per_ip: 3 } },
  });
  try {
    const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });
    const contact = (ip: string) => t.client().post('/support/contact', CONTACT, from(ip));
    // An attacker holding 2001:db8:aaaa:1::/64 rotates the interface identifier on every request.
    for (const ip of ['2001:db8:aaaa:1::1', '2001:db8:aaaa:1::2', '2001:db8:aaaa:1:0:0:0:3']) assert.equal((await contact(ip)).status, 201, ip);
    for (const ip of ['2001:db8:aaaa:1::4', '2001:db8:aaaa:1:ffff:ffff:ffff:ffff', '2001:DB8:AAAA:1:1234:5678:9abc:def0']) {
      const limited = await contact(ip);
      assert.equal(limited.status, 429, ip);
      assert.equal(limited.body.error.code, 'rate_limited');
      assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    }
    // The neighbouring /64 is someone else.
    assert.equal((await contact('2001:db8:aaaa:2::1')).status, 201);
    const tickets = await t.deps.db
      .selectFrom('support_tickets')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(tickets.n), 4);

    // Sign-in attempts per address too: rotating inside a /64 does not buy more password guesses.
    const login = (ip: string, i: number) => t.client().post('/auth/login', { email: `nobody${i}@example.org`, password: 'wrong password' }, from(ip));
    for (let i = 0; i < 3; i++) assert.equal((await login(`2001:db8:bbbb:7::${i + 1}`, i)).status, 401);
    assert.equal((await login('2001:db8:bbbb:7::99', 9)).status, 429);
  } finally {
    await t.close();
  }
});

test('an IPv4-mapped IPv6 address counts as its IPv4 address', async () => {
  const t = await startTestApp({
    config: { server: { trust_proxy: true }, support: { staff_emails: ['staff@pay.example'] }, rate_limits: { public_per_ip: 2 } },
  });
  try {
    const contact = (ip: string) => t.client().post('/support/contact', CONTACT, { headers: { 'x-forwarded-for': ip } });
    assert.equal((await contact('203.0.113.7')).status, 201);
    assert.equal((await contact('::ffff:203.0.113.7')).status, 201);
    assert.equal((await contact('::ffff:cb00:7107')).status, 429);
    assert.equal((await contact('203.0.113.7')).status, 429);
    assert.equal((await contact('203.0.113.8')).status, 201);
  } finally {
    await t.close();
  }
});

test('rate-limit subjects', () => {
  assert.equal(rateLimitSubject('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
  assert.equal(rateLimitSubject('2001:db8::1'), '2001:db8:0:0::/64');
  assert.equal(rateLimitSubject('::1'), '0:0:0:0::/64');
  assert.equal(rateLimitSubject('::ffff:10.1.2.3'), '10.1.2.3');
  assert.equal(rateLimitSubject('10.1.2.3'), '10.1.2.3');
  // Not an address (a proxy that forwards junk): counted as given.
  assert.equal(rateLimitSubject('unknown'), 'unknown');
});

// The in-memory buckets' pruning (SQLite, one process); PostgreSQL keeps the buckets in the database.
test('many new buckets in a small scope do not refill an API key that is nearly out of its larger budget', { skip: sqliteOnly }, async () => {
  const t = await startTestApp({ config: { rate_limits: { api_per_key: 1200, public_per_ip: 10 } } });
  try {
    const s = await signedInMerchant(t);
    const key = await newKey(s.client);
    const api = t.client({ origin: null });
    // The key spends its budget down to 20 requests; time stands still.
    for (let i = 0; i < 1180; i++) await t.deps.rateLimiter.consume('api_key', key.id, 1200);
    // Someone floods a small scope from 50 001 addresses (as many contact requests would), which
    // makes the limiter prune its table: under the small scope's limit of 10, the key's bucket,
    // holding 20 tokens, looked "full" and was forgotten, so the key got a fresh 1200.
    for (let i = 0; i < 50_001; i++) await t.deps.rateLimiter.consume('support_public', `198.18.${i >> 8}.${i & 255}`, 10);
    for (let i = 0; i < 20; i++) assert.equal((await api.get('/wallets', { bearer: key.secret })).status, 200);
    const limited = await api.get('/wallets', { bearer: key.secret });
    assert.equal(limited.status, 429, 'the key keeps the budget it had');
  } finally {
    await t.close();
  }
});
