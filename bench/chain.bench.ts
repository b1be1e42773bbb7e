/**
 * Chain watcher figures (`npm run bench:chain`), against the simulated TRON node (blocks of 200 to
 * 400 transactions, as on mainnet, with strangers' USDT transfers, TRX transfers, reverted calls,
 * zero-value poisoning and fake tokens):
 *  1. requests and bytes a day for 1, 10, 100 and 1 000 watched addresses (simulated time: the
 *     scanner and the node share a manual clock; 5 s polls; counts scaled to a day);
 *  2. confirmation latency after the paying block's solidification (real clock, real loop, the
 *     node in its own process, mainnet's 3 s blocks and 19-block solidification);
 *  3. backfill speed and peak RSS over a 10 000-block gap, beside the ceiling (the same blocks
 *     fetched and parsed with nothing else done).
 *  4. one provider against two (`providers`): requests and bytes a day PER provider (with two, the
 *     full read of each block takes turns; the other provider counts it, or reads it in full too
 *     when it pays a watched address; with ~24 000 and ~1 000 payments a day; and
 *     tron.cross_check = "ids", every block in full from both), wire (gzip) and
 *     decoded, and the same scaled to mainnet's recorded block sizes (infos ~447 B a transaction
 *     as compact JSON, 2025's 304 a block).
 *  5. the EVM watcher (`evm`): requests and calls a day per provider, idle and busy, 1 to 1 000
 *     watched addresses, one or two providers (bench/lib/evm-cost.ts).
 *  6. the Solana and TON watchers (`solana`, `ton`): requests a day per provider, idle and busy, 1 to
 *     1 000 watched accounts, two providers (bench/lib/account-cost.ts).
 * The numbers are printed, never asserted. BENCH_SECONDS sets the latency run's length (default 60);
 * arguments name the sections to run (`requests`, `latency`, `backfill`, `providers`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { chainWorker, createChainRuntime, runOnce } from '../src/chain/chain.worker.js';
import { startSimulatedTron, type SimulatedTron, type SimulatedTronOptions } from '../src/devnet/tron-node.js';
import { HOUR, MINUTE, SECOND, systemClock } from '../src/lib/clock.js';
import { startLoop } from '../src/lib/loop.js';
import { startTestApp } from '../test/helpers/app.js';
import { insertInvoice, newMerchantId } from '../test/helpers/chain-fixtures.js';
import { randomAddress } from '../test/helpers/tron-samples.js';
import { evmCosts } from './lib/evm-cost.js';
import { accountCosts } from './lib/account-cost.js';

const FILLER: [number, number] = [200, 400];
/** Mainnet's recorded sizes (BENCHMARKS.md): a TransactionInfo about 447 B as compact JSON; 2025 averaged 304 transactions a block. */
const MAINNET_INFO_BYTES_PER_TX = 447;
const MAINNET_TX_PER_BLOCK = 304;
const DAY_S = 86_400;

function stats(samples: number[]): { median: number; max: number; n: number } {
  const s = [...samples].sort((a, b) => a - b);
  return { n: s.length, median: s[Math.floor(s.length / 2)] ?? NaN, max: s.at(-1) ?? NaN };
}

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

