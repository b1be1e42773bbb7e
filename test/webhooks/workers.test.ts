import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp } from '../helpers/app.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { startHttpsReceiver } from '../helpers/https-receiver.js';
import { startLoop } from '../../src/lib/loop.js';
import { createWorkers } from '../../src/workers.js';
import { deliveryOf, registerWebhook, storeEvent, verifySignature } from './support.js';

test('the serve loop: deliveriesQueued wakes the delivery worker at once, and stop() waits for attempts in flight', async () => {
  const rx = await startHttpsReceiver();
  const t = await startTestApp({ config: { webhooks: rx.webhookConfig({ timeout_seconds: 5 }) } });
  try {
    const owner = await signedInMerchant(t);
    const hook = await registerWebhook(owner.client, rx.url('/loop'));
    const worker = createWorkers(t.deps).find((w) => w.name === 'webhooks')!;
    // A poll interval far beyond the test's patience: only the wake-up can explain a quick delivery.
    const loop = startLoop({ ...worker, intervalMs: 60_000 }, t.deps.log);
    await new Promise((r) => setTimeout(r, 100));

    const event = await storeEvent(t, owner.merchant.id);
    t.deps.deliveriesQueued.notify();
    const [req] = await rx.waitFor(1, 5000);
    assert.ok(verifySignature(req!, hook.secret));

    // An attempt still in flight when the loop stops is finished and recorded, not abandoned.
    rx.answer((r) => (r.path === '/loop' ? 'hang' : 200));
    const second = await storeEvent(t, owner.merchant.id);
    t.deps.deliveriesQueued.notify();
    await rx.waitFor(2, 5000);
    const stopping = loop.stop();
    // Release the hanging request by cutting it; the attempt ends as a failure and is recorded.
    await rx.down();
    await stopping;
    await rx.up();
    assert.equal((await deliveryOf(t, event.id, hook.id)).status, 'delivered');
    const d = await deliveryOf(t, second.id, hook.id);
    assert.equal(d.status, 'pending');
    assert.equal(d.attempts, 1);
    assert.match(d.lastError!, /reset|socket hang up|ECONNRESET/);
  } finally {
    await t.close();
    await rx.close();
  }
});
