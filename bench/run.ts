/**
 * `npm run bench [-- --quick] [-- --only 1237]`: the issue-10 figures against the machine's own
 * ceiling, measured in one run. The real `gatewayd serve` runs on loopback on a fresh database;
 * autocannon drives it from its own process. Prints one table and writes bench/results/*.json.
 * Figures, not assertions: never part of npm test.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { openSqlite } from '../src/db/database.js';
import { startHttpsReceiver } from '../test/helpers/https-receiver.js';
import { freePort } from '../test/helpers/process.js';
import { startTronGrid, type FakeTronGrid } from '../test/helpers/trongrid.js';
import { startBenchGateway, type BenchGateway } from './lib/gateway.js';
import { allocationCost, sqliteCeiling } from './lib/inproc.js';
import { autocannon, cpuMs, dropFromPageCache, load1, percentiles, rssMb, rssPartsMb, rssSampler, sleep, type LoadResult } from './lib/measure.js';
import { seedDatabase, type Seeded } from './lib/seed.js';

const { values: args } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, only: { type: 'string', default: '1234567' } },
});
const quick = args.quick;
const SECONDS = Number(process.env.BENCH_SECONDS ?? (quick ? 4 : 10));
const CONNECTIONS = 64;
const BIG = Number(process.env.BENCH_BIG ?? (quick ? 100_000 : 1_000_000));
const ALLOC_SIZES = quick ? [0, 10_000, 100_000] : [0, 10_000, 100_000, 1_000_000];
const only = (f: number) => args.only.includes(String(f));

interface Row {
  figure: string;
  measure: string;
  value: string;
  ceiling: string;
  ratio: string;
  load: number;
}
const rows: Row[] = [];
const raw: Record<string, unknown> = {};
function row(figure: string, measure: string, value: string, ceiling = '', ratio = ''): void {
  const r = { figure, measure, value, ceiling, ratio, load: load1() };
  rows.push(r);
  console.error(`  [${figure}] ${measure}: ${value}${ceiling ? ` (ceiling ${ceiling}${ratio ? `, ${ratio}` : ''})` : ''} load ${r.load}`);
}
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const lat = (r: LoadResult) => `p50 ${r.p50} ms / p99 ${r.p99} ms`;
const pct = (a: number, b: number) => `${fmt((a / b) * 100)} %`;

function freshDir(name: string): string {
  return mkdtempSync(join(tmpdir(), `gatewayd-bench-${name}-`));
}

/**
 * The TronGrid stand-in, so the chain worker of every gateway in this run stays on loopback. Its
 * solidified head is the wall clock (mainnet's is ~57 s behind): a transfer is visible the moment
 * the benchmark pays, so figure 5 times gatewayd alone, not the chain's finality.
 */
const tg: FakeTronGrid = await startTronGrid({ now: () => Date.now() + 57_000 });
const tronConfig = (poll = 5) => ({ tron: { api_url: tg.url, poll_interval_seconds: poll } });

function createBody(seeded: Seeded): string {
  return JSON.stringify({ merchant_order_id: 'bench-[<id>]', amount: '25', wallet_id: seeded.walletId });
}
function createLoad(gw: BenchGateway, seeded: Seeded): Promise<LoadResult> {
  return autocannon({
    url: `${gw.api}/invoices`,
    method: 'POST',
    headers: { authorization: `Bearer ${seeded.apiKey}`, 'content-type': 'application/json', 'idempotency-key': 'k-[<id>]' },
    body: createBody(seeded),
    connections: CONNECTIONS,
    seconds: SECONDS,
  });
}

