/**
 * How long a quiet tenant's delivery waits while another tenant attacks the delivery slots: the
 * attacker has 16 webhooks whose receivers never answer and 40 events queued before (640 deliveries
 * due first); the quiet tenant then stores events one at a time. Prints, per quiet event, the time
 * from the event to its arrival at the real loopback HTTPS receiver, run by the serve loop itself.
 * `npm run bench:webhooks-fairness -- [--timeout 5] [--events 5] [--give-up 15]`
 */
import { parseArgs } from 'node:util';
import { startTestApp } from '../test/helpers/app.js';
import { signedInMerchant } from '../test/helpers/fixtures.js';
import { startHttpsReceiver } from '../test/helpers/https-receiver.js';
import { writeTransaction } from '../src/db/database.js';
import { insertEvent } from '../src/events/events.repo.js';
import { startLoop } from '../src/lib/loop.js';
import { createWorkers } from '../src/workers.js';

const { values } = parseArgs({
  options: {
    timeout: { type: 'string', default: '5' },
    events: { type: 'string', default: '5' },
    'give-up': { type: 'string', default: '15' },
  },
});
const timeoutSeconds = Number(values.timeout);
const quietEvents = Number(values.events);
const giveUpMs = Number(values['give-up']) * 1000;

const rx = await startHttpsReceiver();
rx.answer((req) => (req.path.startsWith('/hang') ? 'hang' : 200));
const t = await startTestApp({ config: { webhooks: rx.webhookConfig({ timeout_seconds: timeoutSeconds }), log: { level: 'error' } } });
const store = (merchantId: string) =>
  writeTransaction(t.deps.db, async (_trx, tx) =>
    insertEvent(tx, { merchantId, type: 'invoice.created', data: { invoice: { id: 'inv_bench' } } }, t.clock.now()),
  );
const arrived = (prefix: string) => rx.requests.filter((r) => r.path.startsWith(prefix)).length;
const until = async (condition: () => boolean, ms: number): Promise<boolean> => {
  const end = Date.now() + ms;
  while (!condition() && Date.now() < end) await new Promise((r) => setTimeout(r, 2));
  return condition();
};

const attacker = await signedInMerchant(t, { name: 'Attacker' });
for (let i = 0; i < 16; i++) await attacker.client.post('/webhooks', { url: rx.url(`/hang/${i}`) });
for (let i = 0; i < 40; i++) await store(attacker.merchant.id);
const quiet = await signedInMerchant(t, { name: 'Quiet' });
await quiet.client.post('/webhooks', { url: rx.url('/quiet') });

const worker = createWorkers(t.deps).find((w) => w.name === 'webhooks')!;
const loop = startLoop({ ...worker, intervalMs: 1000 }, t.deps.log);
t.deps.deliveriesQueued.notify();
await until(() => arrived('/hang/') >= 16, 10_000);
const held = arrived('/hang/');

const latencies: number[] = [];
let gaveUp = 0;
for (let i = 0; i < quietEvents; i++) {
  const started = performance.now();
  await store(quiet.merchant.id);
  t.deps.deliveriesQueued.notify();
  if (await until(() => arrived('/quiet') > i - gaveUp, giveUpMs)) latencies.push(Math.round(performance.now() - started));
  else gaveUp += 1;
}
latencies.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    bench: 'webhooks-fairness',
    timeout_seconds: timeoutSeconds,
    attacker_hanging_requests_when_quiet_starts: held,
    quiet_events: quietEvents,
    quiet_started_ms: latencies,
    quiet_not_started_within_s: { seconds: giveUpMs / 1000, count: gaveUp },
    load: (await import('node:os')).loadavg()[0]!.toFixed(1),
  }),
);
void loop.stop();
process.exit(0);
