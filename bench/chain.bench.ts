/**
 * Chain watcher figures (`npm run bench:chain`), against the loopback TronGrid stand-in:
 *  1. latency from a transfer becoming visible to its invoice being confirmed, with the event and
 *     its webhook deliveries queued in the same transaction: one pass right away (processing
 *     only), and the real loop (processing + waiting for the next poll);
 *  2. TronGrid requests per poll and pass duration with 1, 100 and 1 000 watched addresses.
 * Real wall clock; the numbers are printed, never asserted.
 */
import { performance } from 'node:perf_hooks';
import { chainWorker, createChainRuntime, runOnce } from '../src/chain/chain.worker.js';
import { startLoop } from '../src/lib/loop.js';
import { systemClock, MINUTE } from '../src/lib/clock.js';
import { newId } from '../src/lib/ids.js';
import { startTestApp, type TestApp } from '../test/helpers/app.js';
import { insertInvoice, newMerchantId } from '../test/helpers/chain-fixtures.js';
import { startTronGrid, type FakeTronGrid } from '../test/helpers/trongrid.js';
import { randomAddress } from '../test/helpers/tron-samples.js';

async function setup(pollSeconds: number): Promise<{ t: TestApp; tg: FakeTronGrid; close(): Promise<void> }> {
  const tg = await startTronGrid();
  const t = await startTestApp({ now: Date.now(), config: { tron: { api_url: tg.url, poll_interval_seconds: pollSeconds }, log: { level: 'warn' } } });
  t.deps.clock = systemClock;
  t.deps.chain = createChainRuntime(t.config, { maxRequestsPerSecond: 0 });
  return {
    t,
    tg,
    async close() {
      await t.close();
      await tg.close();
    },
  };
}

/** A webhook so that confirmation also queues a delivery (the outbox row the delivery worker sends). */
async function addWebhook(t: TestApp, merchantId: string): Promise<void> {
  await t.deps.db.insertInto('webhooks').values({ id: newId('whk'), merchant_id: merchantId, url: 'https://hooks.example.test/in', secret: 'whsec_bench', created_at: Date.now() }).execute();
}

async function confirmedAndQueued(t: TestApp, invoiceId: string): Promise<boolean> {
  const inv = await t.deps.db.selectFrom('invoices').select('status').where('id', '=', invoiceId).executeTakeFirstOrThrow();
  if (inv.status !== 'confirmed') return false;
  const d = await t.deps.db
    .selectFrom('deliveries')
    .innerJoin('events', 'events.id', 'deliveries.event_id')
    .select('deliveries.id')
    .where('events.invoice_id', '=', invoiceId)
    .where('events.type', '=', 'invoice.confirmed')
    .executeTakeFirst();
  return d !== undefined;
}

function stats(samples: number[]): string {
  const s = [...samples].sort((a, b) => a - b);
  const pick = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return `n=${s.length} median=${pick(0.5).toFixed(1)} ms p90=${pick(0.9).toFixed(1)} ms max=${s.at(-1)!.toFixed(1)} ms`;
}

/** Block time of a transfer that has just solidified: the stand-in's head is now - 57 s. */
const justSolidified = (): number => Math.floor((Date.now() - 57_000) / 3000) * 3000;

async function latencyOnePass(): Promise<void> {
  const env = await setup(0.001);
  try {
    const merchantId = await newMerchantId(env.t);
    await addWebhook(env.t, merchantId);
    const samples: number[] = [];
    for (let i = 0; i < 50; i++) {
      const address = randomAddress();
      const amount = 10_000_000n + BigInt(i);
      const inv = await insertInvoice(env.t, { address, amount, merchantId, createdAt: Date.now() - 10 * MINUTE });
      env.tg.pay({ to: address, amount, blockTimestamp: justSolidified() });
      const t0 = performance.now();
      await runOnce(env.t.deps);
      if (!(await confirmedAndQueued(env.t, inv.id))) throw new Error('not confirmed in one pass');
      samples.push(performance.now() - t0);
    }
    console.log(`visible -> confirmed + webhook queued, one pass right away:   ${stats(samples)}`);
  } finally {
    await env.close();
  }
}

