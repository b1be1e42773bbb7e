import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signedInMerchant, type SignedIn } from '../helpers/fixtures.js';
import { startHttpsReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';
import { listDeliveries, listWebhooks } from '../../src/webhooks/webhooks.repo.js';
import { toDeliveryResponse, toWebhookResponse } from '../../src/webhooks/webhooks.schemas.js';
import { createDeliveryWorker } from '../../src/webhooks/webhooks.worker.js';
import { deliveryOf, registerWebhook, storeEvent, verifySignature } from './support.js';

let rx: HttpsReceiver;
let t: TestApp;
let owner: SignedIn;

before(async () => {
  rx = await startHttpsReceiver();
  t = await startTestApp({ config: { webhooks: rx.webhookConfig({ timeout_seconds: 2 }) } });
  owner = await signedInMerchant(t);
});
after(async () => {
  await t.close();
  await rx.close();
});
beforeEach(() => {
  rx.answer(200);
  rx.requests.length = 0;
});

test('POST /webhooks: 201 with the webhook and its secret, shown once', async () => {
  const res = await owner.client.post('/webhooks', { url: rx.url('/created') });
  assert.equal(res.status, 201);
  assert.deepEqual(Object.keys(res.body).sort(), ['secret', 'webhook']);
  assert.match(res.body.secret, /^whsec_[A-Za-z0-9_-]{43}$/);
  const w = res.body.webhook;
  assert.match(w.id, /^whk_/);
  assert.equal(w.url, rx.url('/created'));
  assert.equal(w.active, true);
  assert.equal(w.created_at, new Date(t.clock.now()).toISOString());
  assert.deepEqual(Object.keys(w).sort(), ['active', 'created_at', 'deleted', 'enabled_events', 'id', 'previous_secret_expires_at', 'url']);
  const second = await owner.client.post('/webhooks', { url: rx.url('/created-too') });
  assert.notEqual(second.body.secret, res.body.secret, 'every webhook has its own secret');

  // The lists the Dashboard uses never carry the secret.
  const listed = (await listWebhooks(t.deps.db, owner.merchant.id)).map((x) => toWebhookResponse(x, t.clock.now()));
  assert.ok(listed.some((x) => x.id === w.id));
  assert.ok(!JSON.stringify(listed).includes('whsec_'));
  assert.ok(!t.logText().includes(res.body.secret));
  await owner.client.delete(`/webhooks/${w.id}`);
  await owner.client.delete(`/webhooks/${second.body.webhook.id}`);
});

test('at most 16 active webhooks: the 17th is 409 webhook_limit_reached until one is deleted', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 16; i++) ids.push((await registerWebhook(owner.client, rx.url(`/n${i}`))).id);
  const over = await owner.client.post('/webhooks', { url: rx.url('/n16') });
  assert.equal(over.status, 409);
  assert.equal(over.body.error.code, 'webhook_limit_reached');
  // Another merchant has its own 16.
  const other = await signedInMerchant(t);
  const theirs = await registerWebhook(other.client, rx.url('/theirs'));
  await owner.client.delete(`/webhooks/${ids[0]}`);
  const again = await owner.client.post('/webhooks', { url: rx.url('/n16') });
  assert.equal(again.status, 201);
  ids.push(again.body.webhook.id);
  for (const id of ids) await owner.client.delete(`/webhooks/${id}`);
  await other.client.delete(`/webhooks/${theirs.id}`);
});

test('POST /webhooks/{id}/test: a signed webhook.test to that webhook only, first attempt in the answer', async () => {
  const target = await registerWebhook(owner.client, rx.url('/target'));
  const bystander = await registerWebhook(owner.client, rx.url('/bystander'));
  const res = await owner.client.post(`/webhooks/${target.id}/test`, {});
  assert.equal(res.status, 200, res.text);
  const { event, deliveries } = res.body;
  assert.match(event.id, /^evt_/);
  assert.equal(event.type, 'webhook.test');
  assert.equal(event.mode, 'live');
  assert.deepEqual(event.data, { webhook_id: target.id });
  assert.equal(deliveries.length, 1);
  assert.equal(deliveries[0].webhook_id, target.id);
  assert.equal(deliveries[0].event_id, event.id);
  assert.equal(deliveries[0].status, 'delivered');
  assert.equal(deliveries[0].attempts, 1);
  assert.equal(deliveries[0].response_status, 200);
  assert.equal(deliveries[0].next_attempt_at, null);
  assert.equal(deliveries[0].delivered_at, new Date(t.clock.now()).toISOString());
  assert.deepEqual(
    rx.requests.map((r) => r.path),
    ['/target'],
  );
  assert.ok(verifySignature(rx.requests[0]!, target.secret));
  assert.deepEqual(JSON.parse(rx.requests[0]!.rawBody), event);
  // An empty POST body is accepted as {}; a body with fields is not.
  assert.equal((await owner.client.request('POST', `/webhooks/${target.id}/test`)).status, 200);
  assert.equal((await owner.client.post(`/webhooks/${target.id}/test`, { x: 1 })).body.error.code, 'validation_error');

  // A failing receiver: the answer shows the failed first attempt and the planned retry.
  rx.answer(503);
  const failing = await owner.client.post(`/webhooks/${target.id}/test`, {});
  assert.equal(failing.status, 200);
  const d = failing.body.deliveries[0];
  assert.equal(d.status, 'pending');
  assert.equal(d.attempts, 1);
  assert.equal(d.response_status, 503);
  assert.equal(d.last_error, 'HTTP 503');
  assert.ok(Date.parse(d.next_attempt_at) > t.clock.now());

  const other = await signedInMerchant(t);
  assert.equal((await other.client.post(`/webhooks/${target.id}/test`, {})).status, 404, "someone else's webhook does not exist for them");
  assert.equal((await owner.client.post('/webhooks/whk_nope/test', {})).status, 404);
  await owner.client.delete(`/webhooks/${target.id}`);
  await owner.client.delete(`/webhooks/${bystander.id}`);
});

