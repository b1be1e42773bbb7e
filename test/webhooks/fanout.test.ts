import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signedInMerchant, type SignedIn } from '../helpers/fixtures.js';
import { startHttpsReceiver, type HttpsReceiver } from '../helpers/https-receiver.js';
import { createDeliveryWorker, type DeliveryWorker } from '../../src/webhooks/webhooks.worker.js';
import { DAY } from '../../src/lib/clock.js';
import { deliveriesOf, deliveryOf, registerWebhook, storeEvent, verifySignature } from './support.js';

let rx: HttpsReceiver;
let t: TestApp;
let owner: SignedIn;
let worker: DeliveryWorker;

before(async () => {
  rx = await startHttpsReceiver();
  t = await startTestApp({ config: { webhooks: rx.webhookConfig({ timeout_seconds: 1.5 }) } });
  owner = await signedInMerchant(t);
  worker = createDeliveryWorker(t.deps);
});
after(async () => {
  await worker.idle();
  await t.close();
  await rx.close();
});
beforeEach(() => {
  rx.answer(200);
  rx.requests.length = 0;
});

test('every event fans out to each active webhook of its merchant, each signed with its own secret', async () => {
  const a = await registerWebhook(owner.client, rx.url('/a'));
  const b = await registerWebhook(owner.client, rx.url('/b'));
  const c = await registerWebhook(owner.client, rx.url('/c'));
  assert.equal((await owner.client.delete(`/webhooks/${c.id}`)).status, 200);
  const other = await signedInMerchant(t);
  const foreign = await registerWebhook(other.client, rx.url('/foreign'));

  const event = await storeEvent(t, owner.merchant.id, 'invoice.confirmed', { invoice: { id: 'inv_9' }, transaction: { tx_hash: 'ab'.repeat(32) } });
  const stored = await deliveriesOf(t, event.id);
  assert.deepEqual(stored.map((d) => d.webhookId).sort(), [a.id, b.id].sort(), 'one delivery per active webhook of this merchant, none for others');
  assert.ok(stored.every((d) => d.status === 'pending' && d.attempts === 0 && d.nextAttemptAt === t.clock.now()));

  await worker.drain();
  const byPath = new Map(rx.requests.map((r) => [r.path, r]));
  assert.deepEqual([...byPath.keys()].sort(), ['/a', '/b']);
  assert.ok(verifySignature(byPath.get('/a')!, a.secret));
  assert.ok(verifySignature(byPath.get('/b')!, b.secret));
  assert.ok(!verifySignature(byPath.get('/a')!, b.secret), "one webhook's secret does not verify another's delivery");
  assert.equal(byPath.get('/a')!.rawBody, byPath.get('/b')!.rawBody, 'the same event body');
  for (const d of await deliveriesOf(t, event.id)) assert.equal(d.status, 'delivered');
  await owner.client.delete(`/webhooks/${a.id}`);
  await owner.client.delete(`/webhooks/${b.id}`);
  await other.client.delete(`/webhooks/${foreign.id}`);
});

test('DELETE cancels pending deliveries; a deleted webhook gets nothing more', async () => {
  rx.answer(503);
  const hook = await registerWebhook(owner.client, rx.url('/gone'));
  const first = await storeEvent(t, owner.merchant.id);
  await worker.drain();
  const second = await storeEvent(t, owner.merchant.id);
  assert.equal((await deliveryOf(t, first.id, hook.id)).attempts, 1);
  const sentBefore = rx.requests.length;

  const del = await owner.client.delete(`/webhooks/${hook.id}`);
  assert.equal(del.status, 200);
  assert.deepEqual(del.body, { success: true });
  for (const e of [first, second]) {
    const d = await deliveryOf(t, e.id, hook.id);
    assert.equal(d.status, 'cancelled');
    assert.equal(d.nextAttemptAt, null);
  }
  t.clock.advance(2 * DAY);
  await worker.drain();
  const third = await storeEvent(t, owner.merchant.id);
  assert.deepEqual(await deliveriesOf(t, third.id), [], 'new events do not fan out to it');
  assert.equal(rx.requests.length, sentBefore);

  const test409 = await owner.client.post(`/webhooks/${hook.id}/test`, {});
  assert.equal(test409.status, 409);
  assert.equal(test409.body.error.code, 'webhook_inactive');
  const d = await deliveryOf(t, first.id, hook.id);
  const retry = await owner.client.post(`/webhooks/deliveries/${d.id}/retry`, {});
  assert.equal(retry.status, 409);
  assert.equal(retry.body.error.code, 'delivery_not_retryable');
  // Deleting again is harmless; another merchant cannot see it at all.
  assert.equal((await owner.client.delete(`/webhooks/${hook.id}`)).status, 200);
  const other = await signedInMerchant(t);
  assert.equal((await other.client.delete(`/webhooks/${hook.id}`)).status, 404);
});

