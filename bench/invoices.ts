/**
 * `npm run bench:invoices [-- --seconds 5 --concurrency 64 --ledger-rows 200000 --creations 2000 [--group-commit-only] --only 3]`: prints
 *  1. the cost of one invoice creation (allocation included) with 0, 10 000 and 100 000
 *     reservations already on one address and price (warm cursor, and the one-off cold start);
 *  2. creations per second with and without group commit (service level, same database code);
 *  3. creations per second over HTTP with an API key (the real app on loopback), beside GET /health
 *     as the baseline of what the machine answers at that moment;
 *  4. the ledger export of many invoices over HTTP: rows per second and peak heap growth.
 * Figures, not assertions: never part of npm test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { parseArgs } from 'node:util';
import { serve } from '@hono/node-server';
import { createApp } from '../src/app.js';
import { buildConfig } from '../src/config.js';
import { openDatabase, writeTransaction, type OpenedDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrator.js';
import { createDeps } from '../src/deps.js';
import type { AppDeps } from '../src/deps.js';
import { createLogger } from '../src/lib/log.js';
import { insertMerchant } from '../src/accounts/merchants.repo.js';
import { insertKey } from '../src/api-keys/api-keys.repo.js';
import { registerWallet } from '../src/wallets/wallets.repo.js';
import { chooseAmount, claimCursor, reservationInsert } from '../src/invoices/allocation.repo.js';
import { createInvoiceOrThrow, InvoiceCreator, type CreateInvoiceRequest } from '../src/invoices/invoices.service.js';
import { SCOPES } from '../src/http/context.js';
import { NETWORK, USDT_CONTRACT } from '../test/helpers/tron-samples.js';
import { micros } from '../src/lib/amounts.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '64' },
    'ledger-rows': { type: 'string', default: '200000' },
    only: { type: 'string', default: '1234' },
    creations: { type: 'string', default: '2000' },
    'group-commit-only': { type: 'boolean', default: false },
  },
});
const ADDRESS = 'TL24LCps5FKwp3PoU1MvrYrwhi5LU1tHre';
const BASE = 25_000_000; // 25 USDT

class RollBack extends Error {}

interface Env {
  dir: string;
  database: OpenedDatabase;
  deps: AppDeps;
  merchantId: string;
  walletId: string;
  close(): Promise<void>;
}

async function setup(): Promise<Env> {
  const dir = mkdtempSync(join(tmpdir(), 'gatewayd-bench-'));
  // The per-merchant creation limit stays on (its check is on the measured path) but is never reached.
  const rateLimits = { api_per_key: 0, invoices_per_merchant: 1_000_000 };
  const config = buildConfig({
    database: { path: join(dir, 'gateway.db') },
    invoices: { max_adjustment: '0.200000' },
    rate_limits: rateLimits,
    log: { level: 'silent' },
  });
  const database = openDatabase(config.database.path);
  migrate(database.sqlite, Date.now());
  const deps = createDeps({ config, database, log: createLogger('silent') });
  const merchant = await insertMerchant(deps.db, { email: 'bench@example.test', name: 'Bench', passwordHash: null, emailVerifiedAt: Date.now() }, Date.now());
  const { wallet } = await registerWallet(deps.db, config.network.id, merchant.id, 'Bench', ADDRESS, Date.now());
  return {
    dir,
    database,
    deps,
    merchantId: merchant.id,
    walletId: wallet.id,
    async close() {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** N used amounts for base BASE on the address, as N earlier creations would leave them (optionally without the cursor). */
function prefill(env: Env, n: number, withCursor: boolean): void {
  const now = Date.now();
  const sqlite = env.database.sqlite;
  const inv = sqlite.prepare(
    `INSERT INTO invoices (id, merchant_id, wallet_id, network, token, token_contract, wallet_address, merchant_order_id, idempotency_key,
       request_fingerprint, base_amount, adjustment, payable_amount, status, checkout_token, created_at, expires_at, reserved_until)
     VALUES (?, ?, ?, ?, 'USDT', ?, ?, ?, ?, 'x', ?, ?, ?, 'expired', ?, ?, ?, ?)`,
  );
  const res = sqlite.prepare('INSERT INTO amount_reservations VALUES (?, ?, ?, ?, ?, ?, ?)');
  sqlite.transaction(() => {
    for (let i = 1; i <= n; i++) {
      const id = `inv_pre${i}`;
      inv.run(
        id,
        env.merchantId,
        env.walletId,
        NETWORK,
        USDT_CONTRACT,
        ADDRESS,
        `pre-${i}`,
        `pre-${i}`,
        BASE,
        i,
        BASE + i,
        `tok-${i}`,
        now,
        now,
        now + 90 * 86_400_000,
      );
      res.run(NETWORK, USDT_CONTRACT, ADDRESS, BASE + i, id, now, now + 90 * 86_400_000);
    }
    if (withCursor && n > 0)
      sqlite
        .prepare('INSERT INTO amount_cursors (network, token_contract, address, base_amount, next_adjustment) VALUES (?, ?, ?, ?, ?)')
        .run(NETWORK, USDT_CONTRACT, ADDRESS, BASE, n + 1);
  })();
}

