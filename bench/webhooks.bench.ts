/**
 * Deliveries per second from the real worker to a real local HTTPS receiver: every attempt
 * re-checks the URL, signs, opens a fresh TLS connection to the checked address, and records the
 * outcome durably (synchronous=FULL).
 * With --hang, a further webhook whose receiver never answers is registered too: the figure is then
 * the rate to the fast ones while the hung attempts hold their slots until the timeout.
 * `npm run bench:webhooks -- --events 1000 --webhooks 4 [--concurrency 16] [--per-webhook 4] [--hang]`
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
    hang: { type: 'boolean', default: false },
  },
});
const events = Number(values.events);
const webhooks = Number(values.webhooks);
const concurrency = Number(values.concurrency);
const perWebhook = Number(values['per-webhook']);
const hang = values.hang;

const rx = await startHttpsReceiver();
const deliveredCount = async () => (await t.deps.db.selectFrom('deliveries').select('id').where('status', '=', 'delivered').execute()).length;
const t = await startTestApp({ config: { webhooks: rx.webhookConfig(), log: { level: 'warn' } } });
try {
  const owner = await signedInMerchant(t);
  for (let i = 0; i < webhooks; i++) {
    const res = await owner.client.post('/webhooks', { url: rx.url(`/bench/${i}`) });
    if (res.status !== 201) throw new Error(`register: ${res.text}`);
  }
  if (hang) {
    const res = await owner.client.post('/webhooks', { url: rx.url('/hang') });
    if (res.status !== 201) throw new Error(`register: ${res.text}`);
    rx.answer((req) => (req.path.startsWith('/hang') ? 'hang' : 200));
  }
  await writeTransaction(t.deps.db, async (_trx, tx) => {
    for (let i = 0; i < events; i++) {
      await insertEvent(
        tx,
        { merchantId: owner.merchant.id, type: 'invoice.created', data: { invoice: { id: `inv_${i}`, payable_amount: '12.000042' } } },
        t.clock.now(),
      );
    }
  });
  const total = events * webhooks;
  const worker = createDeliveryWorker(t.deps, { concurrency, perWebhook });
  const started = performance.now();
  const fast = () => rx.requests.filter((r) => r.path.startsWith('/bench/')).length;
  if (hang) {
    // Passes until every fast delivery is received and recorded; the hung ones are still in flight.
    while (fast() < total || (await deliveredCount()) < total) {
      if (!(await worker.runOnce())) await new Promise((r) => setTimeout(r, 1));
    }
  } else {
    await worker.drain();
  }
  const seconds = (performance.now() - started) / 1000;
  const delivered = await deliveredCount();
  if (delivered !== total || fast() !== total) {
    throw new Error(`expected ${total} deliveries, got ${delivered} delivered and ${fast()} received`);
  }
  console.log(
    JSON.stringify({
      bench: 'webhooks',
      deliveries: total,
      webhooks,
      concurrency,
      per_webhook: perWebhook,
      hanging_webhook: hang,
      seconds: Math.round(seconds * 100) / 100,
      deliveries_per_second: Math.round(total / seconds),
    }),
  );
} finally {
  if (hang) process.exit(0);
  await t.close();
  await rx.close();
}
