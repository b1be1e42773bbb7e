/**
 * GET /invoices at scale: one page of 100 under each filter, against the real `gatewayd serve` on a
 * database seeded with BENCH_BIG invoices (1 000 000 by default; one in seven on a second wallet, a
 * few thousand pending; each confirmed one's transfer recorded). Latency is measured request by request (one at a time, so it is the cost of
 * a page, not a queue), beside two ceilings measured in the same run: the same SQL of each page on
 * bare better-sqlite3 (the database floor), and GET /health on the same server (the HTTP floor).
 *
 * The search cases (`q=`: an order id, a price shared by one invoice in a thousand, an exact payable
 * amount, a transaction hash, the wallet's address) run alone with `npm run bench:invoice-search`
 * (BENCH_CASES, a pattern of the case names to run).
 *
 *   npm run bench:invoice-list            (BENCH_BIG=100000 for a quick run)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openDatabase } from '../src/db/database.js';
import { invoicePageQueries, resolveInvoiceSearch, type InvoiceFilter } from '../src/invoices/invoices.repo.js';
import type { PageRequest } from '../src/db/paging.js';
import { startBenchGateway } from './lib/gateway.js';
import { load1, percentiles } from './lib/measure.js';
import { seedDatabase } from './lib/seed.js';

const BIG = Number(process.env.BENCH_BIG ?? 1_000_000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 400);
const LIMIT = 100;
const DAY = 86_400_000;

const fmt = (n: number, digits = 2) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

interface Case {
  name: string;
  query: string;
  filter: InvoiceFilter;
  page: PageRequest;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gatewayd-bench-list-'));
  const t0 = performance.now();
  const seeded = await seedDatabase(join(dir, 'gateway.db'), { invoices: BIG, prices: 1000, extraWallets: 1 });
  const second = seeded.extraWallets[0]!.id;
  // A second wallet with one invoice in seven, and the newest 3 000 invoices still pending.
  const setup = new Database(join(dir, 'gateway.db'));
  setup.prepare('UPDATE invoices SET wallet_id = ? WHERE rowid % 7 = 0').run(second);
  setup.prepare(`UPDATE invoices SET status = 'pending', tx_hash = NULL, confirmed_at = NULL WHERE rowid > ?`).run(BIG - 3000);
  // The transfer of each confirmed invoice, as the scanner records it (a hash search reads these).
  setup
    .prepare(
      `INSERT INTO chain_transfers (id, network, token_contract, tx_hash, log_index, from_address, to_address, amount, kind, invoice_id, block_number, block_timestamp, recorded_at)
       SELECT 'trf_' || id, network, token_contract, tx_hash, 0, wallet_address, wallet_address, payable_amount, 'confirmed', id, rowid, confirmed_at, confirmed_at
       FROM invoices WHERE tx_hash IS NOT NULL`,
    )
    .run();
  const middle = setup.prepare('SELECT id, created_at FROM invoices WHERE rowid = ?').get(Math.floor(BIG / 2)) as { id: string; created_at: number };
  const paid = setup
    .prepare('SELECT tx_hash, payable_amount, wallet_address FROM invoices WHERE tx_hash IS NOT NULL AND rowid > ? LIMIT 1')
    .get(Math.floor(BIG / 3)) as {
    tx_hash: string;
    payable_amount: number;
    wallet_address: string;
  };
  setup.pragma('wal_checkpoint(TRUNCATE)');
  setup.close();
  console.error(`seeded ${BIG.toLocaleString('en-US')} invoices in ${fmt((performance.now() - t0) / 1000, 1)} s`);

  const cursor = { createdAt: middle.created_at, id: middle.id };
  const from = middle.created_at - 15 * DAY;
  const to = middle.created_at + 15 * DAY;
  const iso = (ms: number) => new Date(ms).toISOString();
  const cases: Case[] = [
    { name: 'newest page', query: '', filter: {}, page: { limit: LIMIT } },
    { name: 'starting_after (middle of the history)', query: `starting_after=${middle.id}`, filter: {}, page: { limit: LIMIT, startingAfter: cursor } },
    { name: 'ending_before (middle of the history)', query: `ending_before=${middle.id}`, filter: {}, page: { limit: LIMIT, endingBefore: cursor } },
    { name: 'status=confirmed', query: 'status=confirmed', filter: { statuses: ['confirmed'] }, page: { limit: LIMIT } },
    { name: 'status=pending&status=review', query: 'status=pending&status=review', filter: { statuses: ['pending', 'review'] }, page: { limit: LIMIT } },
    {
      name: 'status=expired&status=confirmed, starting_after',
      query: `status=expired&status=confirmed&starting_after=${middle.id}`,
      filter: { statuses: ['expired', 'confirmed'] },
      page: { limit: LIMIT, startingAfter: cursor },
    },
    { name: 'wallet_id (1 in 7)', query: `wallet_id=${second}`, filter: { walletId: second }, page: { limit: LIMIT } },
    {
      name: 'wallet_id&status=confirmed',
      query: `wallet_id=${second}&status=confirmed`,
      filter: { walletId: second, statuses: ['confirmed'] },
      page: { limit: LIMIT },
    },
    {
      name: 'created_gte&created_lt (30 days in the middle)',
      query: `created_gte=${iso(from)}&created_lt=${iso(to)}`,
      filter: {},
      page: { limit: LIMIT, createdGte: from, createdLt: to },
    },
    {
      name: 'created window&status=expired&wallet_id',
      query: `created_gte=${iso(from)}&created_lt=${iso(to)}&status=expired&wallet_id=${second}`,
      filter: { walletId: second, statuses: ['expired'] },
      page: { limit: LIMIT, createdGte: from, createdLt: to },
    },
    {
      name: 'merchant_order_id',
      query: `merchant_order_id=order-${Math.floor(BIG / 3)}`,
      filter: { merchantOrderId: `order-${Math.floor(BIG / 3)}` },
      page: { limit: LIMIT },
    },
  ];
  const search = (name: string, q: string) => ({ name: `q=${name}`, query: `q=${encodeURIComponent(q)}`, q, page: { limit: LIMIT } });
  const searches = [
    search('order id', `order-${Math.floor(BIG / 4)}`),
    search('price (1 in 1 000)', '25'),
    search('payable amount', (paid.payable_amount / 1e6).toFixed(6)),
    search('transaction hash', paid.tx_hash),
    search('address (every invoice)', paid.wallet_address),
  ];
  const finder = openDatabase(join(dir, 'gateway.db'));
  for (const c of searches) cases.push({ ...c, filter: { search: await resolveInvoiceSearch(finder.db, seeded.merchantId, c.q) } });
  await finder.close();
  const only = process.env.BENCH_CASES ? new RegExp(process.env.BENCH_CASES) : undefined;
  if (only) cases.splice(0, cases.length, ...cases.filter((c) => only.test(c.name)));

  // Database floor: the same statements on bare better-sqlite3 (a Kysely handle only compiles them).
  const compiler = openDatabase(join(dir, 'gateway.db'));
  const bare = new Database(join(dir, 'gateway.db'), { readonly: true });
  const floors = cases.map((c) => {
    const statements = invoicePageQueries(compiler.db, seeded.merchantId, c.filter, c.page).map((q) => ({
      stmt: bare.prepare(q.sql),
      params: q.parameters as unknown[],
    }));
    const times: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const start = performance.now();
      for (const s of statements) s.stmt.all(...s.params);
      times.push(performance.now() - start);
    }
    return percentiles(times);
  });
  bare.close();
  await compiler.close();

  const gw = await startBenchGateway(dir);
  const headers = { authorization: `Bearer ${seeded.apiKey}` };
  let resets = 0;
  /** One request; a keep-alive socket the server closed just then (a starved machine) is retried once and counted. */
  const get = async (url: string): Promise<Response> => {
    try {
      return await fetch(url, { headers });
    } catch (err) {
      if ((err as { cause?: { code?: string } }).cause?.code !== 'ECONNRESET') throw err;
      resets += 1;
      return fetch(url, { headers });
    }
  };
  const timed = async (url: string, check: (body: any) => void): Promise<{ p50: number; p99: number; max: number }> => {
    for (let i = 0; i < 20; i++) await (await get(url)).text(); // warm-up
    const times: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const start = performance.now();
      const res = await get(url);
      const body = await res.json();
      times.push(performance.now() - start);
      if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
      if (i === 0) check(body);
    }
    return percentiles(times);
  };
  try {
    const health = await timed(`${gw.api}/health`, () => undefined);
    console.log(
      `GET /invoices, one page of ${LIMIT}, ${BIG.toLocaleString('en-US')} invoices; ${SAMPLES} sequential requests each; load average ${load1()} on ${(await import('node:os')).cpus().length} cores`,
    );
    console.log(`HTTP floor (GET /api/v1/health, same server): p50 ${fmt(health.p50)} ms, p99 ${fmt(health.p99)} ms`);
    console.log('');
    console.log('| query | rows | p50 ms | p99 ms | max ms | bare SQLite p99 ms (floor) |');
    console.log('| --- | --- | --- | --- | --- | --- |');
    for (const [i, c] of cases.entries()) {
      let rows = 0;
      const r = await timed(`${gw.api}/invoices?limit=${LIMIT}${c.query ? `&${c.query}` : ''}`, (body) => (rows = body.invoices.length));
      console.log(`| ${c.name} | ${rows} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.max)} | ${fmt(floors[i]!.p99, 3)} |`);
    }
    console.log('');
    console.log(`load average at the end ${load1()}; connections reset by the server and retried: ${resets}`);
  } catch (err) {
    console.error(`gatewayd output:\n${gw.output().slice(-4000)}`);
    throw err;
  } finally {
    await gw.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
