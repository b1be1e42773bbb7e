import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApp, tempDir, type TestApp } from '../helpers/app.js';
import { signedInMerchant, type SignedIn } from '../helpers/fixtures.js';
import { startHttpsReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';
import { createDeliveryWorker, type DeliveryWorker } from '../../src/webhooks/webhooks.worker.js';
import { DEFAULT_JITTER, MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../../src/webhooks/deliverer.js';
import { deliveryOf, registerWebhook, storeEvent, verifySignature } from './support.js';

let rx: HttpsReceiver;
let stranger: HttpsReceiver;
let rx6: HttpsReceiver;
let t: TestApp;
let owner: SignedIn;
let worker: DeliveryWorker;
let bundleDir: string;
let bundle: string;
const dns = new Map<string, string[]>();
const lookups: string[] = [];

before(async () => {
  rx = await startHttpsReceiver();
  bundleDir = tempDir('gatewayd-ca-');
  bundle = join(bundleDir, 'bundle.pem');
  // Same names, but a CA the gateway does not trust.
  stranger = await startHttpsReceiver();
  rx6 = await startHttpsReceiver({ host: '::1', hostnames: ['v6.example.test'] });
  writeFileSync(bundle, rx.caPem + rx6.caPem);
  t = await startTestApp({
    config: {
      webhooks: rx.webhookConfig({
        allowed_ports: [rx.port, stranger.port, rx6.port],
        allow_private_cidrs: ['127.0.0.0/8', '::1/128'],
        resolve: {
          'hooks.example.test': '127.0.0.1',
          'untrusted.example.test': '127.0.0.1',
          'v6.example.test': '::1',
          'resume.example.test': '127.0.0.1',
          'other.example.test': '127.0.0.1',
        },
        // Trust both test CAs (the receiver's and the IPv6 one), not the stranger's.
        ca_file: bundle,
        timeout_seconds: 1,
      }),
    },
    beforeCreate: (deps) => {
      deps.dnsLookup = async (hostname) => {
        lookups.push(hostname);
        const answers = dns.get(hostname);
        if (!answers || answers.length === 0) throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
        // Each answer is used once, the last one stays: a name that changes between lookups.
        const address = answers.length > 1 ? answers.shift()! : answers[0]!;
        return [{ address, family: address.includes(':') ? 6 : 4 }];
      };
    },
  });
  owner = await signedInMerchant(t);
  worker = createDeliveryWorker(t.deps);
});
after(async () => {
  await worker.idle();
  await t.close();
  await rx.close();
  await stranger.close();
  await rx6.close();
  rmSync(bundleDir, { recursive: true, force: true });
});
beforeEach(() => {
  rx.answer(200);
  rx.requests.length = 0;
});

test('an event is delivered signed: headers, raw body, SNI and Host as the spec says', async () => {
  const hook = await registerWebhook(owner.client, rx.url('/hook?source=gatewayd'));
  const event = await storeEvent(t, owner.merchant.id, 'invoice.created', { invoice: { id: 'inv_1', payable_amount: '10.000001' } });
  await worker.drain();
  const [req] = await rx.waitFor(1);
  assert.equal(req!.method, 'POST');
  assert.equal(req!.path, '/hook?source=gatewayd');
  assert.equal(req!.servername, 'hooks.example.test');
  assert.equal(req!.headers.host, `hooks.example.test:${rx.port}`);
  assert.equal(req!.headers['content-type'], 'application/json');
  assert.equal(req!.headers['user-agent'], 'gatewayd/0.2.0');
  assert.equal(req!.headers['x-gateway-event-id'], event.id);
  assert.equal(req!.headers['x-gateway-timestamp'], String(Math.floor(t.clock.now() / 1000)));
  assert.match(String(req!.headers['x-gateway-signature']), /^sha256=[0-9a-f]{64}$/);
  assert.ok(verifySignature(req!, hook.secret), 'the signature verifies over the raw body');
  assert.ok(!verifySignature({ ...req!, rawBody: `${req!.rawBody} ` }, hook.secret), 'one byte more and it does not');
  assert.deepEqual(JSON.parse(req!.rawBody), {
    id: event.id,
    type: 'invoice.created',
    created_at: new Date(event.createdAt).toISOString(),
    mode: 'live',
    data: { invoice: { id: 'inv_1', payable_amount: '10.000001' } },
  });
  const d = await deliveryOf(t, event.id, hook.id);
  assert.equal(d.status, 'delivered');
  assert.equal(d.attempts, 1);
  assert.equal(d.deliveredAt, t.clock.now());
  assert.equal(d.responseStatus, 200);
  assert.equal(d.lastError, null);
  assert.equal(d.nextAttemptAt, null);
  assert.ok(!t.logText().includes(hook.secret), 'the secret never reaches the log');
  await owner.client.delete(`/webhooks/${hook.id}`);
});

test('503 is retried on the schedule, each attempt signed afresh, and after 11 attempts the delivery fails', async () => {
  rx.answer(503);
  const hook = await registerWebhook(owner.client, rx.url('/flaky'));
  const event = await storeEvent(t, owner.merchant.id);
  const start = t.clock.now();
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    assert.equal(await worker.runOnce(), true, `attempt ${attempt} starts`);
    await worker.idle();
    const d = await deliveryOf(t, event.id, hook.id);
    assert.equal(d.attempts, attempt);
    assert.equal(d.responseStatus, 503);
    assert.equal(d.lastError, 'HTTP 503');
    if (attempt === MAX_ATTEMPTS) {
      assert.equal(d.status, 'failed');
      assert.equal(d.nextAttemptAt, null);
      break;
    }
    assert.equal(d.status, 'pending');
    const wait = d.nextAttemptAt! - t.clock.now();
    const planned = RETRY_DELAYS_MS[attempt - 1]!;
    assert.ok(wait >= planned * (1 - DEFAULT_JITTER) && wait <= planned * (1 + DEFAULT_JITTER), `attempt ${attempt}: waits ${wait} ms for ${planned}`);
    // Not a moment early.
    t.clock.set(d.nextAttemptAt! - 1);
    assert.equal(await worker.runOnce(), false, 'nothing is due before next_attempt_at');
    t.clock.set(d.nextAttemptAt!);
  }
  const elapsedDays = (t.clock.now() - start) / 86_400_000;
  assert.ok(elapsedDays > 3 && elapsedDays < 5, `the schedule spans ${elapsedDays} days`);
  assert.equal(rx.requests.length, MAX_ATTEMPTS);
  const timestamps = rx.requests.map((r) => Number(r.headers['x-gateway-timestamp']));
  assert.deepEqual(
    [...timestamps].sort((a, b) => a - b),
    timestamps,
  );
  assert.equal(new Set(rx.requests.map((r) => r.headers['x-gateway-signature'])).size, MAX_ATTEMPTS, 'every attempt has its own signature');
  for (const r of rx.requests) assert.ok(verifySignature(r, hook.secret));
  assert.equal(new Set(rx.requests.map((r) => r.headers['x-gateway-event-id'])).size, 1, 'one event id for every attempt');
  // Nothing more after failing.
  t.clock.advance(7 * 86_400_000);
  assert.equal(await worker.runOnce(), false);

  // A manual retry of the failed delivery makes one attempt now.
  rx.answer(200);
  const d = await deliveryOf(t, event.id, hook.id);
  const retried = await owner.client.post(`/webhooks/deliveries/${d.id}/retry`, {});
  assert.equal(retried.status, 200, retried.text);
  assert.equal(retried.body.delivery.status, 'delivered');
  assert.equal(retried.body.delivery.attempts, MAX_ATTEMPTS + 1);
  assert.equal(retried.body.delivery.response_status, 200);
  assert.equal(retried.body.delivery.last_error, null);
  assert.ok(verifySignature(rx.requests.at(-1)!, hook.secret));
  const again = await owner.client.post(`/webhooks/deliveries/${d.id}/retry`, {});
  assert.equal(again.status, 409);
  assert.equal(again.body.error.code, 'delivery_not_retryable');
  await owner.client.delete(`/webhooks/${hook.id}`);
});

test('a later attempt to the same receiver resumes its TLS session, on a connection of its own; another name starts afresh', async () => {
  rx.answer(503);
  const hook = await registerWebhook(owner.client, rx.url('/resume', 'resume.example.test'));
  const event = await storeEvent(t, owner.merchant.id);
  for (let attempt = 1; attempt <= 3; attempt++) {
    assert.equal(await worker.runOnce(), true);
    await worker.idle();
    t.clock.set((await deliveryOf(t, event.id, hook.id)).nextAttemptAt!);
  }
  assert.deepEqual(
    rx.requests.map((r) => [r.servername, r.sessionReused]),
    [
      ['resume.example.test', false],
      ['resume.example.test', true],
      ['resume.example.test', true],
    ],
  );
  assert.equal(new Set(rx.requests.map((r) => r.remotePort)).size, 3, 'no socket is reused: each attempt connects to the address checked for it');
  await owner.client.delete(`/webhooks/${hook.id}`);
  // The same receiver under another name: its own full handshake (sessions are kept per name and address).
  const other = await registerWebhook(owner.client, rx.url('/other', 'other.example.test'));
  const second = await storeEvent(t, owner.merchant.id);
  assert.equal(await worker.runOnce(), true);
  await worker.idle();
  assert.equal((await deliveryOf(t, second.id, other.id)).attempts, 1);
  assert.deepEqual(
    rx.requests.slice(3).map((r) => [r.servername, r.sessionReused]),
    [['other.example.test', false]],
  );
  await owner.client.delete(`/webhooks/${other.id}`);
});

test('a redirect is never followed: a failed attempt with its status', async () => {
  rx.answer((req) => (req.path === '/moved' ? { status: 302, headers: { location: rx.url('/elsewhere') } } : 200));
  const hook = await registerWebhook(owner.client, rx.url('/moved'));
  const event = await storeEvent(t, owner.merchant.id);
  await worker.drain();
  const d = await deliveryOf(t, event.id, hook.id);
  assert.equal(d.status, 'pending');
  assert.equal(d.responseStatus, 302);
  assert.match(d.lastError!, /redirect .* not followed/);
  assert.deepEqual(
    rx.requests.map((r) => r.path),
    ['/moved'],
  );
  await owner.client.delete(`/webhooks/${hook.id}`);
});

test('a 4xx answer is a failed attempt, retried later', async () => {
  rx.answer(401);
  const hook = await registerWebhook(owner.client, rx.url('/strict'));
  const event = await storeEvent(t, owner.merchant.id);
  await worker.drain();
  const d = await deliveryOf(t, event.id, hook.id);
  assert.equal(d.status, 'pending');
  assert.equal(d.responseStatus, 401);
  assert.equal(d.lastError, 'HTTP 401');
  assert.ok(d.nextAttemptAt! > t.clock.now());
  await owner.client.delete(`/webhooks/${hook.id}`);
});

test('a receiver that hangs is cut off at webhooks.timeout_seconds', async () => {
  rx.answer('hang');
  const hook = await registerWebhook(owner.client, rx.url('/hang'));
  const event = await storeEvent(t, owner.merchant.id);
  const started = Date.now();
  await worker.drain();
  const took = Date.now() - started;
  assert.ok(took >= 900 && took < 3000, `took ${took} ms`);
  const d = await deliveryOf(t, event.id, hook.id);
  assert.equal(d.status, 'pending');
  assert.equal(d.responseStatus, null);
  assert.equal(d.lastError, 'timed out after 1s');
  await owner.client.delete(`/webhooks/${hook.id}`);
});

test('a receiver that is down: connection refused, then delivered once it is back', async () => {
  const hook = await registerWebhook(owner.client, rx.url('/down'));
  await rx.down();
  try {
    const event = await storeEvent(t, owner.merchant.id);
    await worker.drain();
    let d = await deliveryOf(t, event.id, hook.id);
    assert.equal(d.status, 'pending');
    assert.match(d.lastError!, /connection refused by 127\.0\.0\.1:\d+/);
    await rx.up();
    t.clock.set(d.nextAttemptAt!);
    await worker.drain();
    d = await deliveryOf(t, event.id, hook.id);
    assert.equal(d.status, 'delivered');
    assert.equal(d.attempts, 2);
  } finally {
    await rx.up().catch(() => undefined);
    await owner.client.delete(`/webhooks/${hook.id}`);
  }
});

test('a certificate from a CA that is not trusted fails the attempt; nothing is sent', async () => {
  const hook = await registerWebhook(owner.client, stranger.url('/hook', 'untrusted.example.test'));
  const event = await storeEvent(t, owner.merchant.id);
  await worker.drain();
  const d = await deliveryOf(t, event.id, hook.id);
  assert.equal(d.status, 'pending');
  assert.match(d.lastError!, /^TLS: /);
  assert.equal(stranger.requests.length, 0);
  await owner.client.delete(`/webhooks/${hook.id}`);
});

test('a name that turns private before delivery is not sent to; the attempt connects to the one address it checked', async () => {
  dns.set('rebind.example.test', ['127.0.0.1']);
  const hook = await registerWebhook(owner.client, rx.url('/rebind', 'rebind.example.test'));
  // The name now points into the private network.
  dns.set('rebind.example.test', ['10.0.0.9']);
  const event = await storeEvent(t, owner.merchant.id);
  await worker.drain();
  let d = await deliveryOf(t, event.id, hook.id);
  assert.equal(d.status, 'pending');
  assert.equal(d.responseStatus, null);
  assert.equal(d.lastError, 'not sent: rebind.example.test resolves to 10.0.0.9, a private address; only public addresses may receive webhooks');
  assert.equal(rx.requests.length, 0);

  // Allowed at the check, then (if anyone asked again) an unroutable address: exactly one lookup
  // per attempt, and the connection goes to the address that was checked.
  dns.set('rebind.example.test', ['127.0.0.1', '192.0.2.1']);
  lookups.length = 0;
  t.clock.set(d.nextAttemptAt!);
  await worker.drain();
  d = await deliveryOf(t, event.id, hook.id);
  assert.equal(d.status, 'delivered', d.lastError ?? '');
  assert.deepEqual(lookups, ['rebind.example.test']);
  assert.equal(rx.requests[0]!.servername, 'rebind.example.test');
  assert.equal(rx.requests[0]!.headers.host, `rebind.example.test:${rx.port}`);
  await owner.client.delete(`/webhooks/${hook.id}`);
});

test('an IPv6 receiver: the attempt connects to the checked IPv6 address', async () => {
  const hook = await registerWebhook(owner.client, rx6.url('/six'));
  const event = await storeEvent(t, owner.merchant.id);
  await worker.drain();
  const d = await deliveryOf(t, event.id, hook.id);
  assert.equal(d.status, 'delivered', d.lastError ?? '');
  const [req] = await rx6.waitFor(1);
  assert.equal(req!.servername, 'v6.example.test');
  assert.ok(verifySignature(req!, hook.secret));
  await owner.client.delete(`/webhooks/${hook.id}`);
});