function request(env: Env, i: number, prefix: string): CreateInvoiceRequest {
  return {
    merchantId: env.merchantId,
    idempotencyKey: `${prefix}-${i}`,
    body: { merchant_order_id: `${prefix}-${i}`, amount: '25', wallet_id: env.walletId, expires_in_minutes: 20 },
  };
}

async function allocationCost(): Promise<void> {
  console.log('\n1. One creation (allocation + invoice + reservation + event, one immediate transaction each), base 25 USDT on one address');
  for (const n of [0, 10_000, 100_000]) {
    const env = await setup();
    prefill(env, n, true);
    const runs = 500;
    let started = performance.now();
    for (let i = 0; i < runs; i++) await writeTransaction(env.deps.db, async (_trx, tx) => createInvoiceOrThrow(tx, env.deps, request(env, i, 'warm')));
    const perCreation = (performance.now() - started) / runs;
    // The allocation alone: choose the amount and reserve it, 2 000 times in one transaction
    // (no fsync), rolled back afterwards. The reservations point at an existing invoice.
    const holder = (await env.deps.db.selectFrom('invoices').select('id').limit(1).executeTakeFirstOrThrow()).id;
    const target = { network: NETWORK, tokenContract: USDT_CONTRACT, address: ADDRESS };
    let allocMs = 0;
    const allocRuns = 2000;
    await writeTransaction(env.deps.db, async (_trx, tx) => {
      for (let i = 0; i < allocRuns; i++) {
        started = performance.now();
        const a = await chooseAmount(tx, await claimCursor(tx, target, micros(BigInt(BASE))), micros(200_000n), Date.now());
        allocMs += performance.now() - started;
        if (a.kind !== 'fresh') throw new Error(`unexpected ${a.kind}`);
        await reservationInsert(target, micros(BigInt(BASE) + a.adjustment), holder, Date.now(), Date.now() + 1).run(tx);
      }
      throw new RollBack();
    }).catch((err) => {
      if (!(err instanceof RollBack)) throw err;
    });
    console.log(
      `   ${String(n).padStart(7)} reservations: allocation ${((allocMs / allocRuns) * 1000).toFixed(0).padStart(4)} µs; whole creation with its own commit ${(perCreation * 1000).toFixed(0).padStart(6)} µs (mean of ${runs})`,
    );
    await env.close();
  }
  const env = await setup();
  prefill(env, 100_000, false);
  let started = performance.now();
  await writeTransaction(env.deps.db, async (_trx, tx) => createInvoiceOrThrow(tx, env.deps, request(env, 0, 'cold')));
  const cold = performance.now() - started;
  started = performance.now();
  await writeTransaction(env.deps.db, async (_trx, tx) => createInvoiceOrThrow(tx, env.deps, request(env, 1, 'cold')));
  console.log(
    `   cold cursor over 100 000 used amounts (one-off, e.g. amounts taken by other prices): first ${cold.toFixed(1)} ms, next ${(performance.now() - started).toFixed(2)} ms`,
  );
  await env.close();
}