test('an attempt in flight when its webhook is deleted is recorded as cancelled if it fails', async () => {
  rx.answer('hang');
  const hook = await registerWebhook(owner.client, rx.url('/inflight'));
  const event = await storeEvent(t, owner.merchant.id);
  assert.equal(await worker.runOnce(), true);
  await rx.waitFor(1);
  const inFlight = await deliveryOf(t, event.id, hook.id);
  assert.equal(inFlight.status, 'sending');
  const busy = await owner.client.post(`/webhooks/deliveries/${inFlight.id}/retry`, {});
  assert.equal(busy.status, 409, 'an attempt in flight is not started twice');
  assert.equal(busy.body.error.code, 'delivery_not_retryable');
  assert.equal((await owner.client.delete(`/webhooks/${hook.id}`)).status, 200);
  await worker.idle();
  const d = await deliveryOf(t, event.id, hook.id);
  assert.equal(d.status, 'cancelled');
  assert.equal(d.attempts, 1);
  assert.match(d.lastError!, /timed out/);
});

// The time-out ends the test if the fast receiver waited for the slow one (that is the failure).
test('a receiver that hangs does not hold up deliveries to others', { timeout: 50_000 }, async () => {
  // Its own gateway whose time-out (60 s) no load on the test machine can reach: the hanging
  // attempts stay in flight until the receiver lets them go, so "served while the slow one hangs"
  // is checked by state (the slow attempts are still in flight when all ten fast ones are
  // delivered), not by a wall-clock limit.
  const t2 = await startTestApp({ config: { webhooks: rx.webhookConfig({ timeout_seconds: 60 }) } });
  const w2 = createDeliveryWorker(t2.deps);
  // Settled at once (never an unhandled rejection), awaited before the app closes: a failed
  // assertion below then reports itself, not the drain that outlived the database.
  let drained: Promise<unknown> = Promise.resolve(undefined);
  try {
    const o = await signedInMerchant(t2);
    rx.answer((req) => (req.path === '/slow' ? 'hang' : 200));
    const slow = await registerWebhook(o.client, rx.url('/slow'));
    const fast = await registerWebhook(o.client, rx.url('/fast'));
    for (let i = 0; i < 10; i++) await storeEvent(t2, o.merchant.id);
    const count = async (webhookId: string, status: string) =>
      (
        await t2.deps.db
          .selectFrom('deliveries')
          .select('id')
          .where('webhook_id', '=', webhookId)
          .where('status', '=', status as 'pending')
          .execute()
      ).length;

    drained = w2.drain().then(
      () => undefined,
      (err: unknown) => err,
    );
    while (rx.requests.filter((r) => r.path === '/fast').length < 10 || (await count(fast.id, 'delivered')) < 10) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const inFlightSlow = await count(slow.id, 'sending');
    assert.ok(inFlightSlow >= 1 && inFlightSlow <= 4, `1 to 4 attempts in flight to the hanging webhook (saw ${inFlightSlow})`);
    assert.equal(rx.requests.filter((r) => r.path === '/slow').length, inFlightSlow, 'no more than its share of slots');
    assert.equal(await count(slow.id, 'delivered'), 0);
    assert.equal(w2.inFlight, inFlightSlow, 'the slow attempts are still hanging: the fast ones did not wait for them');

    // Release: the hanging connections are cut, the rest of /slow is answered.
    rx.answer(200);
    await rx.down();
    await rx.up();
    const drainError = await drained;
    if (drainError !== undefined) throw drainError;
    assert.equal(await count(fast.id, 'delivered'), 10);
    assert.equal(await count(slow.id, 'sending'), 0);
    assert.equal((await count(slow.id, 'delivered')) + (await count(slow.id, 'pending')), 10);
  } finally {
    // Whatever failed above: let the hanging attempts go so the drain ends before the database closes.
    rx.answer(200);
    await rx.down();
    await rx.up();
    await drained;
    await w2.idle();
    await t2.close();
  }
});