async function bareHonoCeiling(responseBytes: number): Promise<LoadResult> {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const child = spawn(process.execPath, [join(import.meta.dirname, 'ceiling-hono.js'), String(port), String(responseBytes)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  try {
    return await autocannon({
      url: `http://127.0.0.1:${port}/api/v1/invoices`,
      method: 'POST',
      headers: { authorization: 'Bearer gw_live_0123456789abcdef0123456789abcdef01234567', 'content-type': 'application/json', 'idempotency-key': 'k-[<id>]' },
      body: JSON.stringify({ merchant_order_id: 'bench-[<id>]', amount: '25', wallet_id: 'wal_0123456789abcdef01234567' }),
      connections: CONNECTIONS,
      seconds: SECONDS,
    });
  } finally {
    child.kill('SIGTERM');
  }
}

let emptyCreateRps = 0;

async function figures1and7(): Promise<void> {
  console.error('figure 1 and 7: empty database');
  const dir = freshDir('empty');
  const seeded = await seedDatabase(join(dir, 'gateway.db'), { invoices: 0 });
  const metricsPort = await freePort();
  const gw = await startBenchGateway(dir, { ...tronConfig(), metrics: { enabled: true, listen: `127.0.0.1:${metricsPort}` } });
  try {
    row('7', 'start-up to first healthy answer (node bin/gatewayd serve): wall, CPU', `${fmt(gw.startupMs)} ms, CPU ${fmt(gw.startupCpuMs)} ms`);
    const idle = await idleRss(gw.pid);
    row('7', 'idle RSS (node bin/gatewayd serve): 3 s after start / settled (20 s)', idleText(idle), '80 MB (aim)');
    raw.serveIdle = idle;
    const probe = await fetch(`${gw.api}/invoices`, {
      method: 'POST',
      headers: { authorization: `Bearer ${seeded.apiKey}`, 'content-type': 'application/json', 'idempotency-key': 'probe' },
      body: JSON.stringify({ merchant_order_id: 'probe', amount: '25', wallet_id: seeded.walletId }),
    });
    const probeText = await probe.text();
    const responseBytes = Buffer.byteLength(probeText);
    if (probe.status !== 201) throw new Error(`probe creation answered ${probe.status}`);
    await checkoutPageFigure(gw, (JSON.parse(probeText) as { invoice: { checkout_token: string } }).invoice.checkout_token);
    const sampler = rssSampler(gw.pid);
    const created = await createLoad(gw, seeded);
    const peak = sampler.stop();
    emptyCreateRps = created.rps;
    const batches = await groupCommitFigures(metricsPort);
    const hono = await bareHonoCeiling(responseBytes);
    const sqliteDir = freshDir('sqlite');
    const sq = await sqliteCeiling(sqliteDir, SECONDS);
    rmSync(sqliteDir, { recursive: true, force: true });
    // The same rows batched as gatewayd's group commit batched them during the load.
    const perCommit = Math.max(1, Math.round(batches.meanBatch));
    const batchedDir = freshDir('sqlite-batched');
    const sqBatched = await sqliteCeiling(batchedDir, SECONDS, perCommit);
    rmSync(batchedDir, { recursive: true, force: true });
    raw.figure1 = { created, hono, sqlitePerSecond: sq.perSecond, sqliteBatchedPerSecond: sqBatched.perSecond, perCommit, responseBytes, batches };
    row(
      '1',
      `POST /invoices, API key, ${CONNECTIONS} connections`,
      `${fmt(created.rps)} req/s, ${lat(created)}${created.non2xx + created.errors ? `, ${created.non2xx} non-2xx, ${created.errors} errors` : ''}`,
      `bare hono ${fmt(hono.rps)} req/s (${lat(hono)})`,
      pct(created.rps, hono.rps),
    );
    row(
      '1',
      'same, against bare better-sqlite3 (same rows, one commit each)',
      `${fmt(created.rps)} req/s`,
      `${fmt(sq.perSecond)} inserts/s`,
      pct(created.rps, sq.perSecond),
    );
    row(
      '1',
      `same, against bare better-sqlite3 (same rows, ${perCommit} per commit as batched)`,
      `${fmt(created.rps)} req/s`,
      `${fmt(sqBatched.perSecond)} inserts/s`,
      pct(created.rps, sqBatched.perSecond),
    );
    row(
      '1',
      'group commit during that load (gatewayd /metrics)',
      `${fmt(batches.meanBatch, 1)} creations per transaction, ${fmt(batches.meanMs, 2)} ms each (BEGIN to durable COMMIT)`,
    );
    row('7', 'RSS at saturation (peak during POST load)', `${fmt(peak, 1)} MB`);
  } finally {
    await gw.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  await bareNodeFigure();
  // The release artifact: one bundled file, far fewer modules to load than dist/.
  const binary = join(import.meta.dirname, '../gatewayd');
  if (existsSync(binary)) {
    const binDir = freshDir('binary');
    await seedDatabase(join(binDir, 'gateway.db'), { invoices: 0 });
    const dropped = dropFromPageCache(binary, ['version']);
    const starts = await startupSeries(() => startBenchGateway(binDir, tronConfig(), binary));
    const bin = await startBenchGateway(binDir, tronConfig(), binary);
    try {
      const idle = await idleRss(bin.pid);
      raw.binaryIdle = { ...idle, starts, droppedFromPageCache: dropped };
      row(
        '7',
        `single executable (dist/gatewayd${dropped ? ', page cache dropped and warmed by one run' : ', as the build left it in the page cache'}): start-up (median of ${STARTS}: wall, CPU); idle RSS 3 s after start / settled (20 s)`,
        `${startupText(starts)}; ${idleText(idle)}`,
        '80 MB (aim)',
      );
    } finally {
      await bin.stop();
      rmSync(binDir, { recursive: true, force: true });
    }
  } else {
    row('7', 'single executable: start-up, idle RSS', 'not built (npm run build:binary)');
  }
}

interface Started {
  pid: number;
  startupMs: number;
  startupCpuMs: number;
  stop(): Promise<void>;
}

/** A bare node:http server on this Node (bench/bare-node.ts), started and polled like gatewayd. */
async function startBareNode(): Promise<Started> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [join(import.meta.dirname, 'bare-node.js'), String(port)], { stdio: 'ignore' });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/api/v1/health`)).ok) break;
    } catch {
      /* not listening yet */
    }
    await sleep(5);
  }
  return {
    pid: child.pid!,
    startupMs: performance.now() - started,
    startupCpuMs: cpuMs(child.pid!),
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Starts per start-up figure: one start's wall time swings with the machine's load, its CPU time much less. */
const STARTS = 5;

/** Median wall and CPU time to the first healthy answer over STARTS starts, each stopped at once. */
async function startupSeries(start: () => Promise<Started>): Promise<{ wallMs: number; cpuMs: number; each: Array<{ wallMs: number; cpuMs: number }> }> {
  const each: Array<{ wallMs: number; cpuMs: number }> = [];
  for (let i = 0; i < STARTS; i++) {
    const s = await start();
    each.push({ wallMs: s.startupMs, cpuMs: s.startupCpuMs });
    await s.stop();
  }
  return { wallMs: percentiles(each.map((e) => e.wallMs)).p50, cpuMs: percentiles(each.map((e) => e.cpuMs)).p50, each };
}

const startupText = (s: { wallMs: number; cpuMs: number }) => `${fmt(s.wallMs)} ms, CPU ${fmt(s.cpuMs)} ms`;

/** The same start-up and idle RSS measures for a bare node:http server on this Node: the runtime's own floor. */
async function bareNodeFigure(): Promise<void> {
  const starts = await startupSeries(startBareNode);
  const bare = await startBareNode();
  try {
    const idle = await idleRss(bare.pid);
    row(
      '7',
      `bare node:http server (same Node): start-up (median of ${STARTS}: wall, CPU); idle RSS 3 s after start / settled (20 s)`,
      `${startupText(starts)}; ${idleText(idle)}`,
    );
    raw.bareNode = { starts, ...idle };
  } finally {
    await bare.stop();
  }
}

/**
 * Resident memory of an idle gateway (the watcher polling the stand-in every 5 s): 3 s after start,
 * while V8 still holds the young generation that start-up grew, and settled, after V8's memory
 * reducer has run (it shrinks the young generation some seconds after allocation stops).
 */
async function idleRss(pid: number): Promise<{ early: number; settled: number; anon: number; file: number }> {
  await sleep(3000);
  const early = rssMb(pid);
  await sleep(17_000);
  return { early, settled: rssMb(pid), ...rssPartsMb(pid) };
}

/** "early / settled MB (settled: anonymous A + file-backed F)". */
function idleText(idle: { early: number; settled: number; anon: number; file: number }): string {
  return `${fmt(idle.early, 1)} MB / ${fmt(idle.settled, 1)} MB (anon ${fmt(idle.anon, 1)} + file ${fmt(idle.file, 1)})`;
}

/** Mean batch size and transaction time of the invoice group commit, from the gateway's own metrics. */
async function groupCommitFigures(port: number): Promise<{ meanBatch: number; meanMs: number; batches: number }> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  const batches = value('gatewayd_invoice_commit_batch_size_count');
  return {
    batches,
    meanBatch: value('gatewayd_invoice_commit_batch_size_sum') / batches,
    meanMs: (value('gatewayd_invoice_commit_seconds_sum') / batches) * 1000,
  };
}

/**
 * What a payer's browser loads for /pay/{token}: the HTML, then every stylesheet, script, image,
 * icon and manifest it references (links to other pages are not loaded). Bytes as decoded; the
 * transferred size is smaller when the server compresses.
 */
async function checkoutPageFigure(gw: BenchGateway, token: string): Promise<void> {
  const pageUrl = `${gw.baseUrl}/pay/${token}`;
  const page = await fetch(pageUrl);
  const html = await page.text();
  if (page.status !== 200) throw new Error(`/pay answered ${page.status}`);
  const refs = new Set<string>();
  for (const tag of html.match(/<(?:link|script|img|source)\b[^>]*>/gi) ?? []) {
    if (/^<link/i.test(tag) && !/rel="?(?:stylesheet|icon|preload|modulepreload|manifest|apple-touch-icon)/i.test(tag)) continue;
    const ref = /\s(?:src|href)="([^"]+)"/i.exec(tag)?.[1];
    if (ref && !ref.startsWith('data:')) refs.add(new URL(ref.replaceAll('&amp;', '&'), pageUrl).href);
  }
  let bytes = Buffer.byteLength(html);
  for (const url of refs) {
    const res = await fetch(url);
    bytes += (await res.arrayBuffer()).byteLength;
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  }
  raw.checkoutPage = { requests: 1 + refs.size, bytes, resources: [...refs].map((u) => new URL(u).pathname) };
  row(
    '7',
    'checkout page /pay/{token}: requests and total bytes',
    `${1 + refs.size} requests, ${fmt(bytes / 1024, 1)} KiB (HTML ${fmt(Buffer.byteLength(html) / 1024, 1)} KiB)`,
  );
}

async function figure2(): Promise<void> {
  console.error('figure 2: allocation cost');
  const out = [];
  for (const n of ALLOC_SIZES) {
    const dir = freshDir('alloc');
    const f = await allocationCost(dir, n);
    out.push(f);
    row(
      '2',
      `allocation with ${fmt(n)} reservations on the address${n > 900_000 ? ' (half on this price)' : ', all on this price'}`,
      `${fmt(f.allocationUs)} µs; whole creation + commit ${fmt(f.creationUs)} µs`,
      '',
      out.length > 1 ? `${fmt(f.allocationUs / out[0]!.allocationUs, 2)}x the empty cost` : '',
    );
    rmSync(dir, { recursive: true, force: true });
  }
  raw.figure2 = out;
}

async function figures3and4(): Promise<void> {
  console.error(`figure 3 and 4: ${fmt(BIG)} invoices`);
  const dir = freshDir('big');
  const t0 = performance.now();
  const seeded = await seedDatabase(join(dir, 'gateway.db'), { invoices: BIG, prices: 1000 });
  console.error(`  seeded ${fmt(BIG)} invoices in ${fmt((performance.now() - t0) / 1000, 1)} s`);
  const gw = await startBenchGateway(dir, tronConfig());
  try {
    const auth = { authorization: `Bearer ${seeded.apiKey}` };
    if (only(3)) {
      const created = await createLoad(gw, seeded);
      row(
        '3',
        `POST /invoices with ${fmt(BIG)} invoices`,
        `${fmt(created.rps)} req/s, ${lat(created)}`,
        emptyCreateRps ? `empty database ${fmt(emptyCreateRps)} req/s` : '',
        emptyCreateRps ? pct(created.rps, emptyCreateRps) : '',
      );
      const list = await autocannon({ url: `${gw.api}/invoices`, headers: auth, connections: 16, seconds: SECONDS });
      row('3', 'GET /invoices (newest 500)', `${fmt(list.rps)} req/s, ${lat(list)}`);
      const checkout = await autocannon({ url: `${gw.api}/checkout/${seeded.sampleCheckoutToken}`, connections: 16, seconds: SECONDS });
      row('3', 'GET /checkout/{token}', `${fmt(checkout.rps)} req/s, ${lat(checkout)}`);
      // The owner's Dashboard (stats, recent invoices, events, late and unmatched transfers).
      const dashboard = await autocannon({ url: `${gw.api}/me`, headers: { cookie: `gw_session=${seeded.sessionToken}` }, connections: 16, seconds: SECONDS });
      row(
        '3',
        'GET /me (the Dashboard, owner session)',
        `${fmt(dashboard.rps)} req/s, ${lat(dashboard)}${dashboard.non2xx ? `, ${dashboard.non2xx} non-2xx` : ''}`,
      );
      raw.figure3 = { created, list, checkout, dashboard };
    }
    await gw.stop();

    if (only(4)) {
      // Two sizes: flat memory means the same peak above idle for ten times the rows.
      const smallDir = freshDir('export');
      const small = await seedDatabase(join(smallDir, 'gateway.db'), { invoices: BIG / 10, prices: 1000 });
      const figures = [await exportFigure(smallDir, small, BIG / 10), await exportFigure(dir, seeded, BIG)];
      rmSync(smallDir, { recursive: true, force: true });
      raw.figure4 = figures;
    }
  } finally {
    await gw.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** GET /ledger.csv from a fresh process (so "idle" is not inflated by earlier load): rows/s and RSS. */
async function exportFigure(dir: string, seeded: Seeded, invoices: number) {
  const gw = await startBenchGateway(dir, tronConfig());
  try {
    await sleep(2000);
    const idle = rssMb(gw.pid);
    const sampler = rssSampler(gw.pid, 25);
    const t0 = performance.now();
    const res = await fetch(`${gw.api}/ledger.csv`, { headers: { authorization: `Bearer ${seeded.apiKey}` } });
    let lines = 0;
    let bytes = 0;
    for await (const chunk of res.body!) {
      const c = chunk as Uint8Array;
      bytes += c.byteLength;
      for (let i = c.indexOf(10); i !== -1; i = c.indexOf(10, i + 1)) lines++;
    }
    const secs = (performance.now() - t0) / 1000;
    const peak = sampler.stop();
    const exported = lines - 1;
    if (exported < invoices) throw new Error(`ledger export gave ${exported} rows, expected at least ${invoices}`);
    row('4', `ledger.csv of ${fmt(exported)} invoices`, `${fmt(exported / secs)} rows/s (${fmt(bytes / 1e6)} MB in ${fmt(secs, 1)} s)`);
    row('4', `peak RSS above idle, ${fmt(exported)} rows`, `${fmt(peak - idle, 1)} MB (idle ${fmt(idle, 1)} MB, peak ${fmt(peak, 1)} MB)`);
    return { rows: exported, bytes, seconds: secs, idleRss: idle, peakRss: peak };
  } finally {
    await gw.stop();
  }
}

async function figure5(): Promise<void> {
  const poll = 5;
  const samplesWanted = quick ? 4 : 10;
  console.error(`figure 5: chain, poll every ${poll} s`);
  const rx = await startHttpsReceiver();
  const dir = freshDir('chain');
  const seeded = await seedDatabase(join(dir, 'gateway.db'), { invoices: 0 });
  const sqlite = openSqlite(join(dir, 'gateway.db'));
  sqlite
    .prepare('INSERT INTO webhooks (id, merchant_id, url, secret, created_at) VALUES (?, ?, ?, ?, ?)')
    .run('whk_bench', seeded.merchantId, rx.url('/chain'), 'whsec_bench', Date.now());
  sqlite.close();
  const gw = await startBenchGateway(dir, { ...tronConfig(poll), webhooks: rx.webhookConfig(), log: { level: process.env.BENCH_LOG ?? 'warn' } });
  try {
    const samples: number[] = [];
    for (let i = 0; i < samplesWanted; i++) {
      const res = await fetch(`${gw.api}/invoices`, {
        method: 'POST',
        headers: { authorization: `Bearer ${seeded.apiKey}`, 'content-type': 'application/json', 'idempotency-key': `chain-${i}` },
        body: JSON.stringify({ merchant_order_id: `chain-${i}`, amount: '10', wallet_id: seeded.walletId }),
      });
      const { invoice } = (await res.json()) as { invoice: { id: string; payable_amount: string } };
      // Pay at a random point of the poll cycle, as a real payer would (in a block after the creation).
      await sleep(50 + Math.random() * poll * 1000);
      const [whole, frac = ''] = invoice.payable_amount.split('.');
      // Into the next block, which the stand-in (57 s ahead) solidifies at its own timestamp in real time.
      const landed = tg.pay({ to: seeded.address, amount: BigInt(whole!) * 1_000_000n + BigInt(frac.padEnd(6, '0')), blockTimestamp: Date.now() });
      const t0 = performance.now() + (landed.blockTimestamp - Date.now());
      const deadline = t0 + 4 * poll * 1000;
      const confirmedHere = () => rx.requests.some((r) => r.rawBody.includes('invoice.confirmed') && r.rawBody.includes(invoice.id));
      while (!confirmedHere()) {
        if (performance.now() > deadline) throw new Error(`no invoice.confirmed webhook for ${invoice.id}: ${gw.output()}`);
        await sleep(2);
      }
      samples.push(performance.now() - t0);
    }
    const p = percentiles(samples);
    raw.figure5 = { pollSeconds: poll, samples };
    row(
      '5',
      `block solidified -> confirmed + webhook received (${samples.length} payments)`,
      `median ${fmt(p.p50)} ms, max ${fmt(p.max)} ms`,
      `${poll + 1} s (poll + 1 s)`,
      p.max <= (poll + 1) * 1000 ? 'within' : 'over',
    );
  } finally {
    await gw.stop();
    await rx.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const out = await runChild('chain.bench.js', ['requests']);
  for (const line of out.split('\n')) {
    const m = /^(\d+) \| (\d+) \| \d+ \| \d+ \| ([\d.]+) \| ([\d.]+) \|/.exec(line);
    if (m)
      row(
        '5',
        `TRON requests a day, ${m[1]} watched addresses (blocks of 200-400 transactions)`,
        `${m[2]} (${m[3]} MiB gzip, ${m[4]} MiB decoded)`,
        '30,000 (aim)',
        Number(m[2]) <= 30_000 ? 'within' : 'over',
      );
  }
}

async function figure6(): Promise<void> {
  console.error('figure 6: webhooks');
  for (const hang of [false, true]) {
    const out = await runChild('webhooks.bench.js', ['--events', quick ? '250' : '1000', '--webhooks', '4', ...(hang ? ['--hang'] : [])]);
    const r = JSON.parse(out.trim().split('\n').at(-1)!) as { deliveries_per_second: number; deliveries: number };
    raw[hang ? 'figure6_hang' : 'figure6'] = r;
    row(
      '6',
      hang ? 'deliveries/s to 4 fast receivers while a 5th hangs' : 'deliveries/s to 4 loopback HTTPS receivers',
      `${fmt(r.deliveries_per_second)} /s (${fmt(r.deliveries)} deliveries)`,
    );
  }
}

function runChild(script: string, childArgs: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(import.meta.dirname, script), ...childArgs], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.once('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${script} exited ${code}`))));
  });
}

