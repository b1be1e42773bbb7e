/**
 * Deliveries per second from the real worker to a real local HTTPS receiver: every attempt
 * re-checks the URL, signs, opens a fresh TLS connection to the checked address, and records the
 * outcome durably (synchronous=FULL).
 * `npm run bench:webhooks -- --events 1000 --webhooks 4 [--concurrency 16] [--per-webhook 4]`
 */
import { parseArgs } from 'node:util';
import { startTestApp } from '../test/helpers/app.js';
import { signedInMerchant } from '../test/helpers/fixtures.js';
import { startHttpsReceiver } from '../test/helpers/https-receiver.js';
import { writeTransaction } from '../src/db/database.js';
import { insertEvent } from '../src/events/events.repo.js';
import { createDeliveryWorker, DEFAULT_CONCURRENCY, DEFAULT_PER_WEBHOOK } from '../src/webhooks/webhooks.worker.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '500' },
    webhooks: { type: 'string', default: '4' },
    concurrency: { type: 'string', default: String(DEFAULT_CONCURRENCY) },
    'per-webhook': { type: 'string', default: String(DEFAULT_PER_WEBHOOK) },
  },
});
const events = Number(values.events);
const webhooks = Number(values.webhooks);
const concurrency = Number(values.concurrency);
const perWebhook = Number(values['per-webhook']);

const rx = await startHttpsReceiver();
const t = await startTestApp({ config: { webhooks: rx.webhookConfig(), log: { level: 'warn' } } });
try {
  const owner = await signedInMerchant(t);
  for (let i = 0; i < webhooks; i++) {
    const res = await owner.client.post('/webhooks', { url: rx.url(`/bench/${i}`) });
    if (res.status !== 201) throw new Error(`register: ${res.text}`);
  }
  await writeTransaction(t.deps.db, async (trx) => {
    for (let i = 0; i < events; i++) {
      await insertEvent(trx, { merchantId: owner.merchant.id, type: 'invoice.created', data: { invoice: { id: `inv_${i}`, payable_amount: '12.000042' } } }, t.clock.now());
    }
  });
  const total = events * webhooks;
  const worker = createDeliveryWorker(t.deps, { concurrency, perWebhook });
  const started = performance.now();
  await worker.drain();
  const seconds = (performance.now() - started) / 1000;
  const delivered = await t.deps.db.selectFrom('deliveries').select('id').where('status', '=', 'delivered').execute();
  if (delivered.length !== total || rx.requests.length !== total) {
    throw new Error(`expected ${total} deliveries, got ${delivered.length} delivered and ${rx.requests.length} received`);
  }
  console.log(
    JSON.stringify({
      bench: 'webhooks',
      deliveries: total,
      webhooks,
      concurrency,
      per_webhook: perWebhook,
      seconds: Math.round(seconds * 100) / 100,
      deliveries_per_second: Math.round(total / seconds),
    }),
  );
} finally {
  await t.close();
  await rx.close();
}