async function startNodeProcess(options: SimulatedTronOptions): Promise<{ url: string; child: ChildProcess }> {
  const script = fileURLToPath(new URL('./lib/sim-node-process.js', import.meta.url));
  const child = spawn(process.execPath, [script, JSON.stringify(options)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return { url: (JSON.parse(line) as { url: string }).url, child };
}

/** Figure 1: requests and bytes per day by address count, in simulated time. */
async function requestsPerDay(): Promise<void> {
  const simMinutes = 20;
  console.log(`\n1. Requests and bytes a day (simulated ${simMinutes} min of 5 s polls, scaled to a day; one payment per watched address an hour)`);
  console.log(
    'addresses | requests/day | head reads/day | block reads/day | latest-block reads/day | wire MiB/day (gzip) | decoded MiB/day | pass ms (median)',
  );
  for (const n of [1, 10, 100, 1000]) {
    let clockNow = Date.UTC(2026, 0, 15, 12, 0, 0);
    const addresses = Array.from({ length: n }, () => randomAddress());
    const node = await startSimulatedTron({ now: () => clockNow, fillerPerBlock: FILLER, poisonTargets: addresses.slice(0, 50) });
    const t = await startTestApp({ now: clockNow, config: { tron: { api_url: node.url }, log: { level: 'warn' } } });
    t.deps.chain = createChainRuntime(t.config, { maxRequestsPerSecond: 0 });
    const merchant = await newMerchantId(t);
    const start = t.clock.now();
    for (const [i, address] of addresses.entries())
      await insertInvoice(t, { address, amount: 20_000_000n + BigInt(i), merchantId: merchant, expiresAt: start + 2 * HOUR });
    // Payments spread over the simulated time: each address pays once an hour.
    const payments = Math.max(1, Math.round((n * simMinutes) / 60));
    for (let k = 0; k < payments; k++)
      node.transfer({
        to: addresses[k % n]!,
        amount: 20_000_000n + BigInt(k % n),
        at: start + 2 * MINUTE + Math.floor((k * (simMinutes - 3) * MINUTE) / payments),
      });
    // Warm up (the first pass reads the head and starts at the invoices' creation).
    t.clock.advance(5 * SECOND);
    clockNow = t.clock.now();
    while (await runOnce(t.deps));
    node.resetCounts();
    const before = t.deps.chain.pool.totals();
    const passMs: number[] = [];
    const from = t.clock.now();
    while (t.clock.now() - from < simMinutes * MINUTE) {
      t.clock.advance(5 * SECOND);
      clockNow = t.clock.now();
      const started = performance.now();
      while (await runOnce(t.deps));
      passMs.push(performance.now() - started);
    }
    const scale = DAY_S / ((t.clock.now() - from) / 1000);
    const after = t.deps.chain.pool.totals();
    const confirmed = await t.deps.db
      .selectFrom('invoices')
      .select((eb) => eb.fn.countAll<number>().as('c'))
      .where('status', '=', 'confirmed')
      .executeTakeFirstOrThrow();
    console.log(
      [
        n,
        Math.round(node.count() * scale),
        Math.round(node.count('getblock') * scale),
        Math.round(node.count('blockinfo') * scale),
        // Seen, then final: the latest blocks, every 5 s while an invoice is open (src/chain/seen-read.ts).
        Math.round(node.count('wallet_blockrange') * scale),
        mib(node.bytes() * scale),
        mib((after.bytes - before.bytes) * scale),
        `${stats(passMs).median.toFixed(1)} (${Number(confirmed.c)} of ${payments} payments confirmed)`,
      ].join(' | '),
    );
    await t.close();
    await node.close();
  }
}

/** Figure 2: latency from the paying block's solidification to the confirmation, real loop. */
async function latency(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 60);
  const { url, child } = await startNodeProcess({ fillerPerBlock: FILLER });
  const t = await startTestApp({ now: Date.now(), config: { tron: { api_url: url, poll_interval_seconds: 5 }, log: { level: 'warn' } } });
  t.deps.clock = systemClock;
  t.deps.chain = createChainRuntime(t.config, { maxRequestsPerSecond: 0 });
  try {
    const merchant = await newMerchantId(t);
    const addresses = Array.from({ length: 10 }, () => randomAddress());
    const invoices: Array<{ id: string; address: string; amount: bigint }> = [];
    for (let i = 0; i < 200; i++) {
      const address = addresses[i % 10]!;
      const inv = await insertInvoice(t, {
        address,
        amount: 30_000_000n + BigInt(i),
        merchantId: merchant,
        createdAt: Date.now() - MINUTE,
        expiresAt: Date.now() + HOUR,
      });
      invoices.push({ id: inv.id, address, amount: inv.payableAmount });
    }
    const loop = startLoop(chainWorker(t.deps), t.deps.log);
    const waiting = new Map<string, number>(); // invoice id -> solidification time (ms)
    const samples: number[] = [];
    const watcher = setInterval(() => {
      for (const [id, solidAt] of waiting) {
        const row = t.deps.sqlite.prepare('SELECT status FROM invoices WHERE id = ?').get(id) as { status: string };
        if (row.status === 'confirmed') {
          samples.push(Date.now() - solidAt);
          waiting.delete(id);
        }
      }
    }, 20);
    const until = Date.now() + seconds * 1000;
    let k = 0;
    while (Date.now() < until && k < invoices.length) {
      const inv = invoices[k++]!;
      const res = await fetch(`${url}/_sim/transfer`, { method: 'POST', body: JSON.stringify({ to: inv.address, amount: Number(inv.amount) }) });
      const landed = (await res.json()) as { block_timestamp: number };
      waiting.set(inv.id, landed.block_timestamp + 19 * 3000);
      await new Promise((r) => setTimeout(r, 2500 + Math.random() * 3000));
    }
    const deadline = Date.now() + 90 * SECOND;
    while (waiting.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    clearInterval(watcher);
    await loop.stop();
    const s = stats(samples);
    console.log(`\n2. Confirmation latency after the paying block's solidification (5 s poll, real clock, ${s.n} payments, ${waiting.size} unconfirmed)`);
    console.log(`median ${(s.median / 1000).toFixed(2)} s, max ${(s.max / 1000).toFixed(2)} s (aim: within the poll interval + 1 s = 6 s)`);
  } finally {
    await t.close();
    child.kill('SIGTERM');
  }
}

/** Figure 3: a 10 000-block gap backfilled; blocks/s and peak RSS, beside the bare fetch+parse ceiling. */
async function backfill(): Promise<void> {
  const blocks = 10_000;
  const { url, child } = await startNodeProcess({ fillerPerBlock: FILLER });
  const t = await startTestApp({ now: Date.now(), config: { tron: { api_url: url, poll_interval_seconds: 5 }, log: { level: 'warn' } } });
  t.deps.chain = createChainRuntime(t.config, { maxRequestsPerSecond: 0 });
  try {
    // Ceiling: the same kind of blocks fetched and parsed one after another, nothing else done.
    const head = (await (await fetch(`${url}/walletsolidity/getnowblock`)).json()) as { block_header: { raw_data: { number: number } } };
    const top = head.block_header.raw_data.number;
    const ceilingBlocks = 500;
    let started = performance.now();
    for (let n = top - 20_000; n < top - 20_000 + ceilingBlocks; n++) {
      const res = await fetch(`${url}/walletsolidity/gettransactioninfobyblocknum`, { method: 'POST', body: JSON.stringify({ num: n }) });
      JSON.parse(await res.text());
    }
    const ceiling = ceilingBlocks / ((performance.now() - started) / 1000);

    const merchant = await newMerchantId(t);
    const address = randomAddress();
    await insertInvoice(t, { address, amount: 40_000_001n, merchantId: merchant, createdAt: Date.now() - blocks * 3000, expiresAt: Date.now() + HOUR });
    global.gc?.();
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 50);
    started = performance.now();
    t.clock.set(Date.now());
    while (await runOnce(t.deps)) t.clock.set(Date.now());
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const read = t.deps.chain.pool.totals();
    console.log(`\n3. Backfill of a ${blocks}-block gap (${FILLER[0]}-${FILLER[1]} transactions a block, loopback node in its own process)`);
    console.log(
      `${(read.requests / seconds).toFixed(1)} blocks/s (${read.requests} requests in ${seconds.toFixed(1)} s; ceiling, fetch + JSON.parse alone: ${ceiling.toFixed(1)} blocks/s); ${mib(read.bytes)} MiB decoded`,
    );
    console.log(`RSS: ${mib(baseline)} MiB before, peak ${mib(peak)} MiB during (aim: at least 10 blocks/s, memory bounded)`);
  } finally {
    await t.close();
    child.kill('SIGTERM');
  }
}

/** Figure 4: one provider against two, per provider, 1 000 watched addresses. */
async function providersPerDay(): Promise<void> {
  const simMinutes = Number(process.env.BENCH_SIM_MINUTES ?? 20);
  console.log(`\n4. One provider and two: requests and bytes a day PER provider (1 000 addresses, simulated ${simMinutes} min of 5 s polls)`);
  console.log(
    'providers | cross_check | payments/day | provider | requests/day | head reads/day | block reads/day | count reads/day | whole blocks/day | wire MiB/day (gzip) | decoded MiB/day | decoded B/tx | confirmed',
  );
  const mainnet: string[] = [];
  // Payments an hour per 1 000 addresses: 1 000 (each address paid hourly, 24 000 a day) or 42 (about 1 000 a day).
  const scenarios: Array<{ count: number; check: 'count' | 'ids'; perHour: number }> = [
    { count: 1, check: 'count', perHour: 1000 },
    { count: 2, check: 'count', perHour: 1000 },
    { count: 2, check: 'count', perHour: 42 },
    { count: 2, check: 'ids', perHour: 1000 },
  ];
  for (const { count, check, perHour } of scenarios) {
    let clockNow = Date.UTC(2026, 0, 15, 12, 0, 0);
    const addresses = Array.from({ length: 1000 }, () => randomAddress());
    const nodes: SimulatedTron[] = [];
    for (let i = 0; i < count; i++)
      nodes.push(await startSimulatedTron({ now: () => clockNow, fillerPerBlock: FILLER, poisonTargets: addresses.slice(0, 50) }));
    const t = await startTestApp({
      now: clockNow,
      config: {
        tron: {
          providers: nodes.map((n) => ({ url: n.url, requests_per_second: 0 })),
          cross_check: check,
        },
        log: { level: 'warn' },
      },
    });
    t.deps.chain = createChainRuntime(t.config, { maxRequestsPerSecond: 0 });
    const merchant = await newMerchantId(t);
    const start = t.clock.now();
    for (const [i, address] of addresses.entries())
      await insertInvoice(t, { address, amount: 20_000_000n + BigInt(i), merchantId: merchant, expiresAt: start + 2 * HOUR });
    const payments = Math.round((perHour * simMinutes) / 60);
    for (let k = 0; k < payments; k++) {
      const at = start + 2 * MINUTE + Math.floor((k * (simMinutes - 3) * MINUTE) / payments);
      const p = nodes[0]!.transfer({ to: addresses[k]!, amount: 20_000_000n + BigInt(k), at });
      for (const other of nodes.slice(1)) other.transfer({ to: addresses[k]!, amount: 20_000_000n + BigInt(k), at, txId: p.txId });
    }
    t.clock.advance(5 * SECOND);
    clockNow = t.clock.now();
    while (await runOnce(t.deps));
    for (const n of nodes) n.resetCounts();
    const before = t.deps.chain.pool.providers.map((p) => p.client.stats.bytes);
    const from = t.clock.now();
    let txs = 0;
    const firstBlock = nodes[0]!.solidHead().number;
    while (t.clock.now() - from < simMinutes * MINUTE) {
      t.clock.advance(5 * SECOND);
      clockNow = t.clock.now();
      while (await runOnce(t.deps));
    }
    for (let b = firstBlock + 1; b <= nodes[0]!.solidHead().number; b++) txs += nodes[0]!.blockInfos(b).length;
    const scale = DAY_S / ((t.clock.now() - from) / 1000);
    const confirmed = await t.deps.db
      .selectFrom('invoices')
      .select((eb) => eb.fn.countAll<number>().as('c'))
      .where('status', '=', 'confirmed')
      .executeTakeFirstOrThrow();
    nodes.forEach((n, i) => {
      const decoded = t.deps.chain.pool.providers[i]!.client.stats.bytes - before[i]!;
      const blockReads = n.count('blockinfo');
      console.log(
        [
          count,
          count > 1 ? check : '-',
          perHour * 24,
          i + 1,
          Math.round(n.count() * scale),
          Math.round(n.count('getblock') * scale),
          Math.round(blockReads * scale),
          Math.round(n.count('txcount') * scale),
          Math.round(n.count('block') * scale),
          mib(n.bytes() * scale),
          mib(decoded * scale),
          Math.round(decoded / Math.max(1, (txs * blockReads) / Math.max(1, nodes[0]!.solidHead().number - firstBlock))),
          `${Number(confirmed.c)} of ${payments}`,
        ].join(' | '),
      );
      // The same reads at mainnet's recorded sizes: infos 447 B a transaction at 2025's 304 a block,
      // gzip keeping 14 % (the simulated node's ratio) to 19 % (a small recorded set); the light reads as measured here.
      const light = n.bytes('txcount') + n.bytes('txinfo') + n.bytes('getblock');
      const infosDecoded = blockReads * scale * MAINNET_TX_PER_BLOCK * MAINNET_INFO_BYTES_PER_TX;
      mainnet.push(
        `${count} | ${count > 1 ? check : '-'} | ${perHour * 24} | ${i + 1} | ${mib(infosDecoded + light * scale)} | ${mib(infosDecoded * 0.14 + light * scale)} to ${mib(infosDecoded * 0.19 + light * scale)}`,
      );
    });
    await t.close();
    for (const n of nodes) await n.close();
  }
  console.log('at mainnet sizes: providers | cross_check | payments/day | provider | decoded MiB/day | gzipped MiB/day');
  for (const line of mainnet) console.log(line);
}

// Sections by name (`requests`, `latency`, `backfill`, `providers`, `evm`, `solana`, `ton`); all when none is named.
const wanted = new Set(process.argv.slice(2));
const run = (name: string) => wanted.size === 0 || wanted.has(name);
console.log(`gatewayd chain bench, Node ${process.version}, load ${(await import('node:os')).loadavg()[0]!.toFixed(2)}`);
if (run('backfill')) await backfill();
if (run('requests')) await requestsPerDay();
if (run('latency')) await latency();
if (run('providers')) await providersPerDay();
if (run('evm')) await evmCosts();
if (run('solana') || run('ton')) await accountCosts({ solana: run('solana'), ton: run('ton') });