async function latencyLoop(pollSeconds: number, count: number): Promise<void> {
  const env = await setup(pollSeconds);
  const loop = startLoop(chainWorker(env.t.deps), env.t.deps.log);
  try {
    const merchantId = await newMerchantId(env.t);
    await addWebhook(env.t, merchantId);
    // One long-lived invoice keeps an address watched so the loop is polling when payments appear.
    const address = randomAddress();
    await insertInvoice(env.t, { address, amount: 1n, merchantId, createdAt: Date.now() - 10 * MINUTE, expiresAt: Date.now() + 60 * MINUTE });
    const samples: number[] = [];
    for (let i = 0; i < count; i++) {
      const amount = 20_000_000n + BigInt(i);
      const inv = await insertInvoice(env.t, { address, amount, merchantId, createdAt: Date.now() - 10 * MINUTE, expiresAt: Date.now() + 60 * MINUTE });
      await new Promise((r) => setTimeout(r, Math.random() * pollSeconds * 1000));
      env.tg.pay({ to: address, amount, blockTimestamp: justSolidified() });
      const t0 = performance.now();
      while (!(await confirmedAndQueued(env.t, inv.id))) await new Promise((r) => setTimeout(r, 2));
      samples.push(performance.now() - t0);
    }
    console.log(`visible -> confirmed + webhook queued, loop every ${pollSeconds} s:        ${stats(samples)}`);
  } finally {
    await loop.stop();
    await env.close();
  }
}

async function requestsPerPoll(addresses: number): Promise<void> {
  const env = await setup(5);
  try {
    const merchantId = await newMerchantId(env.t);
    const created = Date.now() - 10 * MINUTE;
    const watched: string[] = [];
    for (let i = 0; i < addresses; i++) {
      const address = randomAddress();
      watched.push(address);
      await insertInvoice(env.t, { address, amount: 30_000_000n + BigInt(i), merchantId, createdAt: created });
    }
    // Quiet poll: nobody paid.
    env.tg.resetCounts();
    let t0 = performance.now();
    await runOnce(env.t.deps);
    const quietMs = performance.now() - t0;
    const quiet = { total: env.tg.count(), trc20: env.tg.count('trc20'), receipt: env.tg.count('receipt'), head: env.tg.count('nowblock') + env.tg.count('events') };

    // Busy poll: every address received one payment since the last poll.
    watched.forEach((address, i) => env.tg.pay({ to: address, amount: 30_000_000n + BigInt(i), blockTimestamp: justSolidified() }));
    env.t.deps.chain.lastPollAt.clear();
    env.tg.resetCounts();
    t0 = performance.now();
    await runOnce(env.t.deps);
    const busyMs = performance.now() - t0;
    const busy = { total: env.tg.count(), trc20: env.tg.count('trc20'), receipt: env.tg.count('receipt'), head: env.tg.count('nowblock') + env.tg.count('events') };
    console.log(
      `${String(addresses).padStart(5)} addresses | quiet poll: ${quiet.total} requests (${quiet.head} head/index + ${quiet.trc20} history + ${quiet.receipt} receipts) in ${quietMs.toFixed(0)} ms` +
        ` | all paid: ${busy.total} requests (${busy.head} + ${busy.trc20} + ${busy.receipt}) in ${busyMs.toFixed(0)} ms`,
    );
  } finally {
    await env.close();
  }
}

// `node dist/bench/chain.bench.js [latency|requests]` runs one part; no argument runs both.
const part = process.argv[2];
console.log('# chain watcher benchmark (loopback stand-in; real TronGrid adds its round trip per request)');
if (part === undefined || part === 'latency') {
  await latencyOnePass();
  await latencyLoop(1, 15);
}
if (part === undefined || part === 'requests') for (const n of [1, 100, 1000]) await requestsPerPoll(n);