test('POST /webhooks/deliveries/{id}/retry: one attempt now for a pending delivery; delivered is 409; others 404', async () => {
  rx.answer(503);
  const hook = await registerWebhook(owner.client, rx.url('/retry'));
  const event = await storeEvent(t, owner.merchant.id);
  const worker = createDeliveryWorker(t.deps);
  await worker.drain();
  const pending = await deliveryOf(t, event.id, hook.id);
  assert.equal(pending.status, 'pending');
  assert.equal(pending.attempts, 1);

  // Still failing: the attempt counts and the schedule moves on from there.
  const failedAgain = await owner.client.post(`/webhooks/deliveries/${pending.id}/retry`, {});
  assert.equal(failedAgain.status, 200);
  assert.equal(failedAgain.body.delivery.status, 'pending');
  assert.equal(failedAgain.body.delivery.attempts, 2);

  const other = await signedInMerchant(t);
  assert.equal((await other.client.post(`/webhooks/deliveries/${pending.id}/retry`, {})).status, 404);
  assert.equal((await owner.client.post('/webhooks/deliveries/dlv_nope/retry', {})).status, 404);

  rx.answer(200);
  const ok = await owner.client.post(`/webhooks/deliveries/${pending.id}/retry`, {});
  assert.equal(ok.status, 200);
  assert.equal(ok.body.delivery.status, 'delivered');
  assert.equal(ok.body.delivery.attempts, 3);
  assert.equal(rx.requests.length, 3);
  const done = await owner.client.post(`/webhooks/deliveries/${pending.id}/retry`, {});
  assert.equal(done.status, 409);
  assert.equal(done.body.error.code, 'delivery_not_retryable');

  const listed = (await listDeliveries(t.deps.db, owner.merchant.id)).map(toDeliveryResponse);
  const mine = listed.find((x) => x.id === pending.id)!;
  assert.equal(mine.status, 'delivered');
  assert.deepEqual(Object.keys(mine).sort(), [
    'attempts',
    'created_at',
    'delivered_at',
    'event_id',
    'id',
    'last_error',
    'next_attempt_at',
    'response_status',
    'status',
    'webhook_id',
  ]);
  await owner.client.delete(`/webhooks/${hook.id}`);
});

test('test events and manual retries are rate limited per account: 429 with Retry-After', async () => {
  const o = await signedInMerchant(t);
  const hook = await registerWebhook(o.client, rx.url('/limited'));
  for (let i = 0; i < 30; i++) assert.equal((await o.client.post(`/webhooks/${hook.id}/test`, {})).status, 200);
  const limited = await o.client.post(`/webhooks/${hook.id}/test`, {});
  assert.equal(limited.status, 429);
  assert.equal(limited.body.error.code, 'rate_limited');
  assert.ok(Number(limited.headers.get('retry-after')) >= 1);
  assert.equal((await o.client.post('/webhooks/deliveries/dlv_any/retry', {})).status, 429, 'retries share the budget');
  assert.equal((await owner.client.post(`/webhooks/${hook.id}/test`, {})).status, 404, 'other accounts are not affected (and see 404)');
  t.clock.advance(60_000);
  assert.equal((await o.client.post(`/webhooks/${hook.id}/test`, {})).status, 200);
  await o.client.delete(`/webhooks/${hook.id}`);
});

test('webhook routes are in the OpenAPI document with their error responses', async () => {
  const doc = (await t.client().get('/openapi.json')).body;
  assert.ok(doc.paths['/api/v1/webhooks'].post.responses['409']);
  assert.ok(doc.paths['/api/v1/webhooks/{id}'].delete);
  assert.ok(doc.paths['/api/v1/webhooks/{id}/test'].post.responses['200']);
  assert.ok(doc.paths['/api/v1/webhooks/deliveries/{id}/retry'].post.responses['409']);
  for (const name of ['Webhook', 'Delivery', 'Event', 'CreatedWebhook']) assert.ok(doc.components.schemas[name], name);
});

test('a wrong method under /webhooks is 405 and an unknown path 404, signed in or not (the session guard is per route)', async () => {
  for (const client of [owner.client, t.client()]) {
    const put = await client.request('PUT', '/webhooks/whk_x', {});
    assert.equal(put.status, 405, put.text);
    assert.equal(put.body.error.code, 'method_not_allowed');
    const get = await client.get('/webhooks');
    assert.equal(get.status, 405, get.text);
    const unknown = await client.get('/webhooks/whk_x/nothing');
    assert.equal(unknown.status, 404, unknown.text);
  }
  assert.equal((await t.client().post('/webhooks', { url: rx.url('/x') })).status, 401, 'the guard still applies to the real routes');
});
