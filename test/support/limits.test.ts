import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { MINUTE, SECOND } from '../../src/lib/clock.js';
import { startSiteverify, type SiteverifyPeer } from './peers.js';

/** The public contact form and chat are open only while someone answers them. */
const STAFFED = { staff_emails: ['staff@example.test'] };

const CONTACT = { name: 'Vera', email: 'vera@example.org', subject: 'Pricing', message: 'How much?' };
const CHAT = { name: 'Chad', email: 'chad@example.org', message: 'Hello?' };

test('contact and chat start share rate_limits.public_per_ip: 429 rate_limited with Retry-After', async () => {
  const t = await startTestApp({ config: { support: STAFFED, rate_limits: { public_per_ip: 3 } } });
  try {
    const c = t.client();
    assert.equal((await c.post('/support/contact', CONTACT)).status, 201);
    assert.equal((await c.post('/support/chat', CHAT)).status, 201);
    // Invalid requests count as well: a flood of junk is still a flood.
    assert.equal((await c.post('/support/contact', { junk: true })).status, 400);
    const limited = await c.post('/support/contact', CONTACT);
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error.code, 'rate_limited');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    assert.equal((await c.post('/support/chat', CHAT)).status, 429);
    const before = await t.deps.db
      .selectFrom('support_tickets')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(before.n), 2);
    // The bucket refills with time (3 a minute: one every 20 s).
    t.clock.advance(20 * SECOND);
    assert.equal((await c.post('/support/chat', CHAT)).status, 201);
    assert.equal((await c.post('/support/chat', CHAT)).status, 429);
    t.clock.advance(MINUTE);
    assert.equal((await c.post('/support/contact', CONTACT)).status, 201);
  } finally {
    await t.close();
  }
});

test('behind a trusted proxy each client address has its own budget', async () => {
  const t = await startTestApp({ config: { server: { trust_proxy: true }, support: STAFFED, rate_limits: { public_per_ip: 1 } } });
  try {
    const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });
    assert.equal((await t.client().post('/support/contact', CONTACT, from('203.0.113.1'))).status, 201);
    assert.equal((await t.client().post('/support/contact', CONTACT, from('203.0.113.1'))).status, 429);
    assert.equal((await t.client().post('/support/contact', CONTACT, from('203.0.113.2'))).status, 201);
  } finally {
    await t.close();
  }
});

test('chat messages are limited per token (rate_limits.chat_per_token); reads are not', async () => {
  const t = await startTestApp({ config: { support: STAFFED, rate_limits: { chat_per_token: 2, public_per_ip: 0 } } });
  try {
    const a = (await t.client().post('/support/chat', CHAT)).body.chat_token as string;
    const b = (await t.client().post('/support/chat', CHAT)).body.chat_token as string;
    const send = (token: string) => t.client().post('/support/chat/messages', { message: 'spam' }, { headers: { 'x-support-chat-token': token } });
    assert.equal((await send(a)).status, 201);
    assert.equal((await send(a)).status, 201);
    const limited = await send(a);
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error.code, 'rate_limited');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    // Another chat is unaffected, and reading the limited chat still works.
    assert.equal((await send(b)).status, 201);
    const read = await t.client().get('/support/chat', { headers: { 'x-support-chat-token': a } });
    assert.equal(read.status, 200);
    assert.equal(read.body.messages.length, 3);
    t.clock.advance(MINUTE);
    assert.equal((await send(a)).status, 201);
  } finally {
    await t.close();
  }
});

test('rate limits of 0 are off', async () => {
  const t = await startTestApp({ config: { support: STAFFED, rate_limits: { public_per_ip: 0 } } });
  try {
    for (let i = 0; i < 15; i++) assert.equal((await t.client().post('/support/contact', CONTACT)).status, 201);
  } finally {
    await t.close();
  }
});

describe('captcha', () => {
  let t: TestApp;
  let peer: SiteverifyPeer;
  before(async () => {
    peer = await startSiteverify();
    t = await startTestApp({
      config: {
        captcha: { provider: 'turnstile', site_key: 'site', secret_key: 'captcha-secret', verify_url: peer.url },
        support: STAFFED,
        rate_limits: { public_per_ip: 0 },
      },
    });
  });
  after(async () => {
    await t.close();
    await peer.close();
  });

  for (const [label, path, body] of [
    ['contact', '/support/contact', CONTACT],
    ['chat start', '/support/chat', CHAT],
  ] as const) {
    test(`captcha on ${label}: required, verified with the provider, single use`, async () => {
      peer.mode = 'pass';
      const missing = await t.client().post(path, body);
      assert.equal(missing.status, 400);
      assert.equal(missing.body.error.code, 'captcha_invalid');

      const token = `tok-${label}-1`;
      const ok = await t.client().post(path, { ...body, captcha_token: token });
      assert.equal(ok.status, 201);
      const seen = peer.requests.at(-1)!;
      assert.equal(seen.get('response'), token);
      assert.equal(seen.get('secret'), 'captcha-secret');

      const reused = await t.client().post(path, { ...body, captcha_token: token });
      assert.equal(reused.status, 400);
      assert.equal(reused.body.error.code, 'captcha_invalid');

      peer.mode = 'fail';
      const rejected = await t.client().post(path, { ...body, captcha_token: `tok-${label}-2` });
      assert.equal(rejected.status, 400);
      assert.equal(rejected.body.error.code, 'captcha_invalid');

      peer.mode = 'error';
      const down = await t.client().post(path, { ...body, captcha_token: `tok-${label}-3` });
      assert.equal(down.status, 503);
      assert.equal(down.body.error.code, 'captcha_unavailable');

      const tooLong = await t.client().post(path, { ...body, captcha_token: 'x'.repeat(2049) });
      assert.equal(tooLong.status, 400);
      assert.equal(tooLong.body.error.code, 'validation_error');
      peer.mode = 'pass';
    });
  }

  test('captcha: a refused request creates no ticket; chat messages need no captcha', async () => {
    const count = async () =>
      Number(
        (
          await t.deps.db
            .selectFrom('support_tickets')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await count();
    peer.mode = 'fail';
    assert.equal((await t.client().post('/support/contact', { ...CONTACT, captcha_token: 'refused-1' })).status, 400);
    peer.mode = 'error';
    assert.equal((await t.client().post('/support/chat', { ...CHAT, captcha_token: 'refused-2' })).status, 503);
    assert.equal(await count(), before);
    peer.mode = 'pass';
    const chat = await t.client().post('/support/chat', { ...CHAT, captcha_token: 'fresh-1' });
    const verifications = peer.requests.length;
    const more = await t.client().post('/support/chat/messages', { message: 'again' }, { headers: { 'x-support-chat-token': chat.body.chat_token } });
    assert.equal(more.status, 201);
    assert.equal(peer.requests.length, verifications);
  });
});