const startedAt = new Date();
const machine = `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${fmt(totalmem() / 2 ** 30, 1)} GiB RAM, Node ${process.version}, ${process.platform}`;
console.error(`gatewayd benchmark${quick ? ' (quick)' : ''}: ${machine}`);
try {
  if (only(1) || only(7)) await figures1and7();
  if (only(2)) await figure2();
  if (only(3) || only(4)) await figures3and4();
  if (only(5)) await figure5();
  if (only(6)) await figure6();
} finally {
  await tg.close();
}

const widths = ['figure', 'measure', 'value', 'ceiling', 'ratio', 'load'].map((k) => Math.max(k.length, ...rows.map((r) => String(r[k as keyof Row]).length)));
const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
console.log(`\ngatewayd benchmark${quick ? ' (quick)' : ''}, ${startedAt.toISOString()}: ${machine}`);
console.log(line(['figure', 'measure', 'value', 'ceiling', 'ratio', 'load']));
console.log(line(widths.map((w) => '-'.repeat(w))));
for (const r of rows) console.log(line([r.figure, r.measure, r.value, r.ceiling, r.ratio, String(r.load)]));
const resultsDir = join(import.meta.dirname, '../../bench/results');
mkdirSync(resultsDir, { recursive: true });
const file = join(resultsDir, `bench-${startedAt.toISOString().replace(/[:.]/g, '-')}${quick ? '-quick' : ''}.json`);
writeFileSync(file, JSON.stringify({ startedAt, machine, quick, rows, raw }, null, 2));
console.log(`\nJSON: ${file}`);
