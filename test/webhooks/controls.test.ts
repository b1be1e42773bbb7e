/**
 * Safe retries and webhook controls (issue 30, items 7 and 8): Idempotency-Key on POSTs that create
 * or change something (the same answer, secret included, for 24 hours; kept only sealed), one
 * webhook per URL, enabled_events, pause, the secret roll with both signatures for 24 hours, and
 * the delivery id and attempt on every delivery. Real receiver over HTTPS, real SQLite.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import type { ReceivedRequest } from '../helpers/https-receiver.js';
import { createDeliveryWorker } from '../../src/webhooks/webhooks.worker.js';
import { HOUR } from '../../src/lib/clock.js';
import { deliveriesOf, receiverAppForFile, registerWebhook, storeEvent } from './support.js';

const env = receiverAppForFile();

/** The signature values of a delivery, as a receiver splits them. */
function signatures(req: ReceivedRequest): string[] {
  return String(req.headers['x-gateway-signature']).split(',');
}
function signed(req: ReceivedRequest, secret: string): string {
  return `sha256=${createHmac('sha256', secret)
    .update(`${String(req.headers['x-gateway-timestamp'])}.${req.rawBody}`)
    .digest('hex')}`;
}

async function deliverAll(): Promise<void> {
  await createDeliveryWorker(env.t.deps).drain();
}

test('registering a URL that already is an active webhook answers 200 with it, and makes no second one', async () => {
  const first = await env.owner.client.post('/webhooks', { url: env.rx.url('/once') });
  assert.equal(first.status, 201);
  const again = await env.owner.client.post('/webhooks', { url: env.rx.url('/once') });
  assert.equal(again.status, 200);
  assert.equal(again.body.webhook.id, first.body.webhook.id);
  assert.equal(again.body.secret, undefined, 'the secret is not shown again');
  const event = await storeEvent(env.t, env.owner.merchant.id);
  assert.equal((await deliveriesOf(env.t, event.id)).filter((d) => d.webhookId === first.body.webhook.id).length, 1);
  // Deleted, the URL can be registered anew (a new webhook, a new secret).
  await env.owner.client.delete(`/webhooks/${first.body.webhook.id}`);
  const anew = await env.owner.client.post('/webhooks', { url: env.rx.url('/once') });
  assert.equal(anew.status, 201);
  assert.notEqual(anew.body.webhook.id, first.body.webhook.id);
  await env.owner.client.delete(`/webhooks/${anew.body.webhook.id}`);
});

test('Idempotency-Key: a lost answer to a key roll is recovered with the same secret; the answer is kept only sealed, for 24 hours', async () => {
  const key = await env.owner.client.post('/api-keys', { name: 'server' });
  const headers = { 'idempotency-key': 'roll-1' };
  const roll = await env.owner.client.post(`/api-keys/${key.body.api_key.id}/roll`, {}, { headers });
  assert.equal(roll.status, 201, roll.text);
  const replay = await env.owner.client.post(`/api-keys/${key.body.api_key.id}/roll`, {}, { headers });
  assert.equal(replay.status, 201);
  assert.equal(replay.headers.get('idempotent-replayed'), 'true');
  assert.equal(replay.body.secret, roll.body.secret, 'the same new secret');
  assert.equal((await env.owner.client.get('/invoices', { bearer: roll.body.secret })).status, 200, 'and it works');
  // Stored sealed: the secret is nowhere in the table.
  const rows = await env.t.deps.db.selectFrom('idempotency_keys').selectAll().execute();
  assert.ok(rows.length >= 1 && !JSON.stringify(rows).includes(roll.body.secret.slice(-20)));
  // The same key for another request: refused, nothing done.
  const other = await env.owner.client.post('/webhooks', { url: env.rx.url('/idem') }, { headers });
  assert.equal(other.status, 409);
  assert.equal(other.body.error.code, 'idempotency_key_reused');
  // After 24 hours the key is forgotten and the answer deleted.
  env.t.clock.advance(24 * HOUR + 1);
  const later = await env.owner.client.post(`/api-keys/${roll.body.api_key.id}/roll`, {}, { headers });
  assert.equal(later.status, 201);
  assert.notEqual(later.body.secret, roll.body.secret);
  const left = await env.t.deps.db.selectFrom('idempotency_keys').select('created_at').execute();
  assert.ok(
    left.every((r) => r.created_at === env.t.clock.now()),
    'expired answers are deleted',
  );
});

test('Idempotency-Key on POST /webhooks: a retry gets the same webhook and the same secret; an error answer releases the key', async () => {
  const headers = { 'idempotency-key': 'hook-1' };
  const bad = await env.owner.client.post('/webhooks', { url: 'http://insecure.example.test/' }, { headers });
  assert.equal(bad.status, 400);
  const first = await env.owner.client.post('/webhooks', { url: env.rx.url('/idem-hook') }, { headers });
  assert.equal(first.status, 201, first.text);
  const retry = await env.owner.client.post('/webhooks', { url: env.rx.url('/idem-hook') }, { headers });
  assert.equal(retry.status, 201);
  assert.deepEqual(retry.body, first.body);
  await env.owner.client.delete(`/webhooks/${first.body.webhook.id}`);
});