async function groupCommitGain(): Promise<void> {
  const count = Number(args.creations);
  console.log(`\n2. ${count.toLocaleString('en-US')} concurrent creations, service level (no HTTP); CPU time is this process's user + system time`);
  for (const mode of args['group-commit-only'] ? ['group commit'] : ['one transaction per creation', 'group commit']) {
    const env = await setup();
    const creator = new InvoiceCreator(env.deps);
    const started = performance.now();
    const cpu = process.cpuUsage();
    await Promise.all(
      Array.from({ length: count }, (_, i) =>
        mode === 'group commit'
          ? creator.create(request(env, i, 'gc'))
          : writeTransaction(env.deps.db, async (_trx, tx) => createInvoiceOrThrow(tx, env.deps, request(env, i, 'tx'))),
      ),
    );
    const secs = (performance.now() - started) / 1000;
    const { user, system } = process.cpuUsage(cpu);
    const batches = mode === 'group commit' ? ` (${creator.committer.stats.batches} commits, largest batch ${creator.committer.stats.largestBatch})` : '';
    console.log(
      `   ${mode.padEnd(30)} ${(count / secs).toFixed(0).padStart(6)} creations/s, ${((user + system) / count).toFixed(0).padStart(4)} µs CPU each${batches}`,
    );
    await env.close();
  }
}

async function startHttp(env: Env): Promise<{ baseUrl: string; stop(): Promise<void> }> {
  const app = createApp(env.deps);
  const server = await new Promise<Server>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }) as Server;
    s.once('listening', () => resolve(s));
  });
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** `concurrency` clients sending `send(i)` for `seconds`; latencies of the answers with `okStatus`. */
async function load(seconds: number, concurrency: number, okStatus: number, send: (i: number) => Promise<Response>) {
  const latencies: number[] = [];
  let errors = 0;
  let n = 0;
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        const res = await send(n++);
        await res.arrayBuffer();
        if (res.status === okStatus) latencies.push(performance.now() - t0);
        else errors++;
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!.toFixed(1) : '-');
  return `${(latencies.length / seconds).toFixed(0)}/s, p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms, ${errors} errors`;
}

async function httpThroughput(): Promise<void> {
  const seconds = Number(args.seconds);
  const concurrency = Number(args.concurrency);
  console.log(`\n3. Over HTTP on loopback, ${concurrency} concurrent clients for ${seconds} s each`);
  const env = await setup();
  const { secret } = await insertKey(env.deps.db, env.merchantId, { name: 'bench', scopes: SCOPES, expiresInDays: null }, Date.now());
  const http = await startHttp(env);
  const health = await load(seconds, concurrency, 200, () => fetch(`${http.baseUrl}/health`));
  console.log(`   baseline GET /health:            ${health}`);
  const created = await load(seconds, concurrency, 201, (i) =>
    fetch(`${http.baseUrl}/invoices`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'idempotency-key': `http-${i}` },
      body: JSON.stringify({ merchant_order_id: `http-${i}`, amount: '25', wallet_id: env.walletId }),
    }),
  );
  console.log(`   POST /invoices with an API key:  ${created}`);
  await http.stop();
  await env.close();
}

async function ledgerExport(): Promise<void> {
  const rows = Number(args['ledger-rows']);
  console.log(`\n4. GET /ledger.csv of ${rows} invoices over HTTP`);
  const env = await setup();
  prefill(env, rows, true);
  const { secret } = await insertKey(env.deps.db, env.merchantId, { name: 'bench', scopes: SCOPES, expiresInDays: null }, Date.now());
  const http = await startHttp(env);
  // Live heap (after a full GC) sampled along the download: flat if rows are not accumulated.
  const liveHeap = () => {
    global.gc?.();
    return process.memoryUsage().heapUsed;
  };
  const heapBefore = liveHeap();
  let peak = heapBefore;
  let bytes = 0;
  let lines = 0;
  let chunks = 0;
  const started = performance.now();
  const res = await fetch(`${http.baseUrl}/ledger.csv`, { headers: { authorization: `Bearer ${secret}` } });
  const reader = res.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    for (const b of value) if (b === 10) lines++;
    if (++chunks % 25 === 0) peak = Math.max(peak, liveHeap());
  }
  const secs = (performance.now() - started) / 1000;
  console.log(
    `   ${lines - 1} rows, ${(bytes / 1e6).toFixed(1)} MB in ${secs.toFixed(1)} s (${((lines - 1) / secs).toFixed(0)} rows/s); live heap ${(heapBefore / 1e6).toFixed(1)} MB before, at most ${(peak / 1e6).toFixed(1)} MB during (after GC; server and client in this process)`,
  );
  await http.stop();
  await env.close();
}

console.log(`gatewayd invoices benchmark, Node ${process.version}, database in ${tmpdir()} (WAL, synchronous=FULL)`);
if (args.only.includes('1')) await allocationCost();
if (args.only.includes('2')) await groupCommitGain();
if (args.only.includes('3')) await httpThroughput();
if (args.only.includes('4')) await ledgerExport();
