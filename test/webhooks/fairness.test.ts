/**
 * Fair delivery between tenants: one tenant's hanging receivers and backlog cannot hold another
 * tenant's deliveries back; and a delivery whose webhook is deleted after its claim is not sent.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp } from '../helpers/app.js';
import { signedInMerchant } from '../helpers/fixtures.js';
import { startHttpsReceiver } from '../helpers/https-receiver.js';
import { startLoop } from '../../src/lib/loop.js';
import { createWorkers } from '../../src/workers.js';
import { createDeliveryWorker } from '../../src/webhooks/webhooks.worker.js';
import { deliveryOf, registerWebhook, storeEvent } from './support.js';

const TIMEOUT_SECONDS = 5;

async function until(condition: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (condition()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return condition();
}

test("a quiet tenant's delivery starts at once while two other tenants fill their slots with hanging receivers and a backlog", async () => {
  const rx = await startHttpsReceiver();
  rx.answer((req) => (req.path.startsWith('/hang') ? 'hang' : 200));
  const t = await startTestApp({ config: { webhooks: rx.webhookConfig({ timeout_seconds: TIMEOUT_SECONDS }), log: { level: 'warn' } } });
  const workers = createWorkers(t.deps).find((w) => w.name === 'webhooks')!;
  const loop = startLoop({ ...workers, intervalMs: 60_000 }, t.deps.log);
  try {
    // The attacker: 16 endpoints that never answer and 40 invoices, 640 deliveries due first.
    const attacker = await signedInMerchant(t, { name: 'Attacker' });
    for (let i = 0; i < 16; i++) await registerWebhook(attacker.client, rx.url(`/hang/a${i}`));
    for (let i = 0; i < 40; i++) await storeEvent(t, attacker.merchant.id);
    // A second account doing the same with 4 endpoints.
    const accomplice = await signedInMerchant(t, { name: 'Accomplice' });
    for (let i = 0; i < 4; i++) await registerWebhook(accomplice.client, rx.url(`/hang/b${i}`));
    for (let i = 0; i < 10; i++) await storeEvent(t, accomplice.merchant.id);
    const quiet = await signedInMerchant(t, { name: 'Quiet shop' });
    await registerWebhook(quiet.client, rx.url('/quiet'));

    t.deps.deliveriesQueued.notify();
    const hanging = () => rx.requests.filter((r) => r.path.startsWith('/hang/'));
    await rx.waitFor(16, 5000);
    await new Promise((r) => setTimeout(r, 200));
    const heldBefore = hanging();

    // The quiet tenant's invoice.created: started long before any hanging attempt times out.
    const started = Date.now();
    await storeEvent(t, quiet.merchant.id);
    t.deps.deliveriesQueued.notify();
    const arrived = await until(() => rx.requests.some((r) => r.path === '/quiet'), (TIMEOUT_SECONDS - 1) * 1000);
    assert.ok(arrived, `the quiet tenant's delivery did not start within ${TIMEOUT_SECONDS - 1} s`);
    assert.ok(Date.now() - started < TIMEOUT_SECONDS * 1000);
    const a = heldBefore.filter((r) => r.path.startsWith('/hang/a')).length;
    const b = heldBefore.filter((r) => r.path.startsWith('/hang/b')).length;
    assert.ok(a <= 16, `the attacker holds at most 16 slots (held ${a})`);
    assert.ok(b >= 1, 'the second tenant got slots too');
    assert.equal(a + b, 16, 'the last 4 slots stay free for tenants with nothing in flight');
    assert.ok(await until(() => rx.requests.filter((r) => r.path === '/quiet').length === 1, 1000));
    // And its next one as well: its slot is back as soon as the first attempt is recorded.
    await storeEvent(t, quiet.merchant.id);
    t.deps.deliveriesQueued.notify();
    assert.ok(await until(() => rx.requests.filter((r) => r.path === '/quiet').length === 2, (TIMEOUT_SECONDS - 1) * 1000));
    assert.ok(hanging().length <= 20, 'never more attempts in flight than slots');
  } finally {
    const stopping = loop.stop();
    await rx.down();
    await stopping;
    await t.close();
    await rx.close();
  }
});

test('within one merchant, an endpoint that hangs with a backlog does not hold back its other endpoint', async () => {
  const rx = await startHttpsReceiver();
  rx.answer((req) => (req.path.startsWith('/hang') ? 'hang' : 200));
  const t = await startTestApp({ config: { webhooks: rx.webhookConfig({ timeout_seconds: TIMEOUT_SECONDS }), log: { level: 'warn' } } });
  const worker = createDeliveryWorker(t.deps);
  try {
    const shop = await signedInMerchant(t);
    await registerWebhook(shop.client, rx.url('/hang/own'));
    await registerWebhook(shop.client, rx.url('/fast'));
    for (let i = 0; i < 30; i++) await storeEvent(t, shop.merchant.id);
    const started = Date.now();
    while (rx.requests.filter((r) => r.path === '/fast').length < 30 && Date.now() - started < (TIMEOUT_SECONDS - 1) * 1000) {
      if (!(await worker.runOnce())) await new Promise((r) => setTimeout(r, 5));
    }
    assert.equal(
      rx.requests.filter((r) => r.path === '/fast').length,
      30,
      'every delivery to the answering endpoint went out before the hanging ones timed out',
    );
    assert.equal(rx.requests.filter((r) => r.path === '/hang/own').length, 4, 'the hanging endpoint holds at most 4 slots');
  } finally {
    await rx.down();
    await worker.idle();
    await t.close();
    await rx.close();
  }
});

test('a delivery whose webhook is deleted between its claim and its send is cancelled, not sent', async () => {
  const rx = await startHttpsReceiver();
  const t = await startTestApp({ config: { webhooks: rx.webhookConfig({ timeout_seconds: TIMEOUT_SECONDS }) } });
  try {
    const shop = await signedInMerchant(t);
    const hook = await registerWebhook(shop.client, rx.url('/deleted'));
    const event = await storeEvent(t, shop.merchant.id);
    const delivery = await deliveryOf(t, event.id, hook.id);
    const worker = createDeliveryWorker(t.deps);
    // The worker has claimed it (as a pass does) ...
    assert.ok(await worker.deliverer.claim(delivery.id, ['pending']));
    // ... and the owner deletes the webhook before the attempt sends anything.
    assert.equal((await shop.client.delete(`/webhooks/${hook.id}`)).status, 200);
    const after = await worker.deliverer.attempt(delivery.id);
    assert.equal(rx.requests.length, 0, 'nothing reached the deleted endpoint');
    assert.equal(after!.status, 'cancelled');
    assert.equal(after!.attempts, 0, 'no attempt was made');
    assert.match(after!.lastError ?? '', /deleted/);
  } finally {
    await t.close();
    await rx.close();
  }
});