test('enabled_events and pause decide which events a webhook gets', async () => {
  const only = await env.owner.client.post('/webhooks', { url: env.rx.url('/only-confirmed'), enabled_events: ['invoice.confirmed'] });
  assert.equal(only.status, 201, only.text);
  assert.deepEqual(only.body.webhook.enabled_events, ['invoice.confirmed']);
  const all = await registerWebhook(env.owner.client, env.rx.url('/all'));
  const created = await storeEvent(env.t, env.owner.merchant.id, 'invoice.created');
  assert.deepEqual((await deliveriesOf(env.t, created.id)).map((d) => d.webhookId).sort(), [all.id]);
  const confirmed = await storeEvent(env.t, env.owner.merchant.id, 'invoice.confirmed');
  assert.deepEqual((await deliveriesOf(env.t, confirmed.id)).map((d) => d.webhookId).sort(), [all.id, only.body.webhook.id].sort());

  const repeated = await env.owner.client.patch(`/webhooks/${all.id}`, { enabled_events: ['invoice.created', 'invoice.created'] });
  assert.equal(repeated.status, 400);
  const paused = await env.owner.client.patch(`/webhooks/${all.id}`, { active: false });
  assert.equal(paused.status, 200);
  assert.equal(paused.body.webhook.active, false);
  assert.equal(paused.body.webhook.deleted, false);
  const whilePaused = await storeEvent(env.t, env.owner.merchant.id, 'invoice.created');
  assert.deepEqual(await deliveriesOf(env.t, whilePaused.id), []);
  const resumed = await env.owner.client.patch(`/webhooks/${all.id}`, { active: true, enabled_events: null });
  assert.equal(resumed.body.webhook.active, true);
  assert.equal(resumed.body.webhook.enabled_events, null);
  await env.owner.client.delete(`/webhooks/${all.id}`);
  await env.owner.client.delete(`/webhooks/${only.body.webhook.id}`);
  assert.equal((await env.owner.client.patch(`/webhooks/${all.id}`, { active: true })).body.error.code, 'webhook_inactive');
});

test('roll-secret: for 24 hours deliveries carry sha256=<new>,sha256=<old>; before and after, exactly one value; delivery id and attempt on each', async () => {
  await deliverAll();
  const hook = await registerWebhook(env.owner.client, env.rx.url('/roll'));
  const before = await storeEvent(env.t, env.owner.merchant.id);
  await deliverAll();
  const [one] = env.rx.requests.filter((r) => r.path === '/roll');
  assert.deepEqual(signatures(one!), [signed(one!, hook.secret)]);
  const [delivery] = (await deliveriesOf(env.t, before.id)).filter((d) => d.webhookId === hook.id);
  assert.equal(one!.headers['x-gateway-delivery-id'], delivery!.id);
  assert.equal(one!.headers['x-gateway-attempt'], '1');

  const rolled = await env.owner.client.post(`/webhooks/${hook.id}/roll-secret`);
  assert.equal(rolled.status, 200, rolled.text);
  assert.notEqual(rolled.body.secret, hook.secret);
  assert.equal(rolled.body.webhook.previous_secret_expires_at, new Date(env.t.clock.now() + 24 * HOUR).toISOString());
  env.rx.requests.length = 0;
  await storeEvent(env.t, env.owner.merchant.id);
  await deliverAll();
  const [two] = env.rx.requests.filter((r) => r.path === '/roll');
  assert.deepEqual(signatures(two!), [signed(two!, rolled.body.secret), signed(two!, hook.secret)]);

  env.t.clock.advance(24 * HOUR + 1000);
  env.rx.requests.length = 0;
  await storeEvent(env.t, env.owner.merchant.id);
  await deliverAll();
  const [three] = env.rx.requests.filter((r) => r.path === '/roll');
  assert.deepEqual(signatures(three!), [signed(three!, rolled.body.secret)]);
  await env.owner.client.delete(`/webhooks/${hook.id}`);
});

test('a failed delivery is attempted again with the same delivery id and the next attempt number', async () => {
  await deliverAll();
  const hook = await registerWebhook(env.owner.client, env.rx.url('/retry'));
  env.rx.answer(503);
  await storeEvent(env.t, env.owner.merchant.id);
  await deliverAll();
  env.rx.answer(200);
  env.t.clock.advance(HOUR);
  await deliverAll();
  const got = env.rx.requests.filter((r) => r.path === '/retry');
  assert.equal(got.length, 2);
  assert.equal(got[0]!.headers['x-gateway-delivery-id'], got[1]!.headers['x-gateway-delivery-id']);
  assert.deepEqual(
    got.map((r) => r.headers['x-gateway-attempt']),
    ['1', '2'],
  );
  await env.owner.client.delete(`/webhooks/${hook.id}`);
});
